"""Runs check or fix over many files: a process pool (`--jobs`), results in input order, the
per-file cache (workspace/cache.py), signals held while a file is written, and the report of an
interrupted run. What to run comes from workspace/plan.py.
"""
from __future__ import annotations

import json
import os
import re
import sys
import tokenize
from dataclasses import dataclass, field
from io import BytesIO
from typing import Callable, Iterable, Iterator, List, Optional, Sequence

from tfmigrate.workspace import plan
from tfmigrate.workspace.cache import Cache, fingerprint
from tfmigrate.workspace.config import Settings
from tfmigrate.atomic import TEMP_SUFFIX, NotWritten, write_atomic
from tfmigrate.workspace.files import display_path, read_regular
from tfmigrate.workspace.plan import Task
from tfmigrate.findings import Finding


@dataclass
class Outcome:
    shown: str
    findings: List[Finding] = field(default_factory=list)
    text: Optional[str] = None  # the source, kept only when there is something to show
    applied: int = 0
    changed: bool = False
    diff: str = ""
    output: Optional[bytes] = None  # fixed bytes, for stdin mode
    requires: tuple = ()  # packages the applied fixes make the code need
    fixed_rules: tuple = ()  # the rule of each fix applied, for --show-fixes


def source_text(data: bytes) -> str:
    try:
        encoding, _ = tokenize.detect_encoding(BytesIO(data).readline)
        return data.decode(encoding, errors="replace")
    except (SyntaxError, LookupError):
        return data.decode("utf-8", errors="replace")


def _unreadable(task: Task, error: OSError) -> Outcome:
    from tfmigrate.catalogue import catalogue

    info = catalogue()["TFM001"]
    reason = error.strerror or type(error).__name__
    finding = Finding(
        "TFM001", info.name, task.shown, 1, 1, 1, 1, info.severity,
        f"Cannot read this file: {reason}. It was skipped; the other files are still checked.",
    )
    return Outcome(task.shown, [finding])


def too_large(task: Task, data: bytes) -> Optional[Outcome]:
    """TFM001 for a file over max-file-size that could have findings, skipped before parsing:
    libcst takes 0.7 to 1 GB of memory and seconds per MB of source (bench/large_files.py)."""
    if not task.max_size or len(data) <= task.max_size:
        return None
    size = _code_size(task, data)
    if size <= task.max_size:
        return None
    from tfmigrate.catalogue import catalogue
    from tfmigrate.core.engine import might_use_tensorflow

    if not might_use_tensorflow(data, task.shims):
        return None  # skipped unparsed anyway: it cannot have a finding
    info = catalogue()["TFM001"]
    what = "its code cells hold" if task.shown.endswith(".ipynb") else "it is"
    finding = Finding(
        "TFM001", info.name, task.shown, 1, 1, 1, 1, info.severity,
        f"Not checked: {what} {size_text(size)}, over the max-file-size limit of {size_text(task.max_size)} "
        f"(parsing takes up to 1 GB of memory per MB). Raise `max-file-size` in [tool.tfmigrate] or pass "
        "--max-file-size to check it, or exclude it; the other files are still checked.",
    )
    return Outcome(task.shown, [finding])


def size_text(size: int) -> str:
    for unit, scale in (("GB", 10**9), ("MB", 10**6), ("KB", 10**3)):
        if size >= scale:
            return f"{size / scale:.1f}".rstrip("0").rstrip(".") + f" {unit}"
    return f"{size} bytes"


# A string literal of 1,000 bytes or more on one line: one token, however long (a protobuf
# descriptor, an embedded blob), which costs the parser next to nothing.
_LONG_STRING = re.compile(rb"""(?<=[=(\[{,:\s])[bBrRuU]{0,2}(?:'(?:[^'\\\n]|\\.){1000,}'|"(?:[^"\\\n]|\\.){1000,}")""")


def _code_size(task: Task, data: bytes) -> int:
    """What the parser would work through: the bytes less long string literals, or for a
    notebook its code cells (outputs cost nothing)."""
    if task.shown.endswith(".ipynb"):
        try:
            cells = json.loads(data).get("cells", [])
            data = "".join("".join(c["source"]) if isinstance(c.get("source"), list) else c.get("source") or ""
                           for c in cells if isinstance(c, dict) and c.get("cell_type") == "code").encode("utf-8")
        except (ValueError, TypeError, AttributeError, KeyError):
            return 0  # not a notebook: the notebook reader says so
    return len(data) - sum(len(m.group()) for m in _LONG_STRING.finditer(data))


