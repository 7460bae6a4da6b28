"""A library module's graph classes rewritten together with the programs that use them (issue 21:
across files, all or nothing).

    models.py: class Net: (graph built in __init__)     models.py: class Net(tf.Module): ...
    train.py:  from models import Net               ->  train.py:  from models import Net
               net = Net(); sess.run(net.train_op...)              net = Net(); net.train_step(...)

The class route (native.classes) reads a class and the runs of its program in one module. Each
user is therefore read as the library followed by the user (its import of the library held by a
placeholder statement), rewritten once, and cut back into its two files. Every user must rewrite,
and into the same library module, or none does: the group keeps the compat route and the blocker
names the file and the construct that held it (project.class_groups gathers the group).
"""
from __future__ import annotations

from functools import lru_cache
from typing import Dict, List, Optional, Tuple

import libcst as cst
import libcst.matchers as m

from tfmigrate.facts.program import LEGACY_KERAS_LINE
from tfmigrate.native.script import Blocker
from tfmigrate.native.syntax import bound_names, code, name_counts, name_nodes, names_assigned, names_read, target_names

SPLIT = "__tfmigrate_group_split__ = None"
_KEEP = "__tfmigrate_group_keep_{}__ = None"
_LEGACY = LEGACY_KERAS_LINE


class GroupOutcome:
    """Each member's rewritten text (path -> code), or the blocker of the whole group, with its file."""

    def __init__(self, codes: Optional[Dict[str, str]] = None, path: str = "", blocker: Optional[Blocker] = None):
        self.codes, self.path, self.blocker = codes, path, blocker


def member_outcome(source: str, group: tuple, rewrite, unsafe: bool = False) -> Tuple[Optional[str], Optional[Blocker]]:
    """(code, None) or (None, blocker) of the group's member whose text is `source` (its stored text
    replaced by it: an editor's, or a later fix pass's); `rewrite`: native.rewrite, for one module."""
    member, library, library_source, users, stateful = group
    if member == library:
        library_source = source
    else:
        users = tuple((path, module, source if path == member else text) for path, module, text in users)
    outcome = rewrite_group(library, library_source, users, stateful, rewrite, unsafe)
    if outcome.codes is None:
        blocker = outcome.blocker
        if outcome.path != member:
            blocker = Blocker(1, f"a module of a group that `fix --native` rewrites together or not at all (the "
                                 f"library `{library}` and the programs importing it); `{outcome.path}` holds the "
                                 f"group on the compat route at its line {blocker.line}: {blocker.construct}")
        return None, blocker
    return outcome.codes[member], None


@lru_cache(maxsize=16)
def rewrite_group(library: str, library_source: str, users: tuple, stateful: tuple, rewrite,
                  unsafe: bool) -> GroupOutcome:
    """All members rewritten, or the first blocker met (users in path order)."""
    if stateful:
        return GroupOutcome(None, library, Blocker(1, f"its classes use `{stateful[0]}`, a checked module that "
                                                      "makes variables, which the group's rewrite does not follow"))
    head = library_source if library_source.endswith("\n") else library_source + "\n"
    offset = head.count("\n") + 1
    codes: Dict[str, str] = {}
    for path, module, source in users:
        try:
            held, kept, qualified = _hold(cst.parse_module(source), module, library_source)
        except _Refused as why:
            return GroupOutcome(None, path, Blocker(why.line, why.construct))
        except Exception as error:  # noqa: BLE001 - an unparsable user holds the group
            return GroupOutcome(None, path, Blocker(1, f"the file does not parse ({type(error).__name__})"))
        outcome = rewrite(head + SPLIT + "\n" + held, unsafe=unsafe)
        if outcome.code is None:
            line = outcome.blocker.line
            where = (path, line - offset) if line > offset else (library, line)
            return GroupOutcome(None, where[0], Blocker(max(where[1], 1), outcome.blocker.construct))
        parts = _split(outcome.code, kept, library_source)
        if parts is None:
            return GroupOutcome(None, path, Blocker(1, "internal: the group's rewrite could not be cut back into "
                                                       "its files; please report it"))
        written, user = parts
        codes[path] = _qualified(user, *qualified) if qualified is not None else user
        if codes.setdefault(library, written) != written:
            return GroupOutcome(None, path, Blocker(1, f"its runs of the classes of `{library}` need another "
                                                       "rewrite of that module than the group's other programs"))
    return GroupOutcome(codes)


class _Refused(Exception):
    def __init__(self, line: int, construct: str):
        super().__init__(construct)
        self.line, self.construct = line, construct


def _hold(module: cst.Module, written: str, library_source: str) -> Tuple[str, List[str], Optional[tuple]]:
    """The user's text with its `from <library> import ...`, `import <library> [as lib]` and
    `from __future__` statements held by placeholder statements (the library's classes are then its
    own: `lib.Net` read as `Net`), the statements held, and for `import <library>` what
    `_qualified` needs to write `lib.Net` again: (`lib`, the library's names the user must read
    through it)."""
    kept: List[str] = []
    body = []
    local = None
    for statement in module.body:
        small = statement.body[0] if isinstance(statement, cst.SimpleStatementLine) and len(statement.body) == 1 else None
        imported = isinstance(small, cst.Import) and len(small.names) == 1 and code(small.names[0].name) == written \
            and (small.names[0].asname is not None or "." not in written)
        if imported or isinstance(small, cst.ImportFrom) and not isinstance(small.names, cst.ImportStar) and (
                "." * len(small.relative) + (code(small.module) if small.module else "")) in (written, "__future__"):
            if imported:
                if local is not None:
                    raise _Refused(1, f"it imports `{written}` twice")
                local = small.names[0].evaluated_alias or written
            kept.append(module.code_for_node(statement.with_changes(leading_lines=())))
            body.append(cst.parse_statement(_KEEP.format(len(kept) - 1) + "\n").with_changes(
                leading_lines=statement.leading_lines))
            continue
        body.append(statement)
    if not any(not text.startswith("from __future__") for text in kept):
        raise _Refused(1, f"it imports `{written}` other than as `from {written} import <names>` or `import "
                          f"{written}` at its top level")
    held = module.with_changes(body=body)
    if local is None:
        return held.code, kept, None
    names = frozenset(names_assigned(cst.parse_module(library_source)))  # (the library's top-level names)
    return _unqualified(held, local, names, written), kept, (local, names, frozenset(names_read(module)))


