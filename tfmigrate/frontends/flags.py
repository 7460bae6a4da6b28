"""The `tfmigrate` commands as typer reads them: their flags, help and usage errors; what each
does is frontends.commands'. A plain `check` is read without this module (frontends.cli):
importing typer costs about 35 ms, a fifth of a warm check before this split.
"""
from __future__ import annotations

import sys
from typing import List, Optional

import typer
from typer.core import TyperCommand

from tfmigrate import __version__
from tfmigrate.frontends import commands
from tfmigrate.frontends.commands import FailOn, Format, RulesFormat
from tfmigrate.frontends.streams import tolerant

app = typer.Typer(
    add_completion=False,
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    help="Find TensorFlow 1 code and the pitfalls that break under TensorFlow 2.21 / Keras 3, and fix them.",
)

PATHS = typer.Argument(None, help="Files or directories (default: .); '-' reads standard input.")
CONFIG = typer.Option(None, "--config", metavar="PATH|KEY=VALUE", help="A tfmigrate.toml or pyproject.toml to use instead of the nearest one, or a TOML `key = value` pair that overrides that key of every configuration, e.g. --config \"native = true\" or --config \"select = ['TFM101']\" (as Ruff: repeatable, one file at most; other flags still override it).")
IGNORE_NOQA = typer.Option(None, "--ignore-noqa/--no-ignore-noqa", help="Report (and fix) findings even where a `# noqa` comment would silence them (as Ruff).")
SELECT = typer.Option(None, "--select", help="Rule codes or prefixes to enable instead of the defaults (every rule marked on in `tfmigrate rules`), e.g. TFM1 or TFM104.")
EXTEND_SELECT = typer.Option(None, "--extend-select", help="Rule codes or prefixes to enable in addition.")
IGNORE = typer.Option(None, "--ignore", help="Rule codes or prefixes to disable.")
TARGET = typer.Option(None, "--target-version", help="TensorFlow version to migrate to (default 2.21).")
FORMAT = typer.Option(Format.rich, "--format", "--output-format", help="Output format (--output-format: the same option, as Ruff spells it).")
OUTPUT = typer.Option(None, "--output-file", "-o", help="Write the report to this file instead of standard output.")
JOBS = typer.Option(0, "--jobs", "-j", help="Worker processes, at most one per core and per file (default, 0: one per core).")
NO_CACHE = typer.Option(False, "--no-cache", help="Neither read nor write .tfmigrate_cache/.")
STDIN_NAME = typer.Option(None, "--stdin-filename", help="The path to report (and match config against) for '-'.")
STATISTICS = typer.Option(False, "--statistics", help="Print the number of findings per rule instead of the findings (json / json-lines: as JSON; sarif, github, junit: the findings, and the counts on standard error).")
MAX_FILE_SIZE = typer.Option(None, "--max-file-size", metavar="SIZE", help="Skip (and report as TFM001) files larger than this, e.g. 2MB; 0: no limit (default 800KB).")
FORCE_EXCLUDE = typer.Option(None, "--force-exclude/--no-force-exclude", help="Apply exclude / extend-exclude to files named on the command line too (as pre-commit names them).")
RESPECT_GITIGNORE = typer.Option(None, "--respect-gitignore/--no-respect-gitignore", help="Skip the files git ignores (default: on, or the configuration's respect-gitignore).")
EXCLUDE = typer.Option(None, "--exclude", help="Globs of files and folders to skip, instead of the configuration's exclude (comma-separated or repeated).")
EXTEND_EXCLUDE = typer.Option(None, "--extend-exclude", help="Globs of files and folders to skip, in addition to exclude.")
QUIET = typer.Option(False, "--quiet", "-q", help="Print the findings only: no summary lines (warnings and errors still go to standard error).")
VERBOSE = typer.Option(False, "--verbose", "-v", help="Also print, on standard error, the configuration in use, each file as it is done, and the time taken.")
FAIL_ON = typer.Option(
    FailOn.any, "--fail-on",
    help="Which findings make the exit code 1: any (default), or breakage only (migration debt, TF1 API that "
         "runs through tf.compat.v1, is reported but does not fail the run).",
)


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
        tolerant(stream)


class _CheckCommand(TyperCommand):
    """`--add-noqa=REASON` (Ruff's spelling) is `--add-noqa` with a reason: click has no option
    whose value is optional and must follow an `=`, so the spelling is split before parsing."""

    def parse_args(self, ctx, args):
        out = []
        for position, arg in enumerate(args):
            if arg == "--":
                out.extend(args[position:])
                break
            if arg.startswith("--add-noqa="):
                out += ["--add-noqa", "--add-noqa-reason", arg[len("--add-noqa="):]]
            else:
                out.append(arg)
        return super().parse_args(ctx, out)


