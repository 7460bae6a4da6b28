"""Per file: parse once, run every enabled rule in one walk, and for `fix`, apply fixes and
re-check until nothing changes (bounded), refusing any result that does not parse.
"""
from __future__ import annotations

import ast
import re
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Dict, List, Optional, Sequence

import libcst as cst
from libcst.metadata import MetadataWrapper, PositionProvider

from tfmigrate.apply import apply_fixes
from tfmigrate.catalogue import catalogue
from tfmigrate.context import FileContext
from tfmigrate.findings import Finding
from tfmigrate.rule import Report, Rule, all_rules

PARSE_ERROR = "TFM001"
INTERNAL_ERROR = "TFM000"
MAX_FIX_PASSES = 16


@dataclass
class FileResult:
    path: str
    original: bytes
    findings: List[Finding] = field(default_factory=list)
    fixed: Optional[bytes] = None  # new bytes when a fix changed the file
    applied: int = 0

    @property
    def text(self) -> str:
        """The source as text, for showing lines in reports."""
        data = self.fixed if self.fixed is not None else self.original
        return data.decode("utf-8", errors="replace")


def might_use_tensorflow(data: bytes) -> bool:
    """Cheap scan: a file with no 'tensorflow' or 'keras' anywhere cannot have a finding."""
    return b"tensorflow" in data or b"keras" in data


def make_finding(code: str, path: str, message: str, start, end, fix=None) -> Finding:
    info = catalogue()[code]
    return Finding(
        rule=code,
        name=info.name,
        path=path,
        line=start[0],
        column=start[1] + 1,
        end_line=end[0],
        end_column=end[1] + 1,
        severity=info.severity,
        message=message,
        fix=fix,
    )


def _parse_error(path: str, error: Exception, data: bytes) -> Finding:
    """TFM001 with the clearest message on offer: CPython's own, else libcst's."""
    line, col, text = 1, 0, str(error).splitlines()[0] if str(error) else type(error).__name__
    if isinstance(error, UnicodeDecodeError):
        text = f"not valid text in its declared encoding ({error.reason} at byte {error.start})"
    elif isinstance(error, cst.ParserSyntaxError):
        line, col, text = error.raw_line, error.raw_column, error.message
        where = re.search(r"error at (\d+):(\d+): ", text)
        if where:
            line, col = int(where.group(1)), int(where.group(2)) - 1
            text = text[where.end():]
        text = re.sub(r"^(parser|tokenizer) error: ", "", text)
        try:
            ast.parse(data)
        except SyntaxError as py_error:  # CPython says "Missing parentheses in call to 'print'"
            if py_error.lineno:
                line, col, text = py_error.lineno, max((py_error.offset or 1) - 1, 0), py_error.msg
        except Exception:  # null bytes and the like: keep libcst's words
            pass
    if text.startswith("expected one of"):
        text = "invalid syntax"
    stop = "" if text.endswith((".", "?", "!")) else "."
    message = (
        f"Cannot parse this file: {text}{stop} Fix the syntax (Python 2 code must be ported "
        "to Python 3) to have it checked."
    )
    return make_finding(PARSE_ERROR, path, message, (line, col), (line, col))


class _Walk(cst.CSTVisitor):
    """One walk of the tree that dispatches each node to every rule's visit_/leave_ method."""

    def __init__(self, ctx: FileContext, rules: Sequence[Rule]):
        self.ctx = ctx
        self.failed: Dict[Rule, BaseException] = {}
        self.visits = defaultdict(list)
        self.leaves = defaultdict(list)
        for rule in rules:
            for attr in dir(type(rule)):
                if attr.startswith("visit_"):
                    self.visits[attr[6:]].append((rule, getattr(rule, attr)))
                elif attr.startswith("leave_"):
                    self.leaves[attr[6:]].append((rule, getattr(rule, attr)))

    def _run(self, handlers, node) -> None:
        for rule, method in handlers:
            if rule in self.failed:
                continue
            try:
                method(node)
            except Exception as error:  # one broken rule must not stop the others
                self.failed[rule] = error

    def on_visit(self, node: cst.CSTNode) -> bool:
        handlers = self.visits.get(type(node).__name__)
        if handlers:
            self._run(handlers, node)
        self.ctx.stack.append(node)
        return True

    def on_leave(self, original_node: cst.CSTNode) -> None:
        self.ctx.stack.pop()
        handlers = self.leaves.get(type(original_node).__name__)
        if handlers:
            self._run(handlers, original_node)


@dataclass
class _Pass:
    module: Optional[cst.Module]
    findings: List[Finding]
    positions: object = None


def _lint(data: bytes, path: str, codes: Sequence[str]) -> _Pass:
    if not might_use_tensorflow(data):
        return _Pass(None, [])
    try:
        module = cst.parse_module(data)
        source = module.code
    except Exception as error:  # libcst raises several types for bad input
        if PARSE_ERROR in codes:
            return _Pass(None, [_parse_error(path, error, data)])
        return _Pass(None, [])
    ctx = FileContext(path, module, source)
    registry = all_rules()
    rules = [registry[c](ctx) for c in codes if c in registry and registry[c].applies_to(ctx)]
    rules = [r for r in rules if any(a.startswith(("visit_", "leave_")) for a in dir(type(r)))]
    if not rules:
        return _Pass(module, [])
    walk = _Walk(ctx, rules)
    module.visit(walk)
    reports: List[Report] = [rep for rule in rules if rule not in walk.failed for rep in rule.reports]
    errors = [(rule.code, error) for rule, error in walk.failed.items()]
    if not reports and not errors:
        return _Pass(module, [])
    positions = MetadataWrapper(module, unsafe_skip_copy=True).resolve(PositionProvider)
    findings = []
    for rep in reports:
        rng = positions[rep.node]
        start, end = (rng.start.line, rng.start.column), (rng.end.line, rng.end.column)
        findings.append(make_finding(rep.code, path, rep.message, start, end, rep.fix))
    for code, error in errors:
        findings.append(
            make_finding(
                INTERNAL_ERROR,
                path,
                f"Internal error in rule {code}: {type(error).__name__}: {error}. "
                "The other rules still ran; please report this with the file.",
                (1, 0),
                (1, 0),
            )
        )
    findings.sort(key=lambda f: (f.line, f.column, f.rule))
    return _Pass(module, findings, positions)


def check_source(data: bytes, path: str, codes: Sequence[str]) -> List[Finding]:
    return _lint(data, path, codes).findings


def fix_source(data: bytes, path: str, codes: Sequence[str], unsafe: bool = False) -> FileResult:
    """Fix to a fixed point. The result's `fixed` is None when nothing changed."""
    result = FileResult(path, data)
    current = data
    for _ in range(MAX_FIX_PASSES):
        lint = _lint(current, path, codes)
        fixes = [
            f.fix
            for f in lint.findings
            if f.fix is not None and f.fix.edits and (unsafe or f.fix.applicability == "safe")
        ]
        if lint.module is None or not fixes:
            result.findings = lint.findings
            break
        new_module, taken = apply_fixes(lint.module, fixes, lint.positions)
        new = new_module.bytes
        try:
            cst.parse_module(new)
        except Exception:  # a fix that breaks the syntax is refused, the file kept as it was
            result.findings = lint.findings
            break
        if new == current:
            result.findings = lint.findings
            break
        current = new
        result.applied += taken
    else:
        result.findings = _lint(current, path, codes).findings
    if current != data:
        result.fixed = current
    return result
