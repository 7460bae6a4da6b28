"""TFM105: `Dataset.repeat(True)` / `repeat(False)`: a bool is a count, so 1 or 0, silently."""
import libcst as cst

from tfmigrate.fixers.calls import drop_method_call, without_arguments
from tfmigrate.findings import Fix, Replace
from tfmigrate.rules.base import Rule
from tfmigrate.facts.datasets import DatasetNames


def _bool_count(call: cst.Call):
    """True/False when the call's only argument (positional or `count=`) is a bool literal."""
    if len(call.args) != 1:
        return None
    arg = call.args[0]
    if arg.star or (arg.keyword is not None and arg.keyword.value != "count"):
        return None
    if isinstance(arg.value, cst.Name) and arg.value.value in ("True", "False"):
        return arg.value.value == "True"
    return None


class RepeatBool(Rule):
    code = "TFM105"
    reads = (DatasetNames,)

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        if not (isinstance(func, cst.Attribute) and func.attr.value == "repeat"):
            return
        count = _bool_count(node)
        if count is None or self.ctx.fact(DatasetNames).receiver(node, "repeat") is None:
            return
        if count:
            self.report(
                func.attr,
                "`repeat(True)` repeats the data once, not forever: `True` is a count of 1. "
                "Use `repeat()` to repeat forever, or drop the call to read the data once.",
                Fix("unsafe", "Replace with `repeat()`, which makes the dataset infinite",
                    (Replace(node, without_arguments(node)),)),
            )
        else:
            self.report(
                func.attr,
                "`repeat(False)` repeats the data zero times: the dataset is empty "
                "(and fails right after `shuffle`). Drop the call to read the data once.",
                Fix("safe", "Remove `.repeat(False)`", (Replace(node, drop_method_call(node)),)),
            )
