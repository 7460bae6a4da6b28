"""rules.yaml, the rule classes and the fixture folders match one to one, and the README's rule
table is the one generated from rules.yaml."""
import re
from pathlib import Path

from fixtures_lib import FIXTURES, rule_dirs
from tfmigrate.catalogue import catalogue
from tfmigrate.core.registry import all_rules

ROOT = Path(__file__).parent.parent
ENGINE_CODES = {"TFM000", "TFM001"}  # emitted by the engine itself, tested in test_cli.py


def test_every_rule_has_an_entry_and_every_entry_a_rule():
    assert set(all_rules()) == set(catalogue())


def test_every_rule_has_a_fixture_folder_with_positives_and_negatives():
    folders = {d.name for d in rule_dirs()}
    assert folders == set(catalogue()) - ENGINE_CODES
    for folder in folders:
        names = [p.name for p in (FIXTURES / folder).glob("*.py")]
        assert any(n.startswith("bad_") for n in names), folder
        assert any(n.startswith("ok_") for n in names), folder


def test_rules_that_fix_have_an_executable_test():
    for code, info in catalogue().items():
        if info.fix != "none" and not code.startswith("TFM0"):  # TFM0xx fixes edit comments only
            assert list((FIXTURES / code).glob("exec_*.py")), f"{code} fixes but has no exec_*.py"


def test_codes_follow_the_convention():
    for code, info in catalogue().items():
        assert re.fullmatch(r"TFM[012]\d\d", code)
        assert re.fullmatch(r"[a-z0-9-]+", info.name)


def test_readme_rule_table_is_generated_from_rules_yaml():
    from tfmigrate.frontends.report import rules_markdown

    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert rules_markdown() in readme, "README rule table is stale: run python scripts/update_readme.py"


def test_rules_json_is_generated_from_rules_yaml():
    """tfmigrate reads tfmigrate/data/rules.json (no PyYAML at start-up) while its digest matches
    rules.yaml: it must hold the YAML's very mapping."""
    import hashlib
    import json

    from tfmigrate.catalogue import RULES_JSON, _raw_rules, yaml_rules

    text = (ROOT / "rules.yaml").read_bytes()
    generated = json.loads(RULES_JSON.read_text(encoding="utf-8"))
    assert generated["rules_yaml_sha256"] == hashlib.sha256(text).hexdigest(), \
        "tfmigrate/data/rules.json is stale: run python scripts/gen_rules_json.py"
    assert generated["rules"] == yaml_rules(text.decode("utf-8"))
    assert list(generated["rules"]) == list(yaml_rules(text.decode("utf-8")))  # the catalogue's order
    assert _raw_rules() == generated["rules"]


def test_catalogue_reads_the_yaml_when_the_json_is_stale(monkeypatch, tmp_path):
    from tfmigrate import catalogue as module

    stale = tmp_path / "rules.json"
    stale.write_text('{"rules_yaml_sha256": "0", "rules": {}}', encoding="utf-8")
    monkeypatch.setattr(module, "RULES_JSON", stale)
    assert module._raw_rules() == module.yaml_rules((ROOT / "rules.yaml").read_text(encoding="utf-8"))
