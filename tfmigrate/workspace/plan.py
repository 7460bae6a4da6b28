"""What a run visits and what each file is told: the files (walked, excluded, git-ignored), and
per file a Task with its own configuration's codes and the cross-file facts that change its
findings (the project's re-exports and star imports of TensorFlow, the graph module that imports
it, `native`). Every front end gets its files' facts from here, through tfmigrate.api.
"""
from __future__ import annotations

import functools
import hashlib
import os
import re
from dataclasses import dataclass
from typing import Callable, Dict, Iterable, List, NamedTuple, Optional, Sequence

from tfmigrate.workspace import CACHE_DIR
from tfmigrate.workspace.config import Settings
from tfmigrate.observed import note
from tfmigrate.workspace.files import discover, display_path, read_regular
from tfmigrate.workspace.gitignore import gitignored


@dataclass
class Task:
    path: str
    shown: str
    codes: List[str]
    mode: str  # "check" | "fix"
    unsafe: bool = False
    diff: bool = False
    key: str = ""  # cache key of the settings; empty: no cache
    cache_dir: Optional[str] = None
    data: Optional[bytes] = None  # the bytes to check instead of the file's (stdin, an editor's text)
    shims: Optional[object] = None  # facts.project_imports.ProjectImports: the project's re-exports of TensorFlow
    graph_importer: Optional[str] = None  # a checked TF1 graph module that imports this one
    max_size: int = 0  # max-file-size in bytes (0: no limit)
    native: bool = False  # rewrite TF1 graph scripts to eager TF2 (tfmigrate.native)
    keras3: bool = False  # and their tracked TF1 layers as Keras layers where equal (native.keras3)
    ignore_noqa: bool = False  # no `# noqa` silences anything (--ignore-noqa)


class ProjectFacts(NamedTuple):
    """The cross-file facts of a set of files, each gathered from the bytes of all of them."""

    star: Dict[str, object]  # path -> star_imports.StarFact: TensorFlow names its star imports bring
    importers: Dict[str, str]  # path -> a graph module among the files that imports it
    # path -> a module that star-imports it and uses legacy Keras API through it
    legacy: Dict[str, str] = {}
    # path -> the checked modules it imports that make variables (with --native only)
    stateful: Dict[str, tuple] = {}
    # path -> the checked modules it imports that an eager test may call (with --native only)
    eager: Dict[str, tuple] = {}
    # path -> its library of graph classes and their programs (with --native only, project.class_groups)
    groups: Dict[str, tuple] = {}
    # path -> a graph module that imports it, also where `fix --native` rewrites that one as eager
    # TF2 (with --native only): its `tf.where` or seeded initializer still meant TF1's
    tf1_users: Dict[str, str] = {}


def collect(paths: Sequence[str], settings: Settings, context: bool = False) -> List[str]:
    """Files to visit: directories walked, less excluded globs and (with respect-gitignore) what
    git ignores; files named explicitly too, unless force-exclude (pre-commit names every file).
    Each path is judged by its own nearest configuration. `context`: the files only give
    cross-file facts, and a folder whose configuration is broken is skipped (its error is
    reported when the user checks that folder: `check /tmp/x.py` must not fail on a stray
    pyproject.toml elsewhere in /tmp)."""
    from tfmigrate.workspace.config import ConfigError

    explicit = {p for p in paths if not os.path.isdir(p)}

    def excluded(path: str) -> bool:
        try:
            own = settings.for_path(path)
        except ConfigError:
            if context:
                return True
            raise
        return (path not in explicit or own.force_exclude) and own.excluded(path)

    files = [f for f in discover(paths, excluded) if not excluded(f)]
    ignored = gitignored([f for f in files if f not in explicit and settings.for_path(f).respect_gitignore])
    return [f for f in files if f not in ignored]



# A folder holding one of these is a project's root: the files whose cross-file facts count.
PROJECT_MARKERS = (".git", "pyproject.toml", "setup.py", "setup.cfg", "tfmigrate.toml", ".tfmigrate.toml")


