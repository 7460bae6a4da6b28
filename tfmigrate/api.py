"""The one way in for front ends (the command line, the LSP server, the flake8 plugin), as Fixit's
api.py: none of them reaches core/ or project/, so a file gets the same configuration and the
same facts whichever front end asks.

A run over paths (the command line):

    jobs = plan(paths, settings, "check")  # the files, each a Job: its codes and cross-file facts
    outcomes = run(jobs, workers)          # a process pool, the cache, fixed files written
    outcomes, settled = settle(paths, settings, jobs, outcomes, workers)  # fix: one fixed point across files

One document, maybe an editor's unsaved text (flake8, the server), with the facts `tfmigrate check`
would give it on a run over the same files:

    workspace = Workspace(paths)           # flake8: the paths of its run; the server: the project
    job = workspace.job(path, data, settings)
    check(job), fix(job, unsafe)           # an Outcome, as run() gives it; fix writes nothing
    linted = lint(job)                     # the findings with their fixes, for quick fixes:
    fix_one(linted, finding)               # the text with that one fix applied

Importing this module is cheap (no libcst): a cached run must not pay for the parser.
"""
from __future__ import annotations

import os
from dataclasses import dataclass, field, replace
from typing import Callable, Dict, List, Optional, Sequence, Tuple

from tfmigrate import catalogue
from tfmigrate.findings import Finding
from tfmigrate.workspace import plan as planning
from tfmigrate.workspace import runner
from tfmigrate.workspace.config import Settings
from tfmigrate.workspace.files import read_regular
from tfmigrate.workspace.plan import Task as Job
from tfmigrate.workspace.outcome import Outcome

__all__ = ["Job", "Outcome", "Workspace", "Linted", "plan", "settle", "stdin_job", "run", "check", "fix", "lint", "fix_one",
           "UNSILENCEABLE", "noqa_directives", "noqa_codes_end"]


def plan(paths: Sequence[str], settings: Settings, mode: str, unsafe: Optional[bool] = None, diff: bool = False,
         use_cache: bool = True) -> List[Job]:
    """The files under `paths` a run visits (`mode`: "check" or "fix"), each with its own nearest
    configuration and the cross-file facts of all of them."""
    return runner.prepare(planning.tasks(planning.collect(paths, settings), settings, mode, unsafe, diff, use_cache,
                                         paths=paths))


SETTLE_ROUNDS = 5  # fix runs after the first, at most, until the cross-file facts stop changing


def settle(paths: Sequence[str], settings: Settings, jobs: Sequence[Job], outcomes: Sequence[Outcome],
           workers: int = 1, use_cache: bool = True, rounds: int = SETTLE_ROUNDS) -> Tuple[List[Outcome], bool]:
    """`fix` to one fixed point across files. The cross-file facts (graph importers, star
    imports, what a star importer wants) were gathered from the bytes before fixing; a fix can
    change them (a module is graph code only once `contrib.slim` became tf_slim; a routed helper
    now turns v2 behaviour off for its star importers). So once a run wrote files, the facts are
    gathered again from the new bytes and the files whose facts changed are fixed again, until
    none changes: a second `fix` then changes nothing, whatever order or subset of files the runs
    were given. Returns every job's outcome (a file fixed in several rounds: its fixes summed, its
    last findings) and whether the facts settled within `rounds` (False: run `fix` again)."""
    outcomes = list(outcomes)
    writes = [i for i, job in enumerate(jobs) if job.mode == "fix" and not job.diff and job.data is None]
    if not writes:
        return outcomes, True
    current = {jobs[i].path: (i, jobs[i]) for i in writes}
    wrote = any(outcomes[i].changed for i in writes)
    for _ in range(rounds):
        if not wrote:
            return outcomes, True
        fresh = [job for job in plan(paths, settings, "fix", use_cache=use_cache) if job.path in current]
        again = [job for job in fresh if _facts(job) != _facts(current[job.path][1])]
        if not again:
            return outcomes, True
        wrote = False
        for job, outcome in zip(again, runner.run(again, workers)):
            i = current[job.path][0]
            current[job.path] = (i, job)
            outcomes[i] = _summed(outcomes[i], outcome)
            wrote = wrote or outcome.changed
    return outcomes, not wrote


def _facts(job: Job) -> tuple:
    """What a job is told about the other files."""
    return job.graph_importer, job.shims


def _summed(first: Outcome, later: Outcome) -> Outcome:
    """One file's outcome over two runs: the later findings, the fixes of both."""
    return replace(later, applied=first.applied + later.applied, changed=first.changed or later.changed,
                   requires=tuple(dict.fromkeys(first.requires + later.requires)),
                   fixed_rules=first.fixed_rules + later.fixed_rules, kept=tuple(dict.fromkeys(first.kept + later.kept)))


def stdin_job(settings: Settings, mode: str, data: bytes, name: Optional[str] = None, diff: bool = False) -> Job:
    """Standard input as one job: the configuration of `name` (--stdin-filename) if given."""
    shown = name or "-"
    own = settings.for_path(name) if name else settings
    codes = own.codes_for(shown, own.codes()) if name else own.codes()
    return Job(shown, shown, codes, mode, own.unsafe_fixes, diff, data=data, native=own.native)


