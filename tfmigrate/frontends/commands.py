"""What the `tfmigrate` commands do (check | fix | rules | explain | server | clean), called with
their flags' values (read by frontends.flags, or a plain `check` by frontends.cli): resolve
settings, plan and run them through tfmigrate.api, render. Imports neither typer nor rich until a
run needs them. Exit codes as Ruff: 0 clean, 1 findings (with `fix --diff`: changes), 2 usage,
configuration or internal error.
"""
from __future__ import annotations

import os
import sys
from enum import Enum
from typing import List, Optional

from tfmigrate.frontends.streams import FORMATS, emit as _emit, plain_width

# --format's values for typer, made from streams.FORMATS (a warm check reads them without this module).
Format = Enum("Format", [(value.replace("-", "_"), value) for value in FORMATS], type=str, module=__name__)


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
    raise SystemExit(2)


def _settings(paths, config, select, extend_select, ignore, target, unsafe=None, force_exclude=None,
              respect_gitignore=None, exclude=None, extend_exclude=None, max_file_size=None, native=None,
              ignore_noqa=None, keras3=None):
    from tfmigrate.workspace.config import ConfigError, resolve

    try:
        settings = resolve(paths, config, select, extend_select, ignore, unsafe, target, force_exclude,
                           respect_gitignore, exclude, extend_exclude, max_file_size, native, ignore_noqa, keras3)
        settings.codes()
        return settings
    except ConfigError as error:
        _fail(str(error))


def _tasks(paths: List[str], settings, mode: str, diff=False, no_cache=False, stdin_name=None):
    """A task per file, each with its own nearest configuration's settings (a configuration
    met on the way that is wrong stops the run, as the first one would)."""
    from tfmigrate import api
    from tfmigrate.workspace.config import ConfigError

    if "-" in paths and paths != ["-"]:
        _fail("'-' (standard input) cannot be mixed with other paths")
    missing = [p for p in paths if p != "-" and not os.path.lexists(p)]
    if missing:
        _fail(f"no such file or directory: {', '.join(missing)}")
    try:
        if paths == ["-"]:
            return [api.stdin_job(settings, mode, sys.stdin.buffer.read(), stdin_name, diff)]
        return api.plan(paths, settings, mode, diff=diff, use_cache=not no_cache)
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


def _warn(message: str) -> None:
    from rich.markup import escape

    _stderr().print(f"[bold yellow]warning:[/] {escape(message)}", soft_wrap=True, markup=True)


def _warn_empty(paths: List[str], settings) -> None:
    """Nothing to check is not a clean run: say so (exit code 0, as Ruff), and why when the
    paths hold source files that the excludes or git took away."""
    from tfmigrate.workspace.files import discover
    from tfmigrate.workspace.gitignore import gitignored

    message = "No Python files found under the given path(s)"
    present = [f for f in discover(paths) if os.path.isfile(f)]
    if not present:
        _warn(message + ".")
        return
    excluded = [f for f in present if settings.for_path(f).excluded(f)]
    ignored = gitignored([f for f in present if f not in set(excluded)])
    reasons = []
    if excluded:
        reasons.append(f"{len(excluded)} by exclude / extend-exclude")
    if ignored:
        reasons.append(f"{len(ignored)} ignored by git (--no-respect-gitignore checks those)")
    n = len(present)
    why = "; ".join(reasons) or "by the configuration"
    _warn(f"{message}: {n} .py/.ipynb file{'s' * (n != 1)} {'are' if n != 1 else 'is'} there, all skipped: {why}.")


def _say(text: str) -> None:
    """A plain line on standard error (summaries beside machine formats, -v)."""
    sys.stderr.write(text.rstrip("\n") + "\n")
    sys.stderr.flush()


def _describe(tasks, settings) -> None:
    """-v: the configuration each file takes (Ruff's hierarchical configuration made visible)."""
    from collections import Counter

    used = Counter(str(settings.for_path(t.path).source or "defaults (no configuration file)") for t in tasks)
    for source, count in used.items():
        _say(f"tfmigrate: configuration for {count} file{'s' * (count != 1)}: {source}")