@app.command(cls=_CheckCommand)
def check(
    paths: Optional[List[str]] = PATHS,
    config: Optional[List[str]] = CONFIG,
    select: Optional[List[str]] = SELECT,
    extend_select: Optional[List[str]] = EXTEND_SELECT,
    ignore: Optional[List[str]] = IGNORE,
    target_version: Optional[str] = TARGET,
    native: Optional[bool] = typer.Option(None, "--native/--no-native", help="Rewrite TF1 graph scripts (Session, placeholder, feed_dict) to eager TF2 where tfmigrate can; check: say which construct stops it."),
    keras3: Optional[bool] = typer.Option(None, "--keras3/--no-keras3", help="With --native (which it implies): also say, per construct, what `fix --keras3` would keep TF1 inside the tracked layers, and why."),
    fmt: Format = FORMAT,
    output_file: Optional[str] = OUTPUT,
    statistics: bool = STATISTICS,
    exit_zero: bool = typer.Option(False, "--exit-zero", help="Exit 0 even when there are findings."),
    fail_on: FailOn = FAIL_ON,
    baseline: Optional[str] = typer.Option(None, "--baseline", help="Report only findings not in this baseline file (an error if it is missing)."),
    update_baseline: bool = typer.Option(False, "--update-baseline", help="Record this run's findings in the --baseline file (created or replaced)."),
    add_noqa: bool = typer.Option(False, "--add-noqa", help="Write `# noqa: CODE` on every line with a finding (merged into an existing noqa comment); --add-noqa=REASON appends a reason."),
    add_noqa_reason: Optional[str] = typer.Option(None, "--add-noqa-reason", hidden=True),
    jobs: int = JOBS,
    no_cache: bool = NO_CACHE,
    stdin_filename: Optional[str] = STDIN_NAME,
    force_exclude: Optional[bool] = FORCE_EXCLUDE,
    max_file_size: Optional[str] = MAX_FILE_SIZE,
    respect_gitignore: Optional[bool] = RESPECT_GITIGNORE,
    exclude: Optional[List[str]] = EXCLUDE,
    extend_exclude: Optional[List[str]] = EXTEND_EXCLUDE,
    quiet: bool = QUIET,
    verbose: bool = VERBOSE,
    show_files: bool = typer.Option(False, "--show-files", help="List the files that would be checked, one a line, and exit (as Ruff)."),
    show_settings: bool = typer.Option(False, "--show-settings", help="Print the settings the first path takes (its configuration file, with the flags on top) and exit (as Ruff)."),
    ignore_noqa: Optional[bool] = IGNORE_NOQA,
    fix_: bool = typer.Option(False, "--fix/--no-fix", help="Alias of `tfmigrate fix` (as Ruff's check --fix): apply the fixes, then report what remains; takes fix's options below."),
    fix_only: bool = typer.Option(False, "--fix-only/--no-fix-only", help="Apply the fixes and report nothing about the findings that remain: exit 0 unless an error (or --exit-non-zero-on-fix and a fix was applied), as Ruff. Implies --fix."),
    unsafe_fixes: Optional[bool] = typer.Option(None, "--unsafe-fixes/--no-unsafe-fixes", help="With --fix or --fix-only: also apply fixes that may change behaviour (as `fix --unsafe-fixes`)."),
    diff: bool = typer.Option(False, "--diff", help="Print a unified diff of the fixes and write nothing (as `fix --diff`); implies --fix-only, as Ruff."),
    show_fixes: bool = typer.Option(False, "--show-fixes", help="With --fix or --fix-only: list the fixes applied, per file and rule (as `fix --show-fixes`)."),
    exit_non_zero_on_fix: bool = typer.Option(False, "--exit-non-zero-on-fix", help="With --fix or --fix-only: exit 1 when a fix was applied (as `fix --exit-non-zero-on-fix`)."),
    watch: bool = typer.Option(False, "--watch", "-w", help="Check again whenever a .py or .ipynb file under the paths (or their configuration) changes, until Ctrl-C (as Ruff; polls modification times)."),
) -> None:
    """Report TF1 code and TF2 pitfalls (with --fix, the same as `tfmigrate fix`)."""
    commands.check(**locals())


