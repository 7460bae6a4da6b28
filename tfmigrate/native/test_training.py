"""Training steps inside tests (issue 22 item 2, on native.test_models' route): a test that trains
its project's model functions with a TF1 optimizer and runs the loss before, during and after.

    logits = tf1_variables(model.gcn, x, 2)                  def graph():
    loss = model.xent(logits, labels)                            logits = tf1_variables(model.gcn, x, 2)
    train_op = tf.train.AdamOptimizer(0.05).minimize(loss)       loss = model.xent(logits, labels)
    with self.test_session() as sess:                            return loss
        first = sess.run(loss)                           ->  loss = graph()
        for _ in range(30):                                  optimizer = tf.compat.v1.train.AdamOptimizer(0.05)
            sess.run(train_op)                               def train_op(): (one step, below)
        last = sess.run(loss)                                with self.test_session() as sess:
                                                                 loss = graph()
                                                                 first = sess.run(loss)
                                                                 for _ in range(30):
                                                                     train_op()
                                                                 loss = graph()
                                                                 last = sess.run(loss)

TF1 built the graph once and each run computed it again from the variables' current values;
eagerly a tensor is a value, computed once. So the statements that compute from the model's
variables become one function, called where TF1 built them (which makes the variables, by TF1
name, in TF1's order) and again before each run that reads them (test_files then makes the runs
`self.evaluate`). A run of the train op is one step: the graph computed again under a tape, the
optimizer applied to the loss's gradients with respect to the model's trainable variables (what
TF1's `minimize` used: `tf.trainable_variables()`, the STORE object's `trainable()`), a variable the
loss does not reach left alone as TF1 did. The optimizer stays TF1's own, `tf.compat.v1.train.X`,
whose kernels run eagerly: Keras's Adam, the same rule in other float32 steps, ended 10 steps of a
test 1.3e-5 away (relative) where TF1's ended 4e-6 away from the float64 rule. A random op in the
model draws anew at each run, as TF1's did.

A placeholder fed the same value at every run is that value (native.feed_helpers.constant_feeds).
Refused (the test keeps the compat route), where that is not what TF1 ran: a second `minimize`, one
given a global step or another variable list, an optimizer other than native.optimizers', another
feed to a run of the model, a tensor computed from the model after its train op or read between the
statements that build it, a name the model code reads bound again later, the train op used other
than run, `tf.gradients` or variables of the test's own beside it, `self.` state in the model code.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Dict, FrozenSet, List, Optional, Set, Tuple

import libcst as cst
import libcst.matchers as m

from tfmigrate.native.optimizers import OPTIMIZERS
from tfmigrate.facts.names import dotted
from tfmigrate.native.feed_helpers import constant_feeds, named_feeds, shared_feeds
from tfmigrate.native.syntax import (NotALine, bind, bound_names, calls_in, code, fresh_name, holds, line_around,
                                     names_assigned, names_in, names_read, target_names)

SESSION_METHODS = ("test_session", "cached_session", "session")
MINIMIZE_PARAMS = ("loss", "global_step", "var_list", "gate_gradients", "aggregation_method",
                   "colocate_gradients_with_ops", "name", "grad_loss")
STEP = '''def {train}():
    """A run of TF1's `{train}`: the graph computed again, one step of `{optimizer}` on `{loss}`."""
    with {tf}.GradientTape() as {tape}:
        {outputs} = {graph}()
    variables = {store}.trainable()
    gradients = {tape}.gradient({loss}, variables)
    {optimizer}.apply_gradients([(g, v) for g, v in zip(gradients, variables) if g is not None])
    return {outputs}
