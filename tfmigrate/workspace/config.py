"""Settings: `[tool.tfmigrate]` in pyproject.toml, or tfmigrate.toml / .tfmigrate.toml (top-level
keys), or `--config FILE`. As in Ruff, each file takes the nearest configuration at or above it
(so `check src tests` and `check tests src` agree), a configuration may `extend` another (whose
settings are the base it overrides), `--config "key = value"` overrides every configuration's key,
and the flags override all of that. Every key, rule code and glob is validated: a mistake is an
error naming the file (or the --config) and the key, never a silently ignored setting.
"""
from __future__ import annotations

import fnmatch
import os
import re
from dataclasses import dataclass, field, replace
from functools import cached_property, lru_cache
from pathlib import Path
from typing import Dict, Iterable, List, Optional, Sequence, Tuple, Union

from tfmigrate.catalogue import SelectionError, catalogue, select as select_codes
from tfmigrate.observed import note

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
    "respect-gitignore", "unsafe-fixes", "target-version", "tensorflow-aliases", "force-exclude",
    "max-file-size", "native", "keras3", "extend",
}
# A larger file that mentions TensorFlow is reported (TFM001) and skipped: libcst's parser takes
# about 0.7 GB of memory per MB it parses at once, and seconds per MB of source; at 800 KB the
# costliest file bench/large_files.py makes (TF code with a fix every few lines, fixed, parsed in
# pieces) peaks at 0.45 GB, under 1 GB per worker (a data literal, parsed a run of its elements at
# a time: 0.23 GB).
DEFAULT_MAX_FILE_SIZE = 800_000


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
    force_exclude: bool = False  # exclude files named on the command line too (pre-commit names every file)
    unsafe_fixes: bool = False
    native: bool = False  # `fix` rewrites TF1 graph scripts to eager TF2 where it can (tfmigrate.native)
    keras3: bool = False  # and their TF1 model functions' layers as Keras layers where equal (native.keras3)
    target_version: str = DEFAULT_TARGET
    # The project's own re-exports of TensorFlow: {"pkg.compat.tfv1": "tensorflow.compat.v1"}.
    tensorflow_aliases: Dict[str, str] = field(default_factory=dict)
    max_file_size: int = DEFAULT_MAX_FILE_SIZE  # bytes; 0: no limit
    ignore_noqa: bool = False  # --ignore-noqa: no `# noqa` comment silences anything (a flag only)
    # The configuration files `source` extends, nearest first (its `extend`, that file's, ...).
    extends: Tuple[Path, ...] = ()
    # The other files' settings (see Resolver); None: these settings hold for every file.
    resolver: Optional["Resolver"] = field(default=None, compare=False, repr=False)

    def for_path(self, path: str) -> "Settings":
        """The settings of the nearest configuration at or above `path`, with the flags on top."""
        return self if self.resolver is None else self.resolver.for_path(path)

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
        whole, part = _matcher((*self.exclude, *self.extend_exclude))
        relative = self._relative(path)
        return bool(whole(relative)) or (part is not None and any(part(p) for p in relative.split("/")))

    def _relative(self, path: str) -> str:
        absolute, root = os.path.abspath(path), self._root_text
        if absolute.startswith(root) and absolute[len(root):len(root) + 1] == "/" and os.sep == "/" and root != "/":
            return absolute[len(root) + 1:]  # what the lines below give, without pathlib (every file's excludes)
        try:
            return Path(absolute).relative_to(self._real_root).as_posix()
        except ValueError:
            return Path(path).as_posix()

    @cached_property
    def _root_text(self) -> str:
        return str(self._real_root)

    @cached_property
    def _real_root(self) -> Path:
        """`root` resolved, once per settings object (not once per file checked against a glob:
        a realpath walk of every component each time, most of a warm run's exclude checks)."""
        return self.root.resolve()

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


@lru_cache(maxsize=32)
def _matcher(patterns: Tuple[str, ...]):
    """`_match` for several globs at once, as two compiled regexes: (match of the whole relative
    path, match of one of its components or None). A path matches when some glob matches it as
    `_match` says; one regex per kind instead of fnmatch calls per glob and per component (the
    exclude check of every file found is most of a warm run's file discovery)."""
    whole, part = [], []
    for pattern in patterns:
        pattern = pattern.rstrip("/")
        whole += [fnmatch.translate(pattern), fnmatch.translate(pattern + "/*")]
        if "/" not in pattern:
            part.append(fnmatch.translate(pattern))
    if not whole:  # no glob: nothing is excluded
        return (lambda relative: None), None
    return re.compile("|".join(whole)).match, re.compile("|".join(part)).match if part else None


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


