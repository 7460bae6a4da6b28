"""`tfmigrate server`: a Language Server (LSP over standard input and output, built on pygls;
`pip install 'tfmigrate[server]'`). For every open Python document, and every code cell of an
open notebook, it publishes the findings `tfmigrate check` would report, as the document is
typed (the editor's text, saved or not), and offers as code actions:

- each fix on offer (quick fix; an unsafe one is labelled so and never preferred),
- `# noqa: CODE` for the line,
- "fix all" (`source.fixAll.tfmigrate`: the safe fixes to a fixed point, as `tfmigrate fix`;
  editors can run it on save) and "fix all, including unsafe fixes" (a quick fix, never on save).

Each document takes the same configuration as on the command line: the nearest
`[tool.tfmigrate]` / tfmigrate.toml at or above its file, read again at every check, so an edit
to it counts at the next keystroke. A file that the configuration excludes gets no findings. It
goes through tfmigrate.api as the command line does, so a document also gets the cross-file facts
of its project's files (star imports of a module importing TensorFlow, the graph module importing
it; the document's unsaved text counts, the other files as on disk), `native`, and the room for
deeply nested code. It never imports TensorFlow. Positions are sent in the encoding the client and server agreed
(UTF-16 code units unless the client offers another).

Typing: only the newest text of a document is checked (`Scheduler`). A change records the text
and schedules a check `DEBOUNCE` seconds later (a burst of changes is checked once); the check
takes the text the document has when it starts and runs off the message loop (one worker
thread, which hands the job to a forked child, `Checker`), so the loop keeps reading changes; a
change to a document whose check runs stops that check (its result would be stale: it is never
published) and the newest text is checked next: per document, at most one check running and
one waiting. A code action waits for the check of the current text, so a fix never applies to
the offsets of an older one.

The computations (findings, fixes, edits) need no pygls: `Linter` holds them, `Scheduler` decides
when they run, `Checker` runs them in a process that can stop one; `serve()` wires them to the
protocol.
"""
from __future__ import annotations

import asyncio
import io
import json
import logging
import os
import re
import subprocess
import sys
import threading
import time
import tokenize
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple
from urllib.parse import unquote, urlparse

from tfmigrate import __version__
from tfmigrate.findings import Finding

NAME = "tfmigrate"
FIX_ALL_KIND = "source.fixAll.tfmigrate"
_BREAK = re.compile(r"\r\n|\r|\n")


# --- positions -------------------------------------------------------------------------------------

def read_message(stream) -> Optional[dict]:
    """One JSON-RPC message framed with `Content-Length` from a binary `stream`, or None at its
    end: what an LSP client reads (the tests' client and bench/server_latency.py's)."""
    headers = {}
    while True:
        line = stream.readline()
        if not line:
            return None
        line = line.strip()
        if not line:
            break
        key, value = line.decode("ascii").split(":", 1)
        headers[key.lower()] = value.strip()
    return json.loads(stream.read(int(headers["content-length"])).decode("utf-8"))


def line_starts(text: str) -> List[int]:
    """Offsets where each line starts, lines as LSP (and Python) count them: \\n, \\r\\n, \\r."""
    return [0] + [m.end() for m in _BREAK.finditer(text)]


def _units(text: str, encoding: str) -> int:
    if encoding == "utf-32":
        return len(text)
    if encoding == "utf-8":
        return len(text.encode("utf-8", "surrogatepass"))
    return len(text.encode("utf-16-le", "surrogatepass")) // 2


def to_position(text: str, starts: List[int], offset: int, encoding: str) -> dict:
    """An offset into `text` (code points) as an LSP position in the negotiated encoding."""
    import bisect

    line = max(bisect.bisect_right(starts, offset) - 1, 0)
    return {"line": line, "character": _units(text[starts[line]:offset], encoding)}


def from_position(text: str, starts: List[int], position: dict, encoding: str) -> int:
    """An LSP position as an offset into `text` (code points)."""
    line = min(max(position["line"], 0), len(starts) - 1)
    start = starts[line]
    end = starts[line + 1] if line + 1 < len(starts) else len(text)
    want = position["character"]
    offset = start
    while offset < end and _units(text[start:offset + 1], encoding) <= want:
        offset += 1
    return offset


def _offset(starts: List[int], text: str, line: int, column: int) -> int:
    """A finding's 1-based line and column (code points) as an offset into `text`."""
    if line < 1:
        return 0
    if line > len(starts):
        return len(text)
    return min(starts[line - 1] + max(column - 1, 0), len(text))


