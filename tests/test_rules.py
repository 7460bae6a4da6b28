"""Every rule fixture folder: positives found where marked, negatives silent, snapshots of the
findings and of the fix, fixed point, and safe-only fixing leaves no safe fix behind."""
import pytest

from fixtures_lib import cases, expected_lines, format_findings, lines_outside_edits, options, snapshot
from tfmigrate.core.engine import check_source, fix_source

TOOL_CODES = ["TFM000", "TFM001"]


def _codes(case):
    return [case.parent.name] + TOOL_CODES


@pytest.mark.parametrize("case", cases("bad"), ids=lambda p: f"{p.parent.name}/{p.name}")
def test_positive(case):
    code = case.parent.name
    data = case.read_bytes()
    findings = check_source(data, case.name, _codes(case), **options(case))
    assert not [f for f in findings if f.rule in TOOL_CODES], format_findings(findings)
    marked = expected_lines(data.decode("utf-8"), code)
    assert marked, f"{case} marks no line with '# expect: {code}'"
    assert {f.line for f in findings} == marked, format_findings(findings)

    expected = case.parent / "expected"
    assert format_findings(findings) == snapshot(expected / f"{case.stem}.findings", format_findings(findings))

    result = fix_source(data, case.name, _codes(case), **options(case), unsafe=True)
    fixed = result.fixed if result.fixed is not None else data
    assert fixed.decode("utf-8") == snapshot(expected / f"{case.stem}.fixed", fixed.decode("utf-8"))

    again = fix_source(fixed, case.name, _codes(case), **options(case), unsafe=True)
    assert again.fixed is None, "a second fix run changed the file: not a fixed point"
    assert not [f for f in again.findings if f.fix is not None], "fixable findings left"


@pytest.mark.parametrize("case", cases("bad"), ids=lambda p: f"{p.parent.name}/{p.name}")
def test_safe_only_fix(case):
    result = fix_source(case.read_bytes(), case.name, _codes(case), **options(case), unsafe=False)
    left = [f for f in result.findings if f.fix is not None and f.fix.applicability == "safe"]
    assert not left, format_findings(left)


@pytest.mark.parametrize("case", cases("ok"), ids=lambda p: f"{p.parent.name}/{p.name}")
def test_negative(case):
    findings = check_source(case.read_bytes(), case.name, _codes(case), **options(case))
    assert findings == [], format_findings(findings)


@pytest.mark.parametrize("case", cases("bad"), ids=lambda p: f"{p.parent.name}/{p.name}")
def test_fix_keeps_every_byte_outside_its_edits(case):
    result = fix_source(case.read_bytes(), case.name, _codes(case), **options(case), unsafe=True, record=True)
    for before, after, spans in result.passes:
        assert spans, "a pass changed the file without saying where"
        assert not lines_outside_edits(before, after, spans)
