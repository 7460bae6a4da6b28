"""What a Ruff user types by habit (issue 15): empty runs warn, --respect-gitignore / --exclude /
--extend-exclude on the command line, --output-format, -q / -v, fix --show-fixes and a fix summary
beside every format, `rules` in 80 columns and as JSON, and check --add-noqa[=REASON]."""
import json
import os
import subprocess
import sys
from xml.etree import ElementTree

import pytest
from typer.testing import CliRunner

from tfmigrate.frontends.cli import app

runner = CliRunner()
FORMATS = ["rich", "concise", "json", "json-lines", "sarif", "github", "junit"]
EMPTY_WARNING = "warning: No Python files found under the given path(s)"

TF1 = b"""import tensorflow as tf

ds = tf.data.Dataset.range(3)
once = ds.repeat(False)
twice = ds.repeat(False).map(lambda i: i.shape[0])
"""


def run(*args):
    return runner.invoke(app, list(args), catch_exceptions=False)


@pytest.fixture
def project(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "train.py").write_bytes(TF1)
    return tmp_path


def parses(fmt: str, text: str) -> None:
    """The report on stdout is whole and machine-readable (nothing else was mixed in)."""
    if fmt in ("json", "sarif"):
        json.loads(text)
    elif fmt == "json-lines":
        [json.loads(line) for line in text.splitlines()]
    elif fmt == "junit":
        ElementTree.fromstring(text.encode("utf-8"))


# --- 1. an empty run is not a clean run ---------------------------------------------------------

@pytest.mark.parametrize("fmt", FORMATS + ["statistics"])
@pytest.mark.parametrize("command", ["check", "fix"])
def test_an_empty_run_warns_on_stderr_in_every_format(project, fmt, command):
    (project / "empty").mkdir()
    args = ["--statistics"] if fmt == "statistics" else ["--format", fmt]
    result = run(command, *args, "empty")
    assert result.exit_code == 0  # as Ruff: a warning, not a failure
    assert result.stderr.startswith(EMPTY_WARNING + ".")
    assert EMPTY_WARNING not in result.stdout
    parses(fmt, result.stdout)


def test_an_empty_run_says_why_and_no_respect_gitignore_checks_what_git_ignores(project):
    subprocess.run(["git", "init", "-q"], check=True)
    (project / ".gitignore").write_text("pkg/\n")
    result = run("check", "pkg")
    assert result.exit_code == 0
    assert "1 .py/.ipynb file is there, all skipped: 1 ignored by git (--no-respect-gitignore checks those)" in result.stderr
    result = run("check", "--no-respect-gitignore", "--format", "json", "pkg")
    assert result.exit_code == 1 and len(json.loads(result.stdout)) == 3
    assert EMPTY_WARNING not in result.stderr
    # the flag overrides the configuration, both ways
    (project / "tfmigrate.toml").write_text("respect-gitignore = false\n")
    assert run("check", "pkg").exit_code == 1
    assert run("check", "--respect-gitignore", "pkg").exit_code == 0


def test_exclude_and_extend_exclude_on_the_command_line(project):
    (project / "legacy").mkdir()
    (project / "legacy" / "old.py").write_bytes(TF1)
    paths = lambda *args: {d["path"] for d in json.loads(run("check", "--format", "json", *args).stdout)}  # noqa: E731
    assert paths() == {os.path.join("pkg", "train.py"), os.path.join("legacy", "old.py")}
    assert paths("--extend-exclude", "legacy") == {os.path.join("pkg", "train.py")}
    assert paths("--exclude", "legacy,pkg") == set()
    assert paths("--exclude", "legacy", "--exclude", "pkg") == set()
    result = run("check", "--exclude", "pkg", "pkg")
    assert result.exit_code == 0 and "all skipped: 1 by exclude / extend-exclude" in result.stderr
    assert run("check", "--exclude", "[bad", ".").exit_code == 2


def test_output_format_is_an_alias_of_format(project):
    assert run("check", "--output-format", "json").stdout == run("check", "--format", "json").stdout
    assert run("check", "--output-format", "concise").stdout.count("TFM105") == 2


