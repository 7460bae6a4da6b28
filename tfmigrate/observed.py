"""What a run looked at on disk, kept while a plain `check` is recorded (frontends/warm.py): every
file read, folder walked and configuration or marker probed, each with what it was then, so a
later identical run can tell by a few `stat` calls that nothing it depends on changed. Off (one
test of a global) everywhere else: the server and flake8 never record.
"""
import os

# kind -> how a path is looked at: what the code itself asked of it
PROBES = {
    "s": lambda path: _signature(path),  # a file's or folder's identity, size and times
    "e": os.path.exists,
    "l": os.path.lexists,
    "f": os.path.isfile,
    "r": os.path.realpath,
}

_notes = None  # (kind, path) -> value, while recording


def _signature(path: str):
    """What changes when a file is written, replaced or chmod-ed, or a folder gains or loses an
    entry: the change time cannot be set back by a tool that keeps modification times."""
    try:
        info = os.stat(path)
    except (OSError, ValueError):
        return None
    return [info.st_mode, info.st_ino, info.st_size, info.st_mtime_ns, info.st_ctime_ns]


def note(kind: str, path, *value) -> None:
    """The run looked at `path` this way (a no-op unless recording); `value`: what it found, for
    a kind of look that is not in PROBES (the caller's own, given to unchanged())."""
    if _notes is not None:
        key = (kind, os.fspath(path))
        if key not in _notes:
            _notes[key] = value[0] if value else PROBES[kind](key[1])


def read_noted(path: str) -> bytes:
    """A checked file's bytes (b"" if unreadable), noted: a warm run's answer depends on them."""
    note("s", path)
    try:
        with open(path, "rb") as handle:
            return handle.read()
    except OSError:
        return b""


def start() -> None:
    global _notes
    _notes = {}


def stop() -> list:
    """The notes taken since start(), as [kind, path, value] lists; recording ends."""
    global _notes
    notes, _notes = _notes or {}, None
    return [[kind, path, value] for (kind, path), value in notes.items()]


def unchanged(notes, probes=None) -> bool:
    """Whether every path noted still looks as it did; `probes`: kinds beyond PROBES."""
    probes = {**PROBES, **probes} if probes else PROBES
    try:
        return all(probes[kind](path) == value for kind, path, value in notes)
    except (KeyError, TypeError, ValueError):  # an entry of another layout
        return False


# A file or folder changed this close to a run (or during it) may change again within the same
# tick of its clock unseen, as git's "racily clean" entries: such a run is not kept.
RACY_NS = 2_000_000_000


def settled(notes, since_ns: int) -> bool:
    """Whether no noted file or folder changed after `since_ns` less RACY_NS."""
    edge = since_ns - RACY_NS
    return all(value[3] < edge and value[4] < edge for kind, _, value in notes if kind == "s" and value is not None)