def _not_written(task: Task, error: OSError, fixes: int) -> Finding:
    """TFM001 for a fixed file that `fix` did not write: refused (atomic.NotWritten) or failed."""
    from tfmigrate.catalogue import catalogue

    info = catalogue()["TFM001"]
    left = f"The file was left as it was ({fixes} fix{'es' * (fixes != 1)} not applied)."
    if isinstance(error, NotWritten):
        message = f"Not written: {error.strerror}. {left}"
    else:
        message = f"Cannot write the fixed file: {error.strerror or error}. {left}"
    return Finding("TFM001", info.name, task.shown, 1, 1, 1, 1, info.severity, message)


def process(task: Task) -> Outcome:
    """Check or fix one file. Runs in a worker process; never raises for a bad file."""
    # --- notebooks: cell by cell (tfmigrate/workspace/notebooks.py); the rest of the flow is shared ---
    if task.shown.endswith(".ipynb"):
        from tfmigrate.workspace import notebooks

        outcome = _process_file(task, notebooks.check_notebook, notebooks.fix_notebook)
        outcome.text = None  # findings give the line within a cell: a line of the JSON would mislead
        return outcome
    return _process_file(task)


def _from_cache(task: Task, data: bytes, cache: Optional["Cache"], entry_key: str) -> Optional[Outcome]:
    """The cached outcome when the file is unchanged (and, for fix, has nothing to fix)."""
    if cache is None:
        return None
    cached = cache.get(task.path, entry_key)
    if cached is None or not (task.mode == "check" or not _fixable(cached, task.unsafe)):
        return None
    findings = [_moved(f, task.shown) for f in cached]
    return Outcome(task.shown, findings, source_text(data) if findings else None)


def cached_outcome(task: Task) -> Optional[Outcome]:
    """A cache hit answered without a worker (which would cost a round trip of the source);
    None for anything else (notebooks, stdin, misses, unreadable files: a worker handles them)."""
    if not (task.cache_dir and task.key) or task.data is not None or task.shown.endswith(".ipynb"):
        return None
    try:
        data = read_regular(task.path)
    except OSError:
        return None
    if task.max_size and len(data) > task.max_size:
        return None
    return _from_cache(task, data, Cache(task.cache_dir), fingerprint(data, task.key))


def _process_file(task: Task, check_source=None, fix_source=None) -> Outcome:
    if task.data is not None:
        data = task.data
    else:
        try:
            data = read_regular(task.path)
        except OSError as error:
            return _unreadable(task, error)
    over = too_large(task, data)
    if over is not None:
        return over
    cache = Cache(task.cache_dir) if task.cache_dir and task.key and task.data is None else None
    key = fingerprint(data, task.key) if cache else ""
    hit = _from_cache(task, data, cache, key)
    if hit is not None:
        return hit
    from tfmigrate.core import engine  # imported only on a cache miss

    check_source = check_source or engine.check_source
    fix_source = fix_source or engine.fix_source

    if task.mode == "check":
        findings = [f.portable() for f in check_source(data, task.shown, task.codes, **engine_facts(task))]
        if cache:
            cache.put(task.path, key, findings)
        return Outcome(task.shown, findings, source_text(data) if findings else None)

    result = fix_source(data, task.shown, task.codes, unsafe=task.unsafe, **engine_facts(task))
    findings = [f.portable() for f in result.findings]
    outcome = Outcome(task.shown, findings, applied=result.applied, requires=getattr(result, "requires", ()),
                      fixed_rules=tuple(getattr(result, "fixed_rules", ())))
    final = data
    if result.fixed is not None:
        outcome.changed = True
        if task.diff:
            import difflib  # here: start-up time counts on every cached run

            outcome.diff = "".join(
                difflib.unified_diff(
                    source_text(data).splitlines(keepends=True),
                    source_text(result.fixed).splitlines(keepends=True),
                    fromfile=f"a/{task.shown}",
                    tofile=f"b/{task.shown}",
                )
            )
        elif task.data is not None:
            outcome.output = result.fixed
            final = result.fixed
        else:
            _hold()  # SIGINT/SIGTERM wait until this write is done and reported
            if _on_write is not None:
                _on_write()
            try:
                write_atomic(task.path, result.fixed, expect=data)  # not over an edit saved meanwhile
                final = result.fixed
            except OSError as error:
                findings = [f.portable() for f in check_source(data, task.shown, task.codes, **engine_facts(task))]
                outcome.findings = [_not_written(task, error, outcome.applied)] + findings
                outcome.changed = False
                outcome.applied = 0
                outcome.fixed_rules = ()
    elif task.data is not None:
        outcome.output = data
    if cache and final is not data and not task.diff:
        cache.put(task.path, fingerprint(final, task.key), findings)
    if findings:
        outcome.text = source_text(data if task.diff else final)
    return outcome


