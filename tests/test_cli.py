"""The command line as a user meets it: exit codes, formats, selection, fix, diff, bad input."""
import json
import os
import stat
import subprocess
import sys

import pytest
from typer.testing import CliRunner

from tfmigrate.frontends.cli import app

runner = CliRunner()

TF1 = b"""import tensorflow as tf

ds = tf.data.Dataset.range(3)
once = (ds.shuffle(3)
        .repeat(False))  # keep me
forever = ds.repeat(True)
"""


def run(*args, cwd=None):
    return runner.invoke(app, list(args), catch_exceptions=False)


@pytest.fixture
def project(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "train.py").write_bytes(TF1)
    (tmp_path / "pkg" / "clean.py").write_bytes(b"import tensorflow as tf\nx = tf.constant(1)\n")
    return tmp_path



def test_check_takes_its_flags_defaults_without_typer():
    """A plain `check` runs commands.check without typer: its defaults must be the flags' defaults."""
    import inspect

    from tfmigrate.frontends import commands, flags as typer_flags

    flags = inspect.signature(typer_flags.check).parameters
    plain = {name: p for name, p in inspect.signature(commands.check).parameters.items() if name != "memo"}
    assert list(flags) == list(plain)
    assert {name: p.default.default for name, p in flags.items()} == {name: p.default for name, p in plain.items()}


@pytest.mark.parametrize("args, read", [
    (["check"], ([], "rich")), (["check", "a", "b/c.py", "--format", "json"], (["a", "b/c.py"], "json")),
    (["check", "--output-format=sarif", "x=y"], (["x=y"], "sarif")),
    (["check", "--format", "JSON"], None), (["check", "--format"], None), (["check", "-"], None),
    (["check", "--format", "json", "--format", "json"], None), (["check", "--", "a"], None),
    (["check", "--no-cache"], None), (["check", "--help"], None), (["fix", "a"], None), ([], None),
])
def test_plain_check_command_lines(args, read):
    from tfmigrate.frontends import cli

    found = cli._plain_check(args)
    assert found == read


def test_check_exit_codes(project):
    assert run("check", "pkg/clean.py").exit_code == 0
    assert run("check").exit_code == 1
    assert run("check", "--exit-zero").exit_code == 0
    assert run("check", "--select", "TFM9").exit_code == 2
    assert run("check", "does/not/exist.py").exit_code == 2
    assert run("check", "--format", "yaml").exit_code == 2


def test_json_contract(project):
    result = run("check", "--format", "json")
    data = json.loads(result.stdout)
    assert [(d["rule"], d["line"], d["column"]) for d in data] == [("TFM105", 5, 10), ("TFM105", 6, 14)]
    first = data[0]
    assert set(first) == {"rule", "name", "path", "line", "column", "end_line", "end_column", "severity", "message", "fix", "kind"}
    assert first["kind"] == "breaks"
    assert first["path"] == os.path.join("pkg", "train.py")
    assert (first["end_line"], first["end_column"]) == (5, 16)
    assert first["fix"] == {"applicability": "safe", "description": "Remove `.repeat(False)`"}
    assert data[1]["fix"]["applicability"] == "unsafe"


def test_select_and_ignore_take_prefixes(project):
    assert json.loads(run("check", "--format", "json", "--select", "TFM1").stdout)
    assert json.loads(run("check", "--format", "json", "--ignore", "TFM10").stdout) == []
    assert json.loads(run("check", "--format", "json", "--select", "TFM104,TFM001").stdout) == []


def test_parse_error_is_reported_and_the_run_goes_on(project):
    (project / "pkg" / "old.py").write_bytes(b"import tensorflow as tf\nprint 'hello'\n")
    (project / "pkg" / "junk.py").write_bytes(b"\x00\x01tensorflow\xff\xfe")
    data = json.loads(run("check", "--format", "json").stdout)
    rules = {(d["path"], d["rule"]) for d in data}
    assert (os.path.join("pkg", "old.py"), "TFM001") in rules
    assert (os.path.join("pkg", "junk.py"), "TFM001") in rules
    assert (os.path.join("pkg", "train.py"), "TFM105") in rules
    old = next(d for d in data if d["path"].endswith("old.py"))
    assert old["line"] == 2 and "print" in old["message"]


