"""Signals during a run: a write and the report of it happen together, or neither does. SIGINT or
SIGTERM arriving while a file is being written waits until it is written and reported; a worker
leaves quietly, the parent reports what was and was not written.
"""
from __future__ import annotations

from typing import Callable, Optional

_held = {"depth": 0, "pending": None}


def hold() -> None:
    """From here until `release`, SIGINT/SIGTERM wait (a file being written is finished and
    reported). Only handlers installed by tfmigrate (run, the workers) honour it."""
    _held["depth"] += 1


def release(reraise: bool = True) -> None:
    pending, _held["depth"], _held["pending"] = _held["pending"], 0, None
    if pending is not None and reraise:
        pending()


def defer_signals() -> Callable[[], None]:
    """In the main thread, SIGINT and SIGTERM raise KeyboardInterrupt, except while a write is
    held; returns what restores the previous handlers."""
    import signal

    def interrupt() -> None:
        raise KeyboardInterrupt

    def handler(signum, frame) -> None:
        if _held["depth"]:
            _held["pending"] = interrupt
        else:
            interrupt()

    names = [n for n in ("SIGINT", "SIGTERM") if hasattr(signal, n)]
    try:  # (rather than asking threading, whose import is 1% of a warm run)
        previous = {n: signal.signal(getattr(signal, n), handler) for n in names}
    except ValueError:  # not the main thread, where signal handlers cannot be set: they stay as they are
        return lambda: None
    _held.update(depth=0, pending=None)

    def restore() -> None:
        for name, old in previous.items():
            signal.signal(getattr(signal, name), old)

    return restore


def ignore_signals() -> None:
    import signal
    import threading

    if threading.current_thread() is threading.main_thread():
        for name in ("SIGINT", "SIGTERM"):
            if hasattr(signal, name):
                signal.signal(getattr(signal, name), signal.SIG_IGN)



def _quit(signum, frame):
    if _held["depth"]:  # writing a file: finish it and report it first
        _held["pending"] = lambda: _quit(signum, None)
        return
    raise SystemExit(128 + signum)  # unwinds (atomic writes clean up) and exits without a traceback


def worker_signals() -> None:
    """Workers leave on SIGINT/SIGTERM quietly; the parent reports the interruption."""
    import signal

    _held.update(depth=0, pending=None)
    signal.signal(signal.SIGTERM, _quit)
    signal.signal(signal.SIGINT, _quit)


_on_write: Optional[Callable[[], None]] = None  # set in a worker: tells the parent a write begins


def announce_writes(callback: Callable[[], None]) -> None:
    """In a worker: `callback` is called as each write begins (the parent then knows the file
    may be written)."""
    global _on_write
    _on_write = callback


def begin_write() -> None:
    """A file is about to be written: hold SIGINT/SIGTERM until `release`, and say so."""
    hold()
    if _on_write is not None:
        _on_write()
