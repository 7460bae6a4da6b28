"""Issue 14 items 4 and 5: code nested deeper than CPython (or libcst) takes, and files too large
to parse in bounded memory, are each one clear finding naming the file, and the run goes on for
every other file (checked and fixed), serially and in the worker pool. Peak memory and time of
large files are measured by bench/large_files.py, not here."""
import json
import subprocess
import sys

import pytest

GOOD = b"import tensorflow as tf\nds = tf.data.Dataset.range(3)\nds = ds.repeat(False)\n"
FIXED = b"import tensorflow as tf\nds = tf.data.Dataset.range(3)\nds = ds\n"
HEAD = b"import tensorflow as tf\n"

# name -> (source, words of its single finding). Each crashed, killed the pool, slipped through or
# gave a false parse error before.
DEEP = {
    # libcst's native parser overflowed its stack: the process died (exit 139)
    "unary.py": (HEAD + b"x = " + b"-" * 100_000 + b"1\n",
                 "Cannot parse this file: it is nested too deeply for Python (MemoryError"),
    "binop.py": (HEAD + b"x = " + b"+".join([b"1"] * 100_000) + b"\n",
                 "Cannot parse this file: it is nested too deeply for Python (RecursionError"),
    "brackets.py": (HEAD + b"x = " + b"[" * 5000 + b"]" * 5000 + b"\n",
                    "Cannot parse this file: it is nested too deeply for Python (too many nested parentheses)"),
    # accepted by libcst, refused by CPython: reported as nothing at all
    "parens.py": (HEAD + b"ds = tf.data.Dataset.range(3).repeat(False)\nx = " + b"(" * 250 + b"1" + b")" * 250 + b"\n",
                  "Cannot parse this file: it is nested too deeply for Python (too many nested parentheses)"),
    # valid Python that libcst's parser cannot take
    "and_chain.py": (HEAD + b"x = " + b" and ".join([b"a"] * 100_002) + b"\n",
                     "an expression of 100,002 `and`/`or` operands is more than tfmigrate's parser takes (100,000)"),
    "joined_strings.py": (HEAD + b"x = (\n" + b"".join(b"    'a%d'\n" % i for i in range(5000)) + b")\n",
                          "it is valid Python, but tfmigrate's parser (libcst) stops at line 5003"),
}


def tfmigrate(root, *args):
    return subprocess.run([sys.executable, "-m", "tfmigrate", *args, "--no-cache", "--format", "json"],
                          capture_output=True, cwd=root, timeout=600)


@pytest.fixture(scope="module")
def deep_tree(tmp_path_factory):
    root = tmp_path_factory.mktemp("deep")
    for name, (source, _) in DEEP.items():
        (root / name).write_bytes(source)
    return root


def fresh_good_files(root, n=6):
    for i in range(n):
        (root / f"good{i}.py").write_bytes(GOOD)


@pytest.mark.parametrize("jobs", ["1", "2"])
@pytest.mark.parametrize("mode", ["check", "fix"])
def test_each_too_deep_file_is_one_finding_and_the_run_goes_on(deep_tree, mode, jobs):
    fresh_good_files(deep_tree)
    result = tfmigrate(deep_tree, mode, "--jobs", jobs, ".")
    assert result.returncode == 1, result.stderr.decode()
    assert b"Traceback" not in result.stderr
    by_path = {}
    for finding in json.loads(result.stdout):
        by_path.setdefault(finding["path"], []).append(finding)
    for name, (source, words) in DEEP.items():
        assert [f["rule"] for f in by_path[name]] == ["TFM001"], by_path.get(name)
        assert words in by_path[name][0]["message"], by_path[name][0]["message"]
        assert "so it was not checked" in by_path[name][0]["message"] or "to have the file checked" in \
            by_path[name][0]["message"]
        assert (deep_tree / name).read_bytes() == source  # never written
    for i in range(6):
        if mode == "fix":
            assert (deep_tree / f"good{i}.py").read_bytes() == FIXED
            assert f"good{i}.py" not in by_path
        else:
            assert [f["rule"] for f in by_path[f"good{i}.py"]] == ["TFM105"]


@pytest.mark.parametrize("calls", [250, 300, 1000])
def test_long_method_chains_keep_their_findings(tmp_path, calls):
    """Python's default recursion limit (1000) was reached in libcst's code generation at ~250
    calls: every finding of the file was lost to one internal error."""
    chain = b".map(f)" * calls
    source = HEAD + b"ds = tf.data.Dataset.range(3)\ny = ds.repeat(False)" + chain + b"\nz = ds" + chain + \
        b".repeat(False)\n"
    (tmp_path / "chain.py").write_bytes(source)
    result = tfmigrate(tmp_path, "check", "chain.py")
    findings = json.loads(result.stdout)
    assert [(f["rule"], f["line"], f["column"]) for f in findings] == [
        ("TFM105", 3, 8), ("TFM105", 4, 8 + 7 * calls)], findings
    result = tfmigrate(tmp_path, "fix", "chain.py")
    assert result.returncode == 0, result.stdout
    assert (tmp_path / "chain.py").read_bytes() == HEAD + b"ds = tf.data.Dataset.range(3)\ny = ds" + chain + \
        b"\nz = ds" + chain + b"\n"


def test_libcst_deep_but_python_fine_and_chains_are_checked(tmp_path):
    """20,000 `and` operands: one list for CPython, 20,000 nested nodes for libcst, whose parser
    overflowed an 8 MB stack. It now has room (tfmigrate.core.deep)."""
    (tmp_path / "ands.py").write_bytes(HEAD + b"ds = tf.data.Dataset.range(3).repeat(False)\nx = " +
                                       b" and ".join([b"a"] * 20_000) + b"\n")
    result = tfmigrate(tmp_path, "check", "ands.py")
    assert [(f["rule"], f["line"]) for f in json.loads(result.stdout)] == [("TFM105", 2)], result.stderr


