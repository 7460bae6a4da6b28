"""Whether a pattern matches anywhere in a file's text: the cheap word tests rules ask before a
finding (`ctx.fact(SourceSearch).found(pattern)`)."""
from __future__ import annotations

from typing import Dict


class SourceSearch:
    """Each compiled regex's answer, remembered per file: rules ask once per finding, and each
    search reads the whole file."""

    needs = ()

    def __init__(self, ctx):
        self.source = ctx.source
        self._found: Dict[object, bool] = {}

    def found(self, pattern) -> bool:
        found = self._found.get(pattern)
        if found is None:
            found = self._found[pattern] = pattern.search(self.source) is not None
        return found
