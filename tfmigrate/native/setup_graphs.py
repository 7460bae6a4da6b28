"""Test classes whose `setUp` builds a graph on placeholders that the tests feed, as one
`tf.function` (native.test_files; issue 22, item 2).

A TF1 test class often makes its placeholders and the op under test in `setUp`
(`self.x = tf.placeholder(...)`, `self.y = ops.f(self.x)`, `self.grad = tf.gradients(self.y, self.x)`)
and each test runs it with feeds of its own, often built by a helper (`feed = self._feed(7, seed=3)`,
`{self.x: ...}`). Here `setUp` keeps the build as a `tf.function` whose parameters are the
placeholders, traced from their specs (`input_signature`, without AutoGraph: its Python runs as when
TF1 built the graph), returning what the tests read by name:

    self.x = "x"
    @tf.function(autograph=False, input_signature=[tf.TensorSpec([None, 3], tf.float32)])
    def graph(x):
        y = ops.f(x)
        grad = tf.gradients(y, x)
        return {"y": y, "grad": grad}
    self.graph = graph

Each placeholder attribute becomes its parameter's name, so the feeds the tests build keep their
shape and become keyword arguments: `sess.run(self.y, feed_dict=feed)` becomes `outputs =
self.graph(**feed)` before its statement and `sess.run(outputs["y"])` (a run test_files then makes
`self.evaluate`). Static shapes the tests read (`self.y.get_shape()`, `len(self.grad)`) come from
`graph.get_concrete_function().structured_outputs`, TF1's graph tensors.

A class is left as it is (test_files then names the placeholder that holds it) where this is not
exact: a test builds on the graph's tensors or reads a placeholder other than as a feed's key, a run
feeds only some placeholders or a feed the tests build other than as a dict of them, the graph makes
variables, what it reads changes after `setUp` built it, or the class shares `setUp` with another.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Dict, List, Optional, Set, Tuple

import libcst as cst
import libcst.matchers as m

import tfmigrate.native.feed_helpers as feed_helpers
from tfmigrate.native.syntax import (NotALine, bind, calls_in, code, fresh_name, holds, line_around, names_assigned,
                                     names_in, names_read, self_attribute, tensor_spec)

SETUP = "setUp"
STATIC = ("shape", "get_shape", "dtype")  # what a test reads of a graph tensor without running it
BUILD_REFUSED = ("Variable", "get_variable", "placeholder_with_default", "Session", "global_variables_initializer")


class _Refused(Exception):
    """What holds the class: the node and what it does."""

    def __init__(self, node: cst.CSTNode, what: str):
        super().__init__(what)
        self.node, self.what = node, what


class _NoGraph(_Refused):
    def __init__(self):
        super().__init__(cst.Pass(), "")


@dataclass(frozen=True)
class Refusal:
    """Why a class's `setUp` graph stays: `node` (of the class as given) does `what`."""
    node: cst.CSTNode
    what: str


@dataclass
class _Graph:
    """What `setUp` builds: its placeholders and tensors (`self.<attribute>`) and the statements."""
    placeholders: List[Tuple[str, cst.Call, cst.SimpleStatementLine]] = field(default_factory=list)
    builds: List[cst.SimpleStatementLine] = field(default_factory=list)
    tensors: List[str] = field(default_factory=list)  # attributes the builds assign, in order
    locals_: Set[str] = field(default_factory=set)  # names of `setUp` the builds assign
    params: Dict[str, str] = field(default_factory=dict)  # placeholder attribute -> parameter

    @property
    def attributes(self) -> Set[str]:
        return {a for a, _, _ in self.placeholders} | set(self.tensors)


