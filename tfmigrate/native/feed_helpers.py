"""Feeds written out where a test's run reads them (issue 22 item 2): a test class's helper that
only builds the feed of its `setUp` placeholders (`inlined`), and a feed named just before its run
(`named_feeds`).

    def _feed(self, logits, lengths):                   (kept as it is, no longer called)
        return {self.logits: logits, self.lengths: lengths}

    sess.run(loss, feed_dict=self._feed(*batch))   ->   sess.run(loss, feed_dict={self.logits: batch[0],
                                                                                  self.lengths: batch[1]})

Each test then makes its own placeholders (setup_graphs._made_in_tests) and its feeds are dicts of
them, which test_files turns into constants or a traced function's arguments. Only a helper whose
body is one `return {self.p: param, ...}` of its own parameters (each once, no defaults) or of
what `setUp` kept (`self.p_np`, read at the call as the helper read it), called
with arguments that bind one by one or as one `*args` alone; the argument expressions are
evaluated in the same order as TF1's call evaluated them (its parameters' order).
"""
from __future__ import annotations

from typing import Callable, Dict, List, Optional, Set, Tuple

import libcst as cst
import libcst.matchers as m

from tfmigrate.native.syntax import bind, bound_names, code, fresh_name, name_counts, names_assigned


def inlined(node: cst.ClassDef, placeholders: Set[str]) -> Tuple[cst.ClassDef, Set[str]]:
    """`node` with each test's calls of its feed helpers written out, and the helpers whose every
    call was (so that none is left to read the placeholders)."""
    helpers = {f.name.value: feed for f in node.body.body if isinstance(f, cst.FunctionDef)
               and not f.name.value.startswith("test") and (feed := _feed(f, placeholders)) is not None}
    if not helpers:
        return node, set()
    calls = {name: 0 for name in helpers}
    written = {name: 0 for name in helpers}
    replaced = {}
    for method in node.body.body:
        if not isinstance(method, cst.FunctionDef):
            continue
        for call in m.findall(method, m.Call(func=m.Attribute(value=m.Name("self"), attr=m.Name()))):
            if call.func.attr.value in helpers:
                calls[call.func.attr.value] += 1
        for attribute in m.findall(method, m.Attribute(value=m.Name("self"), attr=m.Name())):
            if attribute.attr.value in helpers and not any(attribute is c.func for c in m.findall(method, m.Call())):
                calls[attribute.attr.value] += 1  # (read other than called: never all written)
        if not method.name.value.startswith("test"):
            continue
        visitor = _Written(helpers)
        rewritten = method.visit(visitor)
        for name, count in visitor.done.items():
            written[name] += count
        if rewritten is not method:
            replaced[id(method)] = rewritten
    done = {name for name in helpers if calls[name] and written[name] == calls[name]}
    if not done:
        return node, set()
    body = [replaced.get(id(s), s) for s in node.body.body]
    return node.with_changes(body=node.body.with_changes(body=body)), done


def _feed(function: cst.FunctionDef, placeholders: Set[str]) -> Optional[Tuple[List[str], cst.Dict]]:
    """(its parameters after `self`, the dict it returns) of a feed helper, else None."""
    params = function.params
    if params.star_arg not in (None, cst.MaybeSentinel.DEFAULT) or params.kwonly_params or params.star_kwarg \
            or params.posonly_params or any(p.default is not None for p in params.params):
        return None
    names = [p.name.value for p in params.params]
    if not names or names[0] != "self":
        return None
    body = [s for s in function.body.body
            if not m.matches(s, m.SimpleStatementLine(body=[m.Expr(value=m.SimpleString())]))]
    if len(body) != 1 or not m.matches(body[0], m.SimpleStatementLine(body=[m.Return(value=m.Dict())])):
        return None
    feed = body[0].body[0].value
    values = []
    for element in feed.elements:
        if not isinstance(element, cst.DictElement) or not m.matches(
                element.key, m.Attribute(value=m.Name("self"), attr=m.Name())) \
                or element.key.attr.value not in placeholders:
            return None
        if m.matches(element.value, m.Attribute(value=m.Name("self"), attr=m.Name())) \
                and element.value.attr.value not in placeholders:
            continue  # (`self.labels_np`, what `setUp` kept: read at the call as the helper read it)
        if not isinstance(element.value, cst.Name):
            return None
        values.append(element.value.value)
    if sorted(values) != sorted(names[1:]) or len(set(values)) != len(values):
        return None
    return names[1:], feed


