"""TFM216: with `--native`, a module of TF1 graph code that `fix --native` cannot rewrite as eager
TF2, and the construct that stops it.

`fix --native` rewrites a whole graph script before any other fix (engine._native, tfmigrate.native);
a module it leaves alone keeps the compat route (TFM200), and this finding says why, so the user
knows what to migrate by hand (or what tfmigrate would need to learn).
"""
from __future__ import annotations

import libcst as cst

from tfmigrate.rule import Rule

_HOW = {
    "TF1 summaries": "write them with `tf.summary.create_file_writer(...)` and `tf.summary.scalar(..., step=)`",
    "`tf.train.Saver`": "save and restore with `tf.train.Checkpoint`",
    "graph collections": "keep the objects in Python lists or on a `tf.Module`",
}


class NotNative(Rule):
    code = "TFM216"

    @classmethod
    def applies_to(cls, ctx) -> bool:
        return bool(getattr(ctx, "native", False)) and ctx.names.has_tensorflow and ctx.program.graph

    def leave_Module(self, node: cst.Module) -> None:
        from tfmigrate.native import rewrite

        outcome = rewrite(self.ctx.source)
        if outcome.blocker is None:
            return
        imports = self.ctx.program.tf_imports()
        if not imports:
            return
        target = imports[0][1]
        target = target.name if isinstance(target, cst.ImportAlias) else target
        blocker = outcome.blocker
        how = next((text for key, text in _HOW.items() if blocker.construct.startswith(key)), None)
        advice = f" To migrate it by hand, {how}." if how else ""
        self.report(target, (
            f"`fix --native` cannot rewrite this module as eager TF2: {blocker.construct} at line "
            f"{blocker.line} is not among the constructs it rewrites (placeholders, variables, "
            "`tf.layers`, tensors, `minimize`, a Session and its `run` calls). The module keeps "
            f"TensorFlow's compat route (TFM200).{advice}"), None, debt=True)