def _config_in(folder: Path) -> Optional[Path]:
    """The config file of this folder itself, if it has one (a pyproject.toml counts only with a
    [tool.tfmigrate] table)."""
    for name in CONFIG_NAMES:
        path = folder / name
        note("s", path)
        if path.is_file() and (name != "pyproject.toml" or _table(path) is not None):
            return path
    return None


def load(path: Optional[Path], overrides: Sequence[str] = ()) -> Settings:
    """The settings of the configuration file `path` (None: the defaults), built on the files it
    extends, with the `--config "key = value"` overrides on top."""
    values: dict = {}
    if path is not None:
        values, extends = _file_values(path, ())
        values.update(root=path.parent.resolve(), source=path, extends=extends)
    for text in overrides:
        values = _layer(values, override(text), add=False)
    return Settings(**values)


def _file_values(path: Path, seen: Tuple[Path, ...]) -> Tuple[dict, Tuple[Path, ...]]:
    """The settings `path` sets, on top of those of the file its `extend` names (a path relative
    to `path`'s folder), and the files extended, nearest first."""
    table = _table(path)
    section = "[tool.tfmigrate]" if path.name == "pyproject.toml" else "top level"
    if table is None:
        raise ConfigError(f"{path}: no [tool.tfmigrate] table")
    if not isinstance(table, dict):
        raise ConfigError(f"{path}: {section} must be a table")
    unknown = sorted(set(table) - _KEYS)
    if unknown:
        raise ConfigError(f"{path}: unknown key {unknown[0]!r} in {section} (known: {', '.join(sorted(_KEYS))})")
    own = _values(table, str(path))
    if "extend" not in table:
        return own, ()
    named = table["extend"]
    if not isinstance(named, str) or not named.strip():
        raise ConfigError(f"{path}: extend: expected the path of another configuration file, got {named!r}")
    base = Path(os.path.normpath(path.parent.absolute() / os.path.expanduser(named)))
    chain = (*seen, Path(os.path.normpath(path.absolute())))
    if any(os.path.realpath(base) == os.path.realpath(p) for p in chain):
        cycle = " -> ".join(str(p) for p in (*chain, base))
        raise ConfigError(f"{path}: extend = {named!r} makes a cycle: {cycle}; a configuration cannot extend itself")
    if not base.is_file():
        raise ConfigError(f"{path}: extend = {named!r}: no such configuration file {base}")
    note("s", base)
    below, extends = _file_values(base, chain)
    return _layer(below, own), (base, *extends)


def override(text: str) -> dict:
    """`--config "key = value"`: the settings one TOML pair sets, as a configuration file's key."""
    try:
        import tomllib  # Python 3.11+
    except ImportError:  # pragma: no cover - older Pythons
        import tomli as tomllib
    where = f"--config {text!r}"
    try:
        table = tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        raise ConfigError(f"{where}: neither a configuration file nor a TOML `key = value` pair ({error})") from None
    unknown = sorted(set(table) - _KEYS)
    if unknown:
        raise ConfigError(f"{where}: unknown key {unknown[0]!r} (known: {', '.join(sorted(_KEYS - {'extend'}))})")
    if "extend" in table:
        raise ConfigError(f"{where}: `extend` belongs in a configuration file; to use another file, give its path: "
                          "--config PATH")
    return _values(table, where)


# Lists a layer adds to the one below (Ruff's extend-select and extend-exclude across `extend`).
_ADDED = ("extend_select", "ignore", "extend_exclude")


def _layer(below: dict, top: dict, add: bool = True) -> dict:
    """Settings values `top` laid over `below`: a key `top` sets replaces the one below, except
    (with `add`, a file over the one it extends) the lists in _ADDED and per-file-ignores, which
    add to it; a `select` starts the selection again (as a --select)."""
    merged = dict(below)
    if "select" in top:
        for name in ("select", *_ADDED[:2]):
            merged.pop(name, None)
    for name, value in top.items():
        if add and name in _ADDED and name in merged:
            merged[name] = [*merged[name], *value]
        elif add and name == "per_file_ignores" and name in merged:
            merged[name] = {**merged[name], **value}
        else:
            merged[name] = value
    return merged


