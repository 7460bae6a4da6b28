"""The `tfmigrate` command's entry point: a plain `check [PATH ...] [--format FORMAT]` is read here
and run without typer; every other command line is typer's (frontends.flags). What the commands
do is frontends.commands'.
"""
from __future__ import annotations

import os
import signal
import sys

from tfmigrate.frontends.streams import FORMATS, tolerant


def _terminate(signum, frame):  # SIGTERM unwinds like Ctrl-C, so atomic writes clean up
    raise KeyboardInterrupt


def __getattr__(name: str):
    """`app`, the typer application (frontends.flags), imported when first asked for."""
    if name == "app":
        from tfmigrate.frontends.flags import app

        return app
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _plain_check(args: list) -> "tuple[list, str] | None":
    """The paths and format of `check [PATH ...] [--format FORMAT]`, the run a pre-commit hook or
    CI makes again and again and the cache answers in milliseconds, read without typer (whose
    import costs about 35 ms); None for any other command line: typer reads it, with its help
    and usage errors."""
    if args[:1] != ["check"] or os.name == "nt" or os.environ.get("_TFMIGRATE_COMPLETE"):
        return None  # (click expands wildcards on Windows; the variable asks typer for completions)
    paths, fmt = [], None
    rest = iter(args[1:])
    for arg in rest:
        name, equals, value = arg.partition("=")
        if name in ("--format", "--output-format") and fmt is None:
            value = value if equals else next(rest, None)
            if value not in FORMATS:
                return None
            fmt = value
        elif arg.startswith("-"):
            return None
        else:
            paths.append(arg)
    return paths, fmt or "rich"


def _run(args: list) -> None:
    plain = _plain_check(args)
    if plain is None:
        from tfmigrate.frontends.flags import app

        app()
        return
    paths, fmt = plain[0] or ["."], plain[1]
    try:  # ended as typer ends a command
        from tfmigrate.frontends import warm

        code = warm.replay(paths, fmt)  # the last identical run, when nothing it read changed
        if code is not None:
            raise SystemExit(code)
        from tfmigrate.frontends.commands import Format, check

        memo = warm.Recorder(paths, fmt)
        try:
            check(paths, fmt=Format(fmt), memo=memo)
        finally:
            memo.drop()
    except KeyboardInterrupt:
        raise SystemExit(130)
    except BrokenPipeError:  # the reader left (`| head`): exit 1, without Python's complaint at exit
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        raise SystemExit(1)


def main() -> None:
    for stream in (sys.stdout, sys.stderr):  # before typer's own usage errors too
        tolerant(stream)
    if hasattr(signal, "SIGTERM"):
        signal.signal(signal.SIGTERM, _terminate)
    try:
        _run(sys.argv[1:])
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