def run(jobs: Sequence[Job], workers: int = 1, on_result: Optional[Callable[[Outcome], None]] = None) -> List[Outcome]:
    """Every job's Outcome, in order (see workspace/runner.py: pool, cache, writes, Ctrl-C)."""
    return runner.run(jobs, workers, on_result=on_result)


def check(job: Job) -> Outcome:
    """The job's findings, in this process."""
    return runner.process(replace(job, mode="check"))


def fix(job: Job, unsafe: Optional[bool] = None) -> Outcome:
    """The job fixed, in this process: a job with `data` gets the fixed bytes in `output` (and
    `changed`); a job without writes its file."""
    return runner.process(replace(job, mode="fix", unsafe=job.unsafe if unsafe is None else unsafe))


class Workspace:
    """The files whose cross-file facts count for a document: those `tfmigrate check <paths>`
    visits. Their bytes are read once (until `forget`); the document's own bytes are the ones
    given, so an editor's unsaved text counts as it would once saved."""

    def __init__(self, paths: Sequence[str]):
        self.paths = list(paths)
        self._files: Optional[List[str]] = None
        self._disk: Dict[str, bytes] = {}
        self._facts: Dict[bool, planning.ProjectFacts] = {}  # native -> the facts of the files on disk

    def forget(self) -> None:
        """Files were added, removed, changed or configured: read them again when asked."""
        self._files, self._facts = None, {}
        self._disk.clear()

    def job(self, path: str, data: bytes, settings: Settings, mode: str = "check") -> Job:
        """The Job of `path` holding `data`, as a run over the workspace would plan it."""
        own = settings.for_path(path)
        files = self._with(path, settings)
        path = next((f for f in files if _same(f, path)), path)
        if not path.endswith(".py") or data == self._read(path):  # its bytes are not among the facts
            if own.native not in self._facts:
                self._facts[own.native] = planning.project_facts(files, own.native, read=self._read)
            facts = self._facts[own.native]
        else:
            facts = planning.project_facts(files, own.native, read=lambda p: data if p == path else self._read(p))
        return planning.task(path, own, own.codes_for(path, own.codes()), facts, mode, data=data)

    def _with(self, path: str, settings: Settings) -> List[str]:
        if self._files is None:  # the projects' files: their facts are those a run over the paths gives
            self._files = planning.context(self.paths, planning.collect(self.paths, settings), settings)
        if any(_same(f, path) for f in self._files):
            return self._files
        return self._files + [path]

    def _read(self, path: str) -> bytes:
        if path not in self._disk:
            try:
                self._disk[path] = read_regular(path)
            except OSError:
                self._disk[path] = b""
        return self._disk[path]


def _same(a: str, b: str) -> bool:
    return a == b or os.path.normpath(os.path.abspath(a)) == os.path.normpath(os.path.abspath(b))


@dataclass
class Linted:
    """A document's findings as check() reports them, with what applying one fix needs."""

    findings: List[Finding]
    fixes: Dict[int, Finding] = field(default_factory=dict, repr=False)  # id(finding) -> it, with its edits
    engine_pass: object = field(default=None, repr=False)  # the engine's pass: module, positions


def lint(job: Job) -> Linted:
    """check() of a Python document that keeps the fixes' edits (a notebook: use check())."""
    data = job.data if job.data is not None else read_regular(job.path)
    over = runner.too_large(job, data)
    if over is not None:
        return Linted(over.findings)
    from tfmigrate.core import engine

    found = engine.lint_source(data, job.shown, job.codes, **runner.engine_facts(job))
    portable = [f.portable() for f in found.findings]
    return Linted(portable, {id(p): f for p, f in zip(portable, found.findings)}, found)


def fix_one(linted: Linted, finding: Finding) -> Optional[str]:
    """The document's text with the one fix of `finding` applied; None when it has none, or it
    cannot be applied or would not parse (then it is not offered)."""
    raw = linted.fixes.get(id(finding))
    module = getattr(linted.engine_pass, "module", None)
    if raw is None or raw.fix is None or not raw.fix.edits or module is None:
        return None
    from tfmigrate.core.apply import apply_fixes
    from tfmigrate.core.deep import run_deep

    def apply() -> Optional[str]:
        import libcst as cst

        new_text, taken, _ = apply_fixes(module, [raw.fix], linted.engine_pass.positions)
        if new_text is None or not taken:
            return None
        cst.parse_module(new_text)
        return new_text

    try:
        return run_deep(apply)  # with the room for deep code the check had
    except Exception:  # noqa: BLE001 - a fix that cannot be applied is not offered
        return None


# --- noqa comments (--add-noqa, the server's "silence" action) -----------------------------------
# Never silenced by a line's noqa: an internal error, a file that does not parse, a stale noqa.
UNSILENCEABLE = catalogue.UNSILENCEABLE


def noqa_directives(source: str) -> dict:
    """line -> the `# noqa` directive on it (core.noqa.Directive)."""
    from tfmigrate.core import noqa

    return noqa.directives(source)


def noqa_codes_end(line: str, directive) -> Optional[int]:
    """Where the codes of `line`'s `# noqa: CODES` end; None for a bare `# noqa`."""
    from tfmigrate.core import noqa

    return noqa.codes_end(line, directive)