def _values(table: dict, label: str) -> dict:
    """The Settings fields a table of known keys sets, each value checked (errors name `label`)."""
    where = lambda key: f"{label}: {key}"  # noqa: E731
    values: dict = {}
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
    for key, attr in (("respect-gitignore", "respect_gitignore"), ("unsafe-fixes", "unsafe_fixes"),
                      ("force-exclude", "force_exclude"), ("native", "native"),
                      ("keras3", "keras3")):
        if key in table:
            if not isinstance(table[key], bool):
                raise ConfigError(f"{where(key)}: expected true or false, got {table[key]!r}")
            values[attr] = table[key]
    if values.get("keras3") and "native" not in table:  # `keras3 = true` builds on `native`
        values["native"] = True
    if "target-version" in table:
        values["target_version"] = check_target(where("target-version"), table["target-version"])
    if "tensorflow-aliases" in table:
        values["tensorflow_aliases"] = _aliases(where("tensorflow-aliases"), table["tensorflow-aliases"])
    if "max-file-size" in table:
        values["max_file_size"] = file_size(where("max-file-size"), table["max-file-size"])
    return values


_SIZE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(|b|kb|mb|gb|kib|mib|gib)\s*$", re.IGNORECASE)
_UNITS = {"": 1, "b": 1, "kb": 10**3, "mb": 10**6, "gb": 10**9, "kib": 2**10, "mib": 2**20, "gib": 2**30}


def file_size(where: str, value) -> int:
    """max-file-size: bytes as an integer, or a string with a unit ("2MB", "500KB", "1MiB"); 0
    means no limit."""
    match = _SIZE.match(value) if isinstance(value, str) else None
    if isinstance(value, bool) or not (isinstance(value, int) and value >= 0 or match):
        raise ConfigError(f'{where}: expected a size like "2MB", "500KB" or a number of bytes (0: no limit), got {value!r}')
    if isinstance(value, int):
        return value
    return int(float(match.group(1)) * _UNITS[match.group(2).lower()])


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


@dataclass(frozen=True)
class Flags:
    """The command line's settings, laid over every configuration file's."""

    select: Optional[List[str]] = None
    extend_select: Optional[List[str]] = None
    ignore: Optional[List[str]] = None
    unsafe_fixes: Optional[bool] = None
    target_version: Optional[str] = None
    force_exclude: Optional[bool] = None
    respect_gitignore: Optional[bool] = None
    exclude: Optional[List[str]] = None  # as Ruff's --exclude: replaces the files' exclude
    extend_exclude: Optional[List[str]] = None
    max_file_size: Optional[str] = None
    native: Optional[bool] = None
    ignore_noqa: Optional[bool] = None
    keras3: Optional[bool] = None

    def check(self) -> None:
        """Validate the flags once, before any file is looked at."""
        for where, codes in (("--select", self.select), ("--extend-select", self.extend_select), ("--ignore", self.ignore)):
            if codes:
                _codes(where, codes)
        if self.target_version is not None:
            check_target("--target-version", self.target_version)
        if self.max_file_size is not None:
            file_size("--max-file-size", self.max_file_size)
        for where, globs in (("--exclude", self.exclude), ("--extend-exclude", self.extend_exclude)):
            for glob in globs or ():
                _check_glob(where, glob)

    def over(self, settings: Settings) -> Settings:
        changes: dict = {}
        if self.select:  # as in Ruff, a --select on the command line replaces the file's selection
            changes.update(select=list(self.select), extend_select=[], ignore=[])
        if self.extend_select:
            changes["extend_select"] = [*changes.get("extend_select", settings.extend_select), *self.extend_select]
        if self.ignore:
            changes["ignore"] = [*changes.get("ignore", settings.ignore), *self.ignore]
        for name in ("unsafe_fixes", "target_version", "force_exclude", "respect_gitignore", "native", "ignore_noqa",
                     "keras3"):
            if getattr(self, name) is not None:
                changes[name] = getattr(self, name)
        if changes.get("keras3") and self.native is None:  # `--keras3` builds on `--native`
            changes["native"] = True
        if self.exclude:
            changes["exclude"] = list(self.exclude)
        if self.extend_exclude:
            changes["extend_exclude"] = [*settings.extend_exclude, *self.extend_exclude]
        if self.max_file_size is not None:
            changes["max_file_size"] = file_size("--max-file-size", self.max_file_size)
        return replace(settings, **changes)