def test_select_help_does_not_claim_wrong_defaults():
    text = runner.invoke(app, ["check", "--help"], env={"COLUMNS": "250"}).stdout
    assert "(TFM1, TFM104)" not in text
    for flag in ("--output-format", "--respect-gitignore", "--exclude", "--add-noqa", "--quiet", "--verbose"):
        assert flag in text


# --- 7. -q / -v, --show-fixes, a fix summary in every format -------------------------------------

def test_quiet_prints_the_findings_only_and_verbose_tells_more(project):
    loud = run("check", "pkg")
    assert "Found 3 findings" in loud.stdout and "Findings by rule" in loud.stdout
    quiet = run("check", "-q", "pkg")
    assert quiet.exit_code == 1
    assert "TFM105" in quiet.stdout and "Found" not in quiet.stdout and "Findings by rule" not in quiet.stdout
    verbose = run("check", "-v", "--format", "json", "pkg")
    json.loads(verbose.stdout)
    assert "tfmigrate: configuration for 1 file: defaults (no configuration file)" in verbose.stderr
    assert f"tfmigrate: [1/1] {os.path.join('pkg', 'train.py')}: 3 findings" in verbose.stderr
    (project / "tfmigrate.toml").write_text('ignore = ["TFM104"]\n')
    verbose = run("check", "--verbose", "pkg")
    assert f"configuration for 1 file: {project / 'tfmigrate.toml'}" in verbose.stderr


def test_show_fixes_lists_what_fix_changed_per_file(project):
    (project / "pkg" / "other.py").write_bytes(b"import tensorflow as tf\nds = tf.data.Dataset.range(3).repeat(False)\n")
    train, other = os.path.join("pkg", "train.py"), os.path.join("pkg", "other.py")
    listing = (f"- {other}:\n       1 × TFM105 (repeat-bool)\n- {train}:\n"
               "       2 × TFM105 (repeat-bool)\n       1 × TFM104 (static-shape-in-map)\n")
    would = run("fix", "--diff", "--show-fixes", "pkg")
    assert would.stdout.startswith("---")  # the diff alone on stdout
    assert "Would fix 4 findings:\n" + listing in would.stderr
    result = run("fix", "--show-fixes", "pkg")
    assert result.exit_code == 0
    assert "Fixed 4 findings:\n" + listing in result.stdout
    assert "Fixed 4 findings in 2 files." in result.stdout
    assert run("fix", "--show-fixes", "pkg").stdout.count("No fixes applied.") == 1


@pytest.mark.parametrize("fmt", [f for f in FORMATS if f != "rich"] + ["statistics"])
def test_fix_summary_line_in_every_format_on_stderr(project, fmt):
    args = ["--statistics"] if fmt == "statistics" else ["--format", fmt]
    result = run("fix", "--show-fixes", *args, "pkg")
    parses(fmt, result.stdout)
    assert "Fixed 3 findings:" in result.stderr
    assert "Fixed 3 findings in 1 file. No findings in 1 file checked." in result.stderr
    assert "Fixed 3 findings" not in result.stdout
    quiet = run("fix", "-q", *args, "pkg")
    assert quiet.stderr == ""


def test_fix_summary_with_standard_input(project):
    result = runner.invoke(app, ["fix", "-", "--stdin-filename", "x.py"], input=TF1.decode())
    assert "ds.repeat(False)" not in result.stdout
    assert "Fixed 3 findings in 1 file. No findings in 1 file checked." in result.stderr


# --- 5. rules --------------------------------------------------------------------------------------

def test_rules_are_readable_in_80_columns(project):
    from tfmigrate.catalogue import catalogue

    text = run("rules").stdout
    lines = text.splitlines()
    assert max(len(line) for line in lines) <= 80
    for info in catalogue().values():
        row = next(line for line in lines if line.startswith(info.code + " "))
        assert row.split()[:3] == [info.code, info.name, info.fix]  # never cut
        # the summary, word for word, on the indented lines below
        start = lines.index(row) + 1
        words = []
        for line in lines[start:]:
            if not line.startswith("        "):
                break
            words += line.split()
        assert words == info.summary.split()
    off = next(line for line in lines if line.startswith("TFM002 "))
    assert off.split()[3] == "off"
    rows = [line.split() for line in run("rules", "--select", "TFM105").stdout.splitlines() if line.startswith("TFM")]
    assert [row[0] for row in rows if row[3] == "on"] == ["TFM105"]


