"""Settings: `[tool.tfmigrate]` in pyproject.toml, or tfmigrate.toml / .tfmigrate.toml (top-level
keys), or `--config FILE`, found by walking up from the checked path; flags override the file.
Every key, rule code and glob is validated: a mistake is an error naming the file and the key,
never a silently ignored setting.
"""
from __future__ import annotations

import fnmatch
import os
import re
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Dict, Iterable, List, Optional

from tfmigrate.catalogue import SelectionError, catalogue, select as select_codes

CONFIG_NAMES = ("tfmigrate.toml", ".tfmigrate.toml", "pyproject.toml")
DEFAULT_TARGET = "2.21"
# Ruff's defaults, plus the tool caches: folders never worth checking.
DEFAULT_EXCLUDE = (
    ".bzr", ".direnv", ".eggs", ".git", ".hg", ".ipynb_checkpoints", ".mypy_cache", ".nox",
    ".pytest_cache", ".ruff_cache", ".svn", ".tfmigrate_cache", ".tox", ".venv", "__pycache__",
    "__pypackages__", "_build", "build", "dist", "node_modules", "site-packages", "venv",
)
_KEYS = {
    "select", "extend-select", "ignore", "per-file-ignores", "exclude", "extend-exclude",
    "respect-gitignore", "unsafe-fixes", "target-version", "tensorflow-aliases",
}


class ConfigError(ValueError):
    """A bad setting: the message names the file and the key."""


@dataclass(frozen=True)
class Settings:
    root: Path = field(default_factory=Path.cwd)  # the config file's folder, or the cwd
    source: Optional[Path] = None
    select: Optional[List[str]] = None
    extend_select: List[str] = field(default_factory=list)
    ignore: List[str] = field(default_factory=list)
    per_file_ignores: Dict[str, List[str]] = field(default_factory=dict)
    exclude: List[str] = field(default_factory=lambda: list(DEFAULT_EXCLUDE))
    extend_exclude: List[str] = field(default_factory=list)
    respect_gitignore: bool = True
    unsafe_fixes: bool = False
    target_version: str = DEFAULT_TARGET
    # The project's own re-exports of TensorFlow: {"pkg.compat.tfv1": "tensorflow.compat.v1"}.
    tensorflow_aliases: Dict[str, str] = field(default_factory=dict)

    def codes(self) -> List[str]:
        """Enabled codes: select (or the defaults) + extend-select - ignore, minus rules whose
        fact does not hold for the target TensorFlow version."""
        chosen = set(select_codes(self.select, None))
        if self.extend_select:
            chosen |= set(select_codes(self.extend_select, None))
        chosen -= set(select_codes(self.ignore, None)) if self.ignore else set()
        target = _version(self.target_version)
        return [
            c for c in catalogue()
            if c in chosen and _version(catalogue()[c].min_tf) <= target
        ]

    def codes_for(self, path: str, codes: List[str]) -> List[str]:
        """`codes` less the per-file ignores whose glob matches `path`."""
        if not self.per_file_ignores:
            return codes
        relative = self._relative(path)
        dropped = set()
        for pattern, ignored in self.per_file_ignores.items():
            if _match(pattern, relative):
                dropped |= set(select_codes(ignored, None))
        return [c for c in codes if c not in dropped]

    def excluded(self, path: str) -> bool:
        relative = self._relative(path)
        return any(_match(p, relative) for p in (*self.exclude, *self.extend_exclude))

    def _relative(self, path: str) -> str:
        try:
            return Path(os.path.abspath(path)).relative_to(self.root.resolve()).as_posix()
        except ValueError:
            return Path(path).as_posix()

    def cache_key(self, codes: Iterable[str]) -> str:
        aliases = ",".join(f"{k}={v}" for k, v in sorted(self.tensorflow_aliases.items()))
        return f"{','.join(sorted(codes))}|{self.target_version}|{aliases}"


def _version(text: str):
    return tuple(int(x) for x in text.split("."))


def _match(pattern: str, relative: str) -> bool:
    """A glob matches the path relative to the config folder, or any one of its components."""
    pattern = pattern.rstrip("/")
    if fnmatch.fnmatchcase(relative, pattern) or fnmatch.fnmatchcase(relative, pattern + "/*"):
        return True
    if "/" not in pattern:
        return any(fnmatch.fnmatchcase(part, pattern) for part in relative.split("/"))
    return False


def _check_glob(where: str, pattern) -> str:
    if not isinstance(pattern, str) or not pattern:
        raise ConfigError(f"{where}: a glob must be a non-empty string, got {pattern!r}")
    if pattern.count("[") != pattern.count("]") or "**/**" in pattern:
        raise ConfigError(f"{where}: bad glob {pattern!r}")
    return pattern


def _strings(where: str, value) -> List[str]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ConfigError(f"{where}: expected a list of strings, got {value!r}")
    return value


def _codes(where: str, value) -> List[str]:
    codes = _strings(where, value)
    try:
        select_codes(codes, None)
    except SelectionError as error:
        raise ConfigError(f"{where}: {error}") from None
    return codes


def _load_toml(path: Path) -> dict:
    try:
        import tomllib  # Python 3.11+
    except ImportError:  # pragma: no cover - older Pythons
        import tomli as tomllib
    try:
        with open(path, "rb") as handle:
            return tomllib.load(handle)
    except OSError as error:
        raise ConfigError(f"{path}: cannot read: {error.strerror or error}") from None
    except tomllib.TOMLDecodeError as error:
        raise ConfigError(f"{path}: not valid TOML: {error}") from None
    except UnicodeDecodeError as error:
        raise ConfigError(f"{path}: not valid TOML: not UTF-8 text ({error.reason} at byte {error.start})") from None


