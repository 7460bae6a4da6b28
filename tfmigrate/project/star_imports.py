"""Which TensorFlow names a module gets through `from X import *` of a checked module.

TF1 projects often keep their imports in a helper (DCGAN's `ops.py` does `import tensorflow as
tf`, then `model.py` does `from ops import *` and builds the graph with `tf.placeholder`): the
module that uses `tf` never imports TensorFlow itself, so every TF1 construct in it would be
missed. Files are linted one at a time, so this cross-file fact is gathered up front, like
graph_imports: for each checked `.py` file with a star import of another checked module, the
TensorFlow aliases that module binds at its top level (`tf` -> `tensorflow`, `tf` ->
`tensorflow.compat.v1`, `layers` -> `tensorflow.keras.layers`, ...), following the module's own
star imports of checked modules one level further. The fact reaches names.ImportTable through
project_imports.ProjectImports (`star`), binding the names where the star import stands.

Cost: every file is searched once for the bytes `import *`; only a file that has one reads the
modules it names, which are parsed with `ast` (never libcst) once per content: what a parse found
is kept in the cache folder, keyed by the module's hash, so a cached run parses nothing.
"""
from __future__ import annotations

import hashlib
import json
import os
import re
from typing import Callable, Dict, Iterable, List, NamedTuple, Optional, Tuple

from tfmigrate import __version__
from tfmigrate.atomic import make_cache_folder
from tfmigrate.facts.graph_words import (LEGACY_KERAS_AFTER_ALIAS_BYTES, LEGACY_KERAS_SET_BYTES, LEGACY_KERAS_VARIABLE,
                                        V2_OFF_CALL_BYTES)
from tfmigrate.project.graph_imports import read_source, resolve

_HINT = re.compile(rb"import[ \t]*\*")
_STAR = re.compile(rb"^[ \t]*from[ \t]+(\.*[\w.]*)[ \t]+import[ \t]*\*", re.MULTILINE)
_TF_ROOTS = ("tensorflow", "keras", "tf_keras")
_LEVELS = 2  # the star-imported module, and the modules it star-imports in turn
# What importing a module does to the whole program (what the program fact reads from text, on bytes).
_PROGRAM = (  # (flag, a literal every match contains, the pattern)
    ("v2_off", b"disable_", V2_OFF_CALL_BYTES),
    ("legacy_keras", LEGACY_KERAS_VARIABLE.encode(), LEGACY_KERAS_SET_BYTES),
)
_SCAN_FORMAT = "star-1"  # the layout of a kept scan (see _Kept); a new one ignores older files

Aliases = Tuple[Tuple[str, str], ...]  # (local name, full dotted TensorFlow path), sorted


class StarFact(NamedTuple):
    """What a file's star imports of checked modules bring in."""

    modules: Tuple[Tuple[str, Aliases], ...]  # (module as written after `from`, its aliases)
    # What importing them does to the program: "v2_off" (it calls disable_v2_behavior, so the
    # importer runs on TensorFlow's compat route too), "legacy_keras" (it sets TF_USE_LEGACY_KERAS).
    program: Tuple[str, ...] = ()


def star_aliases(files: Iterable[str], read: Optional[Callable[[str], bytes]] = None,
                 cache_dir: Optional[str] = None) -> Dict[str, StarFact]:
    """path -> what its star imports of checked modules bring in, for the files whose star
    imports bring TensorFlow names. `cache_dir`: where parses are kept between runs (None: not
    kept)."""
    read = read or read_source
    files = [f for f in files if f.endswith(".py")]
    modules = _Modules(files, read, cache_dir)
    found: Dict[str, StarFact] = {}
    for path in files:
        data = read(path)
        if not data or not _HINT.search(data):
            continue
        brought, program = [], set()
        for module in dict.fromkeys(_star_modules(data)):
            target = resolve(module, path, modules.known)
            if target is None or target == path:
                continue
            names, flags = modules.exports(target, _LEVELS, {path})
            if names:
                brought.append((module, tuple(sorted(names.items()))))
            program |= flags
        if brought:
            found[path] = StarFact(tuple(brought), tuple(sorted(program)))
    return found


_LEGACY_MODULES = ("tensorflow.layers", "tensorflow.nn.rnn_cell", "tensorflow.contrib.rnn", "tensorflow.keras",
                   "tensorflow.compat.v1.layers", "tensorflow.compat.v1.nn.rnn_cell", "tensorflow.compat.v1.keras")


