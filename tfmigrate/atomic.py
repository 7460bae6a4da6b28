"""Every byte tfmigrate writes goes through here: atomic replacement of a file (refusing
one edited meanwhile, read-only, hard-linked or another user's), leftover temporaries, and the
cache folder. Below every layer, so the cross-file facts can keep their caches too."""
from __future__ import annotations

import errno
import os
import re
import stat
from pathlib import Path
from typing import Iterable, Iterator, List, Optional, Tuple

class NotWritten(OSError):
    """`fix` refused to replace a file; the message says why (the file is left as it was)."""


TEMP_SUFFIX = ".tfmigrate"
# `.{name}.{pid}.{random}.tfmigrate`, next to the file it replaces (older runs: no pid)
_TEMP = re.compile(r"^\.(?P<name>.+?)\.(?:(?P<pid>\d+)\.)?[a-z0-9_]{8}" + re.escape(TEMP_SUFFIX) + "$")
STALE_AFTER = 3600.0  # seconds: a temporary file this old is a leftover whoever made it


def _refusal(target: Path, info: os.stat_result) -> Optional[str]:
    """Why `fix` must not replace this file, or None. Replacing goes through a new file and a
    rename, so it would make a read-only file writable, give the file to the user running `fix`,
    and split a hard link into two files."""
    mode = stat.S_IMODE(info.st_mode)
    if not mode & 0o222 or not os.access(target, os.W_OK):
        return f"the file is read-only (mode {mode:04o}); make it writable to have it fixed"
    if info.st_nlink > 1:
        return (f"the file has {info.st_nlink} hard links, and replacing it would leave the other "
                "names with the old code; break the links (copy the file, then move the copy over it) to have "
                "it fixed")
    euid = getattr(os, "geteuid", lambda: None)()
    if euid not in (None, 0) and info.st_uid != euid:
        return f"the file belongs to another user (uid {info.st_uid}) and would become yours"
    return None


def write_atomic(path: str, data: bytes, new: bool = False, expect: Optional[bytes] = None) -> None:
    """Write via a temporary file in the same directory and a rename, keeping the mode bits,
    owner and group, so a reader (or a crash) sees the old file or the new one, never half of
    one. A symlink is written through to its target, never replaced by a plain file.

    Refuses (NotWritten, the file untouched) a read-only file, a hard-linked one, one whose
    owner or group cannot be kept, and, with `expect`, one whose bytes are no longer `expect`
    (an edit saved while `fix` ran)."""
    target = Path(os.path.realpath(path))
    info = None if new else os.stat(target)
    if info is not None:
        reason = _refusal(target, info)
        if reason:
            raise NotWritten(errno.EPERM, reason)
    mode = 0o644 if info is None else stat.S_IMODE(info.st_mode)
    import tempfile  # here: start-up time counts on every cached run

    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.{os.getpid()}.", suffix=TEMP_SUFFIX, dir=target.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
            made = os.fstat(handle.fileno())
        os.chmod(tmp, mode)
        if info is not None and (made.st_uid, made.st_gid) != (info.st_uid, info.st_gid):
            try:
                os.chown(tmp, info.st_uid, info.st_gid)
            except OSError:
                raise NotWritten(errno.EPERM, (
                    f"the file's owner and group ({info.st_uid}:{info.st_gid}) cannot be kept by this user"
                )) from None
        if expect is not None:
            now = os.stat(target)
            if (now.st_ino, now.st_size) != (info.st_ino, info.st_size) or _read_bytes(target) != expect:
                raise NotWritten(errno.EAGAIN, (
                    "the file changed on disk while tfmigrate was fixing it (an edit saved meanwhile?); "
                    "run `tfmigrate fix` again"
                ))
        os.replace(tmp, target)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def _read_bytes(path: Path) -> bytes:
    with open(path, "rb") as handle:
        return handle.read()


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OSError):
        return True  # someone else's process
    return True


def _temporaries(folders: Iterable[str]) -> Iterator[Tuple[os.DirEntry, Optional[str]]]:
    """Each of tfmigrate's temporary files in `folders`, with the pid that made it (None: an
    older run's, which wrote none)."""
    for folder in folders:
        try:
            entries = list(os.scandir(folder))
        except OSError:
            continue
        for entry in entries:
            match = _TEMP.match(entry.name)
            if match and entry.is_file(follow_symlinks=False):
                yield entry, match.group("pid")


def temporaries_of(folders: Iterable[str], pids: Iterable[int]) -> List[str]:
    """tfmigrate's temporary files in `folders` made by the processes `pids` (a stopped run's
    workers, all gone: what they leave is a leftover)."""
    wanted = {str(pid) for pid in pids}
    return [entry.path for entry, pid in _temporaries(folders) if pid in wanted]


def stale_temporaries(folders: Iterable[str], now: Optional[float] = None) -> List[str]:
    """tfmigrate's own temporary files in `folders` left by a run that was killed mid-write:
    made by a process that is gone, or older than STALE_AFTER. A concurrent run's are kept."""
    import time

    now = time.time() if now is None else now
    found = []
    for entry, pid in _temporaries(folders):
        try:
            old = now - entry.stat(follow_symlinks=False).st_mtime > STALE_AFTER
        except OSError:
            continue
        if old or (pid is not None and int(pid) != os.getpid() and not _alive(int(pid))):
            found.append(entry.path)
    return found


def make_cache_folder(folder: str) -> None:
    """Create tfmigrate's cache folder (`.tfmigrate_cache/`) with a `.gitignore` that keeps it out
    of the repository, as Ruff does for `.ruff_cache/`."""
    if not os.path.isdir(folder):
        os.makedirs(folder, exist_ok=True)
        with open(os.path.join(folder, ".gitignore"), "w", encoding="utf-8") as handle:
            handle.write("# Created by tfmigrate\n*\n")