def _table(path: Path) -> Optional[dict]:
    data = _load_toml(path)
    if path.name == "pyproject.toml":
        tool = data.get("tool", {})
        if not isinstance(tool, dict):
            raise ConfigError(f"{path}: `tool` must be a table ([tool.tfmigrate]), got {tool!r}")
        return tool.get("tfmigrate")
    return data


def find_config(start: Path) -> Optional[Path]:
    """The nearest config file at or above `start` (a pyproject.toml counts only with a
    [tool.tfmigrate] table)."""
    folder = start.resolve()
    if not folder.is_dir():
        folder = folder.parent
    for candidate in (folder, *folder.parents):
        for name in CONFIG_NAMES:
            path = candidate / name
            if path.is_file() and (name != "pyproject.toml" or _table(path) is not None):
                return path
    return None


def load(path: Optional[Path]) -> Settings:
    if path is None:
        return Settings()
    table = _table(path)
    section = "[tool.tfmigrate]" if path.name == "pyproject.toml" else "top level"
    if table is None:
        raise ConfigError(f"{path}: no [tool.tfmigrate] table")
    if not isinstance(table, dict):
        raise ConfigError(f"{path}: {section} must be a table")
    unknown = sorted(set(table) - _KEYS)
    if unknown:
        raise ConfigError(f"{path}: unknown key {unknown[0]!r} in {section} (known: {', '.join(sorted(_KEYS))})")
    where = lambda key: f"{path}: {key}"  # noqa: E731
    values: dict = {"root": path.parent.resolve(), "source": path}
    if "select" in table:
        values["select"] = _codes(where("select"), table["select"])
    if "extend-select" in table:
        values["extend_select"] = _codes(where("extend-select"), table["extend-select"])
    if "ignore" in table:
        values["ignore"] = _codes(where("ignore"), table["ignore"])
    if "per-file-ignores" in table:
        pfi = table["per-file-ignores"]
        if not isinstance(pfi, dict):
            raise ConfigError(f"{where('per-file-ignores')}: expected a table of glob = [codes]")
        values["per_file_ignores"] = {
            _check_glob(where(f"per-file-ignores.{g!r}"), g): _codes(where(f"per-file-ignores.{g!r}"), c)
            for g, c in pfi.items()
        }
    for key, attr in (("exclude", "exclude"), ("extend-exclude", "extend_exclude")):
        if key in table:
            values[attr] = [_check_glob(where(key), g) for g in _strings(where(key), table[key])]
    for key, attr in (("respect-gitignore", "respect_gitignore"), ("unsafe-fixes", "unsafe_fixes")):
        if key in table:
            if not isinstance(table[key], bool):
                raise ConfigError(f"{where(key)}: expected true or false, got {table[key]!r}")
            values[attr] = table[key]
    if "target-version" in table:
        values["target_version"] = check_target(where("target-version"), table["target-version"])
    if "tensorflow-aliases" in table:
        values["tensorflow_aliases"] = _aliases(where("tensorflow-aliases"), table["tensorflow-aliases"])
    return Settings(**values)


_DOTTED = re.compile(r"^[A-Za-z_]\w*(\.[A-Za-z_]\w*)*$")


def _aliases(where: str, value) -> Dict[str, str]:
    """`{"pkg.compat.tfv1" = "tensorflow.compat.v1"}`: a dotted name a project binds to a
    TensorFlow (or Keras) module, and that module."""
    if not isinstance(value, dict):
        raise ConfigError(f'{where}: expected a table of "module.name" = "tensorflow..."')
    for name, target in value.items():
        if not _DOTTED.match(name) or "." not in name:
            raise ConfigError(f"{where}: {name!r} is not a dotted module.name path")
        if not isinstance(target, str) or not _DOTTED.match(target) or \
                target.split(".")[0] not in ("tensorflow", "keras", "tf_keras"):
            raise ConfigError(f"{where}.{name}: expected a tensorflow or keras module path, got {target!r}")
    return dict(value)


def check_target(where: str, value) -> str:
    if not isinstance(value, str) or not re.fullmatch(r"2\.\d{1,2}", value):
        raise ConfigError(f"{where}: expected a TensorFlow 2 version like \"2.21\", got {value!r}")
    return value


def resolve(
    paths: List[str],
    config: Optional[str] = None,
    select: Optional[List[str]] = None,
    extend_select: Optional[List[str]] = None,
    ignore: Optional[List[str]] = None,
    unsafe_fixes: Optional[bool] = None,
    target_version: Optional[str] = None,
) -> Settings:
    """The file's settings (named, or found from the first path) with the flags on top."""
    if config is not None:
        path: Optional[Path] = Path(config)
        if not path.is_file():
            raise ConfigError(f"{config}: no such config file")
    else:
        path = find_config(Path(paths[0]) if paths and paths[0] != "-" else Path.cwd())
    settings = load(path)
    changes: dict = {}
    if select:  # as in Ruff, a --select on the command line replaces the file's selection
        changes["select"] = _codes("--select", select)
        changes["extend_select"] = []
        changes["ignore"] = []
    if extend_select:
        changes["extend_select"] = [*changes.get("extend_select", settings.extend_select), *_codes("--extend-select", extend_select)]
    if ignore:
        changes["ignore"] = [*changes.get("ignore", settings.ignore), *_codes("--ignore", ignore)]
    if unsafe_fixes is not None:
        changes["unsafe_fixes"] = unsafe_fixes
    if target_version is not None:
        changes["target_version"] = check_target("--target-version", target_version)
    return replace(settings, **changes)
