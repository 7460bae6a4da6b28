"""Executable proof for every fixer: the broken program misbehaves under TensorFlow 2.21, the
fixed one does what its author meant, and fixing again changes nothing.

Each tests/fixtures/<CODE>/exec_*.py starts with three header comments:
    # broken: <text the original run prints (stdout or stderr), e.g. an exception name>
    # fixed: <the exact last line the fixed program prints>
    # fix-args: <arguments after `tfmigrate fix`, e.g. --unsafe-fixes> (may be empty)
"""
import os
import re
import shlex
import shutil
import subprocess
import sys

import pytest

from fixtures_lib import cases, same_printed
from tf_programs import run_python

pytest.importorskip("tensorflow", reason="executable tests need tensorflow-cpu 2.21")

ENV = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3", CUDA_VISIBLE_DEVICES="", PYTHONWARNINGS="ignore")


def _header(source: str, key: str) -> str:
    match = re.search(rf"^# {key}:[ \t]*(.*)$", source, re.MULTILINE)
    assert match, f"missing '# {key}:' header"
    return match.group(1).strip()


def _run(path):
    return run_python([str(path)], env=ENV, timeout=300, cwd=path.parent)


@pytest.mark.parametrize("case", cases("exec"), ids=lambda p: f"{p.parent.name}/{p.name}")
def test_fix_makes_program_behave(case, tmp_path):
    source = case.read_text(encoding="utf-8")
    broken, fixed_line, fix_args = (_header(source, k) for k in ("broken", "fixed", "fix-args"))
    program = tmp_path / case.name
    shutil.copyfile(case, program)

    before = _run(program)
    assert broken in before.stdout + before.stderr, f"original did not misbehave as expected:\n{before.stdout}\n{before.stderr[-3000:]}"

    fix = subprocess.run(
        [sys.executable, "-m", "tfmigrate", "fix", *shlex.split(fix_args), str(program)],
        capture_output=True, text=True, env=ENV,
    )
    assert fix.returncode in (0, 1), fix.stderr
    fixed_source = program.read_text(encoding="utf-8")
    assert fixed_source != source, "the fixer changed nothing"

    after = _run(program)
    assert after.returncode == 0, f"fixed program failed:\n{fixed_source}\n{after.stderr[-3000:]}"
    last = after.stdout.strip().splitlines()[-1] if after.stdout.strip() else ""
    assert same_printed(last, fixed_line), f"fixed program printed {last!r}, expected {fixed_line!r}:\n{fixed_source}"

    subprocess.run([sys.executable, "-m", "tfmigrate", "fix", *shlex.split(fix_args), str(program)], env=ENV, capture_output=True)
    assert program.read_text(encoding="utf-8") == fixed_source, "second fix run changed the file"
