"""The `tfmigrate` command: check | fix | rules | explain | clean. Thin: parse flags, resolve
settings, hand files to the runner, render. Exit codes as Ruff: 0 clean, 1 findings (with
`fix --diff`: changes), 2 usage, configuration or internal error.
"""
from __future__ import annotations

import os
import signal
import sys
from enum import Enum
from typing import List, Optional

import typer

from tfmigrate import __version__

app = typer.Typer(
    add_completion=False,
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    help="Find TensorFlow 1 code and the pitfalls that break under TensorFlow 2.21 / Keras 3, and fix them.",
)


class Format(str, Enum):
    rich = "rich"
    concise = "concise"
    json = "json"
    json_lines = "json-lines"
    sarif = "sarif"
    github = "github"
    junit = "junit"


PATHS = typer.Argument(None, help="Files or directories (default: .); '-' reads standard input.")
CONFIG = typer.Option(None, "--config", help="A tfmigrate.toml or pyproject.toml to use instead of the nearest one.")
SELECT = typer.Option(None, "--select", help="Rule codes or prefixes to enable instead of the defaults (TFM1, TFM104).")
EXTEND_SELECT = typer.Option(None, "--extend-select", help="Rule codes or prefixes to enable in addition.")
IGNORE = typer.Option(None, "--ignore", help="Rule codes or prefixes to disable.")
TARGET = typer.Option(None, "--target-version", help="TensorFlow version to migrate to (default 2.21).")
FORMAT = typer.Option(Format.rich, "--format", help="Output format.")
OUTPUT = typer.Option(None, "--output-file", "-o", help="Write the report to this file instead of standard output.")
JOBS = typer.Option(0, "--jobs", "-j", help="Worker processes, at most one per core and per file (default, 0: one per core).")
NO_CACHE = typer.Option(False, "--no-cache", help="Neither read nor write .tfmigrate_cache/.")
STDIN_NAME = typer.Option(None, "--stdin-filename", help="The path to report (and match config against) for '-'.")
STATISTICS = typer.Option(False, "--statistics", help="Print the number of findings per rule instead of the findings.")
FORCE_EXCLUDE = typer.Option(None, "--force-exclude/--no-force-exclude", help="Apply exclude / extend-exclude to files named on the command line too (as pre-commit names them).")


def _version(value: bool) -> None:
    if value:
        print(f"tfmigrate {__version__}")
        raise typer.Exit(0)


@app.callback()
def _root(
    version: bool = typer.Option(False, "--version", callback=_version, is_eager=True, help="Show the version."),
) -> None:
    """tfmigrate: a TF1-to-TF2 migration linter."""
    for stream in (sys.stdout, sys.stderr):
        _tolerant(stream)


# What a console that cannot show box drawing gets instead (rich draws its tables in ASCII there).
_LOOKALIKES = {"│": "|", "┃": "|", "─": "-", "━": "-", "…": "...", "→": "->", "‘": "'", "’": "'", "“": '"', "”": '"'}


def _lookalike(error: UnicodeEncodeError):
    return "".join(_LOOKALIKES.get(c, "?") for c in error.object[error.start:error.end]), error.end


def _tolerant(stream) -> None:
    """A console in cp1252 or ASCII (Windows, a redirect, PYTHONIOENCODING) shows what it cannot
    encode as a look-alike or '?' instead of failing the run; machine formats bypass it (_emit)."""
    import codecs

    encoding = getattr(stream, "encoding", None) or "utf-8"
    if codecs.lookup(encoding).name in ("utf-8", "utf-16", "utf-32", "gb18030") or not hasattr(stream, "reconfigure"):
        return
    codecs.register_error("tfmigrate-lookalike", _lookalike)
    stream.reconfigure(errors="tfmigrate-lookalike")


def _emit(text: str) -> None:
    """Machine-readable output (every format but rich, diffs) is UTF-8 bytes whatever the
    console's encoding, as `--output-file` writes it and as Ruff does: JSON, SARIF and JUnit
    declare UTF-8. A path that is not valid UTF-8 is written as its bytes, never a crash."""
    buffer = getattr(sys.stdout, "buffer", None)
    if buffer is None:
        sys.stdout.write(text)
        return
    sys.stdout.flush()
    buffer.write(text.encode("utf-8", "surrogateescape"))
    buffer.flush()


