"""Reading libcst trees fast: which fields of a node class hold children, and which types are
nodes. libcst's nodes derive from an ABC, so `isinstance(x, cst.CSTNode)` goes through
`ABCMeta.__instancecheck__`; on paths that see every node the answers are remembered per type.
"""
from __future__ import annotations

import dataclasses
from typing import Any, Dict, List, Optional, Tuple

import libcst as cst

# Fields that hold only formatting (whitespace, parentheses, commas): no rule looks at them.
_FORMATTING = frozenset(
    """lpar rpar comma dot semicolon equal colon leading_lines lines_after_decorators header
    footer newline trailing_whitespace indent""".split()
)
# Fields in source order where the dataclass order differs.
_ORDER = {
    cst.FunctionDef: ("decorators", "name", "type_parameters", "params", "returns", "body"),
    cst.ClassDef: ("decorators", "name", "type_parameters", "bases", "keywords", "body"),
    cst.IfExp: ("body", "test", "orelse"),
}
_CHILD_FIELDS: Dict[type, Tuple[str, ...]] = {}
_ALL_FIELDS: Dict[type, Tuple[str, ...]] = {}
_EXACT: Dict[Any, Any] = {}

# type -> whether it is a CSTNode subclass; read directly by the engine's walk.
NODE_TYPES: Dict[type, bool] = {}


def is_node_type(kind: type) -> bool:
    """issubclass(kind, CSTNode), remembered."""
    answer = NODE_TYPES.get(kind)
    if answer is None:
        answer = NODE_TYPES[kind] = issubclass(kind, cst.CSTNode)
    return answer


def child_fields(kind: type) -> Tuple[str, ...]:
    """The fields of a node class that can hold child nodes a rule may look at, in source order
    (formatting and plain-text fields left out)."""
    names = _CHILD_FIELDS.get(kind)
    if names is None:
        names = _CHILD_FIELDS[kind] = _ORDER.get(kind) or tuple(
            f.name
            for f in dataclasses.fields(kind)
            if f.name not in _FORMATTING and not f.name.startswith("whitespace") and f.type is not str
            and not str(f.type).startswith("typing.Literal")
        )
    return names


def children(node: cst.CSTNode) -> List[cst.CSTNode]:
    """The child nodes of `node` in its `child_fields`, in source order: `node.children` less
    the formatting nodes, read from the fields directly (libcst's `children` runs a visitor that
    rebuilds the node, several times the cost)."""
    found = []
    for name in child_fields(type(node)):
        value = getattr(node, name)
        kind = type(value)
        if kind is list or kind is tuple:
            found.extend(item for item in value if is_node_type(type(item)))
        elif is_node_type(kind):
            found.append(value)
    return found


def all_fields(kind: type) -> Tuple[str, ...]:
    """Every field of a node class (formatting included: a fix may edit a comment)."""
    names = _ALL_FIELDS.get(kind)
    if names is None:
        names = _ALL_FIELDS[kind] = tuple(f.name for f in dataclasses.fields(kind))
    return names


def exact_kinds(kind) -> Optional[frozenset]:
    """The classes (one or a tuple) as a frozenset when none has subclasses, so that
    `type(node) in kinds` answers like isinstance; else None."""
    if kind not in _EXACT:
        kinds = kind if isinstance(kind, tuple) else (kind,)
        _EXACT[kind] = None if any(k.__subclasses__() for k in kinds) else frozenset(kinds)
    return _EXACT[kind]
