"""The hooks in .pre-commit-hooks.yaml, run by the real pre-commit: it clones a git repository of
this working tree (uncommitted changes included), pip-installs it into its own virtualenv (from
PyPI: needs the network) and runs `tfmigrate` and `tfmigrate-fix` on a throwaway repository; and
the README's snippet as written, against a clone tagged with the release tag its `rev` names."""
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PRE_COMMIT = Path(sys.executable).parent / "pre-commit"
TF1 = "import tensorflow as tf\n\nds = tf.data.Dataset.range(3)\nonce = ds.shuffle(3).repeat(False)\n"
NOTEBOOK = {
    "cells": [
        {"cell_type": "code", "execution_count": None, "metadata": {}, "outputs": [], "source": ["import tensorflow as tf\n"]},
        {"cell_type": "code", "execution_count": None, "metadata": {}, "outputs": [],
         "source": ["%matplotlib inline\n", "d = tf.data.Dataset.range(2).repeat(False)\n"]},
    ],
    "metadata": {},
    "nbformat": 4,
    "nbformat_minor": 5,
}

pytestmark = pytest.mark.skipif(not PRE_COMMIT.exists() or not shutil.which("git"), reason="needs pre-commit and git")


def git(cwd: Path, *args: str) -> str:
    return subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@example.invalid", "-c", "commit.gpgsign=false", *args],
        cwd=cwd, check=True, capture_output=True, text=True,
    ).stdout.strip()


def hook_repository(where: Path) -> str:
    """A git repository holding this working tree's package files, committed; returns HEAD."""
    where.mkdir()
    for name in ("pyproject.toml", "README.md", "rules.yaml", ".pre-commit-hooks.yaml"):
        shutil.copy2(ROOT / name, where / name)
    shutil.copytree(ROOT / "tfmigrate", where / "tfmigrate", ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    git(where, "init", "-q")
    git(where, "add", "-A")
    git(where, "commit", "-q", "-m", "tfmigrate under test")
    return git(where, "rev-parse", "HEAD")


def test_hooks_keep_excludes_for_the_files_pre_commit_names(tmp_path):
    """pre-commit runs `entry args FILE...` with every staged file named: an excluded folder must
    stay excluded (no network needed: the entry is run as pre-commit runs it)."""
    import shlex

    import yaml

    (tmp_path / "vendor").mkdir()
    (tmp_path / "vendor" / "old.py").write_text(TF1)
    (tmp_path / "pyproject.toml").write_text('[tool.tfmigrate]\nextend-exclude = ["vendor"]\n')
    for hook in yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text()):
        command = shlex.split(hook["entry"]) + hook["args"] + ["vendor/old.py"]
        result = subprocess.run([sys.executable, "-m", "tfmigrate", *command[1:]], cwd=tmp_path,
                                capture_output=True, text=True, timeout=120)
        assert result.returncode == 0, (hook["id"], result.stdout, result.stderr)
    assert (tmp_path / "vendor" / "old.py").read_text() == TF1


def test_pre_commit_hooks_check_then_fix(tmp_path):
    rev = hook_repository(tmp_path / "hooks")
    project = tmp_path / "project"
    project.mkdir()
    (project / "train.py").write_text(TF1)
    (project / "explore.ipynb").write_text(json.dumps(NOTEBOOK, indent=1) + "\n")
    (project / ".pre-commit-config.yaml").write_text(
        f"repos:\n- repo: {tmp_path / 'hooks'}\n  rev: {rev}\n  hooks:\n  - id: tfmigrate\n  - id: tfmigrate-fix\n"
    )
    git(project, "init", "-q")
    git(project, "add", "-A")
    git(project, "commit", "-q", "-m", "TF1 code")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GIT_", "PRE_COMMIT", "VIRTUAL_ENV"))}
    env.update(PRE_COMMIT_HOME=str(tmp_path / "cache"), NO_COLOR="1")

    def run(hook: str) -> subprocess.CompletedProcess:
        return subprocess.run(
            [str(PRE_COMMIT), "run", hook, "--all-files", "--color", "never"],
            cwd=project, env=env, capture_output=True, text=True, timeout=600,
        )

    check = run("tfmigrate")
    assert check.returncode != 0, check.stdout + check.stderr
    assert "TFM105" in check.stdout and "train.py" in check.stdout and "explore.ipynb" in check.stdout, check.stdout
    assert "cell 2:" in check.stdout

    fix = run("tfmigrate-fix")
    assert fix.returncode != 0, fix.stdout + fix.stderr  # pre-commit fails a hook that changed files
    assert "files were modified by this hook" in fix.stdout
    assert (project / "train.py").read_text() == TF1.replace(".repeat(False)", "")
    cells = json.loads((project / "explore.ipynb").read_text())["cells"]
    assert cells[1]["source"] == ["%matplotlib inline\n", "d = tf.data.Dataset.range(2)\n"]

    again = run("tfmigrate")
    assert again.returncode == 0, again.stdout + again.stderr


def test_the_readmes_snippet_runs_as_written(tmp_path):
    """The README's pre-commit configuration, copied as a user copies it: only the repository URL
    becomes a clone of this tree in which the release tag `v<version>` was made (as on a
    release); `rev` stays as the README writes it (before the version scheme it named a tag that
    did not exist: pre-commit said `pathspec 'v0.1.0' did not match`)."""
    from test_release import pyproject_version, readme_pre_commit_snippet

    hook_repository(tmp_path / "hooks")
    git(tmp_path / "hooks", "tag", "-a", f"v{pyproject_version()}", "-m", "release")
    snippet = readme_pre_commit_snippet()
    url = re.search(r"- repo: (\S+)", snippet).group(1)
    project = tmp_path / "project"
    project.mkdir()
    (project / "train.py").write_text(TF1 + "forever = ds.repeat(True)\n")
    (project / ".pre-commit-config.yaml").write_text(snippet.replace(url, str(tmp_path / "hooks")))
    git(project, "init", "-q")
    git(project, "add", "-A")
    git(project, "commit", "-q", "-m", "TF1 code")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GIT_", "PRE_COMMIT", "VIRTUAL_ENV"))}
    env.update(PRE_COMMIT_HOME=str(tmp_path / "cache"), NO_COLOR="1")
    result = subprocess.run([str(PRE_COMMIT), "run", "--all-files", "--color", "never"], cwd=project, env=env,
                            capture_output=True, text=True, timeout=600)
    out = result.stdout + result.stderr
    assert "did not match" not in out and "pathspec" not in out, out
    assert result.returncode == 1, out  # the fix changed train.py, and repeat(True) is left
    assert re.search(r"^tfmigrate-fix\.+Failed$", result.stdout, re.M), out
    assert re.search(r"^tfmigrate\.+Failed$", result.stdout, re.M) and "train.py:5:14: TFM105" in result.stdout, out
    assert ".repeat(False)" not in (project / "train.py").read_text()
