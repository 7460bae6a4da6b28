"""Project fixtures (a library and the programs importing it, in tests/fixtures/<set>/<case>/): copy
one, fix it with the CLI, run a program of it and read the last line it prints, and the `# fixed:`
line both routes must print (tests/test_class_groups.py, tests/test_imported_models.py)."""
import os
import re
import shutil
from pathlib import Path

from tf_programs import run_python
from typer.testing import CliRunner

from tfmigrate.frontends.cli import app

runner = CliRunner()


def copy_project(folder: Path, where: Path) -> Path:
    shutil.copytree(folder, where)
    return where


def fix_project(root: Path, monkeypatch, *args) -> None:
    monkeypatch.chdir(root)
    result = runner.invoke(app, ["fix", "--no-cache", *args, "."], catch_exceptions=False)
    assert result.exit_code in (0, 1), result.stdout


def last_line(root: Path, program: str, compat: bool = False) -> str:
    """What `program` prints last, run in `root` (TensorFlow's legacy Keras on for the hand-written
    compat route; a fixed program sets it itself where it needs it)."""
    env = {key: value for key, value in os.environ.items() if key != "TF_USE_LEGACY_KERAS"}
    env.update(TF_CPP_MIN_LOG_LEVEL="3", PYTHONWARNINGS="ignore")
    if compat:
        env["TF_USE_LEGACY_KERAS"] = "1"
    run = run_python([program], env=env, timeout=300, cwd=root)
    assert run.returncode == 0, run.stderr[-2000:]
    return run.stdout.strip().splitlines()[-1]


def fixed_line(path: Path) -> str:
    return re.search(r"^# fixed: (.*)$", path.read_text(), re.MULTILINE).group(1).strip()