@app.command()
def fix(
    paths: Optional[List[str]] = PATHS,
    unsafe_fixes: Optional[bool] = typer.Option(None, "--unsafe-fixes/--no-unsafe-fixes", help="Also apply fixes that may change behaviour beyond the finding."),
    native: Optional[bool] = typer.Option(None, "--native/--no-native", help="Rewrite TF1 graph scripts (Session, placeholder, feed_dict) to eager TF2 where tfmigrate can; check: say which construct stops it."),
    keras3: Optional[bool] = typer.Option(None, "--keras3/--no-keras3", help="With --native (which it implies): inside the rewritten TF1 model functions and graph classes, replace `tf.layers` dense, conv1d, conv2d, max/average pooling, flatten and dropout by Keras layers where the numbers stay equal; a file left without TF1 model code runs on Keras 3 without tf-keras."),
    diff: bool = typer.Option(False, "--diff", help="Print a unified diff of the fixes and write nothing."),
    show_fixes: bool = typer.Option(False, "--show-fixes", help="List the fixes applied (with --diff: that would be), per file and rule."),
    config: Optional[List[str]] = CONFIG,
    select: Optional[List[str]] = SELECT,
    extend_select: Optional[List[str]] = EXTEND_SELECT,
    ignore: Optional[List[str]] = IGNORE,
    target_version: Optional[str] = TARGET,
    fmt: Format = FORMAT,
    output_file: Optional[str] = OUTPUT,
    statistics: bool = STATISTICS,
    exit_zero: bool = typer.Option(False, "--exit-zero", help="Exit 0 even when findings remain."),
    exit_non_zero_on_fix: bool = typer.Option(False, "--exit-non-zero-on-fix", help="Exit 1 when a fix was applied, even if no finding remains (as Ruff: a pre-commit hook that fixed something fails, so the fix is looked at)."),
    fail_on: FailOn = FAIL_ON,
    jobs: int = JOBS,
    no_cache: bool = NO_CACHE,
    stdin_filename: Optional[str] = STDIN_NAME,
    force_exclude: Optional[bool] = FORCE_EXCLUDE,
    max_file_size: Optional[str] = MAX_FILE_SIZE,
    respect_gitignore: Optional[bool] = RESPECT_GITIGNORE,
    exclude: Optional[List[str]] = EXCLUDE,
    extend_exclude: Optional[List[str]] = EXTEND_EXCLUDE,
    quiet: bool = QUIET,
    verbose: bool = VERBOSE,
    ignore_noqa: Optional[bool] = IGNORE_NOQA,
) -> None:
    """Apply fixes in place (safe ones unless --unsafe-fixes), to a fixed point (also `tfmigrate
    check --fix`)."""
    commands.fix(paths, unsafe_fixes, native, diff, show_fixes, config, select, extend_select, ignore, target_version,
                 fmt, output_file, statistics, exit_zero, exit_non_zero_on_fix, fail_on, jobs, no_cache, stdin_filename,
                 force_exclude, max_file_size, respect_gitignore, exclude, extend_exclude, quiet, verbose, ignore_noqa,
                 keras3=keras3)


@app.command()
def rules(
    config: Optional[List[str]] = CONFIG,
    select: Optional[List[str]] = SELECT,
    ignore: Optional[List[str]] = IGNORE,
    fmt: RulesFormat = typer.Option(RulesFormat.text, "--format", "--output-format", help="text (two lines or more a rule, readable in 80 columns) or json."),
) -> None:
    """List every rule: code, name, fix, whether it is enabled here, severity, and what it finds."""
    commands.rules(config, select, ignore, fmt)


@app.command("rule")
def rule(code: str = typer.Argument(..., help="A rule code, e.g. TFM104.")) -> None:
    """Why a rule exists, and a before/after example (Ruff's name; the same as `explain`)."""
    commands.explain(code)


@app.command()
def explain(code: str = typer.Argument(..., help="A rule code, e.g. TFM104.")) -> None:
    """Why a rule exists, and a before/after example (also `tfmigrate rule CODE`)."""
    commands.explain(code)


@app.command()
def server() -> None:
    """Run the language server (LSP on standard input and output) for editors: findings as you
    type, fixes and noqa as code actions, fix all. Needs `pip install 'tfmigrate\\[server]'`."""
    commands.server()


@app.command()
def clean(config: Optional[List[str]] = CONFIG) -> None:
    """Remove the .tfmigrate_cache folder."""
    commands.clean(config)
