"""Test classes whose `setUp` makes placeholders and one feed of fixed values that every run feeds:
the placeholders are those values (native.test_files; issue 22, item 2).

    def setUp(self):                                        def setUp(self):
        self.times = pad(...)                                   self.times = pad(...)
        self.times_ph = tf.placeholder(tf.float32, ...)  ->     self.times_ph = tf.constant(self.times, dtype=tf.float32)
        self.feed = {self.times_ph: self.times}
    def test_x(self):                                       def test_x(self):
        y = ops.f(self.times_ph)                                y = ops.f(self.times_ph)
        out = sess.run(y, self.feed)                            out = sess.run(y)

Each run computed from the same values, as TF1's did; the method route (native.test_files) then
makes the tests eager. Only where nothing else is done with them: the placeholders are read by the
graph only (no static shape, name or feed of their own) and not bound again, the feed is only
given to `run` / `eval` and holds every placeholder, its values are bound in `setUp` before the
placeholders and never again, and no other class of the module derives from this one.
"""
from __future__ import annotations

from typing import Callable, Dict, List, Optional, Set, Tuple

import libcst as cst
import libcst.matchers as m

from tfmigrate.native.feed_helpers import RUN_PARAMS, constant_statement, without_feed
from tfmigrate.native.syntax import bind, code, self_attribute, target_names

SETUP = "setUp"
_GRAPH_READS = ("shape", "get_shape", "set_shape", "name", "op", "graph", "consumers")


def constant_setup_feeds(node: cst.ClassDef, api: Callable, tf: str, derived: Set[str]) -> cst.ClassDef:
    """The class with its fixed `setUp` feed made constants, or as it is (`api`: the API path a
    callee names, or None; `derived`: the module's classes some other class derives from)."""
    if node.name.value in derived:
        return node
    methods = [f for f in node.body.body if isinstance(f, cst.FunctionDef)]
    setup = next((f for f in methods if f.name.value == SETUP), None)
    if setup is None:
        return node
    found = _fixed_feed(setup, api)
    if found is None:
        return node
    feed, placeholders, statements = found
    if not _only_fed_and_read(node, feed, placeholders, statements):
        return node
    constants = {id(statements[attribute]): constant_statement(f"self.{attribute}", call, code(value), tf,
                                                               statements[attribute])
                 for attribute, (call, value) in placeholders.items()}
    if any(c is None for c in constants.values()):
        return node
    feed_statement = statements[feed]
    body = [constants.get(id(s), s) for s in setup.body.body if s is not feed_statement]
    new_setup = setup.with_changes(body=setup.body.with_changes(body=body))
    rebuilt = [new_setup if f is setup else f for f in node.body.body]
    return node.with_changes(body=node.body.with_changes(body=rebuilt)).visit(_Unfed(feed))


def _self_attribute(expr) -> Optional[str]:
    """`x` of `self.x`, else None."""
    return expr.attr.value if self_attribute(expr) else None


def _assigned(statement) -> Optional[Tuple[str, cst.BaseExpression]]:
    """(x, value) of `self.x = value` alone on its line."""
    if m.matches(statement, m.SimpleStatementLine(body=[m.Assign(targets=[m.AssignTarget()])])):
        assign = statement.body[0]
        name = _self_attribute(assign.targets[0].target)
        if name is not None:
            return name, assign.value
    return None


def _fixed_feed(setup: cst.FunctionDef, api) -> Optional[Tuple[str, Dict[str, Tuple[cst.Call, cst.BaseExpression]],
                                                                 Dict[str, cst.BaseStatement]]]:
    """(the feed's attribute, placeholder attribute -> (its call, the value fed), attribute -> the
    statement of `setUp` binding it) of `self.feed = {self.x: self.x_value, ...}`, one feed of every
    placeholder `setUp` makes, each value bound before that placeholder; None otherwise."""
    made: Dict[str, cst.Call] = {}
    statements: Dict[str, cst.BaseStatement] = {}
    bound_before: Dict[str, int] = {}  # attribute or name -> index of its first binding
    feeds = []
    for index, statement in enumerate(setup.body.body):
        assigned = _assigned(statement)
        if assigned is not None:
            name, value = assigned
            if name in statements:
                return None  # (bound twice in setUp)
            statements[name] = statement
            bound_before.setdefault(f"self.{name}", index)
            if isinstance(value, cst.Call) and api(value.func) == "placeholder":
                made[name] = value
            elif isinstance(value, cst.Dict) and value.elements and all(
                    isinstance(e, cst.DictElement) and _self_attribute(e.key) is not None for e in value.elements):
                feeds.append((name, value))
        elif m.matches(statement, m.SimpleStatementLine(body=[m.Assign()])):  # (`self.a, b = f(...)`)
            for target in statement.body[0].targets:
                for attribute in filter(None, map(_self_attribute, m.findall(target.target, m.Attribute()))):
                    if attribute in statements:
                        return None  # (bound twice in setUp)
                    statements[attribute] = statement
                    bound_before.setdefault(f"self.{attribute}", index)
                for name in target_names(target.target):
                    bound_before.setdefault(name.value, index)
    if not made or len(feeds) != 1:
        return None
    feed, literal = feeds[0]
    fed = {_self_attribute(e.key): e.value for e in literal.elements}
    if set(fed) != set(made) or len(fed) != len(literal.elements):
        return None
    index_of = {id(s): i for i, s in enumerate(setup.body.body)}
    for attribute, value in fed.items():
        if not (isinstance(value, cst.Name) or _self_attribute(value) is not None):
            return None
        if bound_before.get(code(value), len(index_of)) >= index_of[id(statements[attribute])]:
            return None  # (not known where the placeholder is made)
    return feed, {a: (made[a], fed[a]) for a in made}, statements


