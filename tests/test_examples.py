"""The catalogue's examples, tested (as Fixit tests its VALID / INVALID examples): for every rule
in rules.yaml with a `bad` and a `good` example, the rule run alone reports the `bad` one and not
the `good` one, and the `fix:` column says what the rule builds on its `bad` example.

Examples are snippets, so each is completed by one rule, `complete()` below (rules.yaml's header
says the same): a snippet that imports no TensorFlow gets `import tensorflow as tf` on top, and
one that uses `np.` / `sys.` without importing it gets that import too. Nothing else is added;
names such as `ds`, `model` or `x` stay free, as in the snippet.

"Alone" is `check_source(data, path, [code])`, with one addition for TFM002 (unused noqa), whose
subject is the other rules' findings: it judges only selected codes, so the codes its example's
`noqa` comments name are selected with it (the others' findings are not looked at).
"""
import re

import pytest

from fixtures_lib import FIXTURES
from tfmigrate.catalogue import catalogue
from tfmigrate.core.engine import check_source
from tfmigrate.core.noqa import UNUSED_NOQA

# name used as `name.` in a snippet -> the import that binds it, when the snippet lacks it
PRELUDE = {"np": "import numpy as np", "sys": "import sys"}
_TF_IMPORT = re.compile(r"^\s*(?:import|from)\s+tensorflow\b", re.MULTILINE)
_FIX_COLUMN = {"safe": {"safe"}, "unsafe": {"unsafe"}, "none": {None}}


def complete(snippet: str) -> str:
    """The snippet as a module: the imports it takes for granted, then the snippet unchanged."""
    lines = []
    if not _TF_IMPORT.search(snippet):
        lines.append("import tensorflow as tf")
    for name, statement in PRELUDE.items():
        if re.search(rf"(?<![\w.]){name}\.", snippet) and not re.search(rf"^\s*{statement}\b", snippet, re.MULTILINE):
            lines.append(statement)
    return "".join(line + "\n" for line in lines) + snippet


def run_alone(code: str, source: str):
    """Findings of `code` with only `code` selected (plus, for TFM002, the codes it judges)."""
    codes = [code]
    if code == UNUSED_NOQA:
        codes += sorted(set(re.findall(r"TFM\d{3}", source)) - {code})
    # `native=True`: what `--native` adds is TFM216's finding; no other rule reads the option.
    return [f for f in check_source(source.encode("utf-8"), "example.py", codes, native=True) if f.rule == code]


def _examples():
    return [info for info in catalogue().values() if info.bad.strip() and info.good.strip()]


def _show(findings) -> str:
    return "\n".join(f"{f.line}:{f.column} [{f.fix.applicability if f.fix else 'no fix'}] {f.message}"
                     for f in findings)


@pytest.mark.parametrize("info", _examples(), ids=lambda info: info.code)
def test_bad_example_is_reported(info):
    source = complete(info.bad)
    findings = run_alone(info.code, source)
    assert findings, f"{info.code}'s bad example is not reported by {info.code}:\n{source}"


@pytest.mark.parametrize("info", _examples(), ids=lambda info: info.code)
def test_good_example_is_not_reported(info):
    source = complete(info.good)
    findings = run_alone(info.code, source)
    assert not findings, f"{info.code}'s good example is reported by {info.code}:\n{source}\n{_show(findings)}"


@pytest.mark.parametrize("info", _examples(), ids=lambda info: info.code)
def test_fix_column_matches_the_bad_example(info):
    """safe: every finding on the bad example offers a safe fix; unsafe: an unsafe one; none: no
    fix; sometimes: anything."""
    if info.fix == "sometimes":
        return
    findings = run_alone(info.code, complete(info.bad))
    built = {f.fix.applicability if f.fix is not None else None for f in findings}
    assert built == _FIX_COLUMN[info.fix], f"{info.code}: fix: {info.fix} in rules.yaml, built:\n{_show(findings)}"


@pytest.mark.parametrize("code", [c for c, i in catalogue().items() if i.fix != "sometimes"])
def test_fix_column_matches_the_fixture_snapshots(code):
    """Beyond the example: in every fixture snapshot, a `fix: safe` rule offers no unsafe fix, an
    `unsafe` one no safe fix, a `none` one no fix at all (a finding without a fix is allowed
    for safe/unsafe: compat.v1 spellings are debt with nothing to fix)."""
    allowed = {"safe": {"safe", "no fix"}, "unsafe": {"unsafe", "no fix"}, "none": {"no fix"}}[catalogue()[code].fix]
    for snapshot in sorted((FIXTURES / code / "expected").glob("*.findings")):
        for line in snapshot.read_text(encoding="utf-8").splitlines():
            match = re.search(rf" {code} \[(safe|unsafe|no fix)\] ", line)
            assert match is None or match.group(1) in allowed, f"{snapshot.name}: {line}"


def test_every_rule_but_the_engines_own_has_examples():
    missing = [code for code, info in catalogue().items()
               if code != "TFM000" and not (info.bad.strip() and info.good.strip())]
    assert not missing


def test_complete_adds_only_what_a_snippet_lacks():
    assert complete("x = tf.constant(1)\n") == "import tensorflow as tf\nx = tf.constant(1)\n"
    assert complete("import tensorflow as tf\ny = np.max(x)\n") == (
        "import numpy as np\nimport tensorflow as tf\ny = np.max(x)\n")
    assert complete("import numpy as np\nimport tensorflow.compat.v1 as tf\n").startswith("import numpy")
