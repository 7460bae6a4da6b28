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
from tfmigrate.native.class_facts import self_attr


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


def class_graphs_unwrapped(module: cst.Module, source: str) -> Optional[cst.Module]:
    """`module` with the graph a class makes for itself read away, or None when no class does so.

        def __init__(self, config):                     def __init__(self, config):
            self.graph = tf.Graph()                          (a blank line)
            with self.graph.as_default():       ->          (a blank line)
                self.build_graph()                          self.build_graph()
            self.sess = tf.Session(graph=self.graph)        self.sess = tf.Session()

    (the `BaseModel` of many research programs). Each object built its graph in a graph of its own,
    whose names and op seeds start afresh; eager objects make theirs in their own `tf.Module`, and a
    `tf.set_random_seed` in the block restarts the op seeds as before. Only a graph set in `__init__`
    and used by nothing but `with self.<g>.as_default():` and `Session(graph=self.<g>)` is read so."""
    if "as_default" not in source:
        return None
    names = ImportTable(module, source)
    changed = [False]

    class _Unwrap(cst.CSTTransformer):
        def __init__(self):
            self.attrs: List[Set[str]] = []

        def visit_ClassDef(self, node: cst.ClassDef) -> None:
            self.attrs.append(_own_graphs(node, names, module))

        def leave_ClassDef(self, original, updated: cst.ClassDef) -> cst.ClassDef:
            self.attrs.pop()
            return updated

        def _body(self, body: Sequence[cst.BaseStatement]) -> List[cst.BaseStatement]:
            attrs = self.attrs[-1] if self.attrs else set()
            out: List[cst.BaseStatement] = []
            pending: List[cst.EmptyLine] = []
            for statement in body:
                owner = _as_default_of(statement)
                if _graph_made(statement, attrs, names):
                    pending += [*statement.leading_lines, cst.EmptyLine(indent=False)]
                    changed[0] = True
                    continue
                if owner is not None and self_attr(owner) in attrs:
                    opened = _opened(statement, list(statement.body.body))
                    changed[0] = True
                else:
                    opened = [statement]
                if pending and opened:
                    opened[0] = opened[0].with_changes(leading_lines=[*pending, *opened[0].leading_lines])
                    pending = []
                out.extend(opened)
            if pending:
                out.append(cst.SimpleStatementLine([cst.Pass()], leading_lines=pending))
            return out

        def leave_IndentedBlock(self, original, updated: cst.IndentedBlock) -> cst.IndentedBlock:
            return updated.with_changes(body=self._body(updated.body))

        def leave_Arg(self, original, updated: cst.Arg):
            if self.attrs and updated.keyword is not None and updated.keyword.value == "graph" \
                    and self_attr(updated.value) in self.attrs[-1]:
                changed[0] = True
                return cst.RemoveFromParent()
            return updated

    new = module.visit(_Unwrap())
    return new if changed[0] else None


def _own_graphs(cls: cst.ClassDef, names: ImportTable, module: cst.Module) -> Set[str]:
    """The attributes `self.<g>` that `cls.__init__` sets to a new `tf.Graph()` and that are used
    only as `with self.<g>.as_default():` and `Session(graph=self.<g>)`, in the class alone."""
    init = next((s for s in cls.body.body if isinstance(s, cst.FunctionDef) and s.name.value == "__init__"), None)
    if init is None:
        return set()
    made = {self_attr(s.body[0].targets[0].target) for s in init.body.body
            if isinstance(s, cst.SimpleStatementLine) and _graph_made(s, None, names)}
    made.discard(None)
    if not made:
        return set()
    allowed: Set[int] = set()
    uses: dict = {attr: 0 for attr in made}

    class _Uses(cst.CSTVisitor):
        def visit_With(self, node: cst.With) -> None:
            owner = _as_default_of(node)
            if owner is not None and self_attr(owner) in made:
                allowed.add(id(owner))

        def visit_Call(self, node: cst.Call) -> None:
            if names.api(node.func) in ("Session", "InteractiveSession"):
                allowed.update(id(a.value) for a in node.args if a.keyword is not None and a.keyword.value == "graph")

        def visit_Assign(self, node: cst.Assign) -> None:
            if len(node.targets) == 1 and isinstance(node.value, cst.Call) and names.api(node.value.func) == "Graph":
                allowed.add(id(node.targets[0].target))

        def visit_Attribute(self, node: cst.Attribute) -> None:
            if node.attr.value in made:
                uses[node.attr.value] += 0 if id(node) in allowed else 1

    init.visit(_Uses())
    for statement in cls.body.body:
        if statement is not init:
            statement.visit(_Uses())
    # anywhere else in the module (`model.graph`): the attribute is used as a graph
    outside = _Uses()
    for statement in module.body:
        if statement is not cls and not (isinstance(statement, cst.ClassDef) and statement.name.value == cls.name.value):
            statement.visit(outside)
    return {attr for attr in made if uses[attr] == 0}


def _graph_made(statement, attrs: Optional[Set[str]], names: ImportTable) -> bool:
    """`self.<g> = tf.Graph()` (`g` one of `attrs`, or any when None)."""
    if not (isinstance(statement, cst.SimpleStatementLine) and len(statement.body) == 1):
        return False
    small = statement.body[0]
    if not (isinstance(small, cst.Assign) and len(small.targets) == 1 and isinstance(small.value, cst.Call)
            and not small.value.args and names.api(small.value.func) == "Graph"):
        return False
    attr = self_attr(small.targets[0].target)
    return attr is not None and (attrs is None or attr in attrs)
