"""Configuration as Ruff users expect it: found by walking up, flags on top, every mistake an
exit 2 that names the file and the key; noqa suppression and TFM002; baselines."""
import json
import os

import pytest
from typer.testing import CliRunner

from tfmigrate.frontends.cli import app

runner = CliRunner()
TF1 = "import tensorflow as tf\nds = tf.data.Dataset.range(3)\nds = ds.repeat(False)\n"


def run(*args):
    return runner.invoke(app, list(args), catch_exceptions=False)


def codes(*args):
    return [(d["path"].replace(os.sep, "/"), d["rule"]) for d in json.loads(run("check", "--format", "json", *args).stdout)]


@pytest.fixture
def repo(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "a.py").write_text(TF1)
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_a.py").write_text(TF1)
    return tmp_path


def test_pyproject_table_is_found_walking_up(repo, monkeypatch):
    (repo / "pyproject.toml").write_text('[tool.tfmigrate]\nignore = ["TFM105"]\n')
    monkeypatch.chdir(repo / "src")
    assert codes() == []
    assert codes("--select", "TFM105") == [("a.py", "TFM105")]


def test_tfmigrate_toml_and_per_file_ignores_and_excludes(repo):
    (repo / "tfmigrate.toml").write_text('per-file-ignores = { "tests/*" = ["TFM1"] }\n')
    assert codes() == [("src/a.py", "TFM105")]
    (repo / "tfmigrate.toml").write_text('extend-exclude = ["tests"]\n')
    assert codes() == [("src/a.py", "TFM105")]
    assert codes("tests/test_a.py") == [("tests/test_a.py", "TFM105")]  # named files are always checked


def test_config_flag_and_extend_select(repo):
    (repo / "other.toml").write_text('select = ["TFM104"]\nextend-select = ["TFM105"]\n')
    assert len(codes("--config", "other.toml")) == 2
    assert codes("--config", "other.toml", "--ignore", "TFM105") == []


def test_target_version_skips_rules_whose_fact_does_not_hold(repo):
    model = "import tensorflow as tf\nclass M(tf.keras.Model):\n    def __init__(self):\n        super().__init__()\n        self.v = tf.Variable(1.0)\n"
    (repo / "src" / "m.py").write_text(model)
    assert ("src/m.py", "TFM102") in codes("src/m.py")
    assert codes("src/m.py", "--target-version", "2.15") == []  # Keras 2 tracked tf.Variable


@pytest.mark.parametrize(
    "content, expected",
    [
        ('[tool.tfmigrate]\nselec = ["TFM1"]\n', "unknown key 'selec'"),
        ('[tool.tfmigrate]\nselect = ["TFM9"]\n', "unknown rule code or prefix: TFM9"),
        ('[tool.tfmigrate]\nselect = "TFM1"\n', "select: expected a list of strings"),
        ('[tool.tfmigrate]\nper-file-ignores = { "tests/[a" = ["TFM1"] }\n', "bad glob"),
        ('[tool.tfmigrate]\nrespect-gitignore = "yes"\n', "respect-gitignore: expected true or false"),
        ('[tool.tfmigrate]\ntarget-version = "1.15"\n', "target-version: expected a TensorFlow 2 version"),
        ("[tool.tfmigrate\n", "not valid TOML"),
        ('[tool.tfmigrate]\ntensorflow-aliases = ["a.tf"]\n', "tensorflow-aliases: expected a table"),
        ('[tool.tfmigrate]\ntensorflow-aliases = { "a.tf" = "numpy" }\n', "expected a tensorflow or keras module path"),
        ('[tool.tfmigrate]\ntensorflow-aliases = { "tf" = "tensorflow" }\n', "is not a dotted module.name path"),
        ('tool = 1\n', "`tool` must be a table"),
        ('[tool]\ntfmigrate = "TFM1"\n', "[tool.tfmigrate] must be a table"),
        ('[tool]\ntfmigrate = [1]\n', "[tool.tfmigrate] must be a table"),
        ('[tool.tfmigrate]\nper-file-ignores = { "tests/*" = 1 }\n', "per-file-ignores.'tests/*': expected a list of strings"),
        ('[tool.tfmigrate]\nexclude = [1]\n', "exclude: expected a list of strings"),
        ('[tool.tfmigrate]\nselect = ["TFM1"] # caf\xe9\n'.encode("latin-1"), "not valid TOML: not UTF-8 text"),
    ],
)
def test_bad_configuration_is_exit_2_naming_file_and_key(repo, content, expected):
    """One line `error: FILE: KEY: what is wrong`, never a traceback."""
    if isinstance(content, bytes):
        (repo / "pyproject.toml").write_bytes(content)
    else:
        (repo / "pyproject.toml").write_text(content)
    result = runner.invoke(app, ["check"])
    assert result.exit_code == 2, result.exception  # an exception escaping the command would be exit 1
    assert "pyproject.toml" in result.stderr and expected in result.stderr
    assert result.stderr.startswith("error: ") and result.stderr.count("\n") == 1


