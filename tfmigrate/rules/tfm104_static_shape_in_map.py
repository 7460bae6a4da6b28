"""TFM104: a static shape read (`x.shape[i]`) inside a function given to `Dataset.map`.

`Dataset.map` traces its function once, with the element's static shape, whose unknown dimensions
are `None`: `if img.shape[-1] == 1:` is decided at trace time and never fires (FACTS.md).
`tf.shape(img)[-1]` is the size at run time, and AutoGraph turns the branch into a `tf.cond`.

During the walk the traced-functions fact (tfmigrate.facts.traced, shared with TFM106-TFM108)
records function definitions (by scope and name) and the function arguments of dataset `.map`
calls; `leave_Module` resolves each one (tfmigrate.facts.functions) and runs a forward taint pass over
that function alone, so the cost stays linear in the file.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Dict, FrozenSet, List, Optional, Set, Tuple

import libcst as cst

from tfmigrate.findings import Fix, Replace
from tfmigrate.fixers.shapes import dynamic_dims, dynamic_shape
from tfmigrate.facts.functions import element_params, positional, target_names
from tfmigrate.facts.names import dotted
from tfmigrate.rules.base import Rule
from tfmigrate.facts.traced import TracedFunctions

_NESTED = (cst.FunctionDef, cst.ClassDef, cst.Lambda)
# Walking up from a scalar read through these keeps "the value is used by TensorFlow or a test".
_PASS_UP = (
    cst.BinaryOperation, cst.UnaryOperation, cst.Comparison, cst.ComparisonTarget,
    cst.BooleanOperation, cst.List, cst.Tuple, cst.Element, cst.Dict, cst.DictElement,
)
_CHANNEL = frozenset({-1, 2})  # the channel axis of a decoded (rank-3) image
_GUARD_METHODS = ("is_fully_defined", "assert_is_fully_defined")
# TensorFlow APIs whose arguments must be Python numbers (or change meaning for a tensor).
_NEEDS_INT = frozenset(
    "constant ensure_shape get_variable placeholder split unstack zeros_initializer".split()
)


def _static_shape(expr) -> Optional[Tuple[cst.BaseExpression, cst.Name]]:
    """`x.shape` / `x.get_shape()` -> (x, the `shape` / `get_shape` name)."""
    if isinstance(expr, cst.Attribute) and expr.attr.value == "shape":
        return expr.value, expr.attr
    if (
        isinstance(expr, cst.Call)
        and not expr.args
        and isinstance(expr.func, cst.Attribute)
        and expr.func.attr.value == "get_shape"
    ):
        return expr.func.value, expr.func.attr
    return None


def _as_list_of(expr) -> Optional[Tuple[cst.BaseExpression, cst.Name]]:
    """`x.shape.as_list()` / `x.get_shape().as_list()` -> (x, name)."""
    if (
        isinstance(expr, cst.Call)
        and not expr.args
        and isinstance(expr.func, cst.Attribute)
        and expr.func.attr.value == "as_list"
    ):
        return _static_shape(expr.func.value)
    return None


def _index(expr) -> Optional[int]:
    """The int of `2` / `-1`, else None."""
    if isinstance(expr, cst.Integer):
        return int(expr.value, 0)
    if isinstance(expr, cst.UnaryOperation) and isinstance(expr.operator, cst.Minus):
        inner = _index(expr.expression)
        return None if inner is None else -inner
    return None


@dataclass
class _Read:
    name: cst.Name  # `shape` / `get_shape`: where the finding points
    tensor: cst.BaseExpression
    target: cst.BaseExpression  # the node the fix replaces
    read: Optional[cst.Subscript]  # the subscript, None for a bare `.as_list()`
    scalar: bool  # one dimension (an index), not a slice or a list


class _Flow(cst.CSTVisitor):
    """One function (or lambda body) in source order: taint, shape reads, guards, name uses."""

    def __init__(self, rule: "StaticShapeInMap", tainted: Set[str], direct: bool):
        super().__init__()
        self.rule = rule
        self.names = rule.ctx.names
        self.code = rule.ctx.module.code_for_node
        self.tainted = set(tainted)
        self.direct = direct  # the function `map` calls itself (its return value is the element)
        self.shape_set: Set[str] = set()  # tensors whose shape was set: reads of them are fine
        self.shape_values: Dict[str, Set[str]] = {}  # name -> tensors whose static shape it holds
        self.guards: Set[str] = set()  # tensors whose unknown dims the code handles itself
        self.known: Dict[str, FrozenSet[int]] = {}  # name -> dims an image op made static
        self.reads: List[_Read] = []
        self.parents: Dict[cst.CSTNode, cst.CSTNode] = {}
        self.stack: List[cst.CSTNode] = []
        self.stores: Set[cst.Name] = set()
        self.uses: Dict[str, List[cst.Name]] = {}
        self.calls: List[cst.Call] = []
        self._consumed: Set[cst.Call] = set()
        self._guard_slices: Set[cst.Subscript] = set()  # `x.shape[:1]` of a guard

    def run(self, root: cst.CSTNode, owner: cst.CSTNode) -> "_Flow":
        params = owner.params
        self.float_params = {
            p.name.value
            for p in [*positional(params), *params.kwonly_params]
            if isinstance(p.default, cst.Float)
        }
        self.parents[root] = owner
        self.stack.append(owner)
        root.visit(self)
        return self

    def on_visit(self, node: cst.CSTNode) -> bool:
        if self.stack:
            self.parents[node] = self.stack[-1]
        self.stack.append(node)
        if isinstance(node, _NESTED):
            return False
        return super().on_visit(node)

    def on_leave(self, original_node: cst.CSTNode) -> None:
        self.stack.pop()
        if not isinstance(original_node, _NESTED):
            super().on_leave(original_node)

    # --- taint -------------------------------------------------------------------------------
    def _fixes_shape(self, call: cst.Call) -> bool:
        """`tf.ensure_shape(x, s)`, `tf.reshape(x, [2, 3])`: the result's shape is known."""
        api = self.names.api(call.func)
        if api == "ensure_shape":
            return True
        if api == "reshape" and len(call.args) >= 2:
            shape = call.args[1].value
            return isinstance(shape, (cst.List, cst.Tuple)) and all(
                isinstance(e.value, cst.Integer) for e in shape.elements
            )
        return False

    def uses_tainted(self, expr: cst.CSTNode) -> bool:
        todo = [expr]
        while todo:
            node = todo.pop()
            if self.shape_set and isinstance(node, cst.BaseExpression) and self.code(node) in self.shape_set:
                continue
            if isinstance(node, cst.Name):
                if node.value in self.tainted:
                    return True
                continue
            if isinstance(node, _NESTED):
                continue
            if isinstance(node, cst.Call) and self._fixes_shape(node):
                continue
            if isinstance(node, cst.Attribute):
                todo.append(node.value)
            elif isinstance(node, cst.Arg):
                todo.append(node.value)
            else:
                todo.extend(node.children)
        return False

    def _bind(self, targets, value: Optional[cst.BaseExpression]) -> None:
        tainted = value is not None and self.uses_tainted(value)
        holds = self._shape_tensors(value) if value is not None else set()
        for target in targets:
            names = target_names(target)
            if not isinstance(target, cst.Subscript):  # `d["k"] = v` reads `d`
                self.stores.update(names)
            for name in names:
                key = name.value
                if tainted:
                    self.tainted.add(key)
                elif not isinstance(target, cst.Subscript):
                    self.tainted.discard(key)
                self.shape_set = {s for s in self.shape_set if s.split("[")[0].split(".")[0] != key}
                if holds:
                    self.shape_values[key] = holds
                elif not isinstance(target, cst.Subscript):
                    self.shape_values.pop(key, None)
                if target is name:
                    self.known[key] = self._known_dims(value) if value is not None else frozenset()

    def _known_dims(self, value) -> FrozenSet[int]:
        """Dimensions an image op fixes statically: `decode_jpeg(x, channels=3)` the last one."""
        if isinstance(value, cst.Name):
            return self.known.get(value.value, frozenset())
        if not isinstance(value, cst.Call) or not value.args:
            return frozenset()
        api = self.names.api(value.func) or ""
        first = self._known_dims(value.args[0].value)
        last = api.rsplit(".", 1)[-1]
        if api.startswith(("image.decode_", "io.decode_")):
            channels = next((a.value for a in value.args if a.keyword and a.keyword.value == "channels"), None)
            ok = isinstance(channels, cst.Integer) and int(channels.value) > 0 and last != "decode_gif"
            return _CHANNEL if ok else frozenset()
        if api in ("image.grayscale_to_rgb", "image.rgb_to_grayscale"):
            return first | {-1}
        if api in ("cast", "identity", "image.convert_image_dtype", "to_float", "saturate_cast"):
            return first
        if api.startswith("image."):
            size = value.args[1].value if len(value.args) > 1 else None
            fixed = last.startswith("resize") and isinstance(size, (cst.List, cst.Tuple)) and all(
                isinstance(e.value, cst.Integer) for e in size.elements
            )
            return (first & _CHANNEL) | ({-3, -2} if fixed else set())
        return frozenset()

    def leave_Assign(self, node: cst.Assign) -> None:
        self._bind([t.target for t in node.targets], node.value)

    def leave_AnnAssign(self, node: cst.AnnAssign) -> None:
        if node.value is not None:
            self._bind([node.target], node.value)

    def leave_AugAssign(self, node: cst.AugAssign) -> None:
        if self.uses_tainted(node.value):
            self._bind([node.target], node.value)

    def visit_For(self, node: cst.For) -> None:
        self._bind([node.target], node.iter)

    def visit_CompFor(self, node: cst.CompFor) -> None:
        self._bind([node.target], node.iter)

    def visit_WithItem(self, node: cst.WithItem) -> None:
        if node.asname is not None:
            self._bind([node.asname.name], node.item)

    # --- reads and guards --------------------------------------------------------------------
    def _tensor_ok(self, tensor: cst.BaseExpression) -> bool:
        return self.uses_tainted(tensor)

    def _shape_tensors(self, expr: cst.CSTNode) -> Set[str]:
        """Tensors (as code) whose static shape `expr` reads, directly or through a name."""
        out: Set[str] = set()
        todo = [expr]
        while todo:
            node = todo.pop()
            if isinstance(node, _NESTED):
                continue
            found = _static_shape(node)
            if found is not None and self.uses_tainted(found[0]):
                out.add(self.code(found[0]))
            if isinstance(node, cst.Name):
                out |= self.shape_values.get(node.value, set())
            todo.extend(node.children)
        return out

    def visit_Subscript(self, node: cst.Subscript) -> None:
        if node in self._guard_slices:
            return
        found = _static_shape(node.value)
        if found is None:
            found = _as_list_of(node.value)
            if found is not None:
                self._consumed.add(node.value)
        if found is None or not self._tensor_ok(found[0]):
            return
        tensor, name = found
        scalar = len(node.slice) == 1 and isinstance(node.slice[0].slice, cst.Index)
        if scalar and isinstance(tensor, cst.Name) and _index(node.slice[0].slice.value) in self.known.get(tensor.value, ()):
            return
        target: cst.BaseExpression = node
        parent = self.stack[-2] if len(self.stack) > 1 else None
        if isinstance(parent, cst.Attribute) and parent.value is node and parent.attr.value == "value":
            target = parent  # TF1 `x.shape[i].value`
        self.reads.append(_Read(name, tensor, target, node, scalar))

    def visit_Call(self, node: cst.Call) -> None:
        self.calls.append(node)
        func = node.func
        if not isinstance(func, cst.Attribute):
            return
        method = func.attr.value
        if method in _GUARD_METHODS:
            shape = func.value
            if isinstance(shape, cst.Subscript) and _static_shape(shape.value) is not None:
                # `x.shape[:1].is_fully_defined()`: a guard on a slice of the shape, not a read
                self._guard_slices.add(shape)
                shape = shape.value
            found = _static_shape(shape)
            if found is not None:
                self.guards.add(self.code(found[0]))
        elif method == "as_list" and node not in self._consumed:
            found = _as_list_of(node)
            if found is not None and self._tensor_ok(found[0]):
                self.reads.append(_Read(found[1], found[0], node, None, False))

    def leave_Call(self, node: cst.Call) -> None:
        func = node.func
        if isinstance(func, cst.Attribute) and func.attr.value == "set_shape":
            self.shape_set.add(self.code(func.value))
            self.guards.add(self.code(func.value))  # reads feeding set_shape(merge_with(...))
        elif node.args and self.names.api(func) == "ensure_shape":
            self.guards.add(self.code(node.args[0].value))

    def visit_Comparison(self, node: cst.Comparison) -> None:
        operands = [node.left, *(c.comparator for c in node.comparisons)]
        if any(isinstance(o, cst.Name) and o.value == "None" for o in operands):
            self.guards |= self._shape_tensors(node)

    def visit_BooleanOperation(self, node: cst.BooleanOperation) -> None:
        if isinstance(node.operator, cst.Or):  # `x.shape[1] or tf.shape(x)[1]`
            self.guards |= self._shape_tensors(node.left)

    def visit_Name(self, node: cst.Name) -> None:
        parent = self.stack[-2] if len(self.stack) > 1 else None
        if not (isinstance(parent, cst.Attribute) and parent.attr is node):
            self.uses.setdefault(node.value, []).append(node)

    # --- where a read's value goes -----------------------------------------------------------
    def context(self, node: cst.CSTNode, scalar: bool, depth: int = 0) -> Optional[str]:
        """None when the value only meets TensorFlow or a test, else where it goes instead."""
        child, parent = node, self.parents.get(node)
        while scalar and isinstance(parent, _PASS_UP):
            if isinstance(parent, cst.Comparison) and any(
                isinstance(c.operator, (cst.In, cst.NotIn)) for c in parent.comparisons
            ):
                return "the Python `in` test"
            if isinstance(parent, (cst.Comparison, cst.BinaryOperation)):
                operands = [parent.left, *(c.comparator for c in getattr(parent, "comparisons", ()))]
                operands.append(getattr(parent, "right", None))
                if any(self._floaty(o) for o in operands):
                    return "the arithmetic with a float"  # int32 tensor op float: TypeError
            if isinstance(parent, cst.Element) and isinstance(self.parents.get(parent), cst.Tuple):
                name = self._unpacked_name(parent, self.parents.get(parent))
                if name is not None:  # `h, w = x.shape[0], x.shape[1]`
                    return None if depth else self._uses_context(name, scalar)
            child, parent = parent, self.parents.get(parent)
        if isinstance(parent, (cst.If, cst.While, cst.IfExp, cst.Assert)) and parent.test is child:
            return None if scalar else "the Python condition"
        if isinstance(parent, cst.Arg) and parent.value is child:
            call = self.parents.get(parent)
            api = self.names.api(call.func) if isinstance(call, cst.Call) else None
            if api is not None and _accepts_tensor(api):
                return None
            name = dotted(call.func) if isinstance(call, cst.Call) else None
            return f"`{name}(...)`" if name else "the plain Python call"
        if isinstance(parent, (cst.Index, cst.Slice)):
            sub = self.parents.get(self.parents.get(parent))
            if scalar and isinstance(sub, cst.Subscript) and self.uses_tainted(sub.value):
                return None  # slicing a tensor by a tensor is fine
            return "the Python indexing"
        if isinstance(parent, (cst.Return, cst.Lambda)) and self.direct:
            return None
        target = self._assigned_name(child, parent)
        if target is not None and depth == 0:
            return self._uses_context(target, scalar)
        if isinstance(parent, cst.Assign) and any(
            isinstance(t.target, (cst.Tuple, cst.List)) for t in parent.targets
        ):
            return "the unpacking"
        return "the plain Python code around it"

    def _uses_context(self, name: str, scalar: bool) -> Optional[str]:
        """Where the value of `name` goes: the first use that is not TensorFlow or a test."""
        for use in self.uses.get(name, []):
            if use not in self.stores:
                where = self.context(use, scalar, 1)
                if where is not None:
                    return where
        return None

    def _assigned_name(self, child, parent) -> Optional[str]:
        """`h = <child>` -> "h"."""
        if not isinstance(parent, cst.Assign) or len(parent.targets) != 1:
            return None
        target = parent.targets[0].target
        if isinstance(target, cst.Name):
            return target.value
        return None

    def _unpacked_name(self, element, value) -> Optional[str]:
        assign = self.parents.get(value)
        if not (isinstance(assign, cst.Assign) and assign.value is value and len(assign.targets) == 1):
            return None
        target = assign.targets[0].target
        if not isinstance(target, (cst.Tuple, cst.List)) or len(target.elements) != len(value.elements):
            return None
        index = next(i for i, e in enumerate(value.elements) if e is element)
        name = target.elements[index].value
        return name.value if isinstance(name, cst.Name) else None

    def _floaty(self, expr) -> bool:
        """A float literal, or a parameter whose default is one (`fraction=0.5`)."""
        if isinstance(expr, cst.Float):
            return True
        return isinstance(expr, cst.Name) and expr.value in self.float_params


