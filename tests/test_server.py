"""`tfmigrate server` through a real LSP client: a small JSON-RPC client in this file speaks to
the server process over its standard input and output (Content-Length framing, as editors do):
initialize, didOpen, publishDiagnostics, codeAction (each fix, unsafe ones labelled, noqa, fix
all), didChange, notebooks, the configuration, shutdown; and the process never imports
TensorFlow."""
import json
import os
import queue
import re
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

import pygls  # noqa: F401 - in the test extra: a missing pygls fails, never skips

from tfmigrate.frontends.server import read_message

SOURCE = '''import tensorflow as tf

ds = tf.data.Dataset.range(3)
once = ds.repeat(False)
emoji = "\U0001F600"; twice = ds.repeat(False)
forever = ds.repeat(True)
sizes = ds.map(lambda i: i.shape[0])
'''


class Client:
    """A minimal LSP client: requests wait for their response; notifications the server sends
    are kept for `wait`; requests the server sends (registerCapability, ...) are answered."""

    def __init__(self, cwd, *args):
        self.proc = subprocess.Popen(
            [sys.executable, "-X", "importtime", "-m", "tfmigrate", "server", *args],
            cwd=cwd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        )
        self.inbox = queue.Queue()
        self.notifications = []
        self.stderr = []
        self.ids = 0
        threading.Thread(target=self._read, daemon=True).start()
        threading.Thread(target=lambda: self.stderr.extend(self.proc.stderr), daemon=True).start()

    def _read(self):
        while True:
            message = read_message(self.proc.stdout)
            self.inbox.put(message)
            if message is None:
                return

    def send(self, message):
        body = json.dumps({"jsonrpc": "2.0", **message}).encode("utf-8")
        self.proc.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        self.proc.stdin.flush()

    def notify(self, method, params):
        self.send({"method": method, "params": params})

    def _next(self, deadline):
        message = self.inbox.get(timeout=max(deadline - time.monotonic(), 0.01))
        if message is None:
            raise AssertionError("the server closed its output: " + b"".join(self.stderr[-20:]).decode())
        if "method" in message and "id" in message:  # a request from the server
            self.send({"id": message["id"], "result": None})
            return None
        if "method" in message:
            self.notifications.append(message)
            return None
        return message

    def request(self, method, params, timeout=60):
        self.ids += 1
        self.send({"id": self.ids, "method": method, "params": params})
        deadline = time.monotonic() + timeout
        while True:
            message = self._next(deadline)
            if message is not None and message.get("id") == self.ids:
                assert "error" not in message, message
                return message["result"]

    def wait(self, method, predicate=lambda params: True, timeout=60):
        deadline = time.monotonic() + timeout
        while True:
            for i, message in enumerate(self.notifications):
                if message["method"] == method and predicate(message["params"]):
                    return self.notifications.pop(i)["params"]
            self._next(deadline)

    def diagnostics(self, uri, version=None):
        return self.wait("textDocument/publishDiagnostics",
                         lambda p: p["uri"] == uri and (version is None or p.get("version") == version))["diagnostics"]

    def close(self):
        self.request("shutdown", None)
        self.notify("exit", None)
        code = self.proc.wait(timeout=30)
        time.sleep(0.2)
        return code, b"".join(self.stderr).decode("utf-8", "replace")


def start(cwd):
    client = Client(cwd)
    result = client.request("initialize", {
        "processId": os.getpid(),
        "rootUri": Path(cwd).as_uri(),
        "capabilities": {
            "general": {"positionEncodings": ["utf-16"]},
            "textDocument": {
                "publishDiagnostics": {"versionSupport": True},
                "codeAction": {"codeActionLiteralSupport": {"codeActionKind": {"valueSet": ["quickfix", "source.fixAll"]}}},
            },
            "notebookDocument": {"synchronization": {}},
        },
    })
    client.notify("initialized", {})
    return client, result


