"""tfmigrate as a flake8 plugin (entry point `TFM` in the `flake8.extension` group): the same
engine and the same configuration as `tfmigrate check` (the nearest `[tool.tfmigrate]` /
tfmigrate.toml: select, ignore, per-file-ignores, target-version, tensorflow-aliases), reported
as flake8 reports its own codes, so flake8's `--select`, `--extend-ignore`, `--per-file-ignores`
and `# noqa` apply on top. Never imports TensorFlow.

    pip install tfmigrate flake8
    flake8 --extend-select TFM src/
"""
from __future__ import annotations

import os
from typing import Iterator, List, Optional, Tuple

from tfmigrate import __version__

_SETTINGS = None  # one resolver per process: each config file is read once, whatever the files


def _settings_for(path: str):
    global _SETTINGS
    from tfmigrate.workspace.config import resolve

    if _SETTINGS is None:
        _SETTINGS = resolve(["."])
    return _SETTINGS.for_path(path)


def _source(filename: str, lines: List[str]) -> bytes:
    """The file's bytes as on disk (its declared encoding, BOM and line endings), or what flake8
    read when there is no file (standard input)."""
    if filename not in ("stdin", "-") and os.path.isfile(filename):
        try:
            with open(filename, "rb") as handle:
                return handle.read()
        except OSError:
            pass
    return "".join(lines).encode("utf-8")


class Plugin:
    """A flake8 tree plugin (flake8 classifies plugins by their parameters; `tree` is unused:
    tfmigrate parses with libcst, which keeps what the fixes need)."""

    name = "tfmigrate"
    version = __version__

    def __init__(self, tree, filename: str, lines: List[str]):
        self.filename = filename
        self.lines = lines

    def run(self) -> Iterator[Tuple[int, int, str, type]]:
        from tfmigrate.workspace.config import ConfigError
        from tfmigrate.core.engine import check_source
        from tfmigrate.workspace.files import display_path
        from tfmigrate.workspace.runner import _shims

        path = self.filename if self.filename not in ("stdin", "-") else "stdin.py"
        try:
            settings = _settings_for(path)
            codes = settings.codes_for(path, settings.codes())
        except ConfigError as error:
            yield 1, 0, f"TFM000 tfmigrate configuration error: {error}", type(self)
            return
        data = _source(self.filename, self.lines)
        shown = display_path(path)
        for finding in check_source(data, shown, codes, shims=_shims(settings, path)):
            yield finding.line, max(finding.column - 1, 0), f"{finding.rule} {_message(finding)}", type(self)


def _message(finding) -> str:
    """The finding's message on one line, with the fix on offer (flake8 shows one line each)."""
    text = " ".join(finding.message.split())
    if finding.fix is not None:
        label = "fix" if finding.fix.applicability == "safe" else "unsafe fix"
        text += f" [{label}: tfmigrate fix{' --unsafe-fixes' if label != 'fix' else ''}]"
    return text


def reset(settings: Optional[object] = None) -> None:
    """Forget the configuration read (tests that change folders)."""
    global _SETTINGS
    _SETTINGS = settings