class _Written(cst.CSTTransformer):
    def __init__(self, helpers: Dict[str, Tuple[List[str], cst.Dict]]):
        self.helpers = helpers
        self.done: Dict[str, int] = {}

    def leave_Call(self, original: cst.Call, updated: cst.Call) -> cst.BaseExpression:
        if not m.matches(original.func, m.Attribute(value=m.Name("self"), attr=m.Name())) \
                or original.func.attr.value not in self.helpers:
            return updated
        params, feed = self.helpers[original.func.attr.value]
        bound = _bound(updated, params, [e.value.value for e in feed.elements if isinstance(e.value, cst.Name)])
        if bound is None:
            return updated
        self.done[original.func.attr.value] = self.done.get(original.func.attr.value, 0) + 1
        elements = [e.with_changes(value=bound[e.value.value]) if isinstance(e.value, cst.Name) else e
                    for e in feed.elements]
        return feed.with_changes(elements=elements)


def _bound(call: cst.Call, params: List[str], order: List[str]) -> Optional[Dict[str, cst.BaseExpression]]:
    """Each parameter's argument expression, bound one by one (positional then keywords) or all from
    one `*args` (`args[i]`); None where the dict (read in `order`) would evaluate in another order
    than the call did arguments that may draw or change state (`rng.randn(...)`)."""
    if len(call.args) == 1 and call.args[0].star == "*" and isinstance(call.args[0].value, cst.Name):
        star = call.args[0].value.value
        return {p: cst.parse_expression(f"{star}[{i}]") for i, p in enumerate(params)}
    try:
        bound = bind(call, params)
    except ValueError:
        return None
    if set(bound) != set(params) or len(bound) != len(call.args):
        return None
    if list(bound) != order and any(m.findall(v, m.Call()) for v in bound.values()):
        return None  # (only calls may draw or change state)
    return bound


RUN_PARAMS = {"run": ("fetches", "feed_dict"), "eval": ("feed_dict",)}
_PLAIN = m.Name() | m.Attribute(value=m.Name()) | m.Integer() | m.Float() | m.SimpleString() | m.Subscript(value=m.Name())


def named_feeds(function: cst.FunctionDef) -> cst.FunctionDef:
    """`feed = {x: ...}` written just before the one run that feeds it (in a loop too), written into
    that run: `sess.run([a, b], feed_dict={x: ...})`, as test_files reads feeds. Only where `feed` is
    read nowhere else and what the run fetches is names (evaluated before the dict either way)."""
    visitor = _NamedFeeds(name_counts(function))
    written = function.visit(visitor)
    return written if visitor.changed else function  # (the same nodes: test_files finds their lines)


class _NamedFeeds(cst.CSTTransformer):
    def __init__(self, counts: Dict[str, int]):
        self.counts = counts
        self.changed = False

    def leave_IndentedBlock(self, original, updated):
        body = list(updated.body)
        k = 0
        while k + 1 < len(body):
            name = _feed_assigned(body[k])
            if name is not None and self.counts.get(name) == 2:
                run = _run_feeding(body[k + 1], name)
                if run is not None:
                    feed = body[k].body[0].value
                    written = body[k + 1].visit(_Fed({id(run)}, feed))
                    body[k + 1] = written.with_changes(leading_lines=[*body[k].leading_lines,
                                                                      *written.leading_lines])
                    del body[k]
                    self.changed = True
                    continue
            k += 1
        return updated.with_changes(body=body)


