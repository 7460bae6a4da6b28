"""Which checked modules a module of TF1 graph code imports: they are graph code too.

A helper module a graph program imports (`utils.py` building `tf.data` pipelines, kernels) may
show no graph construct of its own, yet its TensorFlow objects flow into the program's graph: on
TensorFlow's compat route it must be TF1's too (a TF2 `Dataset` has no `output_types` for the
program's `tf.data.Iterator.from_structure`). Files are linted one at a time, so this one
cross-file fact is gathered up front, from the bytes, by word matches (no parse): local imports of
a graph module resolved to files among those checked.
"""
from __future__ import annotations

import hashlib
import json
import os
import re
from typing import Container, Dict, Iterable, List, Optional, Tuple

from tfmigrate import __version__
from tfmigrate.atomic import make_cache_folder, write_atomic
from tfmigrate.facts.eager_calls import NOT_EAGER, code_only
from tfmigrate.facts.eager_functions import (DRAWS_ENTRY, GRAPH, MODEL, MODEL_ENTRY, RUN_DRAWS, SHARES_ENTRY,
                                             UNTRACKED_ENTRY, WholeModule, function_draws, function_kinds,
                                             library_only, shared_by_default, untracked_functions)
from tfmigrate.facts.graph_words import HELPER_GRAPH_BYTES, HELPER_GRAPH_CALL_BYTES, MAPPED_GRAPH_CALL_BYTES
from tfmigrate.facts.library_builders import entry as builds_entry
from tfmigrate.facts.library_builders import payloads as builder_payloads
from tfmigrate.observed import note, read_noted

# A module that imports TensorFlow and uses a TF1 graph construct (graph_words.HELPER_GRAPH_CALLS).
TF_IMPORT = re.compile(rb"^[ \t]*(?:import[ \t]+tensorflow\b|from[ \t]+tensorflow\b)", re.MULTILINE)
# What the compat route rewrites (and puts `disable_v2_behavior()` after): `import tensorflow [as x]`,
# `import tensorflow.compat.v1 as x`, at the top level.
_PLAIN_TF_IMPORT = re.compile(rb"^import[ \t]+tensorflow(?:\.compat\.v1)?(?:[ \t]+as[ \t]+\w+)?[ \t]*(?:[#;\n]|$)",
                              re.MULTILINE)
_IMPORT_WORD = re.compile(rb"import")
_IMPORT_LINE = re.compile(rb"(?:import[ \t]+([\w.]+(?:[ \t]*,[ \t]*[\w.]+)*)|from[ \t]+(\.*[\w.]*)[ \t]+import\b)")


def graph_importers(files: Iterable[str], read=None, star: Container[str] = (), cache_dir: Optional[str] = None,
                    exclude: Container[str] = frozenset(), transitive: bool = False) -> Dict[str, str]:
    """path -> the path of a graph module among `files` that imports it (the first found).
    `star`: the files that get TensorFlow through a star import (star_imports), which import it
    as much as those that spell `import tensorflow`. `transitive`: a module graph code imports
    that has its own `import tensorflow` takes the compat route, whose `disable_v2_behavior()`
    makes it a graph module too, so the modules it imports are graph code as well: the fact a
    second `fix` would gather after the first, found at once (one fixed point, whatever subset of
    files a run is given). With `cache_dir`, the answer is kept there and reused while no file's
    size or modification time changed (a warm check reads nothing)."""
    files = [f for f in files if f.endswith(".py")]
    if cache_dir is None or read is not None or exclude:
        return _graph_importers(files, read or read_source, star, exclude, transitive)
    stamp = _stamp(files, star) + ("|transitive" if transitive else "")
    entry = os.path.join(cache_dir, "graph_imports.json")
    try:
        with open(entry, encoding="utf-8") as handle:
            cached = json.load(handle)
        if cached.get("stamp") == stamp:
            return cached["importers"]
    except (OSError, ValueError, AttributeError):
        pass
    found = _graph_importers(files, read_source, star, transitive=transitive)
    try:
        make_cache_folder(cache_dir)
        write_atomic(entry, json.dumps({"stamp": stamp, "importers": found}).encode("utf-8"), new=True)
    except OSError:
        pass  # a cache that cannot be written only costs time
    return found