'''


class Refused(Exception):
    def __init__(self, node: cst.CSTNode, what: str):
        super().__init__(what)
        self.node, self.what = node, what


@dataclass(frozen=True)
class Trained:
    """The test rewritten, the optimizer calls it wrote (test_files lets them run) and the names its
    graph function computes again before each run (their draws are new at each run, as TF1's)."""
    function: cst.FunctionDef
    optimizers: FrozenSet[str]
    recomputed: FrozenSet[str]


def trained(function: cst.FunctionDef, store: str, api, tf: str) -> Optional[Trained]:
    """`function` (routed through the STORE object `store`) with its train op as a step function,
    None when it makes none. `api(node)`: the TensorFlow API a node names. Refused: see above."""
    if not any(isinstance(c.func, cst.Attribute) and c.func.attr.value == "minimize" for c in calls_in(function)):
        return None
    function = constant_feeds(shared_feeds(named_feeds(function)), api, tf)
    minimizes = [c for c in calls_in(function) if isinstance(c.func, cst.Attribute) and c.func.attr.value == "minimize"]
    if len(minimizes) > 1:
        raise Refused(minimizes[1], "a second `minimize` in the test")
    minimize = minimizes[0]
    top = _top_statements(function, api)
    at = next((i for i, s in enumerate(top) if _assigned_value(s) is minimize), None)
    if at is None:
        raise Refused(minimize, "a `minimize` other than `train_op = optimizer.minimize(loss)` in the test's body")
    train = _assigned_name(top[at])
    optimizer_call, named = _optimizer(minimize, top[:at], api)
    path = api(optimizer_call.func)
    spelling = code(optimizer_call.with_changes(func=cst.parse_expression(f"{tf}.compat.v1.{path}")))
    loss = _loss(minimize, store)
    for call in calls_in(function):
        if (api(call.func) or "").split(".")[-1] in ("gradients", "Variable", "get_variable"):
            raise Refused(call, f"`{code(call.func)}` beside a train op (what it takes or makes is outside the "
                                "model's step)")
    builds = _builds(top, at, store)
    if not builds or loss not in set().union(*(names_assigned(top[i]) for i in builds)):
        raise Refused(minimize, f"the loss `{loss}` not computed from the model's variables in the test's body")
    built = set().union(*(names_assigned(top[i]) for i in builds))
    moved = {id(top[i]) for i in builds}
    _check_between(top, builds, built, at)
    _check_after(top, at, built, store)
    _check_closure(function, [top[i] for i in builds], built)
    for statement in (top[i] for i in builds):
        if m.findall(statement, m.Attribute(value=m.Name("self"))):
            raise Refused(statement, "the model code reads the test's `self.` state (which TF1 may have built "
                                     "from variables of its own)")
    outputs = [n for n in _in_order([top[i] for i in builds]) if n in _read_outside(function, moved) or n == loss]
    runs, train_runs = _runs(function, top, at, set(outputs), train, named)
    taken = set(names_in(function))
    graph, tape = fresh_name(taken, "graph"), fresh_name(taken, "tape")
    optimizer = named or fresh_name(taken, "optimizer")
    targets = ", ".join(outputs)
    replaced: Dict[int, List[cst.BaseStatement]] = {id(top[i]): [] for i in builds[:-1]}
    last = top[builds[-1]]
    definition = cst.parse_statement(f"def {graph}():\n    pass\n")
    body = [top[i].with_changes(leading_lines=[]) if k == 0 else top[i] for k, i in enumerate(builds)]
    body.append(cst.parse_statement(f"return {targets}\n"))
    definition = definition.with_changes(body=definition.body.with_changes(body=body),
                                         leading_lines=[*top[builds[0]].leading_lines] or [cst.EmptyLine(indent=False)])
    replaced[id(last)] = [definition, cst.parse_statement(f"{targets} = {graph}()\n")]
    made = cst.parse_statement(f"{optimizer} = {spelling}\n")
    step = cst.parse_statement(STEP.format(train=train, optimizer=optimizer, loss=loss, tf=tf, tape=tape,
                                           outputs=targets, graph=graph, store=store))
    step = step.with_changes(leading_lines=[cst.EmptyLine(indent=False)])
    if named:
        optimizer_statement = next(s for s in top[:at] if _assigned_value(s) is optimizer_call)
        replaced[id(optimizer_statement)] = [made.with_changes(leading_lines=optimizer_statement.leading_lines)]
        replaced[id(top[at])] = [step.with_changes(leading_lines=top[at].leading_lines or step.leading_lines)]
    else:
        replaced[id(top[at])] = [made.with_changes(leading_lines=top[at].leading_lines), step]
    inserted: Dict[int, cst.SimpleStatementLine] = {}
    for line in runs:
        if line is _first_run(top[at + 1:], runs, train_runs):
            continue  # (the variables are as the graph function's first call left them)
        inserted[id(line)] = cst.parse_statement(f"{targets} = {graph}()\n")
    nones: Set[int] = set()
    for line, name in train_runs:
        if name is None:  # (`sess.run(train_op)` or `train_op.run()` alone)
            replaced[id(line)] = [cst.parse_statement(f"{train}()\n").with_changes(leading_lines=line.leading_lines)]
        else:
            inserted[id(line)] = cst.parse_statement(f"{targets} = {train}()\n")
            nones.add(id(name))
    rewritten = function.visit(_Writer(replaced, inserted, nones))
    return Trained(rewritten, frozenset({spelling}), frozenset(outputs))


def _first_run(after: List[cst.BaseStatement], runs, train_runs) -> Optional[cst.SimpleStatementLine]:
    """The run of the model's tensors that comes first after the train op, when nothing before it
    ran the train op and it is not in a loop or a block: it reads what the build computed."""
    lines = {id(line) for line in runs} | {id(line) for line, _ in train_runs}
    for statement in after:
        if not isinstance(statement, cst.SimpleStatementLine):
            return None
        if id(statement) in lines:
            return statement if any(statement is line for line in runs) else None
    return None


def _top_statements(function: cst.FunctionDef, api) -> List[cst.BaseStatement]:
    """The body, each test session's `with` at its top level read as its own statements, and so is
    a `with tf.Graph().as_default():` (eagerly there is no graph to build in: native.new_graphs)."""
    found: List[cst.BaseStatement] = []

    def add(statements) -> None:
        for statement in statements:
            if isinstance(statement, cst.With) and len(statement.items) == 1 and (_session(statement.items[0].item, api) or (
                    _new_graph(statement.items[0].item, api) and statement.items[0].asname is None)) \
                    and isinstance(statement.body, cst.IndentedBlock):
                add(statement.body.body)
            else:
                found.append(statement)
    add(function.body.body)
    return found


def _new_graph(item: cst.BaseExpression, api) -> bool:
    """`tf.Graph().as_default()`."""
    return m.matches(item, m.Call(func=m.Attribute(value=m.Call(), attr=m.Name("as_default")), args=[])) \
        and api(item.func.value.func) == "Graph"


def _session(item: cst.BaseExpression, api) -> bool:
    return isinstance(item, cst.Call) and (api(item.func) == "Session" or (
        isinstance(item.func, cst.Attribute) and m.matches(item.func.value, m.Name("self"))
        and item.func.attr.value in SESSION_METHODS))


def _assigned_value(statement) -> Optional[cst.BaseExpression]:
    """`v` of `name = v` alone on its line."""
    if isinstance(statement, cst.SimpleStatementLine) and len(statement.body) == 1 \
            and isinstance(statement.body[0], cst.Assign) and len(statement.body[0].targets) == 1 \
            and isinstance(statement.body[0].targets[0].target, cst.Name):
        return statement.body[0].value
    return None


def _assigned_name(statement) -> str:
    return statement.body[0].targets[0].target.value


def _optimizer(minimize: cst.Call, before: List[cst.BaseStatement], api) -> Tuple[cst.Call, Optional[str]]:
    """(the TF1 optimizer's call, the name it is bound to or None) of `<optimizer>.minimize(...)`."""
    receiver = minimize.func.value
    if isinstance(receiver, cst.Call) and api(receiver.func) in OPTIMIZERS:
        return receiver, None
    if isinstance(receiver, cst.Name):
        bound = [s for s in before if receiver.value in names_assigned(s)]
        value = _assigned_value(bound[0]) if len(bound) == 1 else None
        if isinstance(value, cst.Call) and api(value.func) in OPTIMIZERS:
            return value, receiver.value
    raise Refused(minimize, f"`{code(minimize.func)}` of other than a TF1 optimizer made in the test")


def _loss(minimize: cst.Call, store: str) -> str:
    try:
        bound = bind(minimize, MINIMIZE_PARAMS)
    except ValueError as error:
        raise Refused(minimize, f"`minimize`: {error}")
    for key, value in bound.items():
        if key == "var_list" and m.matches(value, m.Call(func=m.Attribute(value=m.Name(store), attr=m.Name("trainable")),
                                                           args=[])):
            continue  # (`tf.trainable_variables()`, which TF1 used anyway)
        if key not in ("loss", "name"):
            raise Refused(minimize, f"`minimize` given `{key}=` (the step would not be TF1's)")
    if not isinstance(bound.get("loss"), cst.Name):
        raise Refused(minimize, "`minimize` of other than a name")
    return bound["loss"].value


def _builds(top: List[cst.BaseStatement], at: int, store: str) -> List[int]:
    """The indices of the statements before the train op that compute from the model's variables:
    a call of the STORE object (the model code, a variable read by name) or a name they made."""
    found, made = [], set()
    for index, statement in enumerate(top[:at]):
        calls = calls_in(statement)
        if any(m.matches(c.func, m.Name(store) | m.Attribute(value=m.Name(store))) for c in calls) \
                or _loads(statement) & made:
            if _assigned_value(statement) is None and not _assigns_names(statement):
                raise Refused(statement, "a statement on the model's tensors other than `x = ...` before its "
                                         "train op")
            found.append(index)
            made |= names_assigned(statement)
    return found


def _loads(statement) -> Set[str]:
    """The names a statement reads: not those it binds (`y = f(x)` reads no `y`)."""
    value = _assigned_value(statement)
    if value is None and _assigns_names(statement):
        value = statement.body[0].value
    return names_read(value) if value is not None else names_read(statement)


def _assigns_names(statement) -> bool:
    """`a, b = ...` of names alone on its line."""
    return isinstance(statement, cst.SimpleStatementLine) and len(statement.body) == 1 \
        and isinstance(statement.body[0], cst.Assign) and all(
            isinstance(t.target, cst.Tuple) and all(isinstance(e.value, cst.Name) for e in t.target.elements)
            for t in statement.body[0].targets)


def _check_between(top, builds: List[int], built: Set[str], at: int) -> None:
    """The statements between the first and the last build stay where they are (before the graph
    function's first call): they must not read what it makes, nor bind it (what they bind that it
    reads is bound once: `_check_closure`)."""
    for index in range(builds[0], builds[-1]):
        if index in builds:
            continue
        statement = top[index]
        if _loads(statement) & built:
            raise Refused(statement, "the model's tensors read between the statements that build them")
        if names_assigned(statement) & built:
            raise Refused(statement, "a name of the model's tensors bound between the statements that build them")
    if at < builds[-1]:
        raise Refused(top[at], "a train op made before the model code it trains")


def _check_after(top, at: int, built: Set[str], store: str) -> None:
    """After the train op, the model's tensors are only run or read for static facts: a tensor
    computed from them there is computed once eagerly, where TF1 computed it at each run."""
    for statement in (line for s in top[at + 1:] for line in m.findall(s, m.SimpleStatementLine())):
        value = _assigned_value(statement)
        if (names_read(statement) & built and value is not None and not _is_run_value(value)) or any(
                m.matches(c.func, m.Name(store)) for c in calls_in(statement)):
            raise Refused(statement, "a tensor computed from the model after its train op")


def _is_run_value(value) -> bool:
    """The value of a run, `sess.run(x)` / `x.eval()`, and what Python computes of its result."""
    return any(isinstance(c.func, cst.Attribute) and c.func.attr.value in ("run", "eval", "evaluate")
               for c in calls_in(value))


def _check_closure(function: cst.FunctionDef, moved: List[cst.BaseStatement], built: Set[str]) -> None:
    """A name the graph function reads from the test is read when it is called (Python's closure),
    where TF1 read it once, when it built the graph: it must be bound once."""
    free = set().union(*(names_read(s) for s in moved)) - built
    counts: Dict[str, int] = {}
    for name in [n.value for n in bound_names(function.body)] + [p.name.value for p in m.findall(function.params,
                                                                                               m.Param())]:
        counts[name] = counts.get(name, 0) + 1
    again = sorted(n for n in free if counts.get(n, 0) > 1)
    if again:
        raise Refused(moved[0], f"`{again[0]}`, which the model code reads, bound more than once (the step "
                                "would read its last value)")


def _read_outside(function: cst.FunctionDef, moved: Set[int]) -> Set[str]:
    """The names read by statements other than the moved ones."""
    read: Set[str] = set()

    class _Reads(cst.CSTVisitor):
        def visit_SimpleStatementLine(self, node) -> bool:
            if id(node) not in moved:
                read.update(names_read(node))
            return False

        def visit_For(self, node) -> None:
            read.update(names_read(node.iter))

        def visit_While(self, node) -> None:
            read.update(names_read(node.test))

        def visit_If(self, node) -> None:
            read.update(names_read(node.test))

        def visit_WithItem(self, node) -> None:
            read.update(names_read(node.item))

    function.body.visit(_Reads())
    return read


def _in_order(statements) -> List[str]:
    found: List[str] = []
    for statement in statements:
        value = statement.body[0]
        for target in value.targets:
            found.extend(n.value for n in target_names(target.target) if n.value not in found)
    return found


def _runs(function: cst.FunctionDef, top, at: int, outputs: Set[str], train: str, named: Optional[str]):
    """(the statement lines of runs that read the graph's outputs, [(the line of a run of the
    train op, its Name in a fetched list or None when the run is the whole statement)])."""
    runs: List[cst.SimpleStatementLine] = []
    train_runs: List[Tuple[cst.SimpleStatementLine, Optional[cst.Name]]] = []
    lines: Set[int] = set()
    sessions = {code(item.asname.name) for w in m.findall(function, m.With()) for item in w.items
                if item.asname is not None}
    for call in calls_in(function):
        if not isinstance(call.func, cst.Attribute):
            continue
        method, receiver = call.func.attr.value, call.func.value
        if method == "run" and dotted(receiver) in sessions:
            fetch_args = [a for a in call.args if a.keyword is None or a.keyword.value == "fetches"]
            if len(call.args) != 1 or not fetch_args:
                if names_read(call) & (outputs | {train}):
                    raise Refused(call, "a run of the model given a feed or options (its graph function takes none)")
                continue
            fetch = fetch_args[0].value
        elif method == "eval" and not call.args:
            fetch = receiver
        elif method == "run" and m.matches(receiver, m.Name(train)) and not call.args:
            fetch = receiver
        else:
            continue
        read = names_read(fetch)
        if not read & (outputs | {train}):
            continue
        try:
            line = line_around(function, call)
        except NotALine:
            raise Refused(call, "a run of the model inside a lambda, a comprehension or a function")
        if id(line) in lines:
            raise Refused(call, "two runs of the model in one statement")
        if not any(holds(s, call) for s in top[at + 1:]):
            raise Refused(call, "a run of the model before its train op")
        lines.add(id(line))
        if train not in read:
            runs.append(line)
            continue
        whole = isinstance(line.body[0], cst.Expr) and line.body[0].value is call and len(line.body) == 1
        if whole and (fetch is receiver or m.matches(fetch, m.Name(train))):
            train_runs.append((line, None))
            continue
        if isinstance(fetch, (cst.List, cst.Tuple)):
            names = [e.value for e in fetch.elements if m.matches(e.value, m.Name(train))]
            if len(names) == 1:
                train_runs.append((line, names[0]))
                continue
        raise Refused(call, f"the train op `{train}` run other than alone or in a list of fetches")
    if len(m.findall(function, m.Name(train))) != 1 + len(train_runs):
        raise Refused(function, f"the train op `{train}` used other than run")
    if named is not None and len(m.findall(function, m.Name(named))) != 2:
        raise Refused(function, f"the optimizer `{named}` used other than by its `minimize`")
    return runs, train_runs


class _Writer(cst.CSTTransformer):
    def __init__(self, replaced, inserted, nones):
        self.replaced, self.inserted, self.nones = replaced, inserted, nones

    def leave_SimpleStatementLine(self, original, updated):
        if id(original) in self.replaced:
            made = self.replaced[id(original)]
            return cst.FlattenSentinel(made) if made else cst.RemoveFromParent()
        if id(original) in self.inserted:
            call = self.inserted[id(original)].with_changes(leading_lines=updated.leading_lines)
            return cst.FlattenSentinel([call, updated.with_changes(leading_lines=[])])
        return updated

    def leave_Name(self, original, updated):
        return cst.Name("None") if id(original) in self.nones else updated

    def leave_IndentedBlock(self, original, updated):
        if not updated.body:
            return updated.with_changes(body=[cst.SimpleStatementLine([cst.Pass()])])
        return updated