def setup_graphs(classes: Dict[str, cst.ClassDef], bases: Set[str], is_api: Callable[[cst.BaseExpression, str], bool],
                 tf: str, taken: Set[str]) -> Tuple[Dict[str, cst.ClassDef], Dict[str, Refusal]]:
    """Each class of `classes` (the test classes by name) rewritten where its `setUp` builds a
    graph on placeholders its tests feed; the others as they are. `bases`: names of classes other
    classes derive from; `is_api(node, name)`: `node` is TensorFlow's `name` (`placeholder`);
    `taken`: the module's own names (what a name the rewrite adds must not hide). Also why
    each class whose `setUp` makes placeholders is left as it is."""
    found, refused = {}, {}
    for name, node in classes.items():
        derived = any(isinstance(b.value, cst.Name) and b.value.value in classes for b in node.bases)
        found[name] = node
        try:
            found[name] = _rewritten(node, is_api, tf, taken, shared=name in bases or derived)
        except _NoGraph:
            pass
        except _Refused as refusal:
            refused[name] = Refusal(refusal.node, refusal.what)
    return found, refused


def _rewritten(node: cst.ClassDef, is_api, tf: str, taken: Set[str], shared: bool) -> cst.ClassDef:
    methods = [s for s in node.body.body if isinstance(s, cst.FunctionDef)]
    setup = next((f for f in methods if f.name.value == SETUP), None)
    if setup is None or not any(_placeholder(s, is_api) for s in setup.body.body):
        raise _NoGraph
    if shared:
        raise _Refused(setup, "a `setUp` shared with another test class (a base or a subclass)")
    graph = _graph(setup, is_api)
    if not graph.builds:
        node, written = feed_helpers.inlined(node, {a for a, _, _ in graph.placeholders})
        return _made_in_tests(node, setup, graph, tf, written)
    others = [f for f in methods if f is not setup]
    static = _check_reads(others, graph, methods)
    read = {a.attr.value for f in others for a in m.findall(f, m.Attribute(value=m.Name("self")))}
    outputs = [a for a in graph.tensors if a in read]
    if not outputs:
        raise _Refused(node, "no test reads what it builds")
    _check_trace(setup, graph, methods)
    used = set(names_in(setup)) | taken  # (the names the graph function may see: it shadows the rest)
    for attribute, _, _ in graph.placeholders:
        graph.params[attribute] = fresh_name(used, attribute.strip("_") or "x")
    attributes = {a.attr.value for a in m.findall(node, m.Attribute(value=m.Name("self")))}
    function = fresh_name(attributes | used, "graph")
    replaced = {}
    for other in others:
        outputs_name = fresh_name(set(names_in(other)) | taken, "outputs")
        rewritten = _rewritten_runs(other, graph, function, outputs_name, methods)
        if rewritten is not other:
            replaced[id(other)] = rewritten
    if not replaced:
        raise _Refused(node, "no test that runs what it builds")
    replaced[id(setup)] = _rewritten_setup(setup, graph, outputs, [a for a in outputs if a in static], function,
                                           used, tf)
    body = [replaced.get(id(s), s) for s in node.body.body]
    return node.with_changes(body=node.body.with_changes(body=body))


def _placeholder(statement, is_api) -> Optional[Tuple[str, cst.Call]]:
    """(x, the call) of `self.x = tf.placeholder(...)`."""
    small = statement.body[0] if isinstance(statement, cst.SimpleStatementLine) and len(statement.body) == 1 else None
    if isinstance(small, cst.Assign) and len(small.targets) == 1 and self_attribute(small.targets[0].target) \
            and isinstance(small.value, cst.Call) and is_api(small.value.func, "placeholder"):
        return small.targets[0].target.attr.value, small.value
    return None