def _stamp(files: List[str], star: Container[str]) -> str:
    digest = hashlib.sha256(__version__.encode())
    for path in sorted(files):
        note("s", path)
        try:
            info = os.stat(path)
        except OSError:
            continue
        digest.update(f"{path}\0{info.st_size}\0{info.st_mtime_ns}\0{path in star}\n".encode("utf-8", "surrogateescape"))
    return digest.hexdigest()


def _graph_importers(files: List[str], read, star: Container[str], exclude: Container[str] = (),
                     transitive: bool = False) -> Dict[str, str]:
    """`exclude`: graph modules that are not graph code after all (rewritten by `fix --native`)."""
    known = {os.path.normpath(os.path.abspath(f)): f for f in files}
    found: Dict[str, str] = {}
    graph = []
    for path in files:
        if path in exclude:
            continue
        data = read(path)
        if not data or not any(word in data for word in HELPER_GRAPH_BYTES):
            continue
        if not ((b"tensorflow" in data and TF_IMPORT.search(data)) or path in star) or not HELPER_GRAPH_CALL_BYTES.search(data):
            continue
        graph.append(path)
        _mark(path, data, known, found)
    if transitive:  # the imported modules the route turns into graph modules, in turn (breadth first)
        done = set(graph)
        queue = [target for target in found if target not in done]
        while queue:
            path = queue.pop(0)
            if path in done or path in exclude:
                continue
            done.add(path)
            data = read(path)
            if data and b"tensorflow" in data and _PLAIN_TF_IMPORT.search(data):
                queue.extend(target for target in _mark(path, data, known, found) if target not in done)
    return found


# What makes variables or graph state when called: a module with one of these is no pure tensor
# helper a `tf.function` of `fix --native` may call (TF1 model code: issue 21's model mapping).
MAKES_STATE = re.compile(rb"\b(?:get_variable|variable_scope|Variable|placeholder|layers\.[a-z]\w*|slim\.[a-z]\w*)\s*\(")


def stateful_imports(files: Iterable[str], read) -> Dict[str, tuple]:
    """path -> the modules it imports (as written) that are checked files making variables or
    graph state (`get_variable`, `tf.layers`, ...): `fix --native` must not call them in a
    `tf.function` of the script it rewrites."""
    files = [f for f in files if f.endswith(".py")]
    known = {os.path.normpath(os.path.abspath(f)): f for f in files}
    makes: Dict[str, bool] = {}

    def stateful(target: str) -> bool:
        """It makes state itself, or calls a checked module that does (a model class whose layers
        come from another module: gen52's `model.SmallCNN` of `layers.Conv2D`)."""
        if target not in makes:
            makes[target] = False  # (an import cycle: what the others say)
            data = read(target) or b""
            makes[target] = bool(MAKES_STATE.search(data)) or any(
                stateful(other) for other in _called_modules(data, target, known)[0] if other != target)
        return makes[target]

    found: Dict[str, tuple] = {}
    for path in files:
        data = read(path) or b""
        if b"tensorflow" not in data:
            continue
        names = []
        for module in imported_modules(data):
            target = resolve(module, path, known)
            if target is None or target == path:
                continue
            if stateful(target):
                names.append(module)
        if names:
            found[path] = tuple(sorted(set(names)))
    return found