def minimal_edit(old: str, new: str) -> Tuple[int, int, str]:
    """(start, end, replacement): the one span of `old` to replace to get `new`."""
    prefix = 0
    limit = min(len(old), len(new))
    while prefix < limit and old[prefix] == new[prefix]:
        prefix += 1
    suffix = 0
    while suffix < limit - prefix and old[len(old) - 1 - suffix] == new[len(new) - 1 - suffix]:
        suffix += 1
    return prefix, len(old) - suffix, new[prefix:len(new) - suffix]


# --- documents -------------------------------------------------------------------------------------

def uri_to_path(uri: str) -> Optional[str]:
    parsed = urlparse(uri)
    if parsed.scheme != "file":
        return None
    path = unquote(parsed.path)
    if os.name == "nt" and re.match(r"^/[A-Za-z]:", path):
        path = path[1:]
    return path


def _encode(text: str) -> bytes:
    """The editor's text as the bytes the file would hold: in the encoding it declares, if any."""
    head = "".join(text.splitlines(True)[:2]).encode("utf-8", "surrogateescape")
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(head).readline)
        return text.encode("utf-8" if encoding == "utf-8-sig" else encoding)
    except (SyntaxError, LookupError, UnicodeEncodeError):
        return text.encode("utf-8", "surrogateescape")


def _decode(data: bytes, like: str) -> str:
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
        return data.decode("utf-8" if encoding == "utf-8-sig" else encoding)
    except (SyntaxError, LookupError, UnicodeDecodeError):
        return data.decode("utf-8", "surrogateescape")


@dataclass
class Action:
    title: str
    kind: str  # "quickfix" | FIX_ALL_KIND
    edits: Dict[str, List[Tuple[int, int, str]]]  # uri -> (start, end, text) in that document's text
    finding: Optional[Finding] = None  # the finding it fixes or silences
    preferred: bool = False


@dataclass
class Checked:
    """One document (or notebook) checked: its findings, and the actions on offer, built when
    the editor asks (a fix is applied and parsed only then, not at every keystroke)."""

    findings: Dict[str, List[Finding]] = field(default_factory=dict)  # uri -> findings (lines in that text)
    texts: Dict[str, str] = field(default_factory=dict)  # uri -> the text the findings are about
    error: Optional[str] = None  # a configuration error, shown once
    linted: object = field(default=None, repr=False)  # api.Linted: what applying one fix needs
    lint_job: object = field(default=None, repr=False)  # the api.Job to lint for it, when checked elsewhere
    fix_all_source: Optional[object] = field(default=None, repr=False)  # unsafe -> {uri: new text} or None
    _memo: dict = field(default_factory=dict, repr=False)

    def ready(self) -> None:
        """Lint here what another process checked, for the fixes' edits: its findings (the same,
        as the same job gives the same findings) become those the actions are built for."""
        if self.linted is None and self.lint_job is not None:
            from tfmigrate import api

            self.linted = api.lint(self.lint_job)
            uri = next(iter(self.texts))
            self.findings[uri] = self.linted.findings
            self._memo.clear()

    def actions(self, uri: str, finding: Finding) -> List[Action]:
        """The quick fixes for one finding: its fix, if any, and a noqa comment for its line."""
        key = (uri, id(finding))
        if key not in self._memo:
            self._memo[key] = self._build(uri, finding)
        return self._memo[key]

    def _build(self, uri: str, finding: Finding) -> List[Action]:
        from tfmigrate import api
        from tfmigrate.frontends import addnoqa

        text = self.texts[uri]
        out = []
        new_text = api.fix_one(self.linted, finding) if self.linted is not None else None
        if new_text is not None:  # a fix that cannot be applied or would not parse is not offered
            safe = finding.fix.applicability == "safe"
            label = "" if safe else " (unsafe: may change behaviour)"
            out.append(Action(f"tfmigrate {finding.rule}: {finding.fix.description}{label}", "quickfix",
                              {uri: [minimal_edit(text, new_text)]}, finding, safe))
        if finding.rule not in addnoqa.UNSILENCEABLE:
            insertions, _ = addnoqa.plan(text, [finding])
            starts = line_starts(text)
            for line, (column, insert) in insertions.items():
                at = starts[line - 1] + column
                out.append(Action(f"tfmigrate {finding.rule}: silence on this line (# noqa: {finding.rule})",
                                  "quickfix", {uri: [(at, at, insert)]}, finding))
        return out

    def fix_all(self, unsafe: bool) -> Optional[Action]:
        """Every safe fix (or every fix) to a fixed point, as `tfmigrate fix` would write it."""
        key = ("all", unsafe)
        if key in self._memo:
            return self._memo[key]
        action = None
        everything = [f for found in self.findings.values() for f in found]
        fixable = [f for f in everything if f.fix is not None and (unsafe or f.fix.applicability == "safe")]
        needed = fixable and not (unsafe and all(f.fix.applicability == "safe" for f in fixable))
        if needed and self.fix_all_source is not None:
            new = self.fix_all_source(unsafe)
            edits = {uri: [minimal_edit(self.texts[uri], text)] for uri, text in (new or {}).items()
                     if text != self.texts[uri]}
            if edits:
                title = "tfmigrate: fix all, including unsafe fixes" if unsafe else "tfmigrate: fix all (safe fixes)"
                action = Action(title, "quickfix" if unsafe else FIX_ALL_KIND, edits)
        self._memo[key] = action
        return action


