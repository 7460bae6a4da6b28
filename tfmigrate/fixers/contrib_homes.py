"""Faithful TF 2.21 homes for `tf.contrib` (and `tf.estimator`) pieces that TensorFlow's tables
leave without one: the `ModeKeys` constants (their string values), `contrib.framework.nest.is_sequence`
(`tf.nest.is_nested`, the same function renamed), the `contrib.framework` arg-scope and variable
helpers (the same code in the tf-slim package), and `contrib.training.HParams` (no TF 2.21 class:
a small local class with the behaviour TF1 code reads, written where the import was)."""
from __future__ import annotations

import re
from typing import Optional

import libcst as cst

from tfmigrate.facts.references import GoneRef, TF1Ref
from tfmigrate.findings import AddImport, Fix, Replace

# TF1's values (contrib/learn/python/learn/estimators/model_fn.py and tensorflow_estimator's
# ModeKeys): plain strings, so the constants are their values wherever they are compared or passed.
MODE_KEYS = {"TRAIN": "train", "EVAL": "eval", "INFER": "infer"}
ESTIMATOR_MODE_KEYS = {"TRAIN": "train", "EVAL": "eval", "PREDICT": "infer"}
# Renamed in `tf.nest`, the same function (TF 1.15 kept is_sequence as a deprecated alias).
NEST_RENAMES = {"is_sequence": "is_nested"}
# contrib.framework names that tf-slim keeps at its top level, the same code moved out of
# TensorFlow (each checked: `hasattr(tf_slim, name)`, tf-slim 1.1).
SLIM_FRAMEWORK = frozenset({
    "arg_scope", "add_arg_scope", "arg_scoped_arguments", "has_arg_scope", "current_arg_scope",
    "get_variables_to_restore", "get_model_variables", "get_variables", "get_variables_by_name",
    "get_variables_by_suffix", "model_variable", "variable", "assign_from_checkpoint",
    "assign_from_checkpoint_fn", "assign_from_values", "assign_from_values_fn", "get_unique_variable",
    "get_local_variables", "get_trainable_variables", "add_model_variable", "filter_variables",
    "local_variable", "get_variable_full_name",
})


def usage_fix(ctx, ref: TF1Ref) -> Optional[Fix]:
    """The fix for a use of a contrib name that has a faithful home here, or None."""
    parts = ref.path.split(".")
    keys = (MODE_KEYS if parts[:3] == ["contrib", "learn", "ModeKeys"] else
            ESTIMATOR_MODE_KEYS if parts[:2] == ["estimator", "ModeKeys"] else {})
    if parts[-1] in keys and len(parts) == (4 if parts[0] == "contrib" else 3):
        value = keys[parts[-1]]
        return Fix("safe", f"Replace with the string `\"{value}\"`, the value TF1's `ModeKeys.{parts[-1]}` had",
                   (Replace(ref.node, cst.SimpleString(f'"{value}"')),))
    if parts[:3] == ["contrib", "framework", "nest"] and len(parts) == 4 and parts[3] in NEST_RENAMES:
        reference = ctx.names.spelling(f"nest.{NEST_RENAMES[parts[3]]}")
        return Fix("safe", f"Replace with `{reference.code}`, the same function renamed (TF2-native)",
                   (Replace(ref.node, reference.expression()),) + tuple(reference.import_edits()))
    if parts[:2] == ["contrib", "framework"] and len(parts) == 3 and parts[2] in SLIM_FRAMEWORK:
        return slim_fix(ctx, ref, parts[2])
    if ref.path == "contrib.seq2seq.sequence_loss":
        return sequence_loss_fix(ctx, ref)
    return None


# contrib.seq2seq.sequence_loss(logits, targets, weights, average_across_timesteps=True,
# average_across_batch=True, sum_over_timesteps=False, sum_over_batch=False,
# softmax_loss_function=None, name=None): TF1's body, by which flags are on.
_SEQUENCE_LOSS = ("logits", "targets", "weights", "average_across_timesteps", "average_across_batch",
                  "sum_over_timesteps", "sum_over_batch")
_FLAG_DEFAULTS = {"average_across_timesteps": True, "average_across_batch": True,
                  "sum_over_timesteps": False, "sum_over_batch": False}
