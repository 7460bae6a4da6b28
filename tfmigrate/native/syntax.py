"""Syntax helpers of the native rewrite: a node's code, the names it reads and assigns, a call's
arguments by parameter. Knows nothing of scripts, so every native module may use it.
"""
from __future__ import annotations

from typing import Dict, List, Sequence, Set, Tuple

import libcst as cst

from tfmigrate.facts.names import dotted


def code(node: cst.CSTNode) -> str:
    return cst.Module([]).code_for_node(node)


def names_read(node: cst.CSTNode) -> Set[str]:
    """Every Name loaded in `node` (attribute names and keywords excluded)."""
    return set(names_in(node))


def name_counts(node: cst.CSTNode) -> Dict[str, int]:
    """How often each name occurs in `node`, attribute names and keywords included: a rewrite that
    needs a name "read nowhere else" errs on the side of leaving it."""
    counts: Dict[str, int] = {}

    class _Names(cst.CSTVisitor):
        def visit_Name(self, name: cst.Name) -> None:
            counts[name.value] = counts.get(name.value, 0) + 1

    node.visit(_Names())
    return counts


def names_in(node: cst.CSTNode) -> List[str]:
    """Each Name in `node`, as often as it occurs (attribute names and keywords excluded)."""
    return [name.value for name in name_nodes(node)]


def name_nodes(node: cst.CSTNode) -> List[cst.Name]:
    """The Name nodes `names_in` counts, in order (remembered like `found_in`)."""
    return _remembered(node, "names", _name_nodes)


def _name_nodes(node: cst.CSTNode) -> List[cst.Name]:
    found: List[cst.Name] = []

    class _Reads(cst.CSTVisitor):
        def visit_Attribute(self, attr: cst.Attribute) -> bool:
            attr.value.visit(self)
            return False

        def visit_Arg(self, arg: cst.Arg) -> bool:
            arg.value.visit(self)
            return False

        def visit_Name(self, name: cst.Name) -> None:
            found.append(name)

    node.visit(_Reads())
    return found


def calls_in(node: cst.CSTNode) -> List[cst.Call]:
    """Every call under `node`, outermost first."""
    return found_in(node, "visit_Call")


def functions_in(node: cst.CSTNode) -> List[cst.FunctionDef]:
    """Every `def` under `node`, nested ones too."""
    return found_in(node, "visit_FunctionDef")


def assignments_in(node: cst.CSTNode) -> List[cst.Assign]:
    """Every `a = b` under `node`, in source order."""
    return found_in(node, "visit_Assign")


class NotALine(ValueError):
    """`line_around` finds no statement line of `call`'s own: `nested` under a lambda, a
    comprehension or a nested def (evaluated otherwise than once, where it is written), else in a
    condition or a `with` item."""

    def __init__(self, nested: bool):
        super().__init__("nested" if nested else "not a line")
        self.nested = nested


def line_around(function: cst.FunctionDef, call: cst.Call) -> cst.SimpleStatementLine:
    """The innermost statement line of `function` around `call` (this very node); NotALine."""
    found: List[cst.SimpleStatementLine] = []
    stack: List[cst.CSTNode] = []

    class _Find(cst.CSTVisitor):
        def on_visit(self, node) -> bool:
            if node is call:
                if any(isinstance(n, (cst.Lambda, cst.ListComp, cst.DictComp, cst.SetComp, cst.GeneratorExp))
                       for n in stack) or any(isinstance(n, cst.FunctionDef) for n in stack[1:]):
                    raise NotALine(nested=True)
                found.extend(n for n in reversed(stack) if isinstance(n, cst.SimpleStatementLine))
                return False
            stack.append(node)
            return True

        def on_leave(self, node) -> None:
            if stack and stack[-1] is node:
                stack.pop()

    function.visit(_Find())
    if not found:
        raise NotALine(nested=False)
    return found[0]


def holds(outer: cst.CSTNode, node: cst.CSTNode) -> bool:
    """`node` (this very node, not an equal one) is under `outer`, or is `outer`."""
    found = []

    class _Find(cst.CSTVisitor):
        def on_visit(self, each) -> bool:
            if each is node:
                found.append(each)
            return not found

    outer.visit(_Find())
    return bool(found)


def self_attribute(node: cst.CSTNode) -> bool:
    """`self.x`."""
    return isinstance(node, cst.Attribute) and isinstance(node.value, cst.Name) and node.value.value == "self"


def tensor_spec(bound: Dict[str, cst.BaseExpression], tf: str, named: bool = False) -> str:
    """`tf.TensorSpec(shape, dtype)` of a placeholder's arguments by parameter (`bind`), or the spec
    itself where they are read from one (`spec.shape`, `spec.dtype`: native.setup_graphs)."""
    shape = code(bound["shape"]) if "shape" in bound else "None"
    dtype = code(bound["dtype"])
    if shape.endswith(".shape") and dtype.endswith(".dtype") and shape[:-6] == dtype[:-6] and not named:
        return shape[:-6]
    name = f", name={code(bound['name'])}" if named and "name" in bound else ""
    return f"{tf}.TensorSpec({shape}, {dtype}{name})"


_FOUND: Dict[Tuple[int, str], Tuple[cst.CSTNode, list]] = {}
_FOUND_MAX = 20000  # (entries; the cache is emptied when full)


def found_in(node: cst.CSTNode, visit: str) -> list:
    """Every node under `node` that the visitor method named `visit` (`"visit_For"`) would see.
    Remembered by the node's identity (libcst nodes never change; the rewrite asks the same
    method for its calls many times): a copy of the list, so callers may change theirs."""
    def walk(under: cst.CSTNode) -> list:
        found: list = []
        under.visit(_visitor(visit)(found))
        return found

    return _remembered(node, visit, walk)


