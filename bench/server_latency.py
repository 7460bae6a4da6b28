"""Latency of `tfmigrate server` while a document is edited (issue 24 item 1): the time from the
last keystroke to the diagnostics of the final text, through a real LSP client over standard
input and output. Prints a table; not a test (tests/test_server.py checks the behaviour: a burst
of changes is checked once, a code action answers for the newest text).

Usage:
    .venv/bin/python bench/server_latency.py                      # this checkout, medians of 3 runs
    .venv/bin/python bench/server_latency.py --tfmigrate-path ../main --tfmigrate-path .
                                                                  # before and after, in one run
    options: --repeat N (runs per figure), --scenario quick|large|typing (repeatable), --tmp DIR

Each `--tfmigrate-path` is put first on PYTHONPATH of the server process (`python -m tfmigrate
server`), so its `tfmigrate` package is the one that serves. The client below speaks JSON-RPC
with Content-Length framing, as editors do; it notes the time each message arrives. A run starts
a fresh server in an empty temporary folder, opens one generated TF1 file, waits for its first
diagnostics (so start-up and the first check are not counted), then edits it:

  quick    1,000 quick edits of a 40-line TF1 file: one character typed per didChange, sent back
           to back (what an editor without a debounce sends while a key repeats, or a macro)
  large    a 1,200-line / ~60 KB TF1 file, 31 edits in 1.6 s (one every 53 ms)
  typing   the same 1,200-line file, typed at 5 characters a second for 6 s, the client holding
           each change until 150 ms pass without a keystroke (an editor's own debounce)

The figure is the time from the last keystroke (the last didChange sent; for `typing`, the last
keystroke, so the client's 150 ms count) to the publishDiagnostics of the final version, and how
many publications the edits got. The TF1 sources are generated here: a block of TF1 graph code
(tf.placeholder, tf.layers.dense, tf.train.AdamOptimizer, tf.Session) repeated with new names.
Target (issue 24): under 1 s on the 1,200-line file while typing.
"""
from __future__ import annotations

import argparse
import json
import os
import queue
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Dict, List, Optional, Tuple

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from tfmigrate.frontends.server import read_message  # noqa: E402 - the client's framing
TIMEOUT = 900.0  # seconds to wait for one message; the old server takes minutes on `large`

BLOCK = '''

def train_block_{i}(features_{i}, labels_{i}):
    inputs_{i} = tf.placeholder(tf.float32, [None, 16], name="inputs_{i}")
    hidden_{i} = tf.layers.dense(inputs_{i}, 32, activation=tf.nn.relu)
    logits_{i} = tf.layers.dense(hidden_{i}, units=1, name="logits_{i}")
    loss_{i} = tf.reduce_mean(tf.square(logits_{i} - labels_{i}))
    train_op_{i} = tf.train.AdamOptimizer(1e-3).minimize(loss_{i})
    dataset_{i} = tf.data.Dataset.from_tensor_slices(features_{i}).repeat(False)
    with tf.Session() as session_{i}:
        session_{i}.run(tf.global_variables_initializer())
        value_{i} = session_{i}.run(loss_{i}, feed_dict={{inputs_{i}: features_{i}}})
    return value_{i}, train_op_{i}, dataset_{i}
'''


def tf1_source(lines: int) -> str:
    """A TF1 graph module of about `lines` lines: BLOCK repeated, each with its own names."""
    parts = ["import tensorflow as tf\n"]
    count, i = 1, 0
    while count < lines:
        block = BLOCK.format(i=i)
        parts.append(block)
        count += block.count("\n")
        i += 1
    return "".join(parts)