# Which axes TF1 reduces for each (across timesteps, across batch) averaging: None = all.
_AXES = {(True, True): None, (True, False): 1, (False, True): 0}
_IMPURE = re.compile(r"random|dropout|Variable|get_variable|assign|print", re.IGNORECASE)


def sequence_loss_fix(ctx, ref: TF1Ref) -> Optional[Fix]:
    """`tf.contrib.seq2seq.sequence_loss` -> its formula: the sparse softmax cross-entropy of each
    step times its weight, summed and divided by the summed weights over the axes its averaging
    flags name (`divide_no_nan`, as TF1's), or the weighted per-step losses with both flags off.
    Only with literal flags, no `softmax_loss_function`, no `sum_over_*`, and a `weights`
    expression that may be written twice (no random op or variable in it)."""
    call = ref.call
    if call is None or any(a.star for a in call.args):
        return None
    args = {}
    for i, arg in enumerate(call.args):
        key = arg.keyword.value if arg.keyword is not None else (_SEQUENCE_LOSS[i] if i < len(_SEQUENCE_LOSS) else None)
        if key is None or key in args or key not in _SEQUENCE_LOSS + ("name",):
            return None
        args[key] = arg.value
    if not all(k in args for k in ("logits", "targets", "weights")):
        return None
    flags = dict(_FLAG_DEFAULTS)
    for key in _FLAG_DEFAULTS:
        if key in args:
            value = args[key]
            if not (isinstance(value, cst.Name) and value.value in ("True", "False")):
                return None
            flags[key] = value.value == "True"
    if flags["sum_over_timesteps"] or flags["sum_over_batch"]:
        return None
    code = ctx.module.code_for_node
    weights = code(args["weights"])
    if _IMPURE.search(weights):
        return None
    tf = ctx.names.spelling("nn").code[:-len(".nn")]
    factor = weights if isinstance(args["weights"], (cst.Name, cst.Attribute, cst.Subscript, cst.Call)) else f"({weights})"
    loss = (f"{tf}.nn.sparse_softmax_cross_entropy_with_logits(labels={code(args['targets'])}, "
            f"logits={code(args['logits'])}) * {factor}")
    key = (flags["average_across_timesteps"], flags["average_across_batch"])
    if key in _AXES:
        axis = "" if _AXES[key] is None else f", axis={_AXES[key]}"
        text = f"{tf}.math.divide_no_nan({tf}.reduce_sum({loss}{axis}), {tf}.reduce_sum({weights}{axis}))"
    else:
        text = loss
    reference = ctx.names.spelling("nn")
    return Fix("safe", "Replace with TF1's formula: the weighted sparse softmax cross-entropy"
               + (", averaged over the weights as its flags say" if key in _AXES else " of each step"),
               (Replace(call, cst.parse_expression(text)),) + tuple(reference.import_edits()))


# contrib packages whose modules moved whole into tf-slim: the package -> tf-slim's, with the
# modules tf-slim 1.1 has there (pkgutil.iter_modules, tests left out).
SLIM_PACKAGES = {
    "tensorflow.contrib.layers.python.layers": ("tf_slim.layers", frozenset({
        "bucketization_op", "initializers", "layers", "normalization", "optimizers", "regularizers",
        "rev_block_lib", "sparse_ops", "summaries", "utils"})),
    "tensorflow.contrib.slim.python.slim.nets": ("tf_slim.nets", frozenset({
        "alexnet", "inception", "inception_v1", "inception_v2", "inception_v3", "overfeat",
        "resnet_utils", "resnet_v1", "resnet_v2", "vgg"})),
    "tensorflow.contrib.framework.python.ops": ("tf_slim.ops", frozenset({"arg_scope", "variables"})),
}