def _unqualified(module: cst.Module, local: str, names: frozenset, written: str) -> str:
    """`lib.Net` read as `Net` (the user's text joined after the library's, whose top-level names
    are `names`), refused where that would change what a name means: `lib` read other than as
    `lib.<name>` of the library, or a name read so that the user also spells otherwise
    (`Net = ...`, `obj.Net`, `f(Net=1)`)."""
    through = m.findall(module, m.Attribute(value=m.Name(local)))
    for attribute in through:
        if attribute.attr.value not in names:
            raise _Refused(1, f"it reads `{code(attribute)}`, which the module `{written}` does not define at its "
                              "top level")
    counts = name_counts(module)
    if counts.get(local, 0) != len(through):
        raise _Refused(1, f"it uses the module `{local}` other than as `{local}.<name>`")
    spelled: Dict[str, int] = {}
    for attribute in through:
        spelled[attribute.attr.value] = spelled.get(attribute.attr.value, 0) + 1
    for name, uses in spelled.items():
        if counts.get(name, 0) != uses:
            raise _Refused(1, f"it reads `{local}.{name}` and spells `{name}` otherwise too")

    class _Bare(cst.CSTTransformer):
        def leave_Attribute(self, original, updated):
            if m.matches(updated, m.Attribute(value=m.Name(local))):
                return cst.Name(updated.attr.value)
            return updated

    return module.visit(_Bare()).code


def _qualified(user: str, local: str, names: frozenset, read_before: frozenset) -> str:
    """The rewritten user's reads of the library's names written `lib.Net` again (`_unqualified`):
    each bare read of a name the library binds, the user does not, and the user did not read bare
    before (a builtin the library shadows stays the builtin)."""
    module = cst.parse_module(user)
    restore = names - _bound_anywhere(module) - read_before

    class _Qualified(cst.CSTTransformer):
        def __init__(self):
            self.reads = {id(n) for n in name_nodes(module) if n.value in restore}

        def leave_Name(self, original, updated):
            if id(original) in self.reads:
                return cst.Attribute(value=cst.Name(local), attr=updated)
            return updated

    return module.visit(_Qualified()).code


def _bound_anywhere(module: cst.Module) -> set:
    """Every name the module binds, in any scope (functions, parameters, comprehensions too)."""
    found = {n.value for n in bound_names(module)} | names_assigned(module)
    for node in m.findall(module, m.FunctionDef() | m.ClassDef()):
        found.add(node.name.value)
    found |= {p.name.value for p in m.findall(module, m.Param())}
    found |= {n.value for f in m.findall(module, m.CompFor()) for n in target_names(f.target)}
    return found


def _split(text: str, kept: List[str], library_source: str) -> Optional[Tuple[str, str]]:
    """The rewritten library and user, cut at the split line, the user's held statements put back
    (and TensorFlow's legacy Keras switched on before its imports, when the library's rewrite does)."""
    lines = text.splitlines(keepends=True)
    cuts = [i for i, line in enumerate(lines) if line.strip() == SPLIT]
    if len(cuts) != 1:
        return None
    library, user = "".join(lines[:cuts[0]]).rstrip("\n") + "\n", "".join(lines[cuts[0] + 1:])
    for i, statement in enumerate(kept):
        marker = _KEEP.format(i)
        if user.count(marker + "\n") != 1:
            return None
        user = user.replace(marker + "\n", statement if statement.endswith("\n") else statement + "\n", 1)
    if _LEGACY in library and _LEGACY not in user:
        user = _legacy_keras_first(user)
    if _new_names(library, library_source):
        return None
    return library, user


def _legacy_keras_first(user: str) -> str:
    """`os.environ.setdefault("TF_USE_LEGACY_KERAS", "1")` before the user's first import other
    than `from __future__`: TensorFlow reads it once, on first use of Keras."""
    lines = user.splitlines(keepends=True)
    for i, line in enumerate(lines):
        if (line.startswith("import ") or line.startswith("from ")) and not line.startswith("from __future__"):
            return "".join(lines[:i]) + "import os\n" + _LEGACY + "\n" + "".join(lines[i:])
    return user


def _new_names(library: str, original: str) -> set:
    """Top-level names the rewritten library defines that the original did not (helpers the
    rewrite put before the cut, which the user would then miss); `os` aside."""
    def defined(text: str) -> set:
        from tfmigrate.native.syntax import names_assigned

        names = set()
        for statement in cst.parse_module(text).body:
            if isinstance(statement, (cst.FunctionDef, cst.ClassDef)):
                names.add(statement.name.value)
            elif isinstance(statement, cst.SimpleStatementLine):
                names |= set(names_assigned(statement))
        return names

    return defined(library) - defined(original) - {"os"}