def engine_facts(task: Task) -> dict:
    """What the engine is told about the file beyond its bytes (only what is set, so notebook
    entry points need not take every fact)."""
    facts = {"shims": task.shims}
    if task.graph_importer is not None:
        facts["imported_by"] = task.graph_importer
    if task.native:
        facts["native"] = True
    return facts


def _moved(finding: Finding, shown: str) -> Finding:
    if finding.path == shown:
        return finding
    from dataclasses import replace

    return replace(finding, path=shown)


def _fixable(findings: Sequence[Finding], unsafe: bool) -> bool:
    return any(f.fix is not None and (unsafe or f.fix.applicability == "safe") for f in findings)


def run(
    tasks: Sequence[Task],
    jobs: int = 1,
    on_result: Optional[Callable[[Outcome], None]] = None,
) -> List[Outcome]:
    """Process tasks, in parallel when worth it; outcomes come back in task order.

    Ctrl-C or SIGTERM stops the run within about a second: the workers are stopped (none is left
    behind), a file being written is finished first (every file is untouched or completely
    fixed), and what was and was not written is printed before KeyboardInterrupt goes on."""
    outcomes: List[Outcome] = []
    ledger = _Ledger(tasks)
    restore = _defer_signals()
    try:
        for outcome in _iterate(tasks, jobs, ledger):
            outcomes.append(outcome)
            _release()
            if on_result:
                on_result(outcome)
    except KeyboardInterrupt:
        _ignore_signals()  # a second Ctrl-C must not cut the report short
        sys.stderr.write(ledger.report())
        sys.stderr.flush()
        raise
    finally:
        _release(reraise=False)
        restore()
    return outcomes


class _Ledger:
    """What the run has done so far, for the report of an interrupted run."""

    def __init__(self, tasks: Sequence[Task]):
        self.tasks = tasks
        self.done: List[Outcome] = []
        self.unsure: List[str] = []  # being written by a worker that had to be killed

    def add(self, outcome: Outcome) -> Outcome:
        self.done.append(outcome)
        return outcome

    def report(self) -> str:
        total = len(self.tasks)
        writes = bool(self.tasks) and self.tasks[0].mode == "fix" and not self.tasks[0].diff \
            and self.tasks[0].data is None
        if not writes:
            return (f"tfmigrate: interrupted after {len(self.done)} of {total} file{'s' * (total != 1)}; "
                    "nothing was written and no report was made.\n")
        written = [o.shown for o in self.done if o.changed]
        untouched = total - len(written) - len(self.unsure)
        lines = [f"tfmigrate: interrupted; {len(written)} file{'s were' if len(written) != 1 else ' was'} fixed "
                 f"and written in full, {untouched} left untouched. No file is half written."]
        if written:
            lines.append("Written: " + _names(written))
        if self.unsure:
            lines.append("Being written when the run stopped (each is either untouched or completely fixed): "
                         + _names(self.unsure))
        return "\n".join(lines) + "\n"


def _names(names: Sequence[str], shown: int = 10) -> str:
    more = len(names) - shown
    return ", ".join(names[:shown]) + (f" and {more} more" if more > 0 else "")


