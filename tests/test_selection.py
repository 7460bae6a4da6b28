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
from tfmigrate import engine
from tfmigrate.apply import apply_fixes
from tfmigrate.catalogue import catalogue
from tfmigrate.context import FileContext
from tfmigrate.noqa import UNUSED_NOQA
from tfmigrate.removed_api import RemovedApiRule
from tfmigrate.rule import all_rules

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


def test_a_family_rule_keeps_its_own_handlers_when_another_rule_walks():
    """A removed-API rule with its own visit_Call fires whether or not it is the family's walker
    (the first rule created): its handlers used to be dropped when another rule walked."""
    calls = []

    class Probe(RemovedApiRule):
        code = "TFM9XX"

        def visit_Call(self, node):
            calls.append(self.is_walker)

    source = "import tensorflow as tf\nx = tf.Session()\ny = f(1)\n"
    for first_is_walker in (True, False):
        calls.clear()
        module = cst.parse_module(source)
        ctx = FileContext("probe.py", module, source)
        if first_is_walker:
            rules = [Probe(ctx), all_rules()["TFM205"](ctx)]
        else:
            rules = [all_rules()["TFM205"](ctx), Probe(ctx)]
        engine._Walk(ctx, rules).walk(module)
        assert calls == [first_is_walker] * 2
        assert not rules[1].reports and not rules[0].reports  # nothing of theirs, nothing twice


def test_a_rules_own_override_of_the_walk_does_not_walk_twice():
    """A rule overriding a walker method and calling super() resolves nothing when it is not the
    walker: the walker resolves each reference once."""

    class Override(RemovedApiRule):
        code = "TFM9XY"

        def visit_Attribute(self, node):
            super().visit_Attribute(node)

    source = "import tensorflow as tf\nsaver = tf.train.Saver()\n"
    module = cst.parse_module(source)
    ctx = FileContext("probe.py", module, source)
    saver = all_rules()["TFM208"](ctx)
    override = Override(ctx)
    engine._Walk(ctx, [saver, override]).walk(module)
    assert len(saver.reports) == 1 and not override.reports