def legacy_keras_wanted(files: Iterable[str], star: Dict[str, StarFact],
                        read: Optional[Callable[[str], bytes]] = None) -> Dict[str, str]:
    """path -> a checked module that gets its TensorFlow through a star import of it (directly, or
    through the modules it star-imports in turn) and uses `tf.layers`, `tf.nn.rnn_cell` or
    `tf.keras` through it. Legacy Keras must be on before the program's first TensorFlow import,
    and that import is in the star-imported module (DCGAN's `ops.py`), so when it takes the
    compat route it sets `TF_USE_LEGACY_KERAS` for its importer (the importer has no TensorFlow
    import of its own to anchor it on)."""
    if not star:
        return {}
    read = read or read_source
    known = {os.path.normpath(os.path.abspath(f)): f for f in files if f.endswith(".py")}
    found: Dict[str, str] = {}
    for path, fact in star.items():
        data = None
        for module, names in fact.modules:
            tf = [local for local, full in names if full in ("tensorflow", "tensorflow.compat.v1")]
            legacy = [local for local, full in names if full.startswith(_LEGACY_MODULES)]
            if not tf and not legacy:
                continue
            data = read(path) if data is None else data
            pattern = b"|".join(
                [rb"\b" + re.escape(local.encode()) + LEGACY_KERAS_AFTER_ALIAS_BYTES for local in tf]
                + [rb"\b" + re.escape(local.encode()) + rb"\s*\.\s*\w" for local in legacy])
            if not re.search(pattern, data):
                continue
            target = resolve(module, path, known)
            todo, seen = [target], {path}
            while todo:  # the module and the modules it star-imports: the first TensorFlow import is in one
                target = todo.pop()
                if target is None or target in seen:
                    continue
                seen.add(target)
                found.setdefault(target, path)
                todo.extend(resolve(inner, target, known) for inner, _ in (star[target].modules if target in star else ()))
    return found


def cache_key(fact: Optional[StarFact]) -> str:
    """The fact as text, for the per-file cache key (the findings change with it)."""
    if not fact:
        return ""
    modules = ";".join(f"{module}:{','.join(f'{k}={v}' for k, v in names)}" for module, names in fact.modules)
    return f"|star: {modules}|{','.join(fact.program)}"


def _star_modules(data: bytes) -> List[str]:
    return [m.group(1).decode("ascii", "replace") for m in _STAR.finditer(data) if m.group(1)]


class _Modules:
    """The star-imported modules of one run: each read and scanned once (a scan kept in the
    cache folder is not parsed again)."""

    def __init__(self, files: List[str], read, cache_dir: Optional[str]):
        self.known = {os.path.normpath(os.path.abspath(f)): f for f in files}
        self.read = read
        self.scans: Dict[str, tuple] = {}
        self.kept = os.path.join(cache_dir, __version__, _SCAN_FORMAT) if cache_dir else None
        self.cache_dir = cache_dir

    def exports(self, path: str, levels: int, seen: set):
        """The TensorFlow names `from <path's module> import *` binds (local -> full dotted
        path), and what importing it does to the program (_PROGRAM flags)."""
        events, flags = self.scan(path)
        bound: Dict[str, Optional[str]] = {}
        public: Optional[set] = None
        flags = set(flags)
        for event in events:
            kind, fallback = event[0], event[-1]
            if kind == "all":
                listed, augment = (set(event[1]) if event[1] is not None else None), event[2]
                public = (public | (listed or set()) if public is not None else None) if augment else listed
                continue
            if kind == "star":
                if levels < 2:
                    continue
                target = resolve(event[1], path, self.known)
                if target is None or target in seen:
                    continue
                names, inner = self.exports(target, levels - 1, seen | {path})
                flags |= inner
                pairs = names.items()
            else:
                pairs = ((event[1], event[2]),)
            for local, full in pairs:
                if not (fallback and local in bound):  # `try: import a as x / except: import b as x`: the try's
                    bound[local] = full
        names = {
            local: target
            for local, target in bound.items()
            if target is not None and target.split(".")[0] in _TF_ROOTS
            and (local in public if public is not None else not local.startswith("_"))
        }
        return names, flags

    def scan(self, path: str):
        """(events, flags) of the module: what its top-level statements do to its names, in
        order, and the _PROGRAM flags its source shows."""
        found = self.scans.get(path)
        if found is None:
            data = self.read(path)
            flags = tuple(flag for flag, literal, pattern in _PROGRAM if literal in data and pattern.search(data))
            events = []
            if data and (b"tensorflow" in data or b"keras" in data or _HINT.search(data)):
                entry = self._entry(data)
                events = self._load(entry)
                if events is None:
                    events = _events(data)
                    self._keep(entry, events)
            found = self.scans[path] = (events, flags)
        return found

    def _entry(self, data: bytes) -> Optional[str]:
        if self.kept is None:
            return None
        digest = hashlib.sha256(data).hexdigest()
        return os.path.join(self.kept, digest[:2], digest + ".json")

    @staticmethod
    def _load(entry: Optional[str]) -> Optional[list]:
        if entry is None:
            return None
        try:
            with open(entry, encoding="utf-8") as handle:
                events = json.load(handle)
            return events if isinstance(events, list) else None
        except (OSError, ValueError):
            return None

    def _keep(self, entry: Optional[str], events: list) -> None:
        """Write the scan (a temporary file and a rename); a cache that cannot be written only
        costs time."""
        if entry is None:
            return
        try:
            make_cache_folder(self.cache_dir)
            os.makedirs(os.path.dirname(entry), exist_ok=True)
            temporary = f"{entry}.{os.getpid()}.tmp"
            with open(temporary, "w", encoding="utf-8") as handle:
                json.dump(events, handle)
            os.replace(temporary, entry)
        except OSError:
            pass


