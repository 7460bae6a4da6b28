"""Test methods that run their placeholders' graph with several feeds, as `tf.function`s
(native.test_files; issue 22, item 2).

A TF1 test often builds one graph on placeholders and runs it more than once: a batch of each
size, feeds in a loop, values drawn at random, or reads the static shapes of what it built before
running it. One constant per placeholder (test_files) cannot say that. Here each run of
placeholders and the statements that build on them become a `tf.function` whose parameters are
the placeholders, traced from their specs (`input_signature`, without AutoGraph: its Python runs
as TF1's did when it built the graph), returning what the test reads later; each graph run becomes
a call with the values it fed, by keyword in the feed's order (its draws made in the same order),
just before the statement that ran it: `values = graph(q_values=[[50, 51]], actions=[1])`, the run
then reading `values` (test_files makes it `self.evaluate(values)`). Static shapes read before any
run are read from the traced function's `structured_outputs`, as TF1's graph had them.

`graphed` gives None where this does not say the same as the graph (test_files then names what
held the test): a run feeding only some of the placeholders or a key that is not one of them, a
tensor built from placeholders after they ran or used other than by a run or a static-shape read,
a placeholder fed in a comprehension or a lambda, variables made from placeholders.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Dict, List, Optional, Sequence, Set, Tuple

import libcst as cst

from tfmigrate.native.syntax import (NotALine, bind, calls_in, code, found_in, fresh_name, holds, line_around,
                                     name_nodes, names_assigned, names_read, self_attribute, target_names, tensor_spec)

STATIC = ("shape", "get_shape", "dtype")  # what a test reads of a tensor while the graph is built
Run = Tuple[cst.Call, Optional[cst.Dict]]  # a graph run and the dict it feeds


@dataclass
class _Segment:
    """Placeholders made together and the statements building on them, up to their first run."""
    placeholders: List[Tuple[str, cst.Call, cst.SimpleStatementLine]] = field(default_factory=list)
    builds: List[cst.SimpleStatementLine] = field(default_factory=list)
    runs: List[Run] = field(default_factory=list)
    static: bool = False  # its static shapes are read (before it ran)
    read_later: Set[str] = field(default_factory=set)  # what it built that runs or static reads read
    ran: bool = False

    def params(self) -> List[str]:
        return [name for name, _, _ in self.placeholders]

    def outputs(self) -> List[str]:
        built = []
        for statement in self.builds:
            built.extend(sorted(names_assigned(statement) - set(built)))
        return [name for name in built if name in self.read_later]


class _Refused(Exception):
    pass


def graphed(function: cst.FunctionDef, statements: Sequence[cst.BaseStatement], is_placeholder: Callable,
            runs: Sequence[Run], feed_statements: Set[int], tf: str, taken: Set[str]) -> Optional[cst.FunctionDef]:
    """`function` with its placeholders' graphs as `tf.function`s, or None. `statements`: its
    body with the test sessions' `with`s opened; `runs`: its graph runs and their feed dicts;
    `feed_statements`: the indices of `feed = {...}` statements a run feeds by name."""
    try:
        segments = _segments(statements, is_placeholder, runs, {id(statements[i]) for i in feed_statements})
    except _Refused:
        return None
    if not segments or any(not s.runs or not s.builds or not s.outputs() for s in segments):
        return None
    try:
        return _written(function, statements, segments, feed_statements, tf, taken)
    except _Refused:
        return None


def _segments(statements, is_placeholder, runs: Sequence[Run], feeds: Set[int]) -> List[_Segment]:
    """`feeds`: the `feed = {...}` statements of runs that feed by name (read with their runs)."""
    segments: List[_Segment] = []
    symbolic: Dict[str, _Segment] = {}  # name -> the segment whose placeholder or tensor it is now
    for statement in statements:
        if id(statement) in feeds:
            continue
        placeholder = _placeholder(statement, is_placeholder)
        inside = [(call, feed) for call, feed in runs if holds(statement, call)]
        reads = {node.value for node in _loads(statement) if node.value in symbolic}
        if placeholder is not None:
            name, call = placeholder
            if names_read(call) & set(symbolic):
                raise _Refused
            open_ = segments[-1] if segments and not segments[-1].ran else None
            if open_ is None or name in open_.params() or open_.builds:
                open_ = _Segment()
                segments.append(open_)
            open_.placeholders.append((name, call, statement))
            symbolic[name] = open_
            continue
        if inside:
            _runs_of(statement, inside, symbolic)
        elif reads and _is_build(statement) and not _static_only(statement, symbolic):
            owners = {id(symbolic[name]) for name in reads}
            segment = symbolic[next(iter(reads))]
            if len(owners) != 1 or segment.ran or segment.static:
                raise _Refused  # (built from two graphs, after a run, or after its shapes were read)
            if any(code(c.func).split(".")[-1] in ("Variable", "get_variable") for c in calls_in(statement)):
                raise _Refused
            segment.builds.append(statement)
            for name in names_assigned(statement):
                symbolic[name] = segment
            continue
        elif reads:
            if not _static_only(statement, symbolic):
                raise _Refused
            for name in reads:
                segment = symbolic[name]
                if segment.ran:
                    raise _Refused
                segment.static = True
                segment.read_later.add(name)
        assigned = names_assigned(statement)
        for name in assigned:
            symbolic.pop(name, None)
        for segment in segments:  # (its graph is traced after its last build: what it read must not change)
            if not segment.ran and assigned & set().union(
                    *(_reads(s) for s in segment.builds), *(names_read(c) for _, c, _ in segment.placeholders)):
                raise _Refused
    return segments


def _reads(statement) -> Set[str]:
    """The names a build reads: not the names it binds (`loss, _ = f(x)` reads no `_`)."""
    if isinstance(statement, cst.SimpleStatementLine) and len(statement.body) == 1 \
            and isinstance(statement.body[0], cst.Assign):
        assign = statement.body[0]
        bound = {n.value for t in assign.targets for n in target_names(t.target)}
        return names_read(assign.value) | (set().union(*(names_read(t.target) for t in assign.targets)) - bound)
    return names_read(statement)


def _runs_of(statement, inside: List[Run], symbolic: Dict[str, "_Segment"]) -> None:
    """Each run in `statement`: its fetch reads one graph, fed all of that graph's placeholders."""
    fetched = set()
    for call, feed in inside:
        fetch = call.func.value if call.func.attr.value == "eval" else call.args[0].value
        fetched |= {id(node) for node in _loads(fetch)}
        if any(node.value in symbolic and node.value in symbolic[node.value].params() for node in _loads(fetch)) \
                or any(code(c.func).split(".")[-1] == "gradients" for c in calls_in(fetch)):
            raise _Refused  # (a placeholder fetched, or gradients taken in the run: not of values)
        graph = {id(symbolic[node.value]): symbolic[node.value] for node in _loads(fetch) if node.value in symbolic}
        if feed is None:
            if graph:
                raise _Refused  # (a placeholder's tensor run without a feed: TF1 raised)
            continue
        keys = []
        for element in feed.elements:
            if not isinstance(element, cst.DictElement) or not isinstance(element.key, cst.Name) \
                    or element.key.value not in symbolic or names_read(element.value) & set(symbolic):
                raise _Refused
            keys.append(element.key.value)
            fetched.add(id(element.key))
        segment = symbolic[keys[0]]
        if set(graph) - {id(segment)} or sorted(keys) != sorted(segment.params()) or len(set(keys)) != len(keys) \
                or any(symbolic[key] is not segment for key in keys):
            raise _Refused
        segment.runs.append((call, feed))
        segment.ran = True
        segment.read_later |= {node.value for node in _loads(fetch) if node.value in symbolic}
    if any(node.value in symbolic and id(node) not in fetched for node in _loads(statement)):
        raise _Refused  # (a tensor of the graph read beside the run, not by it)