def project_root(path: str) -> str:
    """The root of the project `path` belongs to: the nearest folder at or above it with a
    project marker (a git checkout, pyproject.toml, setup.py, ...); without one, the folder of
    its outermost package (`__init__.py` folders), where its imports resolve."""
    folder = os.path.abspath(path if os.path.isdir(path) else os.path.dirname(path) or ".")
    probe = folder
    while True:
        markers = [os.path.join(probe, marker) for marker in PROJECT_MARKERS]
        for marker in markers:
            note("e", marker)
        if any(os.path.exists(marker) for marker in markers):
            return probe
        parent = os.path.dirname(probe)
        if parent == probe:
            break
        probe = parent
    from tfmigrate.project.graph_imports import is_package

    while is_package(folder):
        folder = os.path.dirname(folder)
    return folder


def context(paths: Sequence[str], files: Sequence[str], settings: Settings) -> List[str]:
    """The files whose bytes the cross-file facts of `files` (those under `paths`) are gathered
    from: the files of the projects they belong to, so that `fix utils.py` (pre-commit names
    the files it hands over) fixes utils.py as `fix .` at the project's root would. `files`
    first, then the rest of the projects' files (their excludes and git's ignores apply)."""
    roots = sorted({project_root(p) for p in paths if p != "-"})
    if not roots:
        return list(files)
    if {os.path.normpath(os.path.abspath(p)) for p in paths} == set(roots):
        return list(files)  # the paths are the projects' roots: the files are all of them
    shown = {os.path.normpath(os.path.abspath(f)) for f in files}
    more = [f for f in collect([display_path(r) for r in roots], settings, context=True)
            if f.endswith(".py") and os.path.normpath(os.path.abspath(f)) not in shown]
    return list(files) + more


def project_facts(files: Sequence[str], native: bool, cache_dir: Optional[str] = None,
                  read: Optional[Callable[[str], bytes]] = None, unsafe: bool = False) -> ProjectFacts:
    """The star-import and graph-importer facts of `files`. `read`: the bytes of a file (an
    editor's unsaved text); None reads the disk (and may keep what it found in `cache_dir`).
    `unsafe`: the fix applies unsafe fixes (a shuffled queue pipeline then becomes `tf.data`, and
    its script eager TF2)."""
    from tfmigrate.project.class_groups import class_groups
    from tfmigrate.project.graph_imports import eager_imports, graph_importers, stateful_imports
    from tfmigrate.project.star_imports import legacy_keras_wanted, star_aliases

    # `from ops import *` of a checked module that imports tf
    star = star_aliases(files, read=read, cache_dir=cache_dir)
    # With --native a routed helper gets no `disable_v2_behavior()` (fixers.compat_route): it does
    # not make the modules it imports graph code, so the fact is not transitive there.
    importers = graph_importers(files, read=read, star=star, cache_dir=cache_dir, transitive=not native)
    stateful = stateful_imports(files, read or read_regular) if native else {}
    eager = eager_imports(files, _as_fixed(read or read_regular), stateful) if native else {}
    groups = class_groups(files, read or read_regular, star) if native else {}
    # (a group's library is rewritten with its programs as TF2 code: what it then spells `tf.X` is TF2's)
    tf1_users = {path: importer for path, importer in importers.items() if path not in groups} if native else {}
    if native:
        importers = _unless_rewritten(files, star, importers, read, stateful, eager, unsafe, groups)
    return ProjectFacts(star, importers, legacy_keras_wanted(files, star, read=read), stateful, eager, groups,
                        tf1_users)


_DIMENSION_VALUE = re.compile(rb"\.value\b|\]\s*\.\s*(?:assert_is_compatible_with|is_compatible_with|merge_with)\b")


def _as_fixed(read: Callable[[str], bytes]) -> Callable[[str], bytes]:
    """`read`, giving a module's text as `fix` leaves it where that decides whether it runs
    eagerly: TF1's `Dimension.value` (`x.get_shape()[1].value`) and its methods
    (`shape[0].assert_is_compatible_with(...)`) read as TF2 spells them (TFM111)."""
    def fixed(path: str) -> bytes:
        data = read(path)
        if not data or b"shape" not in data or not _DIMENSION_VALUE.search(data):
            return data  # (TFM111 reads a shape's `.value` or a Dimension method; other files are not parsed twice)
        from tfmigrate.core import engine

        result = engine.fix_source(data, path, ["TFM111"])
        return result.fixed if result.fixed is not None else data
    return fixed


