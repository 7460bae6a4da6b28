"""Runs check or fix over many files: a process pool (`--jobs`), results in input order, and a
per-file cache keyed by content hash, tool version and settings, so a re-run on unchanged files
neither parses nor imports libcst.
"""
from __future__ import annotations

import hashlib
import json
import os
import stat
import tokenize
from dataclasses import dataclass, field
from io import BytesIO
from pathlib import Path
from typing import Callable, Iterable, Iterator, List, Optional, Sequence

from tfmigrate import __version__
from tfmigrate.config import Settings
from tfmigrate.files import discover, display_path, write_atomic
from tfmigrate.findings import Finding

CACHE_DIR = ".tfmigrate_cache"


@dataclass
class Task:
    path: str
    shown: str
    codes: List[str]
    mode: str  # "check" | "fix"
    unsafe: bool = False
    diff: bool = False
    key: str = ""  # cache key of the settings; empty: no cache
    cache_dir: Optional[str] = None
    data: Optional[bytes] = None  # stdin
    shims: Optional[object] = None  # names.Shims: the project's re-exports of TensorFlow
    graph_importer: Optional[str] = None  # a checked TF1 graph module that imports this one


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


class Cache:
    """One small JSON file per source path, holding the content hash, key and findings.
    A corrupt or foreign entry is ignored (and rewritten), never fatal."""

    def __init__(self, folder: str):
        self.folder = Path(folder)

    def _entry(self, path: str) -> Path:
        digest = hashlib.sha256(os.path.abspath(path).encode("utf-8", "surrogateescape")).hexdigest()
        return self.folder / __version__ / digest[:2] / f"{digest}.json"

    def get(self, path: str, fingerprint: str) -> Optional[List[Finding]]:
        try:
            entry = json.loads(self._entry(path).read_text(encoding="utf-8"))
            if not isinstance(entry, dict) or entry.get("fingerprint") != fingerprint:
                return None
            return [Finding.from_json(f) for f in entry["findings"]]
        except (OSError, ValueError, KeyError, TypeError, AttributeError):
            return None

    def put(self, path: str, fingerprint: str, findings: Sequence[Finding]) -> None:
        entry = self._entry(path)
        try:
            if not self.folder.exists():
                self.folder.mkdir(parents=True, exist_ok=True)
                (self.folder / ".gitignore").write_text("# Created by tfmigrate\n*\n", encoding="utf-8")
            entry.parent.mkdir(parents=True, exist_ok=True)
            payload = {"fingerprint": fingerprint, "findings": [f.to_json() for f in findings]}
            write_atomic(str(entry), json.dumps(payload).encode("utf-8"), new=True)
        except OSError:
            pass  # a cache that cannot be written only costs time


def _fingerprint(data: bytes, key: str) -> str:
    return hashlib.sha256(data).hexdigest() + "|" + key


def _unreadable(task: Task, error: OSError) -> Outcome:
    from tfmigrate.catalogue import catalogue

    info = catalogue()["TFM001"]
    reason = error.strerror or type(error).__name__
    finding = Finding(
        "TFM001", info.name, task.shown, 1, 1, 1, 1, info.severity,
        f"Cannot read this file: {reason}. It was skipped; the other files are still checked.",
    )
    return Outcome(task.shown, [finding])


def process(task: Task) -> Outcome:
    """Check or fix one file. Runs in a worker process; never raises for a bad file."""
    # --- notebooks: cell by cell (tfmigrate/notebooks.py); the rest of the flow is shared ---
    if task.shown.endswith(".ipynb"):
        from tfmigrate import notebooks

        outcome = _process_file(task, notebooks.check_notebook, notebooks.fix_notebook)
        outcome.text = None  # findings give the line within a cell: a line of the JSON would mislead
        return outcome
    return _process_file(task)


def _read(path: str) -> bytes:
    if not stat.S_ISREG(os.stat(path).st_mode):  # a FIFO would block, a device never end
        raise OSError(0, "Not a regular file")
    with open(path, "rb") as handle:
        return handle.read()


