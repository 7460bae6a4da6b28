"""Per file: the lint pass (the TFM001 gate, then every enabled rule in one walk, then noqa),
and the entry points `check_source` and `fix_source` (the fix loop: core.fixloop).
"""
from __future__ import annotations

import sys
from dataclasses import dataclass
from typing import List, Optional, Sequence

import libcst as cst

from tfmigrate.core import dispatch, noqa
from tfmigrate.core.deep import run_deep
from tfmigrate.catalogue import INTERNAL_ERROR, catalogue, make_finding
from tfmigrate.core.fixloop import FileResult, fix_to_fixed_point
from tfmigrate.core.positions import Positions
from tfmigrate.core.registry import all_rules
from tfmigrate.core.source import (cpython_refuses, cpython_verdict, might_use_tensorflow, parse,
                                   parse_error, unreadable_source)
from tfmigrate.core.walk import Walk
from tfmigrate.facts.context import FileContext
from tfmigrate.findings import Finding
from tfmigrate.rules.base import Report, Rule

# The engine's entry points, and what its callers need from core/source.py and core/fixloop.py.
__all__ = ["FileResult", "check_source", "fix_source", "lint_source", "might_use_tensorflow", "parse_error"]


@dataclass
class _Pass:
    module: Optional[cst.Module]
    findings: List[Finding]
    positions: object = None


def _internal_error(path: str, what: str, error: BaseException) -> Finding:
    return make_finding(
        INTERNAL_ERROR,
        path,
        f"Internal error {what}: {type(error).__name__}: {error}. "
        "The rest of the run went on; please report this with the file.",
        (1, 0),
        (1, 0),
    )


def _lint(data: bytes, path: str, codes: Sequence[str], parsed: Optional[cst.Module] = None, shims=None,
          imported_by: Optional[str] = None, native: bool = False, ignore_noqa: bool = False,
          keras3: bool = False, unsafe: bool = False) -> _Pass:
    """Lint one file (`parsed`: its module, when the caller has parsed it already); no
    exception escapes (it becomes a TFM000 finding). `ignore_noqa`: no `# noqa` comment (line
    or file) silences anything, and none is reported unused (Ruff's --ignore-noqa). `unsafe`: the
    fix applies unsafe fixes (TFM216 then names what holds the module after them)."""
    unreadable = unreadable_source(data, path, shims)
    if unreadable is not None:
        return _Pass(None, [unreadable])
    try:
        return _lint_unguarded(data, path, codes if ignore_noqa else noqa.file_codes(data, codes), parsed, shims,
                               imported_by, native, ignore_noqa, keras3, unsafe)
    except RecursionError:  # code nested deeper than tfmigrate's recursion limit (tfmigrate.core.deep)
        return _Pass(None, [make_finding(INTERNAL_ERROR, path, (
            "Cannot check this file: its code is nested too deeply for tfmigrate (the recursion limit "
            f"{sys.getrecursionlimit():,} was reached), so it was not checked; the rest of the run went on. "
            "Split the deepest expression into several statements to have it checked."
        ), (1, 0), (1, 0))])
    except Exception as error:
        return _Pass(None, [_internal_error(path, "while checking this file", error)])


def _forget(ctx: FileContext, rules: Sequence[Rule]) -> None:
    """Drop what the context and the rules hold, so that each file's whole tree is freed by
    reference counting as soon as the file is done. Facts keep the context they answer from
    (context -> facts -> context), and a rule may keep its own helpers pointing back at it:
    such cycles would keep the tree alive until the garbage collector's full pass, which then
    has millions of nodes to scan. (The context no longer points at the rules.)"""
    for rule in rules:
        rule.__dict__.clear()
    ctx.__dict__.clear()


