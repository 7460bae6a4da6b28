"""TFM101: `tf.layers.dense(x, 3)` and the other functional layers raise AttributeError under
Keras 3 (even as `tf.compat.v1.layers.*`), and under Keras 2 eager code they built new weights on
every call. The TF2 form is a Keras layer object built once and called where the function was.

In a method of a Keras Model/Layer the object goes to `__init__` (safe, when its arguments can be
evaluated there and the call is not repeated by a loop); elsewhere there is no object to hold it,
so it is built inline (unsafe: one new layer each time the line runs).
"""
from __future__ import annotations

from collections import Counter
from keyword import iskeyword
from typing import Dict, Optional, Set

import libcst as cst

from tfmigrate.findings import Fix, Insert, Replace
from tfmigrate.fixers import layers as fx
from tfmigrate.keras_classes import KerasClasses
from tfmigrate.names import Reference
from tfmigrate.rule import Rule

_REPEATING = (cst.For, cst.While, cst.ListComp, cst.SetComp, cst.DictComp, cst.GeneratorExp)


def _target_names(node, out: Set[str]) -> None:
    if isinstance(node, cst.Name):
        out.add(node.value)
    elif isinstance(node, (cst.Tuple, cst.List)):
        for element in node.elements:
            _target_names(element.value, out)
    elif isinstance(node, cst.StarredElement):
        _target_names(node.value, out)


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
        _target_names(node.target, self.names)

    def visit_AnnAssign(self, node):
        _target_names(node.target, self.names)

    def visit_AugAssign(self, node):
        _target_names(node.target, self.names)

    def visit_For(self, node):
        _target_names(node.target, self.names)

    def visit_AsName(self, node):
        _target_names(node.name, self.names)

    def visit_NamedExpr(self, node):
        _target_names(node.target, self.names)

    def visit_Import(self, node):
        for alias in node.names:
            if alias.asname is None:
                self.names.add(_head(alias.name))

    def visit_ImportFrom(self, node):
        if not isinstance(node.names, cst.ImportStar):
            for alias in node.names:
                if alias.asname is None and isinstance(alias.name, cst.Name):
                    self.names.add(alias.name.value)

    def visit_Global(self, node):
        self.globals.update(item.name.value for item in node.names)

    visit_Nonlocal = visit_Global


def _head(node) -> str:
    while isinstance(node, cst.Attribute):
        node = node.value
    return node.value if isinstance(node, cst.Name) else ""


def local_names(func: cst.FunctionDef) -> Set[str]:
    visitor = _Locals()
    func.params.visit(visitor)
    func.body.visit(visitor)
    return visitor.names - visitor.globals


class _References(cst.CSTVisitor):
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
            _target_names(comp.target, self.bound)
            comp = comp.inner_for_in

    visit_ListComp = visit_SetComp = visit_DictComp = visit_GeneratorExp = _comprehension

    def visit_Name(self, node):
        if node.value not in self.bound:
            self.names.add(node.value)


def _self_param(func: cst.FunctionDef) -> Optional[str]:
    params = [*func.params.posonly_params, *func.params.params]
    return params[0].name.value if params else None


def _takes_positional(init: Optional[cst.FunctionDef]) -> bool:
    """Whether an `__init__` accepts positional arguments besides `self`."""
    if init is None:
        return False
    params = init.params
    return len(params.posonly_params) + len(params.params) > 1 or isinstance(params.star_arg, cst.Param)


class _ClassInfo:
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
                        _target_names(target.target, self.class_names)
                    if isinstance(small, cst.AnnAssign):
                        _target_names(small.target, self.class_names)
        self.init_attrs = _self_stores(self.init) if self.init is not None else set()
        self.calls = _self_reads(classdef)  # attribute -> how often `self.X` is read
        self.used = set(self.class_names) | set(self.calls)
        self.taken: Set[str] = set()  # attribute names given out in this pass


def _self_stores(func: cst.FunctionDef) -> Set[str]:
    self_name = _self_param(func)
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