class Resolver:
    """Settings per file, as Ruff's hierarchical configuration: the nearest config file at or
    above the file's folder (or the one `--config` names, for every file), with the flags on
    top. Each config file is read once and each folder looked up once, however many files."""

    def __init__(self, flags: Flags, config: Optional[Path] = None, overrides: Sequence[str] = ()):
        self._flags = flags
        self._forced = config
        self._overrides = tuple(overrides)
        self._nearest: Dict[str, Optional[Path]] = {}  # folder -> its nearest config
        self._loaded: Dict[Optional[Path], Settings] = {}

    def for_path(self, path: str) -> Settings:
        config = self._forced
        if config is None:
            absolute = os.path.abspath(path)
            config = self._config_for(absolute if os.path.isdir(absolute) else os.path.dirname(absolute))
        settings = self._loaded.get(config)
        if settings is None:
            settings = self._loaded[config] = replace(self._flags.over(load(config, self._overrides)), resolver=self)
        return settings

    def _config_for(self, folder: str) -> Optional[Path]:
        """The nearest config at or above `folder` (symlinks resolved), remembered for every
        folder on the way up."""
        if folder in self._nearest:
            return self._nearest[folder]
        trail = [folder]
        found: Optional[Path] = None
        real = Path(os.path.realpath(folder))
        for candidate in (real, *real.parents):
            key = str(candidate)
            if key in self._nearest:
                found = self._nearest[key]
                break
            trail.append(key)
            found = _config_in(candidate)
            if found is not None:
                break
        for key in trail:
            self._nearest[key] = found
        return found


def _globs(values: Optional[List[str]]) -> Optional[List[str]]:
    """Command-line globs, comma-separated or repeated (`--exclude a,b --exclude c`)."""
    if not values:
        return None
    return [g.strip() for v in values for g in v.split(",") if g.strip()]


def config_options(config: Union[None, str, Sequence[str]]) -> Tuple[Optional[Path], List[str]]:
    """`--config` values as Ruff takes them: the path of a configuration file (one at most), or
    TOML `key = value` pairs overriding a key of every configuration (checked here)."""
    values = [config] if isinstance(config, str) else list(config or ())
    path: Optional[Path] = None
    pairs = []
    for value in values:
        if "=" in value and not os.path.isfile(value):
            override(value)
            pairs.append(value)
        elif path is not None:
            raise ConfigError(f"--config {value}: a second configuration file (the first: {path}); "
                              "--config takes one file, and any number of `key = value` pairs")
        elif not os.path.isfile(value):
            raise ConfigError(f"{value}: no such config file")
        else:
            path = Path(value)
    return path, pairs


def resolve(
    paths: List[str],
    config: Union[None, str, Sequence[str]] = None,
    select: Optional[List[str]] = None,
    extend_select: Optional[List[str]] = None,
    ignore: Optional[List[str]] = None,
    unsafe_fixes: Optional[bool] = None,
    target_version: Optional[str] = None,
    force_exclude: Optional[bool] = None,
    respect_gitignore: Optional[bool] = None,
    exclude: Optional[List[str]] = None,
    extend_exclude: Optional[List[str]] = None,
    max_file_size: Optional[str] = None,
    native: Optional[bool] = None,
    ignore_noqa: Optional[bool] = None,
    keras3: Optional[bool] = None,
) -> Settings:
    """The settings of the first path (its cache folder is the run's), which answer
    `for_path` for every other file. `config`: --config's values (see config_options)."""
    flags = Flags(select, extend_select, ignore, unsafe_fixes, target_version, force_exclude, respect_gitignore,
                  _globs(exclude), _globs(extend_exclude), max_file_size, native, ignore_noqa, keras3)
    flags.check()
    forced, overrides = config_options(config)
    first = paths[0] if paths and paths[0] != "-" else os.getcwd()
    return Resolver(flags, forced, overrides).for_path(first)