def _written(function, statements, segments: List[_Segment], feed_statements: Set[int], tf: str,
             taken: Set[str]) -> cst.FunctionDef:
    replaced: Dict[int, object] = {}  # id(statement) -> its replacement (a list; [] removes it)
    inserted: Dict[int, cst.SimpleStatementLine] = {}  # id(statement) -> the graph call made before it
    unfed: Set[int] = set()  # the runs whose feed goes
    for index in feed_statements:
        replaced[id(statements[index])] = []
    for segment in segments:
        name = fresh_name(taken, "graph")
        outputs = segment.outputs()
        targets = ", ".join(outputs)
        for _, _, statement in segment.placeholders:
            replaced[id(statement)] = []
        for statement in segment.builds[:-1]:
            replaced[id(statement)] = []
        made = [_definition(name, segment, outputs, tf)]
        if segment.static:
            made.append(cst.parse_statement(f"{targets} = {name}.get_concrete_function().structured_outputs\n"))
        made[0] = made[0].with_changes(leading_lines=segment.placeholders[0][2].leading_lines)
        replaced[id(segment.builds[-1])] = made
        for call, feed in segment.runs:
            line = _statement_of(function, call)
            fed = [f"{e.key.value}={code(e.value).strip()}" for e in feed.elements]
            arguments = ", ".join(fed)
            if len(arguments) > 70 or "\n" in arguments:  # (one argument a line)
                arguments = "\n" + "".join(f"    {argument},\n" for argument in fed)
            call_line = cst.parse_statement(f"{targets} = {name}({arguments})\n")
            if id(line) in inserted and code(inserted[id(line)]) != code(call_line):
                raise _Refused  # (two feeds in one statement)
            if any(calls_in(e.value) for e in feed.elements) and _called_before(line, call):
                raise _Refused  # (the feed's draws would move before other calls of the statement)
            inserted[id(line)] = call_line.with_changes(leading_lines=line.leading_lines)
            unfed.add(id(call))
    return function.visit(_Writer(replaced, inserted, unfed))


