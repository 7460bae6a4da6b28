"""`tf.contrib.rnn` names that TF1 re-exported from core, read as their core names before the eager rewrite.

`from tensorflow.contrib import rnn` then `rnn.BasicLSTMCell(...)` is TF1's
`tf.nn.rnn_cell.BasicLSTMCell`, the same class. The eager rewrite knows a cell by its core name (it
makes variables, so the function that makes it becomes a tracked layer). Under the contrib name it
saw an ordinary call and wrote the cell inside a `tf.function`, where TF 2.21 has no `tf.contrib`
(measured: `AttributeError: module 'tensorflow' has no attribute 'contrib'`). Lines are kept, so a
Blocker still names the line as written; the contrib import left unused goes with native.tidy.
"""
from __future__ import annotations

from typing import Optional, Union

import libcst as cst

from tfmigrate.facts.graph_words import CONTRIB_RNN_CORE
from tfmigrate.facts.names import ImportTable


def core_spelled(module: cst.Module, source: str) -> Optional[cst.Module]:
    """`module` with each `contrib.rnn` name that core re-exported spelled `<tf>.<core path>`, or
    None if it has none (or no `tensorflow` alias to spell it with)."""
    if "contrib" not in source:
        return None
    names = ImportTable(module, source)
    aliases = sorted(local for local, target in names.aliases.items() if target == "tensorflow")
    if not aliases:
        return None

    class _Spell(cst.CSTTransformer):
        def __init__(self):
            self.changed = False

        def visit_Import(self, node: cst.Import) -> bool:
            return False

        def visit_ImportFrom(self, node: cst.ImportFrom) -> bool:
            return False

        def visit_Attribute(self, node: cst.Attribute) -> bool:
            return self._core(node) is None  # a matched name is replaced whole

        def leave_Attribute(self, original: cst.Attribute, updated: cst.Attribute) -> cst.BaseExpression:
            return self._replaced(original, updated)

        def leave_Name(self, original: cst.Name, updated: cst.Name) -> cst.BaseExpression:
            return self._replaced(original, updated)

        def _core(self, node: Union[cst.Attribute, cst.Name]) -> Optional[str]:
            path = names.api(node)
            if path is None or not path.startswith("contrib.rnn."):
                return None
            return CONTRIB_RNN_CORE.get(path[len("contrib.rnn."):])

        def _replaced(self, original, updated) -> cst.BaseExpression:
            core = self._core(original)
            if core is None:
                return updated
            self.changed = True
            return cst.parse_expression(f"{aliases[0]}.{core}")

    spell = _Spell()
    new = module.visit(spell)
    return new if spell.changed else None
