"""The output streams of a run: the formats, how each is written (machine formats as UTF-8 bytes,
a console's look-alikes) and the width rich would lay a plain report out at. Imports only `os`
and `sys`: a warm check (frontends/warm.py) replays its output through here before any other
part of tfmigrate is imported.
"""
import os
import sys

# The values of --format (commands.Format is made from them).
FORMATS = ("rich", "concise", "json", "json-lines", "sarif", "github", "junit")


# What a console that cannot show box drawing gets instead (rich draws its tables in ASCII there).
_LOOKALIKES = {"│": "|", "┃": "|", "─": "-", "━": "-", "…": "...", "→": "->", "‘": "'", "’": "'", "“": '"', "”": '"'}


def _lookalike(error: UnicodeEncodeError):
    return "".join(_LOOKALIKES.get(c, "?") for c in error.object[error.start:error.end]), error.end


def tolerant(stream) -> None:
    """A console in cp1252 or ASCII (Windows, a redirect, PYTHONIOENCODING) shows what it cannot
    encode as a look-alike or '?' instead of failing the run; machine formats bypass it (emit)."""
    import codecs

    encoding = getattr(stream, "encoding", None) or "utf-8"
    if codecs.lookup(encoding).name in ("utf-8", "utf-16", "utf-32", "gb18030") or not hasattr(stream, "reconfigure"):
        return
    codecs.register_error("tfmigrate-lookalike", _lookalike)
    stream.reconfigure(errors="tfmigrate-lookalike")


def emit(text: str) -> None:
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


def plain_width(file):
    """The width rich lays the report out at when it prints plain text to `file` (not a
    terminal, no colour forced, a UTF-8 encoding, not Windows: the report in a file, a pipe, CI),
    found as rich.console.Console finds it; None when rich would print otherwise."""
    import builtins

    environ = os.environ
    if os.name == "nt" or hasattr(builtins, "get_ipython") or "FORCE_COLOR" in environ \
            or "TTY_COMPATIBLE" in environ:
        return None
    file = getattr(file, "rich_proxied_file", file)
    try:
        if file.isatty() or not (getattr(file, "encoding", None) or "utf-8").lower().startswith("utf"):
            return None
    except (AttributeError, ValueError):
        return None
    columns = environ.get("COLUMNS", "")
    if columns.isdigit():
        return int(columns)
    for descriptor in (0, 1, 2):
        try:
            return os.get_terminal_size(descriptor).columns or 80
        except (AttributeError, ValueError, OSError):
            pass
    return 80