def test_rules_as_json(project):
    from tfmigrate.catalogue import catalogue

    data = json.loads(run("rules", "--format", "json").stdout)
    assert [r["code"] for r in data] == list(catalogue())
    first = next(r for r in data if r["code"] == "TFM105")
    assert set(first) == {"code", "name", "severity", "fix", "enabled", "default", "min_tf", "summary"}
    assert first["enabled"] is True and first["name"] == "repeat-bool"
    assert next(r for r in data if r["code"] == "TFM002")["enabled"] is False
    selected = json.loads(run("rules", "--output-format", "json", "--select", "TFM2").stdout)
    assert {r["code"] for r in selected if r["enabled"]} == {c for c in catalogue() if c.startswith("TFM2")}


# --- 4. --add-noqa ---------------------------------------------------------------------------------

MESSY = (
    "\ufeff# -*- coding: utf-8 -*-\r\n"
    "import tensorflow as tf\r\n"
    "\r\n"
    "ds = tf.data.Dataset.range(3)\r\n"
    "\x0c\r\n"
    "a = ds.repeat(False)   \r\n"  # trailing whitespace stays
    "b = ds.repeat(True)  # noqa: E501 too long\r\n"  # merged
    "c = ds.repeat(False)  # é keep this comment\r\n"
    "d = (ds\r\n"
    "     .repeat(False))\r\n"  # inside brackets: the finding's own line
    "e = ds.repeat(False).map(lambda i: i.shape[0])\r\n"  # two rules on one line
    "f = ds.repeat(False).map(lambda s: '''\r\n"  # the line ends inside a string: left
    "x''')\r\n"
    "g = ds.repeat(False)"  # no newline at the end
)
MESSY_NOQA = (
    "\ufeff# -*- coding: utf-8 -*-\r\n"
    "import tensorflow as tf\r\n"
    "\r\n"
    "ds = tf.data.Dataset.range(3)\r\n"
    "\x0c\r\n"
    "a = ds.repeat(False)  # noqa: TFM105 legacy   \r\n"
    "b = ds.repeat(True)  # noqa: E501, TFM105 too long\r\n"
    "c = ds.repeat(False)  # é keep this comment  # noqa: TFM105 legacy\r\n"
    "d = (ds\r\n"
    "     .repeat(False))  # noqa: TFM105 legacy\r\n"
    "e = ds.repeat(False).map(lambda i: i.shape[0])  # noqa: TFM104, TFM105 legacy\r\n"
    "f = ds.repeat(False).map(lambda s: '''\r\n"
    "x''')\r\n"
    "g = ds.repeat(False)  # noqa: TFM105 legacy"
)


def test_add_noqa_round_trip_keeps_every_other_byte(project):
    path = project / "pkg" / "messy.py"
    path.write_bytes(MESSY.encode("utf-8"))
    result = run("check", "--add-noqa=legacy", "--select", "TFM1", str(path))
    assert result.exit_code == 1  # one finding cannot be silenced, and says so
    assert "Added 6 noqa directives in 1 file." in result.stderr
    assert "1 finding cannot be silenced by a noqa comment" in result.stderr
    assert f"{os.path.join('pkg', 'messy.py')}:12:8: TFM105" in result.stderr
    assert path.read_bytes() == MESSY_NOQA.encode("utf-8")
    # check now reports only what cannot be silenced; TFM002 finds no stale code
    after = json.loads(run("check", "--format", "json", "--select", "TFM1,TFM002", str(path)).stdout)
    assert [(d["rule"], d["line"]) for d in after] == [("TFM105", 12)]
    # a second run changes nothing
    again = run("check", "--add-noqa=legacy", "--select", "TFM1", str(path))
    assert "Added 0 noqa directives in 0 files." in again.stderr
    assert path.read_bytes() == MESSY_NOQA.encode("utf-8")