def _graph(setup: cst.FunctionDef, is_api) -> _Graph:
    """The placeholders `setUp` makes and the statements building on them (each `a = ...` of
    names and `self` attributes alone on its line); refused where `setUp` reads them otherwise."""
    graph = _Graph()
    for statement in setup.body.body:
        placeholder = _placeholder(statement, is_api)
        if placeholder is not None:
            attribute, call = placeholder
            try:
                bound = bind(call, ("dtype", "shape", "name"))
            except ValueError:
                raise _Refused(call, "a placeholder given `*args`")
            if "dtype" not in bound or _reads_graph(call, graph) or attribute in graph.attributes:
                raise _Refused(call, "a placeholder without a dtype, made from the graph, or made again")
            graph.placeholders.append((attribute, call, statement))
            continue
        if not _reads_graph(statement, graph):
            if graph.placeholders and _targets(statement) is not None and \
                    ({f"self.{a}" for a in graph.attributes} | graph.locals_) & _target_codes(statement):
                raise _Refused(statement, "a tensor of the graph assigned again")
            continue
        targets = _targets(statement)
        if targets is None:
            raise _Refused(statement, "a statement building on them other than `a = ...`")
        if any(is_api(c.func, refused) for c in calls_in(statement) for refused in BUILD_REFUSED):
            raise _Refused(statement, "a variable or a session made from them")
        if any(isinstance(c.func, cst.Attribute) and self_attribute(c.func) for c in calls_in(statement)):
            raise _Refused(statement, "a helper method building on them (it may read the placeholders)")
        graph.builds.append(statement)
        for target in targets:
            if isinstance(target, cst.Name):
                graph.locals_.add(target.value)
            elif target.attr.value not in graph.tensors:
                graph.tensors.append(target.attr.value)
    return graph


def _targets(statement) -> Optional[List[cst.BaseExpression]]:
    """The names and `self` attributes `a, self.b = ...` assigns, alone on its line; else None."""
    small = statement.body[0] if isinstance(statement, cst.SimpleStatementLine) and len(statement.body) == 1 else None
    if not isinstance(small, cst.Assign):
        return None
    found = []
    for target in small.targets:
        elements = [e.value for e in target.target.elements] if isinstance(target.target, cst.Tuple) else [target.target]
        for element in elements:
            if not (isinstance(element, cst.Name) or self_attribute(element)):
                return None
            found.append(element)
    return found


def _target_codes(statement) -> Set[str]:
    return {code(t) for t in _targets(statement) or ()}


def _reads_graph(node, graph: _Graph) -> bool:
    loaded = {code(a) for a in m.findall(node, m.Attribute(value=m.Name("self")))}
    return bool(loaded & {f"self.{a}" for a in graph.attributes}) or bool(names_read(node) & graph.locals_)


def _check_trace(setup: cst.FunctionDef, graph: _Graph, methods: List[cst.FunctionDef]) -> None:
    """The graph is traced after `setUp` (at its first call or static read): what it reads must
    not change after its first placeholder, and `setUp` must not read its locals afterwards."""
    moved = {id(s) for s in graph.builds} | {id(s) for _, _, s in graph.placeholders}
    statements = list(setup.body.body)
    first = min(k for k, s in enumerate(statements) if id(s) in moved)
    inside = [s for s in statements if id(s) in moved]
    read = set().union(*(names_read(s) for s in inside))
    read_attributes = {a.attr.value for s in inside for a in m.findall(s, m.Attribute(value=m.Name("self")))}
    for statement in statements[first:]:
        if id(statement) in moved:
            continue
        attributes = {t.attr.value for t in _assigned_nodes(statement) if self_attribute(t)}
        if names_assigned(statement) & read or names_read(statement) & graph.locals_ or \
                attributes & (read_attributes - graph.attributes):
            raise _Refused(statement, "`setUp` changing what the graph reads, or reading its tensors, after "
                                      "building it")
    for method in methods:
        assigned = {code(t) for t in _assigned_nodes(method)}
        if {f"self.{a}" for a in read_attributes - graph.attributes} & assigned and method.name.value != SETUP:
            raise _Refused(method, "a test changing what the graph reads before it is traced")


def _assigned_nodes(node) -> List[cst.BaseExpression]:
    """What `a = ...`, `a += ...` and `for a in ...` under `node` assign (tuples taken apart)."""
    found = []
    for target in [*(t.target for t in m.findall(node, m.AssignTarget())), *(t.target for t in m.findall(
            node, m.AugAssign())), *(t.target for t in m.findall(node, m.For()))]:
        if isinstance(target, (cst.Tuple, cst.List)):
            found.extend(e.value for e in target.elements)
        else:
            found.append(target)
    return found