class FunctionalLayer(Rule):
    code = "TFM101"

    def __init__(self, ctx):
        super().__init__(ctx)
        self._keras: Optional[KerasClasses] = None
        self._info: Dict[int, _ClassInfo] = {}

    # -- which classes are Keras models/layers ------------------------------------------------
    def _keras_classes(self) -> KerasClasses:
        if self._keras is None:
            self._keras = KerasClasses(self.ctx.module, self.ctx.names)
        return self._keras

    def _class_table(self) -> Dict[str, cst.ClassDef]:
        return self._keras_classes().classes

    def _is_keras(self, classdef: cst.ClassDef) -> bool:
        return self._keras_classes().kind(classdef) is not None

    def _ancestors(self, classdef: cst.ClassDef):
        """The class and its same-file base classes."""
        out, todo = [], [classdef]
        while todo:
            cls = todo.pop()
            if cls in out:
                continue
            out.append(cls)
            for base in cls.bases:
                if isinstance(base.value, cst.Name):
                    parent = self._class_table().get(base.value.value)
                    if parent is not None:
                        todo.append(parent)
        return out

    def _class_info(self, classdef: cst.ClassDef) -> _ClassInfo:
        if id(classdef) not in self._info:
            self._info[id(classdef)] = _ClassInfo(classdef)
        return self._info[id(classdef)]

    # -- where the call sits --------------------------------------------------------------------
    def _method(self):
        """(classdef, method) for a call in a method of a Keras class; a reason string when it
        is in a Keras class but cannot move to `__init__`; None when no Keras class holds it."""
        stack = self.ctx.stack
        funcs = [i for i, n in enumerate(stack) if isinstance(n, cst.FunctionDef)]
        for depth, i in enumerate(reversed(funcs)):
            if i < 2 or not isinstance(stack[i - 2], cst.ClassDef):
                continue
            classdef, method = stack[i - 2], stack[i]
            if not self._is_keras(classdef):
                return None
            if depth > 0:
                return "it is inside a function nested in a method"
            decorators = {_head(d.decorator) for d in method.decorators}
            if decorators & {"staticmethod", "classmethod"} or _self_param(method) is None:
                return "the method has no `self`"
            if method.name.value == "__init__":
                return "it runs in `__init__`; store the layer there and call it in `call`"
            inner = stack[i + 1:]
            if any(isinstance(n, _REPEATING) for n in inner):
                return "it runs in a loop or comprehension, where TF1 built one layer per iteration"
            if any(isinstance(n, cst.Lambda) for n in inner):
                return "it is inside a lambda"
            return classdef, method
        return None

    # -- the rule -------------------------------------------------------------------------------
    def visit_Call(self, node: cst.Call) -> None:
        api = self.ctx.names.api(node.func)
        while api is not None and api.startswith(("compat.v1.", "compat.v2.")):
            api = api[10:]  # `tf.compat.v1.layers` under `import tensorflow.compat.v1 as tf`
        if api is None or not api.startswith("layers.") or api[7:] not in fx.SPECS:
            return
        function = api[7:]
        spelled = self.ctx.module.code_for_node(node.func)
        ref = self._reference(node.func, f"keras.layers.{fx.SPECS[function].cls}")
        wrong = (f"`{spelled}` does not exist under TensorFlow 2.21 / Keras 3 "
                 "(`tf.compat.v1.layers` raises AttributeError).")
        mapped = fx.map_call(function, node)
        place = self._method()
        if isinstance(place, tuple):
            todo = f"Create one `{ref.code}` in `__init__` and call it here"
            if isinstance(mapped, str):
                return self.report(node.func, f"{wrong} {todo}; no automatic fix because {mapped}.")
            result = self._class_fix(node, function, mapped, ref, *place)
            if isinstance(result, str):
                return self.report(node.func, f"{wrong} {todo}; no automatic fix because {result}.")
            fix, caveats = result
            unsafe = f"; the fix is unsafe because {'; '.join(caveats)}" if caveats else ""
            return self.report(node.func, f"{wrong} {todo}{unsafe}.", fix)
        if place is None and self.ctx.program.graph:
            return self._graph_code(node, spelled, ref)
        if isinstance(place, str) or isinstance(mapped, str):
            why = place if isinstance(place, str) else mapped
            return self.report(
                node.func,
                f"{wrong} Create one `{ref.code}` (e.g. in a Keras layer's `__init__`) and call it "
                f"here; no automatic fix because {why}.",
            )
        layer = fx.constructor(ref.expression(), mapped, node)
        edits = [Replace(node, fx.layer_call(layer, mapped, node))]
        edits.extend(ref.import_edits())
        self.report(
            node.func,
            f"{wrong} Use a `{ref.code}` object created once and called here; with no Keras class "
            "to hold it the fix builds it inline, which creates a new layer (new weights) each "
            "time this line runs in eager code, and TF1 variable names and `variable_scope` "
            "reuse do not carry over.",
            Fix("unsafe", f"Build `{ref.code}(...)` inline and call it on the input"
                + "".join(f" ({n})" for n in mapped.caveats + mapped.caveats_safe), tuple(edits)),
        )

    def _graph_code(self, node: cst.Call, spelled: str, ref: Reference) -> None:
        """In TF1 graph code a Keras 3 object built inline would lose what the rest of the graph
        relies on (variable_scope reuse, UPDATE_OPS, regularization losses, a placeholder
        `training` flag): the module keeps TF1's layers on the compat route instead."""
        program = self.ctx.program
        native = (f"The TF2-native form, a `{ref.code}` object created once, belongs with a rewrite of the "
                  "whole graph code (weight sharing, UPDATE_OPS, regularization losses, a `training` flag)")
        v1 = self.ctx.names.full_name(node.func) or ""
        if program.on_compat_route and program.legacy_keras_set and v1.startswith("tensorflow.compat.v1."):
            return self.report(
                node.func,
                f"`{spelled}` is a TF1 functional layer, running through `tf.compat.v1` with TensorFlow's legacy "
                f"Keras (tf-keras). {native}; no automatic fix.",
                debt=True,
            )
        self.report(
            node.func,
            f"`{spelled}` does not exist under TensorFlow 2.21 / Keras 3 (`tf.compat.v1.layers` needs "
            "TensorFlow's legacy Keras, the tf-keras package). In this TF1 graph module TFM200's fix keeps it "
            f"on `tf.compat.v1.layers` with legacy Keras, so weight sharing and the graph collections keep working. {native}.",
        )

    def _reference(self, func, api: str) -> Reference:
        """Spell the class with the alias the call itself used (`tfv1.layers.dense` ->
        `tfv1.keras.layers.Dense`) when that alias is TensorFlow; else the table's choice."""
        head = _head(func)
        if self.ctx.names.aliases.get(head) in ("tensorflow", "tensorflow.compat.v1"):
            return Reference(f"{head}.{api}", None)
        return self.ctx.names.reference(api)

    def _class_fix(self, node, function, mapped, ref, classdef, method):
        info = self._class_info(classdef)
        self_name = _self_param(method)
        init_self = _self_param(info.init) if info.init is not None else self_name
        if init_self is None:
            return "`__init__` has no `self`"
        reads = _References(self_name)
        for arg in mapped.ctor_args:
            arg.value.visit(reads)
        reason = self.unavailable_in_init(classdef, method, info, reads, init_self, self_name)
        if reason:
            return reason
        ancestors = self._ancestors(classdef)

        name = mapped.name
        attr = self._attribute_name(
            info,
            name if name and name.isidentifier() and not iskeyword(name) else function,
            set().union(*(self._class_info(c).used for c in ancestors)),
        )
        value = fx.constructor(ref.expression(), mapped, node)
        statement = fx.assignment(fx.self_attribute(init_self, attr), value)
        if info.init is not None:
            insert = Insert(owner=info.init, statements=(statement,))
        else:
            first = next((s for s in classdef.body.body if isinstance(s, cst.FunctionDef)), None)
            body = list(classdef.body.body) if isinstance(classdef.body, cst.IndentedBlock) else []
            before = first is None or body.index(first) > 0
            after = first is not None and not first.leading_lines
            positional = any(_takes_positional(self._class_info(c).init) for c in ancestors[1:])
            init = fx.new_init(init_self, [statement], blank_before=before, blank_after=after,
                               forward_args=positional)
            insert = Insert(owner=classdef, statements=(init,), where="first_def", exclusive=True)
        edits = [insert, Replace(node, fx.layer_call(fx.self_attribute(self_name, attr), mapped, node))]
        edits.extend(ref.import_edits())
        caveats = list(mapped.caveats)
        helper = method.name.value
        if helper not in ("call", "build") and info.calls[helper] != 1:
            caveats.append(
                f"`{helper}` is called {info.calls[helper]} times in the class: TF1 built a layer "
                "per call, the fix shares one" if info.calls[helper] else
                f"`{helper}` is not called in the class: if it runs more than once per step, TF1 "
                "built a layer per run and the fix shares one"
            )
        applicability = "unsafe" if caveats else "safe"
        notes = caveats + mapped.caveats_safe
        note = f" ({'; '.join(notes)})" if notes else ""
        return Fix(
            applicability,
            f"Build `{init_self}.{attr} = {ref.code}(...)` in `__init__` and call "
            f"`{self_name}.{attr}(...)` here{note}",
            tuple(edits),
        ), caveats

    def unavailable_in_init(self, classdef, method, info, reads, init_self, self_name):
        """Why the names a layer's constructor reads cannot be evaluated in `__init__` (a local
        of the method or of `__init__`, an attribute nothing sets), or None when they can.
        Shared with TFM107, which moves layers built in `call` the same way."""
        shadowed = local_names(method) | (local_names(info.init) if info.init else set())
        for name in sorted(reads.names):
            if name in shadowed:
                where = method.name.value if name in local_names(method) else "__init__"
                return f"`{name}` is a local name of `{where}`, not available in `__init__`"
        known = set(fx.KERAS_ATTRIBUTES)
        for cls in self._ancestors(classdef):
            sub = self._class_info(cls)
            known |= sub.init_attrs | sub.class_names
        for attr in sorted(reads.attrs):
            if attr not in known:
                return f"`{self_name}.{attr}` is not set in `__init__`"
        if reads.attrs and init_self != self_name:
            return f"`__init__` calls its first argument `{init_self}`, not `{self_name}`"
        return None

    def _attribute_name(self, info: _ClassInfo, base: str, inherited: Set[str]) -> str:
        """`base`, else `base_1`, ...: unused by the class, its bases, Keras and this pass."""
        taken = info.used | inherited | info.taken | fx.KERAS_ATTRIBUTES
        candidate, n = base, 0
        while candidate in taken:
            n += 1
            candidate = f"{base}_{n}"
        info.taken.add(candidate)
        return candidate
