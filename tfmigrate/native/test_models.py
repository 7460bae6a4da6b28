"""Tests that call a library's TF1 model functions, on TensorFlow's model-mapping route (issue 22
item 2, on issue 21's route).

A TF1 test builds a library's model on placeholders and checks what it made:

    logits = ops.output_projection(states, VOCAB, scope="proj")
    again = ops.output_projection(states, VOCAB, scope="proj", reuse=True)
    self.assertEqual(["proj/weights:0", "proj/biases:0"], [v.name for v in tf.trainable_variables()])

Eagerly `get_variable` makes a new variable at every call (measured: `reuse=True` then shares
nothing, silently). Here each call goes through one object per test, a `tf.Module` whose call is
decorated with `track_tf1_style_variables` (STORE): each variable is made once with its TF1 name
and found again by name, as in the test's graph; it records them in the order they were made,
which is what TF1's `tf.trainable_variables()` and `tf.global_variables()` listed:

    tf1_variables = TF1Variables()
    logits = tf1_variables(ops.output_projection, states, VOCAB, scope="proj")
    ...[v.name for v in tf1_variables.trainable()]

A variable read by name the graph way (`v.op.name`) is read eagerly (`v.name.split(":")[0]`).
Refused (the test keeps the compat route), because the object shares what TF1 made anew: a model
function called again without `reuse=True` (TF1 made other variables, `scope_1/...`, or raised that
they existed) unless each such call names a scope of its own, a call in a loop, a comprehension or
a lambda (but of a function that shares its variables by default: `reuse=tf.AUTO_REUSE`), a model
function read other than called, and a variable list read in a test that also makes variables
itself. A model function expected to raise (`assertRaises`) where variables may
exist is built in a TF1 graph after the test's earlier model calls (`_in_tf1_graph`), else refused.
A variable read by name (`with tf.variable_scope("s", reuse=True): w = tf.get_variable("w")`) is
the object's variable of that name (`variable`). The variables' initializers draw eagerly other numbers than TF1's test graph
did (their random initial values are drawn once either way, as a test's own `tf.Variable`'s).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Dict, FrozenSet, List, Optional, Set, Tuple

import libcst as cst
import libcst.matchers as m

from tfmigrate.facts.graph_words import LEGACY_KERAS_SET
from tfmigrate.fixers.compat_route import legacy_keras_switch
from tfmigrate.native.imported_models import local_spellings, reuses, unshared_call
from tfmigrate.native.syntax import calls_in, code, fresh_name

STORE_NAME = "TF1Variables"
STORE = '''class TF1Variables({tf}.Module):
    """The TF1 model code a test calls, run eagerly on TensorFlow's model-mapping route: each
    variable it makes (`get_variable` under `variable_scope`) is made on its first call with its TF1
    name and found again by name on later calls, as in TF1's graph; `trainable()` and `all()` list
    them in the order they were made, as TF1's `tf.trainable_variables()` and
    `tf.global_variables()` did. A variable made without an initializer gets TF1's default, Glorot
    uniform."""

    def __init__(self):
        super().__init__()
        self.made = []

    @{tf}.compat.v1.keras.utils.track_tf1_style_variables
    def __call__(self, build, *args, **kwargs):
        def record(next_creator, **kwargs):
            variable = next_creator(**kwargs)
            self.made.append(variable)
            return variable

        default = {tf}.compat.v1.glorot_uniform_initializer()
        with {tf}.variable_creator_scope(record), {tf}.compat.v1.variable_scope(
                {tf}.compat.v1.get_variable_scope(), initializer=default):
            return build(*args, **kwargs)

    def trainable(self):
        return [variable for variable in self.made if variable.trainable]

    def all(self):
        return list(self.made)

    def variable(self, name):
        """TF1's `get_variable(name)` under `variable_scope(scope, reuse=True)`: the one made by that name."""
        for variable in self.made:
            if variable.name == name + ":0":
                return variable
        raise ValueError(f"Variable {{name}} does not exist, or was not created with tf.get_variable().")