def _check_reads(others: List[cst.FunctionDef], graph: _Graph, methods: List[cst.FunctionDef]) -> Set[str]:
    """Refused unless each method reads a placeholder only as a feed's key (`{self.x: ...}`,
    `feed[self.x]`) and a tensor only in a run's fetch or by a static read. The tensors read
    statically."""
    placeholders = {a for a, _, _ in graph.placeholders}
    static: Set[str] = set()
    for method in others:
        allowed: Set[int] = set()
        for element in m.findall(method, m.DictElement(key=m.Attribute(value=m.Name("self")))):
            allowed.add(id(element.key))
        for subscript in m.findall(method, m.SubscriptElement(slice=m.Index(value=m.Attribute(value=m.Name("self"))))):
            allowed.add(id(subscript.slice.value))
        static_reads = _static_reads(method)
        fetched: Set[int] = set()
        for call, fetch, _ in _runs(method):
            fetched |= {id(a) for a in m.findall(fetch, m.Attribute(value=m.Name("self")))}
        for attribute in m.findall(method, m.Attribute(value=m.Name("self"))):
            name = attribute.attr.value
            if name not in graph.attributes:
                continue
            if name in placeholders:
                if id(attribute) not in allowed:
                    raise _Refused(attribute, "a placeholder read other than as a feed's key")
            elif id(attribute) in fetched:
                continue
            elif id(attribute) in static_reads:
                static.add(name)
            else:
                raise _Refused(attribute, "a tensor of the graph read other than by a run or for its static shape "
                                          "(a test building on it)")
        for target in [*m.findall(method, m.AssignTarget()), *m.findall(method, m.AugAssign())]:
            if code(target.target) in {f"self.{a}" for a in graph.attributes}:
                raise _Refused(target, "a test assigning the graph's tensor")
    return static


def _static_reads(method) -> Set[int]:
    """The ids of what the method reads statically: `self.y.get_shape()`, `self.y.shape`,
    `self.y.dtype`, `len(self.y)` (of `self.y`, or of a field or an element of it:
    `self.y.mean.shape`, `self.y[0].shape`)."""
    found: Set[int] = set()
    for outer in m.findall(method, m.Attribute(attr=m.OneOf(*(m.Name(s) for s in STATIC)))):
        base = outer.value
        found.add(id(base))
        while isinstance(base, (cst.Attribute, cst.Subscript)):
            base = base.value
            found.add(id(base))
    found.update(id(c.args[0].value) for c in m.findall(method, m.Call(func=m.Name("len"))) if len(c.args) == 1)
    return found


def _runs(method) -> List[Tuple[cst.Call, cst.BaseExpression, Optional[cst.BaseExpression]]]:
    """(call, fetch, feed) of each `X.run(fetch, feed)` and `t.eval(feed)` in the method."""
    found = []
    for call in calls_in(method):
        func = call.func
        if not isinstance(func, cst.Attribute) or func.attr.value not in ("run", "eval"):
            continue
        params = ("fetches", "feed_dict") if func.attr.value == "run" else ("feed_dict",)
        try:
            bound = bind(call, params)
        except ValueError:
            continue
        if set(bound) - set(params):
            continue
        fetch = bound.get("fetches") if func.attr.value == "run" else func.value
        if fetch is not None:
            found.append((call, fetch, bound.get("feed_dict")))
    return found