def _check_output(output_file: Optional[str]) -> None:
    """Before the run: a report that could not be written must not cost the whole run first."""
    if not output_file:
        return
    folder = os.path.dirname(os.path.abspath(output_file))
    if not os.path.isdir(folder):
        _fail(f"--output-file {output_file}: no such folder {folder}; create it or choose another path")
    if os.path.isdir(output_file):
        _fail(f"--output-file {output_file}: is a folder; name a file")


def _stderr():
    from rich.console import Console

    return Console(stderr=True, highlight=False)


def _fail(message: str) -> None:
    from rich.markup import escape  # a message naming [tool.tfmigrate] is not markup

    _stderr().print(f"[bold red]error:[/] {escape(message)}", soft_wrap=True, markup=True)
    raise typer.Exit(2)


def _settings(paths, config, select, extend_select, ignore, target, unsafe=None, force_exclude=None):
    from tfmigrate.config import ConfigError, resolve

    try:
        settings = resolve(paths, config, select, extend_select, ignore, unsafe, target, force_exclude)
        settings.codes()
        return settings
    except ConfigError as error:
        _fail(str(error))


def _tasks(paths: List[str], settings, mode: str, diff=False, no_cache=False, stdin_name=None):
    """A task per file, each with its own nearest configuration's settings (a configuration
    met on the way that is wrong stops the run, as the first one would)."""
    from tfmigrate import runner
    from tfmigrate.config import ConfigError

    if "-" in paths and paths != ["-"]:
        _fail("'-' (standard input) cannot be mixed with other paths")
    missing = [p for p in paths if p != "-" and not os.path.lexists(p)]
    if missing:
        _fail(f"no such file or directory: {', '.join(missing)}")
    try:
        if paths == ["-"]:
            shown = stdin_name or "-"
            own = settings.for_path(stdin_name) if stdin_name else settings
            codes = own.codes_for(shown, own.codes()) if stdin_name else own.codes()
            return [runner.Task(shown, shown, codes, mode, own.unsafe_fixes, diff, data=sys.stdin.buffer.read())]
        return runner.tasks_for(runner.collect(paths, settings), settings, mode, diff=diff, use_cache=not no_cache)
    except ConfigError as error:
        _fail(str(error))


def _cores() -> int:
    """The cores this process may run on (a container's or taskset's limit, not the machine's)."""
    try:
        return len(os.sched_getaffinity(0)) or 1
    except (AttributeError, OSError):  # macOS, Windows
        return os.cpu_count() or 1


def _workers(jobs: int, files: int) -> int:
    """--jobs as worker processes: 0 means one per core; more than the cores or the files would
    only cost memory (each worker holds a parser), so it is capped."""
    if jobs < 0:
        _fail(f"--jobs {jobs}: expected a number of worker processes, 1 or more (0: one per core)")
    return max(1, min(jobs or _cores(), _cores(), files))