def _definition(name: str, segment: _Segment, outputs: List[str], tf: str) -> cst.FunctionDef:
    specs = []
    for param, call, _ in segment.placeholders:
        try:
            bound = bind(call, ("dtype", "shape", "name"))
        except ValueError:
            raise _Refused
        if "dtype" not in bound or set(bound) - {"dtype", "shape", "name"}:
            raise _Refused
        specs.append(tensor_spec(bound, tf))
    signature = f"[{', '.join(specs)}]"
    if len(signature) > 70:  # (one spec a line)
        signature = "[\n" + "".join(f"    {spec},\n" for spec in specs) + "]"
    header = (f"@{tf}.function(autograph=False, input_signature={signature})\n"
              f"def {name}({', '.join(segment.params())}):\n    pass\n")
    definition = cst.parse_statement(header)
    body = [s if k else s.with_changes(leading_lines=[]) for k, s in enumerate(segment.builds)]
    body.append(cst.parse_statement(f"return {', '.join(outputs)}\n"))
    return definition.with_changes(body=definition.body.with_changes(body=body))


def _placeholder(statement, is_placeholder) -> Optional[Tuple[str, cst.Call]]:
    """(x, the call) of `x = tf.placeholder(...)`."""
    small = statement.body[0] if isinstance(statement, cst.SimpleStatementLine) and len(statement.body) == 1 else None
    if isinstance(small, cst.Assign) and len(small.targets) == 1 and isinstance(small.targets[0].target, cst.Name) \
            and isinstance(small.value, cst.Call) and is_placeholder(small.value):
        return small.targets[0].target.value, small.value
    return None


def _is_build(statement) -> bool:
    """`a = ...` / `a, b = ...` of names, alone on its line."""
    if not isinstance(statement, cst.SimpleStatementLine) or len(statement.body) != 1:
        return False
    small = statement.body[0]
    return isinstance(small, cst.Assign) and all(
        isinstance(t.target, cst.Name) or (isinstance(t.target, cst.Tuple) and all(
            isinstance(e.value, cst.Name) for e in t.target.elements)) for t in small.targets)


def _static_only(statement, symbolic) -> bool:
    """Every read of the graph's tensors in `statement` is a static one (`y.get_shape()`, `y.dtype`)."""
    static = set()

    class _Static(cst.CSTVisitor):
        def visit_Attribute(self, node: cst.Attribute) -> None:
            if node.attr.value in STATIC:
                base = node.value
                while isinstance(base, (cst.Attribute, cst.Subscript)):
                    base = base.value
                if isinstance(base, cst.Name):
                    static.add(id(base))

    statement.visit(_Static())
    return all(id(node) in static for node in _loads(statement) if node.value in symbolic)


def _loads(node) -> List[cst.Name]:
    """The Name nodes `node` reads (syntax.name_nodes without what it assigns to)."""
    targets = set()

    class _Targets(cst.CSTVisitor):
        def visit_AssignTarget(self, target: cst.AssignTarget) -> None:
            targets.update(id(n) for n in name_nodes(target.target))

        def visit_For(self, loop: cst.For) -> None:
            targets.update(id(n) for n in name_nodes(loop.target))

        def visit_CompFor(self, loop: cst.CompFor) -> None:
            targets.update(id(n) for n in name_nodes(loop.target))

    node.visit(_Targets())
    return [n for n in name_nodes(node) if id(n) not in targets]