def _rewritten_runs(method: cst.FunctionDef, graph: _Graph, function: str, outputs_name: str,
                    methods: List[cst.FunctionDef]) -> cst.FunctionDef:
    """Each run of the graph's tensors a call of the graph function before its statement."""
    tensors = set(graph.tensors)
    inserted: Dict[int, cst.SimpleStatementLine] = {}
    runs: Dict[int, cst.Call] = {}
    for call, fetch, feed in _runs(method):
        if not {a.attr.value for a in m.findall(fetch, m.Attribute(value=m.Name("self")))} & tensors:
            continue
        arguments = _arguments(method, feed, graph, methods)
        line = _statement_of(method, call)
        made = cst.parse_statement(f"{outputs_name} = self.{function}({arguments})\n")
        if id(line) in inserted and code(inserted[id(line)]) != code(made):
            raise _Refused(line, "two feeds in one statement")
        if isinstance(feed, cst.Dict) and calls_in(feed) and any(
                not holds(c, call) for c in calls_in(line)[:calls_in(line).index(call)]):
            raise _Refused(line, "a feed drawn after another call of its statement")
        inserted[id(line)] = made
        runs[id(call)] = call
    if not runs:
        return method
    return method.visit(_Writer(inserted, runs, tensors, outputs_name))


def _arguments(method, feed, graph: _Graph, methods: List[cst.FunctionDef]) -> str:
    """The graph call's arguments: the feed written out as keywords, or `**feed`."""
    if isinstance(feed, cst.Dict):
        _check_keys(feed, graph)
        fed = [f"{graph.params[e.key.attr.value]}={code(e.value).strip()}" for e in feed.elements]
        arguments = ", ".join(fed)
        return "\n" + "".join(f"    {a},\n" for a in fed) if len(arguments) > 70 or "\n" in arguments else arguments
    if isinstance(feed, cst.Call) and _helper_feed(feed, graph, methods):
        return f"**{code(feed)}"
    if not isinstance(feed, cst.Name):
        raise _Refused(feed, "a feed other than a dict of the placeholders, a name or a helper returning one")
    bound = [a for a in m.findall(method, m.Assign()) if any(
        isinstance(t.target, cst.Name) and t.target.value == feed.value for t in a.targets)]
    if len(bound) != 1 or len(bound[0].targets) != 1 or feed.value in names_assigned(cst.Module(body=[
            s for s in method.body.body if not any(a is bound[0] for a in m.findall(s, m.Assign()))])):
        raise _Refused(feed, "a feed assigned more than once")
    value = bound[0].value
    if isinstance(value, cst.Dict):
        _check_keys(value, graph)
    elif not (isinstance(value, cst.Call) and _helper_feed(value, graph, methods)):
        raise _Refused(feed, "a feed other than a dict of the placeholders, a name or a helper returning one")
    for use in m.findall(method, m.Attribute(value=m.Name(feed.value))):
        raise _Refused(use, "a feed changed by a method of it")
    return f"**{feed.value}"


def _check_keys(feed: cst.Dict, graph: _Graph) -> None:
    """Every placeholder fed once, nothing else: the graph function takes them all."""
    keys = []
    for element in feed.elements:
        if not isinstance(element, cst.DictElement) or not self_attribute(element.key) \
                or element.key.attr.value not in graph.params or _reads_graph(element.value, graph):
            raise _Refused(feed, "a feed other than a dict of every placeholder once")
        keys.append(element.key.attr.value)
    if sorted(keys) != sorted(graph.params):
        raise _Refused(feed, "a feed other than a dict of every placeholder once")


def _helper_feed(call: cst.Call, graph: _Graph, methods: List[cst.FunctionDef]) -> bool:
    """`self._feed(...)`, a method of the class whose every `return` is a dict of all the placeholders."""
    if not (isinstance(call.func, cst.Attribute) and self_attribute(call.func)):
        return False
    helper = next((f for f in methods if f.name.value == call.func.attr.value), None)
    returns = m.findall(helper, m.Return()) if helper is not None else []
    if not returns:
        return False
    for found in returns:
        if not isinstance(found.value, cst.Dict):
            return False
        _check_keys(found.value, graph)
    return True