SHIM = "import tensorflow as tf\n\ntfv1 = tf.compat.v1\n"
USES_SHIM = "from ..compat import tfv1 as tf\nfrom pkg.compat import tfv1\n\nsess = tf.Session()\nx = tfv1.placeholder(tf.float32)\n"


def test_tensorflow_aliases_follow_a_projects_own_reexport(repo):
    """`from ..compat import tfv1 as tf` (tensorpack's shim): with the re-export configured, the
    TF1 API spelled through it is found, relative or absolute; the setting is in the cache key."""
    (repo / "pkg" / "compat").mkdir(parents=True)
    (repo / "pkg" / "models").mkdir()
    for init in ("pkg", "pkg/models"):
        (repo / init / "__init__.py").write_text("")
    (repo / "pkg" / "compat" / "__init__.py").write_text(SHIM)
    (repo / "pkg" / "models" / "net.py").write_text(USES_SHIM)
    assert codes("pkg") == []  # nothing there names tensorflow: skipped
    (repo / "pyproject.toml").write_text(
        '[tool.tfmigrate]\ntensorflow-aliases = { "pkg.compat.tfv1" = "tensorflow.compat.v1" }\n')
    assert codes("pkg") == [("pkg/models/net.py", "TFM201"), ("pkg/models/net.py", "TFM202")]


def test_gitignore_is_respected_unless_disabled(repo):
    import subprocess

    subprocess.run(["git", "init", "-q"], cwd=repo, check=True)
    (repo / ".gitignore").write_text("tests/\n")
    assert codes() == [("src/a.py", "TFM105")]
    (repo / "pyproject.toml").write_text("[tool.tfmigrate]\nrespect-gitignore = false\n")
    assert len(codes()) == 2


def test_git_is_asked_only_where_it_could_find_a_repository(tmp_path, monkeypatch):
    import subprocess

    from tfmigrate.workspace import gitignore as plan

    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("GIT_DIR", raising=False)
    (tmp_path / "x.py").write_text("")
    if plan.in_git_checkout():
        pytest.skip("the temporary folder is inside a git checkout")
    monkeypatch.setattr(subprocess, "run", lambda *a, **k: pytest.fail("git was started"))
    assert plan.gitignored(["x.py"]) == set()
    monkeypatch.undo()
    monkeypatch.chdir(tmp_path)
    (tmp_path / ".gitignore").write_text("x.py\n")
    subprocess.run(["git", "init", "-q"], check=True)
    (tmp_path / "sub").mkdir()
    monkeypatch.chdir(tmp_path / "sub")
    assert plan.in_git_checkout() and plan.gitignored(["../x.py"]) == {"../x.py"}


def test_noqa_suppresses_and_unused_noqa_is_opt_in(repo):
    (repo / "src" / "a.py").write_text(
        TF1.replace("ds.repeat(False)\n", "ds.repeat(False)  # noqa: TFM105\n") + "x = ds  # noqa: TFM104\n"
    )
    assert codes("src") == []
    assert codes("src", "--extend-select", "TFM002") == [("src/a.py", "TFM002")]
    run("fix", "src", "--extend-select", "TFM002")
    assert (repo / "src" / "a.py").read_text().endswith("x = ds\n")
    (repo / "src" / "b.py").write_text("# tfmigrate: noqa\n" + TF1)
    assert codes("src/b.py") == []


