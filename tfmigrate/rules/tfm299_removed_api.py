"""TFM299: any TF1-only symbol (from the measured API table) that no more specific TFM2xx rule
claims: renamed to its TF2-native replacement when that is a drop-in, else to `tf.compat.v1`.

Also the Dataset iterator methods TF2 removed (`dataset.make_one_shot_iterator()`,
`make_initializable_iterator()`: AttributeError under TF 2.21). They are methods, not `tf.*`
paths, so the table cannot see them: a call with no arguments of either name, in a file that
imports TensorFlow, is reported (the names belong to tf.data alone). The fix is the compat.v1
function of the same meaning, which keeps graph-mode code working.
"""
import libcst as cst

from tfmigrate.findings import Fix, Replace
from tfmigrate.rules._removed_api import RemovedApiRule

_ITERATOR_METHODS = ("make_one_shot_iterator", "make_initializable_iterator")


class RemovedApi(RemovedApiRule):
    code = "TFM299"

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        if type(func) is not cst.Attribute or func.attr.value not in _ITERATOR_METHODS or node.args:
            return
        if self.ctx.names.api(func) is not None:
            return  # a tf.* path: the table's business
        method = func.attr.value
        reference = self.ctx.names.spelling(f"compat.v1.data.{method}")
        edits = [Replace(node, cst.Call(func=reference.expression(), args=[cst.Arg(func.value)]))]
        edits.extend(reference.import_edits())
        self.report(
            func.attr,
            f"`Dataset.{method}()` was removed in TensorFlow 2 (AttributeError under TF 2.21). In "
            "eager code iterate the dataset (`for x in dataset`, `iter(dataset)`); graph-mode code "
            f"keeps working with `tf.compat.v1.data.{method}(dataset)`.",
            Fix("safe", f"Replace with `{reference.code}(...)` (compat.v1 fallback)", tuple(edits)),
        )