def test_add_noqa_keeps_a_declared_encoding(project):
    source = "# -*- coding: latin-1 -*-\nimport tensorflow as tf\n# caf\xe9\nx = tf.data.Dataset.range(1).repeat(True)\n"
    path = project / "pkg" / "latin.py"
    path.write_bytes(source.encode("latin-1"))
    result = run("check", "--add-noqa", str(path))
    assert result.exit_code == 0, result.stderr
    assert path.read_bytes() == source.replace("(True)\n", "(True)  # noqa: TFM105\n").encode("latin-1")
    assert run("check", str(path)).exit_code == 0
    # a reason the file's encoding cannot hold is an error, and the file is left as it was
    before = path.read_bytes()
    path.write_bytes(before.replace(b"  # noqa: TFM105", b""))
    bad = run("check", "--add-noqa=\u2713 later", str(path))
    assert bad.exit_code == 2 and "encoding" in bad.stderr


def test_add_noqa_on_the_whole_project_then_check_is_clean(project):
    import shutil

    examples = os.path.join(os.path.dirname(__file__), "..", "examples")
    shutil.copytree(examples, project / "examples")
    originals = {p: p.read_bytes() for p in (project / "examples").iterdir()}
    first = run("check", "--add-noqa", "examples")
    assert first.exit_code == 0 and first.stdout == ""
    check = run("check", "--extend-select", "TFM002", "examples")
    assert check.exit_code == 0, check.stdout
    for path, data in originals.items():  # pure insertions: drop them and the original is back
        import re

        assert re.sub(rb"  # noqa: TFM\d+(, TFM\d+)*", b"", path.read_bytes()) == data
    snapshot = {p: p.read_bytes() for p in originals}
    assert "Added 0 noqa directives" in run("check", "--add-noqa", "examples").stderr
    assert {p: p.read_bytes() for p in originals} == snapshot


def test_add_noqa_in_a_notebook_changes_only_the_cells_sources(project):
    notebook = {
        "cells": [
            {"cell_type": "markdown", "metadata": {}, "source": ["# Title"]},
            {"cell_type": "code", "execution_count": 1, "metadata": {}, "outputs": [],
             "source": ["%matplotlib inline\n", "import tensorflow as tf\n", "ds = tf.data.Dataset.range(3)"]},
            {"cell_type": "code", "execution_count": 2, "metadata": {"x": 1}, "outputs": [],
             "source": ["once = ds.repeat(False)\n", "print(1)"]},
        ],
        "metadata": {}, "nbformat": 4, "nbformat_minor": 5,
    }
    path = project / "nb.ipynb"
    text = json.dumps(notebook, indent=1) + "\n"
    path.write_text(text)
    result = run("check", "--add-noqa", "nb.ipynb")
    assert result.exit_code == 0, result.stderr
    assert "Added 1 noqa directive in 1 file." in result.stderr
    new = path.read_text()
    assert new == text.replace('"once = ds.repeat(False)\\n"', '"once = ds.repeat(False)  # noqa: TFM105\\n"')
    assert run("check", "nb.ipynb").exit_code == 0


def test_add_noqa_refuses_stdin_and_baseline(project):
    assert run("check", "--add-noqa", "-").exit_code == 2
    assert run("check", "--add-noqa", "--baseline", "b.json", "--update-baseline", "pkg").exit_code == 2
    # `--add-noqa PATH` is the flag and a path, never a reason
    result = run("check", "--add-noqa", "pkg")
    assert result.exit_code == 0 and "Added 2 noqa directives in 1 file." in result.stderr
    assert b"# noqa: TFM105\n" in (project / "pkg" / "train.py").read_bytes()


def test_add_noqa_from_the_shell(project):
    result = subprocess.run(
        [sys.executable, "-m", "tfmigrate", "check", "--add-noqa=TF1 code, migrate in Q3", "pkg"],
        capture_output=True, text=True,
    )
    assert result.returncode == 0, result.stderr
    assert "# noqa: TFM104, TFM105 TF1 code, migrate in Q3" in (project / "pkg" / "train.py").read_text()


# --- Ruff's spellings (issue 24 item 11) ---------------------------------------------------------

