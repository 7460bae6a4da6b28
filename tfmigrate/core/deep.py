"""Room for deeply nested code. libcst's parser is native and recursive (a long `and` chain or a
deep expression overflows an 8 MB stack and kills the process), and its code generation and the
rules recurse in Python (a chain of 250 method calls passes Python's default recursion limit of
1000). So a file's work runs in a thread with a large stack and a recursion limit to match: the
deepest code CPython accepts is checked, and what is deeper ends as a RecursionError, which the
engine reports as a finding, never as a crash.

The garbage collector is off while a file's work runs (`gc_paused`): a file allocates hundreds of
thousands of tree nodes, and the collector's passes over them (15% of a cold run) find nothing,
since the engine drops every cycle that would hold a tree (engine._forget, the rules' own) and the
tree is freed by reference counting when the file is done. It is switched back on afterwards,
without a collection of its own: what little cyclic garbage a file leaves waits for the next
ordinary pass.
"""
from __future__ import annotations

import gc
import sys
import threading
from contextlib import contextmanager
from typing import Callable, TypeVar

STACK_SIZE = 512 << 20  # virtual: only the pages a deep file touches are ever used
RECURSION_LIMIT = 40_000
CPYTHON_LIMIT = 1000  # CPython's default recursion limit, under which `python file.py` compiles it

T = TypeVar("T")
_local = threading.local()


def run_deep(function: Callable[..., T], *args, **kwargs) -> T:
    """`function(*args, **kwargs)` in a thread with a large stack and recursion limit (in place
    when already in one, or when the platform refuses such a thread)."""
    if getattr(_local, "deep", False):
        return function(*args, **kwargs)
    with gc_paused():
        return _run_deep(function, *args, **kwargs)


def _run_deep(function: Callable[..., T], *args, **kwargs) -> T:
    outcome: list = []
    ended = threading.Event()  # (after an interrupted join, CPython 3.11 may call the thread stopped)

    def target() -> None:
        _local.deep = True
        try:
            outcome.append((True, function(*args, **kwargs)))
        except BaseException as error:  # noqa: BLE001 - handed to the caller's thread
            outcome.append((False, error))
        finally:
            ended.set()

    try:
        previous = threading.stack_size(STACK_SIZE)
    except (ValueError, RuntimeError):  # a platform without settable thread stacks
        return function(*args, **kwargs)
    _raise_limit()
    try:
        try:
            thread = threading.Thread(target=target, name="tfmigrate-deep", daemon=True)
            thread.start()
        finally:
            threading.stack_size(previous)
    except RuntimeError:  # no room for the stack (strict overcommit): as before, in place
        _restore_limit()
        return function(*args, **kwargs)
    try:
        try:
            thread.join()
        except BaseException:  # Ctrl-C or SIGTERM while the file's work runs: let it end first
            _settle(ended)
            raise
    finally:
        _restore_limit()
    ok, value = outcome[0]
    if ok:
        return value
    raise value


def _settle(ended: threading.Event) -> None:
    """Wait for the file's work to end before the interrupt unwinds: a daemon thread still running
    when the interpreter shuts down can abort it (SIGABRT, exit -6, instead of 130 and the report)."""
    while not ended.is_set():
        try:
            ended.wait()
        except BaseException:  # noqa: BLE001 - another signal: the work still ends first
            continue


# The collector is the interpreter's too: off while any file's work runs, back on (if it was on)
# when the last one ends.
_gc_lock = threading.Lock()
_gc_state = {"runs": 0, "was_enabled": False}


@contextmanager
def gc_paused():
    """The garbage collector off for the block (reference counting still frees what has no
    cycle), back on afterwards if it was on; no collection is forced."""
    with _gc_lock:
        if not _gc_state["runs"]:
            _gc_state["was_enabled"] = gc.isenabled()
            gc.disable()
        _gc_state["runs"] += 1
    try:
        yield
    finally:
        with _gc_lock:
            _gc_state["runs"] -= 1
            if not _gc_state["runs"] and _gc_state["was_enabled"]:
                gc.enable()


# The recursion limit is the interpreter's, not the thread's: raised while any deep run is on
# (the command line runs one at a time; a caller with threads may run several).
_limit_lock = threading.Lock()
_raised = {"runs": 0, "before": 0}


def _raise_limit() -> None:
    with _limit_lock:
        if not _raised["runs"]:
            _raised["before"] = sys.getrecursionlimit()
            sys.setrecursionlimit(max(_raised["before"], RECURSION_LIMIT))
        _raised["runs"] += 1


def _restore_limit() -> None:
    with _limit_lock:
        _raised["runs"] -= 1
        if not _raised["runs"]:
            sys.setrecursionlimit(_raised["before"])


def _depth() -> int:
    frame, depth = sys._getframe(), 0
    while frame is not None:
        frame, depth = frame.f_back, depth + 1
    return depth


class cpython_limit:
    """The recursion limit `python file.py` compiles under, whatever the limit around: CPython's
    verdict on how deep is too deep (RecursionError during compilation)."""

    def __enter__(self) -> None:
        self.limit = sys.getrecursionlimit()
        sys.setrecursionlimit(CPYTHON_LIMIT + _depth())

    def __exit__(self, *exc) -> None:
        sys.setrecursionlimit(self.limit)
