"""Is this class a Keras Model or Layer? Several rules care, because Keras 3 tracks state
(variables, sub-layers) only on its own classes, and never on `tf.Variable` objects.

Resolution is syntactic and per module: a base is Keras when `ImportTable.api()` names a Keras
model or layer class (`tf.keras.Model`, `keras.layers.Layer`, `layers.Dense`, ...), or when it
is a class defined in the same module whose bases are, transitively. A class defined in the
module shadows an import of the same name (`class Model: ...` is the user's own).

`keras_class_obstacle` says why a TF1 `tf.layers` class cannot become its Keras 3 namesake at a
reference (the removed-API message and fix both ask).
"""
from __future__ import annotations

import re
from typing import TYPE_CHECKING, Dict, Iterator, Optional

import libcst as cst

from tfmigrate.facts import api_table
from tfmigrate.facts.names import ImportTable, dotted

if TYPE_CHECKING:
    from tfmigrate.facts.references import Ref

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

    def __init__(self, module: cst.Module, names: ImportTable):
        self.names = names
        self.classes = module_classes(module)
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


# What every Keras 3 layer takes besides its own parameters (keras.layers.Layer.__init__).
_KERAS_LAYER_KWARGS = frozenset({"activity_regularizer", "trainable", "dtype", "autocast", "name",
                                 "input_dim", "input_shape"})
# TF1's `tf.layers` objects were also `tf.layers.Layer`s: what Keras 3's lack.
_TF1_LAYER_METHODS = ("apply",)


def keras_class_obstacle(ref: "Ref", ctx, replacement: dict) -> Optional[str]:
    """Why a TF1 `tf.layers` class cannot become its Keras 3 namesake at this reference, or
    None. A subclass inherits TF1's API (`fused=` passed to `super().__init__`, `.apply`,
    variable scopes) that Keras 3's class rejects or lacks; a call passing a keyword Keras 3's
    class does not take raises ValueError; an instance used through `.apply` fails."""
    target = replacement.get("target", "")
    if not (ref.path.startswith("layers.") and target.startswith("keras.layers.")):
        return None
    parent = ctx.stack[-1] if ctx.stack else None
    if isinstance(parent, cst.Arg) and len(ctx.stack) > 1 and isinstance(ctx.stack[-2], cst.ClassDef) \
            and parent in ctx.stack[-2].bases:
        return "as a base class it brings TF1's layer API (`fused=`, `.apply`, variable scopes) that Keras 3's lacks"
    call = ref.call
    if call is None:
        return None
    signature = api_table.call_signature(target)
    if signature is not None:
        names = set(signature[0]) | _KERAS_LAYER_KWARGS
        unknown = [a.keyword.value for a in call.args if a.keyword is not None and a.keyword.value not in names]
        if unknown:
            return f"it takes no {', '.join(f'`{k}=`' for k in unknown)} (ValueError)"
    owner_assign = ctx.enclosing(cst.Assign)
    if owner_assign is not None and owner_assign.value is call and len(owner_assign.targets) == 1:
        local = dotted(owner_assign.targets[0].target)
        if local and any(re.search(rf"(?<![\w.]){re.escape(local)}\.{m}\(", ctx.source) for m in _TF1_LAYER_METHODS):
            return f"`{local}` is used through `.apply(...)`, which Keras 3 layers do not have"
    return None