def shared_feeds(function: cst.FunctionDef) -> cst.FunctionDef:
    """`feed = {x: a, noise: rng.randn(5)}` at the top of a test, read only as the feed of the runs
    after it (`sess.run(y, feed_dict=feed)`, twice), written into each run: `{x: a, noise:
    feed_noise}`, a value that calls anything first named where the dict was (so it is computed
    once, in the dict's order). Only where nothing after the dict rebinds what its keys name."""
    body = list(function.body.body)
    counts = name_counts(function)
    taken = set(counts)
    for index, statement in enumerate(body):
        name = _feed_assigned(statement)
        if name is None:
            continue
        feed = statement.body[0].value
        if any(not isinstance(e, cst.DictElement) or m.findall(e.key, m.Call()) for e in feed.elements):
            continue
        runs = [call for s in body[index + 1:] for call, _ in _feeding(s, name)]
        keys = {n.value for e in feed.elements for n in m.findall(e.key, m.Name())}
        if not runs or counts.get(name) != 1 + len(runs) or any(
                keys & names_assigned(s) for s in body[index + 1:]):
            continue
        named, elements = [], []
        for element in feed.elements:
            value = element.value
            if not m.matches(value, _PLAIN):
                key = element.key.value if isinstance(element.key, cst.Name) else "value"
                value_name = fresh_name(taken, f"{name}_{key}")
                named.append(cst.SimpleStatementLine([cst.Assign([cst.AssignTarget(cst.Name(value_name))], value)]))
                value = cst.Name(value_name)
            elements.append(element.with_changes(value=value))
        written = feed.with_changes(elements=elements)
        rest = [s.visit(_Fed({id(run) for run in runs}, written)) for s in body[index + 1:]]
        if named:
            named[0] = named[0].with_changes(leading_lines=statement.leading_lines)
        elif rest:
            rest[0] = rest[0].with_changes(leading_lines=[*statement.leading_lines, *rest[0].leading_lines])
        body = [*body[:index], *named, *rest]
        return shared_feeds(function.with_changes(body=function.body.with_changes(body=body)))
    return function


def _feeding(statement, name: str) -> List[Tuple[cst.Call, Dict[str, cst.BaseExpression]]]:
    """Each `.run(...)` / `.eval(...)` in `statement` whose feed is `name`, with its bound arguments."""
    found = []
    for call in m.findall(statement, m.Call(func=m.Attribute(attr=m.Name("run") | m.Name("eval")))):
        try:
            bound = bind(call, RUN_PARAMS[call.func.attr.value])
        except ValueError:
            continue
        if m.matches(bound.get("feed_dict"), m.Name(name)):
            found.append((call, bound))
    return found


def _feed_assigned(statement) -> Optional[str]:
    if m.matches(statement, m.SimpleStatementLine(body=[m.Assign(targets=[m.AssignTarget(target=m.Name())],
                                                                 value=m.Dict())])):
        return statement.body[0].targets[0].target.value
    return None


def _run_feeding(statement, name: str) -> Optional[cst.Call]:
    """The `.run(fetches, feed_dict=name)` / `.eval(feed_dict=name)` call of `statement` feeding `name`."""
    if not isinstance(statement, cst.SimpleStatementLine):
        return None
    for call, bound in _feeding(statement, name):
        if all(m.matches(f, _PLAIN | m.List(elements=[m.ZeroOrMore(m.Element(value=_PLAIN))])
                         | m.Tuple(elements=[m.ZeroOrMore(m.Element(value=_PLAIN))]))
               for key, f in bound.items() if key != "feed_dict"):
            return call
    return None


class _Fed(cst.CSTTransformer):
    """The runs given by identity, fed `feed` in place of the name they were fed."""

    def __init__(self, runs: Set[int], feed: cst.Dict):
        self.runs, self.feed = runs, feed

    def leave_Call(self, original, updated):
        if id(original) not in self.runs:
            return updated
        fed = bind(original, RUN_PARAMS[original.func.attr.value])["feed_dict"]
        return updated.with_changes(args=[new.with_changes(value=self.feed) if old.value is fed else new
                                          for old, new in zip(original.args, updated.args)])


