"""Which function a name calls, per module, without scope metadata: the defs by scope and name
(`FunctionTable`, filled during the walk), resolved for `fn`, `self.fn` / `cls.fn` and
`partial(fn, ...)`; the parameters of a `Dataset.map` function that receive the element; the
names a target or a function binds (`local_names`). Shared by the traced-functions fact (tfmigrate.facts.traced,
which TFM104, TFM106, TFM107 and TFM108 read) and the rules that ask about function bodies.
"""
from __future__ import annotations

from typing import Dict, FrozenSet, List, Optional, Set, Tuple

import libcst as cst

from tfmigrate.facts.names import dotted

SCOPES = (cst.FunctionDef, cst.ClassDef)


def positional(params: cst.Parameters) -> List[cst.Param]:
    return [*params.posonly_params, *params.params]


def element_params(params: cst.Parameters, skip: int, bound: FrozenSet[str]) -> Set[str]:
    """Parameters that receive the dataset element: the free ones without a default."""
    free = [p for p in positional(params)[skip:] if p.name.value not in bound]
    names = {p.name.value for p in free if p.default is None}
    if not names and free:
        names.add(free[0].name.value)
    if isinstance(params.star_arg, cst.Param):
        names.add(params.star_arg.name.value)
    return names


def is_static(fdef: cst.FunctionDef) -> bool:
    return any(dotted(d.decorator) == "staticmethod" for d in fdef.decorators)


def target_names(target) -> List[cst.Name]:
    """Names bound by an assignment target (`a`, `a, b`, `[a, *b]`); `d["k"]` binds `d`."""
    if isinstance(target, cst.Name):
        return [target]
    if isinstance(target, (cst.Tuple, cst.List)):
        return [n for e in target.elements for n in target_names(e.value)]
    if isinstance(target, cst.StarredElement):
        return target_names(target.value)
    if isinstance(target, cst.Subscript):
        return target_names(target.value)
    return []


class FunctionTable:
    """The module's defs by (id of the enclosing def or class, or 0, name): `add` each def as
    the walk meets it (`ctx.stack` holds its ancestors), `resolve` after the walk."""

    def __init__(self, ctx):
        self.ctx = ctx
        self.defs: Dict[Tuple[int, str], cst.FunctionDef] = {}

    def add(self, node: cst.FunctionDef) -> None:
        owner = self.ctx.enclosing(SCOPES)
        self.defs[(id(owner) if owner is not None else 0, node.name.value)] = node

    # --- which function `map` calls ----------------------------------------------------------
    def lookup(self, name: str, chain) -> Optional[cst.FunctionDef]:
        for scope in reversed(chain):
            if isinstance(scope, cst.FunctionDef):
                params = scope.params
                if name in {p.name.value for p in [*positional(params), *params.kwonly_params]}:
                    return None
                found = self.defs.get((id(scope), name))
                if found is not None:
                    return found
        return self.defs.get((0, name))

    def is_partial(self, func) -> bool:
        name = dotted(func)
        return name == "functools.partial" or (name == "partial" and "partial" in self.ctx.names.bound)

    def resolve(self, expr, chain) -> Optional[Tuple[cst.FunctionDef, int, FrozenSet[str]]]:
        """The def behind `fn`, `self.fn` or `partial(fn, ...)`, with the params bound already."""
        if isinstance(expr, cst.Call) and self.is_partial(expr.func) and expr.args:
            first, rest = expr.args[0], expr.args[1:]
            if first.keyword is not None or first.star or any(a.star for a in rest):
                return None
            inner = self.resolve(first.value, chain)
            if inner is None:
                return None
            fdef, skip, bound = inner
            skip += sum(1 for a in rest if a.keyword is None)
            return fdef, skip, bound | {a.keyword.value for a in rest if a.keyword is not None}
        if isinstance(expr, cst.Name):
            fdef = self.lookup(expr.value, chain)
            return None if fdef is None else (fdef, 0, frozenset())
        if isinstance(expr, cst.Attribute) and isinstance(expr.value, cst.Name) and expr.value.value in ("self", "cls"):
            cls = next((s for s in reversed(chain) if isinstance(s, cst.ClassDef)), None)
            fdef = None if cls is None else self.defs.get((id(cls), expr.attr.value))
            return None if fdef is None else (fdef, 0 if is_static(fdef) else 1, frozenset())
        return None


def bound_names(node, out: Set[str]) -> None:
    """Add the names `node`, an assignment or loop target, binds (`a`, `a, b`, `[a, *b]`)."""
    if isinstance(node, cst.Name):
        out.add(node.value)
    elif isinstance(node, (cst.Tuple, cst.List)):
        for element in node.elements:
            bound_names(element.value, out)
    elif isinstance(node, cst.StarredElement):
        bound_names(node.value, out)


class _Locals(cst.CSTVisitor):
    """Names a function binds locally: its parameters and every store in its own scope."""

    def __init__(self):
        self.names: Set[str] = set()
        self.globals: Set[str] = set()

    def visit_Param(self, node):
        self.names.add(node.name.value)
        return False

    def visit_FunctionDef(self, node):
        self.names.add(node.name.value)
        return False

    visit_ClassDef = visit_FunctionDef

    def visit_Lambda(self, node):
        return False

    def _comprehension(self, node):
        return False

    visit_ListComp = visit_SetComp = visit_DictComp = visit_GeneratorExp = _comprehension

    def visit_AssignTarget(self, node):
        bound_names(node.target, self.names)

    def visit_AnnAssign(self, node):
        bound_names(node.target, self.names)

    def visit_AugAssign(self, node):
        bound_names(node.target, self.names)

    def visit_For(self, node):
        bound_names(node.target, self.names)

    def visit_AsName(self, node):
        bound_names(node.name, self.names)

    def visit_NamedExpr(self, node):
        bound_names(node.target, self.names)

    def visit_Import(self, node):
        for alias in node.names:
            if alias.asname is None:
                self.names.add(head_name(alias.name))

    def visit_ImportFrom(self, node):
        if not isinstance(node.names, cst.ImportStar):
            for alias in node.names:
                if alias.asname is None and isinstance(alias.name, cst.Name):
                    self.names.add(alias.name.value)

    def visit_Global(self, node):
        self.globals.update(item.name.value for item in node.names)

    visit_Nonlocal = visit_Global


def head_name(node) -> str:
    """`a` of `a.b.c`; "" when it does not start with a name."""
    while isinstance(node, cst.Attribute):
        node = node.value
    return node.value if isinstance(node, cst.Name) else ""


def local_names(func: cst.FunctionDef) -> Set[str]:
    """Names `func` binds locally (parameters, stores, imports), less its `global`/`nonlocal` names."""
    visitor = _Locals()
    func.params.visit(visitor)
    func.body.visit(visitor)
    return visitor.names - visitor.globals
