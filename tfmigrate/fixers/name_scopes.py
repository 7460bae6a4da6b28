"""TF1's `tf.name_scope(name, default_name, values)` in TF2's spelling.

Library functions of TF1 code open `with tf.name_scope(name, "op_name", [x, y]):` (TF1's
signature: the given name, else the default made unique; `values` only picked the graph). TF2's
`tf.name_scope` takes one name. A name scope names the ops made inside it, nothing else: eagerly
nothing at all, in a graph or a `tf.function` the ops' names, which TF2's name scope makes unique
as TF1's did. So `tf.name_scope(name or "op_name")` computes the same, without the debt of
`tf.compat.v1.name_scope` (TF1's function, the fallback where this does not apply).

Only calls whose default name is written as a string: `name_scope(name)` alone, with `name` None at
run time, reset TF1's scope to the root, which TF2's has no spelling for.
"""
from __future__ import annotations

from typing import Optional

import libcst as cst

PARAMS = ("name", "default_name", "values")
_STRINGS = (cst.SimpleString, cst.ConcatenatedString, cst.FormattedString)


def tf2_name_scope(call: cst.Call, function: str) -> Optional[cst.Call]:
    """`call` (TF1's signature) as `<function>(name or "default")`, or None where that is not exact."""
    bound = {}
    for index, arg in enumerate(call.args):
        if arg.star:
            return None
        key = arg.keyword.value if arg.keyword is not None else (PARAMS[index] if index < len(PARAMS) else None)
        if key not in PARAMS or key in bound:
            return None
        bound[key] = arg.value
    default = bound.get("default_name")
    if not isinstance(default, _STRINGS):
        return None
    name = bound.get("name")
    if name is None or (isinstance(name, cst.Name) and name.value == "None"):
        scope = default
    elif isinstance(name, _STRINGS):
        scope = name
    else:
        scope = cst.BooleanOperation(left=name, operator=cst.Or(), right=default)
    return cst.Call(func=cst.parse_expression(function), args=[cst.Arg(scope)])