def _accepts_tensor(api: str) -> bool:
    last = api.rsplit(".", 1)[-1]
    if not last or last[0].isupper() or last in _NEEDS_INT:
        return False
    return not api.startswith(("keras.", "layers.", "contrib.", "estimator.", "data.", "feature_column."))


class StaticShapeInMap(Rule):
    code = "TFM104"
    reads = (TracedFunctions,)

    def __init__(self, ctx):
        super().__init__(ctx)
        self._seen: Set[Tuple[int, FrozenSet[str]]] = set()
        self._reported: Set[cst.Name] = set()

    def leave_Module(self, node: cst.Module) -> None:
        traced = self.ctx.fact(TracedFunctions)
        self._functions = traced.functions
        for fn, chain in traced.map_sites():
            if isinstance(fn, cst.Lambda):
                self._lambda(fn, chain)
                continue
            target = self._functions.resolve(fn, chain)
            if target is not None:
                fdef, skip, bound = target
                self._analyse(fdef, element_params(fdef.params, skip, bound), direct=True)

    def _lambda(self, fn: cst.Lambda, chain) -> None:
        params = {p.name.value for p in positional(fn.params) if p.default is None}
        if isinstance(fn.params.star_arg, cst.Param):
            params.add(fn.params.star_arg.name.value)
        flow = _Flow(self, params, direct=True).run(fn.body, fn)
        self._report(flow)
        for call in flow.calls:  # `lambda ex: parse(ex, mode)`: `parse` gets the element too
            if dotted(call.func) and dotted(call.func).split(".")[0] in params:
                continue
            target = self._functions.resolve(call.func, chain)
            if target is None:
                continue
            fdef, skip, _ = target
            element = positional(fdef.params)[skip:]
            tainted = set()
            for i, arg in enumerate(call.args):
                if arg.star:
                    break
                if not flow.uses_tainted(arg.value):
                    continue
                if arg.keyword is not None:
                    tainted.add(arg.keyword.value)
                elif i < len(element):
                    tainted.add(element[i].name.value)
            if tainted:
                self._analyse(fdef, tainted, direct=False)

    def _analyse(self, fdef: cst.FunctionDef, tainted: Set[str], direct: bool) -> None:
        key = (id(fdef), frozenset(tainted))
        if key in self._seen or not tainted:
            return
        self._seen.add(key)
        self._report(_Flow(self, tainted, direct).run(fdef.body, fdef))

    # --- findings ----------------------------------------------------------------------------
    def _report(self, flow: _Flow) -> None:
        ref = self.ctx.names.spelling("shape")
        for read in flow.reads:
            tensor_code = flow.code(read.tensor)
            if read.name in self._reported or tensor_code in flow.guards:
                continue
            self._reported.add(read.name)
            where = flow.context(read.target, read.scalar)
            if read.read is not None:
                new = dynamic_dims(ref.code, read.tensor, read.read, read.target)
            else:
                new = dynamic_shape(ref.code, read.tensor, read.target)
            old_code = flow.code(read.read if read.read is not None else read.target)
            new_code = cst.Module([]).code_for_node(new)
            fix = _fix(ref, read, new, new_code, where)
            self.report(read.name, _message(old_code, new_code, read, where, fix is not None), fix)