def _iterate(tasks: Sequence[Task], jobs: int, ledger: Optional[_Ledger] = None) -> Iterator[Outcome]:
    ledger = ledger or _Ledger(tasks)
    if jobs <= 1 or len(tasks) < 4:
        for task in tasks:
            yield ledger.add(process(task))
        return
    hits = {i: hit for i, hit in enumerate(map(cached_outcome, tasks)) if hit is not None}
    misses = [i for i in range(len(tasks)) if i not in hits]
    if len(misses) < 4:
        for i in range(len(tasks)):
            yield ledger.add(hits[i] if i in hits else process(tasks[i]))
        return
    computed = _pooled([tasks[i] for i in misses], jobs, ledger)
    for i in range(len(tasks)):
        yield ledger.add(hits[i] if i in hits else next(computed))


# --- signals: a write and the report of it happen together, or neither does ---------------
_held = {"depth": 0, "pending": None}


def _hold() -> None:
    """From here until `_release`, SIGINT/SIGTERM wait (a file being written is finished and
    reported). Only handlers installed by tfmigrate (run, the workers) honour it."""
    _held["depth"] += 1


def _release(reraise: bool = True) -> None:
    pending, _held["depth"], _held["pending"] = _held["pending"], 0, None
    if pending is not None and reraise:
        pending()


def _defer_signals() -> Callable[[], None]:
    """In the main thread, SIGINT and SIGTERM raise KeyboardInterrupt, except while a write is
    held; returns what restores the previous handlers."""
    import signal
    import threading

    if threading.current_thread() is not threading.main_thread():
        return lambda: None

    def interrupt() -> None:
        raise KeyboardInterrupt

    def handler(signum, frame) -> None:
        if _held["depth"]:
            _held["pending"] = interrupt
        else:
            interrupt()

    names = [n for n in ("SIGINT", "SIGTERM") if hasattr(signal, n)]
    previous = {n: signal.signal(getattr(signal, n), handler) for n in names}
    _held.update(depth=0, pending=None)

    def restore() -> None:
        for name, old in previous.items():
            signal.signal(getattr(signal, name), old)

    return restore


def _ignore_signals() -> None:
    import signal
    import threading

    if threading.current_thread() is threading.main_thread():
        for name in ("SIGINT", "SIGTERM"):
            if hasattr(signal, name):
                signal.signal(getattr(signal, name), signal.SIG_IGN)


# --- the worker pool ------------------------------------------------------------------------
# Not concurrent.futures: a worker that dies (a native crash, the OOM killer) costs only its own
# file, reported as TFM000, and a new worker takes its place; the parent knows which file each
# worker holds and whether it is writing it, so an interrupted run says what was written.
GRACE = 1.0  # seconds a stopped worker has to finish the file it is writing
_on_write: Optional[Callable[[], None]] = None  # set in a worker: tells the parent a write begins


class _Worker:
    def __init__(self, context, parent: int):
        self.conn, child = context.Pipe(duplex=True)
        self.process = context.Process(target=_serve, args=(child, parent), daemon=True, name="tfmigrate-worker")
        self.process.start()
        child.close()
        self.index: Optional[int] = None  # the task it holds
        self.writing = False

    def give(self, index: int, task: Task) -> bool:
        self.index, self.writing = index, False
        try:
            self.conn.send(task)
            return True
        except (OSError, ValueError):
            return False

    def receive(self) -> Optional[Outcome]:
        """The outcome of its task, or None if it died without one (`writing` tells whether it
        had begun writing). Returns after a message or the worker's end."""
        while True:
            try:
                kind, value = self.conn.recv()
            except (EOFError, OSError):
                return None
            if kind == "writing":
                self.writing = True
                if not self.conn.poll(0):
                    return _WAITING
                continue
            return value

    def close(self, kill: bool = False) -> None:
        if kill and self.process.is_alive():
            self.process.kill()
        self.process.join(timeout=5)
        self.conn.close()


_WAITING = Outcome("")  # a message that is not the outcome yet