def test_rule_is_explain_under_ruffs_name():
    explained = runner.invoke(app, ["explain", "TFM105"], env={"COLUMNS": "100"}).stdout
    assert "repeat" in explained
    assert runner.invoke(app, ["rule", "TFM105"], env={"COLUMNS": "100"}).stdout == explained


def test_show_files_lists_what_check_would_visit(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "pyproject.toml").write_text('[tool.tfmigrate]\nextend-exclude = ["legacy"]\n')
    for name in ("b.py", "a.py", "legacy/old.py", "notes.txt"):
        (tmp_path / name).parent.mkdir(exist_ok=True)
        (tmp_path / name).write_text("import tensorflow as tf\nds = tf.data.Dataset.range(3).repeat(False)\n")
    result = runner.invoke(app, ["check", "--show-files", "."])
    assert result.exit_code == 0 and result.stdout.splitlines() == ["a.py", "b.py"]


def test_exit_non_zero_on_fix_fails_a_run_that_fixed_everything(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    source = "import tensorflow as tf\nds = tf.data.Dataset.range(3).repeat(False)\n"
    (tmp_path / "a.py").write_text(source)
    assert runner.invoke(app, ["fix", "--no-cache", "--exit-non-zero-on-fix", "a.py"]).exit_code == 1
    assert (tmp_path / "a.py").read_text() != source
    assert runner.invoke(app, ["fix", "--no-cache", "--exit-non-zero-on-fix", "a.py"]).exit_code == 0  # nothing left to fix
    (tmp_path / "a.py").write_text(source)
    assert runner.invoke(app, ["fix", "--no-cache", "a.py"]).exit_code == 0


def test_show_settings_prints_the_configuration_a_path_takes(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "pyproject.toml").write_text('[tool.tfmigrate]\nignore = ["TFM104"]\nnative = true\n')
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "pyproject.toml").write_text('[tool.tfmigrate]\nmax-file-size = "1MB"\n')
    lines = runner.invoke(app, ["check", "--show-settings", "."]).stdout.splitlines()
    assert lines[:2] == ["Resolved settings for: .", f"Settings path: {tmp_path / 'pyproject.toml'}"]
    assert 'ignore = ["TFM104"]' in lines and "native = true" in lines and "select = null" in lines
    assert lines[-1].startswith("# enabled rules: ") and "TFM104" not in lines[-1] and "TFM105" in lines[-1]
    flagged = runner.invoke(app, ["check", "--show-settings", "--select", "TFM105", "."]).stdout.splitlines()
    assert 'select = ["TFM105"]' in flagged and flagged[-1] == "# enabled rules: TFM105"  # the flags on top
    nested = runner.invoke(app, ["check", "--show-settings", "sub"])
    assert nested.exit_code == 0 and "max-file-size = 1000000" in nested.stdout.splitlines()


REPEATS = ("import tensorflow as tf\nds = tf.data.Dataset.range(3)\nonce = ds.repeat(False)\n"
           "forever = ds.repeat(True)\nkept = ds.repeat(False)  # noqa: TFM105\n")