def eager_imports(files: Iterable[str], read, scripts: Container[str] = ()) -> Dict[str, tuple]:
    """path -> the modules it imports (as written, `from a import b` as `a.b` too) that are
    checked files without a construct that runs otherwise eagerly, nor such a module imported in
    turn: what a test file made eager may call (`fix --native`). Of a module that has such a
    construct, its functions that have none (`ops.padding_bias`), and those that only make
    variables the TF1 way (`ops.output_projection:model`, facts.eager_functions); and of those a
    test may call, the ones whose numbers depend on the graph seed (`ops.sample_noise:draws=run`).
    Listed for test files, and for `scripts` (those importing modules that make variables), whose
    entries also name the functions that make untracked state (`ops.dense:untracked`), and carry
    the text of the functions and classes that build other graph state, for the script to take in
    (`lib.build_graph:builds={...}`, facts.library_builders)."""
    files = [f for f in files if f.endswith(".py")]
    known = {os.path.normpath(os.path.abspath(f)): f for f in files}
    clean: Dict[str, bool] = {}

    def eager(path: str, seen: frozenset) -> bool:
        if path not in clean:
            data = read(path) or b""
            followed, packages = _called_modules(data, path, known)
            clean[path] = not NOT_EAGER.search(code_only(data)) and all(
                not NOT_EAGER.search(code_only(read(package) or b"")) for package in packages) and all(
                target in seen or eager(target, seen | {target}) for target in followed)
        return clean[path]

    listed_of: Dict[str, Dict[str, str]] = {}
    shares_of: Dict[str, set] = {}  # path -> its model functions that share their variables by default
    builders_of: Dict[str, set] = {}  # path -> its functions that build other graph state (a script may take them in)
    payloads_of: Dict[str, Dict[str, str]] = {}  # path -> what a script needs to take them in (facts.library_builders)

    def functions(path: str, seen: frozenset) -> Dict[str, str]:
        """(once per module: `seen` only keeps an import cycle from recursing)"""
        if path not in listed_of:
            listed_of[path] = {}  # (an import cycle back to it: nothing listed yet)
            listed_of[path] = _functions(path, seen)
        return listed_of[path]

    def _functions(path: str, seen: frozenset) -> Dict[str, str]:
        """The functions of a module not wholly eager that a test may call (eager_functions): not
        of a program with graph code beyond variables (its compat route turns v2 behaviour off, for
        the eager test too); a library's is left to its programs (eager_functions.library_only)."""
        data = read(path) or b""
        if MAPPED_GRAPH_CALL_BYTES.search(code_only(data)) and not library_only(data):
            return {}
        followed, packages = _called_modules(data, path, known)
        if any(NOT_EAGER.search(code_only(read(package) or b"")) for package in packages):
            return {}
        partial = {target for target in followed if not (target in seen or eager(target, seen | {target}))}
        consulted = set()

        def listed(spec: str) -> Optional[dict]:
            """What the module `spec` lets this one call (a module not wholly eager: its own
            functions of this kind, so `model.gcn` calling `layers.graph_conv` is a model function)."""
            target = resolve(spec, path, known)
            if target is None or target == path:
                return None
            if target not in partial:
                return WholeModule()
            consulted.add(target)
            return functions(target, seen | {target})
        kinds = function_kinds(data, listed) or {}
        for spec, names in _reexports(data):  # (a package's `from .bn import *`: its names are the module's)
            target = resolve(spec, path, known)
            if target is None or target == path:
                continue
            consulted.add(target)
            if target in partial:
                given = functions(target, seen | {target})
            else:
                given = {name: kind for name, kind in (function_kinds(read(target) or b"") or {}).items()}
            kinds.update({name: kind for name, kind in given.items()
                          if name not in kinds and (name in names if names else not name.startswith("_"))})
        if partial - consulted:  # (imported in a way not read here: `import pkg.mod`)
            return {}
        shares_of[path] = shared_by_default(data, kinds, listed)
        builders_of[path] = {name for name, kind in kinds.items() if kind == GRAPH}
        return {name: kind for name, kind in kinds.items() if kind != GRAPH}

    drawn: Dict[str, Optional[dict]] = {}

    def module_draws(module: str, importer: str) -> Optional[dict]:
        """What the checked module `module` (as `importer` spells it) draws, function by function
        (facts.eager_functions.function_draws, following its own imports); None if it is not one."""
        target = resolve(module, importer, known)
        if target is None:
            return None
        if target not in drawn:
            drawn[target] = None  # (an import cycle: unknown)
            data = read(target) or b""
            draws = function_draws(data, lambda spec: module_draws(spec, target))
            for spec, names in _reexports(data) if draws is not None else ():
                given = module_draws(spec, target)
                if given is None:
                    return None
                draws.update({name: value for name, value in given.items()
                              if name not in draws and (name in names if names else not name.startswith("_"))})
            drawn[target] = draws
        return drawn[target]

    untracked_of: Dict[str, Optional[set]] = {}

    def untracked(target: str, seen: frozenset) -> Optional[set]:
        """The functions of `target` that make untracked state (all: None), with what they call of
        the checked modules it imports (facts.eager_functions.untracked_functions)."""
        if target not in untracked_of:
            untracked_of[target] = None  # (an import cycle: all)

            def of_module(spec: str) -> Optional[dict]:
                other = resolve(spec, target, known)
                if other is None or other == target:
                    return None
                found = untracked(other, seen | {other}) if other not in seen else None
                return _AllUntracked() if found is None else {name: "x" for name in found}
            untracked_of[target] = untracked_functions(read(target) or b"", of_module)
        return untracked_of[target]

    found: Dict[str, tuple] = {}
    for path in files:
        data = read(path) or b""
        script = path in scripts and b"TestCase" not in data
        if b"TestCase" not in data and not script:
            continue
        names = []
        for module in _imported_names(data):
            target = resolve(module, path, known)
            if target is None or target == path:
                continue
            if not script and eager(target, frozenset({path, target})):
                names.append(module)  # (for a script, one by one: a module making state is not pure as a whole)
                callable_ = None
            else:
                callable_ = functions(target, frozenset({path, target}))
                names += [f"{module}.{name}" + (MODEL_ENTRY if kind == MODEL else "") for name, kind in callable_.items()]
                names += [f"{module}.{name}{SHARES_ENTRY}" for name in shares_of.get(target, ()) if name in callable_]
                if script:
                    made = untracked(target, frozenset({path, target}))
                    names += [f"{module}.{name}{UNTRACKED_ENTRY}" for name in callable_ if made is None or name in made]
                    if target not in payloads_of:
                        payloads_of[target] = builder_payloads(read(target) or b"", builders_of.get(target, ()))
                    names += [builds_entry(module, name, payload) for name, payload in payloads_of[target].items()]
            drawing = module_draws(module, path)
            if drawing is None:  # (it may draw anywhere)
                names.append(f"{module}{DRAWS_ENTRY}{RUN_DRAWS}")
            else:
                names += [f"{module}.{name}{DRAWS_ENTRY}{draws}" for name, draws in drawing.items()
                          if callable_ is None or name in callable_]
        if names:
            found[path] = tuple(sorted(set(names)))
    return found