def _lint_unguarded(data: bytes, path: str, codes: Sequence[str], parsed: Optional[cst.Module], shims=None,
                    imported_by: Optional[str] = None, native: bool = False, ignore_noqa: bool = False,
                    keras3: bool = False, unsafe: bool = False) -> _Pass:
    if not might_use_tensorflow(data, shims):
        return _Pass(None, [])
    try:
        # CPython first: code too deep for it must never reach libcst's native parser. A fix's
        # output was checked by the pass that made it.
        refusal = cpython_verdict(data, path) if parsed is None else None
        module = parsed or parse(data)
        source = data.decode(module.encoding, errors="replace")  # cheaper than module.code
        cpython_refuses(refusal, data, source)
    except Exception as error:  # libcst raises several types for bad input
        # Whatever the selection or noqa, as Ruff's syntax errors: the file was not checked.
        return _Pass(None, [parse_error(path, error, data)])
    ctx = FileContext(path, module, source, shims, imported_by, native, keras3=keras3, unsafe=unsafe)
    registry = all_rules()
    rules = [registry[c](ctx) for c in codes if c in registry and registry[c].applies_to(ctx)]
    steps, failed = dispatch.walk_steps(ctx, rules)  # walked before the rules, at each node
    walk = Walk(ctx, steps + [r for r in rules if r.handlers()])
    if rules:
        walk.walk(module)
    walk.failed.update(failed)  # a rule that failed on a reference handed to it
    reports: List[Report] = [rep for rule in rules if rule not in walk.failed for rep in rule.reports]
    errors = [(rule.code, error) for rule, error in walk.failed.items()]
    _forget(ctx, rules)
    may_be_stale = noqa.UNUSED_NOQA in codes and noqa.mentioned(source) and not ignore_noqa
    if not reports and not errors and not may_be_stale:
        return _Pass(module, [])
    positions = Positions(module, data, source)
    positions.prepare([(rep.statements, rep.node) for rep in reports])
    for rep in reports:
        for edit in rep.fix.edits if rep.fix is not None else ():
            target = getattr(edit, "node", None) or getattr(edit, "owner", None)
            if target is not None:
                positions.hint(target, rep.statements)
    findings = []
    for rep in reports:
        rng = positions[rep.node]
        start, end = (rng.start.line, rng.start.column), (rng.end.line, rng.end.column)
        findings.append(make_finding(rep.code, path, rep.message, start, end, rep.fix, rep.debt))
    for code, error in errors:
        findings.append(_internal_error(path, f"in rule {code}", error))
    findings, stale = (findings, []) if ignore_noqa else noqa.suppress(findings, source, codes, list(catalogue()))
    if stale:
        findings += noqa.unused_findings(module, stale, path, make_finding, positions)
    findings.sort(key=lambda f: (f.line, f.column, f.rule))
    return _Pass(module, findings, positions)


def check_source(data: bytes, path: str, codes: Sequence[str], shims=None, imported_by=None,
                 native: bool = False, ignore_noqa: bool = False, keras3: bool = False,
                 unsafe: bool = False) -> List[Finding]:
    """`shims`: the project's re-exports of TensorFlow (facts.project_imports.ProjectImports), or None. `imported_by`: a
    checked module of TF1 graph code that imports this one (graph_imports), or None. `unsafe`: as
    `fix --unsafe-fixes` would fix it (TFM216 names what holds the module after the unsafe fixes).
    Runs with room for deeply nested code (tfmigrate.core.deep)."""
    return run_deep(lambda: _lint(data, path, codes, shims=shims, imported_by=imported_by, native=native,
                                  ignore_noqa=ignore_noqa, keras3=keras3, unsafe=unsafe).findings)


def fix_source(data: bytes, path: str, codes: Sequence[str], unsafe: bool = False, record: bool = False,
               shims=None, imported_by=None, native: bool = False, ignore_noqa: bool = False,
               keras3: bool = False) -> FileResult:
    """Fix to a fixed point. The result's `fixed` is None when nothing changed. A fix whose
    result would not parse is refused (reported as TFM000) and the others still apply.
    `native`: a TF1 graph script is first rewritten as eager TF2 where it can be (TFM216); `keras3`:
    and its tracked TF1 layers as Keras layers where equal (native.keras3)."""

    def lint(current: bytes, parsed: Optional[cst.Module]) -> _Pass:
        return _lint(current, path, codes, parsed, shims, imported_by, native, ignore_noqa, keras3, unsafe)

    return run_deep(fix_to_fixed_point, data, path, codes, lint, unsafe, record, native,
                    shims.stateful if shims else (), shims.eager if shims else (), keras3, shims.group if shims else ())


def lint_source(data: bytes, path: str, codes: Sequence[str], shims=None, imported_by=None,
                native: bool = False, ignore_noqa: bool = False, keras3: bool = False):
    """check_source's whole pass: the findings with their fixes, and the parsed module and
    positions those fixes refer to (`module` is None when the file was not parsed), for a caller
    that applies one fix at a time (the editor's quick fixes, through tfmigrate.api)."""
    return run_deep(_lint, data, path, codes, None, shims, imported_by, native, ignore_noqa, keras3)
