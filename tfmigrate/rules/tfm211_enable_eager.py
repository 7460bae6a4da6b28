"""TFM211: `tf.enable_eager_execution()` and the other switches to TF2 behaviour, which TF2 has
on by default: the call statement is removed."""

from tfmigrate.findings import Fix
from tfmigrate.fixers.statements import remove_call_statement
from tfmigrate.fixers.api_rename import generic_fix
from tfmigrate.rules._removed_api import RemovedApiRule, fallback_message
from tfmigrate.facts.graph_words import SWITCH_OFF_WORD
from tfmigrate.facts.source_search import SourceSearch

_WHAT = {
    "enable_eager_execution": "turns on eager execution",
    "enable_v2_behavior": "turns on TF2 behaviour",
    "enable_resource_variables": "turns on resource variables",
    "enable_v2_tensorshape": "turns on the TF2 TensorShape",
    "enable_control_flow_v2": "turns on TF2 control flow",
}


class EnableEager(RemovedApiRule):
    code = "TFM211"
    reads = (SourceSearch,)
    CLAIMS = (
        *_WHAT,
        "contrib.eager.enable_eager_execution",
        "contrib.eager.python.tfe.enable_eager_execution",
    )

    def describe(self, ref):
        fix = None
        if ref.call is not None and not self.ctx.fact(SourceSearch).found(SWITCH_OFF_WORD):
            removal = remove_call_statement(ref.call, self.ctx.stack)
            if removal is not None:
                # Arguments (a device policy, a ConfigProto) configure more than the switch.
                safety = "unsafe" if ref.call.args else "safe"
                fix = Fix(safety, "Remove the statement (TF2-native: TF2 does this by default)", removal)
        if fix is None and not ref.spelled_v2:
            fix = generic_fix(ref, self.ctx)
        short = ref.path.rsplit(".", 1)[-1]
        what = _WHAT.get(short, "turns on eager execution")
        todo = "TensorFlow 2 does this by default, so drop the call"
        if ref.spelled_v2:  # `tf.compat.v2` keeps it for TF 1.15 code: it runs, and does nothing
            return (
                f"`tf.compat.v2.{ref.path}` {what}, which TensorFlow 2 has on by default; it runs under "
                "TF 2.21 (only `tf.compat.v2` keeps it, for code that also ran on TF 1.15); "
                + ("the fix removes the statement (TF2-native)." if fix else "drop it once TF 1.15 is not supported."),
                fix,
            )
        if ref.section == "gone":
            return (
                f"`tf.{ref.path}` {what} through `tf.contrib`, which TensorFlow 2 removed. {todo}; "
                + ("the fix removes the statement (TF2-native)." if fix else "there is no automatic fix."),
                fix,
            )
        return fallback_message(ref, what, todo, fix), fix