@pytest.mark.parametrize("mode", ["check", "fix"])
@pytest.mark.parametrize(
    "selection",
    [("--select", "TFM2"), ("--ignore", "TFM001"), ("--config", "pfi.toml"), ("--config", "noqa")],
)
def test_a_file_that_does_not_parse_is_reported_whatever_the_selection(project, mode, selection):
    """As Ruff's syntax errors: a file that could not be checked is never a green build."""
    (project / "pfi.toml").write_text('per-file-ignores = { "pkg/*" = ["TFM001", "TFM1"] }\n')
    old = b"import tensorflow as tf  # noqa\nprint 'hello'  # noqa: TFM001\n"
    if selection[1] == "noqa":
        old, selection = b"# tfmigrate: noqa\n" + old, ()
    (project / "pkg" / "old.py").write_bytes(old)
    result = run(mode, "pkg/old.py", "pkg/clean.py", "--format", "json", *selection)
    assert result.exit_code == 1, result.output
    assert [(d["rule"], d["line"]) for d in json.loads(result.stdout)] == [("TFM001", old.count(b"\n"))]
    assert (project / "pkg" / "old.py").read_bytes() == old


def test_skips_virtualenvs_build_and_caches(project):
    for folder in (".venv/lib", "build", "__pycache__", ".git", "env_custom"):
        (project / folder).mkdir(parents=True)
        (project / folder / "x.py").write_bytes(TF1)
    (project / "env_custom" / "pyvenv.cfg").write_text("home = /usr\n")
    data = json.loads(run("check", "--format", "json").stdout)
    assert {d["path"] for d in data} == {os.path.join("pkg", "train.py")}


def test_rich_report_is_plain_when_piped(project):
    out = run("check").stdout
    assert "\x1b[" not in out
    assert "pkg/train.py:5:10: TFM105 repeat-bool" in out.replace(os.sep, "/")
    assert "^^^^^^" in out
    assert "fix (safe): Remove `.repeat(False)`" in out
    assert "Findings by rule" in out
    assert "1 fixable with `tfmigrate fix`. 1 more with `tfmigrate fix --unsafe-fixes`." in out


def test_fix_applies_safe_fixes_only_and_keeps_other_bytes(project):
    path = project / "pkg" / "train.py"
    os.chmod(path, 0o755)
    result = run("fix")
    assert result.exit_code == 1  # the unsafe finding remains
    assert path.read_bytes() == TF1.replace(b"\n        .repeat(False))", b")")
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o755
    assert "Fixed 1 finding in 1 file" in result.stdout
    assert run("fix").exit_code == 1 and path.read_bytes() == TF1.replace(b"\n        .repeat(False))", b")")
    assert run("fix", "--unsafe-fixes").exit_code == 0
    assert b"ds.repeat()" in path.read_bytes()
    assert not [p for p in os.listdir(path.parent) if p.endswith(".tfmigrate")]


def test_fix_diff_writes_nothing(project):
    result = run("fix", "--diff", "--unsafe-fixes")
    assert result.exit_code == 1
    assert "-forever = ds.repeat(True)" in result.stdout and "+forever = ds.repeat()" in result.stdout
    assert (project / "pkg" / "train.py").read_bytes() == TF1
    assert run("fix", "--diff", "pkg/clean.py").exit_code == 0


def test_fix_preserves_crlf_bom_and_latin1(project):
    crlf = b"\xef\xbb\xbfimport tensorflow as tf\r\n\r\nds = tf.data.Dataset.range(3)  # \xc3\xa9\r\nds = ds.repeat(False)\r\n"
    latin = b"# -*- coding: latin-1 -*-\nimport tensorflow as tf\n# caf\xe9\nds = tf.data.Dataset.range(3).repeat(False)\n"
    (project / "crlf.py").write_bytes(crlf)
    (project / "latin.py").write_bytes(latin)
    run("fix", "crlf.py", "latin.py")
    assert (project / "crlf.py").read_bytes() == crlf.replace(b"ds.repeat(False)", b"ds")
    assert (project / "latin.py").read_bytes() == latin.replace(b".repeat(False)", b"")


def test_rules_and_explain(project):
    out = run("rules").stdout
    for code in ("TFM001", "TFM101", "TFM102", "TFM103", "TFM104", "TFM105"):
        assert code in out
    explained = run("explain", "tfm104")
    assert explained.exit_code == 0
    assert "Before" in explained.stdout and "tf.shape(img)[-1]" in explained.stdout
    assert run("explain", "TFM999").exit_code == 2


def test_module_entry_point_and_version(project):
    result = subprocess.run([sys.executable, "-m", "tfmigrate", "--version"], capture_output=True, text=True)
    assert result.returncode == 0 and result.stdout.startswith("tfmigrate ")
    result = subprocess.run([sys.executable, "-m", "tfmigrate", "check", "pkg"], capture_output=True, text=True,
                            env=dict(os.environ, NO_COLOR="1"))
    assert result.returncode == 1 and "TFM105" in result.stdout and "\x1b[" not in result.stdout


