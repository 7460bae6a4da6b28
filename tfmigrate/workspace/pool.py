"""The worker pool of `--jobs`: each worker checks or fixes one file at a time; results come back
in task order, largest files first so none is left with a big file at the end.
"""
from __future__ import annotations

import os
import sys
from typing import Callable, Iterator, List, Optional, Sequence

from tfmigrate.catalogue import INTERNAL_ERROR, make_finding
from tfmigrate.workspace import signals
from tfmigrate.workspace.outcome import Outcome
from tfmigrate.workspace.plan import Task

# Not concurrent.futures: a worker that dies (a native crash, the OOM killer) costs only its own
# file, reported as TFM000, and a new worker takes its place; the parent knows which file each
# worker holds and whether it is writing it, so an interrupted run says what was written.
GRACE = 1.0  # seconds a stopped worker has to finish the file it is writing

class _Worker:
    def __init__(self, context, parent: int, handle: Callable[[Task], Outcome]):
        self.conn, child = context.Pipe(duplex=True)
        self.process = context.Process(target=_serve, args=(child, parent, handle), daemon=True,
                                       name="tfmigrate-worker")
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


def pooled(tasks: Sequence[Task], jobs: int, handle: Callable[[Task], Outcome],
           ledger: Optional[object] = None) -> Iterator[Outcome]:
    """`handle(task)` of every task in worker processes, yielded in task order. A worker that dies
    costs its file only (TFM000); when the consumer stops (Ctrl-C, SIGTERM) every worker stops.
    `ledger` (runner's): told the outcomes finished while stopping, and the files a killed worker
    may have been writing (`unsure`)."""
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
        fresh = _Worker(context, parent, handle)
        workers[workers.index(worker)] = fresh
        return fresh

    try:
        for _ in range(min(jobs, len(tasks))):
            workers.append(_Worker(context, parent, handle))
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


def _stop(workers: List[_Worker], tasks: Sequence[Task], ledger: Optional[object], ready: dict) -> None:
    """Ask every worker to stop (SIGTERM: a worker writing a file finishes and reports it), give
    them GRACE seconds, then kill the rest; none outlives the run."""
    import time
    from multiprocessing.connection import wait

    signals.ignore_signals()  # a second Ctrl-C must not leave workers behind; run() restores them
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
    _sweep_temporaries(tasks, {w.process.pid for w in workers if w.process.pid is not None})
    if ledger is not None:
        for index in sorted(ready):
            ledger.add(ready[index])


def _unsure(ledger: Optional[object], task: Task) -> None:
    if ledger is not None and task.shown not in ledger.unsure:
        ledger.unsure.append(task.shown)


def _sweep_temporaries(tasks: Sequence[Task], pids: set) -> None:
    """Every temporary file the stopped workers (`pids`, all gone now) left in the folders of the
    files to fix, whichever task the parent last knew each worker by (CI once found one left by a
    worker stopped mid-write that the parent no longer counted as writing)."""
    from tfmigrate.atomic import temporaries_of

    folders = {os.path.dirname(os.path.realpath(t.path)) for t in tasks if t.data is None and t.mode == "fix"}
    for leftover in temporaries_of(folders, pids):
        try:
            os.unlink(leftover)
        except OSError:
            pass


def _crashed(task: Task, process, writing: bool = False) -> Outcome:
    """TFM000 for a file whose worker died: the rest of the run goes on."""
    code = process.exitcode
    how = f"exit code {code}"
    if code is not None and code < 0:
        import signal

        try:
            how = f"signal {signal.Signals(-code).name}"
        except ValueError:
            how = f"signal {-code}"
    hint = " (out of memory?)" if code == -9 else ""
    finding = make_finding(
        INTERNAL_ERROR, task.shown,
        f"Cannot check this file: the worker process checking it died ({how}){hint}, so it was not "
        + ("checked (it died while writing the fixed file: the file is either untouched or completely fixed)"
           if writing else "checked and not written")
        + "; the rest of the run went on. Please report this with the file.",
    )
    return Outcome(task.shown, [finding])


def _serve(conn, parent: int, handle: Callable[[Task], Outcome]) -> None:
    """A worker: takes tasks one at a time until told to stop or the parent is gone."""
    _die_with_parent(parent)
    signals.worker_signals()

    def writing() -> None:
        conn.send(("writing", None))

    signals.announce_writes(writing)
    try:
        while True:
            task = conn.recv()
            if task is None:
                return
            try:
                outcome = handle(task)
            except Exception as error:  # a bug, not a bad file: that file only
                outcome = _failed(task, error)
            conn.send(("done", outcome))
            signals.release()
    except (EOFError, OSError):  # the parent is gone
        return


def _failed(task: Task, error: Exception) -> Outcome:
    finding = make_finding(
        INTERNAL_ERROR, task.shown,
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

