"""Every rule finds the same alone and with every rule enabled (issue 12): over every fixture
file tests/fixtures/<CODE>/bad_*.py and ok_*.py, the findings of <CODE> with only <CODE>
selected equal those with all rules selected: same lines, columns, messages, kind, fix
applicability and description, and the same source when each finding's fix is applied alone.

Where a difference is by design it is documented here, nowhere else:
- TFM002 (unused noqa) judges only the selected codes (a `noqa` naming a rule that is off is not
  stale), so "alone" for it means TFM002 plus the codes the file's comments name.
- FIX_MAY_DIFFER lists fixtures whose fixes may differ with the others enabled, and why (none
  today).
"""
import re

import libcst as cst
import pytest

from fixtures_lib import cases
from tfmigrate.core import engine
from tfmigrate.core.apply import apply_fixes
from tfmigrate.catalogue import catalogue
from tfmigrate.core.noqa import UNUSED_NOQA
from tfmigrate.core import registry as rule_module
from tfmigrate.core.registry import all_rules

ALL = list(catalogue())
FIX_MAY_DIFFER = {}  # "CODE/file.py" -> why its fixes differ with every rule enabled


def _alone(code: str, source: str):
    if code != UNUSED_NOQA:
        return [code]
    return [code] + sorted(set(re.findall(r"TFM\d{3}", source)) - {code})


def _findings(data: bytes, name: str, codes, code: str, with_fixes: bool):
    lint = engine._lint(data, name, codes)
    out = []
    for f in lint.findings:
        if f.rule != code:
            continue
        fixed = None
        if with_fixes and f.fix is not None and f.fix.edits:
            fixed, _, _ = apply_fixes(lint.module, [f.fix], lint.positions, [], [])
        fix = (f.fix.applicability, f.fix.description) if f.fix is not None else None
        out.append((f.line, f.column, f.end_line, f.end_column, f.message, f.kind, fix, fixed))
    return out


@pytest.mark.parametrize("case", cases("bad") + cases("ok"), ids=lambda p: f"{p.parent.name}/{p.name}")
def test_same_findings_alone_and_with_every_rule(case):
    code = case.parent.name
    data = case.read_bytes()
    with_fixes = f"{code}/{case.name}" not in FIX_MAY_DIFFER
    alone = _findings(data, case.name, _alone(code, data.decode("utf-8")), code, with_fixes)
    together = _findings(data, case.name, ALL, code, with_fixes)
    assert together == alone


@pytest.fixture
def registry(monkeypatch):
    rules = dict(all_rules())
    monkeypatch.setattr(rule_module, "_REGISTRY", rules)
    return rules


@pytest.mark.parametrize("code", ["TFM201", "TFM206", "TFM299"])  # first, a whole-path rule, last
def test_a_removed_api_rules_own_handlers_run_with_every_rule_enabled(registry, code):
    """A removed-API rule with its own visit_Call (and leave_Module) fires alone and with every
    rule enabled, wherever it sits among the others: its handlers are never dropped for another
    rule's, and the references it owns still reach it, once each."""
    seen = []

    class Probe(registry[code]):
        def visit_Call(self, node):
            super_visit = getattr(super(), "visit_Call", None)
            if super_visit is not None:
                super_visit(node)
            seen.append(cst.Module([]).code_for_node(node.func))

        def leave_Module(self, node):
            self.report(node.body[0], "probe", None)

        def describe(self, ref):
            seen.append(f"ref {ref.path}")
            return super().describe(ref)

    registry[code] = Probe
    source = b"import tensorflow as tf\nx = tf.Session()\ny = f(1)\nz = tf.contrib.slim.flatten(x)\n"
    runs = {}
    for codes in ([code], ALL):
        seen.clear()
        findings = [f for f in engine._lint(source, "probe.py", codes).findings if f.rule == code]
        runs[len(codes)] = (list(seen), [(f.line, f.column, f.message) for f in findings])
        assert {"tf.Session", "f", "tf.contrib.slim.flatten"} <= set(seen)
        assert any(m == "probe" for _, _, m in runs[len(codes)][1])
        assert all(seen.count(item) == 1 for item in seen if item.startswith("ref "))
    assert runs[1] == runs[len(ALL)]
