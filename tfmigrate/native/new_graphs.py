"""`g = tf.Graph()` then `with g.as_default():` in a test, read as `with tf.Graph().as_default() as
g:` (issue 22 item 2), the one spelling test_files opens like a test session: eagerly there is no
graph to build in. Only where `g` is read nowhere but in that `with` and as the `graph=g` of the
test sessions inside it (what TF1 ran in that graph), so nothing else sees it gone. And
`with tf.Graph().as_default(), self.test_session():` read as the two `with`s it means, nested.
"""
from __future__ import annotations

from typing import Dict, Optional

import libcst as cst
import libcst.matchers as m

from tfmigrate.native.syntax import name_counts


def bound_graphs(function: cst.FunctionDef, api) -> cst.FunctionDef:
    """`function` with each such pair written as one `with`; `api(node)`: the TensorFlow API a
    node names (`Graph`)."""
    visitor = _Bound(name_counts(function), api)
    written = function.visit(visitor)
    return written if visitor.changed else function  # (the same nodes: test_files finds their lines)


class _Bound(cst.CSTTransformer):
    def __init__(self, counts: Dict[str, int], api):
        self.counts, self.api = counts, api
        self.changed = False

    def leave_IndentedBlock(self, original, updated):
        body = list(updated.body)
        k = 0
        while k + 1 < len(body):
            made = self._graph_made(body[k])
            following = body[k + 1]
            if made is not None and isinstance(following, cst.With) and len(following.items) == 1 \
                    and following.items[0].asname is None and m.matches(following.items[0].item, m.Call(
                        func=m.Attribute(value=m.Name(made[0]), attr=m.Name("as_default")), args=[])):
                name, graph = made
                given = m.findall(following.body, m.Arg(keyword=m.Name("graph"), value=m.Name(name)))
                if self.counts.get(name) == 2 + len(given):
                    item = following.items[0].with_changes(
                        item=following.items[0].item.with_changes(func=following.items[0].item.func.with_changes(
                            value=graph)),
                        asname=cst.AsName(name=cst.Name(name)))
                    body[k + 1] = following.with_changes(items=[item], leading_lines=[
                        *body[k].leading_lines, *following.leading_lines])
                    del body[k]
                    self.changed = True
                    continue
            k += 1
        return updated.with_changes(body=body)

    def leave_With(self, original, updated):
        if len(updated.items) < 2 or not m.matches(updated.items[0].item, m.Call(
                func=m.Attribute(attr=m.Name("as_default")), args=[])):
            return updated
        inner = updated.with_changes(items=[updated.items[1].with_changes(comma=cst.MaybeSentinel.DEFAULT),
                                            *updated.items[2:]], leading_lines=[])
        inner = inner.with_changes(items=[*inner.items[:-1], inner.items[-1].with_changes(
            comma=cst.MaybeSentinel.DEFAULT)]) if len(inner.items) > 1 else inner
        outer = updated.items[0].with_changes(comma=cst.MaybeSentinel.DEFAULT)
        self.changed = True
        return updated.with_changes(items=[outer], body=cst.IndentedBlock(body=[inner]))

    def _graph_made(self, statement) -> Optional[tuple]:
        """(g, the `tf.Graph()` call) of `g = tf.Graph()`."""
        if m.matches(statement, m.SimpleStatementLine(body=[m.Assign(targets=[m.AssignTarget(target=m.Name())],
                                                                     value=m.Call(args=[]))])) \
                and self.api(statement.body[0].value.func) == "Graph":
            return statement.body[0].targets[0].target.value, statement.body[0].value
        return None
