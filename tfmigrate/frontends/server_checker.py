"""The process that checks the language server's documents (`python -m
tfmigrate.frontends.server_checker CANCEL_FD`, started by tfmigrate/frontends/server.py's
`Checker`), so that a check the next keystroke makes stale can be stopped at once.

It loads the checker once (imports, the engine's tables: it checks a small TF1 module before
reading its first request), then forks a child for each check: the child has all of that
already (a fork costs milliseconds, a new Python process with its imports about half a second),
checks, sends its reply and exits. A byte on the file descriptor CANCEL_FD (a pipe from the
server) kills the child that runs: the check stops at once, and this process, which waited for
the child, answers "cancelled". Checks run one at a time.

Requests come on standard input and replies go out on standard output, each a pickle preceded by
its length (8 bytes, big-endian). A request is (kind, job): "lint" checks a Python document
(`api.lint(job).findings`), "check" a notebook (`api.check(job).findings`). A reply is
("ok", findings), ("error", the traceback's text) or ("cancelled", None).
"""
from __future__ import annotations

import gc
import os
import pickle
import select
import signal
import struct
import sys
import traceback
from typing import BinaryIO, Optional

_LENGTH = struct.Struct(">Q")
# Touches what a TF1 module's check loads on first use: the API tables, the graph-code facts, fixes.
WARM_UP = b"""import tensorflow as tf

def block(features, labels):
    inputs = tf.placeholder(tf.float32, [None, 16], name="inputs")
    hidden = tf.layers.dense(inputs, 32, activation=tf.nn.relu)
    loss = tf.reduce_mean(tf.square(tf.layers.dense(hidden, 1) - labels))
    step = tf.train.AdamOptimizer(1e-3).minimize(loss)
    data = tf.data.Dataset.from_tensor_slices(features).repeat(False).map(lambda x: x.shape[0])
    layer = tf.contrib.layers.fully_connected(inputs, 4)
    with tf.Session() as session:
        session.run(tf.global_variables_initializer())
        return session.run(loss, feed_dict={inputs: features}), step, data, layer
"""


def write(stream: BinaryIO, message: object) -> None:
    data = pickle.dumps(message, protocol=pickle.HIGHEST_PROTOCOL)
    stream.write(_LENGTH.pack(len(data)) + data)
    stream.flush()


def read(stream: BinaryIO) -> Optional[object]:
    """The next message; None at the end of the stream."""
    head = stream.read(_LENGTH.size)
    if len(head) < _LENGTH.size:
        return None
    size = _LENGTH.unpack(head)[0]
    data = stream.read(size)
    if len(data) < size:
        return None
    return pickle.loads(data)


def _drain(fd: int) -> bool:
    """Read what the pipe holds (without waiting); whether it held anything."""
    got = False
    while True:
        try:
            chunk = os.read(fd, 4096)
        except BlockingIOError:
            return got
        if not chunk:  # the server is gone: stop the check too
            return True
        got = True


def _check(kind: str, job) -> bytes:
    from tfmigrate import api

    try:
        findings = api.lint(job).findings if kind == "lint" else api.check(job).findings
        reply = ("ok", findings)
    except Exception:  # noqa: BLE001 - handed to the server, which logs it
        reply = ("error", traceback.format_exc())
    return pickle.dumps(reply, protocol=pickle.HIGHEST_PROTOCOL)


def _in_child(kind: str, job, out: int) -> None:
    """The forked child: check, write the reply, exit (never returning into the parent's loop)."""
    code = 1
    try:
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        data = memoryview(_check(kind, job))
        while data:
            data = data[os.write(out, data):]
        code = 0
    finally:
        os._exit(code)


def serve(cancel: int) -> None:
    replies = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)  # what anything prints goes to standard error, never into the replies
    sys.stdout = sys.stderr
    requests = sys.stdin.buffer
    os.set_blocking(cancel, False)

    from tfmigrate import api
    from tfmigrate.workspace.config import Settings

    api.lint(api.stdin_job(Settings(), "check", WARM_UP))
    gc.collect()
    gc.freeze()  # the children's collections leave what was loaded alone: fewer pages copied
    while True:
        request = read(requests)
        if request is None:
            return
        kind, job = request
        _drain(cancel)  # a cancel that came after the last check ended
        inward, outward = os.pipe()
        pid = os.fork()
        if pid == 0:
            os.close(inward)
            _in_child(kind, job, outward)
        os.close(outward)
        chunks, cancelled = [], False
        while True:
            ready, _, _ = select.select([inward, cancel], [], [])
            if cancel in ready and _drain(cancel) and not cancelled:
                cancelled = True
                os.kill(pid, signal.SIGKILL)
            if inward in ready:
                chunk = os.read(inward, 1 << 16)
                if not chunk:
                    break
                chunks.append(chunk)
        os.close(inward)
        _, status = os.waitpid(pid, 0)
        if cancelled or status != 0:
            write(replies, ("cancelled", None) if cancelled else ("error", f"the check ended with status {status}"))
        else:
            data = b"".join(chunks)
            replies.write(_LENGTH.pack(len(data)) + data)
            replies.flush()


if __name__ == "__main__":
    try:
        serve(int(sys.argv[1]))
    except (BrokenPipeError, KeyboardInterrupt):  # the server is gone
        pass