def slim_module_import_fix(ref: GoneRef) -> Optional[Fix]:
    """`from tensorflow.contrib.layers.python.layers import utils` -> `from tf_slim.layers import
    utils`: modules tf-slim took over whole. Offered on the statement's first name only (one edit
    of the statement)."""
    stmt = ref.statement
    if not isinstance(stmt, cst.ImportFrom) or isinstance(stmt.names, cst.ImportStar) or stmt.relative \
            or stmt.module is None or ref.alias is not stmt.names[0]:
        return None
    module = cst.Module([]).code_for_node(stmt.module).replace(" ", "")
    package, _, last = module.rpartition(".")
    if module in SLIM_PACKAGES:  # `from <package> import <modules>`
        target, modules = SLIM_PACKAGES[module]
        if not all(isinstance(a.name, cst.Name) and a.name.value in modules for a in stmt.names):
            return None
    elif package in SLIM_PACKAGES and last in SLIM_PACKAGES[package][1]:  # `from <package>.<module> import <names>`
        target = f"{SLIM_PACKAGES[package][0]}.{last}"  # (the same module: the same names)
    else:
        return None
    new = stmt.with_changes(module=cst.parse_expression(target))
    return Fix("safe", f"Import from `{target}`, the same code moved to the tf-slim package "
               "(`pip install tf-slim`)", (Replace(stmt, new),), requires=("tf-slim",))


# contrib.layers functions tf-slim keeps that make no variables (an initializer draws only where a
# variable is made with it): the same code in graph and eager modules alike (the others make
# variables per call outside TF1's graph).
SLIM_STATELESS = frozenset({"flatten", "avg_pool2d", "max_pool2d", "one_hot_encoding", "l1_regularizer",
                            "l2_regularizer", "l1_l2_regularizer", "sum_regularizer", "xavier_initializer",
                            "xavier_initializer_conv2d", "variance_scaling_initializer"})


def slim_module(ctx) -> tuple:
    """How this module spells `tf_slim` (its own alias, or `tf_slim` with the import to add)."""
    local = next((a for a, target in sorted(ctx.names.aliases.items()) if target == "tf_slim"), None)
    return (local, ()) if local else ("tf_slim", (AddImport("import tf_slim"),))


def slim_fix(ctx, ref: TF1Ref, name: str) -> Fix:
    """`tf_slim.<name>` for a contrib name tf-slim keeps (the same code moved out of TensorFlow),
    through the module's own alias of `tf_slim` when it has one."""
    module, imports = slim_module(ctx)
    code = f"{module}.{name}"
    edits = (Replace(ref.node, cst.parse_expression(code)),) + imports
    return Fix("safe", f"Replace with `{code}` (the same function in the tf-slim package: `pip install tf-slim`)",
               edits, requires=("tf-slim",))


# TF1's HParams methods the local class has; a file calling another one gets no fix.
_HPARAMS_METHODS = ("add_hparam", "set_hparam", "del_hparam", "override_from_dict", "values", "get",
                    "parse", "to_json", "parse_json", "set_from_map")
_HPARAMS_OTHERS = re.compile(r"\.(?:to_proto|from_proto|set_model_structure|get_model_structure|"
                             r"_hparam_types|parse_values)\b")

