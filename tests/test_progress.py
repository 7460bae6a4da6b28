"""The progress bar shows on a terminal, on stderr only, and never in machine output or pipes."""
import os
import pty
import subprocess
import sys

TF1 = b"import tensorflow as tf\nds = tf.data.Dataset.range(3).repeat(False)\n"


def run_with_terminal_stderr(args, cwd):
    """Run tfmigrate with stderr on a pseudo-terminal and stdout on a pipe."""
    master, slave = pty.openpty()
    proc = subprocess.Popen(
        [sys.executable, "-m", "tfmigrate", *args], cwd=cwd, stdout=subprocess.PIPE, stderr=slave,
        env=dict(os.environ, COLUMNS="100", TERM="xterm"),
    )
    os.close(slave)
    err = b""
    while True:
        try:
            chunk = os.read(master, 4096)
        except OSError:
            break
        if not chunk:
            break
        err += chunk
    out = proc.stdout.read()
    proc.wait()
    os.close(master)
    return out.decode(), err.decode(errors="replace")


def make_tree(root, n=30):
    for i in range(n):
        (root / f"m{i}.py").write_bytes(TF1)


def test_progress_bar_on_a_terminal_only(tmp_path):
    make_tree(tmp_path)
    out, err = run_with_terminal_stderr(["check", "--no-cache", "--jobs", "1"], tmp_path)
    assert "checking" in err and "30" in err  # the bar, drawn on stderr
    assert "checking" not in out and "\x1b[" not in out  # stdout is a pipe: plain report
    assert "Found 30 findings" in out


def test_no_progress_in_machine_formats(tmp_path):
    make_tree(tmp_path)
    out, err = run_with_terminal_stderr(["check", "--no-cache", "--format", "json"], tmp_path)
    assert "checking" not in err
    assert out.lstrip().startswith("[")


def test_no_progress_for_a_handful_of_files(tmp_path):
    make_tree(tmp_path, 3)
    out, err = run_with_terminal_stderr(["check", "--no-cache"], tmp_path)
    assert "checking" not in err
