"""Which TensorFlow names a module gets through `from X import *` of a checked module.

TF1 projects often keep their imports in a helper (DCGAN's `ops.py` does `import tensorflow as
tf`, then `model.py` does `from ops import *` and builds the graph with `tf.placeholder`): the
module that uses `tf` never imports TensorFlow itself, so every TF1 construct in it would be
missed. Files are linted one at a time, so this cross-file fact is gathered up front, like
graph_imports: for each checked `.py` file with a star import of another checked module, the
TensorFlow aliases that module binds at its top level (`tf` -> `tensorflow`, `tf` ->
`tensorflow.compat.v1`, `layers` -> `tensorflow.keras.layers`, ...), following the module's own
star imports of checked modules one level further. The fact reaches names.ImportTable through
shims.Shims (`star`), binding the names where the star import stands.

Cost: every file is searched once for the bytes `import *`; only a file that has one reads and
parses (with `ast`, never libcst) the modules it names.
"""
from __future__ import annotations

import os
import re
from typing import Callable, Dict, Iterable, List, NamedTuple, Optional, Tuple

from tfmigrate.graph_imports import _read

_HINT = re.compile(rb"import[ \t]*\*")
_STAR = re.compile(rb"^[ \t]*from[ \t]+(\.*[\w.]*)[ \t]+import[ \t]*\*", re.MULTILINE)
_TF_ROOTS = ("tensorflow", "keras", "tf_keras")
_LEVELS = 2  # the star-imported module, and the modules it star-imports in turn
# What importing a module does to the whole program (program.py's _V2_OFF and _LEGACY_SET, on
# bytes: program.py imports libcst, which a cached run must not pay for).
_PROGRAM = (
    ("v2_off", re.compile(rb"\b(?:disable_v2_behavior|disable_eager_execution)\s*\(")),
    ("legacy_keras", re.compile(rb"""["']TF_USE_LEGACY_KERAS["']""")),
)

Aliases = Tuple[Tuple[str, str], ...]  # (local name, full dotted TensorFlow path), sorted


class StarFact(NamedTuple):
    """What a file's star imports of checked modules bring in."""

    modules: Tuple[Tuple[str, Aliases], ...]  # (module as written after `from`, its aliases)
    # What importing them does to the program: "v2_off" (it calls disable_v2_behavior, so the
    # importer runs on TensorFlow's compat route too), "legacy_keras" (it sets TF_USE_LEGACY_KERAS).
    program: Tuple[str, ...] = ()


def star_aliases(files: Iterable[str], read: Optional[Callable[[str], bytes]] = None) -> Dict[str, StarFact]:
    """path -> what its star imports of checked modules bring in, for the files whose star
    imports bring TensorFlow names."""
    read = read or _read
    files = [f for f in files if f.endswith(".py")]
    known = {os.path.normpath(os.path.abspath(f)): f for f in files}
    exports: Dict[str, tuple] = {}
    found: Dict[str, StarFact] = {}
    for path in files:
        data = read(path)
        if not data or not _HINT.search(data):
            continue
        modules, program = [], set()
        for module in dict.fromkeys(_star_modules(data)):
            target = resolve(module, path, known)
            if target is None or target == path:
                continue
            names, flags = _exports(target, known, read, exports, _LEVELS, {path})
            if names:
                modules.append((module, tuple(sorted(names.items()))))
            program |= flags
        if modules:
            found[path] = StarFact(tuple(modules), tuple(sorted(program)))
    return found


def cache_key(fact: Optional[StarFact]) -> str:
    """The fact as text, for the per-file cache key (the findings change with it)."""
    if not fact:
        return ""
    modules = ";".join(f"{module}:{','.join(f'{k}={v}' for k, v in names)}" for module, names in fact.modules)
    return f"|star: {modules}|{','.join(fact.program)}"


def _star_modules(data: bytes) -> List[str]:
    return [m.group(1).decode("ascii", "replace") for m in _STAR.finditer(data) if m.group(1)]


def resolve(module: str, importer: str, known: Dict[str, str]) -> Optional[str]:
    """The checked file `from <module> import *` in `importer` names: relative to its folder
    (dots), beside it (a script's folder is on sys.path), or from the root of its package."""
    folder = os.path.dirname(os.path.abspath(importer))
    dots = len(module) - len(module.lstrip("."))
    parts = [p for p in module.lstrip(".").split(".") if p]
    if dots:
        bases = [folder]
        for _ in range(dots - 1):
            bases = [os.path.dirname(bases[0])]
    else:
        if not parts:
            return None
        bases = [folder]
        root = folder
        while os.path.isfile(os.path.join(root, "__init__.py")):
            root = os.path.dirname(root)
        if root != folder:
            bases.append(root)
    for base in bases:
        candidate = os.path.join(base, *parts)
        for path in (candidate + ".py", os.path.join(candidate, "__init__.py")):
            hit = known.get(os.path.normpath(path))
            if hit is not None:
                return hit
    return None


