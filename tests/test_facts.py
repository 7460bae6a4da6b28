"""Facts are declared: a rule reads only the facts its class (or a base) names in `reads`, with
the facts those declare they need; and the facts layer imports nothing above it."""
import ast
import sys
from pathlib import Path

import pytest

from fixtures_lib import FIXTURES, options
from tfmigrate.core import engine
from tfmigrate.core.dispatch import read_by
from tfmigrate.core.registry import all_rules
from tfmigrate.facts.context import FileContext

FACTS = Path(engine.__file__).resolve().parent.parent / "facts"
SAMPLES = sorted(FIXTURES.rglob("*.py"))


class _Recording(FileContext):
    """A context that remembers every fact kind asked of it (by rules, fixes and facts)."""

    asked: set = set()

    def fact(self, kind):
        _Recording.asked.add(kind)
        return super().fact(kind)


@pytest.mark.parametrize("code", sorted(all_rules()))
def test_a_rule_reads_only_the_facts_it_declares(code, monkeypatch):
    monkeypatch.setattr(engine, "FileContext", _Recording)
    _Recording.asked = set()
    for sample in SAMPLES:
        engine.fix_source(sample.read_bytes(), sample.name, [code], unsafe=True, **options(sample))
    rule = all_rules()[code]
    undeclared = {kind.__name__ for kind in _Recording.asked} - {kind.__name__ for kind in read_by([rule])}
    assert not undeclared, f"{code} ({rule.__module__}) reads facts it does not declare in `reads`: {sorted(undeclared)}"


def test_every_fact_kind_declares_what_it_needs():
    for rule in all_rules().values():
        for kind in read_by([rule]):
            assert isinstance(vars(kind).get("needs"), tuple), f"{kind.__qualname__} declares no `needs`"


@pytest.mark.parametrize("path", sorted(FACTS.glob("*.py")), ids=lambda p: p.name)
def test_facts_import_nothing_above_them(path):
    above = ("tfmigrate.core", "tfmigrate.rules", "tfmigrate.fixers", "tfmigrate.native", "tfmigrate.project",
             "tfmigrate.workspace", "tfmigrate.frontends", "tfmigrate.api")
    tree = ast.parse(path.read_text(encoding="utf-8"))
    imported = [alias.name for node in ast.walk(tree) if isinstance(node, ast.Import) for alias in node.names]
    imported += [node.module for node in ast.walk(tree) if isinstance(node, ast.ImportFrom) and node.module]
    wrong = [name for name in imported if name.startswith(above)]
    assert not wrong, f"facts/{path.name} imports {wrong}"


@pytest.mark.parametrize("code", sorted(all_rules()))
def test_a_rule_names_in_reads_every_fact_its_file_asks_for(code):
    """What the rule's own file asks (`ctx.fact(Kind)`) is in its `reads`, so that one file
    says what the rule reads; facts reached through fixes and other facts are the test above's."""
    rule = all_rules()[code]
    tree = ast.parse(Path(sys.modules[rule.__module__].__file__).read_text(encoding="utf-8"))
    asked = {node.args[0].id for node in ast.walk(tree) if isinstance(node, ast.Call)
             and isinstance(node.func, ast.Attribute) and node.func.attr == "fact" and node.args
             and isinstance(node.args[0], ast.Name)}
    declared = {kind.__name__ for kind in rule.facts_read()}
    assert asked <= declared, f"{code}: `reads` lacks {sorted(asked - declared)}"