def offset(text, position):
    """An LSP position (UTF-16 units) as an offset into `text`."""
    lines = text.splitlines(True)
    start = sum(len(line) for line in lines[:position["line"]])
    line = lines[position["line"]] if position["line"] < len(lines) else ""
    units = 0
    for i, ch in enumerate(line):
        if units >= position["character"]:
            return start + i
        units += 2 if ord(ch) > 0xFFFF else 1
    return start + len(line)


def apply(text, edits):
    """The client's side of a WorkspaceEdit: edits applied from the last to the first."""
    spans = sorted(((offset(text, e["range"]["start"]), offset(text, e["range"]["end"]), e["newText"]) for e in edits),
                   reverse=True)
    for a, b, new in spans:
        text = text[:a] + new + text[b:]
    return text


def tfmigrate(*args, cwd, stdin=None):
    return subprocess.run([sys.executable, "-m", "tfmigrate", *args], cwd=cwd, input=stdin,
                          capture_output=True, text=True)


@pytest.fixture
def project(tmp_path):
    (tmp_path / "pyproject.toml").write_text('[tool.tfmigrate]\nignore = ["TFM102"]\n', encoding="utf-8")
    (tmp_path / "src").mkdir()
    path = tmp_path / "src" / "train.py"
    path.write_text(SOURCE, encoding="utf-8")
    return tmp_path


