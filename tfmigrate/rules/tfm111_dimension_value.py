"""TFM111: `x.get_shape()[1].value` / `[d.value for d in x.shape]`: TF1's `Dimension.value`, and
`x.shape[0].assert_is_compatible_with(y.shape[1])`: TF1's `Dimension` methods.

Measured under TF 2.21: a static shape's dimensions are plain ints (or None) under v2 behaviour,
so `.value` raises `AttributeError: 'int' object has no attribute 'value'`. It works only where
`disable_v2_behavior()` (or `disable_v2_tensorshape()`) ran first: a TF1 library module that
`fix` leaves on TF2, or eager code calling it, breaks. `tf.compat.dimension_value(d)` is TF's own
spelling for both: the `Dimension`'s value under TF1 behaviour, the int itself under TF2; the
fix is safe. A `Dimension` method on a shape's element (`assert_is_compatible_with`,
`is_compatible_with`, `merge_with`) raises the same way; `tf.compat.dimension_at_index(shape, i)`
is TF's spelling of that element as a `Dimension` under both, so the method is TF1's own.

A dimension is recognised where the shape is certain: an index of `x.get_shape()` / `x.shape`
(also of a name bound once to one in the same scope), or the loop name of a comprehension over
such a shape (sliced or not). `x.shape.dims[i].value` is left alone: `dims` still holds
`Dimension`s in TF2. Inside a `Dataset.map` function TFM104 rewrites the read as a whole.
"""
from __future__ import annotations

from typing import Dict, List, Optional, Tuple

import libcst as cst

from tfmigrate.facts.traced import FUNCTIONS, MAP, TracedFunctions
from tfmigrate.findings import AddImport, Fix, Replace
from tfmigrate.rules.base import Rule

_COMPREHENSIONS = (cst.ListComp, cst.GeneratorExp, cst.SetComp)


# TensorShape methods that return the shape checked or merged (`x.get_shape().with_rank(3)`)
_SHAPE_METHODS = ("with_rank", "with_rank_at_least", "with_rank_at_most", "merge_with")


def _is_shape(expr: cst.BaseExpression) -> bool:
    """`x.get_shape()` or `x.shape` (an attribute, not `tf.shape(x)`), or such a shape's
    `.with_rank(n)` / `.merge_with(...)`."""
    if isinstance(expr, cst.Call) and isinstance(expr.func, cst.Attribute):
        if expr.func.attr.value in _SHAPE_METHODS:
            return _is_shape(expr.func.value)
        return not expr.args and expr.func.attr.value == "get_shape"
    return isinstance(expr, cst.Attribute) and expr.attr.value == "shape"


# TF1 `Dimension` methods that an int does not have (`shape[0].assert_is_compatible_with(n)`)
_DIMENSION_METHODS = ("assert_is_compatible_with", "is_compatible_with", "merge_with")


def _one_index(subscript: cst.Subscript) -> bool:
    return (len(subscript.slice) == 1 and isinstance(subscript.slice[0].slice, cst.Index)
            and subscript.slice[0].slice.star is None)