def _exports(path: str, known, read, memo: Dict[str, tuple], levels: int, seen: set):
    """The TensorFlow names `from <path's module> import *` binds (local -> full dotted path),
    and what importing it does to the program (_PROGRAM flags)."""
    key = f"{path}\0{levels}"
    if key in memo:
        return memo[key]
    memo[key] = ({}, set())  # a cycle of star imports ends here
    data = read(path)
    names: Dict[str, str] = {}
    flags = {flag for flag, pattern in _PROGRAM if data and pattern.search(data)}
    follow = levels > 1 and _HINT.search(data) is not None
    if data and (b"tensorflow" in data or b"keras" in data or follow):
        names = _top_level_bindings(data, path, known, read, memo, levels, seen | {path}, follow, flags)
    memo[key] = (names, flags)
    return names, flags


def _top_level_bindings(data, path, known, read, memo, levels, seen, follow, flags) -> Dict[str, str]:
    """Walks the module's top-level statements (into if/try/with/for bodies, not functions or
    classes) as Python binds names; `flags` receives those of the modules it star-imports."""
    import ast

    try:
        tree = ast.parse(data)
    except (SyntaxError, ValueError):  # not Python 3, a NUL byte: it binds nothing we can see
        return {}
    bound: Dict[str, Optional[str]] = {}
    public: Optional[set] = None

    def bind(local: str, target: Optional[str], fallback: bool) -> None:
        if fallback and local in bound:
            return  # `try: import a as x / except ImportError: import b as x`: the try's runs
        bound[local] = target

    stack = [(stmt, False) for stmt in reversed(tree.body)]
    while stack:
        stmt, fallback = stack.pop()
        if isinstance(stmt, ast.Import):
            for alias in stmt.names:
                if alias.asname:
                    bind(alias.asname, alias.name, fallback)
                else:
                    head = alias.name.split(".")[0]
                    bind(head, head, fallback)
        elif isinstance(stmt, ast.ImportFrom):
            module = "." * stmt.level + (stmt.module or "")
            if stmt.names[0].name == "*":
                if follow and stmt.level == 0 and module.split(".")[0] in _TF_ROOTS:
                    continue  # `from tensorflow... import *`: names unknown without TensorFlow
                target = resolve(module, path, known) if follow else None
                if target is not None and target not in seen:
                    names, inner = _exports(target, known, read, memo, levels - 1, seen)
                    flags |= inner
                    for local, full in names.items():
                        bind(local, full, fallback)
                continue
            for alias in stmt.names:
                local = alias.asname or alias.name
                bind(local, f"{stmt.module}.{alias.name}" if stmt.level == 0 and stmt.module else None, fallback)
        elif isinstance(stmt, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
            for target in targets:
                if isinstance(target, ast.Name):
                    if target.id == "__all__" and isinstance(stmt, ast.AugAssign):
                        public = public | (_names_listed(stmt.value) or set()) if public is not None else None
                    elif target.id == "__all__":
                        public = _names_listed(stmt.value)
                    elif target.id in bound:
                        bound[target.id] = None  # `tf = None`: rebound, not TensorFlow now
        elif isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            if stmt.name in bound:
                bound[stmt.name] = None
        elif isinstance(stmt, (ast.If, ast.With, ast.For, ast.While)):
            stack.extend((s, fallback) for s in reversed(stmt.body + getattr(stmt, "orelse", [])))
        elif isinstance(stmt, ast.Try) or type(stmt).__name__ == "TryStar":
            stack.extend((s, True) for s in reversed([s for h in stmt.handlers for s in h.body]))
            stack.extend((s, fallback) for s in reversed(stmt.body + stmt.orelse + stmt.finalbody))
    return {
        local: target
        for local, target in bound.items()
        if target is not None and target.split(".")[0] in _TF_ROOTS
        and (local in public if public is not None else not local.startswith("_"))
    }


def _names_listed(value) -> Optional[set]:
    """The strings of an `__all__ = [...]` / `(...)`; None when it is not a literal list."""
    import ast

    if isinstance(value, (ast.List, ast.Tuple)) and all(
            isinstance(e, ast.Constant) and isinstance(e.value, str) for e in value.elts):
        return {e.value for e in value.elts}
    return None