def test_the_server_speaks_lsp_to_a_real_client(project):
    path = project / "src" / "train.py"
    uri = path.as_uri()
    client, init = start(project)
    try:
        assert init["serverInfo"]["name"] == "tfmigrate"
        capabilities = init["capabilities"]
        assert capabilities["codeActionProvider"]["codeActionKinds"] == ["quickfix", "source.fixAll.tfmigrate"]
        assert capabilities["textDocumentSync"]["openClose"] is True

        client.notify("textDocument/didOpen", {"textDocument": {"uri": uri, "languageId": "python", "version": 1, "text": SOURCE}})
        diagnostics = client.diagnostics(uri, 1)
        # the same findings as `tfmigrate check`, positions 0-based in UTF-16 units
        cli = json.loads(tfmigrate("check", "--format", "json", "--no-cache", "src/train.py", cwd=project).stdout)
        assert [(d["code"], d["range"]["start"]["line"] + 1) for d in diagnostics] == [(f["rule"], f["line"]) for f in cli]
        assert all(d["source"] == "tfmigrate" for d in diagnostics)
        by_line = {d["range"]["start"]["line"]: d for d in diagnostics}
        assert by_line[3]["range"] == {"start": {"line": 3, "character": 10}, "end": {"line": 3, "character": 16}}
        # after an astral-plane character, the column counts UTF-16 units (2 for the emoji)
        column = SOURCE.splitlines()[4].index("repeat")  # in code points
        assert by_line[4]["range"]["start"] == {"line": 4, "character": column + 1}
        assert by_line[3]["severity"] == 1 and by_line[3]["message"].startswith("`repeat(False)` repeats the data zero times")

        # a quick fix for the finding under the cursor, and a noqa for its line
        actions = client.request("textDocument/codeAction", {
            "textDocument": {"uri": uri}, "range": by_line[3]["range"], "context": {"diagnostics": [by_line[3]]},
        })
        titles = [a["title"] for a in actions]
        assert "tfmigrate TFM105: Remove `.repeat(False)`" in titles
        fix = next(a for a in actions if a["title"] == "tfmigrate TFM105: Remove `.repeat(False)`")
        assert fix["kind"] == "quickfix" and fix["isPreferred"] is True
        assert fix["diagnostics"][0]["code"] == "TFM105"
        fixed = apply(SOURCE, fix["edit"]["changes"][uri])
        assert fixed == SOURCE.replace("once = ds.repeat(False)\n", "once = ds\n")
        noqa = next(a for a in actions if "noqa" in a["title"])
        assert apply(SOURCE, noqa["edit"]["changes"][uri]).splitlines()[3] == "once = ds.repeat(False)  # noqa: TFM105"
        fix_all = next(a for a in actions if a["kind"] == "source.fixAll.tfmigrate")
        assert fix_all["title"] == "tfmigrate: fix all (safe fixes)"
        # fix all is what `tfmigrate fix` writes
        expected = tfmigrate("fix", "-", "--stdin-filename", "src/train.py", cwd=project, stdin=SOURCE).stdout
        assert apply(SOURCE, fix_all["edit"]["changes"][uri]) == expected != SOURCE

        # an unsafe fix is offered, labelled, never preferred; and fix all with unsafe fixes
        unsafe_line = by_line[5]
        actions = client.request("textDocument/codeAction", {
            "textDocument": {"uri": uri}, "range": unsafe_line["range"], "context": {"diagnostics": [unsafe_line]},
        })
        unsafe = next(a for a in actions if a["title"].startswith("tfmigrate TFM105:") and "noqa" not in a["title"])
        assert unsafe["title"].endswith("(unsafe: may change behaviour)") and "isPreferred" not in unsafe
        everything = next(a for a in actions if a["title"] == "tfmigrate: fix all, including unsafe fixes")
        assert everything["kind"] == "quickfix"  # never run by an editor's fix-all-on-save
        expected = tfmigrate("fix", "--unsafe-fixes", "-", "--stdin-filename", "src/train.py", cwd=project, stdin=SOURCE).stdout
        assert apply(SOURCE, everything["edit"]["changes"][uri]) == expected

        # only: what an editor asks on save
        on_save = client.request("textDocument/codeAction", {
            "textDocument": {"uri": uri}, "range": {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 0}},
            "context": {"diagnostics": [], "only": ["source.fixAll"]},
        })
        assert [a["title"] for a in on_save] == ["tfmigrate: fix all (safe fixes)"]

        # didChange (incremental): the edited finding is gone, the others stay
        client.notify("textDocument/didChange", {
            "textDocument": {"uri": uri, "version": 2},
            "contentChanges": [{"range": {"start": {"line": 3, "character": 9}, "end": {"line": 3, "character": 23}}, "text": ""}],
        })
        after = client.diagnostics(uri, 2)
        assert [d["range"]["start"]["line"] for d in after] == [4, 5, 6]
        # didChange (whole text): a clean file has no diagnostics
        client.notify("textDocument/didChange", {
            "textDocument": {"uri": uri, "version": 3}, "contentChanges": [{"text": "import tensorflow as tf\n"}],
        })
        assert client.diagnostics(uri, 3) == []
        client.notify("textDocument/didClose", {"textDocument": {"uri": uri}})
        assert client.diagnostics(uri) == []
    finally:
        code, stderr = client.close()
    assert code == 0
    # -X importtime lists every module the process imported: libcst, never TensorFlow or Keras
    imported = re.findall(r"^import time:\s+\d+ \|\s+\d+ \|\s*(\S+)", stderr, re.MULTILINE)
    assert "libcst" in imported and "pygls" in imported
    assert not [m for m in imported if m.split(".")[0] in ("tensorflow", "keras", "tf_keras")]