def _statement_of(method: cst.FunctionDef, call: cst.Call) -> cst.SimpleStatementLine:
    try:
        return line_around(method, call)
    except NotALine as why:
        raise _Refused(call, "a run inside a lambda, a comprehension or a nested function" if why.nested
                       else "a run in a condition or a `with` rather than a statement")


class _Writer(cst.CSTTransformer):
    """The graph call before each statement that ran it; the run without its feed, fetching the outputs."""

    def __init__(self, inserted, runs, tensors: Set[str], outputs_name: str):
        self.inserted, self.runs, self.tensors, self.outputs_name = inserted, runs, tensors, outputs_name
        self.fetching = 0

    def visit_Call(self, node) -> None:
        if id(node) in self.runs:
            self.fetching += 1

    def leave_Attribute(self, original, updated):
        if self.fetching and self_attribute(original) and original.attr.value in self.tensors:
            return cst.parse_expression(f'{self.outputs_name}["{original.attr.value}"]')
        return updated

    def leave_Call(self, original, updated):
        if id(original) not in self.runs:
            return updated
        self.fetching -= 1
        if original.func.attr.value == "eval":
            return updated.with_changes(args=[])
        first = next(a for a in updated.args if a.keyword is None or a.keyword.value == "fetches")
        return updated.with_changes(args=[first.with_changes(comma=cst.MaybeSentinel.DEFAULT)])

    def leave_SimpleStatementLine(self, original, updated):
        if id(original) in self.inserted:
            return cst.FlattenSentinel([self.inserted[id(original)].with_changes(leading_lines=updated.leading_lines),
                                        updated.with_changes(leading_lines=[])])
        return updated


def _rewritten_setup(setup: cst.FunctionDef, graph: _Graph, outputs: List[str], static: List[str], function: str,
                     used: Set[str], tf: str) -> cst.FunctionDef:
    """The placeholders named by their parameters, the builds moved into the graph function,
    defined where the last of them was."""
    local: Dict[str, str] = dict(graph.params)
    for attribute in graph.tensors:
        local[attribute] = fresh_name(used, attribute.strip("_") or "y")
    specs = []
    for attribute, call, _ in graph.placeholders:
        bound = bind(call, ("dtype", "shape", "name"))
        specs.append(tensor_spec(bound, tf))
    signature = f"[{', '.join(specs)}]"
    if len(signature) > 60 or "\n" in signature:
        signature = "[\n" + "".join(f"    {spec},\n" for spec in specs) + "]"
    header = cst.parse_statement(f"@{tf}.function(autograph=False, input_signature={signature})\n"
                                 f"def {function}({', '.join(graph.params[a] for a, _, _ in graph.placeholders)}):\n"
                                 f"    pass\n")
    body = [s.visit(_Locals(local)) for s in graph.builds]
    body[0] = body[0].with_changes(leading_lines=[])
    returned = ", ".join(f'"{a}": {local[a]}' for a in outputs)
    body.append(cst.parse_statement(f"return {{{returned}}}\n"))
    made = [header.with_changes(body=header.body.with_changes(body=body), leading_lines=graph.builds[0].leading_lines),
            cst.parse_statement(f"self.{function} = {function}\n").with_changes(
                leading_lines=[cst.EmptyLine(indent=False)])]
    if static:
        structured = fresh_name(used, "static")
        made.append(cst.parse_statement(f"{structured} = {function}.get_concrete_function().structured_outputs\n"))
        made.append(cst.parse_statement(
            f"{', '.join(f'self.{a}' for a in static)} = {', '.join(f'{structured}[{chr(34)}{a}{chr(34)}]' for a in static)}\n"))
    placeholders = {id(s): a for a, _, s in graph.placeholders}
    last = id(graph.builds[-1])
    dropped = {id(s) for s in graph.builds[:-1]}
    new_body = []
    for statement in setup.body.body:
        if id(statement) in placeholders:
            attribute = placeholders[id(statement)]
            new_body.append(statement.with_changes(body=[cst.parse_statement(
                f'self.{attribute} = "{graph.params[attribute]}"\n').body[0]]))
        elif id(statement) == last:
            made[0] = made[0].with_changes(leading_lines=[cst.EmptyLine(indent=False), *made[0].leading_lines])
            new_body.extend(made)
        elif id(statement) not in dropped:
            new_body.append(statement)
    return setup.with_changes(body=setup.body.with_changes(body=new_body))


