"""Removing an import of a module TensorFlow 2 no longer has, once nothing uses the name it binds."""
from __future__ import annotations

import tokenize
from typing import Dict, Optional

import libcst as cst

from tfmigrate.findings import Fix, Replace
from tfmigrate.facts.references import GoneRef
from tfmigrate.facts.tokens import CodeTokens, code_tokens


class NameCounts:
    """Per file (`ctx.fact(NameCounts)`): how often each name is used as a NAME token not after
    a dot (strings and comments do not count); -1 when the source cannot be tokenized. Every
    name is counted in one pass over the file's shared tokens (facts/tokens.py)."""

    needs = (CodeTokens,)

    def __init__(self, ctx):
        tokens = ctx.fact(CodeTokens).tokens
        self._counts: Optional[Dict[str, int]] = None if tokens is None else _name_counts(tokens)

    def __getitem__(self, local: str) -> int:
        if self._counts is None:
            return -1
        return self._counts.get(local, 0)


def _name_counts(tokens) -> Dict[str, int]:
    counts: Dict[str, int] = {}
    previous = ""
    for kind, string in tokens:
        if kind == tokenize.NAME and previous != ".":
            counts[string] = counts.get(string, 0) + 1
        previous = string
    return counts


def count_name(text: str, local: str) -> int:
    tokens = code_tokens(text)
    return -1 if tokens is None else _name_counts(tokens).get(local, 0)


def alias_still_used(ctx, local: str, statement: cst.CSTNode) -> bool:
    """Whether `local` (bound by `statement`) is named anywhere else in the module's code
    (NAME tokens not after a dot; strings and comments do not count). True when unsure."""
    total = ctx.fact(NameCounts)[local]
    own = count_name(ctx.module.code_for_node(statement).strip(), local)
    return total < 0 or own < 0 or total > own


def remove_import_fix(ctx, ref: GoneRef, why: str) -> Optional[Fix]:
    """A safe fix deleting an import of a gone module whose bound name is no longer used: the
    import itself fails under TensorFlow 2 (ModuleNotFoundError), so it only breaks the program."""
    stmt, alias = ref.statement, ref.alias
    if stmt is None or alias is None or ref.local is None:
        return None
    if alias_still_used(ctx, ref.local, stmt):
        return None
    remaining = [a for a in stmt.names if a is not alias]
    if remaining:
        remaining[-1] = remaining[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)
        return Fix("safe", why, (Replace(stmt, stmt.with_changes(names=remaining)),))
    line = ctx.enclosing(cst.SimpleStatementLine)
    if line is not None and len(line.body) == 1:
        if any(el.comment is not None for el in line.leading_lines):
            return None  # keep the comments above it: let the user delete it
        if not _removable(ctx, line):
            return None
        return Fix("safe", why, (Replace(line, cst.RemovalSentinel.REMOVE),))
    return Fix("safe", why, (Replace(stmt, cst.RemovalSentinel.REMOVE),))


def _removable(ctx, line) -> bool:
    """A statement can go unless it is the only one of its block (`try:` with just the import)."""
    parent = None
    for i in range(len(ctx.stack) - 1, -1, -1):
        if ctx.stack[i] is line:
            parent = ctx.stack[i - 1] if i > 0 else None
            break
    if isinstance(parent, cst.IndentedBlock):
        return len(parent.body) > 1
    return True
