"""Runs check or fix over many files, in input order: one file at a time here, or in the worker
pool of `--jobs` (workspace/pool.py); answered from the findings cache when unchanged
(workspace/cache.py); a fixed file written atomically, with SIGINT/SIGTERM held meanwhile
(workspace/signals.py), and what was written reported when a run is interrupted. What to run comes
from workspace/plan.py.
"""
from __future__ import annotations

import json
import os
import re
import sys
import tokenize
from io import BytesIO
from typing import Callable, Iterator, List, Optional, Sequence

from tfmigrate.workspace import pool, signals
from tfmigrate.workspace.cache import Cache, fingerprint
from tfmigrate.atomic import NotWritten, write_atomic
from tfmigrate.workspace.files import display_path, read_regular
from tfmigrate.workspace.outcome import Outcome
from tfmigrate.workspace.plan import Task
from tfmigrate.catalogue import PARSE_ERROR, make_finding
from tfmigrate.findings import Finding


def source_text(data: bytes) -> str:
    try:
        encoding, _ = tokenize.detect_encoding(BytesIO(data).readline)
        return data.decode(encoding, errors="replace")
    except (SyntaxError, LookupError):
        return data.decode("utf-8", errors="replace")


def _unreadable(task: Task, error: OSError) -> Outcome:
    reason = error.strerror or type(error).__name__
    finding = make_finding(
        PARSE_ERROR, task.shown, f"Cannot read this file: {reason}. It was skipped; the other files are still checked.",
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
    from tfmigrate.core.engine import might_use_tensorflow

    if not might_use_tensorflow(data, task.shims):
        return None  # skipped unparsed anyway: it cannot have a finding
    what = "its code cells hold" if task.shown.endswith(".ipynb") else "it is"
    finding = make_finding(
        PARSE_ERROR, task.shown,
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
    left = f"The file was left as it was ({fixes} fix{'es' * (fixes != 1)} not applied)."
    if isinstance(error, NotWritten):
        message = f"Not written: {error.strerror}. {left}"
    else:
        message = f"Cannot write the fixed file: {error.strerror or error}. {left}"
    return make_finding(PARSE_ERROR, task.shown, message)


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
    """A cache hit answered without a worker (which would cost a round trip of the source, and
    for a run of hits the start of a pool); None for anything else (stdin, misses, unreadable
    files: a worker handles them). A notebook's hit is what `process` makes of it: no text."""
    if not (task.cache_dir and task.key) or task.data is not None:
        return None
    try:
        data = read_regular(task.path)
    except OSError:
        return None
    if task.max_size and len(data) > task.max_size:
        return None
    hit = _from_cache(task, data, Cache(task.cache_dir), fingerprint(data, task.key))
    if hit is not None and task.shown.endswith(".ipynb"):
        hit.text = None  # as `process` leaves it: findings give the line within a cell
    return hit


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
        facts = engine_facts(task)
        if task.native and task.unsafe:  # (as Ruff's check --unsafe-fixes: what `fix --unsafe-fixes` would meet)
            facts["unsafe"] = True
        findings = [f.portable() for f in check_source(data, task.shown, task.codes, **facts)]
        if cache:
            cache.put(task.path, key, findings)
        return Outcome(task.shown, findings, source_text(data) if findings else None)

    result = fix_source(data, task.shown, task.codes, unsafe=task.unsafe, **engine_facts(task))
    findings = [f.portable() for f in result.findings]
    outcome = Outcome(task.shown, findings, applied=result.applied, requires=getattr(result, "requires", ()),
                      fixed_rules=tuple(getattr(result, "fixed_rules", ())), kept=tuple(getattr(result, "kept", ())))
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
            signals.begin_write()  # SIGINT/SIGTERM wait until this write is done and reported
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
    if getattr(task, "keras3", False):
        facts["keras3"] = True
    if task.ignore_noqa:
        facts["ignore_noqa"] = True
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
    ledger = Ledger(tasks)
    restore = signals.defer_signals()
    try:
        for outcome in _iterate(tasks, jobs, ledger):
            outcomes.append(outcome)
            signals.release()
            if on_result:
                on_result(outcome)
    except KeyboardInterrupt:
        signals.ignore_signals()  # a second Ctrl-C must not cut the report short
        sys.stderr.write(ledger.report())
        sys.stderr.flush()
        raise
    finally:
        signals.release(reraise=False)
        restore()
    return outcomes


class Ledger:
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


def _iterate(tasks: Sequence[Task], jobs: int, ledger: Optional[Ledger] = None) -> Iterator[Outcome]:
    ledger = ledger or Ledger(tasks)
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
    computed = pool.pooled([tasks[i] for i in misses], jobs, process, ledger)
    for i in range(len(tasks)):
        yield ledger.add(hits[i] if i in hits else next(computed))



def prepare(tasks: List[Task]) -> List[Task]:
    """The plan's tasks, once the temporary files a killed `fix` run left are removed (before
    this run writes beside them)."""
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