class Linter:
    """Findings and fixes for a document's text, with the configuration its path takes and the
    cross-file facts of its project's files (tfmigrate.api.Workspace: the files `tfmigrate check`
    visits from the folder of the document's configuration, or from its own folder without one)."""

    def __init__(self):
        self.workspaces: Dict[str, object] = {}  # project folder -> api.Workspace

    def forget(self) -> None:
        """Files changed on disk: read the projects' files again at the next check."""
        for workspace in self.workspaces.values():
            workspace.forget()

    def settings(self, path: Optional[str]):
        """(settings, anchor path) or raises ConfigError; None when the file is excluded."""
        from tfmigrate.workspace.config import resolve

        anchor = path or os.path.join(os.getcwd(), "untitled.py")
        settings = resolve([anchor]).for_path(anchor)
        if path is not None and settings.excluded(path):
            return None
        return settings, anchor

    def job(self, path: Optional[str], data: bytes):
        """The document's api.Job (ConfigError for a bad configuration); None when excluded."""
        from tfmigrate import api

        chosen = self.settings(path)
        if chosen is None:
            return None
        settings, anchor = chosen
        # Without a configuration file, the document's folder (not the server's whole folder).
        root = str(settings.root) if settings.source is not None else os.path.dirname(anchor)
        if root not in self.workspaces:
            self.workspaces[root] = api.Workspace([root])
        return self.workspaces[root].job(anchor, data, settings)

    def check_python(self, uri: str, text: str, run: Optional[Callable[[str, object], List[Finding]]] = None) -> Checked:
        """`run(kind, job)`, if given, checks the job elsewhere (Checker: in a process); the
        fixes' edits are then made here when first asked (Checked.ready)."""
        from tfmigrate import api
        from tfmigrate.workspace.config import ConfigError

        data = _encode(text)
        try:
            job = self.job(uri_to_path(uri), data)
        except ConfigError as error:
            return Checked({uri: []}, {uri: text}, error=str(error))
        if job is None:
            return Checked({uri: []}, {uri: text})

        def fix_all(unsafe: bool):
            outcome = api.fix(job, unsafe)
            return {uri: _decode(outcome.output, text)} if outcome.changed else None

        if run is not None:
            return Checked({uri: run("lint", job)}, {uri: text}, lint_job=job, fix_all_source=fix_all)
        linted = api.lint(job)
        return Checked({uri: linted.findings}, {uri: text}, linted=linted, fix_all_source=fix_all)

    def check_notebook(self, cells: Sequence[Tuple[str, str]], notebook_uri: str,
                       run: Optional[Callable[[str, object], List[Finding]]] = None) -> Checked:
        """`cells`: (uri, text) of the notebook's code cells, in order. Findings are per cell (all
        cells form one module, as on the command line); the fix-all actions edit every cell
        they change; a single finding's fix is not offered in a notebook (its noqa is)."""
        from dataclasses import replace

        from tfmigrate import api
        from tfmigrate.workspace.config import ConfigError

        checked = Checked({uri: [] for uri, _ in cells}, dict(cells))
        try:
            job = self.job(uri_to_path(notebook_uri), _notebook_json(cells))
        except ConfigError as error:
            checked.error = str(error)
            return checked
        if job is None or not cells:
            return checked
        for finding in (run("check", job) if run is not None else api.check(job).findings):
            if finding.cell is not None and 1 <= finding.cell <= len(cells):
                checked.findings[cells[finding.cell - 1][0]].append(replace(finding, cell=None, file_range=None))

        def fix_all(unsafe: bool):
            outcome = api.fix(job, unsafe)
            if not outcome.changed:
                return None
            sources = [_cell_text(c) for c in json.loads(outcome.output.decode("utf-8"))["cells"]]
            return {uri: new for (uri, _), new in zip(cells, sources)}

        checked.fix_all_source = fix_all
        return checked