def _events(data: bytes) -> list:
    """What the module's top-level statements (into if/try/with/for bodies, not functions or
    classes) do to its names, in order, as JSON-ready lists: ["bind", local, full path or None,
    fallback], ["star", module as written, fallback], ["all", names or None, augmented, False]."""
    import ast

    try:
        tree = ast.parse(data)
    except (SyntaxError, ValueError):  # not Python 3, a NUL byte: it binds nothing we can see
        return []
    events: list = []
    stack = [(stmt, False) for stmt in reversed(tree.body)]
    while stack:
        stmt, fallback = stack.pop()
        if isinstance(stmt, ast.Import):
            for alias in stmt.names:
                if alias.asname:
                    events.append(["bind", alias.asname, alias.name, fallback])
                else:
                    head = alias.name.split(".")[0]
                    events.append(["bind", head, head, fallback])
        elif isinstance(stmt, ast.ImportFrom):
            if stmt.names[0].name == "*":
                if stmt.level or (stmt.module or "").split(".")[0] not in _TF_ROOTS:
                    events.append(["star", "." * stmt.level + (stmt.module or ""), fallback])
                continue  # `from tensorflow... import *`: names unknown without TensorFlow
            for alias in stmt.names:
                full = f"{stmt.module}.{alias.name}" if stmt.level == 0 and stmt.module else None
                events.append(["bind", alias.asname or alias.name, full, fallback])
        elif isinstance(stmt, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
            for target in targets:
                if isinstance(target, ast.Name) and target.id == "__all__":
                    events.append(["all", _names_listed(stmt.value), isinstance(stmt, ast.AugAssign), False])
                elif isinstance(target, ast.Name):
                    events.append(["bind", target.id, None, False])  # `tf = None`: not TensorFlow now
        elif isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            events.append(["bind", stmt.name, None, False])
        elif isinstance(stmt, (ast.If, ast.With, ast.For, ast.While)):
            stack.extend((s, fallback) for s in reversed(stmt.body + getattr(stmt, "orelse", [])))
        elif isinstance(stmt, ast.Try) or type(stmt).__name__ == "TryStar":
            stack.extend((s, True) for s in reversed([s for h in stmt.handlers for s in h.body]))
            stack.extend((s, fallback) for s in reversed(stmt.body + stmt.orelse + stmt.finalbody))
    return events


def _names_listed(value) -> Optional[list]:
    """The strings of an `__all__ = [...]` / `(...)`; None when it is not a literal list."""
    import ast

    if isinstance(value, (ast.List, ast.Tuple)) and all(
            isinstance(e, ast.Constant) and isinstance(e.value, str) for e in value.elts):
        return sorted(e.value for e in value.elts)
    return None
