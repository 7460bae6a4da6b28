"""Library modules whose classes build graph state, with every checked module that imports them
(issue 21: across files, all or nothing).

A `models.py` defining a model class and the `train.py` that builds it and runs it in a Session
are one program: `fix --native` rewrites them together (native.groups) or leaves them all on the
compat route. Gathered up front from the bytes, by word matches (no parse), like graph_imports:
the group travels with each member's task, sources included, so that every member's rewrite is a
function of the same text.
"""
from __future__ import annotations

import os
import re
from typing import Dict, Iterable, Optional, Tuple

from tfmigrate.project.graph_imports import MAKES_STATE, TF_IMPORT, imported_modules, resolve

_CLASS = re.compile(rb"^class[ \t]+\w+", re.MULTILINE)
_CLASS_NAME = re.compile(rb"^class[ \t]+(\w+)", re.MULTILINE)
_SESSION = re.compile(rb"\bSession\s*\(")

# (member path, library path, library source, ((user path, module as written, user source), ...),
#  the checked stateful modules the library imports, as written)
Group = Tuple[str, str, str, Tuple[Tuple[str, str, str], ...], Tuple[str, ...]]


def class_groups(files: Iterable[str], read, star: Optional[dict] = None) -> Dict[str, Group]:
    """path -> its group: a library module (TensorFlow imported, a top-level class, something that
    makes variables or placeholders, no Session of its own) and the checked modules importing it,
    at least one of which opens a Session; a test file naming none of its classes is not one (it
    tests the library's functions on its own route). A module importing two such libraries is in none.
    `star`: path -> its project.star_imports.StarFact; a module whose `tf` arrives through
    `from layers import *` of a checked module (gcn's `models.py`) imports TensorFlow too."""
    files = [f for f in files if f.endswith(".py")]
    known = {os.path.normpath(os.path.abspath(f)): f for f in files}
    data = {f: read(f) or b"" for f in files}
    libraries = {f for f, text in data.items() if (TF_IMPORT.search(text) or _star_tensorflow((star or {}).get(f)))
                 and _CLASS.search(text) and MAKES_STATE.search(text) and not _SESSION.search(text)}
    if not libraries:
        return {}
    users: Dict[str, list] = {}
    seen: Dict[str, list] = {}
    for path, text in data.items():
        for module in imported_modules(text):
            target = resolve(module, path, known)
            if target in libraries and target != path and not _tests_functions_only(text, data[target]):
                users.setdefault(target, []).append((path, module))
                seen.setdefault(path, []).append(target)
    found: Dict[str, Group] = {}
    for library, members in users.items():
        if not any(_SESSION.search(data[user]) for user, _ in members):
            continue
        if any(len(set(seen[user])) > 1 for user, _ in members) or any(user in libraries for user, _ in members):
            continue
        stateful = tuple(sorted({m for m in imported_modules(data[library])
                                 if (t := resolve(m, library, known)) is not None and t != library
                                 and MAKES_STATE.search(data.get(t, b""))}))
        entries = tuple(sorted((user, module, _text(data[user])) for user, module in members))
        for member in [library] + [user for user, _ in members]:
            found[member] = (member, library, _text(data[library]), entries, stateful)
    return found


def _tests_functions_only(text: bytes, library: bytes) -> bool:
    """A test file that names none of the library's classes: it tests the library's functions
    (the test route, native.test_files), not what the group rewrites."""
    if b"TestCase" not in text:
        return False
    classes = [m.group(1) for m in _CLASS_NAME.finditer(library)]
    return not any(re.search(rb"\b" + name + rb"\b", text) for name in classes)


def _star_tensorflow(fact) -> bool:
    """Whether a module's star imports of checked modules bind TensorFlow itself (`tf`)."""
    return fact is not None and any(full in ("tensorflow", "tensorflow.compat.v1")
                                    for _, names in fact.modules for _, full in names)


def _text(data: bytes) -> str:
    return data.decode("utf-8", "replace")
