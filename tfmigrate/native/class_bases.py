"""A graph class's base class of the same module, read as part of it (issue 21): the course shape

    class Model(object):                      class ClassifierModel(object):
        def add_placeholders(self):               def train_on_batch(self, sess, x, y): ...
            raise NotImplementedError(...)        def build(self): ...
        def train_on_batch(self, sess, x, y): ->  def __init__(self, config): ...
        def build(self): ...                      def add_placeholders(self): ...
    class ClassifierModel(Model):
        def __init__(self, config): ...

The class route (native.classes) rewrites one class into a `tf.Module`; a base class whose
methods build or run its graph would stay TF1. When the base has that one subclass and is named
nowhere else, its methods that the subclass does not override are moved into it, and the base
goes: the program is the same. Anything else (`super()`, a second subclass, a base of the base,
the base used as a value) leaves the module as it is.
"""
from __future__ import annotations

from typing import Callable, Dict, List, Optional, Tuple

import libcst as cst

from tfmigrate.native.class_facts import is_docstring, subtree
from tfmigrate.native.syntax import code, names_assigned


def merged(module: cst.Module, line_of: Callable) -> Tuple[cst.Module, Callable]:
    """`module` with each such base joined into its subclass, and the line of each class's nodes
    (the joined class at the subclass's line)."""
    classes = {s.name.value: s for s in module.body if isinstance(s, cst.ClassDef)}
    joined: Dict[str, cst.ClassDef] = {}  # subclass name -> the class written
    gone: set = set()
    for name, cls in classes.items():
        base = _only_base(cls, classes)
        if base is None or base.name.value in gone or name in gone:
            continue
        if not _named_once(module, base.name.value) or _uses_super(cls) or _uses_super(base):
            continue
        joined[name] = _join(base, cls)
        gone.add(base.name.value)
    if not joined:
        return module, line_of
    lines = {id(joined[name]): line_of(classes[name]) for name in joined}
    body = [joined.get(s.name.value, s) if isinstance(s, cst.ClassDef) else s for s in module.body
            if not (isinstance(s, cst.ClassDef) and s.name.value in gone)]
    return module.with_changes(body=body), lambda node: lines.get(id(node)) or line_of(node)


def _only_base(cls: cst.ClassDef, classes: Dict[str, cst.ClassDef]) -> Optional[cst.ClassDef]:
    """The base of `cls` when it is one class of the module, itself on `object` alone, undecorated."""
    if cls.decorators or cls.keywords or len(cls.bases) != 1 or not isinstance(cls.bases[0].value, cst.Name):
        return None
    base = classes.get(cls.bases[0].value.value)
    if base is None or base is cls or base.decorators or base.keywords \
            or any(code(b.value) != "object" for b in base.bases):
        return None
    return base


def _named_once(module: cst.Module, name: str) -> bool:
    """Whether the base's name occurs once outside its own `class` line: as the one subclass's base."""
    return sum(isinstance(n, cst.Name) and n.value == name for n in subtree(module)) == 2


def _uses_super(cls: cst.ClassDef) -> bool:
    return any(isinstance(n, cst.Name) and n.value in ("super", "__class__") for n in subtree(cls.body))


def _join(base: cst.ClassDef, cls: cst.ClassDef) -> cst.ClassDef:
    """`cls` on `object`, the base's members it does not override first (its docstring kept)."""
    own = set()
    for statement in cls.body.body:
        if isinstance(statement, (cst.FunctionDef, cst.ClassDef)):
            own.add(statement.name.value)
        elif not is_docstring(statement):
            own |= names_assigned(statement)
    members: List[cst.BaseStatement] = []
    body = list(cls.body.body)
    if body and is_docstring(body[0]):
        members.append(body.pop(0))
    for statement in base.body.body:
        if is_docstring(statement):
            continue
        if isinstance(statement, (cst.FunctionDef, cst.ClassDef)):
            if statement.name.value in own:
                continue
        elif names_assigned(statement) & own:
            continue
        members.append(statement)
    members += body
    blank = cst.EmptyLine(indent=False)
    members = [m.with_changes(leading_lines=[] if i == 0 else [blank]) if isinstance(m, (cst.FunctionDef, cst.ClassDef))
               and (i == 0 or not any(isinstance(line, cst.EmptyLine) and line.comment is None for line in m.leading_lines))
               else m for i, m in enumerate(members)]
    return cls.with_changes(bases=[cst.Arg(cst.Name("object"))], body=cls.body.with_changes(body=members))
