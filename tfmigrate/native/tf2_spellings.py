"""TF1 calls inside graph statements that have an exact TF2 spelling (inside a `tf.function`).

Only forms whose TF1 defaults the rewrite keeps: `weights=1.0`, the default reduction (the mean
over every element, SUM_BY_NONZERO_WEIGHTS with unit weights), no label smoothing. `scope=` only
named the ops. Any other argument leaves the call as it is (the per-call rules then handle it).
"""
from __future__ import annotations

from typing import Callable, Dict, Optional

import libcst as cst

from tfmigrate.facts.graph_words import RNN_RUNNERS
from tfmigrate.fixers.arguments import joined, keyword
import tfmigrate.native.own_collections as own_collections
from tfmigrate.native.script import Blocked, Script
from tfmigrate.native.syntax import bind, code

_LOSS_PARAMS = {
    "losses.mean_squared_error": ("labels", "predictions", "weights", "scope", "loss_collection", "reduction"),
    "losses.absolute_difference": ("labels", "predictions", "weights", "scope", "loss_collection", "reduction"),
    "losses.sparse_softmax_cross_entropy": ("labels", "logits", "weights", "scope", "loss_collection", "reduction"),
    "losses.softmax_cross_entropy": ("onehot_labels", "logits", "weights", "label_smoothing", "scope",
                                     "loss_collection", "reduction"),
}


def _mse(tf: str, a: Dict[str, str]) -> str:
    return f"{tf}.reduce_mean({tf}.math.squared_difference({a['predictions']}, {a['labels']}))"


def _mae(tf: str, a: Dict[str, str]) -> str:
    return f"{tf}.reduce_mean({tf}.abs({a['predictions']} - {a['labels']}))"


def _sparse_xent(tf: str, a: Dict[str, str]) -> str:
    return (f"{tf}.reduce_mean({tf}.nn.sparse_softmax_cross_entropy_with_logits("
            f"labels={a['labels']}, logits={a['logits']}))")


def _xent(tf: str, a: Dict[str, str]) -> str:
    return (f"{tf}.reduce_mean({tf}.nn.softmax_cross_entropy_with_logits("
            f"labels={a['onehot_labels']}, logits={a['logits']}))")


_BUILD: Dict[str, Callable[[str, Dict[str, str]], str]] = {
    "losses.mean_squared_error": _mse,
    "losses.absolute_difference": _mae,
    "losses.sparse_softmax_cross_entropy": _sparse_xent,
    "losses.softmax_cross_entropy": _xent,
}
_DEFAULTS = {"weights": ("1.0", "1"), "label_smoothing": ("0", "0.0")}


# TF1's losses that cast both inputs to float32 (`to_float`) before computing.
_TO_FLOAT = ("losses.mean_squared_error", "losses.absolute_difference")


def native_call(script: Script, call: cst.Call, wide: bool = False, updated: Optional[cst.Call] = None) -> Optional[str]:
    """The TF2 spelling of `call`, or None to keep it (`wide`: its data may be other than float32;
    `updated`: the call with its arguments already respelled, where a transformer asks)."""
    if id(call) in script.regularizations:
        return regularization_losses(script, call)
    path = script.tf_call(call)
    if path in _ASSIGNS:
        return _assign(script, call, path)
    if path in (own_collections.ADD, own_collections.READ):  # (the traced graph's own: native.own_collections)
        return code((updated or call).with_changes(func=cst.parse_expression(f"{script.tf}.compat.v1.{path}")))
    if path == "layers.dropout" and script.pinned:
        return _seeded_dropout(script, updated or call)
    if path is not None and (path in RNN_RUNNERS or path.startswith("nn.rnn_cell.")):
        # No TF2 name: TensorFlow's legacy Keras runs them eagerly (the module sets TF_USE_LEGACY_KERAS).
        # (its arguments as the caller rewrote them: a cell inside `MultiRNNCell([...])`)
        new = (updated or call).with_changes(func=cst.parse_expression(f"{script.tf}.compat.v1.{path}"))
        if path == "nn.rnn_cell.LSTMCell" and _lacks(call, "initializer", 3):
            # TF1's default (get_variable's Glorot uniform): made eagerly, the cell would draw tf-keras's
            default = keyword("initializer", cst.parse_expression(f"{script.tf}.compat.v1.glorot_uniform_initializer()"))
            new = new.with_changes(args=joined(new, [*new.args, default]))
        return code(new)
    if path not in _BUILD:
        return None
    try:
        bound = bind(call, _LOSS_PARAMS[path])
    except ValueError:
        return None
    for key, value in bound.items():
        if key in _DEFAULTS and code(value) not in _DEFAULTS[key]:
            return None
        if key in ("loss_collection", "reduction"):
            return None
    texts = {k: code(v) for k, v in bound.items()}
    needed = _LOSS_PARAMS[path][:2]
    if any(k not in texts for k in needed):
        return None
    if wide and path in _TO_FLOAT:
        texts.update({k: f"{script.tf}.cast({texts[k]}, {script.tf}.float32)" for k in needed})
    return _BUILD[path](script.tf, texts)


