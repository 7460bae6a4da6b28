"""Removing a call statement (`tf.enable_eager_execution()`, a bare initializer call) while
keeping the code valid and every other byte: a block never becomes empty (`pass` takes the place
of its only statement), and the blank and comment lines above the removed statement move onto the
next statement."""
from typing import Optional, Sequence, Tuple

import libcst as cst

from tfmigrate.findings import Replace


def remove_call_statement(call: cst.Call, stack: Sequence[cst.CSTNode]) -> Optional[Tuple[Replace, ...]]:
    """The edits that delete the statement whose whole expression is `call`, or None when the
    call is part of something larger. `stack` is the walk's ancestors of `call.func`, innermost
    last (so stack[-1] is `call`)."""
    if len(stack) < 4 or stack[-1] is not call:
        return None
    expr, line, block = stack[-2], stack[-3], stack[-4]
    if not (isinstance(expr, cst.Expr) and expr.value is call):
        return None
    if isinstance(line, cst.SimpleStatementSuite):  # `if x: tf.enable_eager_execution()`
        return (Replace(expr, cst.Pass()),) if len(line.body) == 1 else None
    if not isinstance(line, cst.SimpleStatementLine) or len(line.body) != 1:
        return None
    if not isinstance(block, (cst.Module, cst.IndentedBlock)):
        return None
    body = list(block.body)
    index = next((i for i, stmt in enumerate(body) if stmt is line), None)
    if index is None:
        return None
    if len(body) == 1 and isinstance(block, cst.IndentedBlock):
        return (Replace(line, line.with_changes(body=[cst.Pass()], trailing_whitespace=cst.TrailingWhitespace())),)
    if index + 1 < len(body) and line.leading_lines:
        after = body[index + 1]
        commented = any(empty.comment is not None for empty in line.leading_lines)
        if commented or not after.leading_lines:  # blank lines move only where there are none
            moved = after.with_changes(leading_lines=[*line.leading_lines, *after.leading_lines])
            return (Replace(line, cst.RemovalSentinel.REMOVE), Replace(after, moved))
    return (Replace(line, cst.RemovalSentinel.REMOVE),)