# --- item 5: max-file-size -------------------------------------------------------------------

def dense(size):
    """A generated data literal: the costliest kind of file to parse per byte."""
    rows, total = [], 0
    while total < size:
        row = b"    [%d, %d.5, %d],\n" % (total, total, total % 97)
        rows.append(row)
        total += len(row)
    return HEAD + b"ds = tf.data.Dataset.range(3).repeat(False)\nDATA = [\n" + b"".join(rows) + b"]\n"


def test_a_file_over_the_default_limit_is_reported_and_skipped(tmp_path):
    (tmp_path / "data.py").write_bytes(dense(1_100_000))
    (tmp_path / "plain_data.py").write_bytes(dense(1_100_000).replace(b"tensorflow", b"numpy").replace(b"tf.", b"np."))
    fresh_good_files(tmp_path, 1)
    for mode in ("check", "fix"):
        result = tfmigrate(tmp_path, mode, ".")
        findings = json.loads(result.stdout)
        assert result.returncode == 1
        assert [(f["path"], f["rule"]) for f in findings if f["path"] != "good0.py"] == [("data.py", "TFM001")]
        assert findings[0]["message"].startswith(
            "Not checked: it is 1.1 MB, over the max-file-size limit of 800 KB (parsing takes up to 1 GB of "
            "memory per MB). Raise `max-file-size` in [tool.tfmigrate] or pass --max-file-size to check it, "
            "or exclude it"), findings[0]["message"]
    assert (tmp_path / "data.py").read_bytes() == dense(1_100_000)  # not fixed
    assert (tmp_path / "good0.py").read_bytes() == FIXED


def test_max_file_size_setting_and_flag(tmp_path):
    (tmp_path / "data.py").write_bytes(dense(30_000))
    (tmp_path / "pyproject.toml").write_text('[tool.tfmigrate]\nmax-file-size = "20KB"\n')
    findings = json.loads(tfmigrate(tmp_path, "check", ".").stdout)
    assert [f["rule"] for f in findings] == ["TFM001"]
    assert "over the max-file-size limit of 20 KB" in findings[0]["message"]
    for flag in ("0", "40KB", "1MiB", "50000"):  # 0: no limit
        findings = json.loads(tfmigrate(tmp_path, "check", "--max-file-size", flag, ".").stdout)
        assert [f["rule"] for f in findings] == ["TFM105"], flag
    findings = json.loads(tfmigrate(tmp_path, "check", "--max-file-size", "10000", ".").stdout)
    assert "over the max-file-size limit of 10 KB" in findings[0]["message"]


@pytest.mark.parametrize("value, shown", [('"20 TB"', "'20 TB'"), ("-1", "-1"), ("true", "True")])
def test_a_bad_max_file_size_is_a_usage_error(tmp_path, value, shown):
    (tmp_path / "pyproject.toml").write_text(f"[tool.tfmigrate]\nmax-file-size = {value}\n")
    (tmp_path / "a.py").write_bytes(GOOD)
    result = tfmigrate(tmp_path, "check", ".")
    assert result.returncode == 2
    assert "max-file-size: expected a size like \"2MB\", \"500KB\" or a number of bytes (0: no limit), got " \
        f"{shown}" in result.stderr.decode().replace("\n", "")


def test_long_string_literals_and_notebook_outputs_do_not_count(tmp_path):
    """A 2 MB protobuf descriptor on one line, or a notebook with 2 MB of image outputs, costs the
    parser next to nothing: both are checked."""
    blob = b"\\x0a\\x0fexample.proto" * 100_000
    (tmp_path / "example_pb2.py").write_bytes(HEAD + b"DESCRIPTOR = b'" + blob + b"'\n" + GOOD.split(b"\n", 1)[1])
    cell = {"cell_type": "code", "metadata": {}, "execution_count": 1, "source": GOOD.decode(),
            "outputs": [{"output_type": "display_data", "metadata": {}, "data": {"image/png": "iVBOR" * 400_000}}]}
    (tmp_path / "plots.ipynb").write_text(json.dumps({"cells": [cell], "metadata": {}, "nbformat": 4,
                                                       "nbformat_minor": 5}))
    findings = json.loads(tfmigrate(tmp_path, "check", ".").stdout)
    assert sorted((f["path"], f["rule"]) for f in findings) == [("example_pb2.py", "TFM105"), ("plots.ipynb", "TFM105")]


def test_an_interrupt_lets_the_files_work_end_first():
    """Ctrl-C while a file's work runs in its deep thread: the work ends before the interrupt
    unwinds, so no daemon thread is left running at interpreter shutdown (which can abort it). In a
    process of its own: a real SIGINT, with Python's own handler (a test worker may ignore SIGINT)."""
    import subprocess
    import sys
    from pathlib import Path

    script = (
        "import os, signal, threading, time\n"
        "signal.signal(signal.SIGINT, signal.default_int_handler)\n"
        "from tfmigrate.core.deep import run_deep\n"
        "done = []\n"
        "def work():\n"
        "    time.sleep(0.5)\n"
        "    done.append(True)\n"
        "threading.Timer(0.1, os.kill, (os.getpid(), signal.SIGINT)).start()\n"
        "try:\n"
        "    run_deep(work)\n"
        "except KeyboardInterrupt:\n"
        "    print('interrupted', done)\n"
    )
    root = Path(__file__).resolve().parent.parent
    ran = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60,
                         env={**__import__("os").environ, "PYTHONPATH": str(root)})
    assert ran.stdout.strip() == "interrupted [True]", ran.stdout + ran.stderr