def test_noqa_in_any_case_and_a_file_level_noqa_with_codes(repo):
    """`# NOQA` works as `# noqa`; `# tfmigrate: noqa: TFM105` turns off TFM105 only, for the
    whole file (as Ruff's `# ruff: noqa: F401`), and a bare one every rule."""
    shape = "def f(x):\n    return x.shape[0]\nds = ds.map(f)\n"
    (repo / "src" / "a.py").write_text(TF1.replace("ds.repeat(False)\n", "ds.repeat(False)  # NOQA:tfm105\n"))
    (repo / "src" / "b.py").write_text(TF1.replace("ds.repeat(False)\n", "ds.repeat(False)  # NOQA\n"))
    (repo / "src" / "c.py").write_text("# tfmigrate: noqa: TFM105\n" + TF1 + shape + "again = ds.repeat(False)\n")
    (repo / "src" / "d.py").write_text("# TFMIGRATE: NOQA\n" + TF1 + shape)
    (repo / "src" / "e.py").write_text("# tfmigrate: noqa: TFM9999\n" + TF1)
    assert codes("src", "--select", "TFM1") == [("src/c.py", "TFM104"), ("src/e.py", "TFM105")]


def test_baseline_records_then_reports_only_new_findings_across_line_shifts(repo):
    first = run("check", "--baseline", "tfm-baseline.json", "--update-baseline")
    assert first.exit_code == 0 and "Recorded 2 findings" in first.stdout
    assert run("check", "--baseline", "tfm-baseline.json").exit_code == 0
    (repo / "src" / "a.py").write_text("# a new comment shifts every line\n\n" + TF1)
    assert run("check", "--baseline", "tfm-baseline.json").exit_code == 0
    (repo / "src" / "a.py").write_text(TF1 + "again = ds.repeat(True)\n")
    result = run("check", "--baseline", "tfm-baseline.json", "--format", "json")
    assert result.exit_code == 1
    assert [d["line"] for d in json.loads(result.stdout)] == [4]


def test_a_missing_baseline_is_an_error_and_recording_is_explicit(repo):
    """A typo'd --baseline path in CI must fail the build, not record a baseline that hides all."""
    result = run("check", "--baseline", "tfm-baselin.json")
    assert result.exit_code == 2 and not (repo / "tfm-baselin.json").exists()
    assert "tfm-baselin.json: no such baseline file" in result.stderr and "--update-baseline" in result.stderr
    assert run("check", "--update-baseline").exit_code == 2
    result = run("check", "--baseline", "no/such/folder/b.json", "--update-baseline")
    assert result.exit_code == 2 and "no such folder" in result.stderr
    result = run("check", "--baseline", "src")
    assert result.exit_code == 2 and "src: cannot read the baseline: Is a directory" in result.stderr
    assert run("check", "--baseline", "src", "--update-baseline").exit_code == 2
    (repo / "bad.json").write_text("[1, 2]")
    result = run("check", "--baseline", "bad.json")
    assert result.exit_code == 2 and "not a tfmigrate baseline" in result.stderr
    assert run("check", "--baseline", "bad.json", "--update-baseline").exit_code == 0  # replaced
    assert run("check", "--baseline", "bad.json").exit_code == 0
    (repo / "src" / "a.py").write_text("")  # both findings fixed: the baseline can shrink
    assert "--update-baseline" in run("check", "--baseline", "bad.json").stdout


def test_each_file_takes_the_nearest_configuration_whatever_the_order(repo):
    """As Ruff: `check src tests` and `check tests src` agree; a nested config's globs are
    relative to its folder, its excludes apply while walking, and its unsafe-fixes to its files."""
    (repo / "pyproject.toml").write_text('[tool.tfmigrate]\nextend-select = ["TFM002"]\n')
    (repo / "tests" / "tfmigrate.toml").write_text(
        'ignore = ["TFM105"]\nextend-exclude = ["fixtures"]\nunsafe-fixes = true\n'
        'per-file-ignores = { "unit/*" = ["TFM1"] }\n'
    )
    (repo / "tests" / "fixtures").mkdir()
    (repo / "tests" / "fixtures" / "f.py").write_text(TF1 + "x = 1  # noqa: TFM105\n")
    (repo / "tests" / "unit").mkdir()
    (repo / "tests" / "unit" / "u.py").write_text(TF1.replace("ds.repeat(False)", "ds.repeat(True)"))
    (repo / "tests" / "test_a.py").write_text(TF1 + "x = 1  # noqa: TFM105\n")
    (repo / "src" / "c.py").write_text("import tensorflow as tf\nx = 1  # noqa: TFM105\n")
    # the nearest file is taken whole (no merging with the one above it, as Ruff without `extend`)
    expected = [("src/a.py", "TFM105"), ("src/c.py", "TFM002")]
    assert codes("src", "tests") == expected
    assert codes("tests", "src") == expected
    assert codes() == expected
    run("fix", "tests", "src", "--select", "TFM105")
    assert "repeat(True)" in (repo / "tests" / "unit" / "u.py").read_text()  # per-file ignored
    assert "repeat(False)" not in (repo / "src" / "a.py").read_text()
    (repo / "tests" / "test_b.py").write_text(TF1.replace("ds.repeat(False)", "ds.repeat(True)"))
    (repo / "src" / "b.py").write_text(TF1.replace("ds.repeat(False)", "ds.repeat(True)"))
    run("fix", "src", "tests", "--select", "TFM105")
    assert "ds.repeat()" in (repo / "tests" / "test_b.py").read_text()  # unsafe-fixes = true there
    assert "ds.repeat(True)" in (repo / "src" / "b.py").read_text()  # and not here


