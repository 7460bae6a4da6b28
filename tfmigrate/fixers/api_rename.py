"""Fixes that rename a reference to TF1 API to its measured replacement (tfmigrate.facts.references'
`TF1Ref`s, api_table's `replacement`), with the arguments the replacement takes: the TF2-native
target when it is a drop-in (and the generator ran it on a sample), else the compat.v1
fallback; TF1 keywords of a changed signature renamed or dropped; `tf.to_float(x)` as
`tf.cast(x, tf.float32)`."""
from __future__ import annotations

import re
from typing import Optional

import libcst as cst

from tfmigrate.facts import api_table
from tfmigrate.findings import Fix, Replace
from tfmigrate.fixers.arguments import EQUAL, joined, keyword
from tfmigrate.fixers.name_scopes import tf2_name_scope
from tfmigrate.facts.names import Spelling, dotted
from tfmigrate.facts.references import TF1Ref, fails_in_tf2, labels_arg


def spelling_like(ref: TF1Ref, ctx, api: str) -> Spelling:
    """How to spell `api` in the rewrite: through the alias the code itself used when that alias
    is `tensorflow` (`tf.Session` -> `tf.compat.v1.Session`, never another alias of the same
    module), else whatever `ImportTable.reference` picks (with the import it needs)."""
    head = ref.node
    while isinstance(head, cst.Attribute):
        head = head.value
    if isinstance(head, cst.Name) and ctx.names.aliases.get(head.value) == "tensorflow":
        return Spelling(f"{head.value}.{api}", None)
    return ctx.names.spelling(api)


def generic_fix(ref: TF1Ref, ctx) -> Optional[Fix]:
    """A rename to the measured replacement: TF2-native when it is a drop-in, else the
    compat.v1 fallback (only where the code does not already go through compat.v1)."""
    if ref.section == "changed":
        return changed_fix(ref, ctx) or tf1_signature_fix(ref, ctx)
    if ref.section == "diverged":
        return tf1_signature_fix(ref, ctx)
    if ref.section != "removed":
        return None
    replacement = api_table.replacement(ref.path)
    if replacement is None:
        return None
    native = bool(replacement.get("native"))
    if not native and (ref.spelled_v1 or ref.routed):
        return None  # already resolves through compat.v1, or will with the whole module (TFM200)
    if ref.entry.get("transformer") == "cast":
        return cast_fix(ref, ctx, replacement)
    if not replacement.get("drop_in", True) or replacement.get("transformer") or ref.entry.get("transformer"):
        return None
    if native and keras_class_obstacle(ref, ctx, replacement) is not None:
        return None
    edits = []
    args_fix = None
    if ref.call is not None and native and (replacement.get("args") or replacement.get("args_removed") or replacement.get("defaults_changed")):
        args_fix = rename_arguments(ref.call, replacement)
        if args_fix is None:
            return None
    elif ref.call is None and native and replacement.get("positional_ok") is not None:
        pass  # a reference that is not called (e.g. passed as a class): the rename is enough
    reference = spelling_like(ref, ctx, replacement["target"])
    new = reference.expression()
    if args_fix is not None:
        new_call, unsafe = args_fix
        edits.append(Replace(ref.call, new_call.with_changes(func=new)))
    else:
        unsafe = False
        edits.append(Replace(ref.node, new))
    edits.extend(reference.import_edits())
    kind = "TF2-native" if native else "compat.v1 fallback"
    applicability = "unsafe" if unsafe or (native and replacement.get("note")) else "safe"
    if native and not replacement.get("proof") and applicability == "safe" and api_table.removed(ref.path):
        # Resolving proves the name, not the call: a rewrite the generator did not run is unsafe.
        return Fix("unsafe", f"Replace with `{reference.code}` ({kind}; not run on a sample)", tuple(edits))
    return Fix(applicability, f"Replace with `{reference.code}` ({kind})", tuple(edits))