def _notebook_json(cells: Sequence[Tuple[str, str]]) -> bytes:
    notebook = {
        "cells": [{"cell_type": "code", "execution_count": None, "metadata": {}, "outputs": [], "source": text}
                  for _, text in cells],
        "metadata": {}, "nbformat": 4, "nbformat_minor": 5,
    }
    return json.dumps(notebook).encode("utf-8")


def _cell_text(cell: dict) -> str:
    source = cell.get("source", "")
    return "".join(source) if isinstance(source, list) else source


# --- when to check: the newest text, one check at a time ------------------------------------------

# Seconds a document must stay unchanged before it is checked. The changes of a burst (a paste, a
# client that sends every keystroke, a macro, an editor's undo of many steps) come milliseconds
# apart and are checked once, after the last; a typist's keystrokes come 100 ms or more apart, so
# a pause is seen at once. A shorter wait would start checks the next change makes stale (each
# one stopped, or where none can be stopped, waited for); a longer one adds to every diagnostic's
# delay.
DEBOUNCE = 0.1

_log = logging.getLogger(__name__)


@dataclass(eq=False)
class _State:
    """One document's checks (see Scheduler)."""

    generation: int = 0  # bumped at every change of the text
    changed_at: float = 0.0  # time.monotonic() of the last change
    timer: Optional[asyncio.TimerHandle] = None  # the check scheduled, not started
    running: Optional[asyncio.Future] = None  # the check in the worker
    fresh: Optional[int] = None  # the generation `result` is about
    result: Any = None
    waiters: List[asyncio.Future] = field(default_factory=list)  # code actions waiting for a fresh result


