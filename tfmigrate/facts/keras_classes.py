"""Is this class a Keras Model or Layer? Several rules care, because Keras 3 tracks state
(variables, sub-layers) only on its own classes, and never on `tf.Variable` objects.

Resolution is syntactic and per module: a base is Keras when `ImportTable.api()` names a Keras
model or layer class (`tf.keras.Model`, `keras.layers.Layer`, `layers.Dense`, ...), or when it
is a class defined in the same module whose bases are, transitively. A class defined in the
module shadows an import of the same name (`class Model: ...` is the user's own).
"""
from __future__ import annotations

from typing import Dict, Iterator, Optional

import libcst as cst

from tfmigrate.facts.names import dotted

_MODEL_NAMES = frozenset({"Model", "Sequential", "Functional"})
_LAYER_NAMES = frozenset({"Layer", "InputLayer"})


def keras_api_kind(api: Optional[str]) -> Optional[str]:
    """"model" / "layer" for a TF API path naming a Keras model or layer class, else None."""
    if not api:
        return None
    parts = api.split(".")
    if parts[0] != "keras" or len(parts) < 2:
        return None
    last = parts[-1]
    if last in _MODEL_NAMES:
        return "model"
    if last in _LAYER_NAMES:
        return "layer"
    # keras.layers.Dense, keras.layers.experimental.preprocessing.Rescaling, ...: all layers.
    if len(parts) >= 3 and parts[1] == "layers" and last[:1].isupper() and last != "InputSpec":
        return "layer"
    return None


def module_classes(module: cst.Module) -> Dict[str, cst.ClassDef]:
    """Every class statement in the module by name (the last definition wins, as in Python)."""
    found: Dict[str, cst.ClassDef] = {}
    for node in _class_defs(module.body):
        found[node.name.value] = node
    return found


def _class_defs(body) -> Iterator[cst.ClassDef]:
    """Class statements at any depth, through compound statements but never expressions."""
    for stmt in body:
        if isinstance(stmt, cst.ClassDef):
            yield stmt
        yield from _class_defs(_inner_statements(stmt))


def _inner_statements(node) -> Iterator[cst.CSTNode]:
    if isinstance(node, (cst.SimpleStatementLine, cst.BaseSmallStatement)) or node is None:
        return
    for attr in ("body", "orelse", "finalbody", "handlers"):
        child = getattr(node, attr, None)
        for part in child if isinstance(child, (list, tuple)) else [child]:
            if isinstance(part, cst.IndentedBlock):
                yield from part.body
            elif isinstance(part, (cst.If, cst.Else, cst.Finally, cst.ExceptHandler)):
                yield part  # its own body is reached by the recursion


class KerasClasses:
    """Per-module memo of which classes are Keras models or layers."""

    needs = ()

    def __init__(self, ctx):
        self.names = ctx.names
        self.classes = module_classes(ctx.module)
        self._memo: Dict[str, Optional[str]] = {}

    def kind(self, node: cst.ClassDef) -> Optional[str]:
        """"model" / "layer" when the class derives from a Keras model or layer, else None."""
        return self._kind(node, set())

    def _kind(self, node: cst.ClassDef, seen: set) -> Optional[str]:
        key = node.name.value
        if self.classes.get(key) is node and key in self._memo:
            return self._memo[key]
        seen = seen | {id(node)}
        result = None
        for base in node.bases:
            if base.keyword is not None or base.star:
                continue
            result = self._base_kind(base.value, seen)
            if result:
                break
        if self.classes.get(key) is node:
            self._memo[key] = result
        return result

    def _base_kind(self, expr: cst.BaseExpression, seen: set) -> Optional[str]:
        if isinstance(expr, cst.Name) and expr.value in self.classes:
            local = self.classes[expr.value]
            return None if id(local) in seen else self._kind(local, seen)
        if dotted(expr) is None:
            return None
        return keras_api_kind(self.names.api(expr))