def test_the_server_reads_the_configuration_as_check_does(project):
    path = project / "src" / "train.py"
    uri = path.as_uri()
    client, _ = start(project)
    try:
        client.notify("textDocument/didOpen", {"textDocument": {"uri": uri, "languageId": "python", "version": 1, "text": SOURCE}})
        assert "TFM104" in {d["code"] for d in client.diagnostics(uri, 1)}
        # the configuration is read at every check: an edit to it counts at the next change
        (project / "pyproject.toml").write_text('[tool.tfmigrate]\nignore = ["TFM104"]\n', encoding="utf-8")
        client.notify("textDocument/didChange", {"textDocument": {"uri": uri, "version": 2}, "contentChanges": [{"text": SOURCE}]})
        assert "TFM104" not in {d["code"] for d in client.diagnostics(uri, 2)}
        # a per-file exclude: no findings
        (project / "pyproject.toml").write_text('[tool.tfmigrate]\nextend-exclude = ["src"]\n', encoding="utf-8")
        client.notify("textDocument/didChange", {"textDocument": {"uri": uri, "version": 3}, "contentChanges": [{"text": SOURCE}]})
        assert client.diagnostics(uri, 3) == []
        # a mistake in it is shown to the user, once
        (project / "pyproject.toml").write_text('[tool.tfmigrate]\nselec = ["TFM1"]\n', encoding="utf-8")
        client.notify("textDocument/didChange", {"textDocument": {"uri": uri, "version": 4}, "contentChanges": [{"text": SOURCE}]})
        message = client.wait("window/showMessage")
        assert message["type"] == 1 and "unknown key 'selec' in [tool.tfmigrate]" in message["message"]
    finally:
        code, _ = client.close()
    assert code == 0


def test_notebook_cells_get_findings_and_fix_all(project):
    notebook = (project / "nb.ipynb").as_uri()
    cells = [
        ("import tensorflow as tf\nds = tf.data.Dataset.range(3)\n", "python"),
        ("# notes", "markdown"),
        ("%matplotlib inline\nonce = ds.repeat(False)\n", "python"),
    ]
    uris = [f"vscode-notebook-cell:{notebook[len('file://'):]}#C{i}" for i in range(len(cells))]
    client, _ = start(project)
    try:
        client.notify("notebookDocument/didOpen", {
            "notebookDocument": {
                "uri": notebook, "notebookType": "jupyter-notebook", "version": 1,
                "cells": [{"kind": 2 if lang == "python" else 1, "document": uri} for uri, (_, lang) in zip(uris, cells)],
            },
            "cellTextDocuments": [{"uri": uri, "languageId": lang, "version": 1, "text": text}
                                  for uri, (text, lang) in zip(uris, cells)],
        })
        diagnostics = client.diagnostics(uris[2])
        assert [(d["code"], d["range"]["start"]) for d in diagnostics] == [("TFM105", {"line": 1, "character": 10})]
        assert not diagnostics[0]["message"].startswith("cell ")
        actions = client.request("textDocument/codeAction", {
            "textDocument": {"uri": uris[2]}, "range": diagnostics[0]["range"], "context": {"diagnostics": diagnostics},
        })
        fix_all = next(a for a in actions if a["kind"] == "source.fixAll.tfmigrate")
        assert list(fix_all["edit"]["changes"]) == [uris[2]]
        assert apply(cells[2][0], fix_all["edit"]["changes"][uris[2]]) == "%matplotlib inline\nonce = ds\n"
        noqa = next(a for a in actions if "noqa" in a["title"])
        assert apply(cells[2][0], noqa["edit"]["changes"][uris[2]]).endswith("once = ds.repeat(False)  # noqa: TFM105\n")
    finally:
        code, _ = client.close()
    assert code == 0


def test_without_pygls_the_command_says_what_to_install(tmp_path):
    blocker = tmp_path / "pygls"
    blocker.mkdir()
    (blocker / "__init__.py").write_text("raise ImportError('no pygls here')\n")
    result = subprocess.run([sys.executable, "-m", "tfmigrate", "server"], cwd=tmp_path, capture_output=True, text=True,
                            env={**os.environ, "PYTHONPATH": str(tmp_path)}, stdin=subprocess.DEVNULL)
    assert result.returncode == 2
    assert "pip install 'tfmigrate[server]'" in result.stderr


