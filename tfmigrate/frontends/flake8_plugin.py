"""tfmigrate as a flake8 plugin (entry point `TFM` in the `flake8.extension` group): the same
findings as `tfmigrate check` on the same paths, through tfmigrate.api: the same configuration
(the nearest `[tool.tfmigrate]` / tfmigrate.toml: select, ignore, per-file-ignores,
target-version, tensorflow-aliases, native, max-file-size) and the same cross-file facts, gathered
from the files `tfmigrate check` would visit under the paths flake8 was given (star imports of a
module that imports TensorFlow, the graph module importing a helper). Reported as flake8 reports
its own codes, so flake8's `--select`, `--extend-ignore`, `--per-file-ignores` and `# noqa` apply
on top. Never imports TensorFlow.

    pip install tfmigrate flake8
    flake8 --extend-select TFM src/
"""
from __future__ import annotations

import os
from typing import Iterator, List, Optional, Tuple

from tfmigrate import __version__

_SETTINGS = None  # one resolver per process: each config file is read once, whatever the files
_WORKSPACE = None  # the files of flake8's run, read once per process for their cross-file facts


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

    paths: List[str] = ["."]  # the paths flake8 was given (parse_options)

    def __init__(self, tree, filename: str, lines: List[str]):
        self.filename = filename
        self.lines = lines

    @classmethod
    def parse_options(cls, options) -> None:
        """flake8 hands every plugin its options, in each worker process too: the run's paths."""
        cls.paths = list(getattr(options, "filenames", None) or ["."])

    def run(self) -> Iterator[Tuple[int, int, str, type]]:
        from tfmigrate import api
        from tfmigrate.workspace.config import ConfigError

        stdin = self.filename in ("stdin", "-")
        path = "stdin.py" if stdin else self.filename
        data = _source(self.filename, self.lines)
        try:
            job = _workspace(stdin).job(path, data, _settings_for(path))
        except ConfigError as error:
            yield 1, 0, f"TFM000 tfmigrate configuration error: {error}", type(self)
            return
        for finding in api.check(job).findings:
            yield finding.line, max(finding.column - 1, 0), f"{finding.rule} {_message(finding)}", type(self)


def _workspace(stdin: bool):
    """The run's files (standard input, as `tfmigrate check -`, takes none of them)."""
    global _WORKSPACE
    from tfmigrate import api

    if stdin:
        return api.Workspace([])
    if _WORKSPACE is None:
        _WORKSPACE = api.Workspace([p for p in Plugin.paths if p != "-"])
    return _WORKSPACE


def _message(finding) -> str:
    """The finding's message on one line, with the fix on offer (flake8 shows one line each)."""
    text = " ".join(finding.message.split())
    if finding.fix is not None:
        label = "fix" if finding.fix.applicability == "safe" else "unsafe fix"
        text += f" [{label}: tfmigrate fix{' --unsafe-fixes' if label != 'fix' else ''}]"
    return text


def reset(settings: Optional[object] = None) -> None:
    """Forget the configuration read (tests that change folders)."""
    global _SETTINGS, _WORKSPACE
    _SETTINGS, _WORKSPACE = settings, None