def tf1_signature_fix(ref: TF1Ref, ctx) -> Optional[Fix]:
    """A call that TF2's signature rejects was written for TF1's function of that name:
    `tf.compat.v1.<name>` is that function, arguments unchanged (`tf.name_scope(name,
    values=[x])`). Only where TF2's would raise, so the code cannot have meant TF2's."""
    redefined = ref.section == "diverged" and isinstance(ref.entry.get("when"), list) and bool(ref.evidence)
    if ref.call is None or ref.spelled_v1 or ref.routed or ref.entry.get("same_object") or not (
            fails_in_tf2(ref) or redefined):
        return None  # (a module TFM200 routes gets TF1's function with the rest of it)
    if ref.path == "name_scope":
        spelled = spelling_like(ref, ctx, "name_scope")
        scoped = tf2_name_scope(ref.call, spelled.code)
        if scoped is not None:
            return Fix("safe", f"Write `{cst.Module([]).code_for_node(scoped)}`, TF2's name scope (TF2-native: "
                       "it names the ops alike)", (Replace(ref.call, scoped),) + tuple(spelled.import_edits()))
    reference = spelling_like(ref, ctx, f"compat.v1.{ref.path}")
    edits = (Replace(ref.node, reference.expression()),) + tuple(reference.import_edits())
    if redefined and not fails_in_tf2(ref):  # (TF1 code by evidence: it meant TF1's, which computes as it did)
        return Fix("safe", f"Call `{reference.code}`, TF1's, which computes what this code computed "
                   "when it was written (compat.v1 fallback)", edits)
    return Fix("safe", f"Call `{reference.code}`, TF1's function, which takes these arguments "
               "(compat.v1 fallback)", edits)


def rename_arguments(call: cst.Call, replacement: dict):
    """Keyword renames, removed keywords and changed defaults for a native replacement.
    Returns (new call, unsafe) or None when the arguments cannot be mapped."""
    renames = replacement.get("args", {})
    removed = set(replacement.get("args_removed", []))
    positional_ok = replacement.get("positional_ok")
    positional = [a for a in call.args if a.keyword is None and not a.star]
    if any(a.star for a in call.args):
        return None
    if positional_ok is not None and len(positional) > positional_ok:
        return None
    unsafe = False
    args = []
    passed = set()
    for arg in call.args:
        if arg.keyword is not None:
            key = arg.keyword.value
            passed.add(renames.get(key, key))
            if key in removed:
                unsafe = True
                continue
            if key in renames:
                arg = arg.with_changes(keyword=cst.Name(renames[key]))
        args.append(arg)
    for key, (old, _new) in replacement.get("defaults_changed", {}).items():
        if key in passed:
            continue
        if len(positional) > 1:  # it may have been passed by position: cannot tell, so flag it
            unsafe = True
            continue
        args.append(keyword(key, cst.parse_expression(repr(old))))
    return call.with_changes(args=joined(call, args)), unsafe


# Transformers ------------------------------------------------------------------------------
_CAST_DTYPE = re.compile(r"tf\.cast\(x, tf\.(\w+)\)")


def cast_fix(ref: TF1Ref, ctx, replacement: dict) -> Optional[Fix]:
    """`tf.to_float(x)` -> `tf.cast(x, tf.float32)` (TF2-native, same result); `name=` is kept.
    Only a call with the tensor as its one positional argument (or `x=`) is rewritten."""
    call = ref.call
    dtype = _CAST_DTYPE.search(replacement.get("note", ""))
    if call is None or dtype is None or any(a.star for a in call.args):
        return None
    tensor, rest = None, []
    for arg in call.args:
        key = arg.keyword.value if arg.keyword is not None else None
        if key is None and tensor is None and not rest:
            tensor = arg
        elif key == "x" and tensor is None:
            tensor = arg.with_changes(keyword=None, equal=cst.MaybeSentinel.DEFAULT)
        elif key == "name":
            rest.append(arg)
        else:
            return None
    if tensor is None:
        return None
    cast = spelling_like(ref, ctx, "cast")
    dtype_ref = spelling_like(ref, ctx, dtype.group(1))
    space = cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))
    args = [tensor.with_changes(comma=space), cst.Arg(dtype_ref.expression())]
    for arg in rest:
        args[-1] = args[-1].with_changes(comma=space)
        args.append(arg.with_changes(comma=cst.MaybeSentinel.DEFAULT))
    edits = [Replace(call, call.with_changes(func=cast.expression(), args=args))]
    for reference in (cast, dtype_ref):
        edits.extend(e for e in reference.import_edits() if e not in edits)
    code = f"{cast.code}(x, {dtype_ref.code})"
    return Fix("safe", f"Replace with `{code}` (TF2-native)", tuple(edits))


