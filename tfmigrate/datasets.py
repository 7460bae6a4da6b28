"""Is this expression a `tf.data` dataset? Evidence-based, so `np.repeat`, a user's own object
with a `repeat` or `map` method, or `nest.map_structure` are never mistaken for one.

Evidence, any of:
- a chain rooted in a `tf.data` call: `tf.data.TFRecordDataset(f).map(...)`;
- a name assigned (anywhere in the module) from such a chain, or from a dataset name's method;
- a conventional dataset name (`dataset`, `ds`, `train_dataset`, `self._dataset`) in a module
  that imports TensorFlow.
"""
from __future__ import annotations

import re
from typing import Optional, Set

import libcst as cst

from tfmigrate.names import ImportTable, _statements, dotted

# Methods of tf.data.Dataset that return a dataset: a chain of them keeps dataset-ness.
DATASET_METHODS = frozenset(
    """apply batch bucket_by_sequence_length cache concatenate enumerate filter flat_map
    group_by_window ignore_errors interleave map padded_batch parallel_interleave prefetch
    rebatch rejection_resample repeat sample_from_datasets scan shard shuffle skip snapshot
    take take_while unbatch unique window with_options zip""".split()
)
_NAME_PATTERN = re.compile(r"^_*(\w+_)?(dataset|ds)$", re.IGNORECASE)


class DatasetNames:
    def __init__(self, module: cst.Module, names: ImportTable):
        self.names = names
        self.assigned: Set[str] = set()
        # Two passes so that `b = a.batch(2)` after `a = tf.data...` is seen whatever the order.
        for _ in range(2):
            for stmt in _statements(module.body):
                if not isinstance(stmt, cst.SimpleStatementLine):
                    continue
                for small in stmt.body:
                    if isinstance(small, cst.Assign) and self.is_dataset(small.value):
                        for target in small.targets:
                            name = dotted(target.target)
                            if name:
                                self.assigned.add(name)

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