def _only_fed_and_read(node: cst.ClassDef, feed: str, placeholders, statements) -> bool:
    """Every use of `self.<feed>` is the feed of a run or eval, every use of a placeholder a read by
    the graph, and neither they nor the values are bound outside their `setUp` statement."""
    values = {_self_attribute(v) for _, v in placeholders.values()} - {None}
    own = {id(statements[a]) for a in list(placeholders) + [feed]} | {id(statements[v]) for v in values if v in statements}
    fed_nodes: Set[int] = set()
    for call in m.findall(node, m.Call(func=m.Attribute(attr=m.Name("run") | m.Name("eval")))):
        try:
            given = bind(call, RUN_PARAMS[call.func.attr.value]).get("feed_dict")
        except ValueError:
            continue
        if given is not None and _self_attribute(given) == feed:
            fed_nodes.add(id(given))
    outside = _Uses(own, set(placeholders) | values | {feed})
    node.visit(outside)
    if outside.rebound:
        return False
    for attribute in outside.reads:
        name = attribute.attr.value
        if name == feed and id(attribute) not in fed_nodes:
            return False
    if outside.graph_reads & set(placeholders) or outside.keys & set(placeholders):
        return False
    # a static shape read where the placeholders are: TF1's had their unknown dimensions, a constant's has none
    return not any(m.findall(f, m.Attribute(attr=m.Name("shape") | m.Name("get_shape") | m.Name("set_shape")))
                   for f in node.body.body if isinstance(f, cst.FunctionDef) and f.name.value != SETUP
                   and any(_self_attribute(a) in placeholders for a in m.findall(f, m.Attribute())))


class _Uses(cst.CSTVisitor):
    """Reads of the watched `self.` attributes outside their own statements, and bindings."""

    def __init__(self, own: Set[int], watched: Set[str]):
        self.own, self.watched = own, watched
        self.reads: List[cst.Attribute] = []
        self.rebound = False
        self.graph_reads: Set[str] = set()  # placeholders whose shape, name, ... are read
        self.keys: Set[str] = set()  # placeholders used as a dict's key (a feed of their own)

    def visit_SimpleStatementLine(self, statement) -> Optional[bool]:
        return id(statement) not in self.own

    def visit_Attribute(self, attribute: cst.Attribute) -> None:
        name = _self_attribute(attribute.value)
        if name in self.watched and attribute.attr.value in _GRAPH_READS:
            self.graph_reads.add(name)
        if _self_attribute(attribute) in self.watched:
            self.reads.append(attribute)

    def visit_DictElement(self, element: cst.DictElement) -> None:
        name = _self_attribute(element.key)
        if name in self.watched:
            self.keys.add(name)

    def visit_AssignTarget(self, target: cst.AssignTarget) -> None:
        for node in m.findall(target, m.Attribute(value=m.Name("self"), attr=m.Name())):
            if node.attr.value in self.watched:
                self.rebound = True

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        if _self_attribute(node.target) in self.watched:
            self.rebound = True


class _Unfed(cst.CSTTransformer):
    """`sess.run(y, self.feed)` -> `sess.run(y)`, `x.eval(feed_dict=self.feed)` -> `x.eval()`."""

    def __init__(self, feed: str):
        self.feed = feed

    def leave_Call(self, original: cst.Call, updated: cst.Call) -> cst.Call:
        if not m.matches(original.func, m.Attribute(attr=m.Name("run") | m.Name("eval"))):
            return updated
        return without_feed(updated, lambda value: _self_attribute(value) == self.feed)