class Client:
    """A minimal LSP client over a server process's standard input and output: every message
    the server sends is kept with its arrival time; requests from the server are answered."""

    def __init__(self, cwd: Path, pythonpath: Optional[str], log: Path):
        env = dict(os.environ)
        if pythonpath:
            env["PYTHONPATH"] = os.pathsep.join([pythonpath] + ([env["PYTHONPATH"]] if env.get("PYTHONPATH") else []))
        self.stderr = open(log, "wb")
        self.proc = subprocess.Popen([sys.executable, "-m", "tfmigrate", "server"], cwd=cwd, env=env,
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self.stderr)
        self.inbox: "queue.Queue[Optional[Tuple[float, dict]]]" = queue.Queue()
        self.lock = threading.Lock()
        self.ids = 0
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        while True:
            message = read_message(self.proc.stdout)
            if message is None:
                self.inbox.put(None)
                return
            arrived = time.monotonic()
            if "method" in message and "id" in message:  # a request from the server
                self.send({"id": message["id"], "result": None})
                continue
            self.inbox.put((arrived, message))

    def send(self, message: dict) -> None:
        body = json.dumps({"jsonrpc": "2.0", **message}).encode("utf-8")
        with self.lock:
            self.proc.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
            self.proc.stdin.flush()

    def notify(self, method: str, params) -> None:
        self.send({"method": method, "params": params})

    def next(self) -> Tuple[float, dict]:
        item = self.inbox.get(timeout=TIMEOUT)
        if item is None:
            raise RuntimeError("the server closed its output; see its log")
        return item

    def request(self, method: str, params) -> dict:
        self.ids += 1
        self.send({"id": self.ids, "method": method, "params": params})
        while True:
            _, message = self.next()
            if message.get("id") == self.ids:
                if "error" in message:
                    raise RuntimeError(message["error"])
                return message["result"]

    def diagnostics(self, uri: str, version: int) -> Tuple[float, int, list]:
        """(arrival time, publications for `uri` up to it, diagnostics) of the version's."""
        seen = 0
        while True:
            arrived, message = self.next()
            if message.get("method") == "textDocument/publishDiagnostics" and message["params"]["uri"] == uri:
                seen += 1
                if message["params"].get("version") == version:
                    return arrived, seen, message["params"]["diagnostics"]

    def close(self) -> None:
        try:
            self.request("shutdown", None)
            self.notify("exit", None)
            self.proc.wait(timeout=60)
        except Exception:  # noqa: BLE001 - a server that does not stop is stopped
            self.proc.kill()
            self.proc.wait()
        self.stderr.close()


class Editor:
    """One open document: typing a character sends (or, with a debounce, holds) a didChange."""

    def __init__(self, client: Client, uri: str, text: str):
        self.client, self.uri, self.text, self.version = client, uri, text, 1
        self.held: List[dict] = []
        client.notify("textDocument/didOpen", {"textDocument": {"uri": uri, "languageId": "python",
                                                                "version": 1, "text": text}})

    def type(self, line: int, character: int, char: str) -> None:
        """Insert `char` at (line, character) of the text (ASCII: units are characters)."""
        lines = self.text.split("\n")
        lines[line] = lines[line][:character] + char + lines[line][character:]
        self.text = "\n".join(lines)
        at = {"line": line, "character": character}
        self.held.append({"range": {"start": at, "end": at}, "text": char})

    def flush(self) -> None:
        """Send the changes held as one didChange (an editor sends them in one message)."""
        if self.held:
            self.version += 1
            self.client.notify("textDocument/didChange", {"textDocument": {"uri": self.uri, "version": self.version},
                                                          "contentChanges": self.held})
            self.held = []


