"""TFM208: `tf.train.Saver` -> TF2's object-based `tf.train.Checkpoint`; the fix is the
compat.v1 fallback `tf.compat.v1.train.Saver` (same meaning), because Checkpoint is a different
API with a different checkpoint format."""
from __future__ import annotations

from typing import Optional, Tuple

from tfmigrate.findings import Fix, Replace
from tfmigrate.facts.references import TF1Ref
from tfmigrate.rules._removed_api import RemovedApiRule

GUIDANCE = (
    "use `tf.train.Checkpoint(model=..., optimizer=...)` with `tf.train.CheckpointManager` "
    "(object-based: a different API and file format)"
)


class Saver(RemovedApiRule):
    code = "TFM208"
    CLAIMS = ("train.Saver",)

    def describe(self, ref: TF1Ref) -> Tuple[str, Optional[Fix]]:
        if ref.spelled_v1:
            return (
                f"`tf.compat.v1.train.Saver` is TF1-only (graph mode, name-based checkpoints): {GUIDANCE}. "
                "No automatic fix.",
                None,
            )
        reference = self.ctx.names.spelling("compat.v1.train.Saver")
        edits = [Replace(ref.node, reference.expression())]
        edits.extend(reference.import_edits())
        fix = Fix("safe", f"Replace with `{reference.code}` (compat.v1 fallback, same meaning)", tuple(edits))
        return (
            f"`tf.train.Saver` was removed in TensorFlow 2. {fix.description}; to move to TF2, {GUIDANCE}.",
            fix,
        )
