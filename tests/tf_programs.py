"""Run a Python program that imports TensorFlow, as `python ARGS` would, minus the import.

Importing TensorFlow takes about 5 s of CPU, and the executable tests run several hundred
programs: most of CI's time went there. Each test process keeps one server per import-time setting
(tf_program_server.py) that has imported TensorFlow once and forks a child for each program: the
child takes the program's directory, environment, arguments and `sys.path`, runs it as
`__main__`, and reports its exit code; its stdout and stderr go to files read back here.

What TensorFlow decides when it is imported is the key of the server: TF_USE_LEGACY_KERAS (which
Keras `tensorflow.keras` is) and the C++ logging and device variables. A program that changes
TF_USE_LEGACY_KERAS before its own `import tensorflow` (as `fix --native` output does) is seen
doing so by the child, which then stops and the program runs on the server of that setting.
TFMIGRATE_FRESH_PROCESSES=1 runs every program in a fresh interpreter instead.
"""
from __future__ import annotations

import atexit
import json
import os
import signal
import subprocess
import sys
import tempfile
import threading
from pathlib import Path
from typing import Dict, Optional, Sequence, Tuple

SERVER = Path(__file__).with_name("tf_program_server.py")
# Read by TensorFlow when it is imported (and so fixed in a server for its life).
IMPORT_TIME = ("TF_USE_LEGACY_KERAS", "TF_CPP_MIN_LOG_LEVEL", "CUDA_VISIBLE_DEVICES", "TF_ENABLE_ONEDNN_OPTS")
OTHER_SETTING = 97  # the child's exit code when the program set TF_USE_LEGACY_KERAS otherwise
_servers: Dict[Tuple, subprocess.Popen] = {}


def legacy(env) -> bool:
    return env.get("TF_USE_LEGACY_KERAS") in ("true", "True", "1")


def run_python(args: Sequence[str], cwd=None, env: Optional[dict] = None, timeout: float = 300) -> subprocess.CompletedProcess:
    """`subprocess.run([sys.executable, *args], capture_output=True, text=True, cwd=cwd, env=env)`."""
    env = dict(os.environ if env is None else env)
    cwd = os.getcwd() if cwd is None else cwd
    if os.environ.get("TFMIGRATE_FRESH_PROCESSES") == "1":
        return subprocess.run([sys.executable, *args], capture_output=True, text=True, cwd=cwd, env=env, timeout=timeout)
    done = _forked(args, cwd, env, timeout, legacy(env))
    if done.returncode == OTHER_SETTING and "tf_programs: other TF_USE_LEGACY_KERAS" in done.stderr:
        done = _forked(args, cwd, env, timeout, not legacy(env))
    return done


def _forked(args, cwd, env, timeout, legacy_keras: bool) -> subprocess.CompletedProcess:
    key = (legacy_keras, *(env.get(name) for name in IMPORT_TIME[1:]))
    server = _server(key, env, legacy_keras)
    with tempfile.TemporaryDirectory(prefix="tf_program_") as folder:
        out, err = os.path.join(folder, "out"), os.path.join(folder, "err")
        request = {"args": list(args), "cwd": str(cwd), "env": env, "out": out, "err": err, "legacy": legacy_keras}
        server.stdin.write(json.dumps(request) + "\n")
        server.stdin.flush()
        pid = int(server.stdout.readline())
        timer = _Timer(pid, timeout)
        line = server.stdout.readline()
        timer.cancel()
        if not line:
            raise RuntimeError(f"the TensorFlow program server stopped (exit {server.poll()})")
        code = int(line)
        read = lambda path: Path(path).read_text(encoding="utf-8", errors="replace") if os.path.exists(path) else ""
        if timer.fired:
            raise subprocess.TimeoutExpired([sys.executable, *args], timeout, read(out), read(err))
        return subprocess.CompletedProcess([sys.executable, *args], code, read(out), read(err))


class _Timer:
    """Kills the program's process group when it runs past its time."""

    def __init__(self, pid: int, timeout: float):
        self.fired = False

        def kill():
            self.fired = True
            try:
                os.killpg(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        self._timer = threading.Timer(timeout, kill)
        self._timer.daemon = True
        self._timer.start()

    def cancel(self):
        self._timer.cancel()


def _server(key, env, legacy_keras: bool) -> subprocess.Popen:
    server = _servers.get(key)
    if server is not None and server.poll() is None:
        return server
    start = {k: v for k, v in env.items() if k != "TF_USE_LEGACY_KERAS"}
    if legacy_keras:
        start["TF_USE_LEGACY_KERAS"] = "1"
    server = subprocess.Popen([sys.executable, str(SERVER)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                              text=True, env=start, cwd=tempfile.gettempdir())
    ready = server.stdout.readline()
    if ready.strip() != "ready":
        raise RuntimeError(f"the TensorFlow program server did not start: {ready!r}")
    _servers[key] = server
    return server


@atexit.register
def _stop_servers():
    for server in _servers.values():
        if server.poll() is None:
            server.stdin.close()
            try:
                server.wait(timeout=10)
            except subprocess.TimeoutExpired:
                server.kill()