def _from_cache(task: Task, data: bytes, cache: Optional["Cache"], fingerprint: str) -> Optional[Outcome]:
    """The cached outcome when the file is unchanged (and, for fix, has nothing to fix)."""
    if cache is None:
        return None
    cached = cache.get(task.path, fingerprint)
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
        data = _read(task.path)
    except OSError:
        return None
    return _from_cache(task, data, Cache(task.cache_dir), _fingerprint(data, task.key))


def _process_file(task: Task, check_source=None, fix_source=None) -> Outcome:
    if task.data is not None:
        data = task.data
    else:
        try:
            data = _read(task.path)
        except OSError as error:
            return _unreadable(task, error)
    cache = Cache(task.cache_dir) if task.cache_dir and task.key and task.data is None else None
    fingerprint = _fingerprint(data, task.key) if cache else ""
    hit = _from_cache(task, data, cache, fingerprint)
    if hit is not None:
        return hit
    from tfmigrate import engine  # imported only on a cache miss

    check_source = check_source or engine.check_source
    fix_source = fix_source or engine.fix_source

    if task.mode == "check":
        findings = [f.portable() for f in check_source(data, task.shown, task.codes, **_facts(task))]
        if cache:
            cache.put(task.path, fingerprint, findings)
        return Outcome(task.shown, findings, source_text(data) if findings else None)

    result = fix_source(data, task.shown, task.codes, unsafe=task.unsafe, **_facts(task))
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
            try:
                write_atomic(task.path, result.fixed)
                final = result.fixed
            except OSError as error:
                outcome.changed = False
                outcome.applied = 0
                outcome.fixed_rules = ()
                outcome.findings = _unreadable(task, error).findings + findings
                outcome.findings[0] = _replace_message(
                    outcome.findings[0], f"Cannot write the fixed file: {error.strerror or error}. It was left as it was."
                )
    elif task.data is not None:
        outcome.output = data
    if cache and final is not data and not task.diff:
        cache.put(task.path, _fingerprint(final, task.key), findings)
    if findings:
        outcome.text = source_text(data if task.diff else final)
    return outcome


def _facts(task: Task) -> dict:
    """What the engine is told about the file beyond its bytes (only what is set, so notebook
    entry points need not take every fact)."""
    facts = {"shims": task.shims}
    if task.graph_importer is not None:
        facts["imported_by"] = task.graph_importer
    return facts


def _replace_message(finding: Finding, message: str) -> Finding:
    from dataclasses import replace

    return replace(finding, message=message)


def _moved(finding: Finding, shown: str) -> Finding:
    if finding.path == shown:
        return finding
    from dataclasses import replace

    return replace(finding, path=shown)


def _fixable(findings: Sequence[Finding], unsafe: bool) -> bool:
    return any(f.fix is not None and (unsafe or f.fix.applicability == "safe") for f in findings)


def gitignored(files: Sequence[str]) -> set:
    """The files git ignores (empty outside a git checkout or without git)."""
    if not files:
        return set()
    import subprocess

    try:
        result = subprocess.run(
            ["git", "check-ignore", "--stdin", "-z"],
            input="\0".join(files).encode("utf-8", "surrogateescape"),
            capture_output=True,
            timeout=60,
        )
    except (OSError, subprocess.SubprocessError):
        return set()
    if result.returncode not in (0, 1):
        return set()
    return set(result.stdout.decode("utf-8", "surrogateescape").split("\0")) - {""}


def collect(paths: Sequence[str], settings: Settings) -> List[str]:
    """Files to visit: directories walked, less excluded globs and (with respect-gitignore) what
    git ignores; files named explicitly too, unless force-exclude (pre-commit names every file).
    Each path is judged by its own nearest configuration."""
    explicit = {p for p in paths if not os.path.isdir(p)}

    def excluded(path: str) -> bool:
        own = settings.for_path(path)
        return (path not in explicit or own.force_exclude) and own.excluded(path)

    files = [f for f in discover(paths, excluded) if not excluded(f)]
    ignored = gitignored([f for f in files if f not in explicit and settings.for_path(f).respect_gitignore])
    return [f for f in files if f not in ignored]