def _execute(tasks, jobs: int, show_progress: bool):
    from tfmigrate import runner

    jobs = _workers(jobs, len(tasks))
    if not (show_progress and len(tasks) > 8 and sys.stderr.isatty()):
        return runner.run(tasks, jobs)
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    with Progress(
        TextColumn("checking"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
        console=_stderr(), transient=True,
    ) as progress:
        bar = progress.add_task("files", total=len(tasks))
        return runner.run(tasks, jobs, on_result=lambda _: progress.advance(bar))


def _render(fmt: Format, outcomes, output_file, statistics: bool, files: int, fixed=0, fixed_files=0, extra=""):
    from tfmigrate import report

    findings = [f for o in outcomes for f in o.findings]
    sources = {o.shown: o.text for o in outcomes if o.text is not None}
    try:
        handle = None
        if output_file:
            handle = open(output_file, "w", encoding="utf-8", errors="surrogateescape", newline="")
    except OSError as error:
        _fail(f"--output-file {output_file}: cannot write the report: {error.strerror or error}")
    write = handle.write if handle else _emit
    try:
        if statistics:
            write(report.render_statistics(findings))
        elif fmt is Format.rich:
            from rich.console import Console

            console = Console(file=handle, highlight=False) if handle else Console(highlight=False)
            report.render_rich(findings, sources, console, files, fixed, fixed_files, extra)
        else:
            write(report.RENDERERS[fmt.value](findings))
    finally:
        if handle:
            handle.close()
    return findings


def _check_baseline(baseline: Optional[str], update: bool) -> None:
    """Before the run: a baseline that cannot be read (or written) stops it with exit 2."""
    if update and not baseline:
        _fail("--update-baseline needs --baseline FILE: the file to record the findings in")
    if baseline:
        from tfmigrate import baseline as baselines

        problem = baselines.problem(baseline, update)
        if problem:
            _fail(problem)


def _baseline(baseline: str, update: bool, outcomes):
    from tfmigrate import baseline as baselines

    try:
        return baselines.record(baseline, outcomes) if update else baselines.apply(baseline, outcomes)
    except ValueError as error:
        _fail(str(error))
    except OSError as error:
        _fail(f"{baseline}: cannot write the baseline: {error.strerror or error}")


class FailOn(str, Enum):
    any = "any"
    breakage = "breakage"


FAIL_ON = typer.Option(
    FailOn.any, "--fail-on",
    help="Which findings make the exit code 1: any (default), or breakage only (migration debt, TF1 API that "
         "runs through tf.compat.v1, is reported but does not fail the run).",
)


def _exit_code(findings, exit_zero: bool, fail_on: "FailOn") -> int:
    if exit_zero:
        return 0
    if fail_on is FailOn.breakage:
        return 1 if any(f.kind != "debt" for f in findings) else 0
    return 1 if findings else 0


@app.command()
def check(
    paths: Optional[List[str]] = PATHS,
    config: Optional[str] = CONFIG,
    select: Optional[List[str]] = SELECT,
    extend_select: Optional[List[str]] = EXTEND_SELECT,
    ignore: Optional[List[str]] = IGNORE,
    target_version: Optional[str] = TARGET,
    fmt: Format = FORMAT,
    output_file: Optional[str] = OUTPUT,
    statistics: bool = STATISTICS,
    exit_zero: bool = typer.Option(False, "--exit-zero", help="Exit 0 even when there are findings."),
    fail_on: FailOn = FAIL_ON,
    baseline: Optional[str] = typer.Option(None, "--baseline", help="Report only findings not in this baseline file (an error if it is missing)."),
    update_baseline: bool = typer.Option(False, "--update-baseline", help="Record this run's findings in the --baseline file (created or replaced)."),
    jobs: int = JOBS,
    no_cache: bool = NO_CACHE,
    stdin_filename: Optional[str] = STDIN_NAME,
    force_exclude: Optional[bool] = FORCE_EXCLUDE,
) -> None:
    """Report TF1 code and TF2 pitfalls."""
    paths = paths or ["."]
    settings = _settings(paths, config, select, extend_select, ignore, target_version, force_exclude=force_exclude)
    _check_output(output_file)
    _check_baseline(baseline, update_baseline)
    tasks = _tasks(paths, settings, "check", no_cache=no_cache, stdin_name=stdin_filename)
    outcomes = _execute(tasks, jobs, fmt is Format.rich)
    extra = ""
    if baseline:
        outcomes, extra = _baseline(baseline, update_baseline, outcomes)
    findings = _render(fmt, outcomes, output_file, statistics, len(tasks), extra=extra)
    raise typer.Exit(_exit_code(findings, exit_zero, fail_on))


@app.command()
def fix(
    paths: Optional[List[str]] = PATHS,
    unsafe_fixes: Optional[bool] = typer.Option(None, "--unsafe-fixes/--no-unsafe-fixes", help="Also apply fixes that may change behaviour beyond the finding."),
    diff: bool = typer.Option(False, "--diff", help="Print a unified diff of the fixes and write nothing."),
    config: Optional[str] = CONFIG,
    select: Optional[List[str]] = SELECT,
    extend_select: Optional[List[str]] = EXTEND_SELECT,
    ignore: Optional[List[str]] = IGNORE,
    target_version: Optional[str] = TARGET,
    fmt: Format = FORMAT,
    output_file: Optional[str] = OUTPUT,
    statistics: bool = STATISTICS,
    exit_zero: bool = typer.Option(False, "--exit-zero", help="Exit 0 even when findings remain."),
    fail_on: FailOn = FAIL_ON,
    jobs: int = JOBS,
    no_cache: bool = NO_CACHE,
    stdin_filename: Optional[str] = STDIN_NAME,
    force_exclude: Optional[bool] = FORCE_EXCLUDE,
) -> None:
    """Apply fixes in place (safe ones unless --unsafe-fixes), to a fixed point."""
    paths = paths or ["."]
    settings = _settings(paths, config, select, extend_select, ignore, target_version, unsafe_fixes, force_exclude)
    _check_output(output_file)
    tasks = _tasks(paths, settings, "fix", diff, no_cache, stdin_filename)
    outcomes = _execute(tasks, jobs, fmt is Format.rich and not diff)
    fixed = sum(o.applied for o in outcomes)
    fixed_files = sum(1 for o in outcomes if o.changed)
    if paths == ["-"] and not diff:
        sys.stdout.buffer.write(outcomes[0].output or b"")
        findings = [f for o in outcomes for f in o.findings]
        if findings:
            from tfmigrate import report

            sys.stderr.write(report.render_concise(findings))
        raise typer.Exit(1 if findings and not exit_zero else 0)
    if diff:
        _emit("".join(o.diff for o in outcomes))
        _stderr().print(
            f"Would fix {fixed} finding{'s' * (fixed != 1)} in {fixed_files} file{'s' * (fixed_files != 1)}.",
            soft_wrap=True,
        )
        raise typer.Exit(1 if fixed_files else 0)
    from tfmigrate.report import requirements_line

    needs = requirements_line(r for o in outcomes for r in o.requires)
    findings = _render(fmt, outcomes, output_file, statistics, len(tasks), fixed, fixed_files, extra=needs)
    if needs and (fmt is not Format.rich or statistics):
        _stderr().print(needs, soft_wrap=True, markup=False)
    raise typer.Exit(_exit_code(findings, exit_zero, fail_on))


@app.command()
def rules(
    config: Optional[str] = CONFIG,
    select: Optional[List[str]] = SELECT,
    ignore: Optional[List[str]] = IGNORE,
) -> None:
    """List every rule: code, name, severity, fix, and whether it is enabled here."""
    from rich.console import Console

    from tfmigrate import report

    settings = _settings(["."], config, select, None, ignore, None)
    report.render_rules(Console(highlight=False), settings.codes())


@app.command()
def explain(code: str = typer.Argument(..., help="A rule code, e.g. TFM104.")) -> None:
    """Why a rule exists, and a before/after example."""
    from rich.console import Console

    from tfmigrate import report
    from tfmigrate.catalogue import catalogue

    info = catalogue().get(code.upper())
    if info is None:
        _fail(f"unknown rule code: {code}")
    report.render_explain(Console(highlight=False), info)


@app.command()
def clean(config: Optional[str] = CONFIG) -> None:
    """Remove the .tfmigrate_cache folder."""
    import shutil

    from tfmigrate.runner import CACHE_DIR

    settings = _settings(["."], config, None, None, None, None)
    folder = settings.root / CACHE_DIR
    shutil.rmtree(folder, ignore_errors=True)
    print(f"Removed {folder}")


def _terminate(signum, frame):  # SIGTERM unwinds like Ctrl-C, so atomic writes clean up
    raise KeyboardInterrupt


def main() -> None:
    for stream in (sys.stdout, sys.stderr):  # before typer's own usage errors too
        _tolerant(stream)
    if hasattr(signal, "SIGTERM"):
        signal.signal(signal.SIGTERM, _terminate)
    try:
        app()
    except SystemExit:
        raise
    except KeyboardInterrupt:
        sys.stderr.write("tfmigrate: interrupted; every file is either untouched or completely fixed\n")
        sys.exit(130)
    except Exception as error:  # an internal error is exit 2, never a traceback-only exit 1
        import traceback

        traceback.print_exc()
        sys.stderr.write(f"tfmigrate: internal error: {error}\n")
        sys.exit(2)


if __name__ == "__main__":
    main()