HPARAMS_CLASS = '''class HParams(object):
    """TF1's `tf.contrib.training.HParams` (removed with `tf.contrib`), as this code uses it:
    keyword arguments become attributes; `set_hparam`, `override_from_dict` and `parse` keep
    each value's type (an int for a float becomes a float; another type raises ValueError)."""

    def __init__(self, hparam_def=None, model_structure=None, **kwargs):
        self._hparam_types = {}
        for name, value in sorted(kwargs.items()):
            self.add_hparam(name, value)

    def add_hparam(self, name, value):
        if getattr(self, name, None) is not None:
            raise ValueError("Hyperparameter name is reserved: %s" % name)
        if isinstance(value, (list, tuple)):
            if not value:
                raise ValueError("Multi-valued hyperparameters cannot be empty: %s" % name)
            self._hparam_types[name] = (type(value[0]), True)
        else:
            self._hparam_types[name] = (type(value), False)
        setattr(self, name, value)

    def _cast(self, name, kind, value):
        if kind is bool or isinstance(value, bool):
            if not (kind is bool and isinstance(value, bool)):
                raise ValueError("Could not cast hparam '%s' of type '%s' from value %r" % (name, kind, value))
            return value
        if kind is float and isinstance(value, (int, float)):
            return float(value)
        if kind is int and isinstance(value, int):
            return value
        if kind is type(None) or isinstance(value, kind):
            return value
        raise ValueError("Could not cast hparam '%s' of type '%s' from value %r" % (name, kind, value))

    def set_hparam(self, name, value):
        kind, is_list = self._hparam_types[name]
        if isinstance(value, list):
            if not is_list:
                raise ValueError("Must not pass a list for single-valued parameter: %s" % name)
            setattr(self, name, [self._cast(name, kind, v) for v in value])
        else:
            if is_list:
                raise ValueError("Must pass a list for multi-valued parameter: %s." % name)
            setattr(self, name, self._cast(name, kind, value))

    def del_hparam(self, name):
        if hasattr(self, name):
            delattr(self, name)
            del self._hparam_types[name]

    def override_from_dict(self, values_dict):
        for name, value in values_dict.items():
            self.set_hparam(name, value)
        return self

    set_from_map = override_from_dict

    def parse(self, values):
        import ast
        import re
        for item in [v for v in re.split(r",(?![^\\[]*\\])", values) if v.strip()]:
            name, _, text = item.partition("=")
            name = name.strip()
            if name not in self._hparam_types:
                raise ValueError("Unknown hyperparameter type for %s" % name)
            kind, _ = self._hparam_types[name]
            try:
                value = ast.literal_eval(text.strip())
            except (ValueError, SyntaxError):
                value = text.strip()
            if kind is str and not isinstance(value, (str, list)):
                value = text.strip()
            self.set_hparam(name, list(value) if isinstance(value, tuple) else value)
        return self

    def values(self):
        return {n: getattr(self, n) for n in self._hparam_types}

    def get(self, key, default=None):
        return getattr(self, key) if key in self._hparam_types else default

    def to_json(self, indent=None, separators=None, sort_keys=False):
        import json
        return json.dumps(self.values(), indent=indent, separators=separators, sort_keys=sort_keys)

    def parse_json(self, values_json):
        import json
        return self.override_from_dict(json.loads(values_json))

    def __contains__(self, key):
        return key in self._hparam_types

    def __str__(self):
        return str(sorted(self.values().items()))

    def __repr__(self):
        return "%s(%s)" % (type(self).__name__, self.__str__())
'''


def hparams_import_fix(ctx, ref: GoneRef) -> Optional[Fix]:
    """`from tensorflow.contrib.training import HParams` -> the local class, in place of the
    import (a top-level import only, alone in its statement, bound to the name `HParams`, in a file
    that calls no method the class lacks)."""
    stmt, alias = ref.statement, ref.alias
    if ref.path != "contrib.training.HParams" or not isinstance(stmt, cst.ImportFrom) or alias is None \
            or isinstance(stmt.names, cst.ImportStar) or len(stmt.names) != 1 or ref.local != "HParams":
        return None
    body = ctx.module.body
    line = next((s for s in body if isinstance(s, cst.SimpleStatementLine) and stmt in s.body), None)
    if line is None or len(line.body) != 1 or _HPARAMS_OTHERS.search(ctx.source):
        return None
    # The class goes after the module's last top-level import, so imports stay together.
    imports = [s for s in body[:body.index(line) + 1] if isinstance(s, cst.SimpleStatementLine)
               and all(isinstance(small, (cst.Import, cst.ImportFrom)) for small in s.body)]
    for s in body[body.index(line) + 1:]:
        if isinstance(s, cst.SimpleStatementLine) and all(isinstance(small, (cst.Import, cst.ImportFrom)) for small in s.body):
            imports.append(s)
        else:
            break
    last = imports[-1]
    hparams = cst.parse_statement(HPARAMS_CLASS).with_changes(leading_lines=[cst.EmptyLine()] * 2)
    if last is line:
        edits = (Replace(line, hparams),)
    else:
        edits = (Replace(line, cst.RemovalSentinel.REMOVE), Replace(last, cst.FlattenSentinel([last, hparams])))
    return Fix("safe", "Define `HParams` here: TF 2.21 ships no such class, and this local one keeps what TF1's "
               f"did for keyword arguments, {', '.join(f'`{m}`' for m in _HPARAMS_METHODS[:6])} and `parse`", edits)
