"""Share a variable instead of creating it twice: `reuse=AUTO_REUSE` on a `variable_scope(...)`.

Pure functions from the matched `variable_scope` call (and the file's import table) to the new
call; the spelling of AUTO_REUSE follows the alias the call itself uses, so no import is added
when the file already imports TensorFlow.
"""
from __future__ import annotations

from typing import Optional, Tuple

import libcst as cst

from tfmigrate.findings import Fix, Replace
from tfmigrate.facts.names import ImportTable, Spelling


def auto_reuse(scope_call: cst.Call, names: ImportTable) -> Spelling:
    """How to spell AUTO_REUSE next to this `variable_scope` call.

    `tf.AUTO_REUSE` when `tf` is `tensorflow.compat.v1` (or TF1's own `tensorflow.python.ops
    .variable_scope` module), `tf.compat.v1.AUTO_REUSE` when `tf` is `tensorflow`, which also
    keeps working after `tf.variable_scope` is migrated to `tf.compat.v1.variable_scope`.
    """
    func = scope_call.func
    if isinstance(func, cst.Attribute):
        prefix = cst.Module([]).code_for_node(func.value)
        target = names.full_name(func.value)
        if target in ("tensorflow.compat.v1", "tensorflow.python.ops.variable_scope"):
            return Spelling(f"{prefix}.AUTO_REUSE", None)
        if target == "tensorflow":
            return Spelling(f"{prefix}.compat.v1.AUTO_REUSE", None)
    for local, target in sorted(names.aliases.items()):
        if target == "tensorflow.compat.v1":
            return Spelling(f"{local}.AUTO_REUSE", None)
    return names.spelling("compat.v1.AUTO_REUSE")


def with_reuse(scope_call: cst.Call, value: cst.BaseExpression) -> Optional[cst.Call]:
    """`variable_scope("a")` -> `variable_scope("a", reuse=<value>)`; an explicit
    `reuse=None` / `reuse=False` is replaced. None when reuse is passed some other way."""
    args = list(scope_call.args)
    for i, arg in enumerate(args):
        if arg.star:
            return None
        if arg.keyword is not None and arg.keyword.value == "reuse":
            args[i] = arg.with_changes(value=value)
            return scope_call.with_changes(args=args)
    new = cst.Arg(
        value=value,
        keyword=cst.Name("reuse"),
        equal=cst.AssignEqual(cst.SimpleWhitespace(""), cst.SimpleWhitespace("")),
    )
    if args and isinstance(args[-1].comma, cst.Comma):  # keep a trailing comma where it was
        new = new.with_changes(comma=args[-1].comma)
        if isinstance(scope_call.whitespace_before_args, cst.ParenthesizedWhitespace):
            # one argument per line: the new one goes on its own line, indented like the first
            args[-1] = args[-1].with_changes(
                comma=args[-1].comma.with_changes(whitespace_after=scope_call.whitespace_before_args)
            )
    elif args:
        args[-1] = args[-1].with_changes(
            comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))
        )
    return scope_call.with_changes(args=[*args, new])


def share_in_scope(scope_call: cst.Call, names: ImportTable, safe: bool) -> Tuple[str, Optional[Fix]]:
    """The AUTO_REUSE spelling and the fix that adds it to `scope_call` (None if it cannot)."""
    ref = auto_reuse(scope_call, names)
    new = with_reuse(scope_call, ref.expression())
    if new is None:
        return ref.code, None
    edits: tuple = (Replace(scope_call, new),)
    edits += ref.import_edits()
    description = f"Add `reuse={ref.code}` to the enclosing `variable_scope`"
    return ref.code, Fix("safe" if safe else "unsafe", description, edits)
