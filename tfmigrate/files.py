"""Which files to visit, how to show their paths, and writing fixed files atomically."""
from __future__ import annotations

import os
import stat
import tempfile
from pathlib import Path
from typing import Iterable, Iterator, List, Set

# Directories never worth linting: VCS metadata, caches, build output, virtualenvs.
SKIP_DIRS = frozenset(
    """.git .hg .svn .bzr __pycache__ build dist .venv venv .tox .nox .eggs node_modules
    site-packages .mypy_cache .pytest_cache .ruff_cache .tfmigrate_cache .ipynb_checkpoints""".split()
)


def _is_virtualenv(path: str) -> bool:
    return os.path.exists(os.path.join(path, "pyvenv.cfg"))


def discover(paths: Iterable[str]) -> List[str]:
    """Python files under `paths`, sorted, each once. A file named explicitly is always taken;
    directories are walked without following symlinked directories, skipping SKIP_DIRS."""
    found: List[str] = []
    seen: Set[str] = set()

    def add(path: str) -> None:
        key = os.path.realpath(path)
        if key not in seen:
            seen.add(key)
            found.append(path)

    for root in paths:
        if os.path.isdir(root):
            for path in _walk(root):
                add(path)
        else:
            add(root)
    return found


def _walk(root: str) -> Iterator[str]:
    for directory, dirs, files in os.walk(root):
        dirs[:] = sorted(
            d for d in dirs if d not in SKIP_DIRS and not d.endswith(".egg-info")
            and not _is_virtualenv(os.path.join(directory, d))
        )
        for name in sorted(files):
            if name.endswith(".py"):
                yield os.path.join(directory, name)


def display_path(path: str) -> str:
    """The path as reached from the current directory (relative when inside it)."""
    try:
        relative = os.path.relpath(path)
    except ValueError:  # another drive on Windows
        return path
    return path if relative.startswith("..") else relative


def write_atomic(path: str, data: bytes) -> None:
    """Write via a temporary file in the same directory and a rename, keeping the mode bits,
    so a reader (or a crash) sees the old file or the new one, never half of one."""
    target = Path(path)
    mode = stat.S_IMODE(os.stat(target).st_mode)
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tfmigrate", dir=target.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(tmp, mode)
        os.replace(tmp, target)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
