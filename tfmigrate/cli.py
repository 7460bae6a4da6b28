"""The `tfmigrate` command: check | fix | rules | explain. Thin: parse flags, call the engine,
render. Exit codes as Ruff: 0 clean, 1 findings (or, with --diff, changes), 2 usage or internal error.
"""
from __future__ import annotations

import difflib
import os
import sys
import tokenize
from enum import Enum
from io import BytesIO
from typing import Dict, List, Optional, Tuple

import typer
from rich.console import Console

from tfmigrate import __version__
from tfmigrate.catalogue import SelectionError, catalogue, select as select_codes
from tfmigrate.findings import Finding

app = typer.Typer(
    add_completion=False,
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    help="Find TensorFlow 1 code and the pitfalls that break under TensorFlow 2.21 / Keras 3, and fix them.",
)


class Format(str, Enum):
    rich = "rich"
    json = "json"


PATHS = typer.Argument(None, help="Files or directories to check (default: the current directory).")
SELECT = typer.Option(None, "--select", help="Rule codes or prefixes to enable (TFM1, TFM104); comma-separated or repeated.")
IGNORE = typer.Option(None, "--ignore", help="Rule codes or prefixes to disable.")
FORMAT = typer.Option(Format.rich, "--format", help="Output format.")


def _version(value: bool) -> None:
    if value:
        print(f"tfmigrate {__version__}")
        raise typer.Exit(0)


@app.callback()
def _root(
    version: bool = typer.Option(False, "--version", callback=_version, is_eager=True, help="Show the version."),
) -> None:
    """tfmigrate: a TF1-to-TF2 migration linter."""


def _fail(message: str) -> None:
    Console(stderr=True, highlight=False).print(f"[bold red]error:[/] {message}", soft_wrap=True)
    raise typer.Exit(2)


def _codes(select: Optional[List[str]], ignore: Optional[List[str]]) -> List[str]:
    try:
        return select_codes(select, ignore)
    except SelectionError as error:
        _fail(str(error))
        raise  # unreachable


def _files(paths: Optional[List[str]]) -> List[str]:
    from tfmigrate.files import discover

    paths = paths or ["."]
    missing = [p for p in paths if not os.path.lexists(p)]
    if missing:
        _fail(f"no such file or directory: {', '.join(missing)}")
    return discover(paths)


def _read(path: str) -> Tuple[Optional[bytes], Optional[Finding]]:
    """The file's bytes, or a TFM001 finding saying why it cannot be read."""
    from tfmigrate.engine import PARSE_ERROR, make_finding

    try:
        with open(path, "rb") as handle:
            return handle.read(), None
    except OSError as error:
        reason = error.strerror or type(error).__name__
        message = f"Cannot read this file: {reason}. It was skipped; the other files are still checked."
        return None, make_finding(PARSE_ERROR, path, message, (1, 0), (1, 0))


def _text(data: bytes) -> str:
    try:
        encoding, _ = tokenize.detect_encoding(BytesIO(data).readline)
        return data.decode(encoding, errors="replace")
    except (SyntaxError, LookupError):
        return data.decode("utf-8", errors="replace")


def _console() -> Console:
    return Console(highlight=False)


def _emit(fmt: Format, findings: List[Finding], sources: Dict[str, str], files: int, fixed=0, fixed_files=0):
    from tfmigrate import report

    if fmt is Format.json:
        sys.stdout.write(report.render_json(findings))
    else:
        report.render_rich(findings, sources, _console(), files, fixed, fixed_files)


@app.command()
def check(
    paths: Optional[List[str]] = PATHS,
    select: Optional[List[str]] = SELECT,
    ignore: Optional[List[str]] = IGNORE,
    fmt: Format = FORMAT,
    exit_zero: bool = typer.Option(False, "--exit-zero", help="Exit 0 even when there are findings."),
) -> None:
    """Report TF1 code and TF2 pitfalls."""
    from tfmigrate.engine import check_source
    from tfmigrate.files import display_path

    codes = _codes(select, ignore)
    files = _files(paths)
    findings: List[Finding] = []
    sources: Dict[str, str] = {}
    for path in files:
        shown = display_path(path)
        data, unreadable = _read(path)
        found = [unreadable] if unreadable else check_source(data, shown, codes)
        if found and data is not None:
            sources[shown] = _text(data)
        findings.extend(found)
    _emit(fmt, findings, sources, len(files))
    raise typer.Exit(1 if findings and not exit_zero else 0)


@app.command()
def fix(
    paths: Optional[List[str]] = PATHS,
    unsafe_fixes: bool = typer.Option(False, "--unsafe-fixes", help="Also apply fixes that may change behaviour beyond the finding."),
    diff: bool = typer.Option(False, "--diff", help="Print a unified diff of the fixes and write nothing."),
    select: Optional[List[str]] = SELECT,
    ignore: Optional[List[str]] = IGNORE,
    fmt: Format = FORMAT,
) -> None:
    """Apply fixes in place (safe ones unless --unsafe-fixes), to a fixed point."""
    from tfmigrate.engine import fix_source
    from tfmigrate.files import display_path, write_atomic

    codes = _codes(select, ignore)
    files = _files(paths)
    remaining: List[Finding] = []
    sources: Dict[str, str] = {}
    fixed = fixed_files = 0
    for path in files:
        shown = display_path(path)
        data, unreadable = _read(path)
        if unreadable:
            remaining.append(unreadable)
            continue
        result = fix_source(data, shown, codes, unsafe=unsafe_fixes)
        if result.fixed is not None:
            fixed += result.applied
            fixed_files += 1
            if diff:
                sys.stdout.writelines(
                    difflib.unified_diff(
                        _text(data).splitlines(keepends=True),
                        _text(result.fixed).splitlines(keepends=True),
                        fromfile=f"a/{shown}",
                        tofile=f"b/{shown}",
                    )
                )
            else:
                write_atomic(path, result.fixed)
        if result.findings:
            sources[shown] = _text(result.fixed if result.fixed is not None and not diff else data)
        remaining.extend(result.findings)
    if diff:
        Console(stderr=True, highlight=False).print(
            f"Would fix {fixed} finding{'s' * (fixed != 1)} in {fixed_files} file{'s' * (fixed_files != 1)}.",
            soft_wrap=True,
        )
        raise typer.Exit(1 if fixed else 0)
    _emit(fmt, remaining, sources, len(files), fixed, fixed_files)
    raise typer.Exit(1 if remaining else 0)


@app.command()
def rules(
    select: Optional[List[str]] = SELECT,
    ignore: Optional[List[str]] = IGNORE,
) -> None:
    """List every rule: code, name, severity, fix, whether enabled."""
    from tfmigrate import report

    report.render_rules(_console(), _codes(select, ignore))


@app.command()
def explain(code: str = typer.Argument(..., help="A rule code, e.g. TFM104.")) -> None:
    """Why a rule exists, and a before/after example."""
    from tfmigrate import report

    info = catalogue().get(code.upper())
    if info is None:
        _fail(f"unknown rule code: {code}")
    report.render_explain(_console(), info)


def main() -> None:
    try:
        app()
    except SystemExit:
        raise
    except KeyboardInterrupt:
        sys.exit(130)
    except Exception as error:  # an internal error is exit 2, never a traceback-only exit 1
        import traceback

        traceback.print_exc()
        Console(stderr=True, highlight=False).print(f"[bold red]tfmigrate: internal error:[/] {error}", soft_wrap=True)
        sys.exit(2)


if __name__ == "__main__":
    main()
