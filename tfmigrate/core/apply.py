"""Apply a batch of fixes to one parsed module, leaving every byte outside their edits alone.

Fixes whose edits overlap a fix already taken are left for the next pass: the engine re-parses
and re-checks until nothing changes, as Ruff does.
"""
from __future__ import annotations

import bisect
import re
from typing import Dict, List, Optional, Sequence, Tuple

import libcst as cst
from libcst.metadata import CodeRange

from tfmigrate.findings import AddImport, Fix, Insert, Replace
from tfmigrate.facts.nodes import all_fields, is_node_type

Span = Tuple[Tuple[int, int], Tuple[int, int]]


def _span(rng: CodeRange) -> Span:
    return ((rng.start.line, rng.start.column), (rng.end.line, rng.end.column))


def _overlap(a: Span, b: Span) -> bool:
    return a[0] < b[1] and b[0] < a[1]


def _contains(outer: Span, inner: Span) -> bool:
    return outer[0] <= inner[0] and inner[1] <= outer[1]


class _Plan:
    """The non-conflicting subset of fixes, chosen greedily in order."""

    def __init__(self, positions):
        self.positions = positions
        self.replace_spans: List[Span] = []
        self.insert_spans: List[Tuple[Span, bool]] = []
        self.replacements: Dict[int, cst.CSTNode] = {}
        self.inserts: Dict[int, List[Insert]] = {}
        self.imports: List[str] = []

    def _fits(self, fix: Fix) -> bool:
        replaces, inserts = [], []
        for edit in fix.edits:
            if isinstance(edit, Replace):
                replaces.append(_span(self.positions[edit.node]))
            elif isinstance(edit, Insert):
                inserts.append((_span(self.positions[edit.owner]), edit.exclusive))
        taken_inserts = self.insert_spans
        for span in replaces:
            if any(_overlap(span, s) for s in self.replace_spans):
                return False
            if any(_contains(span, s) for s, _ in taken_inserts):
                return False
        for span, exclusive in inserts:
            if any(_contains(s, span) for s in self.replace_spans):
                return False
            if any(s == span and (exclusive or other) for s, other in taken_inserts):
                return False
        return True

    def take(self, fix: Fix) -> bool:
        if not self._fits(fix):
            return False
        for edit in fix.edits:
            if isinstance(edit, Replace):
                self.replace_spans.append(_span(self.positions[edit.node]))
                self.replacements[id(edit.node)] = edit.new
            elif isinstance(edit, Insert):
                self.insert_spans.append((_span(self.positions[edit.owner]), edit.exclusive))
                self.inserts.setdefault(id(edit.owner), []).append(edit)
            elif isinstance(edit, AddImport) and edit.statement not in self.imports:
                self.imports.append(edit.statement)
        return True


def _rebuild(node, plan: _Plan):
    """`node` with the plan's replacements and inserts made below it. Only nodes on the way to
    an edit are rebuilt; everything else is the same object (libcst's transformer would rebuild
    every node of the tree)."""
    new = plan.replacements.get(id(node))
    if new is not None:
        return new
    changes = {}
    for name in all_fields(type(node)):
        value = getattr(node, name)
        if is_node_type(type(value)):
            updated = _rebuild(value, plan)
            if updated is not value:
                if isinstance(updated, (cst.RemovalSentinel, cst.FlattenSentinel)):
                    raise ValueError(f"cannot remove the required field {name} of {type(node).__name__}")
                changes[name] = updated
        elif type(value) in (list, tuple) and value:
            items, changed = [], False
            for item in value:
                updated = _rebuild(item, plan) if is_node_type(type(item)) else item
                changed = changed or updated is not item
                if isinstance(updated, cst.RemovalSentinel):
                    continue
                if isinstance(updated, cst.FlattenSentinel):
                    items.extend(updated.nodes)
                else:
                    items.append(updated)
            if changed:
                changes[name] = type(value)(items)
    updated = node.with_changes(**changes) if changes else node
    inserts = plan.inserts.get(id(node))
    if inserts:
        updated = _insert(updated, inserts)
    return updated


def _insert(owner, inserts: Sequence[Insert]):
    body = owner.body
    if not isinstance(body, cst.IndentedBlock):  # `def f(): pass` on one line
        body = cst.IndentedBlock(body=[cst.SimpleStatementLine(body=list(body.body))])
    statements = list(body.body)
    for edit in inserts:
        if edit.where == "first_def":
            index = next(
                (i for i, s in enumerate(statements) if isinstance(s, cst.FunctionDef)),
                len(statements),
            )
            statements[index:index] = list(edit.statements)
        else:
            statements.extend(edit.statements)
    return owner.with_changes(body=body.with_changes(body=statements))


def _is_docstring(stmt) -> bool:
    return (
        isinstance(stmt, cst.SimpleStatementLine)
        and len(stmt.body) == 1
        and isinstance(stmt.body[0], cst.Expr)
        and isinstance(stmt.body[0].value, (cst.SimpleString, cst.ConcatenatedString))
    )