def constant_feeds(function: cst.FunctionDef, api, tf: str) -> cst.FunctionDef:
    """`x = tf.placeholder(tf.float32, [None, 12])` fed the same value at every run that feeds it
    (`{x: data}`, `data` bound once before the placeholder): `x = tf.constant(data, dtype=tf.float32)`,
    out of every feed (a feed left empty goes). Each run then computes from the same value, as TF1's
    did. Only where no static shape of the placeholder is read in the test (the constant's is the
    value's) and the placeholder is read only as a feed's key or by the graph."""
    body = list(function.body.body)
    params = {p.name.value for p in m.findall(function.params, m.Param())}
    feeds = [(call, bound["feed_dict"]) for call in m.findall(function, m.Call(func=m.Attribute(
        attr=m.Name("run") | m.Name("eval")))) if (bound := _bound_run(call)) is not None
        and isinstance(bound.get("feed_dict"), cst.Dict)]
    replaced: Dict[int, cst.BaseStatement] = {}
    dropped: Set[int] = set()  # id(DictElement) no longer fed
    for index, statement in enumerate(body):
        placeholder = _placeholder_made(statement, api)
        if placeholder is None:
            continue
        name, call = placeholder
        fed = [e for _, feed in feeds for e in feed.elements
               if isinstance(e, cst.DictElement) and m.matches(e.key, m.Name(name))]
        values = {code(e.value) for e in fed}
        if not fed or len(values) != 1 or not isinstance(fed[0].value, cst.Name) or _bindings(function, name) != 1:
            continue
        value = fed[0].value.value
        binds = _bindings(function, value)
        if not ((value in params and binds == 0) or (binds == 1 and any(value in names_assigned(s)
                                                                          for s in body[:index]))):
            continue  # (a value known where the placeholder is made, the same at every run)
        if any(m.matches(a, m.Attribute(attr=m.Name("shape") | m.Name("get_shape") | m.Name("set_shape")))
               for a in m.findall(function, m.Attribute())):
            continue
        made = constant_statement(name, call, value, tf, statement)
        if made is None:
            continue
        replaced[id(statement)] = made
        dropped |= {id(e) for e in fed}
    if not replaced:
        return function
    body = [replaced.get(id(s), s) for s in body]
    return function.with_changes(body=function.body.with_changes(body=body)).visit(_Unfed(dropped))


def constant_statement(target: str, placeholder: cst.Call, value: str, tf: str,
                       statement: cst.BaseStatement) -> Optional[cst.SimpleStatementLine]:
    """`target = tf.constant(value, dtype=...)` in the place of `statement`, of the placeholder's
    dtype; None when the placeholder's call does not name one."""
    try:
        dtype = bind(placeholder, ("dtype", "shape", "name")).get("dtype")
    except ValueError:
        return None
    if dtype is None:
        return None
    made = cst.parse_statement(f"{target} = {tf}.constant({value}, dtype={code(dtype)})\n")
    return made.with_changes(leading_lines=statement.leading_lines)


def _bound_run(call: cst.Call) -> Optional[Dict[str, cst.BaseExpression]]:
    try:
        return bind(call, RUN_PARAMS[call.func.attr.value])
    except ValueError:
        return None


def _placeholder_made(statement, api) -> Optional[Tuple[str, cst.Call]]:
    """(x, the call) of `x = tf.placeholder(...)` alone on its line."""
    if m.matches(statement, m.SimpleStatementLine(body=[m.Assign(targets=[m.AssignTarget(target=m.Name())],
                                                                 value=m.Call())])):
        assign = statement.body[0]
        if api(assign.value.func) == "placeholder":
            return assign.targets[0].target.value, assign.value
    return None


def _bindings(function: cst.FunctionDef, name: str) -> int:
    """How often the test's body binds `name` (assignments, loop and `with` targets)."""
    return sum(1 for bound in bound_names(function.body) if bound.value == name)


class _Unfed(cst.CSTTransformer):
    """The feeds without the elements given by identity; a feed left empty goes from its run."""

    def __init__(self, dropped: Set[int]):
        self.dropped = dropped

    def leave_Dict(self, original, updated):
        if not any(id(e) in self.dropped for e in original.elements):
            return updated
        kept = [new for old, new in zip(original.elements, updated.elements) if id(old) not in self.dropped]
        if kept:
            kept[-1] = kept[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)
        return updated.with_changes(elements=kept)

    def leave_Call(self, original, updated):
        return without_feed(updated, lambda value: isinstance(value, cst.Dict) and not value.elements)


def without_feed(call: cst.Call, dropped: Callable[[cst.BaseExpression], bool]) -> cst.Call:
    """`call` without its feed arguments (by position or `feed_dict=`) whose value `dropped` picks."""
    args = [a for a in call.args if not (dropped(a.value) and (a.keyword is None or a.keyword.value == "feed_dict"))]
    if len(args) == len(call.args):
        return call
    if args:
        args[-1] = args[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)
    return call.with_changes(args=args)