class _Locals(cst.CSTTransformer):
    """`self.x` of the graph as the function's name for it."""

    def __init__(self, local: Dict[str, str]):
        self.local = local

    def leave_Attribute(self, original, updated):
        if self_attribute(original) and original.attr.value in self.local:
            return cst.Name(self.local[original.attr.value])
        return updated


def _made_in_tests(node: cst.ClassDef, setup: cst.FunctionDef, graph: _Graph, tf: str,
                   written: Set[str] = frozenset()) -> cst.ClassDef:
    """Placeholders `setUp` makes and only the tests build on (trfl's `self.observations_ph`):
    each test makes its own, as if written at its top (TF1's test and its `setUp` share one
    graph), from the spec `setUp` keeps of it (`tf.TensorSpec`, its shape as `setUp` computed
    it). test_files then treats it as any placeholder of the test: a constant of what a single
    run feeds it, a traced function's parameter, a traced check's. `written`: helpers that only
    build a feed of them, written out where the tests called them (native.feed_helpers)."""
    placeholders = {a: call for a, call, _ in graph.placeholders}
    replaced = {}
    for method in node.body.body:
        if not isinstance(method, cst.FunctionDef) or method is setup:
            continue
        reads = [a for a in m.findall(method, m.Attribute(value=m.Name("self"))) if a.attr.value in placeholders]
        if not reads or method.name.value in written:
            continue
        if not method.name.value.startswith("test"):
            raise _Refused(reads[0], "a helper method reading them (each test would make its own)")
        for target in [*m.findall(method, m.AssignTarget()), *m.findall(method, m.AugAssign())]:
            if self_attribute(target.target) and target.target.attr.value in placeholders:
                raise _Refused(target, "a test assigning one")
        taken = set(names_in(method))
        local = {}
        made = []
        for attribute, _, _ in graph.placeholders:
            if any(a.attr.value == attribute for a in reads):
                local[attribute] = fresh_name(taken, attribute.strip("_") or "x")
                made.append(cst.parse_statement(f"{local[attribute]} = {tf}.placeholder("
                                                f"self.{attribute}.dtype, self.{attribute}.shape)\n"))
        body = list(method.body.visit(_Locals(local)).body)
        first = 1 if body and m.matches(body[0], m.SimpleStatementLine(body=[m.Expr(value=m.SimpleString())])) else 0
        made[0] = made[0].with_changes(leading_lines=body[first].leading_lines if first < len(body) else [])
        if first < len(body):
            body[first] = body[first].with_changes(leading_lines=[])
        body[first:first] = made
        replaced[id(method)] = method.with_changes(body=method.body.with_changes(body=body))
    if not replaced:
        raise _Refused(setup, "placeholders no test reads")
    new_setup = []
    for statement in setup.body.body:
        placeholder = next((a for a, _, s in graph.placeholders if s is statement), None)
        if placeholder is None:
            new_setup.append(statement)
            continue
        call = placeholders[placeholder]
        func = cst.parse_expression(f"{tf}.TensorSpec")
        if all(a.keyword is not None for a in call.args):  # (its arguments as written)
            spec = call.with_changes(func=func)
        else:
            bound = bind(call, ("dtype", "shape", "name"))
            spec = cst.parse_expression(tensor_spec(bound, tf, named=True))
        new_setup.append(statement.with_changes(body=[statement.body[0].with_changes(value=spec)]))
    replaced[id(setup)] = setup.with_changes(body=setup.body.with_changes(body=new_setup))
    return node.with_changes(body=node.body.with_changes(body=[replaced.get(id(s), s) for s in node.body.body]))