def task(path: str, own: Settings, codes: List[str], facts: ProjectFacts, mode: str, unsafe: Optional[bool] = None,
         diff: bool = False, cache_dir: Optional[str] = None, data: Optional[bytes] = None) -> Task:
    """The task of one file: `own` its configuration, `codes` the codes it enables for the file;
    with a `cache_dir`, a cache key covering everything its findings depend on."""
    from tfmigrate.project.star_imports import cache_key as star_key

    importer = facts.importers.get(path)
    key = own.cache_key(codes) if cache_dir else ""
    if key and importer is not None:
        key += "|imported by graph code: " + importer
    if key and path in facts.star:
        key += star_key(facts.star[path])
    legacy = facts.legacy.get(path)
    if key and legacy is not None:
        key += "|legacy Keras for: " + legacy
    if key and own.native:
        key += "|native" + "".join(f"|stateful import: {m}" for m in facts.stateful.get(path, ())) + "".join(
            f"|eager import: {m}" for m in facts.eager.get(path, ()))
        if path in facts.groups:  # the group's other members' text decides this one's rewrite
            key += "|group: " + hashlib.sha256(repr(facts.groups[path]).encode("utf-8")).hexdigest()
        if path in facts.tf1_users:
            key += "|TF1 code imports it: " + facts.tf1_users[path]
    if key and own.native and (own.unsafe_fixes if unsafe is None else unsafe):
        key += "|unsafe"  # TFM216 names what holds the module after the unsafe fixes
    if key and own.native and own.keras3:
        key += "|keras3"
    if key and own.ignore_noqa:
        key += "|ignore-noqa"
    return Task(path, display_path(path), codes, mode, own.unsafe_fixes if unsafe is None else unsafe, diff,
                key=key, cache_dir=cache_dir, data=data,
                shims=file_shims(own, path, facts.star.get(path), display_path(legacy) if legacy else None,
                                 facts.stateful.get(path, ()), facts.eager.get(path, ()), facts.groups.get(path, ()),
                                 display_path(facts.tf1_users[path]) if path in facts.tf1_users else None),
                graph_importer=display_path(importer) if importer else None, max_size=own.max_file_size,
                native=own.native, keras3=own.native and own.keras3, ignore_noqa=own.ignore_noqa)


def tasks(
    files: Iterable[str],
    settings: Settings,
    mode: str,
    unsafe: Optional[bool] = None,
    diff: bool = False,
    use_cache: bool = True,
    paths: Optional[Sequence[str]] = None,
) -> List[Task]:
    """One task per file, with its own nearest configuration's codes, target, aliases and (when
    `unsafe` is None) unsafe-fixes; the cache lives in the first path's project. `paths`: what
    the files were collected from; their projects' files give the cross-file facts (context)."""
    files = list(files)
    cache_dir = str(settings.root / CACHE_DIR) if use_cache else None
    facts = project_facts(files if paths is None else context(paths, files, settings), settings.native, cache_dir,
                          unsafe=bool(settings.unsafe_fixes if unsafe is None else unsafe))
    enabled: dict = {}  # per configuration (for_path returns one Settings object per config file)
    found = []
    for path in files:
        own = settings.for_path(path)
        if id(own) not in enabled:
            enabled[id(own)] = own.codes()
        found.append(task(path, own, own.codes_for(path, enabled[id(own)]), facts, mode, unsafe, diff, cache_dir))
    return found