# Changed signatures: same symbol in TF1 and TF2, called with a keyword only TF1 accepts ---------
# Keywords TF2 dropped that only tuned performance or validation: dropping them keeps results.
_HARMLESS_REMOVED = frozenset({"colocate_gradients_with_ops", "use_cudnn_on_gpu", "validate_indices"})
# Transformers of TensorFlow's own upgrade script whose keyword renames stand alone.
_PLAIN_TRANSFORMERS = frozenset({None, "rename_if_arg_found", "dropout", "softmax_cross_entropy_with_logits"})


def _one_minus(value: cst.BaseExpression) -> cst.BaseExpression:
    """`1 - value`, computed when the value is a number literal (`0.8` -> `0.2`)."""
    if isinstance(value, (cst.Integer, cst.Float)) and not value.lpar:
        number = round(1 - float(value.evaluated_value), 10)
        if 0 <= number <= 1:
            return cst.Float(repr(number)) if number != int(number) else cst.Float(f"{int(number)}.0")
    simple = (cst.Name, cst.Attribute, cst.Call, cst.Subscript, cst.Integer, cst.Float)
    if not isinstance(value, simple) or value.lpar:
        value = value.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()]) if not value.lpar else value
    return cst.BinaryOperation(
        left=cst.Integer("1"),
        operator=cst.Subtract(whitespace_before=cst.SimpleWhitespace(" "), whitespace_after=cst.SimpleWhitespace(" ")),
        right=value,
    )


def changed_fix(ref: TF1Ref, ctx=None) -> Optional[Fix]:
    """Rename the TF1 keywords to TF2's (`keep_prob=p` -> `rate=1 - p`); drop removed keywords
    (safe only for the performance hints TF2 ignores). The callee is unchanged. Through
    `tf.compat.v1`, a new keyword is used only where TF1's signature takes it too (so the call
    keeps working before and after the alias goes; so too in a module TFM200 routes), and a positional `keep_prob` becomes `rate`.
    `labels` of TF1's softmax cross-entropy is wrapped in `stop_gradient` (TF1's gradients under
    both). Other positional evidence has no fix."""
    entry, call = ref.entry, ref.call
    v1 = ref.spelled_v1 or ref.routed  # TF1's function, now or once TFM200 routes the module
    transformer = entry.get("transformer")
    if call is None or ref.section != "changed" or transformer not in _PLAIN_TRANSFORMERS:
        return None
    v1_params = set(entry.get("v1_params") or [])
    positions = [int(k[1:]) for k in ref.evidence if k.startswith("#")]
    if positions and not (transformer == "dropout" and positions == [1] and
                          sum(1 for a in call.args if a.keyword is None) == 2 and
                          not any(a.star for a in call.args)):
        return None
    renames = entry.get("args", {})
    removed = set(entry.get("args_removed", []))
    present = {a.keyword.value for a in call.args if a.keyword is not None}
    v1_order, v2_order = entry.get("v1_params") or [], entry.get("v2_params") or []
    for i, arg in enumerate(call.args):
        if arg.keyword is not None or arg.star or i in positions:
            continue
        if i < len(v1_order) and i < len(v2_order) and renames.get(v1_order[i], v1_order[i]) != v2_order[i] \
                and not v1_order[i].startswith(v2_order[i]):
            return None  # a positional argument TF2 reads as another parameter (`paddings`)
    stop = None
    if "labels-gradient" in ref.evidence:
        if ctx is None:
            return None
        stop = spelling_like(ref, ctx, "stop_gradient")
    labels = labels_arg(call) if stop is not None else None
    unsafe = False
    unproven = []
    args = []
    for i, arg in enumerate(call.args):
        key = arg.keyword.value if arg.keyword is not None else None
        if arg is labels:
            arg = arg.with_changes(value=cst.Call(func=stop.expression(), args=[cst.Arg(arg.value)]))
        if i in positions or (key == "keep_prob" and transformer == "dropout"):
            if "rate" in present or (v1 and "rate" not in v1_params):
                return None
            arg = arg.with_changes(keyword=cst.Name("rate"), equal=EQUAL, value=_one_minus(arg.value))
        elif key in renames:
            if renames[key] in present or (v1 and (renames[key] not in v1_params
                                                   or key in entry.get("v1_required", ()))):
                return None  # both spellings passed, or TF1's would not take the new one (or needs the old)
            if key in entry.get("args_differ", {}):
                return None  # the generator ran the rename: it does not give TF1's outputs
            form = entry.get("arg_values", {}).get(key)
            if form is not None:
                # TF2's keyword takes the value in another form (`block_size=2` ->
                # `block_shape=[2, 2]`, proven by the generator); TF1's alias of that keyword
                # takes TF1's form, so not through compat.v1; the value is written twice, so
                # only a plain name or literal.
                if v1 or not isinstance(arg.value, (cst.Name, cst.Integer, cst.Attribute)):
                    return None
                arg = arg.with_changes(value=cst.parse_expression(form.format(_code(arg.value))))
            elif key not in entry.get("renames_proven", ()):
                unproven.append(key)  # no sample the generator could run: not proven
            arg = arg.with_changes(keyword=cst.Name(renames[key]))
        elif key in removed:
            unsafe = unsafe or key not in _HARMLESS_REMOVED
            continue
        elif key is not None and key not in (entry.get("v2_params") or [key]):
            return None  # a TF1-only keyword with no TF2 counterpart (`default_name=`)
        args.append(arg)
    args = joined(call, args)
    if transformer == "rename_if_arg_found" and not entry.get("args"):
        return None
    new = call.with_changes(args=args)
    edits = (Replace(call, new),) + (stop.import_edits() if stop is not None else ())
    rate = next((a for a in args if a.keyword is not None and a.keyword.value == "rate"
                 and transformer == "dropout" and "rate" not in present), None)
    what = ("Wrap `labels` in `stop_gradient`" if stop is not None else
            f"Pass `rate={_code(rate.value)}`, the drop rate TF2's `dropout` takes" if rate is not None else
            "Use the TF2 keywords")
    if stop is not None and any(k in renames or k in removed for k in ref.evidence):
        what += " and use the TF2 keywords"
    if unproven:  # the rename stands on TensorFlow's tables alone
        names = ", ".join(f"`{k}=`" for k in unproven)
        return Fix("unsafe", f"{what} (TF2-native; the rename of {names} was not run on a sample)", edits)
    return Fix("unsafe" if unsafe else "safe", f"{what} (TF2-native)", edits)