def _statement_of(function: cst.FunctionDef, call: cst.Call) -> cst.SimpleStatementLine:
    """The innermost statement line around `call`, refused under a lambda, a comprehension or a def."""
    try:
        return line_around(function, call)
    except NotALine:
        raise _Refused


def _called_before(line: cst.SimpleStatementLine, call: cst.Call) -> bool:
    """A call of the statement written before `call` and not around it: Python makes it before
    the run's feed is evaluated."""
    order = calls_in(line)  # (outermost first: in the order they are written)
    return any(not holds(c, call) for c in order[:order.index(call)])


class _Writer(cst.CSTTransformer):
    def __init__(self, replaced, inserted, unfed):
        self.replaced, self.inserted, self.unfed = replaced, inserted, unfed

    def leave_SimpleStatementLine(self, original, updated):
        if id(original) in self.replaced:
            made = self.replaced[id(original)]
            return cst.FlattenSentinel(made) if made else cst.RemoveFromParent()
        if id(original) in self.inserted:
            return cst.FlattenSentinel([self.inserted[id(original)], updated.with_changes(leading_lines=[])])
        return updated

    def leave_Call(self, original, updated):
        if id(original) not in self.unfed:
            return updated
        if updated.func.attr.value == "eval":
            return updated.with_changes(args=[])
        return updated.with_changes(args=[updated.args[0].with_changes(comma=cst.MaybeSentinel.DEFAULT)])

    def leave_IndentedBlock(self, original, updated):
        """(a blank line after each graph function, as between methods)"""
        if not updated.body:
            return updated.with_changes(body=[cst.SimpleStatementLine([cst.Pass()])])
        body = list(updated.body)
        for k in range(1, len(body)):
            if isinstance(body[k - 1], cst.FunctionDef) and body[k - 1].decorators and not body[k].leading_lines:
                body[k] = body[k].with_changes(leading_lines=[cst.EmptyLine(indent=False)])
        return updated.with_changes(body=body)


def gradient_graphs(function: cst.FunctionDef, statements: Sequence[cst.BaseStatement], is_gradient: Callable,
                    is_tensor_call: Callable, runs: Sequence[Run], tf: str, taken: Set[str]) -> Optional[cst.FunctionDef]:
    """`function` with each `tf.gradients` a tape cannot take (of `returns[0]`, in a loop over
    settings) built in a `tf.function` of no parameters, with the statements it needs (the
    tensors it reads, made in the same block), called once where the last of them was: its
    gradients are a graph's, as TF1's were, and what the test reads later are their values.
    `statements`: the body with the test sessions' `with`s opened; each `for` body is a block too."""
    blocks = [list(statements)] + [list(loop.body.body) for loop in found_in(function, "visit_For")
                                   if isinstance(loop.body, cst.IndentedBlock)]
    run_calls = [call for call, feed in runs if feed is None]
    if len(run_calls) != len(runs):
        return None
    replaced: Dict[int, object] = {}
    for block in blocks:
        try:
            made = _gradient_block(function, block, is_gradient, is_tensor_call, run_calls, tf, taken)
        except _Refused:
            return None
        replaced.update(made)
    if not replaced:
        return None
    for call in calls_in(function):  # (a gradient no block took: left to the tape, which refused it)
        if is_gradient(call) and not any(holds(s, call) for s in _all_statements(replaced, blocks)):
            return None
    return function.visit(_Writer(replaced, {}, set()))


