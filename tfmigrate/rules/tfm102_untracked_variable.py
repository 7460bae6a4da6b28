"""TFM102: a `tf.Variable` / `get_variable` stored on a Keras Model or Layer is not tracked.

Measured under TF 2.21 / Keras 3: `self.a = tf.Variable(1.0)` (also in a list, tuple, dict or
appended) leaves `model.variables` empty, so the variable is never trained or saved, silently.
`tf.Module` subclasses do track it and are not flagged.

Fix safety: `tf.keras.Variable(...)` / `self.add_weight(...)` make the variable tracked, which is
what the author meant. The fix is safe unless it may change something else: the Keras variable
is not a `tf.Variable` (`.name` has no ":0", `.dtype` is a string, `read_value`, `scatter_*`,
`initializer`, ... do not exist), so a class that reads those off the attribute gets an unsafe
fix, as does a computed name or `trainable`, a regularizer (it joins `model.losses`), a container
(its elements' uses are not followed) or a method other than `__init__`/`build` (Keras 3 refuses
new variables once a layer is built; in `call` it raises, so there is no fix at all).
"""
from __future__ import annotations

from typing import Dict, Iterator, Optional, Set

import libcst as cst

from tfmigrate.findings import Fix, Replace
from tfmigrate.fixers.variables import to_add_weight, to_keras_variable
from tfmigrate.facts.keras_classes import KerasClasses
from tfmigrate.rules.base import Rule

_CREATORS = ("Variable", "get_variable")
_APPENDERS = {"append": 0, "insert": 1, "extend": 0}
# Members of tf.Variable that keras.Variable lacks or answers differently (measured).
_DIFFERENT = frozenset({
    "name", "dtype", "value", "read_value", "read_value_no_copy", "sparse_read", "gather_nd",
    "initializer", "initial_value", "initialized_value", "is_initialized", "op", "graph",
    "device", "eval", "load", "count_up_to", "to_proto", "get_shape", "set_shape",
    "experimental_ref", "ref", "batch_scatter_update", "SaveSliceInfo",
})


def _root_attr(expr: cst.BaseExpression, self_name: str) -> Optional[str]:
    """`self.a`, `self.a.b`, `self.a[0]` -> "a"; None unless the chain starts at `self.`."""
    attr = None
    while isinstance(expr, (cst.Attribute, cst.Subscript)):
        if isinstance(expr, cst.Attribute):
            attr = expr.attr.value
        expr = expr.value
    return attr if isinstance(expr, cst.Name) and expr.value == self_name else None


def _stored(target, value) -> Iterator[tuple]:
    """(target, value) pairs, pairing tuple targets with tuple values element by element."""
    if isinstance(target, (cst.Tuple, cst.List)):
        if isinstance(value, (cst.Tuple, cst.List)) and len(target.elements) == len(value.elements) \
                and not any(isinstance(e, cst.StarredElement) for e in (*target.elements, *value.elements)):
            for t, v in zip(target.elements, value.elements):
                yield from _stored(t.value, v.value)
        return
    yield target, value


def _contained(value, boxed: bool = False) -> Iterator[tuple]:
    """(expr, boxed) for the value itself and what a list/tuple/set/dict literal or
    comprehension holds; `boxed` tells the expression sits in a container."""
    if isinstance(value, (cst.List, cst.Tuple, cst.Set)):
        for element in value.elements:
            yield from _contained(element.value, True)
    elif isinstance(value, cst.Dict):
        for element in value.elements:
            if isinstance(element, cst.DictElement):
                yield from _contained(element.value, True)
    elif isinstance(value, (cst.ListComp, cst.SetComp)):
        yield from _contained(value.elt, True)
    elif isinstance(value, cst.DictComp):
        yield from _contained(value.value, True)
    elif isinstance(value, cst.IfExp):
        yield from _contained(value.body, boxed)
        yield from _contained(value.orelse, boxed)
    else:
        yield value, boxed