class Scheduler:
    """When each document is checked. Keys are documents' (or notebooks') uris; all methods run
    on the asyncio loop that reads the messages, except `compute`, which runs in `executor`.

    - `changed(key)`: the document has a new text; it is checked `delay` seconds after its last
      change (DEBOUNCE: a burst is checked once).
    - When the check starts, `snapshot(key)` takes the document's text as it is then (on the
      loop, so the newest) and `compute(snapshot)` runs in `executor`, while the loop goes on
      reading changes. Per document at most one check runs, and at most one more is scheduled.
    - A change while the check runs calls `cancel(key)` (Checker stops it); whether stopped or
      not, its result is dropped (never published: its version is stale) and the newest text is
      checked next, DEBOUNCE after its last change. A check of the current text ends with
      `publish(key, result)`, on the loop.
    - `await latest(key)`: the result for the text the document has now (waiting for its check,
      scheduled or running): what a code action answers from.

    Where a check runs (`Checker`), measured with bench/server_latency.py (typing 5 characters a
    second into its 1,200-line / 63 KB TF1 file, the client holding each change 150 ms: the time
    from the last keystroke to the final diagnostics, median of 3 in one run; the figures in
    brackets are other runs, while other work kept the 2-core machine busier, up to load 6 and a
    check of that file at 0.8-1.1 s):
    - In a thread of the server's process: the loop still reads every message while a check
      holds the GIL (CPython hands it over every 5 ms), but a stale check cannot be stopped, and
      the newest text waits for it to end (half a check on average): 0.93 s (1.00; 1.47 s).
    - In a new Python process per check, killed when stale: each costs about 0.5 s of CPU to
      start (imports, tables), paid at every keystroke while typing: slower than the thread
      (1.82 s in the run where the thread took 1.47 s).
    - In a child forked, per check, from a process that loaded the checker once (what Checker
      does): a fork costs milliseconds, a stale check is killed at once and its CPU is not
      spent, the job and the findings cross the pipe in a few milliseconds, and a check costs
      about 10% more than in the server's process (the child's first writes copy the pages it
      shares with its parent; gc.freeze() there keeps the collector from adding to them):
      0.73 s (0.83; 1.13 s). The quick fixes' edits (parsed trees, which do not cross processes)
      are made in the server's process, when a code action first asks for them.
    So: a forked child where os.fork exists, the worker thread elsewhere.
    """

    def __init__(self, snapshot: Callable[[str], Any], compute: Callable[[Any], Any],
                 publish: Callable[[str, Any], None], executor, delay: float = DEBOUNCE,
                 cancel: Optional[Callable[[str], None]] = None):
        self.snapshot, self.compute, self.publish = snapshot, compute, publish
        self.executor = executor
        self.cancel = cancel  # stops the running check of a key, if it can (its result is stale)
        self.delay = delay
        self.states: Dict[str, _State] = {}

    def __contains__(self, key: str) -> bool:
        return key in self.states

    def changed(self, key: str, delay: Optional[float] = None) -> None:
        """The document `key` has a new text (or is new): check it, `delay` seconds from now."""
        state = self.states.setdefault(key, _State())
        state.generation += 1
        state.changed_at = time.monotonic()
        if state.running is not None and self.cancel is not None:
            self.cancel(key)
        self._arm(key, state, self.delay if delay is None else delay)

    def forget(self, key: str) -> None:
        """The document is closed: nothing more is checked or published for it."""
        state = self.states.pop(key, None)
        if state is not None:
            if state.timer is not None:
                state.timer.cancel()
            if state.running is not None and self.cancel is not None:
                self.cancel(key)
            self._settle(state, None)

    async def latest(self, key: str) -> Any:
        """The result of checking the document's current text (None for a document not tracked)."""
        state = self.states.get(key)
        if state is None:
            return None
        if state.fresh == state.generation:
            return state.result
        waiter = asyncio.get_running_loop().create_future()
        state.waiters.append(waiter)
        if state.running is None and state.timer is None:
            self._start(key, state)
        # else the check scheduled, after the debounce: an editor that asks for code actions at
        # every keystroke (for its light bulb) must not turn each keystroke into a check
        return await waiter

    def _arm(self, key: str, state: _State, delay: float) -> None:
        if state.running is not None:
            return  # scheduled again when the running check ends
        if state.timer is not None:
            state.timer.cancel()
        state.timer = asyncio.get_running_loop().call_later(max(delay, 0.0), self._start, key, state)

    def _start(self, key: str, state: _State) -> None:
        state.timer = None
        if self.states.get(key) is not state or state.running is not None:
            return
        generation = state.generation
        snapshot = self.snapshot(key)
        if snapshot is None:  # nothing to check (a document that is not Python)
            state.fresh, state.result = generation, None
            self._settle(state, None)
            return
        try:
            state.running = asyncio.get_running_loop().run_in_executor(self.executor, self.compute, snapshot)
        except RuntimeError:  # the executor is shut down: the server is stopping
            self._settle(state, None)
            return
        state.running.add_done_callback(lambda future: self._finished(key, state, generation, future))

    def _finished(self, key: str, state: _State, generation: int, future: asyncio.Future) -> None:
        state.running = None
        if self.states.get(key) is not state:  # closed meanwhile
            return
        if generation != state.generation:  # stale: dropped; the newest text is next
            self._arm(key, state, state.changed_at + self.delay - time.monotonic())
            return
        result = None
        if future.cancelled():
            pass
        elif future.exception() is not None and not isinstance(future.exception(), Cancelled):
            error = future.exception()
            _log.error("tfmigrate: checking %s failed", key, exc_info=(type(error), error, error.__traceback__))
        else:
            result = future.result()
        state.fresh, state.result = generation, result
        if result is not None:
            self.publish(key, result)
        self._settle(state, result)

    @staticmethod
    def _settle(state: _State, result: Any) -> None:
        waiters, state.waiters = state.waiters, []
        for waiter in waiters:
            if not waiter.done():
                waiter.set_result(result)


class Cancelled(Exception):
    """The check was stopped: its document changed, or the server is stopping."""


