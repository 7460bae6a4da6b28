"""The executable tests run their TensorFlow programs in children of a process that imported
TensorFlow once (tf_programs.py). What a program sees and prints must be what `python PROGRAM`
gives: each case runs both ways and compares."""
import os
import subprocess
import sys

import pytest

from tf_programs import run_python

pytest.importorskip("tensorflow", reason="needs tensorflow-cpu 2.21")

ENV = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3", PYTHONWARNINGS="ignore")
ENV.pop("TF_USE_LEGACY_KERAS", None)

SEEN = '''import os, sys
import helper
print(sys.argv, os.path.basename(__file__), os.path.isabs(__file__), sys.path[0] == os.path.dirname(os.path.abspath(__file__)))
print(os.getcwd() == os.path.dirname(os.path.abspath(__file__)), os.environ.get("MARK"), __name__, helper.VALUE)
print("to stderr", file=sys.stderr)
'''
KERAS_SET_FIRST = '''import os
os.environ.setdefault("TF_USE_LEGACY_KERAS", "1")
import tensorflow as tf
print(tf.keras.layers.Dense.__module__.split(".")[0], tf.constant([1.5, 2.0]).numpy().sum())
'''
KERAS_DEFAULT = '''import tensorflow as tf
from tensorflow.keras import layers
print(layers.Dense.__module__.split(".")[0])
'''
FAILS = '''import tensorflow as tf
print("before")
tf.placeholder(tf.float32)
'''
EXITS = '''import sys, atexit
atexit.register(lambda: print("at exit"))
print("exiting")
sys.exit(3)
'''


def _both(tmp_path, source, *argv, env=ENV):
    (tmp_path / "helper.py").write_text("VALUE = 42\n")
    (tmp_path / "program.py").write_text(source)
    fresh = subprocess.run([sys.executable, "program.py", *argv], capture_output=True, text=True, cwd=tmp_path, env=env)
    forked = run_python(["program.py", *argv], cwd=tmp_path, env=env)
    return fresh, forked


@pytest.mark.parametrize("source", [SEEN, KERAS_SET_FIRST, KERAS_DEFAULT, EXITS],
                         ids=["argv-file-path-cwd-env", "legacy-keras-set-by-the-program", "keras-3", "exit-code-atexit"])
def test_a_forked_program_prints_what_a_fresh_interpreter_prints(tmp_path, source):
    fresh, forked = _both(tmp_path, source, "--flag", "x", env=dict(ENV, MARK="m"))
    assert (forked.returncode, forked.stdout) == (fresh.returncode, fresh.stdout), (fresh.stderr, forked.stderr)
    assert fresh.stdout.strip(), fresh.stderr
    if source is SEEN:
        assert forked.stderr == fresh.stderr == "to stderr\n"


def test_an_uncaught_exception_gives_the_same_traceback_and_exit_code(tmp_path):
    fresh, forked = _both(tmp_path, FAILS)
    assert forked.returncode == fresh.returncode == 1 and forked.stdout == fresh.stdout == "before\n"
    assert forked.stderr.strip().splitlines()[-1] == fresh.stderr.strip().splitlines()[-1]
    assert "AttributeError" in forked.stderr


def test_code_given_with_dash_c_runs_as_main(tmp_path):
    code = "import sys, tensorflow as tf\nprint(__name__, sys.argv, float(tf.reduce_sum(tf.ones([3]))))\n"
    fresh = subprocess.run([sys.executable, "-c", code, "a"], capture_output=True, text=True, cwd=tmp_path, env=ENV)
    forked = run_python(["-c", code, "a"], cwd=tmp_path, env=ENV)
    assert forked.stdout == fresh.stdout == "__main__ ['-c', 'a'] 3.0\n"


def test_a_program_past_its_time_is_killed(tmp_path):
    (tmp_path / "slow.py").write_text("import time\ntime.sleep(60)\n")
    with pytest.raises(subprocess.TimeoutExpired):
        run_python(["slow.py"], cwd=tmp_path, env=ENV, timeout=2)
    assert run_python(["-c", "print(1)"], cwd=tmp_path, env=ENV).stdout == "1\n"  # the server goes on