class DimensionValue(Rule):
    code = "TFM111"
    reads = (TracedFunctions,)

    def __init__(self, ctx):
        super().__init__(ctx)
        # scope -> name -> the number of assignments, and whether the one is a shape
        self._bound: Dict[int, Dict[str, List[bool]]] = {}
        self._found: List[Tuple[cst.Attribute, Optional[cst.CSTNode], Optional[str]]] = []
        # (the shape's element, the method called on it, its scope, the shape's name if bound to one)
        self._methods: List[Tuple[cst.Subscript, str, Optional[cst.CSTNode], Optional[str]]] = []

    def _scope(self) -> Optional[cst.CSTNode]:
        return self.ctx.enclosing(FUNCTIONS)

    def visit_Assign(self, node: cst.Assign) -> None:
        scope = self._bound.setdefault(id(self._scope()), {})
        for target in node.targets:
            names = [target.target] if isinstance(target.target, cst.Name) else [
                e.value for e in getattr(target.target, "elements", ()) if isinstance(e.value, cst.Name)]
            for name in names:
                scope.setdefault(name.value, []).append(name is target.target and _is_shape(node.value))

    def visit_Attribute(self, node: cst.Attribute) -> None:
        if node.attr.value in _DIMENSION_METHODS:
            owner = node.value
            if isinstance(owner, cst.Subscript) and _one_index(owner):
                if _is_shape(owner.value):
                    self._methods.append((owner, node.attr.value, self._scope(), None))
                elif isinstance(owner.value, cst.Name):
                    self._methods.append((owner, node.attr.value, self._scope(), owner.value.value))
            return
        if node.attr.value != "value":
            return
        owner = node.value
        if isinstance(owner, cst.Subscript) and _one_index(owner):
            shape = owner.value
            if _is_shape(shape):
                self._found.append((node, self._scope(), None))
            elif isinstance(shape, cst.Name):  # (resolved at the end: the name's every binding known)
                self._found.append((node, self._scope(), shape.value))
        elif isinstance(owner, cst.Name) and self._comprehension_over_shape(owner.value):
            self._found.append((node, self._scope(), None))

    def _comprehension_over_shape(self, name: str) -> bool:
        """`name` is the loop name of an enclosing comprehension over a static shape."""
        for node in reversed(self.ctx.stack):
            if isinstance(node, _COMPREHENSIONS):
                loop = node.for_in
                if isinstance(loop.target, cst.Name) and loop.target.value == name:
                    source = loop.iter
                    if isinstance(source, cst.Subscript) and not _one_index(source):
                        source = source.value  # `x.get_shape()[1:]`
                    return _is_shape(source) and loop.inner_for_in is None
            if isinstance(node, FUNCTIONS):
                return False
        return False

    def leave_Module(self, node: cst.Module) -> None:
        traced = self.ctx.fact(TracedFunctions)
        spelling = self.ctx.names.spelling("compat.dimension_value")
        for attribute, scope, name in self._found:
            if traced.kind(scope) == MAP:
                continue  # (TFM104's: the map function's shape read as a whole)
            if name is not None and self._bound.get(id(scope), {}).get(name) != [True]:
                continue
            dimension = self.ctx.module.code_for_node(attribute.value)
            new = f"{spelling.code}({dimension})"
            edits = [Replace(attribute, cst.parse_expression(new))]
            if spelling.import_statement:
                edits.append(AddImport(spelling.import_statement))
            self.report(
                attribute.attr,
                f"`{dimension}.value` reads TF1's `Dimension`: under TensorFlow 2 a static shape holds "
                "ints, and `.value` raises `AttributeError: 'int' object has no attribute 'value'`. "
                f"`{new}` reads it under both.",
                Fix("safe", "Read the dimension with `tf.compat.dimension_value`", tuple(edits)),
            )
        at_index = self.ctx.names.spelling("compat.dimension_at_index")
        for element, method, scope, name in self._methods:
            if traced.kind(scope) == MAP:
                continue
            if name is not None and self._bound.get(id(scope), {}).get(name) != [True]:
                continue
            shape = self.ctx.module.code_for_node(element.value)
            index = self.ctx.module.code_for_node(element.slice[0].slice.value)
            new = f"{at_index.code}({shape}, {index})"
            edits = [Replace(element, cst.parse_expression(new))]
            if at_index.import_statement:
                edits.append(AddImport(at_index.import_statement))
            dimension = self.ctx.module.code_for_node(element)
            self.report(
                element,
                f"`{dimension}.{method}(...)` calls a method of TF1's `Dimension`: under TensorFlow 2 a static "
                f"shape holds ints, and it raises `AttributeError: 'int' object has no attribute '{method}'`. "
                f"`{new}` is that `Dimension` under both.",
                Fix("safe", "Take the dimension with `tf.compat.dimension_at_index`", tuple(edits)),
            )
