"""TFM106: `.numpy()`, or a NumPy function on a tensor, inside a traced function.

A `tf.function` or `Dataset.map` function runs on symbolic tensors. Measured under TF 2.21:
`x.numpy()` raises `AttributeError: 'SymbolicTensor' object has no attribute 'numpy'`, and
`np.sum(x)` (and every NumPy function tried) raises `NotImplementedError: Cannot convert a
symbolic tf.Tensor to a numpy array`. A few NumPy functions have an exact TensorFlow twin
(measured on float32 and int32, with `axis` / `keepdims`); only those are rewritten.
"""
from __future__ import annotations

from typing import Dict, Optional, Tuple

import libcst as cst

from tfmigrate.findings import Fix, Replace
from tfmigrate.rules.base import Rule
from tfmigrate.facts.traced import FUNCTIONS, MAP, NumpyAliases, TracedFunctions

# NumPy function -> (TensorFlow API, reduction?, safe?). Safe: same values and dtype for every
# dtype, or TensorFlow raises where NumPy would differ (exp of an int32). Unsafe: integer input
# gives another dtype (np.sum of int32 is int64) or value (np.mean of ints is a float, TF truncates).
TWINS: Dict[str, Tuple[str, bool, bool]] = {
    "max": ("reduce_max", True, True), "amax": ("reduce_max", True, True),
    "min": ("reduce_min", True, True), "amin": ("reduce_min", True, True),
    "sum": ("reduce_sum", True, False), "prod": ("reduce_prod", True, False),
    "mean": ("reduce_mean", True, False),
    "abs": ("abs", False, True), "square": ("square", False, True), "exp": ("exp", False, True),
    "log": ("math.log", False, True), "sqrt": ("sqrt", False, True), "tanh": ("tanh", False, True),
}


def _twin_args(call: cst.Call, reduction: bool) -> bool:
    """Arguments both functions read the same way: `x`, and for reductions `axis` / `keepdims`."""
    positional = [a for a in call.args if a.keyword is None]
    if any(a.star for a in call.args) or positional != list(call.args[: len(positional)]):
        return False
    if not reduction:
        return len(call.args) == 1
    keywords = {a.keyword.value for a in call.args if a.keyword is not None}
    return 1 <= len(positional) <= 2 and keywords <= {"axis", "keepdims"} and not (
        len(positional) == 2 and "axis" in keywords
    )


class NumpyInGraph(Rule):
    code = "TFM106"
    reads = (TracedFunctions, NumpyAliases)

    def __init__(self, ctx):
        super().__init__(ctx)
        self._numpy_calls = []  # (node, enclosing function)
        self._np_calls = []  # (node, numpy function name, enclosing function)

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        if not isinstance(func, cst.Attribute):
            return
        fn = self.ctx.enclosing(FUNCTIONS)
        if fn is None:
            return
        if func.attr.value == "numpy" and not node.args:
            self._numpy_calls.append((node, fn))
        elif isinstance(func.value, cst.Name) and func.value.value in self.ctx.fact(NumpyAliases).names and node.args:
            self._np_calls.append((node, func.attr.value, fn))

    def leave_Module(self, node: cst.Module) -> None:
        for call, fn in self._numpy_calls:
            kind = self.ctx.fact(TracedFunctions).kind(fn)
            if kind is None:
                continue
            spelled = self.ctx.module.code_for_node(call)
            self.report(
                call.func.attr,
                f"`{spelled}` fails inside {kind}: tensors there are symbolic and have no value yet. "
                f"{_advice(kind)}",
            )
        for call, name, fn in self._np_calls:
            kind = self.ctx.fact(TracedFunctions).kind(fn)
            first = call.args[0]
            if kind is None or first.keyword is not None or first.star or not self.ctx.fact(TracedFunctions).tensor(first.value, fn):
                continue
            spelled = self.ctx.module.code_for_node(call.func)
            wrong = f"`{spelled}(...)` on a tensor fails inside {kind}: NumPy cannot read a symbolic tensor."
            fix = self._fix(call, name)
            if fix is None:
                self.report(call.func, f"{wrong} {_advice(kind)}")
            else:
                self.report(call.func, f"{wrong} Use `{fix[1]}`, its TensorFlow equivalent.", fix[0])

    def _fix(self, call: cst.Call, name: str) -> Optional[Tuple[Fix, str]]:
        twin = TWINS.get(name)
        if twin is None or not _twin_args(call, twin[1]):
            return None
        api, _, safe = twin
        ref = self.ctx.names.spelling(api)
        edits = [Replace(call.func, ref.expression())]
        edits.extend(ref.import_edits())
        note = "" if safe else " (on integer tensors the result's dtype or value differs from NumPy's)"
        return Fix("safe" if safe else "unsafe", f"Replace with `{ref.code}`{note}", tuple(edits)), ref.code


def _advice(kind: str) -> str:
    where = "the function" if kind == MAP else "the `tf.function`"
    return (f"Use TensorFlow ops instead, or wrap the NumPy code in `tf.numpy_function` / "
            f"`tf.py_function` to run it eagerly from {where}.")