def test_check_fix_is_tfmigrate_fix(tmp_path, monkeypatch):
    """check --fix writes what fix writes, reports what remains as fix does, and takes fix's options."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "a.py").write_text(REPEATS)
    fixed = runner.invoke(app, ["fix", "--no-cache", "--format", "json", "a.py"])
    written = (tmp_path / "a.py").read_text()
    assert written != REPEATS
    (tmp_path / "a.py").write_text(REPEATS)
    checked = runner.invoke(app, ["check", "--fix", "--no-cache", "--format", "json", "a.py"])
    assert (tmp_path / "a.py").read_text() == written
    assert (checked.exit_code, checked.stdout) == (fixed.exit_code, fixed.stdout) == (1, checked.stdout)
    assert [f["line"] for f in json.loads(checked.stdout)] == [4]  # repeat(True): an unsafe fix
    (tmp_path / "a.py").write_text(REPEATS)
    unsafe = runner.invoke(app, ["check", "--fix", "--unsafe-fixes", "--show-fixes", "--no-cache", "a.py"])
    assert unsafe.exit_code == 0 and "2 × TFM105 (repeat-bool)" in unsafe.stdout
    assert "forever = ds.repeat()\n" in (tmp_path / "a.py").read_text()
    assert runner.invoke(app, ["check", "--fix", "--add-noqa", "a.py"]).exit_code == 2


def test_check_fix_only_reports_nothing_about_what_remains(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "a.py").write_text(REPEATS)
    result = runner.invoke(app, ["check", "--fix-only", "--no-cache", "a.py"])
    assert (result.exit_code, result.stdout) == (0, "Fixed 1 finding in 1 file.\n")  # repeat(True) is left
    assert "once = ds\n" in (tmp_path / "a.py").read_text()
    assert "repeat(True)" not in result.stdout + result.stderr
    again = runner.invoke(app, ["check", "--fix-only", "--no-cache", "--format", "json", "a.py"])
    assert (again.exit_code, json.loads(again.stdout)) == (0, [])
    assert "No fixes applied." in again.stderr
    (tmp_path / "a.py").write_text(REPEATS)
    assert runner.invoke(app, ["check", "--fix-only", "--exit-non-zero-on-fix", "--no-cache", "a.py"]).exit_code == 1
    (tmp_path / "a.py").write_text(REPEATS)
    diff = runner.invoke(app, ["check", "--diff", "--no-cache", "a.py"])  # as Ruff: --diff implies --fix-only
    assert diff.exit_code == 1 and "-once = ds.repeat(False)" in diff.stdout
    assert (tmp_path / "a.py").read_text() == REPEATS


def test_ignore_noqa_reports_and_fixes_what_noqa_silences(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "a.py").write_text(REPEATS)
    (tmp_path / "b.py").write_text("# tfmigrate: noqa\n" + REPEATS)
    lines = lambda *args: [(f["path"], f["line"]) for f in json.loads(
        runner.invoke(app, ["check", "--format", "json", *args, "a.py", "b.py"]).stdout)]  # the cache too
    assert lines() == [("a.py", 3), ("a.py", 4)]
    assert lines("--ignore-noqa") == [("a.py", 3), ("a.py", 4), ("a.py", 5), ("b.py", 4), ("b.py", 5), ("b.py", 6)]
    assert lines() == [("a.py", 3), ("a.py", 4)]
    runner.invoke(app, ["fix", "--ignore-noqa", "--no-cache", "a.py"])
    assert "kept = ds  # noqa: TFM105\n" in (tmp_path / "a.py").read_text()


def test_config_key_value_overrides_every_configuration(tmp_path, monkeypatch):
    """--config "key = value" (a TOML pair) or --config PATH, both in one option as Ruff."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "pyproject.toml").write_text('[tool.tfmigrate]\nignore = ["TFM105"]\n')
    (tmp_path / "a.py").write_text(REPEATS)
    (tmp_path / "other.toml").write_text('select = ["TFM104"]\n')
    settings = lambda *args: runner.invoke(app, ["check", "--show-settings", *args, "."]).stdout.splitlines()
    assert 'ignore = ["TFM105"]' in settings() and "native = false" in settings()
    assert "native = true" in settings("--config", "native = true")
    chosen = settings("--config", "select = ['TFM101']", "--config", "ignore = []")
    assert chosen[-1] == "# enabled rules: TFM101"
    assert settings("--config", "other.toml")[1] == "Settings path: other.toml"
    assert settings("--config", "other.toml", "--config", "native = true")[-1] == "# enabled rules: TFM104"
    result = runner.invoke(app, ["check", "--no-cache", "--format", "json", "--config", "ignore = []", "a.py"])
    assert [f["rule"] for f in json.loads(result.stdout)] == ["TFM105", "TFM105"]
    bad = runner.invoke(app, ["check", "--config", "nativ = true", "."])
    assert bad.exit_code == 2 and "--config 'nativ = true': unknown key 'nativ'" in bad.stderr
    two = runner.invoke(app, ["check", "--config", "other.toml", "--config", "pyproject.toml", "."])
    assert two.exit_code == 2 and "a second configuration file" in two.stderr


