"""Which files to visit and how to show their paths."""
from __future__ import annotations

import os
import stat
from typing import Callable, Iterable, Iterator, List, Set

from tfmigrate.observed import note

SOURCE_SUFFIXES = (".py", ".ipynb")


def _is_virtualenv(path: str) -> bool:
    marker = os.path.join(path, "pyvenv.cfg")
    note("e", marker)
    return os.path.exists(marker)


def discover(paths: Iterable[str], excluded: Callable[[str], bool] = lambda path: False) -> List[str]:
    """Source files under `paths`, each once, in a stable order. A file named explicitly is
    always taken; directories are walked in sorted order without following symlinked
    directories (so a link loop or a link out of the tree is never walked), skipping
    virtualenvs and whatever `excluded` says. Symlinked files are checked once, by real path."""
    found: List[str] = []
    seen: Set[str] = set()

    def add(path: str) -> None:
        key = os.path.realpath(path)
        if key not in seen:
            seen.add(key)
            found.append(path)

    for root in paths:
        note("s", root)
        note("r", root)
        if os.path.isdir(root):
            for path in _walk(root, excluded):
                add(path)
        else:
            add(root)
    return found


def _walk(root: str, excluded: Callable[[str], bool]) -> Iterator[str]:
    for directory, dirs, files in os.walk(root):
        note("s", directory)  # its entries: a file added, removed or renamed changes it
        dirs[:] = sorted(
            d for d in dirs
            if not d.endswith(".egg-info")
            and not excluded(os.path.join(directory, d))
            and not _is_virtualenv(os.path.join(directory, d))
        )
        for name in sorted(files):
            path = os.path.join(directory, name)
            if name.endswith(SOURCE_SUFFIXES):
                note("s", path)
                if os.path.isfile(path):  # not a FIFO, socket, device
                    yield path


def display_path(path: str) -> str:
    """The path as reached from the current directory (relative when inside it)."""
    try:
        relative = os.path.relpath(path)
    except ValueError:  # another drive on Windows
        return path
    return path if relative.startswith("..") else relative


def read_regular(path: str) -> bytes:
    """The file's bytes; OSError for anything but a regular file (a FIFO would block, a device
    never end)."""
    note("s", path)
    if not stat.S_ISREG(os.stat(path).st_mode):
        raise OSError(0, "Not a regular file")
    with open(path, "rb") as handle:
        return handle.read()