def _remembered(node: cst.CSTNode, kind: str, compute) -> list:
    """`compute(node)`, once per node and kind: a copy each time (the node is held, so its id
    names no other node while remembered)."""
    key = (id(node), kind)
    held = _FOUND.get(key)
    if held is None or held[0] is not node:
        if len(_FOUND) >= _FOUND_MAX:
            _FOUND.clear()
        held = _FOUND[key] = (node, compute(node))
    return list(held[1])


def forget_found() -> None:
    """Empties what `found_in` and `name_nodes` remember (the nodes of the module done before)."""
    _FOUND.clear()


_VISITORS: Dict[str, type] = {}


def _visitor(visit: str) -> type:
    kind = _VISITORS.get(visit)
    if kind is None:
        def __init__(self, found: list) -> None:
            cst.CSTVisitor.__init__(self)
            self.found = found

        kind = _VISITORS[visit] = type("Found", (cst.CSTVisitor,), {
            "__init__": __init__, visit: lambda self, each: self.found.append(each)})
    return kind


def names_assigned(node: cst.CSTNode) -> Set[str]:
    found: Set[str] = set()

    class _Writes(cst.CSTVisitor):
        def _targets(self, target) -> None:
            if isinstance(target, cst.Name):
                found.add(target.value)
            elif isinstance(target, (cst.Tuple, cst.List)):
                for element in target.elements:
                    self._targets(element.value)
            elif isinstance(target, cst.StarredElement):
                self._targets(target.value)

        def _target_of(self, node) -> None:
            self._targets(node.target)

        visit_AssignTarget = visit_AugAssign = visit_AnnAssign = visit_For = visit_CompFor = _target_of

        def visit_WithItem(self, node) -> None:
            if node.asname is not None:
                self._targets(node.asname.name)

        def visit_FunctionDef(self, node) -> bool:
            found.add(node.name.value)
            return False

        def visit_ClassDef(self, node) -> bool:
            found.add(node.name.value)
            return False

        def visit_Import(self, node) -> None:
            for alias in node.names:
                found.add(alias.evaluated_alias or dotted(alias.name).split(".")[0])

        def visit_ImportFrom(self, node) -> None:
            if not isinstance(node.names, cst.ImportStar):
                for alias in node.names:
                    found.add(alias.evaluated_alias or alias.evaluated_name)

    node.visit(_Writes())
    return found


def fresh_name(taken: Set[str], preferred: str) -> str:
    """`preferred`, or `preferred_2`, `preferred_3`, ... : the first not in `taken`, which it joins
    (names the rewrite adds never shadow the user's)."""
    name, n = preferred, 2
    while name in taken:
        name, n = f"{preferred}_{n}", n + 1
    taken.add(name)
    return name


def bind(call: cst.Call, params: Sequence[str]) -> Dict[str, cst.BaseExpression]:
    """The call's arguments by parameter name (raises KeyError-free ValueError on `*args`)."""
    bound: Dict[str, cst.BaseExpression] = {}
    for index, arg in enumerate(call.args):
        if arg.star:
            raise ValueError("`*args` hides the arguments")
        key = arg.keyword.value if arg.keyword is not None else (params[index] if index < len(params) else None)
        if key is None:
            raise ValueError("too many positional arguments")
        bound[key] = arg.value
    return bound


def returns_structure(function: cst.FunctionDef) -> bool:
    """Whether `function` returns a list, tuple or dict (a literal, or a local name bound to one):
    `sess.run` of its result gave that structure of numpy values, not one value."""
    bound = {name for assign in assignments_in(function) for name in names_assigned(assign)
             if isinstance(assign.value, (cst.List, cst.Tuple, cst.Dict, cst.ListComp))}
    returns = found_in(function, "visit_Return")
    return any(isinstance(r.value, (cst.List, cst.Tuple, cst.Dict, cst.ListComp))
               or (isinstance(r.value, cst.Name) and r.value.value in bound) for r in returns)


def bound_names(node: cst.CSTNode) -> List[cst.Name]:
    """The names `node` binds (assignments, loops, `with ... as`, augmented assignments, globals)."""
    found: List[cst.Name] = []

    class _Targets(cst.CSTVisitor):
        def visit_AssignTarget(self, target) -> None:
            found.extend(n for n in target_names(target.target))

        def visit_AugAssign(self, node) -> None:
            found.extend(target_names(node.target))

        def visit_AnnAssign(self, node) -> None:
            found.extend(target_names(node.target))

        def visit_For(self, node) -> None:
            found.extend(target_names(node.target))

        def visit_AsName(self, node) -> None:
            found.extend(target_names(node.name))

        def visit_Global(self, node) -> None:
            found.extend(item.name for item in node.names)

        def visit_NamedExpr(self, node) -> None:
            found.extend(target_names(node.target))

    node.visit(_Targets())
    return found


def target_names(target: cst.BaseExpression) -> List[cst.Name]:
    """Names an assignment target binds (`a`, `a, b`, `*b`); unlike facts.functions.target_names,
    `d["k"] = v` binds nothing (it changes `d`; the seed count asks which names are bound anew)."""
    if isinstance(target, cst.Name):
        return [target]
    if isinstance(target, (cst.Tuple, cst.List)):
        return [n for element in target.elements for n in target_names(element.value)]
    if isinstance(target, cst.StarredElement):
        return target_names(target.value)
    return []
