"""Which functions of a module TensorFlow traces (runs once, on symbolic tensors), shared by the
rules about code that only works eagerly (TFM104, TFM106, TFM107, TFM108).

A function is traced when it is
- decorated with `tf.function` in any spelling (`@tf.function`, `@tf.function(...)`,
  `@tf.compat.v1.function`, `from tensorflow import function`), or wrapped as `tf.function(f)`;
- given to `Dataset.map` (a def, `self.fn`, `partial(fn, ...)`, or a lambda), resolved by
  tfmigrate.facts.functions; TFM104 reads the same map sites, so the rules agree on what a map
  function is;
- called by name from a traced function (transitively): it runs during the trace too.

Nested defs and lambdas inside a traced function are not traced by this alone (they are often
handed to `tf.py_function`), so code in them is never reported.

`TracedFunctions` is a fact fed by the engine's walk (a walk step, run before the rules whenever
an enabled rule reads it), so it is the same whatever rules are on. Rules read it in
`leave_Module`: `ctx.fact(TracedFunctions).kind(fn)`. It also keeps, per function, the names that
hold tensors by evidence (assigned from a TensorFlow call, map elements, `input_signature`
parameters): `.tensor(expr, fn)`.
"""
from __future__ import annotations

from typing import Dict, List, Optional, Set, Tuple

import libcst as cst

from tfmigrate.facts.functions import SCOPES as _SCOPES
from tfmigrate.facts.functions import FunctionTable, element_params, positional, target_names
from tfmigrate.facts.datasets import DatasetNames
from tfmigrate.facts.names import dotted, statements_of

FUNCTIONS = (cst.FunctionDef, cst.Lambda)
MAP = "a `Dataset.map` function"
TF_FUNCTION = "a `tf.function`"
_TF_FUNCTION_APIS = frozenset({"function", "python.eager.def_function.function", "contrib.eager.defun"})