def _short(code: str) -> str:
    code = " ".join(code.split())
    return code if len(code) <= 60 else code[:57] + "..."


def _message(old: str, new: str, read: _Read, where: Optional[str], fixable: bool) -> str:
    old, new = _short(old), _short(new)
    if read.scalar:
        what = f"`{old}` is `None` inside a `Dataset.map` function unless that dimension is known when it is traced."
    else:
        what = f"`{old}` has `None` for each dimension not known when the `Dataset.map` function is traced."
    if where is None:
        size = "the size at run time" if read.scalar else "the sizes at run time (a tensor, not a list)"
        return f"{what} Use `{new}`, {size}."
    if fixable:
        return f"{what} Use `{new}`, the size at run time, and check {where}, which then gets a tensor instead of a Python number."
    return (
        f"{what} Use `{new}` (a tensor, not a list) with {where} rewritten to match, or declare "
        "the shape first with `set_shape` or `tf.ensure_shape` if it is fixed."
    )


def _fix(ref, read: _Read, new, new_code: str, where: Optional[str]) -> Optional[Fix]:
    if not read.scalar and where is not None:
        return None  # a tensor where a list or tuple was: unpacking, `+ [3]` would break silently
    edits = [Replace(read.target, new)]
    edits.extend(ref.import_edits())
    applicability = "safe" if read.scalar and where is None else "unsafe"
    return Fix(applicability, f"Replace with `{_short(new_code)}`", tuple(edits))
