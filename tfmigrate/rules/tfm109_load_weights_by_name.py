"""TFM109: `model.load_weights(path, by_name=True)` where `path` is not a legacy HDF5 file.

Measured under TF 2.21 / Keras 3.15: `by_name=True` with a `.weights.h5` or `.keras` file raises
`ValueError: by_name only supports loading legacy '.h5' or '.hdf5' files`; a TensorFlow
checkpoint path (no such extension) raises `ValueError: File format not supported` whatever the
arguments. `skip_mismatch=True` works with every Keras 3 format: not a finding.

The path is judged only when its ending is known: a string or f-string literal, `a + "..."`,
`os.path.join(..., "...")`, or a local name assigned once from one of those. Dropping `by_name`
makes a Keras 3 file load by the model's structure instead of layer names: unsafe.
"""
from __future__ import annotations

from typing import Optional

import libcst as cst

from tfmigrate.findings import Fix, Replace
from tfmigrate.facts.names import statements_of, dotted
from tfmigrate.rules.base import Rule

_FUNCTIONS = (cst.FunctionDef,)


def _ending(expr) -> Optional[str]:
    """The known last characters of a path expression, else None."""
    if isinstance(expr, cst.SimpleString):
        value = expr.evaluated_value
        return value if isinstance(value, str) else None
    if isinstance(expr, cst.ConcatenatedString):
        return _ending(expr.right)
    if isinstance(expr, cst.FormattedString):
        last = expr.parts[-1] if expr.parts else None
        return last.value if isinstance(last, cst.FormattedStringText) else None
    if isinstance(expr, cst.BinaryOperation) and isinstance(expr.operator, (cst.Add, cst.Divide)):
        return _ending(expr.right)  # `prefix + ".h5"`, `Path(d) / "w.h5"`
    if isinstance(expr, cst.Call) and dotted(expr.func) in ("os.path.join", "path.join", "join") and expr.args:
        last = expr.args[-1]
        return None if last.star or last.keyword else _ending(last.value)
    return None


def _kind(ending: Optional[str]) -> Optional[str]:
    """"legacy" (HDF5, by_name works), "keras3" (.weights.h5 / .keras), "other" or None."""
    if ending is None:
        return None
    low = ending.lower()
    if low.endswith((".weights.h5", ".keras")):
        return "keras3"
    if low.endswith((".h5", ".hdf5", ".hdf", ".he5")):
        return "legacy"
    return "other" if ending else None


def _without(call: cst.Call, arg: cst.Arg) -> cst.Call:
    """The call without `arg`; the argument before it takes its trailing comma."""
    args = list(call.args)
    index = args.index(arg)
    if index == len(args) - 1 and index > 0:
        args[index - 1] = args[index - 1].with_changes(comma=arg.comma)
    del args[index]
    return call.with_changes(args=args)


class LoadWeightsByName(Rule):
    code = "TFM109"

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        if not (isinstance(func, cst.Attribute) and func.attr.value == "load_weights"):
            return
        by_name = next((a for a in node.args if a.keyword and a.keyword.value == "by_name"), None)
        if by_name is None or not (isinstance(by_name.value, cst.Name) and by_name.value.value == "True"):
            return
        path = next((a for a in node.args if a.keyword and a.keyword.value == "filepath"), None)
        if path is None and node.args and node.args[0].keyword is None and not node.args[0].star:
            path = node.args[0]
        if path is None:
            return
        kind = _kind(self._ending(path.value))
        if kind is None or kind == "legacy":
            return
        if kind == "keras3":
            return self.report(
                by_name,
                "`by_name=True` works only with legacy `.h5` / `.hdf5` files: Keras 3 raises "
                "`ValueError` for this file. Drop it to load by the model's structure, or load "
                "into a model of the saved architecture and copy the layers you need.",
                Fix("unsafe", "Remove `by_name=True` (the weights then load by structure, not by layer name)",
                    (Replace(node, _without(node, by_name)),)),
            )
        self.report(
            by_name,
            "`by_name=True` works only with legacy `.h5` / `.hdf5` files, and Keras 3 cannot load "
            "this path at all (a TensorFlow checkpoint is not a Keras weights file). Save the weights "
            "as `.h5` to load by name, or restore the checkpoint with `tf.train.Checkpoint`.",
        )

    def _ending(self, expr) -> Optional[str]:
        if not isinstance(expr, cst.Name):
            return _ending(expr)
        scope = self.ctx.enclosing(_FUNCTIONS)
        body = scope.body.body if scope is not None and isinstance(scope.body, cst.IndentedBlock) else self.ctx.module.body
        values = []
        for stmt in statements_of(body):
            for small in stmt.body if isinstance(stmt, cst.SimpleStatementLine) else ():
                if isinstance(small, (cst.Assign, cst.AnnAssign, cst.AugAssign)):
                    targets = [t.target for t in small.targets] if isinstance(small, cst.Assign) else [small.target]
                    if any(isinstance(t, cst.Name) and t.value == expr.value for t in targets):
                        values.append(small.value if not isinstance(small, cst.AugAssign) else None)
        if scope is not None and expr.value in {p.name.value for p in scope.params.params}:
            return None
        return _ending(values[0]) if len(values) == 1 and values[0] is not None else None