class UntrackedVariable(Rule):
    code = "TFM102"
    reads = (KerasClasses,)

    @classmethod
    def applies_to(cls, ctx) -> bool:
        return ctx.names.has_tensorflow and ("Variable" in ctx.source or "get_variable" in ctx.source)

    def __init__(self, ctx):
        super().__init__(ctx)
        self._keras: Optional[KerasClasses] = None
        self._members: Dict[int, Dict[str, Set[str]]] = {}
        self._seen: Set[int] = set()  # calls already reported (`self.a = self.b = ...`)

    # --- where we are -------------------------------------------------------------------------
    def _method(self):
        """(class, kind, method, self name) when inside a method of a Keras class, else None."""
        stack = self.ctx.stack
        for i in range(len(stack) - 1, -1, -1):
            if isinstance(stack[i], cst.ClassDef):
                method = next((n for n in stack[i + 1:] if isinstance(n, cst.FunctionDef)), None)
                if method is None or not method.params.params:
                    return None
                if any(_name(d.decorator) == "staticmethod" for d in method.decorators):
                    return None
                if self._keras is None:
                    self._keras = self.ctx.fact(KerasClasses)
                kind = self._keras.kind(stack[i])
                return (stack[i], kind, method, method.params.params[0].name.value) if kind else None
        return None

    # --- what is stored on self ---------------------------------------------------------------
    def visit_Assign(self, node: cst.Assign) -> None:
        for target in node.targets:
            self._check_store(target.target, node.value, direct=True)

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        if node.value is not None:
            self._check_store(node.target, node.value, direct=True)

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        self._check_store(node.target, node.value, direct=False)

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        if not (isinstance(func, cst.Attribute) and func.attr.value in _APPENDERS):
            return
        index = _APPENDERS[func.attr.value]
        args = [a for a in node.args if a.keyword is None and not a.star]
        if len(args) > index:
            self._check_store(func.value, args[index].value, direct=False)

    def _check_store(self, target, value, direct: bool) -> None:
        if not self._may_hold_call(value):
            return
        where = self._method()
        if where is None:
            return
        self_name = where[3]
        for t, v in _stored(target, value):
            attr = _root_attr(t, self_name)
            if attr is None:
                continue
            for expr, boxed in _contained(v):
                api = self._creator(expr)
                if api and id(expr) not in self._seen:
                    self._seen.add(id(expr))
                    plain = direct and not boxed and isinstance(t, cst.Attribute)
                    self._report(expr, api, where, attr, plain)

    @staticmethod
    def _may_hold_call(value) -> bool:
        return isinstance(value, (cst.Call, cst.List, cst.Tuple, cst.Set, cst.Dict, cst.ListComp,
                                  cst.SetComp, cst.DictComp, cst.IfExp))

    def _creator(self, expr) -> Optional[str]:
        if not isinstance(expr, cst.Call):
            return None
        api = self.ctx.names.api(expr.func)
        return api if api in _CREATORS else None

    # --- the finding and its fix --------------------------------------------------------------
    def _report(self, call: cst.Call, api: str, where, attr: str, plain: bool) -> None:
        cls, kind, method, self_name = where
        spelled = self.ctx.module.code_for_node(call.func)
        keras_var = self.ctx.names.spelling("keras.Variable")
        keras_func = keras_var.expression()
        if api == "Variable":
            full = self.ctx.names.full_name(call.func) or ""
            mapped = to_keras_variable(call, keras_func, self.ctx.names.api,
                                       v1=full.startswith("tensorflow.compat.v1."))
            instead = f"`{keras_var.code}(...)`"
        else:
            mapped = to_add_weight(call, self_name, keras_func, self.ctx.names.api)
            instead = f"`{self_name}.add_weight(...)`"
        wrong = f"`{spelled}` stored on a Keras {kind} is not tracked: it is never trained or saved."
        reason = mapped.reason or self._refusal(method, mapped)
        if reason:
            self.report(call.func, f"{wrong} Create it with {instead} instead (not fixed automatically: {reason}).")
            return
        caveats = list(mapped.caveats) + self._caveats(method, cls, attr, plain)
        new_func = mapped.call.func
        edits = [Replace(call, mapped.call)]
        if new_func is keras_func:
            edits.extend(keras_var.import_edits())
        target = self.ctx.module.code_for_node(new_func)
        instead = f"`{target}(...)`"
        description = f"Replace with {instead}"
        if caveats:
            description += f"; unsafe because {caveats[0]}"
        self.report(call.func, f"{wrong} Create it with {instead} instead.",
                    Fix("unsafe" if caveats else "safe", description, tuple(edits)))

    def _refusal(self, method, mapped) -> str:
        if method.name.value == "call":
            return "Keras 3 refuses new variables in `call`; create it in `__init__` or `build`"
        func = mapped.call.func
        if isinstance(func, cst.Attribute) and func.attr.value == "add_weight" \
                and method.name.value == "__init__" and not self._after_super_init(method):
            return "`add_weight` raises before `super().__init__()`; call that first"
        return ""

    def _after_super_init(self, method: cst.FunctionDef) -> bool:
        """True when a statement before the current one in `__init__` calls `...__init__(`."""
        body = method.body.body if isinstance(method.body, cst.IndentedBlock) else ()
        on_stack = {id(n) for n in self.ctx.stack}
        for stmt in body:
            if id(stmt) in on_stack:
                return False
            if "__init__(" in self.ctx.module.code_for_node(stmt):
                return True
        return False

    def _caveats(self, method, cls, attr: str, plain: bool) -> list:
        out = []
        if method.name.value not in ("__init__", "build"):
            out.append(f"it is created in `{method.name.value}`, and Keras 3 refuses new "
                       "variables once a layer is built")
        if not plain:
            out.append("tfmigrate does not follow the uses of a container's elements")
        used = self._members_used(cls, method).get(attr, set()) & _DIFFERENT
        if used:
            out.append(f"the class reads `.{sorted(used)[0]}`, which differs on a Keras variable")
        return out

    def _members_used(self, cls: cst.ClassDef, method) -> Dict[str, Set[str]]:
        """attr -> members read as `self.attr.member` / `self.attr[i].member` in the class."""
        key = id(cls)
        if key not in self._members:
            self_name = method.params.params[0].name.value
            found: Dict[str, Set[str]] = {}

            class Uses(cst.CSTVisitor):
                def visit_Attribute(self, node: cst.Attribute) -> None:
                    owner = _root_attr(node.value, self_name)
                    if owner is not None and not _is_self_attr(node, self_name):
                        found.setdefault(owner, set()).add(node.attr.value)

            cls.visit(Uses())
            self._members[key] = found
        return self._members[key]


def _is_self_attr(node: cst.Attribute, self_name: str) -> bool:
    return isinstance(node.value, cst.Name) and node.value.value == self_name


def _name(expr) -> Optional[str]:
    return expr.value if isinstance(expr, cst.Name) else None