def _code(node) -> str:
    return cst.Module([]).code_for_node(node)


# What every Keras 3 layer takes besides its own parameters (keras.layers.Layer.__init__).
_KERAS_LAYER_KWARGS = frozenset({"activity_regularizer", "trainable", "dtype", "autocast", "name",
                                 "input_dim", "input_shape"})
# TF1's `tf.layers` objects were also `tf.layers.Layer`s: what Keras 3's lack.
_TF1_LAYER_METHODS = ("apply",)


def keras_class_obstacle(ref: TF1Ref, ctx, replacement: dict) -> Optional[str]:
    """Why a TF1 `tf.layers` class cannot become its Keras 3 namesake at this reference, or
    None. A subclass inherits TF1's API (`fused=` passed to `super().__init__`, `.apply`,
    variable scopes) that Keras 3's class rejects or lacks; a call passing a keyword Keras 3's
    class does not take raises ValueError; an instance used through `.apply` fails."""
    target = replacement.get("target", "")
    if not (ref.path.startswith("layers.") and target.startswith("keras.layers.")):
        return None
    parent = ctx.stack[-1] if ctx.stack else None
    if isinstance(parent, cst.Arg) and len(ctx.stack) > 1 and isinstance(ctx.stack[-2], cst.ClassDef) \
            and parent in ctx.stack[-2].bases:
        return "as a base class it brings TF1's layer API (`fused=`, `.apply`, variable scopes) that Keras 3's lacks"
    call = ref.call
    if call is None:
        return None
    signature = api_table.call_signature(target)
    if signature is not None:
        names = set(signature[0]) | _KERAS_LAYER_KWARGS
        unknown = [a.keyword.value for a in call.args if a.keyword is not None and a.keyword.value not in names]
        if unknown:
            return f"it takes no {', '.join(f'`{k}=`' for k in unknown)} (ValueError)"
    owner_assign = ctx.enclosing(cst.Assign)
    if owner_assign is not None and owner_assign.value is call and len(owner_assign.targets) == 1:
        local = dotted(owner_assign.targets[0].target)
        if local and any(re.search(rf"(?<![\w.]){re.escape(local)}\.{m}\(", ctx.source) for m in _TF1_LAYER_METHODS):
            return f"`{local}` is used through `.apply(...)`, which Keras 3 layers do not have"
    return None