def test_the_server_skips_a_file_over_max_file_size_as_check_does(project):
    """A file over max-file-size is one TFM001 without being parsed, in the editor as on the
    command line (before: the server parsed it, 53 s and 1.8 GB for a 1 MB file)."""
    (project / "pyproject.toml").write_text('[tool.tfmigrate]\nmax-file-size = "1KB"\n', encoding="utf-8")
    path = project / "src" / "train.py"
    big = SOURCE + "".join(f"x{i} = tf.constant({i})\n" for i in range(100))
    path.write_text(big, encoding="utf-8")
    client, _ = start(project)
    try:
        client.notify("textDocument/didOpen", {"textDocument": {"uri": path.as_uri(), "languageId": "python", "version": 1, "text": big}})
        diagnostics = client.diagnostics(path.as_uri(), 1)
    finally:
        client.close()
    assert [(d["code"], d["message"].split(":")[0]) for d in diagnostics] == [("TFM001", "Not checked")]
    cli = json.loads(tfmigrate("check", "--format", "json", "--no-cache", "src/train.py", cwd=project).stdout)
    assert [(f["rule"], f["message"]) for f in cli] == [(d["code"], d["message"]) for d in diagnostics]


def published(client, uri):
    """The versions of the publishDiagnostics for `uri` the client holds (not yet waited for)."""
    return [m["params"].get("version") for m in client.notifications
            if m["method"] == "textDocument/publishDiagnostics" and m["params"]["uri"] == uri]


def test_a_burst_of_changes_is_checked_once_for_its_last_version(project):
    """50 changes sent at once (as an editor sends keystrokes): the server checks the newest text,
    not each one in turn, and never publishes a version older than one it published (before:
    50 checks in order, 50 publications, the last one 15 s after the last keystroke on a
    40-line file after 1,000 changes)."""
    uri = (project / "src" / "train.py").as_uri()
    client, _ = start(project)
    try:
        client.notify("textDocument/didOpen", {"textDocument": {"uri": uri, "languageId": "python", "version": 1, "text": SOURCE}})
        first = client.diagnostics(uri, 1)
        lines = SOURCE.count("\n")
        for version in range(2, 52):  # each change types one more line with a finding at the end
            line = lines + version - 2
            client.notify("textDocument/didChange", {
                "textDocument": {"uri": uri, "version": version},
                "contentChanges": [{"range": {"start": {"line": line, "character": 0}, "end": {"line": line, "character": 0}},
                                    "text": f"v{version} = ds.repeat(False)\n"}],
            })
        last = client.diagnostics(uri, 51)
        before = published(client, uri)
    finally:
        client.close()
    assert len(last) == len(first) + 50
    assert [d["range"]["start"]["line"] for d in last if d["code"] == "TFM105"][-1] == lines + 49
    assert len(before) <= 5, before  # one check per burst (a pause in sending may make a second)
    assert before == sorted(before) and all(v < 51 for v in before)


def test_a_code_action_right_after_a_change_answers_for_the_new_text(project):
    """A code action asked before the changed text is checked waits for its check: the fixes'
    offsets are the new text's (an answer from the older check would edit the wrong place)."""
    uri = (project / "src" / "train.py").as_uri()
    moved = "import tensorflow as tf\n\n\nds = tf.data.Dataset.range(3)\nonce = ds.repeat(False)\n"
    client, _ = start(project)
    try:
        client.notify("textDocument/didOpen", {"textDocument": {"uri": uri, "languageId": "python", "version": 1, "text": SOURCE}})
        client.diagnostics(uri, 1)
        for version, text in ((2, SOURCE + "\n"), (3, moved)):
            client.notify("textDocument/didChange", {"textDocument": {"uri": uri, "version": version},
                                                     "contentChanges": [{"text": text}]})
        span = {"start": {"line": 4, "character": 10}, "end": {"line": 4, "character": 16}}
        actions = client.request("textDocument/codeAction", {"textDocument": {"uri": uri}, "range": span,
                                                             "context": {"diagnostics": []}})
        assert client.diagnostics(uri, 3)[0]["range"] == span
    finally:
        client.close()
    fix = next(a for a in actions if a["title"] == "tfmigrate TFM105: Remove `.repeat(False)`")
    assert apply(moved, fix["edit"]["changes"][uri]) == moved.replace("ds.repeat(False)", "ds")
    fix_all = next(a for a in actions if a["kind"] == "source.fixAll.tfmigrate")
    expected = tfmigrate("fix", "-", "--stdin-filename", "src/train.py", cwd=project, stdin=moved).stdout
    assert apply(moved, fix_all["edit"]["changes"][uri]) == expected != moved


