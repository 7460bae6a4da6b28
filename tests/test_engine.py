"""Engine guarantees: a failing rule or a bad fix never stops the run or corrupts a file."""
from pathlib import Path

import libcst as cst
import pytest

from tfmigrate.core import registry as rule_module
from tfmigrate.core.engine import check_source, fix_source
from tfmigrate.findings import Fix, Replace
from tfmigrate.core.registry import all_rules
from tfmigrate.rules.base import Rule

SOURCE = b"import tensorflow as tf\nds = tf.data.Dataset.range(3).repeat(False)\n"


@pytest.fixture
def registry(monkeypatch):
    rules = dict(all_rules())
    monkeypatch.setattr(rule_module, "_REGISTRY", rules)
    return rules


def test_a_crashing_rule_is_reported_and_the_others_still_run(registry):
    class Crashes(Rule):
        code = "TFM104"

        def visit_Call(self, node):
            raise ZeroDivisionError("boom")

    registry["TFM104"] = Crashes
    findings = check_source(SOURCE, "x.py", ["TFM104", "TFM105"])
    assert [f.rule for f in findings] == ["TFM000", "TFM105"]
    assert "in rule TFM104" in findings[0].message and "ZeroDivisionError" in findings[0].message


def test_a_fix_that_breaks_the_syntax_is_refused_and_the_others_apply(registry):
    class BadFix(Rule):
        code = "TFM104"

        def visit_Assign(self, node):
            broken = cst.Name("if")  # valid node, invalid code: `if = ...`
            self.report(node.targets[0].target, "bad", Fix("safe", "breaks", (Replace(node.targets[0].target, broken),)))

    registry["TFM104"] = BadFix
    result = fix_source(SOURCE, "x.py", ["TFM104", "TFM105"])
    assert result.fixed == b"import tensorflow as tf\nds = tf.data.Dataset.range(3)\n"
    assert [f.rule for f in result.findings] == ["TFM000", "TFM104"]
    assert "was not applied" in result.findings[0].message


def _rule_adding_an_import(isolation):
    class AddsOs(Rule):  # `import tensorflow as tf` -> `import tensorflow as tf, os`, once
        code = "TFM104"

        def visit_Import(self, node):
            if len(node.names) == 1:
                names = (node.names[0].with_changes(comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))),
                         cst.ImportAlias(cst.Name("os")))
                self.report(node, "adds os", Fix("safe", "add os", (Replace(node, node.with_changes(names=names)),),
                                                 isolation=isolation))

    return AddsOs


@pytest.mark.parametrize("isolation,passes", [("module", 2), ("none", 1)])
def test_a_module_isolated_fix_is_applied_alone_and_the_others_in_the_next_pass(registry, isolation, passes):
    registry["TFM104"] = _rule_adding_an_import(isolation)
    result = fix_source(SOURCE, "x.py", ["TFM104", "TFM105"], record=True)
    assert result.fixed == b"import tensorflow as tf, os\nds = tf.data.Dataset.range(3)\n"
    assert len(result.passes) == passes and result.applied == 2
    if isolation == "module":
        assert result.passes[0][1] == b"import tensorflow as tf, os\nds = tf.data.Dataset.range(3).repeat(False)\n"
        assert result.fixed_rules == ["TFM104", "TFM105"]


def test_the_compat_route_is_a_module_isolated_fix_and_isolation_stays_out_of_json():
    source = b"import tensorflow as tf\nx = tf.placeholder(tf.float32)\nwith tf.Session() as sess:\n    sess.run(x)\n"
    route = [f for f in check_source(source, "x.py", ["TFM200"]) if f.rule == "TFM200"]
    assert len(route) == 1 and route[0].fix.isolation == "module"
    assert "isolation" not in str(route[0].to_json())
    assert route[0].portable().fix.isolation == "none" and route[0].portable().fix == route[0].fix


def test_files_without_tensorflow_are_not_parsed(registry):
    assert check_source(b"print 'python 2, but no TF here'\n", "x.py", ["TFM001", "TFM105"]) == []