def _is_import(stmt) -> bool:
    return isinstance(stmt, cst.SimpleStatementLine) and all(
        isinstance(s, (cst.Import, cst.ImportFrom)) for s in stmt.body
    )


def _add_imports(module: cst.Module, statements: Sequence[str]) -> cst.Module:
    """Put new imports after the last top-level import (or the docstring), once each."""
    body = list(module.body)
    existing = {module.code_for_node(s).strip() for s in body if _is_import(s)}
    new = [cst.parse_statement(s + "\n") for s in statements if s not in existing]
    if not new:
        return module
    index = 0
    for i, stmt in enumerate(body):
        if _is_import(stmt) or (i == 0 and _is_docstring(stmt)):
            index = i + 1
    body[index:index] = new
    return module.with_changes(body=body)


def apply_fixes(
    module: cst.Module, fixes: Sequence[Fix], positions, spans: Optional[List[Span]] = None,
    chosen: Optional[List[Fix]] = None,
) -> Tuple[Optional[str], int, Optional[cst.Module]]:
    """Apply every fix that does not overlap an earlier one; return the new source text (None
    if no fix was taken), the count, and the new text parsed when that came cheap (else None).
    Top-level statements without an edit keep their original text, sliced by line, and their
    tree; only the edited ones are rebuilt, generated and parsed again. `spans`, if given,
    receives the regions of the original the edits may touch (for tests that prove every byte
    outside them is kept). `chosen`, if given, receives the fixes taken (for `--show-fixes`)."""
    plan = _Plan(positions)
    taken_fixes = [fix for fix in fixes if plan.take(fix)]
    taken = len(taken_fixes)
    if chosen is not None:
        chosen.extend(taken_fixes)
    if not taken:
        return None, 0, None
    if spans is not None:
        spans.extend(plan.replace_spans)
        spans.extend(span for span, _ in plan.insert_spans)
        if plan.imports:
            last = max((positions[s].end.line for s in module.body if _is_import(s) or _is_docstring(s)), default=0)
            spans.append(((1, 0), (last + 1, 0)))
    starts = positions.statement_lines()
    touched = _touched(plan, starts, len(module.body))
    if touched is None:  # an edit outside every statement (a header comment): the whole module
        new = _rebuild(module, plan)
        return (_add_imports(new, plan.imports) if plan.imports else new).code, taken, None
    body = [_rebuild(stmt, plan) if i in touched else stmt for i, stmt in enumerate(module.body)]
    flat = []
    for stmt in body:  # a top-level statement may become several (FlattenSentinel) or none
        if isinstance(stmt, cst.FlattenSentinel):
            flat.extend(stmt.nodes)
        elif not isinstance(stmt, cst.RemovalSentinel):
            flat.append(stmt)
    new = module.with_changes(body=flat)
    if plan.imports:
        new = _add_imports(new, plan.imports)
    code, parsed = _assemble(module, new, positions.source, starts)
    return code, taken, parsed


def _touched(plan: _Plan, starts, count: int):
    """Indices of the top-level statements holding an edit, or None when that cannot be told."""
    if starts is None or not count:
        return None
    touched = set()
    for span in plan.replace_spans + [span for span, _ in plan.insert_spans]:
        index = bisect.bisect_right(starts, span[0][0]) - 1
        if index < 0:
            return None
        touched.add(index)
    return touched


_LINE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+$")


def _assemble(module: cst.Module, new: cst.Module, source: str, starts: List[int]) -> Tuple[str, cst.Module]:
    """The new module's code: the original text of every statement that is the same object as
    before, freshly generated code for the others (as Module codegen would lay them out); and
    that code parsed, statement by statement: the regenerated ones through libcst's parser
    (which also proves they parse), the others as they were."""
    lines = _LINE.findall(source)
    ends = starts[1:] + [len(lines) - len(module.footer) + 1]
    original = {id(stmt): "".join(lines[b - 1:e - 1]) for stmt, b, e in zip(module.body, starts, ends)}
    pieces = ["".join(lines[: starts[0] - 1])]
    regenerated = False
    config = module.config_for_parsing
    body = []
    for stmt in new.body:
        text = original.get(id(stmt))
        regenerated = text is None
        if regenerated:
            text = module.code_for_node(stmt)
            stmt = cst.parse_statement(text, config=config)
        pieces.append(text)
        body.append(stmt)
    pieces.append("".join(lines[ends[-1] - 1:]) if module.body else "")
    code = "".join(pieces)
    if regenerated and not module.footer and not module.has_trailing_newline:
        newline = module.default_newline
        if code.endswith(newline):  # as Module codegen drops the last newline of such a file
            code = code[: -len(newline)]
    return code, module.with_changes(body=body)