class _AllUntracked(dict):
    """What `eager_imports` reads of a module whose untracked functions are not known: any of them."""

    def get(self, key, default=None):
        return "x"


def _called_modules(data: bytes, path: str, known: Dict[str, str]):
    """The checked modules whose functions `path` may call, and the packages whose `__init__`
    it only runs on the way: `from trfl import base_ops` calls `trfl/base_ops.py`, and runs
    `trfl/__init__.py` (its own code, not the functions of every module it imports)."""
    named: Dict[str, List[Optional[str]]] = {}
    for match in re.finditer(rb"^[ \t]*from[ \t]+([\w.]+)[ \t]+import[ \t]+([\w \t,]+)$", data, re.MULTILINE):
        names = [n.strip().split()[0] for n in match.group(2).split(b",") if n.strip()]
        module = match.group(1).decode("ascii", "replace")
        named.setdefault(module, []).extend(
            resolve(f"{module}.{n.decode('ascii', 'replace')}", path, known) for n in names)
    followed, packages = [], []
    for module in imported_modules(data):
        target = resolve(module, path, known)
        if target is None or target == path:
            continue
        submodules = named.get(module)
        if submodules and all(s is not None and s != target for s in submodules):
            followed += [s for s in submodules if s != path]
            packages.append(target)
        else:
            followed.append(target)
    return followed, packages


