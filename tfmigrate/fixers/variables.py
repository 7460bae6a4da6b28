"""Rewrite `tf.Variable(...)` / `get_variable(...)` into variables Keras 3 tracks.

The parameters differ in order and meaning (measured under TF 2.21 / Keras 3.15):
    tf.Variable(initial_value, trainable, validate_shape, caching_device, name, variable_def,
                dtype, import_scope, constraint, synchronization, aggregation, shape)
    tf.compat.v1.Variable(initial_value, trainable, collections, validate_shape, caching_device,
                name, variable_def, dtype, expected_shape, import_scope, constraint, use_resource,
                synchronization, aggregation, shape)
    keras.Variable(initializer, shape=None, dtype=None, trainable=True, autocast=True,
                aggregation='none', synchronization='auto', name=None)
    get_variable(name, shape, dtype, initializer, regularizer, trainable, collections,
                caching_device, partitioner, validate_shape, use_resource, custom_getter,
                constraint, synchronization, aggregation)
    Layer.add_weight(*, shape, initializer, dtype, trainable, autocast, regularizer, constraint,
                aggregation, overwrite_with_gradient, name)
so every argument after the first becomes a keyword. Measured differences that shape the mapping:
Keras rejects a `name` with "/" (ValueError); `trainable=None` means False in Keras (True in TF);
Keras wants aggregation/synchronization as strings and raises on the `tf.Variable*` enums; it
silently ignores a `shape=` that disagrees with the value, so a dynamic shape cannot be kept;
`add_weight` needs `shape=` when the initializer is a tensor, and raises before
`super().__init__()`. Arguments with no Keras equivalent leave the call unfixed, with the reason.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Dict, List, Optional, Sequence, Tuple

import libcst as cst

V2_PARAMS = ("initial_value", "trainable", "validate_shape", "caching_device", "name",
             "variable_def", "dtype", "import_scope", "constraint", "synchronization",
             "aggregation", "shape", "experimental_enable_variable_lifting")
V1_PARAMS = ("initial_value", "trainable", "collections", "validate_shape", "caching_device",
             "name", "variable_def", "dtype", "expected_shape", "import_scope", "constraint",
             "use_resource", "synchronization", "aggregation", "shape")
GET_VARIABLE_PARAMS = ("name", "shape", "dtype", "initializer", "regularizer", "trainable",
                       "collections", "caching_device", "partitioner", "validate_shape",
                       "use_resource", "custom_getter", "constraint", "synchronization",
                       "aggregation")

# Arguments that may only stay when they say what the default says.
_MUST_BE_DEFAULT = {
    "validate_shape": "True", "caching_device": "None", "variable_def": "None",
    "import_scope": "None", "collections": "None", "expected_shape": "None",
    "partitioner": "None", "custom_getter": "None", "experimental_enable_variable_lifting": "True",
}
_WHY_NOT = {
    "validate_shape": "Keras has no variable whose shape may change (`validate_shape=False`)",
    "caching_device": "Keras variables have no `caching_device`",
    "variable_def": "Keras variables cannot be built from a `variable_def`",
    "import_scope": "Keras variables have no `import_scope`",
    "collections": "Keras variables do not join graph collections",
    "expected_shape": "Keras variables have no `expected_shape`",
    "partitioner": "Keras variables cannot be partitioned",
    "custom_getter": "Keras variables have no `custom_getter`",
    "experimental_enable_variable_lifting": "Keras variables cannot disable variable lifting",
    "constraint": "`keras.Variable` takes no `constraint`, though `self.add_weight(..., constraint=...)` does",
}
_EQUAL = cst.AssignEqual(whitespace_before=cst.SimpleWhitespace(""),
                         whitespace_after=cst.SimpleWhitespace(""))


@dataclass(frozen=True)
class Mapped:
    """The rewritten call, or why there is none; caveats say what else the rewrite may change."""

    call: Optional[cst.Call] = None
    reason: str = ""
    caveats: Tuple[str, ...] = ()


def bind(call: cst.Call, params: Sequence[str]) -> Tuple[Optional[Dict[str, cst.Arg]], str]:
    """Parameter name -> the Arg passing it, in source order; or None and the reason."""
    bound: Dict[str, cst.Arg] = {}
    for index, arg in enumerate(call.args):
        if arg.star:
            return None, "`*args` / `**kwargs` cannot be checked"
        if arg.keyword is None:
            if index >= len(params):
                return None, "it has more positional arguments than the signature"
            name = params[index]
        else:
            name = arg.keyword.value
            if name not in params:
                return None, f"`{name}=` is not an argument it knows"
        if name in bound:
            return None, f"`{name}` is passed twice"
        bound[name] = arg
    return bound, ""


def _is(expr: cst.BaseExpression, literal: str) -> bool:
    return isinstance(expr, cst.Name) and expr.value == literal


def _string(expr: cst.BaseExpression) -> Optional[str]:
    if isinstance(expr, (cst.SimpleString, cst.ConcatenatedString)):
        value = expr.evaluated_value
        return value if isinstance(value, str) else None
    return None


def _enum_member(expr, api, enum: str) -> Optional[str]:
    path = api(expr) if isinstance(expr, cst.Attribute) else None
    if path and path.startswith(enum + ".") and path.count(".") == 1:
        return path.split(".")[1].lower()
    return None


def _breaks(comma) -> bool:
    """A comma followed by a line break (and maybe a comment)."""
    return isinstance(comma, cst.Comma) and isinstance(comma.whitespace_after, cst.ParenthesizedWhitespace)


def _static_shape(expr) -> bool:
    """A list/tuple literal of int literals: the same shape for tf.Variable and Keras."""
    return isinstance(expr, (cst.List, cst.Tuple)) and all(
        isinstance(e.value, cst.Integer) and not isinstance(e, cst.StarredElement)
        for e in expr.elements
    )


class _Mapper:
    """Walks the bound arguments once, collecting new args, the first refusal and caveats."""

    def shared_parameter(self, param: str, arg: cst.Arg) -> bool:
        """Map a parameter `tf.Variable` and `get_variable` have in common; False if not one."""
        if param == "name":
            self.name(arg)
        elif param == "trainable":
            self.trainable(arg)
        elif param == "synchronization":
            self.synchronization(arg)
        elif param == "aggregation":
            self.aggregation(arg)
        elif param != "use_resource":  # Keras variables are always resource variables: dropped
            return False
        return True

    def __init__(self, call: cst.Call, api):
        self.call = call
        self.api = api
        self.args: List[Tuple[Optional[str], cst.Arg, int]] = []  # keyword, arg, old index
        self.reason = ""
        self.caveats: List[str] = []

    def refuse(self, reason: str) -> None:
        self.reason = self.reason or reason

    def keep(self, keyword: Optional[str], arg: cst.Arg, value=None) -> None:
        index = next(i for i, old in enumerate(self.call.args) if old is arg)
        self.args.append((keyword, arg if value is None else arg.with_changes(value=value), index))

    def name(self, arg: cst.Arg) -> None:
        text = _string(arg.value)
        if text is not None and "/" in text:
            self.refuse(f'Keras rejects the name "{text}" because it contains "/"')
        elif text is None:
            self.caveats.append('the name is computed, and Keras raises if it contains "/"')
        self.keep("name", arg)

    def trainable(self, arg: cst.Arg) -> None:
        if _is(arg.value, "None"):
            return  # TF's None means True; Keras's None means False, its default is True
        if not (_is(arg.value, "True") or _is(arg.value, "False")):
            self.caveats.append("`trainable` is computed, and Keras reads None as False")
        self.keep("trainable", arg)

    def synchronization(self, arg: cst.Arg) -> None:
        if _is(arg.value, "None") or _enum_member(arg.value, self.api, "VariableSynchronization") == "auto":
            return
        self.refuse("a non-default `synchronization` needs review under a distribution strategy")

    def aggregation(self, arg: cst.Arg) -> None:
        if _is(arg.value, "None"):
            return
        member = _enum_member(arg.value, self.api, "VariableAggregation")
        if member is None:
            self.refuse("Keras needs `aggregation` as a string, and this one is computed")
        elif member != "none":
            self.keep("aggregation", arg, cst.SimpleString(f'"{member}"'))

    def must_be_default(self, param: str, arg: cst.Arg) -> None:
        if not _is(arg.value, _MUST_BE_DEFAULT.get(param, "None")):
            self.refuse(_WHY_NOT[param])

    def build(self, func: cst.BaseExpression) -> cst.Call:
        """The new call; a dropped argument's line break and comment stay in the layout."""
        call = self.call
        commas = {index: call.args[index].comma for _, _, index in self.args}
        previous = None
        for index, old in enumerate(call.args):
            if index in commas:
                previous = index
            elif _breaks(old.comma) and previous is not None and not _breaks(commas[previous]):
                commas[previous] = old.comma
        new: List[cst.Arg] = []
        for keyword, arg, index in self.args:
            if keyword is None:
                arg = arg.with_changes(keyword=None, equal=cst.MaybeSentinel.DEFAULT)
            elif arg.keyword is None:
                arg = arg.with_changes(keyword=cst.Name(keyword), equal=_EQUAL)
            elif arg.keyword.value != keyword:
                arg = arg.with_changes(keyword=cst.Name(keyword))
            new.append(arg.with_changes(comma=commas[index]))
        last = len(call.args) - 1
        if new and self.args[-1][2] != last and not _breaks(new[-1].comma):
            new[-1] = new[-1].with_changes(comma=call.args[last].comma)
        return call.with_changes(func=func, args=new)

    def result(self, func) -> Mapped:
        if self.reason:
            return Mapped(reason=self.reason)
        return Mapped(self.build(func), caveats=tuple(self.caveats))