@pytest.mark.parametrize(
    "source",
    [
        b"import tensorflow as tf\nif (n := 3) > 2:\n    pass\n",
        b"import tensorflow as tf\nmatch tf:\n    case {'a': 1}:\n        pass\n    case _:\n        pass\n",
        b"import tensorflow as tf\ntry:\n    pass\nexcept* ValueError:\n    pass\n",
        b"import tensorflow as tf\nx = 1\nprint(f'{x=}')\n",
        b"import tensorflow as tf\ndef first[T](xs: list[T]) -> T:\n    return xs[0]\ntype Alias = list[int]\n",
        b"import tensorflow as tf\nasync def f(xs):\n    return [x async for x in xs]\n",
    ],
    ids=["walrus", "match", "except-star", "fstring-equals", "pep695", "async-comprehension"],
)
def test_modern_syntax_is_checked_like_any_code(source, registry):
    source += b"ds = tf.data.Dataset.range(3).repeat(False)\n"
    findings = check_source(source, "x.py", ["TFM001", "TFM000", "TFM105"])
    assert [f.rule for f in findings] == ["TFM105"]


def _fixture_files():
    root = Path(__file__).parent / "fixtures"
    return sorted(p for p in root.rglob("*.py") if p.name.startswith(("bad_", "exec_")))


EDGE_CASES = {
    "no final newline, last statement fixed": b"import tensorflow as tf\nds = tf.data.Dataset.range(3).repeat(False)",
    "crlf and a footer comment": b"import tensorflow as tf\r\nds = tf.data.Dataset.range(3).repeat(False)\r\n\r\n# end\r\n",
    "unused noqa in the header": b"# noqa: TFM105\nimport tensorflow as tf\nds = tf.data.Dataset.range(3).repeat(False)\n",
    "statement removed": b"import tensorflow as tf\ntf.enable_eager_execution()\nx = 1\n",
    "nested and decorated": (
        b"import tensorflow as tf\n\n\n@decorate\nclass A:\n    def f(self, d):\n        if d:\n"
        b"            return d.repeat(True)\n        return tf.data.Dataset.range(3).repeat(False)\n"
    ),
}


@pytest.mark.parametrize(
    "name,data",
    [(p.parent.name + "/" + p.name, p.read_bytes()) for p in _fixture_files()] + list(EDGE_CASES.items()),
    ids=lambda v: v if isinstance(v, str) else "",
)
def test_fixes_keep_unchanged_statements_text_and_equal_the_whole_module_generated(name, data, monkeypatch):
    """apply_fixes regenerates only the top-level statements with an edit and slices the rest
    from the original text; the result must equal generating the whole rebuilt module."""
    from tfmigrate.core import engine
    from tfmigrate.core.apply import apply_fixes
    from tfmigrate.catalogue import catalogue

    lint = engine._lint(data, "x.py", sorted(catalogue()))
    fixes = [f.fix for f in lint.findings if f.fix is not None and f.fix.edits]
    if lint.module is None or not fixes:
        pytest.skip("nothing to fix")
    text, taken, parsed = apply_fixes(lint.module, fixes, lint.positions)
    monkeypatch.setattr(type(lint.positions), "statement_lines", lambda self: None)
    whole, whole_taken, _ = apply_fixes(lint.module, fixes, lint.positions)
    assert taken == whole_taken > 0
    assert text == whole
    if parsed is not None:  # the tree handed to the next pass is the new text's
        assert parsed.code == text
        assert parsed.deep_equals(cst.parse_module(text.encode(lint.module.encoding)))


CR_ONLY = [  # lines that end in a lone CR (old Mac style): CPython compiles both
    b'# -*- coding: latin-1 -*-\rimport tensorflow as tf\rname = "caf\xe9"\rds = tf.data.Dataset.range(3).repeat(False)\r',
    b"import tensorflow as tf\r\rds = tf.data.Dataset.range(3).repeat(False)  # note\r",
]


@pytest.mark.parametrize("data", CR_ONLY, ids=["latin-1 declared", "ascii, blank lines"])
def test_cr_only_line_endings_are_checked_and_fixed_byte_for_byte(data):
    compile(data, "cr.py", "exec")
    codes = sorted(all_rules())
    assert [f.rule for f in check_source(data, "cr.py", codes)] == ["TFM105"]
    fixed = fix_source(data, "cr.py", codes).fixed
    assert fixed == data.replace(b".repeat(False)", b"")