def _reexports(data: bytes) -> List[Tuple[str, Tuple[str, ...]]]:
    """The module's top-level `from X import *` (no names: all its public ones) and `from X import
    a, b` of a relative X (`from .bn import BayesianNet`): what a package's `__init__` passes on."""
    found = []
    for match in re.finditer(rb"^from[ \t]+(\.*[\w.]*)[ \t]+import[ \t]+(\*|[\w \t,]+)[ \t]*(?:#.*)?$", data, re.MULTILINE):
        module = match.group(1).decode("ascii", "replace")
        if match.group(2) == b"*":
            found.append((module, ()))
        elif module.startswith("."):
            found.append((module, tuple(n.strip().split()[0].decode("ascii", "replace")
                                        for n in match.group(2).split(b",") if n.strip())))
    return found


def _imported_names(data: bytes) -> List[str]:
    """The modules imported, and for `from a import b, c` also `a.b` and `a.c` (b may be a module)."""
    names = imported_modules(data)
    for match in re.finditer(rb"^[ \t]*from[ \t]+([\w.]+)[ \t]+import[ \t]+([\w \t,]+)$", data, re.MULTILINE):
        for name in match.group(2).split(b","):
            name = name.strip().split()[0] if name.strip() else b""
            if name:
                names.append(f"{match.group(1).decode('ascii', 'replace')}.{name.decode('ascii', 'replace')}")
    return names


def eager_scripts(files: Iterable[str], read) -> List[str]:
    """The checked modules of eager TF2 code with `tf.function`s (what `fix --native` writes):
    TensorFlow imported, no graph construct; or TF1 model code kept inside the tracked calls of
    the model-mapping route (`track_tf1_style_variables`, its `get_variable`s), no other graph
    construct, whatever brings its `tf` (a group's library may get it by star import)."""
    found = []
    for path in files:
        data = read(path) if path.endswith(".py") else b""
        if not data or b"function" not in data:
            continue
        if TF_IMPORT.search(data) and not HELPER_GRAPH_CALL_BYTES.search(data) or (
                b"track_tf1_style_variables" in data and not MAPPED_GRAPH_CALL_BYTES.search(data)):
            found.append(path)
    return found


def imported(paths: Iterable[str], files: Iterable[str], read) -> set:
    """The checked modules that `paths` import."""
    known = {os.path.normpath(os.path.abspath(f)): f for f in files}
    found: Dict[str, str] = {}
    for path in paths:
        _mark(path, read(path) or b"", known, found)
    return set(found)


def _mark(path: str, data: bytes, known: Dict[str, str], found: Dict[str, str]) -> List[str]:
    """Record `path` as the graph importer of the checked modules it imports (where none was
    found before); those newly recorded."""
    new = []
    for module in imported_modules(data):
        target = resolve(module, path, known)
        if target is not None and target != path and target not in found:
            found[target] = path
            new.append(target)
    return new


def imported_modules(data: bytes) -> List[str]:
    modules = []
    seen = set()
    for hit in _IMPORT_WORD.finditer(data):  # a literal search, then only the lines it hits
        start = data.rfind(b"\n", 0, hit.start()) + 1
        if start in seen:
            continue
        seen.add(start)
        end = data.find(b"\n", start)
        line = data[start:end if end >= 0 else len(data)].lstrip()
        match = _IMPORT_LINE.match(line) if line.startswith((b"import", b"from")) else None
        if match is None:
            continue
        if match.group(1):
            modules.extend(m.strip().decode("ascii", "replace") for m in match.group(1).split(b","))
        elif match.group(2):
            modules.append(match.group(2).decode("ascii", "replace"))
    return modules


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
        while is_package(root):
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


def is_package(folder: str) -> bool:
    """Whether `folder` holds an `__init__.py` (noted: a warm run's answer depends on it)."""
    init = os.path.join(folder, "__init__.py")
    note("f", init)
    return os.path.isfile(init)


def read_source(path: str) -> bytes:
    return read_noted(path)