def to_keras_variable(call: cst.Call, func: cst.BaseExpression, api, v1: bool) -> Mapped:
    """`tf.Variable(...)` -> `<func>(...)` (func spells keras.Variable); api resolves enums."""
    bound, reason = bind(call, V1_PARAMS if v1 else V2_PARAMS)
    if bound is None:
        return Mapped(reason=reason)
    m = _Mapper(call, api)
    initial = bound.get("initial_value")
    if initial is None:
        return Mapped(reason="it has no initial value")
    if isinstance(initial.value, cst.Lambda):
        m.refuse("Keras calls an initializer with `(shape, dtype)`, not a lambda with no arguments")
    for param, arg in bound.items():
        if param == "initial_value":
            m.keep(None if arg.keyword is None else "initializer", arg)
        elif param in ("dtype",):
            m.keep(param, arg)
        elif m.shared_parameter(param, arg):
            continue
        elif param == "shape":
            if _is(arg.value, "None"):
                continue
            if not _static_shape(arg.value):
                m.refuse("Keras variables cannot keep a dynamic `shape=`")
            m.keep("shape", arg)
        else:
            m.must_be_default(param, arg)
    return m.result(func)


def to_add_weight(call: cst.Call, receiver: str, keras_variable: cst.BaseExpression, api) -> Mapped:
    """`get_variable(...)` -> `<receiver>.add_weight(...)`, all keywords.

    With an initializer but no shape (the initializer is a value), `add_weight` would raise, so
    the call becomes `keras_variable(initializer, name=..., ...)` instead.
    """
    bound, reason = bind(call, GET_VARIABLE_PARAMS)
    if bound is None:
        return Mapped(reason=reason)
    if "name" not in bound:
        return Mapped(reason="it has no name")
    as_value = "initializer" in bound and "shape" not in bound
    m = _Mapper(call, api)
    for param, arg in bound.items():
        if param == "initializer" and as_value:
            m.keep(None, arg)
        elif param in ("shape", "dtype", "initializer"):
            m.keep(param, arg)
        elif param in ("regularizer", "constraint"):
            if _is(arg.value, "None"):
                continue
            if as_value:
                m.refuse(f"`add_weight` needs `shape=` here, and `keras.Variable` takes no `{param}`")
            if param == "regularizer":
                m.caveats.append("with `add_weight` the regularizer joins `model.losses`, "
                                 "which `fit()` adds to the loss")
            m.keep(param, arg)
        elif m.shared_parameter(param, arg):
            continue
        else:
            m.must_be_default(param, arg)
    if as_value:  # the value goes first, positionally, as keras.Variable's initializer
        m.args.sort(key=lambda pair: pair[0] is not None)
        return m.result(keras_variable)
    func = cst.Attribute(value=cst.Name(receiver), attr=cst.Name("add_weight"))
    return m.result(func)