class Checker:
    """Checks run in a separate process (tfmigrate/frontends/server_checker.py), so that a
    stale one is stopped at once: that process loaded the checker once and forks a child for
    each check, and a byte on a pipe kills the child. The server's process keeps what makes a
    job (configuration, the workspaces' cross-file facts) and sends the job; the findings come
    back. Without os.fork (Windows) there is no such process and checks run in the thread.

    `run` is called from one thread (the server's worker), `cancel` from another (the loop)."""

    def __init__(self, command: Optional[List[str]] = None):
        self.command = command or [sys.executable, "-m", "tfmigrate.frontends.server_checker"]
        self.available = hasattr(os, "fork")
        self._lock = threading.Lock()
        self._process: Optional[subprocess.Popen] = None
        self._cancel: Optional[int] = None  # the write end of the cancel pipe
        self._busy: Optional[str] = None  # the key whose check runs
        self._closed = False

    def _ensure(self) -> subprocess.Popen:
        if self._process is None or self._process.poll() is not None:
            self._stop()
            inward, outward = os.pipe()
            try:
                self._process = subprocess.Popen(self.command + [str(inward)], pass_fds=(inward,), env=_child_env(),
                                                 stdin=subprocess.PIPE, stdout=subprocess.PIPE)
            finally:
                os.close(inward)
            os.set_blocking(outward, False)
            self._cancel = outward
        return self._process

    def start(self) -> None:
        """Start the process now, so that it is ready for the first check."""
        if self.available:
            with self._lock:
                self._ensure()

    def run(self, key: str, kind: str, job: object) -> List[Finding]:
        """The job's findings (kind "lint" or "check", see server_checker); Cancelled when it was
        stopped; RuntimeError with its traceback when the check failed."""
        from tfmigrate.frontends import server_checker

        with self._lock:
            if self._closed:
                raise Cancelled()
            process = self._ensure()
            self._busy = key
        reply = None
        try:
            server_checker.write(process.stdin, (kind, job))
            reply = server_checker.read(process.stdout)
        except (OSError, ValueError, EOFError):  # the process died (or was stopped by close)
            pass
        with self._lock:
            self._busy = None
            if reply is None:
                self._stop()  # started again at the next check
                if self._closed:
                    raise Cancelled()
                raise RuntimeError("the checking process ended")
        status, value = reply
        if status == "cancelled":
            raise Cancelled()
        if status != "ok":
            raise RuntimeError(value)
        return value

    def cancel(self, key: str) -> None:
        """Stop the check of `key`, if one runs (its run() raises Cancelled)."""
        with self._lock:
            if self._busy == key and self._cancel is not None:
                try:
                    os.write(self._cancel, b"c")
                except OSError:  # full (cancels are pending anyway) or closed
                    pass

    def close(self) -> None:
        with self._lock:
            self._closed = True
            self._stop()

    def _stop(self) -> None:
        if self._cancel is not None:
            os.close(self._cancel)
            self._cancel = None
        process, self._process = self._process, None
        if process is not None:
            for stream in (process.stdin, process.stdout):
                try:
                    stream.close()
                except OSError:
                    pass
            try:
                process.wait(timeout=5)  # it exits at the end of its input
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


def _child_env() -> Dict[str, str]:
    """The environment of the checking process: this tfmigrate's folder first on its path, so it
    imports the same tfmigrate as the server, however the server found it."""
    import tfmigrate

    root = os.path.dirname(os.path.dirname(os.path.abspath(tfmigrate.__file__)))
    path = os.environ.get("PYTHONPATH")
    return {**os.environ, "PYTHONPATH": root + (os.pathsep + path if path else "")}


# --- the protocol --------------------------------------------------------------------------------

def _checkable(uri: str, language_id: Optional[str]) -> bool:
    """A Python document the server checks (a notebook's cells are checked with their notebook)."""
    if uri.endswith(".ipynb") or uri_to_path(uri) is None and not uri.startswith("untitled:"):
        return False
    return language_id in (None, "python") or uri.endswith(".py")