def test_jobs_is_validated_and_capped(project, monkeypatch):
    """A negative --jobs is a usage error; 1000 must not start 1000 processes."""
    from tfmigrate.frontends import commands
    from tfmigrate.workspace import runner as runner_module

    result = run("check", "--jobs", "-1")
    assert result.exit_code == 2 and "--jobs -1: expected a number of worker processes" in result.stderr
    asked = []
    real = runner_module.run
    monkeypatch.setattr(runner_module, "run", lambda tasks, jobs, **kw: asked.append(jobs) or real(tasks, jobs, **kw))
    monkeypatch.setattr(commands, "_cores", lambda: 2)
    for jobs in ("1000", "0", "1"):
        assert run("check", "--jobs", jobs, "--no-cache").exit_code == 1
    assert asked == [2, 2, 1]
    for name in range(6):
        (project / "pkg" / f"m{name}.py").write_bytes(TF1)
    run("check", "pkg/m0.py", "pkg/m1.py", "pkg/m2.py", "--jobs", "1000", "--no-cache")
    assert asked[-1] == 2
    monkeypatch.setattr(commands, "_cores", lambda: 64)
    run("check", "pkg/m0.py", "pkg/m1.py", "pkg/m2.py", "--jobs", "1000", "--no-cache")
    assert asked[-1] == 3  # no more workers than files


ESTIMATOR = b"""import tensorflow as tf


def model_fn(features, labels, mode):
    return tf.estimator.EstimatorSpec(mode, loss=tf.reduce_sum(features))


est = tf.estimator.Estimator(model_fn)
"""


def test_a_program_built_on_an_estimator_is_named_once_at_the_top_and_in_the_summary(project):
    """TF 2.21 has no tf.estimator: the report says which files cannot run at all, once each,
    before the findings and in the closing line (check and fix); a file whose only TFM213 use is
    a constant with a fix (`ModeKeys.PREDICT` -> "infer") is not among them."""
    (project / "pkg" / "est.py").write_bytes(ESTIMATOR)
    (project / "pkg" / "keys.py").write_bytes(b"import tensorflow as tf\nmode = tf.estimator.ModeKeys.PREDICT\n")
    for args in (("check", "--no-cache", "pkg"), ("fix", "--no-cache", "pkg")):
        out = run(*args).output
        line = ("1 file uses `tf.estimator` (TFM213), removed in TensorFlow 2.16: it cannot run on "
                "TensorFlow 2.21 until its Estimator is replaced (pkg/est.py).")
        assert out.startswith(line), out[:300]
        assert out.rstrip().endswith(line), out[-400:]
        assert "keys.py" not in line
    assert (project / "pkg" / "keys.py").read_text() == 'import tensorflow as tf\nmode = "infer"\n'
    for form in ("json", "junit", "sarif", "github", "concise"):  # the machine formats carry findings only
        out = run("check", "--no-cache", "--format", form, "pkg").output
        assert "TFM213" in out and "cannot run on" not in out.split("\n")[0], (form, out[:300])


def test_check_unsafe_fixes_names_what_holds_the_module_after_the_unsafe_fixes(tmp_path, monkeypatch):
    """As Ruff's `check --unsafe-fixes`: `check --native --unsafe-fixes` says what `fix --native
    --unsafe-fixes` would meet (here nothing: the graph seed's draws are written out), not the advice
    to give the flag; cached apart from a plain check (the same file, the other answer)."""
    (tmp_path / "s.py").write_text(
        "import tensorflow as tf\n\ntf.set_random_seed(1)\nx = tf.placeholder(tf.float32, [None, 2])\n"
        "y = tf.layers.dense(x, 1)\nwith tf.Session() as sess:\n    sess.run(tf.global_variables_initializer())\n"
        "    print(sess.run(y, {x: [[1.0, 2.0]]}))\n")
    monkeypatch.chdir(tmp_path)

    def blockers(*flags):
        result = runner.invoke(app, ["check", "--native", *flags, "--select", "TFM216", "--format", "json", "s.py"],
                               catch_exceptions=False)
        return [d["message"] for d in json.loads(result.stdout)]

    assert any("a graph-level seed" in m for m in blockers())
    assert blockers("--unsafe-fixes") == []
    assert any("a graph-level seed" in m for m in blockers())  # (the plain check's cache entry, not the unsafe one)
