"""Real TF1 programs still run after `tfmigrate fix` (safe fixes only) and print their reference
last line: prepare a scratch copy of the program (../shared/tf1-programs), `python -m tfmigrate
fix`, run it under this interpreter without TF_USE_LEGACY_KERAS, compare with manifest.tsv.
The steps are those of scripts/run_programs.py (the full benchmark); one test per program, so
xdist can spread them. About 10-20 s each (TensorFlow's import and a short training).
"""
import importlib.util
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
_spec = importlib.util.spec_from_file_location("run_programs", ROOT / "scripts" / "run_programs.py")
run_programs = importlib.util.module_from_spec(_spec)
sys.modules["run_programs"] = run_programs  # dataclasses look their module up there
_spec.loader.exec_module(run_programs)

PROGRAMS_DIR = run_programs.DEFAULT_PROGRAMS
if not (PROGRAMS_DIR / "manifest.tsv").is_file():
    pytest.skip(f"no TF1 program corpus at {PROGRAMS_DIR}: fetch the repositories its README lists, then "
                "`python run.py materialize GITDIR...` there", allow_module_level=True)
if importlib.util.find_spec("tensorflow") is None:
    pytest.skip("needs TensorFlow (tensorflow-cpu 2.21)", allow_module_level=True)

# Among the quickest programs with a stable reference last line: two whose reference ran with
# Keras 3, and two whose reference needed tf-keras (compat_needs_tf_keras=yes: tf.layers).
CI_PROGRAMS = [
    "stanford-05_randomization",
    "cookbook-04_06_multiclass_svm",
    "morvan-301_simple_regression",
    "morvan-406_GAN",  # variable_scope reuse of tf.layers weights (a discriminator used twice)
]
MANIFEST = {p.id: p for p in run_programs.load_programs(PROGRAMS_DIR)}


@pytest.mark.parametrize("program_id", CI_PROGRAMS)
def test_program_runs_after_safe_fix(program_id, tmp_path):
    program = MANIFEST[program_id]
    assert program.has_reference
    if program.needs_tf_keras:  # scripts/test installs it; a skip here would hide a missing install
        assert importlib.util.find_spec("tf_keras") is not None, "tf-keras is not installed (see scripts/test)"
    settings = run_programs.Settings(PROGRAMS_DIR, sys.executable, modes=("fix",))

    res = run_programs.run_mode(program, "fix", tmp_path, settings)

    details = f"{res.error}\n" + "\n".join(res.stderr_tail) + f"\n(work copy: {res.workdir})"
    assert res.rc == 0 and not res.timed_out, f"{program_id} does not run after tfmigrate fix: {details}"
    assert res.status == "same", (
        f"{program_id} ran but its last line differs:\n  reference: {program.reference_last_line}\n"
        f"  got:       {res.last_line}"
    )
