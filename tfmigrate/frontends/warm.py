"""A plain `check [PATH ...] [--format F]` answered from its last identical run: the command line a
pre-commit hook or CI repeats on files that did not change. A run of it keeps, in one file of the
cache folder, its output, its exit code and what it looked at on disk (tfmigrate.observed: the
files read, folders walked, configurations and markers probed); the next identical command line
(same folder, paths, format, width, version) replays that output when a `stat` of each says
nothing changed, without importing the planner, the settings or the renderers.

Kept only when the whole report went to standard output as one text (not rich's own layout on a
console) and no file it depends on changed during the run or within two seconds before it (a
write in the same clock tick could go unseen). Anything else runs as before.
"""
import os
import sys

from tfmigrate import __version__, observed
from tfmigrate.frontends.streams import emit, plain_width
from tfmigrate.workspace import CACHE_DIR

RUNS = "runs"  # the folder of kept runs, in the cache folder
FORMAT = 1  # the layout of a kept run's file


def _key(paths, fmt):
    """What the output depends on beyond the files: None when it depends on a console."""
    width = plain_width(sys.stdout) if fmt == "rich" else 0
    if width is None:
        return None
    try:
        cwd = os.getcwd()
    except OSError:
        return None
    return [FORMAT, __version__, sys.hexversion, cwd, list(paths), fmt, width, os.environ.get("GIT_DIR")]


def _name(key) -> str:
    import zlib

    return f"{zlib.crc32(repr(key).encode('utf-8', 'surrogateescape')):08x}.run"


def _folders(paths, cwd):
    """Where the run's cache folder may be: the current folder (no configuration), or the first
    path's folder or one above it (the nearest configuration's)."""
    yield cwd
    folder = os.path.realpath(paths[0])
    if not os.path.isdir(folder):
        folder = os.path.dirname(folder)
    while True:
        yield folder
        parent = os.path.dirname(folder)
        if parent == folder:
            return
        folder = parent


def replay(paths, fmt):
    """The exit code of the run, its output written, when the last identical run still holds;
    None: run it."""
    key = _key(paths, fmt)
    if key is None:
        return None
    name = _name(key)
    for folder in _folders(paths, key[3]):
        try:
            with open(os.path.join(folder, CACHE_DIR, RUNS, name), "rb") as handle:
                data = handle.read()
        except OSError:
            continue
        header, _, payload = data.partition(b"\n")
        import json

        try:
            kept = json.loads(header)
            if kept["key"] != key or not observed.unchanged(kept["notes"], _probes()):
                return None
            code = int(kept["exit"])
        except (ValueError, KeyError, TypeError):
            return None
        text = payload.decode("utf-8", "surrogateescape")
        if kept.get("mode") == "emit":
            emit(text)
        else:
            sys.stdout.write(text)
            sys.stdout.flush()
        return code
    return None


def _probes():
    from tfmigrate.workspace.gitignore import asked_again

    return {"g": asked_again}


class Recorder:
    """Notes what a run of `check` looks at, and keeps its output when it may be replayed."""

    def __init__(self, paths, fmt):
        import time

        self.key = _key(paths, fmt)
        self.since = time.time_ns()
        if self.key is not None:
            observed.start()

    def keep(self, root, mode: str, text: str, code: int) -> None:
        """The run's output (`mode` "emit": as machine formats write it; "write": as text to
        standard output) and exit code, kept in the cache folder under `root`."""
        if self.key is None:
            return
        _note_code()
        folder = os.path.join(str(root), CACHE_DIR)
        # the cache folder's own entries change as it is written and hold no source file: an
        # `exclude` that replaces the default one walks it too
        inside = os.path.abspath(folder) + os.sep
        notes = [note for note in observed.stop() if not (os.path.abspath(note[1]) + os.sep).startswith(inside)]
        again = [note for note in notes if note[0] != "g"]  # git is asked again when the run is replayed
        if not observed.unchanged(again) or not observed.settled(notes, self.since):
            return
        import json

        from tfmigrate.atomic import make_cache_folder

        header = json.dumps({"key": self.key, "notes": notes, "exit": code, "mode": mode})
        target = os.path.join(folder, RUNS, _name(self.key))
        temporary = f"{target}.{os.getpid()}.tmp"  # (atomic.write_atomic's tempfile costs a warm run 4 ms)
        try:
            make_cache_folder(folder)
            os.makedirs(os.path.join(folder, RUNS), exist_ok=True)
            with open(temporary, "xb") as handle:
                handle.write(header.encode("utf-8", "surrogateescape") + b"\n" + text.encode("utf-8", "surrogateescape"))
            os.replace(temporary, target)  # a replay reads the old run or this one, never half of one
        except OSError:
            try:
                os.unlink(temporary)
            except OSError:
                pass  # a cache that cannot be written only costs time

    def drop(self) -> None:
        """The run ended otherwise: nothing is kept."""
        if self.key is not None:
            observed.stop()


def _note_code() -> None:
    """The code and data that made the output: a checkout's edits run the check again."""
    package = os.path.dirname(os.path.abspath(sys.modules["tfmigrate"].__file__))
    for module in list(sys.modules.values()):
        where = getattr(module, "__file__", None)
        if where and os.path.abspath(where).startswith(package + os.sep):
            observed.note("s", where)
    for folder in (package, os.path.dirname(package)):  # the catalogue, packaged or in a checkout
        observed.note("s", os.path.join(folder, "rules.yaml"))
    try:
        data = sorted(os.listdir(os.path.join(package, "data")))
    except OSError:
        data = []
    for name in data:
        observed.note("s", os.path.join(package, "data", name))