def _settings_text(path: str, settings) -> str:
    """`--show-settings`: where the settings of `path` come from and every value, as TOML keys."""
    import dataclasses
    import json

    own = settings.for_path(path)
    lines = [f"Resolved settings for: {path}", f"Settings path: {own.source or 'none (the defaults, no configuration file)'}"]
    if own.extends:
        lines.append(f"Extends: {' -> '.join(str(p) for p in own.extends)} (each extends the next; this file's settings override theirs)")
    if own.ignore_noqa:
        lines.append("# --ignore-noqa: no noqa comment silences a finding")
    for field in dataclasses.fields(own):
        if field.name in ("resolver", "source", "extends", "ignore_noqa"):
            continue
        value = getattr(own, field.name)
        lines.append(f"{field.name.replace('_', '-')} = {json.dumps(str(value) if isinstance(value, os.PathLike) else value)}")
    lines.append(f"# enabled rules: {', '.join(own.codes())}")
    return "\n".join(lines) + "\n"


def _execute(tasks, jobs: int, show_progress: bool, verbose: bool = False):
    from tfmigrate import api

    jobs = _workers(jobs, len(tasks))
    if verbose:
        import time

        start = time.perf_counter()
        done = [0]

        def tell(outcome):
            done[0] += 1
            n = len(outcome.findings)
            fixed = f", {outcome.applied} fixed" if outcome.applied else ""
            _say(f"tfmigrate: [{done[0]}/{len(tasks)}] {outcome.shown}: {n} finding{'s' * (n != 1)}{fixed}")

        outcomes = api.run(tasks, jobs, on_result=tell)
        _say(f"tfmigrate: {len(tasks)} file{'s' * (len(tasks) != 1)} in {time.perf_counter() - start:.2f} s "
             f"({jobs} worker{'s' * (jobs != 1)})")
        return outcomes
    if not (show_progress and len(tasks) > 8 and sys.stderr.isatty()):
        return api.run(tasks, jobs)
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    with Progress(
        TextColumn("checking"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
        console=_stderr(), transient=True,
    ) as progress:
        bar = progress.add_task("files", total=len(tasks))
        return api.run(tasks, jobs, on_result=lambda _: progress.advance(bar))


def _render(fmt: Format, outcomes, output_file, statistics: bool, files: int, fixed=0, fixed_files=0, extra="",
            listing="", quiet=False, kept=None):
    """Write the report; `kept` (a list) gets (how, text) when it went to standard output as one
    text (frontends.warm keeps it to replay)."""
    from tfmigrate.frontends import report

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
        if statistics and fmt.value in report.STATISTICS_RENDERERS:
            write(report.STATISTICS_RENDERERS[fmt.value](findings))
        elif statistics and fmt in (Format.rich, Format.concise):
            write(report.render_statistics(findings))
        elif fmt is Format.rich:
            file = handle or sys.stdout
            width = plain_width(file)
            text = None if width is None else report.render_plain(findings, sources, width, files, fixed, fixed_files,
                                                                  extra, listing, quiet)
            if text is not None:
                file.write(text)
                file.flush()
                if kept is not None and not handle:
                    kept.append(("write", text))
            else:
                from rich.console import Console

                console = Console(file=handle, highlight=False) if handle else Console(highlight=False)
                report.render_rich(findings, sources, console, files, fixed, fixed_files, extra, listing, quiet)
        else:
            text = report.RENDERERS[fmt.value](findings)
            write(text)
            if kept is not None and not handle and not statistics:
                kept.append(("emit", text))
            if statistics:  # sarif, github, junit: the document stays whole on its stream
                sys.stderr.write(report.render_statistics(findings))
    finally:
        if handle:
            handle.close()
    return findings


def _check_baseline(baseline: Optional[str], update: bool) -> None:
    """Before the run: a baseline that cannot be read (or written) stops it with exit 2."""
    if update and not baseline:
        _fail("--update-baseline needs --baseline FILE: the file to record the findings in")
    if baseline:
        from tfmigrate.frontends import baseline as baselines

        problem = baselines.problem(baseline, update)
        if problem:
            _fail(problem)


def _baseline(baseline: str, update: bool, outcomes):
    from tfmigrate.frontends import baseline as baselines

    try:
        return baselines.record(baseline, outcomes) if update else baselines.apply(baseline, outcomes)
    except ValueError as error:
        _fail(str(error))
    except OSError as error:
        _fail(f"{baseline}: cannot write the baseline: {error.strerror or error}")


class FailOn(str, Enum):
    any = "any"
    breakage = "breakage"


def _exit_code(findings, exit_zero: bool, fail_on: "FailOn") -> int:
    if exit_zero:
        return 0
    if fail_on is FailOn.breakage:
        return 1 if any(f.kind != "debt" for f in findings) else 0
    return 1 if findings else 0


def check(paths=None, config=None, select=None, extend_select=None, ignore=None, target_version=None, native=None,
          keras3=None, fmt=Format.rich, output_file=None, statistics=False, exit_zero=False, fail_on=FailOn.any, baseline=None,
          update_baseline=False, add_noqa=False, add_noqa_reason=None, jobs=0, no_cache=False, stdin_filename=None,
          force_exclude=None, max_file_size=None, respect_gitignore=None, exclude=None, extend_exclude=None,
          quiet=False, verbose=False, show_files=False, show_settings=False, ignore_noqa=None, fix_=False,
          fix_only=False, unsafe_fixes=None, diff=False, show_fixes=False, exit_non_zero_on_fix=False,
          watch=False, memo=None) -> None:
    """`tfmigrate check`, its defaults those of its flags (tfmigrate.frontends.flags.check);
    `memo`: a frontends.warm.Recorder, given the output to replay (a plain check's)."""
    if watch:
        again = dict(locals(), watch=False)
        _watch(paths or ["."], lambda: check(**again), fix_ or fix_only or diff or add_noqa or add_noqa_reason is not None
               or update_baseline or show_files or show_settings or paths == ["-"] or bool(output_file))
    paths = paths or ["."]
    fix_only = fix_only or diff  # as Ruff: check --diff implies --fix-only
    fixing = fix_ or fix_only
    settings = _settings(paths, config, select, extend_select, ignore, target_version,
                         unsafe_fixes, force_exclude=force_exclude,
                         respect_gitignore=respect_gitignore, exclude=exclude, extend_exclude=extend_exclude,
                         max_file_size=max_file_size, native=native, ignore_noqa=ignore_noqa, keras3=keras3)
    if show_settings:
        _emit(_settings_text(paths[0], settings))
        raise SystemExit(0)
    if fixing and not show_files:
        used = [name for name, on in (("--baseline", baseline), ("--update-baseline", update_baseline),
                                      ("--add-noqa", add_noqa or add_noqa_reason is not None)) if on]
        if used:
            _fail(f"{used[0]} cannot be used with --fix or --fix-only")
        fix(paths, unsafe_fixes, native, diff, show_fixes, config, select, extend_select, ignore, target_version,
            fmt, output_file, statistics, exit_zero, exit_non_zero_on_fix, fail_on, jobs, no_cache, stdin_filename,
            force_exclude, max_file_size, respect_gitignore, exclude, extend_exclude, quiet, verbose, ignore_noqa,
            only=fix_only, keras3=keras3)
    if add_noqa_reason is not None:
        add_noqa = True
    if add_noqa and (paths == ["-"] or baseline):
        _fail("--add-noqa writes to the files checked: it cannot be used with '-' (standard input) or --baseline")
    _check_output(output_file)
    _check_baseline(baseline, update_baseline)
    tasks = _tasks(paths, settings, "check", no_cache=no_cache, stdin_name=stdin_filename)
    if not tasks:
        _warn_empty(paths, settings)
    if show_files:
        _emit("".join(f"{task.shown}\n" for task in sorted(tasks, key=lambda task: task.shown)))
        raise SystemExit(0)
    if verbose:
        _describe(tasks, settings)
    outcomes = _execute(tasks, jobs, fmt is Format.rich and not add_noqa, verbose)
    if add_noqa:
        _add_noqa(tasks, outcomes, add_noqa_reason, quiet, exit_zero)
    extra = ""
    if baseline:
        outcomes, extra = _baseline(baseline, update_baseline, outcomes)
    kept = [] if memo is not None and tasks else None
    findings = _render(fmt, outcomes, output_file, statistics, len(tasks), extra=extra, quiet=quiet, kept=kept)
    code = _exit_code(findings, exit_zero, fail_on)
    if kept:
        memo.keep(settings.root, kept[0][0], kept[0][1], code)
    raise SystemExit(code)


WATCH_INTERVAL = 0.5  # seconds between two looks at the files' modification times


def _watch(paths: List[str], run, refused: bool) -> None:
    """`check --watch`: run, then run again whenever a .py / .ipynb file under `paths` (or the
    configuration they take) is added, removed or modified; Ctrl-C stops it with exit code 0."""
    import time
    from datetime import datetime

    if refused:
        _fail("--watch reports on the files as they change: it cannot be used with --fix, --fix-only, --diff, "
              "--add-noqa, --update-baseline, --show-files, --show-settings, --output-file or '-' (standard input)")

    def state() -> dict:
        from tfmigrate.workspace.config import ConfigError, resolve
        from tfmigrate.workspace.files import discover

        try:
            settings = resolve(paths)
            files = discover([p for p in paths if os.path.exists(p)], lambda p: settings.for_path(p).excluded(p))
            configs = {c for f in files for own in [settings.for_path(f)] for c in (own.source, *own.extends) if c}
        except ConfigError:
            files, configs = discover([p for p in paths if os.path.exists(p)]), set()
        seen = {}
        for path in [*files, *map(str, configs)]:
            try:
                info = os.stat(path)
                seen[path] = (info.st_mtime_ns, info.st_size)
            except OSError:
                pass
        return seen

    def once() -> None:
        try:
            run()
        except SystemExit:  # findings (1) or a configuration error (2): keep watching
            pass
        sys.stdout.flush()
        _say(f"[{datetime.now():%H:%M:%S}] Watching for file changes under {', '.join(paths)} (Ctrl-C to stop).")

    try:
        _say(f"[{datetime.now():%H:%M:%S}] Starting tfmigrate check in watch mode...")
        last = state()
        once()
        while True:
            time.sleep(WATCH_INTERVAL)
            now = state()
            if now != last:
                changed = sorted(set(now.items()) ^ set(last.items()))
                last = now
                _say(f"[{datetime.now():%H:%M:%S}] File change detected ({changed[0][0]}): checking again...")
                once()
    except KeyboardInterrupt:
        sys.stdout.flush()
        raise SystemExit(0)


def _add_noqa(tasks, outcomes, reason: Optional[str], quiet: bool, exit_zero: bool = False) -> None:
    """Write the noqa comments, say what was done, and exit: 0 when every finding is now
    silenced, 1 when some cannot be (a file that does not parse, a line that ends inside a
    string), listed on standard error."""
    from tfmigrate.frontends import addnoqa
    from tfmigrate.frontends import report

    if reason is not None and ("\n" in reason or "\r" in reason):
        _fail("--add-noqa=REASON: the reason must fit on one line")
    added = files = 0
    left = []
    for task, outcome in zip(tasks, outcomes):
        if not outcome.findings:
            continue
        try:
            result = addnoqa.add_to_file(task.path, outcome.findings, reason)
        except OSError as error:
            _fail(f"{task.shown}: cannot write the noqa comments: {error.strerror or error}")
        added += result.added
        files += bool(result.added)
        left.extend(result.left)
    if not quiet:
        _say(f"Added {added} noqa directive{'s' * (added != 1)} in {files} file{'s' * (files != 1)}.")
    if left:
        _say(f"{len(left)} finding{'s' * (len(left) != 1)} cannot be silenced by a noqa comment (the line ends "
             "inside a string or with a backslash, or nothing silences the rule: TFM000, TFM001, TFM002):")
        sys.stderr.write(report.render_concise(left))
    raise SystemExit(1 if left and not exit_zero else 0)


def _applied(outcomes):
    return [(o.shown, o.fixed_rules) for o in outcomes if o.fixed_rules]


def fix(paths, unsafe_fixes, native, diff, show_fixes, config, select, extend_select, ignore, target_version, fmt,
        output_file, statistics, exit_zero, exit_non_zero_on_fix, fail_on, jobs, no_cache, stdin_filename,
        force_exclude, max_file_size, respect_gitignore, exclude, extend_exclude, quiet, verbose, ignore_noqa,
        only: bool = False, keras3=None) -> None:
    """`tfmigrate fix`, and `check --fix`; `only` (`check --fix-only`): the findings that remain
    are not reported and do not change the exit code."""
    paths = paths or ["."]
    settings = _settings(paths, config, select, extend_select, ignore, target_version, unsafe_fixes, force_exclude,
                         respect_gitignore, exclude, extend_exclude, max_file_size, native, ignore_noqa, keras3)
    _check_output(output_file)
    tasks = _tasks(paths, settings, "fix", diff, no_cache, stdin_filename)
    if not tasks:
        _warn_empty(paths, settings)
    if verbose:
        _describe(tasks, settings)
    outcomes = _execute(tasks, jobs, fmt is Format.rich and not diff, verbose)
    if not diff and paths != ["-"]:
        from tfmigrate import api

        outcomes, settled = api.settle(paths, settings, tasks, outcomes, _workers(jobs, len(tasks)), not no_cache)
        if not settled:
            _warn(f"the fixes kept changing what files tell each other after {api.SETTLE_ROUNDS + 1} runs; "
                  "run `tfmigrate fix` again and report it")
    fixed = sum(o.applied for o in outcomes)
    fixed_files = sum(1 for o in outcomes if o.changed)
    from tfmigrate.frontends import report

    listing = report.fixes_listing(_applied(outcomes), would=diff) if show_fixes and not quiet else ""
    if only and not diff:  # --fix-only: the findings left are neither reported nor counted
        import dataclasses

        outcomes = [dataclasses.replace(o, findings=[]) for o in outcomes]
        exit_zero, fail_on = True, FailOn.any
    if paths == ["-"] and not diff:
        sys.stdout.buffer.write(outcomes[0].output or b"")
        findings = [f for o in outcomes for f in o.findings]
        if exit_non_zero_on_fix and fixed:
            exit_zero = False
        if findings:
            sys.stderr.write(report.render_concise(findings))
        if listing:
            _say(listing)
        if not quiet:
            _say(_fixed_line(fixed, fixed_files) if only else report.closing_text(findings, len(tasks), fixed, fixed_files))
        raise SystemExit(1 if (findings or only) and not exit_zero else 0)
    if diff:
        _emit("".join(o.diff for o in outcomes))
        if listing:
            _say(listing)
        if not quiet:
            _stderr().print(
                f"Would fix {fixed} finding{'s' * (fixed != 1)} in {fixed_files} file{'s' * (fixed_files != 1)}.",
                soft_wrap=True,
            )
        raise SystemExit(1 if fixed_files else 0)
    needs = "\n".join(filter(None, [report.requirements_line(r for o in outcomes for r in o.requires),
                                     report.kept_tf1_lines((o.shown, o.kept) for o in outcomes)]))
    rich = fmt is Format.rich and not statistics
    if only and rich:
        if listing:
            _emit(listing)
        if not quiet:
            _emit(_fixed_line(fixed, fixed_files) + "\n")
        if needs:
            _stderr().print(needs, soft_wrap=True, markup=False)
        raise SystemExit(1 if exit_non_zero_on_fix and fixed else 0)
    findings = _render(fmt, outcomes, output_file, statistics, len(tasks), fixed, fixed_files, extra=needs,
                       listing=listing if rich else "", quiet=quiet)
    if not rich:  # machine formats keep stdout parseable: the summary goes to stderr
        if listing:
            _say(listing)
        if not quiet:
            _say(_fixed_line(fixed, fixed_files) if only else report.closing_text(findings, len(tasks), fixed, fixed_files))
        if needs:
            _stderr().print(needs, soft_wrap=True, markup=False)
    elif quiet and needs:
        _stderr().print(needs, soft_wrap=True, markup=False)
    if exit_non_zero_on_fix and fixed:
        raise SystemExit(1)
    raise SystemExit(_exit_code(findings, exit_zero, fail_on))


def _fixed_line(fixed: int, files: int) -> str:
    """What `check --fix-only` says: the fixes, nothing about the findings left."""
    if not fixed:
        return "No fixes applied."
    return f"Fixed {fixed} finding{'s' * (fixed != 1)} in {files} file{'s' * (files != 1)}."


class RulesFormat(str, Enum):
    text = "text"
    json = "json"


def rules(config=None, select=None, ignore=None, fmt=RulesFormat.text) -> None:
    """`tfmigrate rules` (its flags and help: frontends.flags)."""
    import shutil

    from tfmigrate.frontends import report

    settings = _settings(["."], config, select, None, ignore, None)
    if fmt is RulesFormat.json:
        _emit(report.render_rules_json(settings.codes()))
        return
    width = shutil.get_terminal_size((80, 24)).columns if sys.stdout.isatty() else 80
    _emit(report.render_rules_text(settings.codes(), min(max(width, 60), 100)))


def explain(code: str) -> None:
    """`tfmigrate explain CODE` and `tfmigrate rule CODE`."""
    from rich.console import Console

    from tfmigrate.frontends import report
    from tfmigrate.catalogue import catalogue

    info = catalogue().get(code.upper())
    if info is None:
        _fail(f"unknown rule code: {code}")
    report.render_explain(Console(highlight=False), info)


def server() -> None:
    """`tfmigrate server`: the language server, when pygls is installed."""
    try:
        import lsprotocol  # noqa: F401
        import pygls  # noqa: F401
    except ImportError:
        _fail("tfmigrate server needs pygls: pip install 'tfmigrate[server]'")
    from tfmigrate.frontends.server import serve

    serve()


def clean(config=None) -> None:
    """`tfmigrate clean`."""
    import shutil

    from tfmigrate.workspace import CACHE_DIR

    settings = _settings(["."], config, None, None, None, None)
    folder = settings.root / CACHE_DIR
    shutil.rmtree(folder, ignore_errors=True)
    print(f"Removed {folder}")