def _pooled(tasks: Sequence[Task], jobs: int, ledger: Optional[_Ledger] = None) -> Iterator[Outcome]:
    import multiprocessing
    from multiprocessing.connection import wait

    method = "fork" if "fork" in multiprocessing.get_all_start_methods() else "spawn"
    context = multiprocessing.get_context(method)
    parent = os.getpid()
    # Largest files first, one per message: no worker is left with a big file at the end while
    # the others idle. Results still come back in task order.
    queue = sorted(range(len(tasks)), key=lambda i: _size(tasks[i]))
    workers: List[_Worker] = []
    ready: dict = {}
    finished = False

    def feed(worker: _Worker) -> None:
        if not queue:
            worker.index = None
            return
        index = queue.pop()
        for _ in range(3):
            if worker.give(index, tasks[index]):
                return
            worker = _replace(worker)  # it died between two files
        raise RuntimeError("cannot start worker processes")

    def _replace(worker: _Worker) -> _Worker:
        worker.close(kill=True)
        fresh = _Worker(context, parent)
        workers[workers.index(worker)] = fresh
        return fresh

    try:
        for _ in range(min(jobs, len(tasks))):
            workers.append(_Worker(context, parent))
            feed(workers[-1])
        for index in range(len(tasks)):
            while index not in ready:
                busy = {w.conn: w for w in workers if w.index is not None}
                for conn in wait(list(busy)):
                    worker = busy[conn]
                    held = worker.index
                    outcome = worker.receive()
                    if outcome is _WAITING:
                        continue
                    if outcome is None:  # it died: a native crash, the OOM killer
                        worker.process.join(timeout=5)
                        outcome = _crashed(tasks[held], worker.process, worker.writing)
                        worker = _replace(worker)
                    ready[held] = outcome
                    worker.index = None
                    feed(worker)
            yield ready.pop(index)
        finished = True
    finally:
        if finished:
            for worker in workers:
                try:
                    worker.conn.send(None)
                except (OSError, ValueError):
                    pass
            for worker in workers:
                worker.close()
        else:  # Ctrl-C, SIGTERM, or the consumer stopped: stop every worker now
            _stop(workers, tasks, ledger, ready)


def _stop(workers: List[_Worker], tasks: Sequence[Task], ledger: Optional[_Ledger], ready: dict) -> None:
    """Ask every worker to stop (SIGTERM: a worker writing a file finishes and reports it), give
    them GRACE seconds, then kill the rest; none outlives the run."""
    import time
    from multiprocessing.connection import wait

    _ignore_signals()  # a second Ctrl-C must not leave workers behind; run() restores them
    for worker in workers:
        if worker.process.is_alive():
            worker.process.terminate()
    deadline = time.monotonic() + GRACE
    while True:
        busy = {w.conn: w for w in workers if w.index is not None and w.process.is_alive()}
        left = deadline - time.monotonic()
        if not busy or left <= 0:
            break
        for conn in wait(list(busy), timeout=left):
            worker = busy[conn]
            outcome = worker.receive()
            if outcome is None or outcome is _WAITING:
                if outcome is None:
                    if worker.writing:  # it died mid-write: a file either untouched or complete
                        _unsure(ledger, tasks[worker.index])
                    worker.index = None
                continue
            ready[worker.index] = outcome
            worker.index = None
    for worker in workers:
        if worker.index is not None and worker.writing:
            _unsure(ledger, tasks[worker.index])
        worker.close(kill=True)
        if worker.index is not None:
            _remove_temporaries(tasks[worker.index], worker.process.pid)
    if ledger is not None:
        for index in sorted(ready):
            ledger.add(ready[index])


def _unsure(ledger: Optional[_Ledger], task: Task) -> None:
    if ledger is not None and task.shown not in ledger.unsure:
        ledger.unsure.append(task.shown)


def _remove_temporaries(task: Task, pid: Optional[int]) -> None:
    """The temporary file a killed worker may have left next to the file it was writing."""
    if pid is None or task.data is not None or task.mode != "fix":
        return
    import glob

    target = os.path.realpath(task.path)
    pattern = os.path.join(glob.escape(os.path.dirname(target)), f".{glob.escape(os.path.basename(target))}.{pid}.*")
    for leftover in glob.glob(pattern):
        if leftover.endswith(TEMP_SUFFIX):
            try:
                os.unlink(leftover)
            except OSError:
                pass


def _crashed(task: Task, process, writing: bool = False) -> Outcome:
    """TFM000 for a file whose worker died: the rest of the run goes on."""
    from tfmigrate.catalogue import catalogue

    code = process.exitcode
    how = f"exit code {code}"
    if code is not None and code < 0:
        import signal

        try:
            how = f"signal {signal.Signals(-code).name}"
        except ValueError:
            how = f"signal {-code}"
    hint = " (out of memory?)" if code == -9 else ""
    info = catalogue()["TFM000"]
    finding = Finding(
        "TFM000", info.name, task.shown, 1, 1, 1, 1, info.severity,
        f"Cannot check this file: the worker process checking it died ({how}){hint}, so it was not "
        + ("checked (it died while writing the fixed file: the file is either untouched or completely fixed)"
           if writing else "checked and not written")
        + "; the rest of the run went on. Please report this with the file.",
    )
    return Outcome(task.shown, [finding])


