"""TFM209: `tf.train.*Optimizer` -> `tf.keras.optimizers.*` in TF2-eager code, else the
compat.v1 fallback `tf.compat.v1.train.*Optimizer`.

Measured under TF 2.21 / Keras 3: Keras optimizers have no `minimize`, `compute_gradients` or
`get_slot` and their `apply_gradients` takes no `global_step`, so the Keras rewrite is only
offered when the file is eager by evidence (GradientTape + apply_gradients) and shows none of
those TF1 uses; the argument mapping and the pinned defaults come from the API table
(`args`, `args_removed`, `defaults_changed`, `positional_ok`), checked against the Keras 3
signatures. scripts/gen_api_table.py runs each rewrite for three training steps against TF1's
optimizer; one that ends elsewhere (`differs`: RMSProp, whose mean square TF1 starts at 1.0 and
Keras at 0) is never offered, the compat.v1 fallback is.
"""
from __future__ import annotations

from typing import Optional, Tuple

from tfmigrate.facts import api_table
from tfmigrate.findings import Fix, Replace
from tfmigrate.fixers.api_rename import generic_fix
from tfmigrate.facts.graph_words import TF1_OPTIMIZER_USE
from tfmigrate.facts.references import TF1Ref
from tfmigrate.rules._removed_api import RemovedApiRule

OPTIMIZERS = (
    "train.AdadeltaOptimizer",
    "train.AdagradDAOptimizer",
    "train.AdagradOptimizer",
    "train.AdamOptimizer",
    "train.FtrlOptimizer",
    "train.GradientDescentOptimizer",
    "train.MomentumOptimizer",
    "train.Optimizer",
    "train.ProximalAdagradOptimizer",
    "train.ProximalGradientDescentOptimizer",
    "train.RMSPropOptimizer",
    "train.SyncReplicasOptimizer",
)


def eager_by_evidence(source: str) -> bool:
    return "GradientTape" in source and "apply_gradients" in source and not TF1_OPTIMIZER_USE.search(source)


class V1Optimizer(RemovedApiRule):
    code = "TFM209"
    CLAIMS = OPTIMIZERS

    def describe(self, ref: TF1Ref) -> Tuple[str, Optional[Fix]]:
        name = f"`tf.{ref.path}`"
        replacement = api_table.replacement(ref.path)
        native = replacement if replacement and replacement.get("native") else None
        keras = f"`tf.{native['target']}`" if native else None
        differs = replacement.get("differs") if replacement else None  # the Keras rewrite, run
        if differs:
            keras = f"`tf.{replacement['not_native']}`"
        if ref.spelled_v1:
            name = f"`tf.compat.v1.{ref.path}`"
            hint = f"in TF2-eager code use {keras} with `tf.GradientTape` and `apply_gradients`" if keras else "TF2 code uses `tf.keras.optimizers` with `tf.GradientTape`"
            return f"{name} is TF1-only: it works through `tf.compat.v1`; {hint}. No automatic fix.", None
        if native and eager_by_evidence(self.ctx.source):
            fix = generic_fix(ref, self.ctx)
            if fix is not None:
                if fix.applicability == "unsafe":
                    return f"{name} was removed in TensorFlow 2. {fix.description} with arguments mapped; a TF1-only argument (`use_locking`, ...) is dropped.", fix
                return f"{name} was removed in TensorFlow 2. {fix.description} with arguments mapped.", fix
        fix = self._fallback(ref)
        why = (
            f"{keras} is not a drop-in: {differs}" if differs and eager_by_evidence(self.ctx.source) else
            f"Keras optimizers have no `minimize`/`compute_gradients`/`global_step`, so only TF2-eager code (GradientTape + apply_gradients) can use {keras}"
            if keras
            else "it has no Keras counterpart"
        )
        return f"{name} was removed in TensorFlow 2. {fix.description}; {why}.", fix

    def _fallback(self, ref: TF1Ref) -> Fix:
        reference = self.ctx.names.spelling(f"compat.v1.{ref.path}")
        edits = [Replace(ref.node, reference.expression())]
        edits.extend(reference.import_edits())
        return Fix("safe", f"Replace with `{reference.code}` (compat.v1 fallback, same meaning)", tuple(edits))
