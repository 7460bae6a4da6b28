"""The per-file cache of findings: a re-run on unchanged files neither parses nor imports libcst.
An entry is keyed by the file's content hash, the tool version and the settings and cross-file
facts the findings depend on (the plan's `key`).
"""
from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import List, Optional, Sequence

from tfmigrate import __version__
from tfmigrate.atomic import make_cache_folder, write_atomic
from tfmigrate.findings import Finding

# What a cached finding holds, beside the tool version: bumped when Finding.to_json changes between
# releases, so that a development checkout never reads entries an older build wrote.
# 2: a notebook's findings carry their cell and their place in the .ipynb file.
ENTRY_FORMAT = 2


class Cache:
    """One small JSON file per source path, holding the content hash, key and findings.
    A corrupt or foreign entry is ignored (and rewritten), never fatal."""

    def __init__(self, folder: str):
        self.folder = Path(folder)

    def _entry(self, path: str) -> Path:
        digest = hashlib.sha256(os.path.abspath(path).encode("utf-8", "surrogateescape")).hexdigest()
        return self.folder / f"{__version__}-{ENTRY_FORMAT}" / digest[:2] / f"{digest}.json"

    def _entry_name(self, path: str) -> str:
        """`_entry` as a string, joined without pathlib (a warm run looks up every file)."""
        digest = hashlib.sha256(os.path.abspath(path).encode("utf-8", "surrogateescape")).hexdigest()
        return os.path.join(self.folder, f"{__version__}-{ENTRY_FORMAT}", digest[:2], f"{digest}.json")

    def get(self, path: str, fingerprint: str) -> Optional[List[Finding]]:
        try:
            # what json.dumps wrote holds no line break for read_text's newline translation to change
            with open(self._entry_name(path), "rb") as handle:
                entry = json.loads(handle.read().decode("utf-8"))
            if not isinstance(entry, dict) or entry.get("fingerprint") != fingerprint:
                return None
            return [Finding.from_json(f) for f in entry["findings"]]
        except (OSError, ValueError, KeyError, TypeError, AttributeError):
            return None

    def put(self, path: str, fingerprint: str, findings: Sequence[Finding]) -> None:
        entry = self._entry(path)
        try:
            make_cache_folder(str(self.folder))
            entry.parent.mkdir(parents=True, exist_ok=True)
            payload = {"fingerprint": fingerprint, "findings": [f.to_json() for f in findings]}
            write_atomic(str(entry), json.dumps(payload).encode("utf-8"), new=True)
        except OSError:
            pass  # a cache that cannot be written only costs time


def fingerprint(data: bytes, key: str) -> str:
    """What a cache entry must match: these bytes under these settings and facts."""
    return hashlib.sha256(data).hexdigest() + "|" + key
