"""TF1 calls whose TF2 function of the same name reads its positional arguments otherwise, kept TF1's.

`tf.nn.in_top_k(logits, labels, 1)` is TF1's (predictions, targets, k); TF2's `tf.nn.in_top_k`
takes (targets, predictions, k). A graph module keeps TF1's meaning through the compat route, but
`fix --native` writes `import tensorflow as tf`, and nothing in the eager program says the call was
TF1's any more (measured: `TypeError: Input 'predictions' of 'InTopKV2' Op has type int32`). Before
the rewrite, such a call is spelled `tf.compat.v1.<path>`: TF1's function, which runs eagerly, so
the rewrite keeps its meaning (and TFM299 reports it as debt). Only the measured API table's
positional changes without a fixer of their own (`transformer`: those the fix loop rewrites in
TF1 code, `nn.dropout`'s keep_prob among them) are spelled so.
"""
from __future__ import annotations

from functools import lru_cache
from typing import List, Optional

import libcst as cst

from tfmigrate.facts import api_table
from tfmigrate.facts.names import ImportTable


def _reordered(path: str, call: cst.Call) -> bool:
    """Whether a positional argument of `call` means another parameter in TF2 than in TF1."""
    entry = api_table.changed_signature(path)
    if entry is None or entry.get("transformer") or not entry.get("v1_positional"):
        return False
    v1, v2, renamed = entry["v1_positional"], entry.get("v2_params") or [], entry.get("args") or {}
    for index, arg in enumerate(call.args):
        if arg.star:
            return True
        if arg.keyword is not None:
            break
        old = v1[index] if index < len(v1) else None
        if old is None:
            continue
        new = v2[index] if index < len(v2) else None
        if renamed.get(old, old) != new:
            return True
    return False


@lru_cache(maxsize=1)
def _leaves() -> List[str]:
    changed = api_table.table()["changed"]
    return sorted({path.rsplit(".", 1)[-1] for path, entry in changed.items()
                   if entry.get("v1_positional") and not entry.get("transformer") and _moved(entry)})


def _moved(entry) -> bool:
    """Whether some positional argument means another parameter in TF2."""
    v2, renamed = entry.get("v2_params") or [], entry.get("args") or {}
    return any(old is not None and renamed.get(old, old) != (v2[i] if i < len(v2) else None)
               for i, old in enumerate(entry["v1_positional"]))


def spelled_v1(module: cst.Module, source: str) -> Optional[cst.Module]:
    """`module` with each reordered TF1 call spelled through `tf.compat.v1`, or None if it has none."""
    if not any(leaf + "(" in source for leaf in _leaves()):
        return None
    names = ImportTable(module, source)
    aliases = names.tensorflow_aliases()
    if not aliases:
        return None

    class _Spell(cst.CSTTransformer):
        def __init__(self):
            self.changed = False

        def leave_Call(self, original: cst.Call, updated: cst.Call) -> cst.Call:
            func = cst.Module([]).code_for_node(original.func)
            prefix = func.split(".")[0]
            path = names.api(original.func)
            if path is None or prefix not in aliases or ".compat." in func or not _reordered(path, original):
                return updated
            self.changed = True  # (under `import tensorflow.compat.v1 as tf` too: the rewrite imports `tensorflow`)
            return updated.with_changes(func=cst.parse_expression(f"{prefix}.compat.v1.{path}"))

    spell = _Spell()
    new = module.visit(spell)
    return new if spell.changed else None