def serve() -> None:  # pragma: no cover - run as a process by the tests
    import atexit
    from concurrent.futures import ThreadPoolExecutor

    from lsprotocol import types
    from pygls.lsp.server import LanguageServer

    linter = Linter()
    server = LanguageServer(
        NAME, __version__,
        text_document_sync_kind=types.TextDocumentSyncKind.Incremental,
        notebook_document_sync=types.NotebookDocumentSyncOptions(
            notebook_selector=[types.NotebookDocumentFilterWithCells(
                cells=[types.NotebookCellLanguage(language="python")], notebook="*")],
        ),
    )
    # The one thread that makes the jobs, waits for their checks and builds code actions: all
    # that touches `linter`. The checks themselves run in the checker's process.
    worker = ThreadPoolExecutor(max_workers=1, thread_name_prefix="tfmigrate-check")
    checker = Checker()
    checker.start()
    atexit.register(checker.close)
    notebooks: set = set()  # the keys that are notebooks
    owner: Dict[str, str] = {}  # a document's or a notebook cell's uri -> the key it is checked under
    shown_errors: set = set()

    def encoding() -> str:
        kind = server.workspace.position_encoding
        value = getattr(kind, "value", kind) or "utf-16"
        return str(value)

    def to_range(text: str, starts: List[int], finding: Finding, enc: str) -> "types.Range":
        start = _offset(starts, text, finding.line, finding.column)
        end = max(_offset(starts, text, finding.end_line, finding.end_column), start)
        a, b = to_position(text, starts, start, enc), to_position(text, starts, end, enc)
        return types.Range(types.Position(**a), types.Position(**b))

    def diagnostic(text: str, starts: List[int], finding: Finding, enc: str) -> "types.Diagnostic":
        severity = types.DiagnosticSeverity.Error if finding.severity == "error" else types.DiagnosticSeverity.Warning
        fix = None if finding.fix is None else {"applicability": finding.fix.applicability,
                                                 "description": finding.fix.description}
        message = finding.message + (" (migration debt: runs through tf.compat.v1)" if finding.kind == "debt" else "")
        return types.Diagnostic(
            range=to_range(text, starts, finding, enc), message=message, severity=severity, code=finding.rule,
            source=NAME, data={"name": finding.name, "fix": fix, "kind": finding.kind},
        )

    def snapshot(key: str):
        """On the loop: the document's (or notebook's code cells') newest text, for compute."""
        if key in notebooks:
            notebook = server.workspace.get_notebook_document(notebook_uri=key)
            if notebook is None:
                return None
            cells, versions = [], {}
            for cell in notebook.cells:
                if cell.kind != types.NotebookCellKind.Code:
                    continue
                document = server.workspace.get_text_document(cell.document)
                if getattr(document, "language_id", "python") not in (None, "python"):
                    continue
                cells.append((cell.document, document.source))
                versions[cell.document] = document.version
            return key, True, cells, versions, encoding()
        document = server.workspace.get_text_document(key)
        if not _checkable(key, getattr(document, "language_id", "python")):
            return None
        return key, False, [(key, document.source)], {key: document.version}, encoding()

    def compute(snap) -> Tuple[Checked, Dict[str, Optional[int]], Dict[str, list]]:
        """In the worker: the check, and its diagnostics (line starts computed once per text)."""
        key, is_notebook, cells, versions, enc = snap
        run = (lambda kind, job: checker.run(key, kind, job)) if checker.available else None
        result = linter.check_notebook(cells, key, run) if is_notebook else linter.check_python(key, cells[0][1], run)
        diagnostics = {}
        for uri, found in result.findings.items():
            text = result.texts[uri]
            starts = line_starts(text)
            diagnostics[uri] = [diagnostic(text, starts, f, enc) for f in found]
        return result, versions, diagnostics

    def publish(key: str, outcome) -> None:
        result, versions, diagnostics = outcome
        if result.error and result.error not in shown_errors:
            shown_errors.add(result.error)
            server.window_show_message(types.ShowMessageParams(types.MessageType.Error, f"tfmigrate: {result.error}"))
        for uri, found in diagnostics.items():
            owner[uri] = key
            server.text_document_publish_diagnostics(types.PublishDiagnosticsParams(
                uri=uri, diagnostics=found, version=versions.get(uri),
            ))

    scheduler = Scheduler(snapshot, compute, publish, worker, cancel=checker.cancel)

    def clear(uris: Sequence[str]) -> None:
        for uri in uris:
            owner.pop(uri, None)
            server.text_document_publish_diagnostics(types.PublishDiagnosticsParams(uri=uri, diagnostics=[]))

    def forget_files() -> None:
        """The files on disk changed: the workspaces read them again, after the checks queued."""
        try:
            worker.submit(linter.forget)
        except RuntimeError:  # shut down
            pass

    @server.feature(types.TEXT_DOCUMENT_DID_OPEN)
    def did_open(params: types.DidOpenTextDocumentParams) -> None:
        uri = params.text_document.uri
        if _checkable(uri, params.text_document.language_id):
            owner[uri] = uri
            scheduler.changed(uri, delay=0.0)

    @server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
    def did_change(params: types.DidChangeTextDocumentParams) -> None:
        if params.text_document.uri in scheduler:  # pygls has applied the change: only record it
            scheduler.changed(params.text_document.uri)

    @server.feature(types.TEXT_DOCUMENT_DID_SAVE)
    def did_save(params: types.DidSaveTextDocumentParams) -> None:
        forget_files()  # the other files' facts may change with this one's bytes on disk
        if params.text_document.uri in scheduler:
            scheduler.changed(params.text_document.uri)

    @server.feature(types.TEXT_DOCUMENT_DID_CLOSE)
    def did_close(params: types.DidCloseTextDocumentParams) -> None:
        uri = params.text_document.uri
        if uri in scheduler:
            scheduler.forget(uri)
            clear([uri])

    @server.feature(types.NOTEBOOK_DOCUMENT_DID_OPEN)
    def notebook_open(params: types.DidOpenNotebookDocumentParams) -> None:
        notebooks.add(params.notebook_document.uri)
        for cell in params.cell_text_documents:
            owner[cell.uri] = params.notebook_document.uri
        scheduler.changed(params.notebook_document.uri, delay=0.0)

    @server.feature(types.NOTEBOOK_DOCUMENT_DID_CHANGE)
    def notebook_change(params: types.DidChangeNotebookDocumentParams) -> None:
        if params.notebook_document.uri in scheduler:
            scheduler.changed(params.notebook_document.uri)

    @server.feature(types.NOTEBOOK_DOCUMENT_DID_SAVE)
    def notebook_save(params: types.DidSaveNotebookDocumentParams) -> None:
        forget_files()
        if params.notebook_document.uri in scheduler:
            scheduler.changed(params.notebook_document.uri)

    @server.feature(types.NOTEBOOK_DOCUMENT_DID_CLOSE)
    def notebook_close(params: types.DidCloseNotebookDocumentParams) -> None:
        key = params.notebook_document.uri
        scheduler.forget(key)
        notebooks.discard(key)
        cells = [c.uri for c in params.cell_text_documents]
        clear(cells + [uri for uri, of in owner.items() if of == key and uri not in cells])

    @server.feature(types.WORKSPACE_DID_CHANGE_WATCHED_FILES)
    def files_changed(params: types.DidChangeWatchedFilesParams) -> None:
        shown_errors.clear()  # a configuration may have changed: check every open document again
        forget_files()
        for key in list(scheduler.states):
            if key not in notebooks:
                scheduler.changed(key)

    @server.feature(types.SHUTDOWN)
    def shutdown(*_) -> None:
        worker.shutdown(wait=False, cancel_futures=True)
        checker.close()

    def actions(result: Checked, uri: str, span: "types.Range", only: List[str], enc: str):
        """In the worker: the code actions for `span` of the text `result` checked."""
        result.ready()
        text = result.texts[uri]
        starts = line_starts(text)
        first = from_position(text, starts, {"line": span.start.line, "character": span.start.character}, enc)
        last = from_position(text, starts, {"line": span.end.line, "character": span.end.character}, enc)
        wanted = lambda kind: not only or any(kind == k or kind.startswith(k + ".") for k in only)  # noqa: E731
        found: List[Action] = []
        if wanted("quickfix"):
            for finding in result.findings.get(uri, []):
                lo = _offset(starts, text, finding.line, 1)  # the request's range meets the finding's lines
                hi = _offset(starts, text, finding.end_line + 1, 1)
                if lo <= last and first <= hi:
                    found.extend(result.actions(uri, finding))
        for unsafe in (False, True):
            action = result.fix_all(unsafe) if wanted(FIX_ALL_KIND if not unsafe else "quickfix") else None
            if action is not None:
                found.append(action)
        out = []
        for action in found:
            changes = {}
            for target, edits in action.edits.items():
                target_text = result.texts[target]
                target_starts = line_starts(target_text)
                changes[target] = [
                    types.TextEdit(
                        range=types.Range(
                            types.Position(**to_position(target_text, target_starts, a, enc)),
                            types.Position(**to_position(target_text, target_starts, b, enc)),
                        ),
                        new_text=new,
                    )
                    for a, b, new in edits
                ]
            diagnostics = [diagnostic(text, starts, action.finding, enc)] if action.finding is not None else None
            out.append(types.CodeAction(
                title=action.title, kind=action.kind, edit=types.WorkspaceEdit(changes=changes),
                diagnostics=diagnostics, is_preferred=action.preferred or None,
            ))
        return out

    @server.feature(
        types.TEXT_DOCUMENT_CODE_ACTION,
        types.CodeActionOptions(code_action_kinds=[types.CodeActionKind.QuickFix, FIX_ALL_KIND],
                                resolve_provider=False),
    )
    async def code_action(params: types.CodeActionParams):
        uri = params.text_document.uri
        key = owner.get(uri)
        if key is None:
            return []
        for _ in range(3):  # the result for the text the document has now, never an older one's
            outcome = await scheduler.latest(key)
            if outcome is None or uri not in outcome[0].texts:
                return []
            result = outcome[0]
            if server.workspace.get_text_document(uri).source == result.texts[uri]:
                break
        else:
            return []  # changed at every try: the client asks again
        only = [str(getattr(k, "value", k)) for k in (params.context.only or [])]
        try:
            return await asyncio.get_running_loop().run_in_executor(
                worker, actions, result, uri, params.range, only, encoding())
        except RuntimeError:  # shut down
            return []

    server.start_io()


def main() -> None:  # pragma: no cover
    serve()