'''
LISTS = {"trainable_variables": "trainable", "global_variables": "all"}
_REPEATED = m.For() | m.While() | m.ListComp() | m.SetComp() | m.DictComp() | m.GeneratorExp() | m.Lambda()


class Refused(Exception):
    def __init__(self, node: cst.CSTNode, what: str):
        super().__init__(what)
        self.node, self.what = node, what


@dataclass(frozen=True)
class Models:
    """What a test file may call of its project's model functions: their local spellings
    (`ops.output_projection`, or `output_projection` imported by name)."""
    spellings: FrozenSet[str] = frozenset()
    shares: FrozenSet[str] = frozenset()  # those whose variables are shared by default (`reuse=tf.AUTO_REUSE`)


def routed(function: cst.FunctionDef, models: Models, api, tf: str) -> Optional[Tuple[cst.FunctionDef, Set[str], str]]:
    """`function` with its model functions' calls through one STORE object, the names that hold
    its variables (`v` of `for v in tf.trainable_variables()`) and the object's name; None when it
    calls none. `api(node)`: the TensorFlow API a node names (None if none). Refused: see above."""
    if not models.spellings:
        return None
    calls = [c for c in calls_in(function) if code(c.func) in models.spellings]
    called = {id(c.func) for c in calls}
    for node in m.findall(function, m.Attribute() | m.Name()):
        if code(node) in models.spellings and id(node) not in called:
            raise Refused(node, f"`{code(node)}`, a model function of the project, read other than called")
    if not calls:
        return None
    for node in m.findall(function.body, _REPEATED | m.FunctionDef()):
        inside = next((c for c in calls if code(c.func) not in models.shares  # (AUTO_REUSE: TF1 shared them too)
                       and any(found is c for found in calls_in(node))), None)
        if inside is not None:
            raise Refused(inside, f"`{code(inside.func)}`, a model function of the project, called in a loop, a "
                                  "comprehension or a function (TF1 made its variables anew at each build)")
    raising: Dict[int, str] = {}  # id(a call expected to raise) -> the graph it is built in (_in_tf1_graph)
    for block in m.findall(function.body, m.With(items=[m.WithItem(item=m.Call(func=m.Attribute(
            value=m.Name("self"), attr=m.Name())))])):
        inside = next((c for c in calls if block.items[0].item.func.attr.value.startswith("assertRaises")
                       and any(found is c for found in calls_in(block.body)) and (reuses(c) or c is not calls[0])),
                      None)  # (a first call, in a test's fresh graph, raised what it raises eagerly: no variable was there)
        if inside is not None:
            built = _in_tf1_graph(function, calls, inside, block, tf)
            if built is None:
                raise Refused(inside, f"`{code(inside.func)}`, a model function of the project, expected to raise (TF1 "
                                      "raised where a variable existed or did not; one tracked object makes or shares it)")
            raising[id(inside)] = built
    calls = [c for c in calls if id(c) not in raising]
    sites: Dict[str, List[cst.Call]] = {}
    for call in calls:
        sites.setdefault(code(call.func), []).append(call)
    unshared = unshared_call(sites, models.shares)
    if unshared is not None:
        raise Refused(unshared[1], f"`{unshared[0]}` called again without `reuse=True` (TF1 made other variables, "
                                   "or raised that they existed; eagerly they would be shared)")
    lookups = _lookups(function, api)
    looked_up = {id(c) for block in lookups.values() for _, c in block}
    lists = [c for c in calls_in(function) if (api(c.func) or "").split(".")[-1] in LISTS]
    for read in lists:
        if read.args:
            raise Refused(read, f"`{code(read.func)}(...)` given a scope or collection")
    if lists and any((api(c.func) or "").split(".")[-1] in ("Variable", "get_variable") and id(c) not in looked_up
                     for c in calls_in(function)):
        raise Refused(lists[0], "a variable list read in a test that also makes variables itself")
    taken = {n.value for n in m.findall(function, m.Name())}
    store = fresh_name(taken, "tf1_variables")
    held = _variable_names(function, {id(c) for c in lists}) | {name for block in lookups.values() for name, _ in block
                                                                 if name is not None}
    body = function.body.visit(_Routed(calls, lists, api, store, held, lookups, raising))
    first = cst.parse_statement(f"{store} = {STORE_NAME}()\n")
    statements = list(body.body)
    at = 1 if statements and m.matches(statements[0], m.SimpleStatementLine(body=[m.Expr(m.SimpleString())])) else 0
    if any(n.value == store for n in m.findall(body, m.Name())):  # (not when its only calls are built in a TF1 graph)
        statements.insert(at, first)
    return function.with_changes(body=body.with_changes(body=statements)), held, store


def _lookups(function: cst.FunctionDef, api) -> Dict[int, List[Tuple[str, cst.Call]]]:
    """`with tf.variable_scope("gc", reuse=True): w = tf.get_variable("weights")`: a test reading a
    variable its model code made, by name (id(the with) -> (the name bound, the get_variable call)
    of each statement; a scope named by a literal, `reuse=True`, and only such reads inside)."""
    found: Dict[int, List[Tuple[str, cst.Call]]] = {}
    for block in m.findall(function.body, m.With(items=[m.WithItem(item=m.Call(), asname=None)])):
        scope = block.items[0].item
        if (api(scope.func) or "").split(".")[-1] != "variable_scope" or not (
                len(scope.args) == 2 and scope.args[0].keyword is None and isinstance(scope.args[0].value, cst.SimpleString)
                and scope.args[1].keyword is not None and scope.args[1].keyword.value == "reuse"
                and m.matches(scope.args[1].value, m.Name("True"))):
            continue
        reads = []
        for statement in block.body.body:
            small = statement.body[0] if isinstance(statement, cst.SimpleStatementLine) and len(statement.body) == 1 else None
            if not (isinstance(small, cst.Assign) and len(small.targets) == 1 and isinstance(small.targets[0].target, cst.Name)
                    and isinstance(small.value, cst.Call) and _read_by_name(small.value, api)):
                reads = []
                break
            reads.append((small.targets[0].target.value, small.value))
        if not reads:  # (`k, b = sess.run([tf.get_variable("kernel"), tf.get_variable("bias")])`, each read in place)
            inside = calls_in(block.body)
            variables = [c for c in inside if (api(c.func) or "").split(".")[-1] == "get_variable"]
            if variables and all(_read_by_name(c, api) for c in variables) and all(
                    isinstance(s, cst.SimpleStatementLine) for s in block.body.body) and not any(
                    (api(c.func) or "").split(".")[-1] in ("variable_scope", "Variable") or "layers" in (api(c.func) or "")
                    for c in inside):
                reads = [(None, c) for c in variables]
        if reads:
            found[id(block)] = reads
    return found


def _read_by_name(call: cst.Call, api) -> bool:
    """`tf.get_variable("weights")`: a literal name and nothing else (a read under `reuse=True`)."""
    return (api(call.func) or "").split(".")[-1] == "get_variable" and len(call.args) == 1 \
        and call.args[0].keyword is None and isinstance(call.args[0].value, cst.SimpleString)


def _lookup_name(scope: cst.With, call: cst.Call) -> str:
    return f"{scope.items[0].item.args[0].value.evaluated_value}/{call.args[0].value.evaluated_value}"


def _in_tf1_graph(function: cst.FunctionDef, calls: List[cst.Call], raising: cst.Call, block: cst.With,
                  tf: str) -> Optional[str]:
    """A model function's call expected to raise where TF1 raised it: TF1's variable store said
    that a variable existed (a second call without `reuse`) or did not (`reuse=True` first).
    One tracked object shares by name and never says so; `tf.compat.v1.wrap_function` builds a
    TF1 graph, with TF1's variable store, and raises TF1's ValueError (measured under TF 2.21: "Variable
    shared/w already exists, disallowed", "... does not exist"). The test's model calls before it
    are built there first, as they were in the test's graph. None where that is not the same: one
    of them not a statement of the body the check is in (the test's, or its graph block's), or
    reading a name bound more than once or to a placeholder (the test's placeholders make it a
    traced function, inside which a wrapped TF1 graph fails to raise TF1's error: measured), or
    the checked call alone in its block other than as a statement."""
    body = next((list(b.body) for b in m.findall(function, m.IndentedBlock()) if any(s is block for s in b.body)), [])
    index = next((i for i, s in enumerate(body) if s is block), None)  # (in the test's body, or its graph block)
    inner = block.body.body if isinstance(block.body, cst.IndentedBlock) else []
    if index is None or len(inner) != 1 or not m.matches(inner[0], m.SimpleStatementLine(body=[m.Expr(m.Call())])) \
            or inner[0].body[0].value is not raising:
        return None
    counts: Dict[str, int] = {}
    placeholders = set()
    for assign in m.findall(function, m.Assign() | m.AugAssign() | m.AnnAssign()):
        targets = assign.targets if isinstance(assign, cst.Assign) else [assign]
        for target in targets:
            for name in m.findall(target.target, m.Name()):
                counts[name.value] = counts.get(name.value, 0) + 1
        if isinstance(assign, cst.Assign) and "placeholder" in code(assign.value):
            placeholders |= {code(t.target) for t in assign.targets}
    before = []
    for call in calls:
        if call is raising:
            break
        at = next((i for i, s in enumerate(body) if any(found is call for found in calls_in(s))), None)
        if at is None or at >= index or not isinstance(body[at], cst.SimpleStatementLine):
            return None
        before.append(call)
    for call in [*before, raising]:
        read = {n.value for n in m.findall(call, m.Name())}
        if "placeholder" in code(call) or read & placeholders or any(counts.get(n, 0) > 1 for n in read):
            return None
    return f"{tf}.compat.v1.wrap_function(lambda: [{', '.join(code(c) for c in [*before, raising])}], [])"


def _quoted(text: str) -> str:
    return f'"{text}"' if '"' not in text and "\\" not in text else repr(text)


def _variable_names(function: cst.FunctionDef, lists: Set[int]) -> Set[str]:
    """The names bound to a listed variable: `v` of `for v in tf.trainable_variables()` (or of a
    name assigned such a list), `w, b = tf.trainable_variables()`."""
    listed: Set[str] = set()
    held: Set[str] = set()
    for assign in m.findall(function, m.Assign()):
        if isinstance(assign.value, cst.Call) and id(assign.value) in lists:
            for target in assign.targets:
                if isinstance(target.target, cst.Name):
                    listed.add(target.target.value)
                elif isinstance(target.target, (cst.Tuple, cst.List)):
                    held |= {e.value.value for e in target.target.elements if isinstance(e.value, cst.Name)}

    def of_lists(node) -> bool:
        return (isinstance(node, cst.Call) and id(node) in lists) or (isinstance(node, cst.Name) and node.value in listed)
    for loop in m.findall(function, m.For() | m.CompFor()):
        if of_lists(loop.iter) and isinstance(loop.target, cst.Name):
            held.add(loop.target.value)
    return held


class _Routed(cst.CSTTransformer):
    def __init__(self, calls, lists, api, store: str, held: Set[str], lookups=None, raising=None):
        self.calls, self.lists = {id(c) for c in calls}, {id(c) for c in lists}
        self.api, self.store, self.held = api, store, held
        self.lookups, self.raising = lookups or {}, raising or {}
        self.in_place: Dict[int, str] = {}  # id(a `get_variable("w")` read in place) -> "scope/w" (visit_With)

    def visit_With(self, node: cst.With) -> None:
        for name, call in self.lookups.get(id(node), ()):
            if name is None:
                self.in_place[id(call)] = _lookup_name(node, call)

    def leave_With(self, original: cst.With, updated: cst.With):
        if id(original) not in self.lookups:
            return updated
        if self.lookups[id(original)][0][0] is None:  # (read in place: leave_Call wrote each; the block's statements stay)
            kept = list(updated.body.body)
            kept[0] = kept[0].with_changes(leading_lines=[*updated.leading_lines, *kept[0].leading_lines])
            return cst.FlattenSentinel(kept)
        reads = [cst.parse_statement(f"{name} = {self.store}.variable({_quoted(_lookup_name(original, call))})\n")
                 for name, call in self.lookups[id(original)]]
        reads[0] = reads[0].with_changes(leading_lines=updated.leading_lines)
        return cst.FlattenSentinel(reads)

    def leave_Call(self, original: cst.Call, updated: cst.Call) -> cst.BaseExpression:
        if id(original) in self.in_place:
            return cst.parse_expression(f"{self.store}.variable({_quoted(self.in_place[id(original)])})")
        if id(original) in self.raising:
            return cst.parse_expression(self.raising[id(original)])
        if id(original) in self.calls:
            return updated.with_changes(func=cst.Name(self.store), args=[cst.Arg(updated.func), *updated.args])
        if id(original) in self.lists:
            method = LISTS[(self.api(original.func) or "").split(".")[-1]]
            return cst.parse_expression(f"{self.store}.{method}()")
        return updated

    def leave_Attribute(self, original: cst.Attribute, updated: cst.Attribute) -> cst.BaseExpression:
        # `v.op.name` -> `v.name.split(":")[0]` (eager variables have no op)
        if m.matches(updated, m.Attribute(value=m.Attribute(value=m.Name(), attr=m.Name("op")), attr=m.Name("name"))) \
                and updated.value.value.value in self.held:
            return cst.parse_expression(f'{updated.value.value.value}.name.split(":")[0]')
        # `tf.trainable_variables()[0].op.name`, the list already the store's
        if m.matches(updated, m.Attribute(value=m.Attribute(value=listed_item(self.store), attr=m.Name("op")),
                                          attr=m.Name("name"))):
            return cst.parse_expression(f'{code(updated.value.value)}.name.split(":")[0]')
        return updated


def listed_item(store: str) -> m.Subscript:
    """`store.trainable()[k]` / `store.all()[k]`: one of the variables the store lists, whose
    `.name` reads as TF1's."""
    return m.Subscript(value=m.Call(func=m.Attribute(value=m.Name(store), attr=m.Name("trainable") | m.Name("all")),
                                    args=[]))


def store_class(tf: str) -> cst.ClassDef:
    return cst.parse_statement(STORE.format(tf=tf))


def with_store(module: cst.Module, tf: str) -> cst.Module:
    """`module` with STORE defined after its imports (once), and TensorFlow's legacy Keras switched
    on before TensorFlow loads (`track_tf1_style_variables` is tf-keras's)."""
    if any(isinstance(s, cst.ClassDef) and s.name.value == STORE_NAME for s in module.body):
        return module
    body = list(module.body)
    at = 0
    for k, statement in enumerate(body):
        if m.matches(statement, m.SimpleStatementLine(body=[m.Import() | m.ImportFrom()])) or (
                k == 0 and m.matches(statement, m.SimpleStatementLine(body=[m.Expr(m.SimpleString())]))):
            at = k + 1
        elif at:
            break
    store = store_class(tf).with_changes(leading_lines=[cst.EmptyLine(), cst.EmptyLine()])
    body = [*body[:at], store, *body[at:]]
    if not LEGACY_KERAS_SET.search(module.code):
        first = next(k for k, s in enumerate(body) if "tensorflow" in code(s) and m.matches(
            s, m.SimpleStatementLine(body=[m.Import() | m.ImportFrom()])))
        switch = list(cst.parse_module(legacy_keras_switch(cst.Module(body=body), body[first])).body)
        switch[0] = switch[0].with_changes(leading_lines=body[first].leading_lines)
        body = [*body[:first], *switch, body[first].with_changes(leading_lines=[]), *body[first + 1:]]
    return module.with_changes(body=body)


def traced_first(function: cst.FunctionDef, store: str) -> cst.FunctionDef:
    """A `tf.function` of the test that calls the model code is traced where it is defined when the
    test reads the variable lists: TF1 made the variables when it built the graph, eagerly its
    first trace makes them."""
    if f"{store}.trainable()" not in code(function) and f"{store}.all()" not in code(function):
        return function
    return function.visit(_TracedFirst(store))


class _TracedFirst(cst.CSTTransformer):
    def __init__(self, store: str):
        self.store = store

    def leave_IndentedBlock(self, original, updated):
        body, moved = [], False
        for statement in updated.body:
            if moved and hasattr(statement, "leading_lines"):  # (the blank line after the `def` stays after it)
                body[-1] = body[-1].with_changes(leading_lines=statement.leading_lines)
                statement = statement.with_changes(leading_lines=[])
            body.append(statement)
            moved = isinstance(statement, cst.FunctionDef) and f"{self.store}(" in code(statement) and any(
                "function" in code(d.decorator) for d in statement.decorators)
            if moved and f"{statement.name.value}.get_concrete_function()" not in code(
                    updated.body[updated.body.index(statement) + 1] if statement is not updated.body[-1] else statement):
                body.append(cst.parse_statement(f"{statement.name.value}.get_concrete_function()\n"))
        return updated.with_changes(body=body)


def check_order(function: cst.FunctionDef, store: str) -> None:
    """Refused where the rewritten test reads the variable lists before any code that calls the
    model functions (a graph function the test rewrite defined below the read: TF1 had built
    them first, eagerly nothing is made yet)."""
    called = False
    for line in m.findall(function, m.SimpleStatementLine()):
        text = code(line)
        if not called and (f"{store}.trainable()" in text or f"{store}.all()" in text) and f"{store}(" not in text:
            raise Refused(line, "the variable lists read before the model code that makes them is run eagerly")
        called = called or f"{store}(" in text


def spellings(outside: Dict[str, str], eager: Tuple[str, ...], suffix: str) -> Models:
    """The local spellings of the model functions `eager` lists (`ops.f:model`), given the test
    file's imported names (`outside`: local name -> module)."""
    return Models(frozenset(spelling for entry in eager if entry.endswith(suffix)
                            for spelling in local_spellings(outside, entry[:-len(suffix)])))
