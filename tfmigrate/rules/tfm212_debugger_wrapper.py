"""TFM212: tfdbg v1 (`from tensorflow.python import debug as tf_debug`): wrapper sessions and
hooks that only wrap a `tf.compat.v1.Session`. TF2: Debugger V2. Guidance only, no fix.

`tensorflow.python.*` is private and not in the API table, so the references are found by the
whole-path route of tfmigrate.facts.references, which resolves `python.debug` paths.
"""
from __future__ import annotations

from typing import Optional, Tuple

from tfmigrate.findings import Fix
from tfmigrate.facts.references import GoneRef, TF1Ref
from tfmigrate.rules._gone_api import GoneApiRule, spelled_gone

V2 = (
    "call `tf.debugging.experimental.enable_dump_debug_info(logdir, tensor_debug_mode=\"FULL_HEALTH\")` "
    "once and open TensorBoard's Debugger V2"
)


class DebuggerWrapper(GoneApiRule):
    code = "TFM212"
    CLAIMS = ("python.debug",)

    def describe(self, ref: TF1Ref) -> Tuple[str, Optional[Fix]]:
        leaf = ref.path.split(".")[-1]
        if isinstance(ref, GoneRef) and ref.statement is not None:
            return (
                "tfdbg v1 (`tensorflow.python.debug`) is private TF1-era API: its wrapper sessions and hooks "
                f"work only around a `tf.compat.v1.Session`. In TF2, {V2}. No automatic fix.",
                None,
            )
        if leaf.endswith(("WrapperSession", "Hook")):
            return (
                f"`{spelled_gone(ref)}` wraps a TF1 `Session` (tfdbg v1): TF2 code has no session to wrap. "
                f"Instead, {V2}. No automatic fix.",
                None,
            )
        return f"`{spelled_gone(ref)}` is tfdbg v1 API (TF1-only): in TF2, {V2}. No automatic fix.", None