def _typed(edits: int) -> str:
    """What the user types, `edits` characters: a comment, so that every version parses and is
    checked in full (code typed a character at a time mostly does not parse, and a file that does
    not parse is one TFM001, found at once: that would measure the cheap case)."""
    words = "# the learning rate schedule follows the paper, warm-up first, then a cosine decay; "
    return (words * (edits // len(words) + 1))[:edits]


def _blank_line_in_the_middle(source: str) -> int:
    """A blank line between two functions, halfway down the file (typing there keeps it valid)."""
    lines = source.split("\n")
    return next(i for i in range(len(lines) // 2, len(lines) - 1) if not lines[i] and lines[i + 1].startswith("def "))


def _type_at(editor: Editor, char: str, where: Dict[str, int]) -> None:
    editor.type(where["line"], where["character"], char)
    where["character"] += 1


def run_once(scenario: str, pythonpath: Optional[str], tmp: Path) -> Tuple[float, int, int]:
    """(seconds from the last keystroke to the final diagnostics, publications, edits sent)."""
    folder = Path(tempfile.mkdtemp(prefix="server-latency-", dir=tmp))
    source = tf1_source(40 if scenario == "quick" else 1200)
    path = folder / "model.py"
    path.write_text(source, encoding="utf-8")
    uri = path.as_uri()
    client = Client(folder, pythonpath, folder / "server.log")
    try:
        client.request("initialize", {
            "processId": os.getpid(), "rootUri": folder.as_uri(),
            "capabilities": {"general": {"positionEncodings": ["utf-16"]},
                             "textDocument": {"publishDiagnostics": {"versionSupport": True}}},
        })
        client.notify("initialized", {})
        editor = Editor(client, uri, source)
        client.diagnostics(uri, 1)
        where = {"line": _blank_line_in_the_middle(source), "character": 0}
        if scenario == "quick":
            for char in _typed(1000):
                _type_at(editor, char, where)
                editor.flush()
            last = time.monotonic()
        elif scenario == "large":
            start = time.monotonic()
            for n, char in enumerate(_typed(31)):
                _sleep_until(start + n * 1.6 / 30)
                _type_at(editor, char, where)
                editor.flush()
            last = time.monotonic()
        else:  # typing: 5 keystrokes a second for 6 s, sent 150 ms after the last one
            start = time.monotonic()
            keystrokes = [start + n * 0.2 for n in range(31)]
            for n, char in enumerate(_typed(31)):
                _sleep_until(keystrokes[n])
                _type_at(editor, char, where)
                quiet = keystrokes[n] + 0.15  # the client's debounce: no keystroke for 150 ms
                if n + 1 == len(keystrokes) or keystrokes[n + 1] > quiet:
                    _sleep_until(quiet)
                    editor.flush()
            last = keystrokes[-1]
        arrived, publications, _ = client.diagnostics(uri, editor.version)
        return arrived - last, publications, editor.version - 1
    finally:
        client.close()


def _sleep_until(moment: float) -> None:
    delay = moment - time.monotonic()
    if delay > 0:
        time.sleep(delay)


SCENARIOS = {
    "quick": "1,000 quick edits, 40-line file",
    "large": "31 edits in 1.6 s, 1,200-line file",
    "typing": "typing 5 chars/s for 6 s, 150 ms client debounce, 1,200-line file",
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tfmigrate-path", action="append", default=[],
                        help="a checkout whose tfmigrate serves (first on PYTHONPATH); repeat to compare")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--scenario", action="append", choices=list(SCENARIOS))
    parser.add_argument("--tmp", default=None)
    args = parser.parse_args()
    paths = [str(Path(p).resolve()) for p in args.tfmigrate_path] or [str(ROOT)]
    scenarios = args.scenario or list(SCENARIOS)
    tmp = Path(tempfile.mkdtemp(prefix="tfmigrate-server-latency-", dir=args.tmp))
    import pygls.protocol  # noqa: F401 - the server needs it: fail here, not in a subprocess
    from importlib.metadata import version

    big = tf1_source(1200)
    print(f"python {sys.version.split()[0]}, pygls {version('pygls')}, {os.cpu_count()} cores; "
          f"40-line file {len(tf1_source(40).encode())} bytes, 1,200-line file "
          f"{big.count(chr(10))} lines / {len(big.encode())} bytes")
    print(f"seconds from the last keystroke to the final version's diagnostics, median of {args.repeat} "
          "(each run: seconds / publications for the edits sent)")
    for scenario in scenarios:
        print(f"\n{SCENARIOS[scenario]}")
        for path in paths:
            runs = [run_once(scenario, path, tmp) for _ in range(args.repeat)]
            median = statistics.median(r[0] for r in runs)
            each = ", ".join(f"{s:.2f} s / {p} for {e}" for s, p, e in runs)
            print(f"  {path:<28} {median:7.2f} s   [{each}]", flush=True)


if __name__ == "__main__":
    main()