def _lacks(call: cst.Call, keyword: str, position: int) -> bool:
    """The call passes no `keyword=`, nor that parameter by position (0-based)."""
    positional = [a for a in call.args if a.keyword is None and not a.star]
    return len(positional) <= position and not any(a.star for a in call.args) and not any(
        a.keyword is not None and a.keyword.value == keyword for a in call.args)


_ASSIGNS = {"assign": "assign", "assign_add": "assign_add", "assign_sub": "assign_sub"}


def _assign(script: Script, call: cst.Call, path: str) -> Optional[str]:
    """`tf.assign(v, x)` -> `v.assign(x)` (TF1's `validate_shape`/`use_locking` at their defaults)."""
    try:
        bound = bind(call, ("ref", "value", "use_locking", "name"))
    except ValueError:
        return None
    if set(bound) - {"ref", "value", "name"} or "ref" not in bound or "value" not in bound:
        return None
    ref = bound["ref"]
    if not isinstance(ref, (cst.Name, cst.Attribute)):
        return None
    return f"{code(ref)}.{_ASSIGNS[path]}({code(bound['value'])})"


class NativeCalls(cst.CSTTransformer):
    def __init__(self, script: Script, wide: bool = False):
        self.script, self.wide = script, wide

    def leave_Call(self, original: cst.Call, updated: cst.Call):
        text = native_call(self.script, original, self.wide, updated)
        if text is None:
            return updated
        return cst.parse_expression(text).with_changes(lpar=updated.lpar, rpar=updated.rpar)


REGULARIZATION_LOSSES = '''

def regularization_losses(*models):
    """TF1's REGULARIZATION_LOSSES collection: the losses of the regularizers given to the variables
    and layers the model objects made (`track_tf1_style_variables` keeps them), in the order made."""
    return [loss() for model in models for loss in model._tf1_style_var_store._regularizers.values()]
'''


def regularization_losses(script: Script, call: cst.Call) -> str:
    """The model objects' regularization losses where TF1 read its collection: every object of a
    model function called before it (Blocked where one is called after: TF1's collection did not
    hold its regularizers yet)."""
    kind, line = script.regularizations[id(call)]
    objects = []
    for builder in script.builders.values():
        for site in builder.sites:
            if script.line_of(site) > line:
                raise Blocked(line, f"the regularization losses read before `{builder.name}` is called")
            objects.append(builder.objects[id(site)])
    listed = f"regularization_losses({', '.join(dict.fromkeys(objects))})"
    return listed if kind == "list" else f"{script.tf}.add_n({listed} or [{script.tf}.constant(0.0)])"


def _seeded_dropout(script: Script, call: cst.Call) -> Optional[str]:
    """`tf.layers.dropout(x, rate, training=t, seed=n)` with TF1's op seed (native.op_seeds): TF1's
    own op, `tf.nn.dropout`, where `t` holds (Keras's `Dropout` draws from its own generator)."""
    try:
        bound = bind(call, ("inputs", "rate", "noise_shape", "seed", "training", "name"))
    except ValueError:
        return None
    if "seed" not in bound or "training" not in bound or not isinstance(bound["inputs"], cst.Name):
        return None
    x = code(bound["inputs"])
    args = [x, f"rate={code(bound['rate']) if 'rate' in bound else '0.5'}"]
    if "noise_shape" in bound:
        args.append(f"noise_shape={code(bound['noise_shape'])}")
    args.append(f"seed={code(bound['seed'])}")
    return f"({script.tf}.nn.dropout({', '.join(args)}) if {code(bound['training'])} else {x})"