def _gradient_block(function, block, is_gradient, is_tensor_call, run_calls, tf: str, taken: Set[str]) -> Dict[int, object]:
    roots = [i for i, s in enumerate(block) if not isinstance(s, cst.For)  # (a loop's body is a block itself)
             and any(is_gradient(c) for c in calls_in(s))]
    if not roots:
        return {}
    if any(not _is_build(block[i]) or any(holds(block[i], r) for r in run_calls) for i in roots):
        raise _Refused  # (a gradient inside a run, an assertion or a compound statement)
    made_tensors: Set[int] = set()
    tensor_names: Set[str] = set()
    for index, statement in enumerate(block):
        if _is_build(statement) and not any(holds(statement, r) for r in run_calls) and (
                any(is_tensor_call(c) for c in calls_in(statement)) or names_read(statement) & tensor_names):
            made_tensors.add(index)
            tensor_names |= names_assigned(statement)
        else:
            tensor_names -= names_assigned(statement)
    taken_in: Set[int] = set()
    for root in roots:
        needed = {n.value for n in _loads(block[root])}
        taken_in.add(root)
        for index in range(root - 1, -1, -1):
            assigned = names_assigned(block[index])
            if not assigned & needed:
                continue
            needed -= assigned
            if index in made_tensors:
                taken_in.add(index)
                needed |= {n.value for n in _loads(block[index])}
    first, last = min(taken_in), max(taken_in)
    inside = [block[i] for i in sorted(taken_in)]
    assigned = set().union(*(names_assigned(s) for s in inside))
    read = set().union(*(names_read(s) for s in inside))
    _check_sources(function, [block[i] for i in roots], inside, assigned, is_gradient, is_tensor_call)
    for index in range(first, last):
        if index not in taken_in and (names_assigned(block[index]) & (assigned | read)
                                      or names_read(block[index]) & assigned):
            raise _Refused  # (a statement in between that the moved ones would see change, or that reads them)
    moved = {id(node) for statement in inside for node in _loads(statement)}
    wanted = {node.value for node in _loads(function.body) if id(node) not in moved}  # (read elsewhere)
    outputs = [name for name in _in_order(inside) if name in wanted]
    if not outputs:
        raise _Refused
    name = fresh_name(taken, "graph")
    header = cst.parse_statement(f"@{tf}.function(autograph=False)\ndef {name}():\n    pass\n")
    body = [s if k else s.with_changes(leading_lines=[]) for k, s in enumerate(inside)]
    body.append(cst.parse_statement(f"return {', '.join(outputs)}\n"))
    definition = header.with_changes(body=header.body.with_changes(body=body),
                                     leading_lines=block[first].leading_lines)
    called = cst.parse_statement(f"{', '.join(outputs)} = {name}()\n")
    replaced: Dict[int, object] = {id(block[i]): [] for i in taken_in if i != last}
    replaced[id(block[last])] = [definition, called]
    return replaced


def _check_sources(function, roots, inside, assigned: Set[str], is_gradient, is_tensor_call) -> None:
    """Refused unless every tensor the moved statements read from outside is a gradient source,
    at most one a gradient: a tensor made outside is captured as a constant of the function, so a
    path to the source through one (or through another source) would be lost."""
    outside: Set[str] = set()  # sources made outside the function: `x` or `self.x`
    for root in roots:
        for call in calls_in(root):
            if not is_gradient(call):
                continue
            try:
                xs = bind(call, ("ys", "xs")).get("xs")
            except ValueError:
                raise _Refused
            elements = [e.value for e in xs.elements] if isinstance(xs, (cst.List, cst.Tuple)) else [xs]
            if not all(isinstance(e, cst.Name) or self_attribute(e) for e in elements):
                raise _Refused  # (`nest.flatten(...)`: which tensors, unknown here)
            mine = {code(e) for e in elements if not (isinstance(e, cst.Name) and e.value in assigned)}
            if len(mine) > 1:
                raise _Refused
            outside |= mine
    tensors: Set[str] = set()  # names a TensorFlow or project call, or a tensor, gave a value anywhere
    for statement in found_in(function, "visit_SimpleStatementLine"):
        if any(is_tensor_call(c) for c in calls_in(statement)) or names_read(statement) & tensors:
            tensors |= names_assigned(statement)
    for statement in inside:
        for node in _loads(statement):
            if node.value in tensors and node.value not in assigned and node.value not in outside:
                raise _Refused  # (a tensor made outside, which the function would see as a constant)
        for attribute in _self_reads(statement):
            if attribute not in outside and not _called(statement, attribute):
                raise _Refused


def _self_reads(statement) -> List[str]:
    """`self.x` of each attribute of `self` the statement reads."""
    found: List[str] = []

    class _Reads(cst.CSTVisitor):
        def visit_Attribute(self, node: cst.Attribute) -> None:
            if self_attribute(node):
                found.append(code(node))

    statement.visit(_Reads())
    return found


def _called(statement, attribute: str) -> bool:
    """`self.assertX(...)`: an assertion the statement calls, not a tensor (a helper method, which may
    read other tensors of `self`, is refused like one)."""
    return attribute.startswith("self.assert") and any(code(c.func) == attribute for c in calls_in(statement))


def _in_order(statements) -> List[str]:
    found: List[str] = []
    for statement in statements:
        found.extend(sorted(names_assigned(statement) - set(found)))
    return found


def _all_statements(replaced: Dict[int, object], blocks) -> List[cst.BaseStatement]:
    return [s for block in blocks for s in block if id(s) in replaced]