def test_extend_builds_on_another_configuration(tmp_path, monkeypatch):
    """`extend`: a path (relative to the file naming it) whose settings are the base; the extending
    file overrides them, its extend-select and extend-exclude add to theirs; cycles are an error."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "shared").mkdir()
    (tmp_path / "shared" / "base.toml").write_text('select = ["TFM1"]\nnative = true\nextend-exclude = ["gen"]\n'
                                                   'extend = "root.toml"\n')
    (tmp_path / "shared" / "root.toml").write_text('target-version = "2.16"\n')
    (tmp_path / "pyproject.toml").write_text('[tool.tfmigrate]\nextend = "shared/base.toml"\nignore = ["TFM105"]\n'
                                             'extend-exclude = ["legacy"]\n')
    lines = runner.invoke(app, ["check", "--show-settings", "."]).stdout.splitlines()
    assert lines[2] == (f"Extends: {tmp_path / 'shared' / 'base.toml'} -> {tmp_path / 'shared' / 'root.toml'} "
                        "(each extends the next; this file's settings override theirs)")
    assert {'select = ["TFM1"]', 'ignore = ["TFM105"]', "native = true", 'target-version = "2.16"',
            'extend-exclude = ["gen", "legacy"]'} <= set(lines)
    assert "TFM105" not in lines[-1] and "TFM104" in lines[-1] and "TFM201" not in lines[-1]
    (tmp_path / "shared" / "root.toml").write_text('extend = "../pyproject.toml"\n')
    cycle = runner.invoke(app, ["check", "."])
    assert cycle.exit_code == 2 and "makes a cycle" in cycle.stderr and "root.toml" in cycle.stderr
    (tmp_path / "shared" / "root.toml").write_text('extend = "missing.toml"\n')
    missing = runner.invoke(app, ["check", "."])
    assert missing.exit_code == 2 and "no such configuration file" in missing.stderr


def test_help_says_which_options_are_aliases():
    check = runner.invoke(app, ["check", "--help"], env={"COLUMNS": "200"}).stdout
    assert "Alias of `tfmigrate fix`" in check and "--fix-only" in check and "--ignore-noqa" in check
    assert "KEY=VALUE" in check
    assert "also `tfmigrate rule CODE`" in runner.invoke(app, ["--help"], env={"COLUMNS": "200"}).stdout


def test_watch_checks_again_when_a_file_changes_until_ctrl_c(tmp_path):
    import signal
    import threading
    import time

    (tmp_path / "a.py").write_text("import tensorflow as tf\nds = tf.data.Dataset.range(3)\n")
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    env = {**os.environ, "PYTHONPATH": root, "PYTHONUNBUFFERED": "1", "NO_COLOR": "1"}
    # Ctrl-C as a terminal delivers it: a child inherits an ignored SIGINT (and Python then keeps
    # ignoring it), and a test that ran earlier in this pytest process may have left it ignored.
    process = subprocess.Popen([sys.executable, "-m", "tfmigrate", "check", "--watch", "--no-cache", "--format", "concise"],
                               cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                               preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    lines = []
    reader = threading.Thread(target=lambda: lines.extend(iter(process.stdout.readline, "")), daemon=True)
    reader.start()

    def wait_for(text: str, count: int) -> None:
        deadline = time.monotonic() + 60
        while sum(text in line for line in lines) < count:
            assert time.monotonic() < deadline and process.poll() is None, "".join(lines)
            time.sleep(0.1)

    try:
        wait_for("Watching for file changes", 1)
        assert not any("TFM105" in line for line in lines)
        with open(tmp_path / "a.py", "a") as handle:
            handle.write("once = ds.repeat(False)\n")
        wait_for("Watching for file changes", 2)
        assert any(line.startswith("a.py:3:11: TFM105") for line in lines), "".join(lines)
        (tmp_path / "b.py").write_text("import tensorflow as tf\nforever = tf.data.Dataset.range(3).repeat(True)\n")
        wait_for("Watching for file changes", 3)
        assert any(line.startswith("b.py:2:36: TFM105") for line in lines), "".join(lines)
        process.send_signal(signal.SIGINT)
        assert process.wait(timeout=60) == 0, "".join(lines)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    reader.join(timeout=10)
    assert "File change detected" in "".join(lines)
    refused = runner.invoke(app, ["check", "--watch", "--fix", str(tmp_path)])
    assert refused.exit_code == 2 and "--watch" in refused.stderr