def test_a_burst_of_notebook_changes_is_checked_once(project):
    """notebookDocument/didChange is coalesced as didChange is; a code action after it answers
    for the cell's newest text."""
    notebook = (project / "nb.ipynb").as_uri()
    cells = ["import tensorflow as tf\nds = tf.data.Dataset.range(3)\n", "once = ds.repeat(False)\n"]
    uris = [f"vscode-notebook-cell:{notebook[len('file://'):]}#C{i}" for i in range(len(cells))]
    client, _ = start(project)
    try:
        client.notify("notebookDocument/didOpen", {
            "notebookDocument": {"uri": notebook, "notebookType": "jupyter-notebook", "version": 1,
                                 "cells": [{"kind": 2, "document": uri} for uri in uris]},
            "cellTextDocuments": [{"uri": uri, "languageId": "python", "version": 1, "text": text}
                                  for uri, text in zip(uris, cells)],
        })
        assert len(client.diagnostics(uris[1], 1)) == 1
        text = cells[1]
        for version in range(2, 32):
            text += f"v{version} = ds.repeat(False)\n"
            client.notify("notebookDocument/didChange", {
                "notebookDocument": {"uri": notebook, "version": version},
                "change": {"cells": {"textContent": [{"document": {"uri": uris[1], "version": version},
                                                      "changes": [{"text": text}]}]}},
            })
        actions = client.request("textDocument/codeAction", {
            "textDocument": {"uri": uris[1]}, "range": {"start": {"line": 30, "character": 0}, "end": {"line": 30, "character": 0}},
            "context": {"diagnostics": []}})
        last = client.diagnostics(uris[1], 31)
        before = published(client, uris[1])
    finally:
        client.close()
    assert len(last) == 31 and last[-1]["range"]["start"]["line"] == 30
    assert len(before) <= 5, before
    assert before == sorted(before) and all(v < 31 for v in before)
    fix_all = next(a for a in actions if a["kind"] == "source.fixAll.tfmigrate")
    assert apply(text, fix_all["edit"]["changes"][uris[1]]) == text.replace("ds.repeat(False)", "ds")


def test_a_stale_check_is_stopped_and_the_next_one_runs(tmp_path):
    """The checks run in a process that forks one child per check: `cancel` kills the child of
    the check that runs (its result would be stale), and the process goes on checking."""
    from tfmigrate import api
    from tfmigrate.frontends.server import Checker, Linter

    path = tmp_path / "model.py"
    big = SOURCE + "".join(f"x{i} = tf.placeholder(tf.float32)\ny{i} = ds.repeat(False)\n" for i in range(1500))
    path.write_text(big, encoding="utf-8")
    job = Linter().job(str(path), big.encode("utf-8"))
    checker = Checker()
    if not checker.available:
        pytest.skip("no os.fork: checks run in the server's thread")
    outcome = []
    try:
        worker = threading.Thread(target=lambda: outcome.append(_run(checker, "k", job)))
        worker.start()
        while worker.is_alive():  # cancel until the check ends, however soon it starts
            checker.cancel("k")
            worker.join(0.01)
        assert outcome == ["cancelled"]
        small = Linter().job(str(path), SOURCE.encode("utf-8"))
        assert _run(checker, "k", small) == api.lint(small).findings != []
    finally:
        checker.close()


def _run(checker, key, job):
    from tfmigrate.frontends.server import Cancelled

    try:
        return checker.run(key, "lint", job)
    except Cancelled:
        return "cancelled"
