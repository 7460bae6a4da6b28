"""Is this expression a `tf.data` dataset? Evidence-based, so `np.repeat`, a user's own object
with a `repeat` or `map` method, or `nest.map_structure` are never mistaken for one.

Evidence, any of:
- a chain rooted in a `tf.data` call: `tf.data.TFRecordDataset(f).map(...)`;
- a name assigned (anywhere in the module) from such a chain, or from a dataset name's method;
- a conventional dataset name (`dataset`, `ds`, `train_dataset`, `self._dataset`) in a module
  that imports TensorFlow;
- a call of a function (or method, `self.input_fn()`) of the module whose `return` gives a
  dataset: `make_dataset(files).repeat(False)`.
"""
from __future__ import annotations

import re
from typing import Optional, Set

import libcst as cst

from tfmigrate.facts.names import dotted, statements_of
from tfmigrate.facts.nodes import children

# Methods of tf.data.Dataset that return a dataset: a chain of them keeps dataset-ness.
DATASET_METHODS = frozenset(
    """apply batch bucket_by_sequence_length cache concatenate enumerate filter flat_map
    group_by_window ignore_errors interleave map padded_batch parallel_interleave prefetch
    rebatch rejection_resample repeat sample_from_datasets scan shard shuffle skip snapshot
    take take_while unbatch unique window with_options zip""".split()
)
_NAME_PATTERN = re.compile(r"^_*(\w+_)?(dataset|ds)$", re.IGNORECASE)


class DatasetNames:
    needs = ()

    def __init__(self, ctx):
        module = ctx.module
        self.names = ctx.names
        self.assigned: Set[str] = set()
        self.returners: Set[str] = set()  # functions of the module that return a dataset
        # Each function's own `return` statements, found once for the three passes.
        functions = [(f, list(_returns(f))) for f in statements_of(module.body) if isinstance(f, cst.FunctionDef)]
        # Passes so that `b = a.batch(2)` after `a = tf.data...`, and a function returning
        # another's dataset, are seen whatever the order.
        for _ in range(3):
            for stmt in statements_of(module.body):
                if not isinstance(stmt, cst.SimpleStatementLine):
                    continue
                for small in stmt.body:
                    if isinstance(small, cst.Assign) and self.is_dataset(small.value):
                        for target in small.targets:
                            name = dotted(target.target)
                            if name:
                                self.assigned.add(name)
            for function, returns in functions:
                if function.name.value not in self.returners and any(
                        r.value is not None and self.is_dataset(r.value) for r in returns):
                    self.returners.add(function.name.value)

    def root(self, expr: cst.BaseExpression) -> cst.BaseExpression:
        """Strip trailing dataset-method calls: `ds.shuffle(9).batch(2)` -> `ds`."""
        while (
            isinstance(expr, cst.Call)
            and isinstance(expr.func, cst.Attribute)
            and expr.func.attr.value in DATASET_METHODS
        ):
            expr = expr.func.value
        return expr

    def is_dataset(self, expr: cst.BaseExpression) -> bool:
        base = self.root(expr)
        if isinstance(base, cst.Call):
            func = base.func
            if self.returners and (isinstance(func, cst.Name) and func.value in self.returners or
                                   isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name)
                                   and func.value.value in ("self", "cls") and func.attr.value in self.returners):
                return True
            api = self.names.api(base.func)
            return api is not None and api.startswith("data.")
        name = dotted(base)
        if name is None or not self.names.has_tensorflow:
            return False
        return name in self.assigned or bool(_NAME_PATTERN.match(name.rsplit(".", 1)[-1]))

    def receiver(self, call: cst.Call, method: str) -> Optional[cst.BaseExpression]:
        """The object of `X.method(...)` when X is a dataset, else None."""
        func = call.func
        if isinstance(func, cst.Attribute) and func.attr.value == method and self.is_dataset(func.value):
            return func.value
        return None


def _returns(function: cst.FunctionDef):
    """The `return` statements of `function` itself (not of functions or classes inside it)."""
    stack = [function.body]
    while stack:
        node = stack.pop()
        if isinstance(node, cst.Return):
            yield node
        elif not isinstance(node, (cst.FunctionDef, cst.ClassDef, cst.Lambda, cst.BaseExpression)):
            stack.extend(children(node))  # formatting nodes hold no statement
