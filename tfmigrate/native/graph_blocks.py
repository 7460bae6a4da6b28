"""A program's one `with tf.Graph().as_default():` block, and the `with sess.as_default():` in it,
read as the code they hold, for the class and entry-function routes.

    with tf.Graph().as_default():                   sess = tf.Session(config=session_conf)
        sess = tf.Session(config=session_conf)      cnn = TextCNN(...)
        with sess.as_default():               ->    sess.run(tf.global_variables_initializer())
            cnn = TextCNN(...)                      ...
            sess.run(...)

The shape of the text-classification trainers (`TextCNN`) and many research scripts. TF1 built the
graph in a new graph, whose names start afresh, and eager TF2 makes the same names without one; the
session made default is the one its `run`s name. The flat-script route reads these blocks itself
(native.script). Each header becomes a blank line, so every other statement keeps its line and a
Blocker names the line as written. Only a program with one graph and one such block, which names
neither, is read so. One difference is not exact: TF1's graph-level seed (`tf.set_random_seed`)
set before the block did not reach the new graph, so its draws were unseeded and changed from run to
run; the eager program draws from the seed (native.seeded_draws notes a seeded program's draws).
"""
from __future__ import annotations

import re
from typing import List, Optional, Sequence, Set

import libcst as cst

from tfmigrate.facts.names import ImportTable
from tfmigrate.facts.program import code_only


def unwrapped(module: cst.Module, source: str) -> Optional[cst.Module]:
    """`module` with its one graph block (and the session block in it) read as their bodies, or None
    when it has none, or not that shape."""
    if "as_default" not in source or len(re.findall(r"\bGraph\s*\(", code_only(source))) != 1:
        return None
    names = ImportTable(module, source)

    def graph_block(node) -> bool:
        owner = _as_default_of(node)
        return isinstance(owner, cst.Call) and not owner.args and names.api(owner.func) == "Graph"

    def session_block(node, sessions: Set[str]) -> bool:
        owner = _as_default_of(node)
        return isinstance(owner, cst.Name) and owner.value in sessions

    def flattened(body: Sequence[cst.BaseStatement], sessions: Set[str]) -> List[cst.BaseStatement]:
        out: List[cst.BaseStatement] = []
        for statement in body:
            if isinstance(statement, cst.SimpleStatementLine) and len(statement.body) == 1 \
                    and isinstance(statement.body[0], cst.Assign) and len(statement.body[0].targets) == 1 \
                    and isinstance(statement.body[0].targets[0].target, cst.Name) \
                    and isinstance(statement.body[0].value, cst.Call) \
                    and names.api(statement.body[0].value.func) in ("Session", "InteractiveSession"):
                sessions.add(statement.body[0].targets[0].target.value)
            if session_block(statement, sessions):
                out.extend(_opened(statement, flattened(statement.body.body, sessions)))
            else:
                out.append(statement)
        return out

    class _Unwrap(cst.CSTTransformer):
        def __init__(self):
            self.blocks = 0

        def _body(self, body: Sequence[cst.BaseStatement]) -> List[cst.BaseStatement]:
            out: List[cst.BaseStatement] = []
            for statement in body:
                if graph_block(statement):
                    self.blocks += 1
                    out.extend(_opened(statement, flattened(statement.body.body, set())))
                else:
                    out.append(statement)
            return out

        def leave_Module(self, original, updated: cst.Module) -> cst.Module:
            return updated.with_changes(body=self._body(updated.body))

        def leave_FunctionDef(self, original, updated: cst.FunctionDef) -> cst.FunctionDef:
            if not isinstance(updated.body, cst.IndentedBlock):
                return updated
            return updated.with_changes(body=updated.body.with_changes(body=self._body(updated.body.body)))

        def leave_If(self, original, updated: cst.If) -> cst.If:  # `if __name__ == "__main__":`
            return updated.with_changes(body=updated.body.with_changes(body=self._body(updated.body.body)))

    unwrap = _Unwrap()
    new = module.visit(unwrap)
    return new if unwrap.blocks == 1 else None


def _as_default_of(node) -> Optional[cst.BaseExpression]:
    """`X` of a block `with X.as_default():` (one item, no `as`), else None."""
    if not (isinstance(node, cst.With) and len(node.items) == 1 and node.items[0].asname is None
            and isinstance(node.body, cst.IndentedBlock)):
        return None
    item = node.items[0].item
    if isinstance(item, cst.Call) and not item.args and isinstance(item.func, cst.Attribute) \
            and item.func.attr.value == "as_default":
        return item.func.value
    return None


def _opened(block: cst.With, body: List[cst.BaseStatement]) -> List[cst.BaseStatement]:
    """The block's statements, its header a blank line (the lines after keep their numbers), and
    its own leading lines (comments above it) kept above them."""
    if not body:
        return body
    first = body[0]
    header = [*block.leading_lines, cst.EmptyLine(indent=False)]
    return [first.with_changes(leading_lines=[*header, *first.leading_lines]), *body[1:]]
