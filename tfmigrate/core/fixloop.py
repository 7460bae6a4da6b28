"""`fix`: apply the findings' fixes and lint again until nothing changes (bounded), refusing any
fix whose result does not parse while the others still apply.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, List, Optional, Sequence

import libcst as cst

from tfmigrate.core.apply import apply_fixes
from tfmigrate.catalogue import INTERNAL_ERROR, make_finding
from tfmigrate.core.positions import python_ast
from tfmigrate.core.source import might_use_tensorflow, parse
from tfmigrate.facts.graph_words import LEGACY_KERAS_SET
from tfmigrate.findings import Finding

MAX_FIX_PASSES = 16
NATIVE = "TFM216"  # the rule whose fix the native rewrite is (`fix --native`)


@dataclass
class FileResult:
    path: str
    original: bytes
    findings: List[Finding] = field(default_factory=list)
    fixed: Optional[bytes] = None  # new bytes when a fix changed the file
    applied: int = 0
    passes: list = field(default_factory=list)  # (before, after, edited spans), when recorded
    requires: tuple = ()  # packages the applied fixes make the code need ("tf-keras")
    fixed_rules: list = field(default_factory=list)  # the rule of each fix applied (--show-fixes)
    kept: tuple = ()  # `fix --keras3`: what stays TF1 inside the tracked layers, and why (native.keras3)

    @property
    def text(self) -> str:
        """The source as text, for showing lines in reports."""
        data = self.fixed if self.fixed is not None else self.original
        return data.decode("utf-8", errors="replace")


def fix_to_fixed_point(data: bytes, path: str, codes: Sequence[str], lint: Callable, unsafe: bool, record: bool,
                       native: bool, stateful: tuple = (), eager: tuple = (), keras3: bool = False,
                       group: tuple = ()) -> FileResult:
    """`lint(data, parsed)`: the engine's lint pass on `data` (`parsed`: its module when already
    parsed), with the module, findings and positions the fixes were found in."""
    result = FileResult(path, data)
    current = data
    if native and NATIVE in codes:
        current = _rewrite_natively(data, result, record, stateful, eager, unsafe, keras3, group)
    refused: set = set()
    failures: List[Finding] = []
    lint_pass = None
    parsed = None
    for _ in range(MAX_FIX_PASSES):
        lint_pass = lint(current, parsed)
        parsed = None
        fixable = _isolated(_applicable(lint_pass.findings, unsafe, refused))
        if lint_pass.module is None or not fixable:
            break
        spans: list = []
        rules: list = []
        new, taken, bad, parsed = _apply(lint_pass.module, fixable, lint_pass.positions, spans, rules)
        for finding in bad:
            refused.add((finding.rule, finding.line, finding.column))
            failures.append(
                make_finding(
                    INTERNAL_ERROR,
                    path,
                    f"The {finding.rule} fix at line {finding.line} would have produced invalid code and "
                    "was not applied; the finding stays. Please report this with the file.",
                    (finding.line, finding.column - 1),
                    (finding.line, finding.column - 1),
                )
            )
        if new is None or new == current:
            parsed = None
            if not bad:
                break
            continue
        if record:
            result.passes.append((current, new, spans))
        current = new
        result.applied += taken
        result.fixed_rules.extend(rules)
        result.requires = tuple(sorted(set(result.requires).union(*(f.fix.requires for f in fixable))))
        lint_pass = None
    if lint_pass is None:
        lint_pass = lint(current, parsed)
    result.findings = sorted(lint_pass.findings + failures, key=lambda f: (f.line, f.column, f.rule))
    if current != data:
        result.fixed = current
    return result


def _rewrite_natively(data: bytes, result: FileResult, record: bool, stateful: tuple = (), eager: tuple = (),
                      unsafe: bool = False, keras3: bool = False, group: tuple = ()) -> bytes:
    """The native pre-pass: the module rewritten as eager TF2 (tfmigrate.native), before any other
    fix; `data` itself when it is not a TF1 graph script tfmigrate can rewrite (TFM216 then says why).
    `unsafe`: a queue pipeline read in a random order may become a `tf.data` shuffle; `keras3`: the
    tracked TF1 layers become Keras layers where equal (native.keras3)."""
    if not group and not might_use_tensorflow(data):  # a group's library may get `tf` by star import
        return data
    from tfmigrate.native import rewrite

    try:
        source = data.decode("utf-8")
    except UnicodeDecodeError:
        return data
    outcome = rewrite(source, stateful, eager, unsafe, keras3, group)
    if outcome.code is None:
        return data
    new = outcome.code.encode("utf-8")
    if record:
        result.passes.append((data, new, [((1, 0), (data.count(b"\n") + 1, 0))]))  # the whole module
    result.applied += 1
    result.fixed_rules.append(NATIVE)
    result.kept = outcome.kept
    if "write_summaries(" in outcome.code:
        result.requires = tuple(sorted(set(result.requires) | {"tensorboard"}))
    if LEGACY_KERAS_SET.search(outcome.code) and not LEGACY_KERAS_SET.search(source):
        result.requires = tuple(sorted(set(result.requires) | {"tf-keras"}))  # the model-mapping route, RNN cells
    return new


def _applicable(findings: Sequence[Finding], unsafe: bool, refused: set) -> List[Finding]:
    return [
        f
        for f in findings
        if f.fix is not None
        and f.fix.edits
        and (unsafe or f.fix.applicability == "safe")
        and (f.rule, f.line, f.column) not in refused
    ]


def _isolated(fixable: List[Finding]) -> List[Finding]:
    """A fix isolated to its module (Fix.isolation, such as TFM200's move to the compat route) is
    applied alone: the other fixes were chosen for the module as it was, and are chosen again in
    the next pass for the module it made."""
    for finding in fixable:
        if finding.fix.isolation == "module":
            return [finding]
    return fixable


def _apply(module: cst.Module, fixable: Sequence[Finding], positions, spans: list, rules: Optional[list] = None):
    """Apply the fixes together; if that fails or breaks the syntax, find the culprits one by
    one, refuse them, and apply the rest. Returns (new bytes or None, fixes applied, refused,
    the new bytes parsed); `spans` receives the edited regions of the batch that was applied,
    `rules` (if given) the rule of each fix applied."""

    def attempt(batch):
        edited: list = []
        chosen: list = []
        text, taken, parsed = apply_fixes(module, [f.fix for f in batch], positions, edited, chosen)
        if text is None:
            return None, 0, None
        new = text.encode(module.encoding)
        if parsed is None:
            parsed = parse(new)  # refuses code that does not parse; the next pass reuses the tree
        elif positions.cpython_parses:
            python_ast(new)  # the edited statements parsed one by one; the whole must parse too
        spans[:] = edited
        if rules is not None:
            taken_ids = {id(fix) for fix in chosen}
            rules[:] = [f.rule for f in batch if id(f.fix) in taken_ids]
        return new, taken, parsed

    try:
        new, taken, parsed = attempt(fixable)
        return new, taken, [], parsed
    except Exception:
        pass
    good, refused = [], []
    for finding in fixable:
        try:
            attempt([finding])
            good.append(finding)
        except Exception:
            refused.append(finding)
    if good:
        try:
            new, taken, parsed = attempt(good)
            return new, taken, refused, parsed
        except Exception:
            refused.extend(good)
    return None, 0, refused, None