def _serve(conn, parent: int) -> None:
    """A worker: takes tasks one at a time until told to stop or the parent is gone."""
    global _on_write
    _die_with_parent(parent)
    _worker_signals()

    def writing() -> None:
        conn.send(("writing", None))

    _on_write = writing
    try:
        while True:
            task = conn.recv()
            if task is None:
                return
            try:
                outcome = process(task)
            except Exception as error:  # a bug, not a bad file: that file only
                outcome = _failed(task, error)
            conn.send(("done", outcome))
            _release()
    except (EOFError, OSError):  # the parent is gone
        return


def _failed(task: Task, error: Exception) -> Outcome:
    from tfmigrate.catalogue import catalogue

    info = catalogue()["TFM000"]
    finding = Finding(
        "TFM000", info.name, task.shown, 1, 1, 1, 1, info.severity,
        f"Internal error while processing this file: {type(error).__name__}: {error}. "
        "The rest of the run went on; please report this with the file.",
    )
    return Outcome(task.shown, [finding])


def _die_with_parent(parent: int) -> None:
    """A worker gets SIGTERM when its parent dies, however it dies (SIGKILL too), so no worker
    is left holding a CI step's output pipes: prctl(PR_SET_PDEATHSIG) on Linux, a watchdog
    thread elsewhere."""
    import signal

    armed = False
    if sys.platform.startswith("linux"):
        try:
            import ctypes

            libc = ctypes.CDLL(None, use_errno=True)
            armed = libc.prctl(1, int(signal.SIGTERM), 0, 0, 0) == 0  # PR_SET_PDEATHSIG
        except (OSError, AttributeError):
            armed = False
    if os.getppid() != parent:  # it died before the above took effect
        os._exit(0)
    if not armed:
        import threading
        import time

        def watch() -> None:
            while os.getppid() == parent:
                time.sleep(0.25)
            os.kill(os.getpid(), getattr(signal, "SIGTERM", 15))

        threading.Thread(target=watch, name="tfmigrate-watchdog", daemon=True).start()


def _size(task: Task) -> int:
    if task.data is not None:
        return len(task.data)
    try:
        return os.stat(task.path).st_size
    except OSError:
        return 0


def _quit(signum, frame):
    if _held["depth"]:  # writing a file: finish it and report it first
        _held["pending"] = lambda: _quit(signum, None)
        return
    raise SystemExit(128 + signum)  # unwinds (atomic writes clean up) and exits without a traceback


def _worker_signals() -> None:
    """Workers leave on SIGINT/SIGTERM quietly; the parent reports the interruption."""
    import signal

    _held.update(depth=0, pending=None)
    signal.signal(signal.SIGTERM, _quit)
    signal.signal(signal.SIGINT, _quit)


def tasks_for(
    files: Iterable[str],
    settings: Settings,
    mode: str,
    unsafe: Optional[bool] = None,
    diff: bool = False,
    use_cache: bool = True,
) -> List[Task]:
    """The plan's tasks (workspace/plan.py), and before `fix` writes, the temporary files a
    killed run left removed."""
    return _prepare(plan.tasks(files, settings, mode, unsafe, diff, use_cache))


def _prepare(tasks: List[Task]) -> List[Task]:
    if tasks and tasks[0].mode == "fix" and not tasks[0].diff:
        from tfmigrate.atomic import stale_temporaries

        folders = sorted({os.path.dirname(os.path.realpath(t.path)) for t in tasks if t.data is None})
        removed = []
        for leftover in stale_temporaries(folders):
            try:
                os.unlink(leftover)
                removed.append(display_path(leftover))
            except OSError:
                pass
        if removed:
            sys.stderr.write(f"tfmigrate: removed {len(removed)} temporary file{'s' * (len(removed) != 1)} "
                             f"left by an interrupted run: {_names(removed)}\n")
    return tasks

