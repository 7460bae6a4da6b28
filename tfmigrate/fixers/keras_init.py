"""Building a layer once in `__init__` of a Keras class instead of where it is called (TFM101's
functional layers, TFM107's layers built in `call`): what each class holds (`ClassInfo`: its
`__init__`, the `self.X` it sets and reads), its same-file bases, whether the constructor's
arguments can be evaluated in `__init__`, and an attribute name nothing uses. Each rule keeps its
own `ClassBook` per file (the names it gives out in a pass are its own)."""
from __future__ import annotations

from collections import Counter
from typing import Dict, Optional, Set

import libcst as cst

from tfmigrate.fixers import layers as fx
from tfmigrate.facts.functions import bound_names, local_names
from tfmigrate.facts.keras_classes import KerasClasses

# Loops and comprehensions: a layer built inside one is built once per iteration.
REPEATING = (cst.For, cst.While, cst.ListComp, cst.SetComp, cst.DictComp, cst.GeneratorExp)


class ConstructorReads(cst.CSTVisitor):
    """Free names an expression reads, and the `self.X` attributes it reads."""

    def __init__(self, self_name: str):
        self.self_name = self_name
        self.names: Set[str] = set()
        self.attrs: Set[str] = set()
        self.bound: Set[str] = set()

    def visit_Attribute(self, node):
        if isinstance(node.value, cst.Name) and node.value.value == self.self_name:
            self.attrs.add(node.attr.value)
        else:
            node.value.visit(self)
        return False

    def visit_Arg(self, node):
        node.value.visit(self)
        return False

    def visit_Lambda(self, node):
        self.bound.update(p.name.value for p in node.params.params)
        node.body.visit(self)
        return False

    def _comprehension(self, node):
        comp = node.for_in
        while comp is not None:
            bound_names(comp.target, self.bound)
            comp = comp.inner_for_in

    visit_ListComp = visit_SetComp = visit_DictComp = visit_GeneratorExp = _comprehension

    def visit_Name(self, node):
        if node.value not in self.bound:
            self.names.add(node.value)


def self_param(func: cst.FunctionDef) -> Optional[str]:
    params = [*func.params.posonly_params, *func.params.params]
    return params[0].name.value if params else None


def takes_positional(init: Optional[cst.FunctionDef]) -> bool:
    """Whether an `__init__` accepts positional arguments besides `self`."""
    if init is None:
        return False
    params = init.params
    return len(params.posonly_params) + len(params.params) > 1 or isinstance(params.star_arg, cst.Param)


class ClassInfo:
    """What a Keras class already holds: its `__init__`, the `self.X` it sets and reads."""

    def __init__(self, classdef: cst.ClassDef):
        self.classdef = classdef
        body = classdef.body.body if isinstance(classdef.body, cst.IndentedBlock) else []
        self.defs = [s for s in body if isinstance(s, cst.FunctionDef)]
        self.init = next((d for d in self.defs if d.name.value == "__init__"), None)
        self.class_names: Set[str] = set()
        for stmt in body:
            if isinstance(stmt, (cst.FunctionDef, cst.ClassDef)):
                self.class_names.add(stmt.name.value)
            elif isinstance(stmt, cst.SimpleStatementLine):
                for small in stmt.body:
                    for target in getattr(small, "targets", ()):
                        bound_names(target.target, self.class_names)
                    if isinstance(small, cst.AnnAssign):
                        bound_names(small.target, self.class_names)
        self.init_attrs = _self_stores(self.init) if self.init is not None else set()
        self.calls = _self_reads(classdef)  # attribute -> how often `self.X` is read
        self.used = set(self.class_names) | set(self.calls)
        self.taken: Set[str] = set()  # attribute names given out in this pass


def _self_stores(func: cst.FunctionDef) -> Set[str]:
    self_name = self_param(func)
    out: Set[str] = set()

    class V(cst.CSTVisitor):
        def visit_AssignTarget(self, node):
            t = node.target
            if isinstance(t, cst.Attribute) and isinstance(t.value, cst.Name) and t.value.value == self_name:
                out.add(t.attr.value)

    func.visit(V())
    return out


def _self_reads(classdef: cst.ClassDef) -> Counter:
    out: Counter = Counter()

    class V(cst.CSTVisitor):
        def visit_Attribute(self, node):
            if isinstance(node.value, cst.Name) and node.value.value == "self":
                out[node.attr.value] += 1

    classdef.visit(V())
    return out

class ClassBook:
    """Per rule and file: the classes' `ClassInfo`, by class."""

    def __init__(self, ctx):
        self.ctx = ctx
        self._info: Dict[int, ClassInfo] = {}

    def is_keras(self, classdef: cst.ClassDef) -> bool:
        return self.ctx.fact(KerasClasses).kind(classdef) is not None

    def ancestors(self, classdef: cst.ClassDef):
        """The class and its same-file base classes."""
        out, todo = [], [classdef]
        while todo:
            cls = todo.pop()
            if cls in out:
                continue
            out.append(cls)
            for base in cls.bases:
                if isinstance(base.value, cst.Name):
                    parent = self.ctx.fact(KerasClasses).classes.get(base.value.value)
                    if parent is not None:
                        todo.append(parent)
        return out

    def class_info(self, classdef: cst.ClassDef) -> ClassInfo:
        if id(classdef) not in self._info:
            self._info[id(classdef)] = ClassInfo(classdef)
        return self._info[id(classdef)]


    def unavailable_in_init(self, classdef, method, info, reads, init_self, self_name):
        """Why the names a layer's constructor reads cannot be evaluated in `__init__` (a local
        of the method or of `__init__`, an attribute nothing sets), or None when they can."""
        shadowed = local_names(method) | (local_names(info.init) if info.init else set())
        for name in sorted(reads.names):
            if name in shadowed:
                where = method.name.value if name in local_names(method) else "__init__"
                return f"`{name}` is a local name of `{where}`, not available in `__init__`"
        known = set(fx.KERAS_ATTRIBUTES)
        for cls in self.ancestors(classdef):
            sub = self.class_info(cls)
            known |= sub.init_attrs | sub.class_names
        for attr in sorted(reads.attrs):
            if attr not in known:
                return f"`{self_name}.{attr}` is not set in `__init__`"
        if reads.attrs and init_self != self_name:
            return f"`__init__` calls its first argument `{init_self}`, not `{self_name}`"
        return None

    def attribute_name(self, info: ClassInfo, base: str, inherited: Set[str]) -> str:
        """`base`, else `base_1`, ...: unused by the class, its bases, Keras and this pass."""
        taken = info.used | inherited | info.taken | fx.KERAS_ATTRIBUTES
        candidate, n = base, 0
        while candidate in taken:
            n += 1
            candidate = f"{base}_{n}"
        info.taken.add(candidate)
        return candidate