class TracedFunctions:
    """A walk step: the defs, map/tf.function sites and calls of one file, seen at each node of
    the engine's walk and resolved once, on the first question after it."""

    needs = (DatasetNames,)
    walked = True  # fed by the engine's walk, which starts it when an enabled rule reads it
    code = "traced functions"  # the step's name in a TFM000 finding, should it fail

    def __init__(self, ctx):
        self.ctx = ctx
        self.functions = FunctionTable(ctx)
        self._done: Set[int] = set()  # functions whose tensor names are complete
        self.roots: List[Tuple[cst.CSTNode, str, frozenset]] = []  # (function, kind, tensor params)
        self.wrapped: List[Tuple[cst.BaseExpression, tuple, str]] = []  # (expr, scope chain, kind)
        self.calls: Dict[int, List[Tuple[cst.BaseExpression, tuple]]] = {}
        self.assigns: Dict[int, List[Tuple[List[cst.Name], cst.BaseExpression]]] = {}
        self._result: Optional[Dict[int, Tuple[cst.CSTNode, str]]] = None
        self._tensors: Dict[int, Set[str]] = {}

    def handlers(self) -> List[str]:
        return ["visit_FunctionDef", "visit_Call", "visit_Assign"]

    def chain(self) -> tuple:
        return tuple(n for n in self.ctx.stack if type(n) in _SCOPES)

    def is_tf_function(self, expr) -> bool:
        return self.ctx.names.api(expr) in _TF_FUNCTION_APIS

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self.functions.add(node)
        for decorator in node.decorators:
            expr = decorator.decorator
            call = expr if isinstance(expr, cst.Call) else None
            if self.is_tf_function(call.func if call else expr):
                self.roots.append((node, TF_FUNCTION, self._signature_params(node, call)))

    def _signature_params(self, node: cst.FunctionDef, call: Optional[cst.Call]) -> frozenset:
        """Parameters that are tensors for sure: all of them under an `input_signature`."""
        if call is None or not any(a.keyword and a.keyword.value == "input_signature" for a in call.args):
            return frozenset()
        params = [p.name.value for p in positional(node.params)]
        if params and params[0] in ("self", "cls"):
            params = params[1:]
        return frozenset(params)

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        fn = self.ctx.enclosing(FUNCTIONS)
        if fn is not None and (type(func) is cst.Name or (
            type(func) is cst.Attribute and type(func.value) is cst.Name and func.value.value in ("self", "cls")
        )):
            self.calls.setdefault(id(fn), []).append((func, self.chain()))
        if isinstance(func, cst.Attribute) and func.attr.value == "map":
            target = next((a.value for a in node.args if a.keyword and a.keyword.value == "map_func"), None)
            if target is None and node.args and node.args[0].keyword is None and not node.args[0].star:
                target = node.args[0].value
            if target is not None and self.ctx.fact(DatasetNames).receiver(node, "map") is not None:
                self.wrapped.append((target, self.chain(), MAP))
        elif node.args and not node.args[0].star and node.args[0].keyword is None and self.is_tf_function(func):
            self.wrapped.append((node.args[0].value, self.chain(), TF_FUNCTION))

    def visit_Assign(self, node: cst.Assign) -> None:
        fn = self.ctx.enclosing(FUNCTIONS)
        names = [n for t in node.targets for n in target_names(t.target)]
        self.assigns.setdefault(id(fn) if fn is not None else 0, []).append((names, node.value))

    def map_sites(self) -> List[Tuple[cst.BaseExpression, tuple]]:
        """(function argument, scope chain) of every `Dataset.map` call, in source order."""
        return [(expr, chain) for expr, chain, kind in self.wrapped if kind == MAP]

    # -- resolution -----------------------------------------------------------------------------
    def traced(self) -> Dict[int, Tuple[cst.CSTNode, str]]:
        """id(function or lambda) -> (node, MAP or TF_FUNCTION) for every traced function."""
        if self._result is not None:
            return self._result
        found: Dict[int, Tuple[cst.CSTNode, str]] = {}
        todo = list(self.roots)
        for expr, chain, kind in self.wrapped:
            if isinstance(expr, cst.Lambda):
                params = {p.name.value for p in positional(expr.params) if p.default is None}
                todo.append((expr, kind, frozenset(params) if kind == MAP else frozenset()))
                continue
            target = self.functions.resolve(expr, chain)
            if target is not None:
                fdef, skip, bound = target
                params = element_params(fdef.params, skip, bound) if kind == MAP else set()
                todo.append((fdef, kind, frozenset(params)))
        while todo:
            fn, kind, params = todo.pop()
            if id(fn) in found:
                self._tensors[id(fn)] |= params
                continue
            found[id(fn)] = (fn, kind)
            self._tensors[id(fn)] = set(params)
            for func, chain in self.calls.get(id(fn), ()):
                target = self.functions.resolve(func, chain)
                if target is not None and target[0] is not fn:
                    todo.append((target[0], kind, frozenset()))
        self._result = found
        return found

    # -- tensors by evidence --------------------------------------------------------------------
    def tensor_names(self, fn) -> Set[str]:
        """Names holding tensors in `fn` (flow-insensitive), with the module's own tensors
        (`counter = tf.Variable(0)` at the top level)."""
        key = id(fn) if fn is not None else 0
        names = self._tensors.setdefault(key, set())
        if key not in self._done:
            self._done.add(key)
            if key != 0:
                names |= self.tensor_names(None)
            assigns = self.assigns.get(key, [])
            changed = True
            while changed:  # flow-insensitive: a few rounds reach the fixed point
                changed = False
                for targets, value in assigns:
                    if self.is_tensor(value, names):
                        for name in targets:
                            if name.value not in names:
                                names.add(name.value)
                                changed = True
        return names

    def is_tensor(self, expr, names: Set[str]) -> bool:
        """A TensorFlow op's result, a tensor name, or arithmetic / indexing on one."""
        if isinstance(expr, cst.Name):
            return expr.value in names
        if isinstance(expr, cst.Call):
            api = self.ctx.names.api(expr.func)
            if api is None:
                return False
            last = api.rsplit(".", 1)[-1]
            if api == "Variable":
                return True
            return bool(last) and last[0].islower() and not api.startswith(_NOT_TENSOR_APIS) and last not in _NOT_TENSOR
        if isinstance(expr, cst.BinaryOperation):
            return self.is_tensor(expr.left, names) or self.is_tensor(expr.right, names)
        if isinstance(expr, cst.UnaryOperation):
            return self.is_tensor(expr.expression, names)
        if isinstance(expr, cst.Subscript):
            return self.is_tensor(expr.value, names)
        return False

    def kind(self, fn) -> Optional[str]:
        """MAP or TF_FUNCTION when `fn` (a def or lambda) is traced, else None."""
        hit = self.traced().get(id(fn)) if fn is not None else None
        return hit[1] if hit else None

    def tensor(self, expr, fn) -> bool:
        """Whether `expr`, in traced function `fn`, is a tensor by evidence."""
        return self.is_tensor(expr, self.tensor_names(fn))


# TensorFlow calls whose result is not a tensor (or not always one).
_NOT_TENSOR_APIS = ("keras.", "data.", "io.gfile.", "gfile.", "train.", "estimator.", "config.",
                    "compat.", "summary.", "saved_model.", "distribute.", "logging.", "app.",
                    "flags.", "test.", "sysconfig.", "feature_column.", "debugging.")
_NOT_TENSOR = frozenset("""as_dtype function py_func print numpy_function py_function executing_eagerly
get_static_value name_scope variable_scope device control_dependencies get_default_graph
TensorShape group no_op Print cond while_loop""".split())


class NumpyAliases:
    """Local names bound to the numpy module (`import numpy as np`): `.names`."""

    needs = ()

    def __init__(self, ctx):
        self.names = _numpy_aliases(ctx)


def _numpy_aliases(ctx) -> Set[str]:
    found = set()
    for stmt in statements_of(ctx.module.body):
        for small in stmt.body if type(stmt) is cst.SimpleStatementLine else ():
            if type(small) is cst.Import:
                for alias in small.names:
                    if dotted(alias.name) == "numpy":
                        found.add(alias.asname.name.value if alias.asname else "numpy")
    return found