def run(
    tasks: Sequence[Task],
    jobs: int = 1,
    on_result: Optional[Callable[[Outcome], None]] = None,
) -> List[Outcome]:
    """Process tasks, in parallel when worth it; outcomes come back in task order."""
    outcomes: List[Outcome] = []
    for outcome in _iterate(tasks, jobs):
        outcomes.append(outcome)
        if on_result:
            on_result(outcome)
    return outcomes


def _iterate(tasks: Sequence[Task], jobs: int) -> Iterator[Outcome]:
    if jobs <= 1 or len(tasks) < 4:
        yield from map(process, tasks)
        return
    hits = {i: hit for i, hit in enumerate(map(cached_outcome, tasks)) if hit is not None}
    misses = [i for i in range(len(tasks)) if i not in hits]
    if len(misses) < 4:
        yield from (hits[i] if i in hits else process(tasks[i]) for i in range(len(tasks)))
        return
    computed = _pooled([tasks[i] for i in misses], jobs)
    for i in range(len(tasks)):
        yield hits[i] if i in hits else next(computed)


def _pooled(tasks: Sequence[Task], jobs: int) -> Iterator[Outcome]:
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    method = "fork" if "fork" in multiprocessing.get_all_start_methods() else "spawn"
    # ProcessPoolExecutor (unlike multiprocessing.Pool) raises BrokenProcessPool when a worker
    # dies instead of waiting for it forever.
    pool = ProcessPoolExecutor(
        max_workers=min(jobs, len(tasks)),
        mp_context=multiprocessing.get_context(method),
        initializer=_worker_signals,
    )
    try:
        # Largest files first, one per work item: no worker is left with a big file at the end
        # while the others idle. Results still come back in task order.
        futures = {}
        for index in sorted(range(len(tasks)), key=lambda i: -_size(tasks[i])):
            futures[index] = pool.submit(process, tasks[index])
        for index in range(len(tasks)):
            yield futures.pop(index).result()
    except BaseException:  # Ctrl-C, SIGTERM: stop now; a worker mid-write finishes or cleans up
        pool.shutdown(wait=False, cancel_futures=True)
        for worker in list((getattr(pool, "_processes", None) or {}).values()):
            worker.terminate()
        raise
    pool.shutdown()


def _size(task: Task) -> int:
    if task.data is not None:
        return len(task.data)
    try:
        return os.stat(task.path).st_size
    except OSError:
        return 0


def _quit(signum, frame):
    raise SystemExit(128 + signum)  # unwinds (atomic writes clean up) and exits without a traceback


def _worker_signals() -> None:
    """Workers leave on SIGINT/SIGTERM quietly; the parent reports the interruption."""
    import signal

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
    """One task per file, with its own nearest configuration's codes, target, aliases and (when
    `unsafe` is None) unsafe-fixes; the cache lives in the first path's project."""
    from tfmigrate.graph_imports import graph_importers

    files = list(files)
    cache_dir = str(settings.root / CACHE_DIR) if use_cache else None
    importers = graph_importers(files)
    enabled: dict = {}  # per configuration (for_path returns one Settings object per config file)
    tasks = []
    for path in files:
        own = settings.for_path(path)
        if id(own) not in enabled:
            enabled[id(own)] = own.codes()
        file_codes = own.codes_for(path, enabled[id(own)])
        importer = importers.get(path)
        key = own.cache_key(file_codes) if use_cache else ""
        if key and importer is not None:
            key += "|imported by graph code: " + importer
        tasks.append(
            Task(path, display_path(path), file_codes, mode, own.unsafe_fixes if unsafe is None else unsafe, diff,
                 key=key, cache_dir=cache_dir, shims=_shims(own, path),
                 graph_importer=display_path(importer) if importer else None)
        )
    return tasks


def _shims(settings: Settings, path: str):
    """The configured re-exports of TensorFlow, with this file's module name (None if none)."""
    if not settings.tensorflow_aliases:
        return None
    from tfmigrate.names import Shims, module_name

    module, is_package = module_name(path)
    return Shims(tuple(sorted(settings.tensorflow_aliases.items())), module, is_package)