def test_a_wrong_nested_configuration_stops_the_run(repo):
    (repo / "tests" / "tfmigrate.toml").write_text('ignore = "TFM105"\n')
    result = run("check", "src", "tests")
    assert result.exit_code == 2 and "tfmigrate.toml: ignore: expected a list of strings" in result.stderr


def test_force_exclude_applies_excludes_to_files_named_on_the_command_line(repo):
    """pre-commit names every file: without force-exclude an excluded folder is checked anyway."""
    (repo / "pyproject.toml").write_text('[tool.tfmigrate]\nextend-exclude = ["tests"]\n')
    assert codes("src/a.py", "tests/test_a.py") == [("src/a.py", "TFM105"), ("tests/test_a.py", "TFM105")]
    assert codes("src/a.py", "tests/test_a.py", "--force-exclude") == [("src/a.py", "TFM105")]
    assert run("check", "tests/test_a.py", "--force-exclude").exit_code == 0
    (repo / "pyproject.toml").write_text('[tool.tfmigrate]\nextend-exclude = ["tests"]\nforce-exclude = true\n')
    assert codes("src/a.py", "tests/test_a.py") == [("src/a.py", "TFM105")]
    assert len(codes("src/a.py", "tests/test_a.py", "--no-force-exclude")) == 2
    run("fix", "tests/test_a.py")
    assert "repeat(False)" in (repo / "tests" / "test_a.py").read_text()


def test_the_compiled_exclude_globs_answer_as_each_glob_does():
    """Settings.excluded matches all its globs with two compiled regexes (config._matcher): the
    same answer as `_match` glob by glob, on paths and glob sets made at random."""
    import random

    from tfmigrate.workspace.config import DEFAULT_EXCLUDE, _match, _matcher

    globs = list(DEFAULT_EXCLUDE) + ["*.py", "tests/", "a/b", "a/*/c", "**/gen_*", "[ab]*", "x?z", "build/",
                                     "*_pb2.py", "docs/*", "a/b/", "[!a]*"]
    parts = ["a", "b", "c", "build", ".git", "x1z", "gen_1", "foo.py", "y_pb2.py", "tests", "docs", "venv", "ab", "ba"]
    rng = random.Random(23)
    for _ in range(5000):
        path = "/".join(rng.choice(parts) for _ in range(rng.randint(1, 5)))
        chosen = tuple(rng.sample(globs, rng.randint(0, 6)))
        whole, part = _matcher(chosen)
        compiled = bool(whole(path)) or (part is not None and any(part(p) for p in path.split("/")))
        assert compiled == any(_match(g, path) for g in chosen), (path, chosen)


def test_a_wrong_configuration_of_a_folder_that_is_only_context_does_not_stop_the_run(repo):
    """`check src/a.py` reads the rest of its project for cross-file facts only: a broken config
    in a folder the user did not name is skipped there (as Ruff never reads it), and reported as
    soon as that folder is checked."""
    (repo / "setup.py").write_text("")  # the project: its files are src/a.py's context
    (repo / "tests" / "tfmigrate.toml").write_text('ignore = "TFM105"\n')
    result = run("check", "src/a.py", "--format", "json")
    assert result.exit_code == 1 and [d["rule"] for d in json.loads(result.stdout)] == ["TFM105"]
    assert run("check", "tests/test_a.py").exit_code == 2