def _unless_rewritten(files, star, importers: dict, read=None, stateful=None, eager=None, unsafe=False,
                      groups=None) -> dict:
    """With `--native`, a graph script that `fix --native` rewrites as eager TF2 is no longer
    graph code, and the modules it imports stay eager TF2 (the compat route's alias in them would
    leave TF1 API in the rewritten program). A helper imported only by graph scripts takes the
    route, without `disable_v2_behavior()` (see fixers.compat_route)."""
    from tfmigrate.native.imported_models import STORE_LINE
    from tfmigrate.project.graph_imports import eager_scripts, graph_importers, imported

    rewritten, stores = set(), set()
    for path in files:
        if not path.endswith(".py"):
            continue
        try:
            data = (read or read_regular)(path)
            written = _rewrites(data, (stateful or {}).get(path, ()), (eager or {}).get(path, ()), unsafe,
                                (groups or {}).get(path, ())) if (
                b"Session" in data or b"placeholder" in data or b"session(" in data) else None
            if written is not None:
                rewritten.add(path)
            if written is not None and STORE_LINE in written:
                stores.add(path)
        except (OSError, UnicodeDecodeError):
            continue
    # Scripts already eager TF2 (what an earlier `fix --native` wrote) keep their helpers eager
    # as the scripts it rewrites do: else a second run, or fix's own second round, would route them.
    eager = eager_scripts([f for f in files if f not in rewritten], read or read_regular)
    if not rewritten and not eager:
        return importers
    stores |= {path for path in eager if STORE_LINE.encode() in ((read or read_regular)(path) or b"")}
    if rewritten:
        importers = graph_importers(files, read=read, star=star, exclude=rewritten)
    # A helper a rewritten script imports must stay eager TF2, even if a graph script imports it
    # too: that one reads its datasets through `tf.data.get_output_types` (fixers.compat_route).
    own = imported(sorted(rewritten) + eager, files, read or read_regular)
    kept = {path: importer for path, importer in importers.items() if path not in own}
    # ... but the modules whose model functions a rewritten script calls through its store
    # (native.imported_models) stay TF1 code: their importer is that script.
    libraries = _tf1_libraries(sorted(stores), files, stateful or {}, groups or {})
    return {**{path: importer for path, importer in libraries.items() if path not in kept}, **kept}


def _tf1_libraries(scripts: List[str], files, stateful: dict, groups: dict) -> Dict[str, str]:
    """library path -> the script, for the modules that make variables which `scripts` import, and
    those they import in turn (not a class group's: rewritten with its programs)."""
    from tfmigrate.project.graph_imports import resolve

    known = {os.path.normpath(os.path.abspath(f)): f for f in files}
    found: Dict[str, str] = {}
    todo = [(script, script) for script in scripts]
    while todo:
        path, script = todo.pop()
        for module in stateful.get(path, ()):
            target = resolve(module, path, known)
            if target is not None and target not in found and target not in groups and target not in scripts:
                found[target] = script
                todo.append((target, script))
    return found


@functools.lru_cache(maxsize=64)
def _rewrites(data: bytes, stateful: tuple = (), eager: tuple = (), unsafe: bool = False,
              group: tuple = ()) -> Optional[str]:
    """What `fix --native` rewrites this script as (None: it does not); remembered, as an editor
    asks again at every keystroke for the workspace's unchanged files."""
    from tfmigrate.native import rewrite

    return rewrite(data.decode("utf-8"), stateful, eager, unsafe, group=group).code


def file_shims(settings: Settings, path: str, star=None, legacy_keras_for: Optional[str] = None,
               stateful: tuple = (), eager: tuple = (), group: tuple = (), tf1_user: Optional[str] = None):
    """The configured re-exports of TensorFlow, with this file's module name, what its star
    imports bring in (a star_imports.StarFact), and the module that wants legacy Keras from it
    (star_imports.legacy_keras_wanted); None if none of them."""
    if not settings.tensorflow_aliases and star is None and legacy_keras_for is None and not stateful and not eager \
            and not group and tf1_user is None:
        return None
    from tfmigrate.facts.project_imports import ProjectImports, module_name

    modules, program = star if star is not None else ((), ())
    if not settings.tensorflow_aliases:
        return ProjectImports(star=modules, star_program=program, legacy_keras_for=legacy_keras_for,
                              stateful=tuple(stateful), eager=tuple(eager), group=tuple(group), tf1_user=tf1_user)
    module, is_package = module_name(path)
    return ProjectImports(tuple(sorted(settings.tensorflow_aliases.items())), module, is_package, modules, program,
                          legacy_keras_for, tuple(stateful), tuple(eager), tuple(group), tf1_user)
