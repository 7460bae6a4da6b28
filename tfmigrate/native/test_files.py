"""`tf.test.TestCase` files under `fix --native` (issue 22, item 2).

A TF1 test method builds a graph and runs it in `self.test_session()` / `cached_session()` /
`session()`. Where that is exact, it becomes an eager test: the `with` goes (its body dedented),
`sess.run(t)` and `t.eval()` become `self.evaluate(t)`, the initializer run goes (variables are
initialized when made), a placeholder fed once with a value known where it is made becomes that
value as a `tf.constant`, and `tf.gradients(y, x)` of a `y` computed from `x` in a straight line
in the method becomes a `tf.GradientTape`. A session `with` in a loop, a branch or a nested helper
is opened where it is; a test that runs nothing is a shape test (native.shape_traces).

Anything else raises Blocked, naming the method and the construct: the whole file then keeps the
compat route (TFM200 puts `disable_v2_behavior()` at its own top) rather than relying on another
module to switch the process to graph mode. Eager code runs each op when it is built, so what
would differ is refused: state changed when a graph ran (assignments, optimizers other than a
train op of the project's model functions, native.test_training), random draws,
errors a graph raised only when run (`assertRaises`), graph objects (`.name`, `.op`,
collections), and calls into modules of the project, which nothing proves run eagerly.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Dict, FrozenSet, List, Optional, Sequence, Set, Tuple

import libcst as cst
import libcst.matchers as m

from tfmigrate.facts.eager_functions import DRAWS_ENTRY, MODEL_ENTRY, RUN_DRAWS, SHARES_ENTRY, function_draws
from tfmigrate.facts.names import ImportTable, dotted
from tfmigrate.native.graph_functions import gradient_graphs, graphed
from tfmigrate.native.script import Blocked, Blocker
import tfmigrate.native.test_models as test_models
import tfmigrate.native.test_training as test_training
import tfmigrate.native.feed_helpers as feed_helpers
import tfmigrate.native.gradient_checks as gradient_checks
import tfmigrate.native.new_graphs as new_graphs
import tfmigrate.native.setup_tapes as setup_tapes
from tfmigrate.native.setup_feeds import constant_setup_feeds
from tfmigrate.native.setup_graphs import setup_graphs
from tfmigrate.native.setup_tapes import SETUP, SetupTape, check_test, module_tapes, self_sources, taped_setup
from tfmigrate.native.shape_traces import DEFERRED_ASSERTIONS, named_placeholders, traced_shapes
from tfmigrate.native.syntax import (assignments_in, bind, bound_names, calls_in, code, found_in, fresh_name, functions_in,
                                     name_nodes, holds, names_assigned, names_in, names_read, tensor_spec)

SESSION_METHODS = ("test_session", "cached_session", "session")
INITIALIZERS = ("global_variables_initializer", "initialize_all_variables", "local_variables_initializer",
                "initialize_local_variables", "variables_initializer", "initialize_variables")
# TensorFlow API that runs otherwise eagerly: graph objects, state changed when a graph ran, random
# draws, whole TF1 subsystems. (`random` and the initializers are allowed where said below.)
NOT_EAGER_API = re.compile(
    r"(?:^|\.)(?:placeholder\w*|Session|InteractiveSession|Graph|get_default_graph|reset_default_graph|"
    r"get_variable|variable_scope|get_collection\w*|add_to_collection\w*|GraphKeys|global_variables|"
    r"local_variables|trainable_variables|all_variables|model_variables|assign\w*|scatter_\w+|count_up_to|"
    r"random\w*|truncated_normal|multinomial|dropout|py_func|numpy_function|make_template|"
    r"set_random_seed|get_seed|Print|control_dependencies|tables_initializer|import_graph_def|"
    r"test\.compute_gradient\w*|disable_\w+|enable_v2_behavior)$"
    r"|^(?:train|summary|layers|contrib|keras|data|estimator|nn\.rnn_cell|nn\.\w*rnn|random|"
    r"compat\.v1\.(?:train|summary|layers))\.")
SEEDED_DRAWS = {"random_normal": "normal", "random_uniform": "uniform", "truncated_normal": "truncated_normal",
                "random_truncated_normal": "truncated_normal"}  # (TF1's and TF2's names of a kind)
GRAPH_SEEDS = ("set_random_seed", "set_seed")  # (eagerly they set the global seed, the graph's in TF1)
RANDOM_API = re.compile(r"(?:^|\.)(?:random\w*|truncated_normal|multinomial)$|^random\.")
# Methods of tensors and variables that change state, or read what eager tensors do not have.
NOT_EAGER_METHODS = ("assign", "assign_add", "assign_sub", "scatter_update", "scatter_add", "scatter_sub",
                     "scatter_nd_update", "load", "initializer", "initialized_value", "count_up_to")
GRAPH_ATTRIBUTES = ("name", "op", "graph", "consumers", "value_index", "device")
# Modules whose functions build no TensorFlow graph, or build it alike eagerly (TensorFlow itself,
# TensorFlow Probability, written for both): calls into any other imported module (the project's own
# code) are not proven to run eagerly.
PLAIN_MODULES = {"numpy", "math", "itertools", "functools", "collections", "absl", "unittest", "six", "numbers",
                 "operator", "string", "re", "os", "sys", "copy", "contextlib", "typing", "mock", "__future__",
                 "tensorflow", "scipy", "tree", "tensorflow_probability"}
PLACEHOLDER_PARAMS = ("dtype", "shape", "name")
# Errors only Python code raises, the same in a graph program and eagerly (`assertRaises` of one is kept).
PYTHON_ERRORS = ("NotImplementedError", "RuntimeError", "KeyError")


def is_test_file(module: cst.Module, names: ImportTable) -> bool:
    """It defines a `tf.test.TestCase` class."""
    return bool(_test_classes(module, names))


def rewrite(module: cst.Module, source: str, line_of, eager: Tuple[str, ...] = (), unsafe: bool = False) -> Optional[str]:
    """The test file as eager TF2, None when it has no `tf.test.TestCase` (Blocked: the method and
    construct that keep the file on the compat route). `eager`: the project's modules it imports
    that an eager test may call (project.graph_imports.eager_imports); `unsafe`: a draw without a
    seed may stay, noted in the code (`unseeded_draw`)."""
    names = ImportTable(module, source)
    classes = _test_classes(module, names)
    if not classes:
        return None
    plain = next((local for local, target in sorted(names.aliases.items()) if target == "tensorflow"), None)
    tf = plain or next((local for local, target in sorted(names.aliases.items())
                        if target == "tensorflow.compat.v1"), None)
    if tf is None:
        raise Blocked(1, "a test file without `import tensorflow as tf`")
    outside = {name: full for name, full in _outside_modules(module).items()
               if full not in eager and full.rpartition(".")[0] not in eager}
    models = test_models.spellings(outside, eager, MODEL_ENTRY)
    models = test_models.Models(models.spellings, test_models.spellings(outside, eager, SHARES_ENTRY).spellings)
    allowed = {f"{local}.{entry.rpartition('.')[2]}" for local, full in outside.items() for entry in eager
               if entry.rpartition(".")[0] == full and not entry.endswith((MODEL_ENTRY, SHARES_ENTRY))
               and DRAWS_ENTRY not in entry}  # (a module's pure functions one by one)
    defined = {f.name.value for c in module.body if isinstance(c, cst.ClassDef) and c.name.value in classes
               for f in c.body.body if isinstance(f, cst.FunctionDef)}
    file = _File(names, tf, outside, line_of, any(names.api(c.func) == "Variable" for c in calls_in(module)),
                 frozenset(defined), frozenset(traced_helpers(module, classes, names)), _graph_tests(module, names),
                 frozenset(_outside_modules(module)) | {f.name.value for f in module.body if isinstance(f, cst.FunctionDef)},
                 not any((names.api(c.func) or "").split(".")[-1] in GRAPH_SEEDS for c in calls_in(module)), unsafe,
                 models, frozenset(allowed), draws=_draw_spellings(module, source, eager))
    file.lines.update({f"{c.name.value}.{f.name.value}": line_of(f) for c in module.body if isinstance(c, cst.ClassDef)
                       for f in c.body.body if isinstance(f, cst.FunctionDef)})
    bases = {b.value.value for c in module.body if isinstance(c, cst.ClassDef) for b in c.bases
             if isinstance(b.value, cst.Name)}
    module = module.with_changes(body=[constant_setup_feeds(c, names.api, tf, bases) if isinstance(c, cst.ClassDef)
                                       and c.name.value in classes else c for c in module.body])
    graphs, refusals = setup_graphs({c.name.value: c for c in module.body if isinstance(c, cst.ClassDef)
                           and c.name.value in classes}, bases, lambda node, api: (names.api(node) or "").split(".")[-1] == api,
                          tf, names_assigned(cst.Module(body=[s for s in module.body if not isinstance(s, cst.ClassDef)]))
                          | {c.name.value for c in module.body if isinstance(c, cst.ClassDef)})
    module = module.with_changes(body=[graphs.get(c.name.value, c) if isinstance(c, cst.ClassDef) else c
                                       for c in module.body])
    tapes = module_tapes({c.name.value: c for c in module.body if isinstance(c, cst.ClassDef)
                          and c.name.value in classes}, names)
    new_body = []
    try:
        for node in module.body:  # (the methods first: what stops them is named the same on each fix pass)
            if isinstance(node, cst.ClassDef):
                if node.name.value in refusals:
                    refusal = refusals[node.name.value]
                    raise Blocked(line_of(refusal.node), f"the class `{node.name.value}`: placeholders `setUp` "
                                                         f"makes for its tests to feed, with {refusal.what}")
                new_body.append(_rewritten_class(node, node.name.value in classes, tapes.get(node.name.value), file,
                                                 node.name.value in bases))
            elif isinstance(node, cst.FunctionDef):
                new_body.append(_Method(node, node.name.value, False, file).rewritten())
            else:
                new_body.append(node)
        for node in module.body:
            if not isinstance(node, (cst.ClassDef, cst.FunctionDef)) and not _is_import(node):
                _check_eager(node, "the test file's top level", names, outside, line_of)
    except Blocked:
        if file.held:
            raise _held(file, module, classes)
        raise
    if file.held:
        raise _held(file, module, classes)
    if plain is None:  # (what stops it is named first: a second fix pass says the same)
        raise Blocked(1, "a test file on TensorFlow's compat route (`import tensorflow.compat.v1`)")
    rewritten = module.with_changes(body=new_body)
    if file.gradient_checked:
        rewritten = gradient_checks.with_helper(rewritten, tf)
    if file.stored:
        rewritten = test_models.with_store(rewritten, tf)
    if file.unseeded and file.unsafe:
        rewritten = rewritten.visit(_UnseededNoted(names))
    if file.seed_noted:
        rewritten = rewritten.visit(_SeedNoted(names, file.seed_noted))
    text = rewritten.code
    if text == source:
        raise Blocked(1, "a test file with no test session, run or placeholder to rewrite")
    return text


def _held(file: _File, module: cst.Module, classes: Set[str]) -> Blocked:
    """The first test method that holds the file, with the others and the number of test methods."""
    (_, first), others = file.held[0], tuple(file.held[1:])
    stop = Blocked(first.line, first.construct)
    stop.blocker.held = others
    stop.blocker.tests = sum(1 for c in module.body if isinstance(c, cst.ClassDef) and c.name.value in classes
                             for f in c.body.body if isinstance(f, cst.FunctionDef) and f.name.value.startswith("test"))
    return stop


def traced_helpers(module: cst.Module, classes: Set[str], names: ImportTable) -> Set[str]:
    """Helper methods of the test classes called only inside shape traces: every `self.h` is a
    call in a test that runs nothing and makes placeholders (a shape test, traced as a graph is
    built, or refused), and `h` itself makes, runs and differentiates nothing and checks with no
    TensorFlow assertion a trace defers (shape_traces.DEFERRED_ASSERTIONS) nor another helper.
    Its `assertRaises` then sees the error graph construction raises, as in TF1."""
    methods: Dict[str, List[cst.FunctionDef]] = {}
    for node in module.body:
        if isinstance(node, cst.ClassDef) and node.name.value in classes:
            for function in node.body.body:
                if isinstance(function, cst.FunctionDef):
                    methods.setdefault(function.name.value, []).append(function)
    callers: Dict[str, List[Tuple[cst.FunctionDef, bool]]] = {}
    for functions in methods.values():
        for function in functions:
            called = {id(c.func) for c in calls_in(function)}
            for attribute in m.findall(function, m.Attribute(value=m.Name("self"))):
                if attribute.attr.value in methods:
                    callers.setdefault(attribute.attr.value, []).append((function, id(attribute) in called))

    def builds_only(function: cst.FunctionDef) -> bool:
        for call in calls_in(function):
            api = (names.api(call.func) or "").split(".")[-1]
            if api in ("placeholder", "placeholder_with_default", "gradients", *INITIALIZERS):
                return False
            if isinstance(call.func, cst.Attribute) and names.api(call.func) is None and (
                    call.func.attr.value in ("run", "eval", *SESSION_METHODS)
                    or (dotted(call.func.value) == "self" and (call.func.attr.value in DEFERRED_ASSERTIONS
                                                               or call.func.attr.value in methods))):
                return False
        return True

    def shape_test(function: cst.FunctionDef) -> bool:
        calls = calls_in(function)
        return any((names.api(c.func) or "").split(".")[-1] == "placeholder" for c in calls) and not any(
            (isinstance(c.func, cst.Attribute) and names.api(c.func) is None and c.func.attr.value in ("run", "eval"))
            or (dotted(c.func) or "").split(".")[-1] in SESSION_METHODS
            or (names.api(c.func) or "").split(".")[-1] in ("gradients", *INITIALIZERS) for c in calls)

    return {name for name, functions in methods.items()
            if not name.startswith("test") and name not in (SETUP, "tearDown") and callers.get(name)
            and all(builds_only(f) for f in functions)
            and all(is_call and function.name.value != name and shape_test(function)
                    for function, is_call in callers[name])}


def _graph_tests(module: cst.Module, names: ImportTable) -> bool:
    """The file's tests build and run graphs (a test session, a placeholder, `tf.gradients`, an
    initializer): TF1 tests, not tests already written for eager TF2 (left as they are)."""
    return any((names.api(c.func) or "").split(".")[-1] in ("placeholder", "placeholder_with_default",
                                                             "gradients", *INITIALIZERS)
               or (isinstance(c.func, cst.Attribute) and names.api(c.func) is None
                   and c.func.attr.value in SESSION_METHODS) for c in calls_in(module))


def _is_import(node) -> bool:
    return isinstance(node, cst.SimpleStatementLine) and all(
        isinstance(small, (cst.Import, cst.ImportFrom)) for small in node.body)


def _test_classes(module: cst.Module, names: ImportTable) -> Set[str]:
    """Names of the module's `tf.test.TestCase` classes (and of its classes derived from them)."""
    found: Set[str] = set()
    for node in module.body:
        if isinstance(node, cst.ClassDef) and any(
                (names.api(base.value) or "").endswith("test.TestCase") or dotted(base.value) in found
                for base in node.bases):
            found.add(node.name.value)
    return found


def _outside_modules(module: cst.Module) -> Dict[str, str]:
    """Local name -> module, for names imported from modules outside PLAIN_MODULES."""
    found: Dict[str, str] = {}
    for statement in module.body:
        if not isinstance(statement, cst.SimpleStatementLine):
            continue
        for small in statement.body:
            if isinstance(small, cst.Import):
                for alias in small.names:
                    full = dotted(alias.name) or ""
                    if full.split(".")[0] not in PLAIN_MODULES:
                        found[alias.evaluated_alias or full.split(".")[0]] = full
            elif isinstance(small, cst.ImportFrom) and not isinstance(small.names, cst.ImportStar):
                full = ("." * len(small.relative)) + (dotted(small.module) or "" if small.module else "")
                if full.split(".")[0] not in PLAIN_MODULES:
                    for alias in small.names:
                        found[alias.evaluated_alias or alias.evaluated_name] = f"{full}.{alias.evaluated_name}"
    return found


@dataclass(frozen=True)
class _File:
    """What every function of the test file is read with."""
    names: ImportTable
    tf: str  # the module's alias of TensorFlow
    outside: Dict[str, str]  # names from modules not proven to run eagerly -> their module
    line_of: object
    makes_variables: bool  # (its initializer runs are kept, as a no-op eagerly)
    methods: FrozenSet[str] = frozenset()  # the methods its test classes define
    traced_helpers: FrozenSet[str] = frozenset()  # those called only inside shape traces (traced_helpers)
    graph_tests: bool = True  # it runs graphs (a test session, placeholders...): not yet eager TF2
    project: FrozenSet[str] = frozenset()  # its own functions, and names it imports from modules outside PLAIN_MODULES
    unseeded: bool = False  # it sets no graph seed: a draw without a seed may stay (`unseeded_draw`)...
    unsafe: bool = False  # ...with `--unsafe-fixes`, noted in the code
    models: test_models.Models = test_models.Models()  # the project's model functions it may call (test_models)
    allowed: FrozenSet[str] = frozenset()  # `ops.f`, pure, of a module not wholly eager that a test may call
    stored: Set[str] = field(default_factory=set)  # the methods that call model code (test_models.STORE)
    gradient_checked: Set[str] = field(default_factory=set)  # the methods that check gradients (gradient_checks)
    held: List[Tuple[str, Blocker]] = field(default_factory=list)  # test methods that keep the route, in order
    lines: Dict[str, int] = field(default_factory=dict)  # "Class.method" -> the line of its `def` as written
    draws: Dict[str, str] = field(default_factory=dict)  # `ops.f` / `f` of the project -> what it draws (_draw_spellings)
    seed_noted: Dict[str, str] = field(default_factory=dict)  # "Class.method" -> the project function whose draws move


def _draw_spellings(module: cst.Module, source: str, eager: Tuple[str, ...]) -> Dict[str, str]:
    """The local spellings (`ops.sample_noise`, or `sample_noise` imported by name) of the
    project's functions whose numbers depend on the graph seed, and what they draw
    (facts.eager_functions.function_draws; the test file's own functions read here)."""
    found = dict(function_draws(source.encode("utf-8")) or {})
    imported = _outside_modules(module)
    for entry in eager:
        name, _, kind = entry.partition(DRAWS_ENTRY)
        if not kind:
            continue
        for local, full in imported.items():
            if full == name or full.startswith(name + "."):  # (`ops.f`, or a module that may draw anywhere)
                found[local] = kind
            elif full == name.rpartition(".")[0]:
                found[f"{local}.{name.rpartition('.')[2]}"] = kind
    return found


def _rewritten_class(node: cst.ClassDef, is_test: bool, tape: Optional[SetupTape], file: _File,
                     is_base: bool = False) -> cst.ClassDef:
    """`tape`: the one the test class's `setUp` records on (native.setup_tapes), if any; `setUp`
    records on it only when a method reads it (each gradient it was for may have gone into a graph
    function instead), or when the class is another test class's base (a subclass may read it)."""
    body, setup = [], None
    setup_function = next((s for s in node.body.body if isinstance(s, cst.FunctionDef) and s.name.value == SETUP), None)
    drawn = _Draws.of(setup_function, file.names, file.unseeded and file.unsafe, file.draws) if setup_function is not None \
        else _Draws()
    for statement in node.body.body:
        if isinstance(statement, cst.FunctionDef):
            where = f"{node.name.value}.{statement.name.value}"
            try:
                rewritten, method = _rewritten_method(statement, where, is_test, file, tape,
                                                      drawn if statement is not setup_function else _Draws())
            except Blocked as stop:  # (each test method that holds the file is named: TFM216)
                if stop.blocker.line <= 1:  # (a node a pre-pass wrote has no line: the method's own is named)
                    stop.blocker.line = file.lines.get(where, 1)
                if not (is_test and statement.name.value.startswith("test")):
                    raise
                file.held.append((where, stop.blocker))
                body.append(statement)
                continue
            if tape is not None and statement.name.value == SETUP:
                setup = (len(body), method)
            body.append(rewritten)
        else:
            _check_eager(statement, f"the class `{node.name.value}`", file.names, file.outside, file.line_of,
                         allowed=file.allowed)
            body.append(statement)
    if setup is not None:
        index, method = setup
        read = any(f"self.{tape.attribute}" in code(s) for k, s in enumerate(body) if k != index)
        if read or is_base or tape.inherited:
            body[index] = taped_setup(body[index], tape, file.tf, method.stop)
    return node.with_changes(body=node.body.with_changes(body=body))


def _check_eager(node: cst.CSTNode, where: str, names: ImportTable, outside: Dict[str, str], line_of,
                 handled: Sequence[cst.Call] = (), build_errors: bool = False, unseeded: bool = False,
                 unsafe: bool = False, allowed: FrozenSet[str] = frozenset(), held: FrozenSet[str] = frozenset()) -> None:
    """Blocked unless `node` runs the same eagerly as in a graph (`handled`: calls the rewrite
    itself takes care of; `build_errors`: `node` is traced, not run, so `assertRaises` sees the
    error graph construction raises, as in TF1; `allowed`: functions `ops.f` of modules not wholly
    eager it may call; `held`: names of variables, whose `.name` reads as in TF1)."""
    def stop(at, what):
        raise Blocked(line_of(at), f"{where}: {what}")

    allowed_ids = {id(call) for call in handled} | _errors_of_runs(node, names) | _tf1_graph_errors(node, names)
    for call in calls_in(node):
        if id(call) in allowed_ids:
            continue
        api = names.api(call.func)
        if api is not None and NOT_EAGER_API.search(api) and not _random_initial_value(call, node, names) \
                and not op_seed(call, names) and api.split(".")[-1] not in GRAPH_SEEDS \
                and not (unseeded and unsafe and unseeded_draw(call, names)):
            if unseeded and unseeded_draw(call, names):
                stop(call, f"`{code(call.func)}` without a seed: eager TF2 draws other numbers than TF1's test "
                           "graph (whose default seed fixed them), of the same distribution; `fix --unsafe-fixes "
                           "--native` rewrites it and notes it in the code")
            stop(call, f"`{code(call.func)}`, which does not run the same eagerly")
        if isinstance(call.func, cst.Attribute):
            method = call.func.attr.value
            if method in NOT_EAGER_METHODS:
                stop(call, f"`.{method}(...)`, which changes state when a graph runs it")
            if method.startswith("assertRaises") and not build_errors and not _python_error(call):
                stop(call, f"`self.{method}`: an error a graph raised when run is raised eagerly when the "
                           "tensor is built")
            if method in ("run", "eval") and api is None:
                stop(call, f"`{code(call.func)}(...)` other than a test session's run")
    called = {id(a.value) for a in m.findall(node, m.Attribute(value=m.Name())) if code(a) in allowed}
    for name in name_nodes(node):
        if name.value in outside and id(name) not in called and name.value not in allowed:
            stop(node, f"`{name.value}`, from `{outside[name.value]}`, a module `fix --native` has not proven to run "
                       "eagerly")

    class _Attributes(cst.CSTVisitor):
        def visit_Attribute(self, attr: cst.Attribute) -> None:
            if attr.attr.value in GRAPH_ATTRIBUTES and not (isinstance(attr.value, cst.Name) and (
                    attr.value.value in ("self", "cls", "os", "sys") or attr.value.value in held and attr.attr.value == "name")) \
                    and not (attr.attr.value == "name" and any(m.matches(attr.value, test_models.listed_item(store))
                                                               for store in held)):
                if names.api(attr) is None:
                    stop(attr, f"`.{attr.attr.value}`, which eager tensors do not have")

        def visit_ClassDef(self, inner: cst.ClassDef) -> None:
            stop(inner, f"the class `{inner.name.value}` defined inside")

    node.visit(_Attributes())


def _tf1_graph_errors(node: cst.CSTNode, names: ImportTable) -> Set[int]:
    """`with self.assertRaises(ValueError):` around one `tf.compat.v1.wrap_function(...)` statement
    alone: the call is built in a TF1 graph, which raises what TF1 raised (native.test_models
    writes it for a model function expected to raise). The ids of those checks."""
    found = set()
    for block in m.findall(node, m.With(items=[m.WithItem(item=m.Call(
            func=m.Attribute(value=m.Name("self"), attr=m.Name())), asname=None)])):
        inner = block.body.body if isinstance(block.body, cst.IndentedBlock) else []
        if block.items[0].item.func.attr.value.startswith("assertRaises") and len(inner) == 1 and m.matches(
                inner[0], m.SimpleStatementLine(body=[m.Expr(m.Call())])) and _in_tf1_graph(inner[0].body[0].value, names):
            found.add(id(block.items[0].item))
    return found


def _in_tf1_graph(call: cst.Call, names: ImportTable) -> bool:
    """`tf.compat.v1.wrap_function(...)`: what native.test_models builds in a TF1 graph."""
    return (names.api(call.func) or "").endswith("wrap_function")


def _changed_in_place(function: cst.FunctionDef, name: str) -> bool:
    """`name` may change without being bound again: an item or attribute assigned (`x[0] = 1`,
    `x += 1` of an item), a method of it called (`x.sort()`), or a shuffle given it."""
    target = m.Subscript(value=m.Name(name)) | m.Attribute(value=m.Name(name))
    return bool(m.findall(function, m.AssignTarget(target=target) | m.AugAssign(target=target)
                          | m.Call(func=m.Attribute(value=m.Name(name))))) or any(
        "shuffle" in (dotted(c.func) or "") and name in names_read(c) for c in calls_in(function))


def _errors_of_runs(node: cst.CSTNode, names: ImportTable) -> Set[int]:
    """`with self.assertRaises*(tf.errors.InvalidArgumentError, ...):` (or `assertRaisesOpError(
    "message")`, any op's error) around statements that build tensors and then run them: TF1 raised
    the op's error at the run, eagerly the same op raises it when built, inside the same block.
    (Not for errors TF1 raised while building: a shape function's ValueError may be an op's
    InvalidArgumentError eagerly.) The ids of those checks."""
    found = set()
    for block in m.findall(node, m.With(items=[m.WithItem(item=m.Call(
            func=m.Attribute(value=m.Name("self"), attr=m.Name())), asname=None)])):
        check = block.items[0].item
        op_error = check.func.attr.value == "assertRaisesOpError"
        if not (check.func.attr.value.startswith("assertRaises") and check.args
                and (op_error or (names.api(check.args[0].value) or "").startswith("errors."))):
            continue
        inner = block.body.body if isinstance(block.body, cst.IndentedBlock) else [block.body]
        if all(isinstance(s, (cst.SimpleStatementLine, cst.SimpleStatementSuite)) for s in inner) and any(
                isinstance(c.func, cst.Attribute) and c.func.attr.value in ("run", "eval", "evaluate")
                and names.api(c.func) is None for c in calls_in(inner[-1])):
            found.add(id(check))
    return found


@dataclass(frozen=True)
class _Draws:
    """The draws with seeds of their own a function makes: (kind, seed) of each, and the names
    (`x`, `self.x`) given what is computed from them."""
    pairs: Tuple[Tuple[str, str], ...] = ()
    names: FrozenSet[str] = frozenset()

    @staticmethod
    def of(function: cst.FunctionDef, names: ImportTable, unseeded: bool = False,
           project: Dict[str, str] = None) -> "_Draws":
        """`unseeded`: draws without a seed count too (a file with no graph seed: `unseeded_draw`);
        `project`: the project's functions that draw (`_draw_spellings`): what one that draws at
        each run computes counts too (TF1 drew anew at each run of it)."""
        pairs = tuple(p for p in (op_seed(c, names) for c in calls_in(function)) if p is not None)
        stores = _stores(function)

        def draws(call) -> bool:  # (a variable's random initial value is drawn once either way)
            return bool(op_seed(call, names)) or (unseeded and unseeded_draw(call, names)
                                                   and not _random_initial_value(call, function, names)) or (
                _drawn_by(_project_spelling(call, stores), project or {}) == RUN_DRAWS)
        if not any(draws(c) for c in calls_in(function)):
            return _Draws()
        drawn: Set[str] = set()
        for statement in m.findall(function, m.SimpleStatementLine()):
            if any(draws(c) for c in calls_in(statement)) or set(names_in(statement)) & drawn or {
                    code(a) for a in _attributes(statement)} & drawn:
                drawn |= names_assigned(statement) | {code(t.target) for a in assignments_in(statement)
                                                      for t in a.targets if isinstance(t.target, cst.Attribute)}
        return _Draws(pairs, frozenset(drawn))


UNSEEDED_NOTE = ("# tfmigrate: drawn without a seed: eager TF2 draws other numbers than TF1's test graph did "
                 "(same distribution)")


class _UnseededNoted(cst.CSTTransformer):
    """UNSEEDED_NOTE above each statement of a test that draws without a seed (what `--unsafe-fixes` changed)."""

    def __init__(self, names: ImportTable):
        self.names = names

    def leave_SimpleStatementLine(self, original, updated):
        if not any(unseeded_draw(c, self.names) and not _random_initial_value(c, original, self.names)
                   for c in calls_in(original)):
            return updated
        return _noted(updated, UNSEEDED_NOTE)


def _noted(statement: cst.SimpleStatementLine, note: str) -> cst.SimpleStatementLine:
    """`statement` with the comment `note` as its last leading line (once: a second fix pass adds none)."""
    if any(line.comment is not None and line.comment.value == note for line in statement.leading_lines):
        return statement
    return statement.with_changes(leading_lines=[*statement.leading_lines, cst.EmptyLine(comment=cst.Comment(note))])


def _store_call(stores: Set[str], method: str):
    """A matcher of `<store>.<method>(...)` for the STORE objects named `stores` (none: matches nothing)."""
    if not stores:
        return m.MatchIfTrue(lambda _node: False)
    return m.Call(func=m.Attribute(value=m.OneOf(*[m.Name(n) for n in stores]), attr=m.Name(method)))


def _bound_once_to(name: str, before: List[cst.BaseStatement], value) -> bool:
    """`name` is assigned once in `before`, alone, a value matching `value`."""
    bound = [a for s in before for a in assignments_in(s) if name in {code(t.target) for t in a.targets}]
    return len(bound) == 1 and len(bound[0].targets) == 1 and m.matches(bound[0].value, value)


def _stores(function: cst.FunctionDef) -> Set[str]:
    """The names of the STORE objects a routed test made (`tf1_variables = TF1Variables()`)."""
    return {code(t.target) for a in assignments_in(function) for t in a.targets
            if m.matches(a.value, m.Call(func=m.Name(test_models.STORE_NAME)))}


def _project_spelling(call: cst.Call, stores: Set[str]) -> Optional[str]:
    """`ops.f` of `ops.f(x)`, and of `tf1_variables(ops.f, x)` (a model function's call routed
    through its test's STORE object, native.test_models)."""
    name = dotted(call.func)
    if name in stores and call.args:
        return dotted(call.args[0].value)
    return name


def _drawn_by(spelling: Optional[str], draws: Dict[str, str]) -> Optional[str]:
    """What the project's `ops.f` draws (`_draw_spellings`), or its whole module (one that does not parse)."""
    if not spelling:
        return None
    return draws.get(spelling) or (draws.get(spelling.split(".")[0]) if "." in spelling else None)


def _seed_note(function: str) -> str:
    return f"# tfmigrate: `{function}` draws under this seed: eager TF2 draws other numbers than TF1 (same distribution)"


class _SeedNoted(cst.CSTTransformer):
    """A note above the graph seed of each test whose project calls draw (what `--unsafe-fixes` changed)."""

    def __init__(self, names: ImportTable, noted: Dict[str, str]):
        self.names, self.noted, self.where = names, noted, []

    def visit_ClassDef(self, node) -> None:
        self.where.append(node.name.value)

    def leave_ClassDef(self, original, updated):
        self.where.pop()
        return updated

    def visit_FunctionDef(self, node) -> None:
        self.where.append(node.name.value)

    def leave_FunctionDef(self, original, updated):
        self.where.pop()
        return updated

    def leave_SimpleStatementLine(self, original, updated):
        function = self.noted.get(".".join(self.where[:2]))
        if function is None or not any((self.names.api(c.func) or dotted(c.func) or "").split(".")[-1] in GRAPH_SEEDS
                                       for c in calls_in(original)):
            return updated
        return _noted(updated, _seed_note(function))


def unseeded_draw(call: cst.Call, names: ImportTable) -> bool:
    """A random op without a seed of its own (`tf.random_normal([3])`), in a file that sets no graph
    seed: TF1 drew other numbers at each run of the test, so a test that passed checks what holds
    of any draw, and eagerly it gets a draw of the same distribution. What `_draws_once` keeps
    exact is the rest: a random tensor run once (TF1 drew anew at each run, eagerly it is drawn
    once)."""
    api = names.api(call.func) or ""
    return bool(RANDOM_API.search(api)) and not any(a.keyword is not None and a.keyword.value == "seed"
                                                    for a in call.args)


def _once(function: cst.FunctionDef, call: cst.Call) -> bool:
    """`call` is not under a loop, a comprehension, a lambda or a nested function of `function`
    (but a graph function, native.graph_functions: measured, its seeded draw is TF1's)."""
    repeated = m.For() | m.While() | m.ListComp() | m.SetComp() | m.DictComp() | m.GeneratorExp() | m.Lambda()
    for node in m.findall(function.body, repeated | m.FunctionDef()):
        if isinstance(node, cst.FunctionDef) and any(
                m.matches(d.decorator, m.Call(func=m.Attribute(attr=m.Name("function")))) for d in node.decorators):
            continue
        if any(found is call for found in calls_in(node)):
            return False
    return True


def op_seed(call: cst.Call, names: ImportTable) -> Optional[Tuple[str, str]]:
    """(kind, seed) of a draw given a seed of its own as a number (`tf.random_normal([3], seed=1)`).
    Measured under TF 2.21: the first draw of each kind and seed in a test is the same number in
    TF1's test graph and eagerly, with or without `tf.set_random_seed` (TF1's pair is (graph seed
    or default, op seed) in both); a second op of that kind and seed, or a second run of it,
    draws otherwise (`_Method._draws_once`)."""
    kind = SEEDED_DRAWS.get((names.api(call.func) or "").replace("random.", "random_"))
    seed = next((a.value for a in call.args if a.keyword is not None and a.keyword.value == "seed"), None)
    if kind is None or not isinstance(seed, (cst.Integer, cst.Name)) or (isinstance(seed, cst.Name) and seed.value
                                                                         in ("None", "True", "False")):
        return None  # (a seed given by a name, `seed=size` of a parameterized test: `_draws_once` checks it)
    return kind, seed.value


def _random_initial_value(call: cst.Call, scope: cst.CSTNode, names: ImportTable) -> bool:
    """A random draw that only gives a `tf.Variable` its initial value (drawn once either way)."""
    if not RANDOM_API.search(names.api(call.func) or ""):
        return False
    return any(names.api(outer.func) == "Variable" and outer.args and holds(outer.args[0], call)
               for outer in calls_in(scope))


def _graph_reset_dropped(function: cst.FunctionDef, api) -> cst.FunctionDef:
    """The method without the `tf.reset_default_graph()` it starts with (`setUp`'s, so that each
    test builds in a new graph): eagerly there is no graph to reset, and each test's model code
    goes through an object of its own (native.test_models). Only as the body's first statement
    (after a docstring, or `super().setUp()`): a reset between two builds would part what the test made."""
    body = list(function.body.body)
    at = 0
    while at < len(body) and m.matches(body[at], m.SimpleStatementLine(body=[m.Expr(
            m.SimpleString() | m.Call(func=m.Attribute(value=m.Call(func=m.Name("super")), attr=m.Name("setUp"))))])):
        at += 1
    if len(body) <= at or not m.matches(body[at], m.SimpleStatementLine(body=[m.Expr(m.Call(args=[]))])) \
            or (api(body[at].body[0].value.func) or "").split(".")[-1] != "reset_default_graph":
        return function
    kept = body[:at] + body[at + 1:] or [cst.SimpleStatementLine(body=[cst.Pass()])]
    if at < len(kept) and body[at].leading_lines:  # (its comments stay, above the next statement)
        kept[at] = kept[at].with_changes(leading_lines=[*body[at].leading_lines, *kept[at].leading_lines])
    return function.with_changes(body=function.body.with_changes(body=kept))


def _rewritten_method(function: cst.FunctionDef, where: str, is_test: bool, file: _File,
                      tape: Optional[SetupTape] = None, drawn: "_Draws" = None) -> Tuple[cst.FunctionDef, "_Method"]:
    """The function rewritten, and the `_Method` that did it. A test whose placeholders no
    constant can stand for (fed more than once, in a loop, drawn at random, their shapes read)
    is tried again with its graphs as `tf.function`s (native.graph_functions)."""
    original = function
    function = _graph_reset_dropped(function, file.names.api)
    held: Optional[FrozenSet[str]] = None
    try:  # (only a test's own calls: what `setUp` or a helper made would not be the test's variables)
        routed = test_models.routed(function, file.models, file.names.api, file.tf) \
            if function.name.value.startswith("test") else None
    except test_models.Refused as refused:
        raise Blocked(file.line_of(refused.node), f"the test method `{where}`: {refused.what}")
    training = None
    if routed is not None:
        function, variables, store = routed
        held = frozenset(variables) | {store}  # (and the store: `store.trainable()[0].name` is TF1's name)
        file.stored.add(where)
        try:
            training = test_training.trained(function, store, file.names.api, file.tf)
        except test_training.Refused as refused:
            raise Blocked(file.line_of(refused.node), f"the test method `{where}`: {refused.what}")
        if training is not None:
            function = training.function
    function = new_graphs.bound_graphs(feed_helpers.shared_feeds(feed_helpers.named_feeds(function)), file.names.api)
    try:
        checked = gradient_checks.checked(function, file.names.api, file.tf) if is_test else None
    except gradient_checks.Refused as refused:
        raise Blocked(file.line_of(refused.node), f"the test method `{where}`: {refused.what}")
    if checked is not None:
        function = checked
        file.gradient_checked.add(where)
    method = _Method(function, where, is_test, file, tape, drawn, held, training)
    try:
        rewritten = method.rewritten()
    except Blocked:
        if not is_test:
            raise
        graphed = _Method(function, where, is_test, file, tape, drawn, held, training).graph_functions()
        if graphed is None:
            raise
        method = _Method(graphed, where, is_test, file, tape, drawn, held, training)
        rewritten = method.rewritten()
    if routed is None:
        return rewritten, method
    rewritten = test_models.traced_first(rewritten, store)
    try:
        test_models.check_order(rewritten, store)
    except test_models.Refused as refused:
        raise Blocked(file.line_of(original), f"the test method `{where}`: {refused.what}")
    return rewritten, method


class _Method:
    """One function of the test file, read and rewritten (a test method when `is_test`)."""

    def __init__(self, function: cst.FunctionDef, where: str, is_test: bool, file: _File,
                 tape: Optional[SetupTape] = None, drawn: "_Draws" = None, held: Optional[FrozenSet[str]] = None,
                 training: Optional[test_training.Trained] = None):
        """`held`: the names of variables of its calls of model functions, routed (test_models);
        `training`: its train op written as a step (test_training)."""
        self.function, self.where, self.is_test = function, where, is_test
        self.optimizers = training.optimizers if training is not None else frozenset()  # (written: they run eagerly)
        self.recomputed = training.recomputed if training is not None else frozenset()  # (drawn anew at each run)
        self.allowed = file.allowed | (file.models.spellings if held is not None else frozenset())  # (_check_eager)
        self.held = held or frozenset()
        self.drawn = drawn or _Draws()  # what its class's `setUp` drew with seeds of their own
        self.tape = tape  # the tape `setUp` records on, when its class has one (native.setup_tapes)
        self.names, self.tf, self.outside, self.line_of = file.names, file.tf, file.outside, file.line_of
        self.makes_variables = file.makes_variables
        self.methods, self.traced_helpers = file.methods, file.traced_helpers
        self.graph_tests, self.project, self.unseeded = file.graph_tests, file.project, file.unseeded
        self.unsafe = file.unsafe
        self.file = file
        self.taken = set(names_in(function))  # (names a rewrite adds inside it must not take)
        self.inline: Set[int] = set()  # placeholders written inside a traced call (`_traced`)
        # `tf.Session()` of a session `with`, `tf.Graph().as_default()` of a graph's (opened like a test session's)
        self.session_calls: List[cst.Call] = []
        self.dropped: Set[int] = set()  # `x = tf.placeholder(...)` statements whose `x` a trace takes
        self.traced_calls: Set[int] = set()
        self.recorded: Dict[int, List[int]] = {}  # gradient statement's index -> the test's statements recorded with it
        self.moved_any: Set[int] = set()
        self.sessions: Set[str] = set()
        self.graphs: Set[str] = set()  # `as g` of `with tf.Graph().as_default()` (opened, native._new_graph)
        self.bindings = 0  # `as sess` of the session `with`s
        self.hoisted: Dict[int, List[int]] = {}  # placeholder's index -> statements moved above it
        self.statements: List[cst.BaseStatement] = []  # the body, session `with`s at its top opened
        # Session `with`s in a loop, a branch or a nested function: opened where they are. They
        # only run what is built there (a feed or an initializer run there is refused below).
        self.nested: Set[int] = set()
        self.named_initializers: Dict[str, Tuple[cst.Call, cst.SimpleStatementLine]] = {}  # `init = tf...()`
        self.feed_statements: Set[int] = set()  # `feed = {...}` just before the run feeding it (dropped)
        self.listed: Set[int] = set()  # `tf.gradients` w.r.t. the model functions' trainable variables (_tape_region)
        self.watched_where_read: Set[str] = set()  # sources read by name from the model code's variables (_taped)
        # `tf.gradients(<expression>, xs)`: id(call) -> (the name it is computed by on the tape, its code)
        self.targets: Dict[int, Tuple[str, str]] = {}

    @property
    def label(self) -> str:
        return f"the test method `{self.where}`" if self.is_test else f"the function `{self.where}`"

    def stop(self, node, what: str):
        line = self.line_of(node)  # (a node a pre-pass wrote has no line: the method's own is named)
        raise Blocked(line if line > 1 else self.line_of(self.function), f"{self.label}: {what}")

    def rewritten(self) -> cst.FunctionDef:
        self.statements = self._opened(list(self.function.body.body))
        runs = self._runs()
        traced = {id(c) for d in functions_in(self.function) if d is not self.function and _is_tf_function(d, self.tf)
                  for c in calls_in(d)}  # (a graph function's gradients are a graph's, native.graph_functions)
        gradients = [c for c in calls_in(self.function) if self.names.api(c.func) == "gradients" and id(c) not in traced]
        initializers = self._initializer_statements()
        self._draws_once(runs)
        quiet = not (runs or gradients or initializers or self.sessions or self.nested)
        tracing = self.is_test and self.graph_tests and self.function.name.value not in self.traced_helpers
        raising = self._construction_errors() if tracing else {}
        self.traced_calls = set(raising)
        built = {key: build for key, (_, build) in raising.items()}
        built.update(self._dropped_builds() if tracing and quiet else {})
        built.update({id(c): lambda updated: updated.with_changes(func=cst.parse_expression(f"{self.tf}.random.set_seed"))
                      for c in calls_in(self.function) if self.names.api(c.func) == "set_random_seed"})
        # (a test that runs nothing may take gradients of what it builds: inside the trace, graph gradients)
        if self.is_test and (quiet or not (runs or initializers or self.sessions or self.nested)):
            self.statements = named_placeholders(
                self.statements, lambda call: self.names.api(call.func) == "placeholder" and id(call) not in self.inline,
                set(names_in(self.function)))
            shaped = self._placeholder_list()
            if shaped:
                if self.inline:
                    self.stop(self.function, "placeholders written inside a call beside placeholders given names")
                return self._shape_test(shaped, gradients, raising)
        placeholders = self._placeholders()
        handled = [call for call, _ in runs] + gradients + self.session_calls + [
            c for s in initializers for c in calls_in(s)] + [_assigned_call(s) for s in placeholders.values()] + [
            check for check, _ in raising.values()] + [c for c in calls_in(self.function) if id(c) in built
                                                       or code(c) in self.optimizers]
        traced = self.is_test and self.function.name.value in self.traced_helpers
        _check_eager(self.function, self.label, self.names, self.outside, self.line_of, handled,
                     build_errors=traced, unseeded=self.unseeded, unsafe=self.unsafe, allowed=self.allowed,
                     held=self.held)
        if not (runs or gradients or initializers or placeholders or self.sessions):
            opened = len(self.statements) != len(self.function.body.body) or any(
                a is not b for a, b in zip(self.statements, self.function.body.body))  # (a session run nothing)
            if not built and not opened:
                return self.function
            body = _replaced(self.statements, _Replace(built, dropped=self.dropped))
            return self.function.with_changes(body=self.function.body.with_changes(body=body))
        if not self.is_test:
            self.stop(self.function, "a graph run outside a `tf.test.TestCase`")
        constants = self._fed_constants(placeholders, runs)
        body = self._placed(placeholders, constants, initializers)
        tape = next(n for n in ("tape", "grad_tape", "gradient_tape") if n not in names_in(self.function))
        of_setup = [g for g in gradients if self.tape is not None
                    and set(self_sources(g, self.function) or ()) <= self.tape.sources
                    and self_sources(g, self.function)]
        gradients = [g for g in gradients if g not in of_setup]
        region = self._tape_region(body, gradients) if gradients else None
        builders = {id(call): self._evaluate(call) for call, _ in runs}
        builders.update(built)
        builders.update({id(g): lambda updated, tape=tape, listed=id(g) in self.listed, target=self.targets.get(id(g)):
                         _tape_gradient(tape, updated, listed, target[0] if target else None) for g in gradients})
        recordings = self._setup_gradients(body, of_setup, builders, region) if of_setup else {}
        body = _replaced(body, _Replace(builders, self.nested, self.dropped))
        if region is not None:
            body = self._taped(body, region, tape)
        if recordings:
            moved = {j for indices in self.recorded.values() for j in indices}
            for index, indices in self.recorded.items():  # (the test's part of `ys`, recorded too)
                first = recordings[index][0]
                inner = [body[j].with_changes(leading_lines=[]) if k == 0 else body[j] for k, j in enumerate(indices)]
                kept = [s for s in first.body.body if not m.matches(s, m.SimpleStatementLine(body=[m.Pass()]))]
                recordings[index][0] = first.with_changes(
                    body=first.body.with_changes(body=[*inner, *kept]),
                    leading_lines=body[indices[0]].leading_lines)
            body = [made for i, s in enumerate(body) if i not in moved for made in [*recordings.get(i, []), s]]
        return self.function.with_changes(body=self.function.body.with_changes(body=body))

    def _draws_once(self, runs) -> None:
        """Each draw with a seed of its own (`op_seed`) is the first of its kind and seed in the
        test (its `setUp` included), written once (not in a loop, a comprehension or a function),
        and what is computed from it is run once: then eager TF2 draws TF1's numbers."""
        seeded = [c for c in calls_in(self.function) if (self.names.api(c.func) or "").split(".")[-1] in GRAPH_SEEDS]
        draws = self.file.draws
        # (a test calls only the project's functions facts.eager_functions read: any other holds it anyway)
        stores = _stores(self.function)
        called = next((c for c in calls_in(self.function) if _drawn_by(_project_spelling(c, stores), draws)), None)
        if seeded and called is not None:
            if not self.unsafe:
                self.stop(seeded[0], f"`{code(seeded[0].func)}` in a test that calls `{_project_spelling(called, stores)}` of the "
                                     "project, whose own draws would change under the same seed (`fix --unsafe-fixes "
                                     "--native` rewrites it and notes it in the code)")
            self.file.seed_noted[self.where] = _project_spelling(called, stores)
        here = _Draws.of(self.function, self.names, self.unseeded and self.unsafe, draws)
        pairs = list(self.drawn.pairs) + list(here.pairs)
        named = {kind for kind, seed in pairs if not seed.isdigit()}  # (its value unknown here: alone of its kind)
        if len(set(pairs)) != len(pairs) or any(sum(1 for kind, _ in pairs if kind == k) > 1 for k in named):
            self.stop(self.function, "two draws of one kind with the same seed of their own, or one seed given by "
                                     "a name (eagerly the second continues the first's numbers, where TF1's "
                                     "started again)")
        for call in calls_in(self.function):
            if op_seed(call, self.names) and not _once(self.function, call):
                self.stop(call, f"`{code(call.func)}(...)` in a loop, a comprehension or a function (drawn "
                                "more than once: eagerly the draws continue, TF1 drew each run anew)")
        random = (set(here.names) | set(self.drawn.names)) - self.recomputed
        if not random:
            return
        fetched = 0
        for call, _ in runs:
            fetch = call.func.value if call.func.attr.value == "eval" else call.args[0].value
            if set(names_in(fetch)) & random or {code(a) for a in _attributes(fetch)} & random:
                fetched += 1 if _once(self.function, call) else 2  # (a run in a loop runs more than once)
        if fetched > 1:
            self.stop(self.function, "random tensors run more than once (TF1 drew anew at each run, eagerly "
                                     "they are drawn once)")

    def graph_functions(self) -> Optional[cst.FunctionDef]:
        """The test with its placeholders' graphs as `tf.function`s, None where that is not exact."""
        try:
            self.statements = self._opened(list(self.function.body.body))
            runs = self._runs()
        except Blocked:
            return None
        is_placeholder = lambda call: self.names.api(call.func) == "placeholder"  # noqa: E731
        if any(is_placeholder(c) for c in calls_in(self.function)):
            return graphed(self.function, self.statements, is_placeholder, runs, self.feed_statements, self.tf,
                           self.taken) if runs else None
        return gradient_graphs(
            self.function, self.statements, lambda call: self.names.api(call.func) == "gradients",
            lambda call: self.names.api(call.func) is not None or (dotted(call.func) or "").split(".")[0] in self.project,
            runs, self.tf, self.taken)

    def _construction_errors(self) -> Dict[int, Tuple[cst.Call, object]]:
        """`with self.assertRaises(ValueError):` around one call that runs nothing (a check of
        the arguments, shape inference): TF1 raised it while building the graph, eagerly an op
        may raise another error (`InvalidArgumentError`) when run. The call is traced instead,
        `tf.function(lambda: call, autograph=False).get_concrete_function()`, which builds the
        same ops in a graph and raises what TF1 raised. id(the call) -> (the check, its builder)."""
        checked = []
        for block in m.findall(self.function, m.With(items=[m.WithItem(item=m.Call(
                func=m.Attribute(value=m.Name("self"), attr=m.Name())), asname=None)])):
            check = block.items[0].item
            if not (check.func.attr.value.startswith("assertRaises") and check.args
                    and m.matches(check.args[0].value, m.Name("ValueError") | m.Name("TypeError"))):
                continue
            inner = block.body.body
            if len(inner) != 1 or not isinstance(inner[0], cst.SimpleStatementLine) or len(inner[0].body) != 1:
                continue
            small = inner[0].body[0]
            call = small.value if isinstance(small, (cst.Expr, cst.Assign)) else None
            if not isinstance(call, cst.Call) or m.matches(call.func, m.Attribute(attr=m.Name("get_concrete_function"))) \
                    or _in_tf1_graph(call, self.names) \
                    or any(isinstance(c.func, cst.Attribute) and c.func.attr.value in ("run", "eval", "evaluate")
                           or self.names.api(c.func) == "placeholder_with_default" for c in calls_in(call)):
                continue
            checked.append((block, check, call))
        named = self._named_for([(block, call) for block, _, call in checked])
        found = {}
        for block, check, call in checked:
            found.update({key: (check, build) for key, build in self._traced(call, named.get(id(call), [])).items()})
        return found

    def _named_for(self, checked: List[Tuple[cst.With, cst.Call]]) -> Dict[int, List[Tuple[str, cst.Call]]]:
        """id(checked call) -> (name, its placeholder) of each `x = tf.placeholder(...)` written
        in the same block just before the check (`for shape in shapes: x = tf.placeholder(tf.float32,
        shape)` then `with self.assertRaises(ValueError): f(x)`), when nothing but such checked
        calls reads `x`: `x` becomes a parameter of their trace, and its statement goes."""
        reads: Dict[str, int] = {}
        for node in name_nodes(self.function):
            reads[node.value] = reads.get(node.value, 0) + 1
        inside: Dict[str, int] = {}
        for _, call in checked:
            for name in names_in(call):
                inside[name] = inside.get(name, 0) + 1
        assigned: Dict[str, int] = {}
        for assignment in assignments_in(self.function):
            for target in assignment.targets:
                if isinstance(target.target, cst.Name):
                    assigned[target.target.value] = assigned.get(target.target.value, 0) + 1
        found: Dict[int, List[Tuple[str, cst.Call]]] = {}
        for suite in m.findall(self.function, m.IndentedBlock()):
            body = list(suite.body)
            for index, statement in enumerate(body):
                name, placeholder = _assigned_target(statement), _assigned_call(statement)
                if name is None or placeholder is None or self.names.api(placeholder.func) != "placeholder":
                    continue
                if assigned.get(name) != 1 or reads.get(name, 0) != 1 + inside.get(name, 0):
                    continue  # (read elsewhere, or assigned again: not this trace's alone)
                users = [(block, call) for block, call in checked if name in names_in(call)]
                later = body[index + 1:]
                holders = [next((k for k, s in enumerate(later) if s is block or holds(s, block)), None)
                           for block, _ in users]  # (the check, or the loop or block it is in)
                if not users or None in holders:
                    continue
                between = later[:max(holders) + (0 if all(later[k] is b for k, (b, _) in zip(holders, users)) else 1)]
                if names_assigned(cst.Module(body=between)) & names_read(placeholder):
                    continue  # (its shape or dtype would be read after they changed)
                self.dropped.add(id(statement))
                for _, call in users:
                    found.setdefault(id(call), []).append((name, placeholder))
        return found

    def _traced(self, call: cst.Call, named: Sequence[Tuple[str, cst.Call]] = ()) -> Dict[int, object]:
        """Builders tracing `call` (`tf.function(lambda ...: call, autograph=False)
        .get_concrete_function(...)`), each placeholder written inside it a parameter of the
        lambda, traced from a `tf.TensorSpec` of its shape and dtype: TF1 built the ops on a
        fresh placeholder and ran nothing. id(each call replaced) -> its builder."""
        builders, params, specs = {}, [], []
        for name, placeholder in named:  # (written before the check, given a name: native._named_for)
            params.append(name)
            specs.append(self._spec(placeholder))
            builders[id(placeholder)] = lambda updated: updated
            self.inline.add(id(placeholder))
        for inline in calls_in(call):
            if self.names.api(inline.func) != "placeholder":
                continue
            spec = self._spec(inline)
            name = fresh_name(self.taken, "t")
            params.append(name)
            specs.append(spec)
            builders[id(inline)] = lambda updated, name=name: cst.Name(name)
            self.inline.add(id(inline))
        head = f"lambda {', '.join(params)}:" if params else "lambda:"

        def build(updated: cst.Call) -> cst.BaseExpression:
            traced = f"{self.tf}.function({head} {code(updated)}, autograph=False).get_concrete_function("
            arguments = ", ".join(specs)
            if len(traced) + len(arguments) > 90 and specs:  # (the specs on a line of their own)
                arguments = f"\n    {arguments}"
            return cst.parse_expression(f"{traced}{arguments})")
        builders[id(call)] = build
        return builders

    def _spec(self, placeholder: cst.Call) -> str:
        """`tf.TensorSpec(shape, dtype)` of the placeholder."""
        try:
            bound = _bound(placeholder, PLACEHOLDER_PARAMS)
        except ValueError as error:
            self.stop(placeholder, f"`{code(placeholder)}`: {error}")
        if "dtype" not in bound:
            self.stop(placeholder, "a placeholder without a dtype")
        return tensor_spec(bound, self.tf)

    def _dropped_builds(self) -> Dict[int, object]:
        """In a test that runs nothing and writes its placeholders inside calls in a loop or a
        block (`f(tf.placeholder(tf.float32, sizes["q"]))` for each `sizes`), each statement
        there that only calls the project or TensorFlow, its result dropped, is traced
        (`_traced`): TF1 built those ops and never ran them (eagerly an op given an index out
        of range would raise). Only when no other placeholder is left."""
        tops = {id(s) for s in self.statements}
        calls = []
        for statement in m.findall(self.function, m.SimpleStatementLine(body=[m.Expr(value=m.Call())])):
            call = statement.body[0].value
            root = (dotted(call.func) or "").split(".")[0]
            top_placeholders = id(statement) in tops and any(
                self.names.api(c.func) == "placeholder" for c in calls_in(call))  # (named: shape_traces)
            if not top_placeholders and root != "self" and id(call) not in self.traced_calls and (
                    self.names.api(call.func) is not None or root in self.project):
                calls.append(call)
        covered = self.inline | {id(c) for call in calls for c in calls_in(call)}
        placeholders = [c for c in calls_in(self.function) if (self.names.api(c.func) or "").split(".")[-1]
                        in ("placeholder", "placeholder_with_default")]
        if not any(id(p) in covered for p in placeholders) or any(id(p) not in covered for p in placeholders):
            return {}
        found = {}
        for call in calls:
            found.update(self._traced(call))
        return found

    # -- sessions and their runs ------------------------------------------------------------
    def _session_with(self, statement) -> bool:
        if not (isinstance(statement, cst.With) and self.is_test):
            return False
        if len(statement.items) != 1:
            return False
        call = statement.items[0].item
        if self._new_graph(statement):
            return True
        if isinstance(call, cst.Call) and self.names.api(call.func) == "Session" and not call.args:
            self.session_calls.append(call)  # (`with tf.Session() as sess:` in a test: one of the test's graph)
        elif not (isinstance(call, cst.Call) and isinstance(call.func, cst.Attribute)
                  and dotted(call.func.value) == "self" and call.func.attr.value in SESSION_METHODS):
            return False
        if any((arg.keyword is None or arg.keyword.value not in ("use_gpu", "force_gpu")) and not (
                arg.keyword is not None and arg.keyword.value == "graph" and isinstance(arg.value, cst.Name)
                and arg.value.value in self.graphs) for arg in call.args):
            self.stop(statement, f"`{code(call.func)}(...)` given a graph or config")
        asname = statement.items[0].asname
        if asname is not None:
            if not isinstance(asname.name, cst.Name):
                self.stop(statement, "a test session bound to something other than a name")
            self.sessions.add(asname.name.value)
            self.bindings += 1
        return True

    def _new_graph(self, statement: cst.With) -> bool:
        """`with tf.Graph().as_default() [as g]:` in a test: TF1 built its body in a graph of its
        own, which eagerly is no graph at all (its `with` opened like a test session's). `g` may
        only be given to the test session inside (`self.test_session(graph=g)`)."""
        call = statement.items[0].item
        if not (m.matches(call, m.Call(func=m.Attribute(value=m.Call(args=[]), attr=m.Name("as_default")), args=[]))
                and self.names.api(call.func.value.func) == "Graph"):
            return False
        asname = statement.items[0].asname
        if asname is not None:
            if not isinstance(asname.name, cst.Name):
                self.stop(statement, "a new graph bound to something other than a name")
            name = asname.name.value
            given = m.findall(statement.body, m.Arg(keyword=m.Name("graph"), value=m.Name(name)))
            if names_in(self.function).count(name) != 1 + len(given):
                self.stop(statement, f"the graph `{name}` used other than given to the test session")
            self.graphs.add(name)
        self.session_calls.extend([call, call.func.value])
        return True

    def _opened(self, body: List[cst.BaseStatement]) -> List[cst.BaseStatement]:
        """The body with each session `with` at its top level replaced by its own body."""
        found = []
        for statement in body:
            if self._session_with(statement):
                inner = self._opened(list(statement.body.body))
                if inner and statement.leading_lines:
                    inner[0] = inner[0].with_changes(leading_lines=[*statement.leading_lines, *inner[0].leading_lines])
                if inner and found and isinstance(found[-1], cst.FunctionDef) and not inner[0].leading_lines:
                    inner[0] = inner[0].with_changes(leading_lines=[cst.EmptyLine(indent=False)])  # (after a def)
                found.extend(inner)
            else:
                found.append(statement)
        for statement in found:
            for inner in _nested_withs(statement):
                if self._session_with(inner):
                    self.nested.add(id(inner))
        if self.nested and any(self.names.api(c.func) == "Variable" for c in calls_in(self.function)):
            self.stop(self.function, "a test session opened inside a loop, a branch or a function, in a method "
                                     "that makes variables (each session initializes them anew)")
        return found

    def _runs(self) -> List[Tuple[cst.Call, Optional[cst.BaseExpression]]]:
        """(`sess.run(...)` / `t.eval(...)`, what it feeds) of each graph run in the method."""
        runs = []
        uses = 0
        for call in calls_in(self.function):
            func = call.func
            if not isinstance(func, cst.Attribute) or self.names.api(func) is not None:
                continue
            if func.attr.value == "run" and dotted(func.value) in self.sessions:
                uses += 1
                runs.append((call, self._feed(call, ("fetches", "feed_dict"))))
            elif func.attr.value == "eval" and self.is_test:
                runs.append((call, self._feed(call, ("feed_dict",))))
        references = sum(1 for name in names_in(self.function) if name in self.sessions)
        if references != uses + self.bindings:
            self.stop(self.function, "the test session used other than by `run`")
        return runs

    def _feed(self, call: cst.Call, params: Tuple[str, ...]) -> Optional[cst.BaseExpression]:
        bound = {}
        for index, arg in enumerate(call.args):
            key = arg.keyword.value if arg.keyword is not None else (params[index] if index < len(params) else None)
            if key not in params or arg.star:
                self.stop(call, f"`{code(call.func)}` given `{code(arg)}`")
            bound[key] = arg.value
        if "fetches" in params and "fetches" not in bound:
            self.stop(call, f"`{code(call.func)}` without what to fetch")
        feed = bound.get("feed_dict")
        if isinstance(feed, cst.Name) and feed.value != "None":
            feed = self._named_feed(call, feed.value) or feed
        if feed is not None and not (isinstance(feed, cst.Name) and feed.value == "None"):
            if not isinstance(feed, cst.Dict):
                self.stop(call, "a `feed_dict` that is not written out as a dict")
            return feed
        return None

    def _named_feed(self, call: cst.Call, name: str) -> Optional[cst.Dict]:
        """The dict of `name = {...}` written just before the run's statement, `name` used only
        there: fed as if written in the run (its statement goes)."""
        at = self._top_index(call)
        if not at or names_in(self.function).count(name) != 2:
            return None
        before = self.statements[at - 1]
        if _assigned_target(before) != name or not isinstance(before.body[0].value, cst.Dict):
            return None
        self.feed_statements.add(at - 1)
        return before.body[0].value

    def _evaluate(self, call: cst.Call):
        """A builder of `self.evaluate(fetches)` from the run as rewritten inside."""
        if call.func.attr.value == "run" and _strings(call.args[0].value):
            self.stop(call, "a fetch given by name")

        def build(updated: cst.Call) -> cst.BaseExpression:
            if updated.func.attr.value == "eval":
                fetched = updated.func.value
            else:
                fetched = next(a.value for a in updated.args if a.keyword is None or a.keyword.value == "fetches")
            return cst.parse_expression(f"self.evaluate({code(fetched)})")
        return build

    def _initializer_statements(self) -> List[cst.SimpleStatementLine]:
        """Statements that only run the variables' initializer (dropped: eager variables are
        initialized when made). `init = tf.global_variables_initializer()` read only by such runs
        goes with them."""
        found = []
        for statement in self.statements:
            name, call = _assigned_target(statement), _assigned_call(statement)
            if name is not None and call is not None and (self.names.api(call.func) or "").split(".")[-1] in \
                    INITIALIZERS and names_in(self.function).count(name) > 1:
                self.named_initializers[name] = (call, statement)
        for statement in self.statements:
            if isinstance(statement, cst.SimpleStatementLine) and len(statement.body) == 1 \
                    and isinstance(statement.body[0], cst.Expr) and self._runs_initializer(statement.body[0].value):
                found.append(statement)
        for name, (call, statement) in list(self.named_initializers.items()):
            runs = sum(1 for s in found if name in names_in(s))
            if runs != names_in(self.function).count(name) - 1:
                del self.named_initializers[name]  # (read other than by a run of it: stopped below)
            else:
                found.append(statement)
        for call in calls_in(self.function):
            api = self.names.api(call.func) or ""
            if api.split(".")[-1] in INITIALIZERS and not any(holds(s, call) for s in found):
                self.stop(call, f"`{code(call.func)}()` other than run once as a statement")
        return found

    def _runs_initializer(self, expr) -> bool:
        """`sess.run(init())`, `init().run()` or `self.evaluate(init())`."""
        if not isinstance(expr, cst.Call) or not isinstance(expr.func, cst.Attribute):
            return False
        method, owner = expr.func.attr.value, dotted(expr.func.value)
        if method == "run" and not expr.args:
            inner = expr.func.value
        elif len(expr.args) == 1 and ((method == "run" and owner in self.sessions)
                                      or (method == "evaluate" and owner == "self")):
            inner = expr.args[0].value
        else:
            return False
        if isinstance(inner, cst.Name):
            return inner.value in self.named_initializers
        return isinstance(inner, cst.Call) and (self.names.api(inner.func) or "").split(".")[-1] in INITIALIZERS

    # -- placeholders --------------------------------------------------------------------------
    def _placeholders(self) -> Dict[str, cst.SimpleStatementLine]:
        """name -> its `x = tf.placeholder(...)` statement, at the method's top level."""
        found = {}
        for name, statement in self._placeholder_list():
            if _assigned_call(statement) is None:
                self.stop(statement, f"the placeholders `{name}` made in a comprehension or a dict, in a test "
                                     "that runs the graph (only a shape test traces them)")
            if name in found:
                self.stop(statement, f"the name `{name}` given to two placeholders")
            found[name] = statement
        return found

    def _placeholder_list(self) -> List[Tuple[str, cst.SimpleStatementLine]]:
        """(name, its `x = tf.placeholder(...)` statement) of each placeholder, at the method's top level."""
        found, seen = [], set()
        tops = {id(s) for s in self.statements}
        for call in calls_in(self.function):
            if (self.names.api(call.func) or "").split(".")[-1] not in ("placeholder", "placeholder_with_default") \
                    or id(call) in self.inline:
                continue
            statement = next((s for s in self.statements if isinstance(s, cst.SimpleStatementLine)
                              and any(c is call for c in _placeholder_calls(s))), None)
            if statement is None or id(statement) not in tops or self.names.api(call.func) != "placeholder":
                self.stop(call, f"`{code(call.func)}(...)` other than assigned to a name")
            if id(statement) not in seen:
                seen.add(id(statement))
                found.append((_assigned_target(statement), statement))
        return found

    def _shape_test(self, placeholders, gradients: Sequence[cst.Call] = (), raising=None) -> cst.FunctionDef:
        """A test that runs nothing: its placeholders and what follows them traced (native.shape_traces).
        Its `tf.gradients` there are taken in the traced graph, as TF1 took them in its own (`None`
        where nothing connects, the same ops): one before the placeholders would run eagerly. A
        construction error checked before them is traced on its own (`_construction_errors`)."""
        first = min(i for i, s in enumerate(self.statements) for _, p in placeholders if p is s)
        handled = [c for _, s in placeholders for c in _placeholder_calls(s)]
        before = {key: value for key, value in (raising or {}).items()
                  if any(holds(s, value[0]) for s in self.statements[:first])}
        handled += [check for check, _ in before.values()]
        handled += [c for s in self.statements[:first] for c in calls_in(s) if id(c) in before]
        for gradient in gradients:
            at = self._top_index(gradient)
            if at is None or at < first:
                self.stop(gradient, "`tf.gradients` before the test's placeholders (outside the traced graph)")
            if len(gradient.args) > 4 or any(a.keyword is not None and a.keyword.value == "colocate_gradients_with_ops"
                                             for a in gradient.args):
                self.stop(gradient, "`tf.gradients` given TF1's `colocate_gradients_with_ops` (TF2 has no such argument)")
            handled.append(gradient)
        for index, statement in enumerate(self.statements):
            _check_eager(statement, self.label, self.names, self.outside, self.line_of, handled,
                         build_errors=index > first, unseeded=self.unseeded, unsafe=self.unsafe,
                         allowed=self.allowed, held=self.held)
        bound = []
        for name, statement in placeholders:
            each = []
            for call in _placeholder_calls(statement):
                try:
                    arguments = _bound(call, PLACEHOLDER_PARAMS)
                except ValueError as error:
                    self.stop(call, f"`{code(call)}`: {error}")
                if "dtype" not in arguments:
                    self.stop(call, f"the placeholder `{name}` without a dtype")
                each.append(arguments)
            # (a dict of placeholders: one spec a key, in its order; shape_traces)
            bound.append((name, statement, each if _assigned_call(statement) is None
                          and isinstance(statement.body[0].value, cst.Dict) else each[0]))
        statements = self.statements
        if before:  # (the statements before the placeholders: their identity is not traced_shapes' key)
            replace = _Replace({key: build for key, (_, build) in before.items()})
            statements = [*_replaced(statements[:first], replace), *statements[first:]]
        body = traced_shapes(statements, bound, self.tf, self.stop, set(names_in(self.function)),
                             (set(self.methods), set(self.traced_helpers)))
        return self.function.with_changes(body=self.function.body.with_changes(body=body))

    def _fed_constants(self, placeholders, runs) -> Dict[str, Tuple[cst.BaseExpression, int]]:
        """name -> (the value it is fed, the index of the statement after which the constant is
        made): each placeholder fed once, by a run at the method's top level."""
        fed: Dict[str, Tuple[cst.BaseExpression, int]] = {}
        same = self._fed_alike(placeholders, runs)
        for call, feed in runs:
            if feed is None:
                continue
            index = self._top_index(call)
            repeated = self._repeated(call)
            for element in feed.elements:
                if not isinstance(element, cst.DictElement) or not isinstance(element.key, cst.Name) \
                        or element.key.value not in placeholders:
                    self.stop(call, f"feeds `{code(element)}`, which is not a placeholder made in the method")
                name = element.key.value
                if name in same:
                    fed[name] = same[name]
                    continue
                if repeated and (index is None or not isinstance(self.statements[index], cst.SimpleStatementLine)):
                    self.stop(call, "a `feed_dict` in a loop or a branch (fed more than once)")
                if repeated:
                    self.stop(call, "a `feed_dict` in a comprehension or a lambda (fed more than once)")
                if name in fed:
                    self.stop(call, f"the placeholder `{name}` fed more than once")
                fed[name] = (element.value, self._place(name, element.value, placeholders[name], index, call))
        for name, statement in placeholders.items():
            if name not in fed:
                self.stop(statement, f"the placeholder `{name}`, which no run feeds")
        shaped = self._from_placeholders(set(fed), [call for call, _ in runs])
        for attribute in _attributes(self.function):
            if attribute.attr.value in ("shape", "get_shape", "set_shape") and names_read(attribute.value) & shaped:
                self.stop(attribute, "a static shape read of a tensor made from a placeholder, whose shape "
                                     "is known once it is a constant")
        return fed

    def _fed_alike(self, placeholders, runs) -> Dict[str, Tuple[cst.BaseExpression, int]]:
        """name -> (its value, the placeholder's index) for each placeholder that more than one
        run feeds, or a run in a loop, a branch or a comprehension, always with the same name or
        literal (`{value: x}` in a loop over dilations), bound once before the placeholder at the
        method's top level and never again: every run fed it that value, so it is that constant,
        made where the placeholder was."""
        feeds: Dict[str, List[Tuple[cst.Call, cst.BaseExpression]]] = {}
        for call, feed in runs:
            for element in (feed.elements if feed is not None else ()):
                if isinstance(element, cst.DictElement) and isinstance(element.key, cst.Name) \
                        and element.key.value in placeholders:
                    feeds.setdefault(element.key.value, []).append((call, element.value))
        found = {}
        for name, given in feeds.items():
            once = len(given) == 1 and not self._repeated(given[0][0])
            values = {code(value) for _, value in given}
            value = given[0][1]
            if once or len(values) != 1 or not m.matches(value, m.Name() | m.Integer() | m.Float() | m.SimpleString()):
                continue
            at = next(i for i, s in enumerate(self.statements) if s is placeholders[name])
            if isinstance(value, cst.Name):
                bound = [i for i, s in enumerate(self.statements) if value.value in names_assigned(s)]
                anywhere = sum(1 for n in bound_names(self.function) if n.value == value.value) + sum(
                    1 for f in m.findall(self.function, m.Param() | m.CompFor()) if value.value in names_in(f))
                if len(bound) != 1 or bound[0] >= at or anywhere != 1 \
                        or not isinstance(self.statements[bound[0]], cst.SimpleStatementLine) \
                        or _changed_in_place(self.function, value.value):
                    continue
            found[name] = (value, at)
        return found

    def _repeated(self, call: cst.Call) -> bool:
        """The run may run more than once: not a statement at the method's top level, or inside a
        comprehension or a lambda there."""
        index = self._top_index(call)
        return index is None or not isinstance(self.statements[index], cst.SimpleStatementLine) or any(
            holds(loop, call) for loop in m.findall(self.statements[index], _REPEATED))

    def _from_placeholders(self, placeholders: Set[str], runs: List[cst.Call]) -> Set[str]:
        """The placeholders and the names of tensors computed from them (a run's result is an array)."""
        found = set(placeholders)
        for statement in self.statements:
            if names_read(statement) & found and not any(holds(statement, run) for run in runs):
                found |= names_assigned(statement)
        return found

    def _place(self, name: str, value, statement, run_index: int, call) -> int:
        """Where the placeholder's constant is made: at the placeholder when the value is known
        there, else just after the value's last assignment if the placeholder is unused until then.
        Between there and the run nothing may touch what the value reads (it is read earlier)."""
        if any("rand" in (dotted(c.func) or "") for c in calls_in(value)):
            self.stop(call, f"the value fed to `{name}` draws random numbers (the draws would move)")
        needs = names_read(value)
        at = next(i for i, s in enumerate(self.statements) if s is statement)
        last = max((i for i, s in enumerate(self.statements[:run_index]) if names_assigned(s) & needs), default=-1)
        place = max(at, last)
        if last > at and any(name in names_read(s) for s in self.statements[at + 1:last + 1]):
            moved = self._hoistable(needs, at, run_index)
            if moved is None:
                self.stop(call, f"the value fed to `{name}` is not known where the placeholder is used first")
            self.hoisted.setdefault(at, []).extend(moved)
            place = at
        if any(names_read(s) & needs for i, s in enumerate(self.statements[place + 1:run_index], place + 1)
               if i not in self._all_hoisted()):
            self.stop(call, f"the value fed to `{name}` is used between the placeholder and the run")
        return place

    def _hoistable(self, needs: Set[str], at: int, run_index: int) -> Optional[List[int]]:
        """The statements after the placeholder that compute the fed value, when they can move
        above it unchanged: plain assignments of numbers and numpy arrays (no random draw) from
        what is known there, whose names nothing in between reads or writes."""
        moved = [i for i in range(at + 1, run_index) if names_assigned(self.statements[i]) & needs]
        if any(i in self._all_hoisted() for i in moved):
            return None
        for i in moved:
            statement = self.statements[i]
            if _assigned_call(statement) is None and not _plain_assignment(statement):
                return None
            if not _pure(statement):
                return None
            others = [s for j, s in enumerate(self.statements[at:i], at) if j not in moved]
            if any(names_assigned(s) & (names_read(statement) | names_assigned(statement)) for s in others):
                return None
            if any(names_read(s) & names_assigned(statement) for s in others):
                return None
        return moved

    def _all_hoisted(self) -> Set[int]:
        """The statements moved above a placeholder, and the feed dicts that go."""
        return {i for moved in self.hoisted.values() for i in moved} | self.feed_statements

    def _placed(self, placeholders, constants, initializers) -> List[cst.BaseStatement]:
        """The opened body with each placeholder replaced by its constant, initializer runs gone."""
        by_index: Dict[int, List[cst.BaseStatement]] = {}
        for name, (value, index) in constants.items():
            call = _assigned_call(placeholders[name])
            try:
                dtype = _bound(call, PLACEHOLDER_PARAMS).get("dtype")
            except ValueError as error:
                self.stop(call, f"`{code(call)}`: {error}")
            if dtype is None:
                self.stop(call, f"the placeholder `{name}` without a dtype")
            made = cst.parse_statement(f"{name} = {self.tf}.constant({code(value)}, dtype={code(dtype)})\n")
            by_index.setdefault(index, []).append(made.with_changes(leading_lines=placeholders[name].leading_lines))
        for index, moved in self.hoisted.items():
            by_index[index][0:0] = [self.statements[i] for i in moved]
        if self.makes_variables:
            named = {id(s) for _, s in self.named_initializers.values()}
            for statement in [s for s in initializers if id(s) not in named]:
                index = next(i for i, s in enumerate(self.statements) if s is statement)
                by_index.setdefault(index, []).insert(0, self._initializer_kept(statement))
        dropped = {id(s) for s in [*placeholders.values(), *initializers]} | {
            id(self.statements[i]) for i in self._all_hoisted()}
        body: List[cst.BaseStatement] = []
        for index, statement in enumerate(self.statements):
            if id(statement) not in dropped:
                if body and isinstance(body[-1], cst.FunctionDef) and not statement.leading_lines:
                    statement = statement.with_changes(leading_lines=[cst.EmptyLine(indent=False)])  # (after a def)
                body.append(statement)
            body.extend(by_index.get(index, []))
        return body or [cst.SimpleStatementLine([cst.Pass()])]

    def _initializer_kept(self, statement) -> cst.SimpleStatementLine:
        """`self.evaluate(tf.compat.v1.global_variables_initializer())`, as TensorFlow's own tests
        write it: nothing eagerly, and the variables' initialization when another test module of
        the same run turns v2 behaviour off (the process is then in graph mode)."""
        initializer = next((c for c in calls_in(statement)
                            if (self.names.api(c.func) or "").split(".")[-1] in INITIALIZERS), None)
        if initializer is None:  # (`sess.run(init)` of `init = tf.global_variables_initializer()`)
            initializer = next(call for name, (call, _) in self.named_initializers.items() if name in names_in(statement))
        name = (self.names.api(initializer.func) or "").split(".")[-1]
        name = {"initialize_all_variables": "global_variables_initializer",
                "initialize_local_variables": "local_variables_initializer",
                "initialize_variables": "variables_initializer"}.get(name, name)
        arguments = ", ".join(code(arg) for arg in initializer.args)
        kept = cst.parse_statement(f"self.evaluate({self.tf}.compat.v1.{name}({arguments}))\n")
        return kept.with_changes(leading_lines=statement.leading_lines)

    def _top_index(self, node) -> Optional[int]:
        for index, statement in enumerate(self.statements):
            if holds(statement, node):
                return index
        return None

    # -- tf.gradients ----------------------------------------------------------------------------
    def _setup_gradients(self, body, gradients: List[cst.Call], builders, region) -> Dict[int, List[cst.With]]:
        """Builders of `self.tape.gradient(...)` for gradients of tensors `setUp` made, and the
        `with self.tape:` statements recording the test's part of `ys`, by the body's index they
        go before (native.setup_tapes)."""
        if region is not None:
            self.stop(gradients[0], "`tf.gradients` of tensors `setUp` made and of tensors made in the test")
        check_test(self.function, gradients, self.stop)
        taken = set(names_in(self.function))
        recordings: Dict[int, List[cst.With]] = {}
        for gradient in gradients:
            try:
                ys = _bound(gradient, ("ys", "xs"))["ys"]
            except (ValueError, KeyError):
                self.stop(gradient, "`tf.gradients` given other than `ys` and `xs`")
            if isinstance(bind(gradient, ("ys", "xs")).get("xs"), cst.Name) and \
                    set(self_sources(gradient, self.function) or ()) & self.tape.numbers:
                self.stop(gradient, "`tf.gradients` with respect to a list holding a Python number `setUp` set")
            index = next((i for i, s in enumerate(body) if holds(s, gradient)), None)
            if index is None or not isinstance(body[index], cst.SimpleStatementLine):
                self.stop(gradient, "`tf.gradients` of what `setUp` made, in a loop or a branch")
            own = self._own_part(body, index, ys, gradient) if not setup_tapes.ys_reads_only_self(ys, self.tf) else []
            name = None
            if setup_tapes.recorded(ys):
                name = fresh_name(taken, "ys")
                recordings.setdefault(index, []).append(
                    setup_tapes.recording(self.tape.attribute, name, gradient, body[index].leading_lines))
            elif own:  # (`ys` a name the test's part computes: only that part recorded)
                recordings.setdefault(index, []).append(cst.parse_statement(f"with self.{self.tape.attribute}:\n    pass\n"))
            if own:
                self.recorded[index] = own
            builders[id(gradient)] = lambda updated, name=name: setup_tapes.tape_gradient(
                self.tape.attribute, updated, name, self.tape.numbers, self.tf)
        return recordings

    def _own_part(self, body, index: int, ys, gradient) -> List[int]:
        """The statements just before the gradient's that compute the test's part of `ys` from
        what `setUp` kept (`log_prob = f(self.x, self.mu)` then `tf.gradients(tf.reduce_sum(
        log_prob), self.mu)`): recorded on the tape with `ys` (they move into its `with`). Plain
        statements in a straight line, from the first one `ys` needs to the gradient's."""
        needed = names_read(ys) - {"self", self.tf}
        first = None
        for j in range(index - 1, -1, -1):
            if names_assigned(body[j]) & needed:
                needed |= names_read(body[j]) - {"self", self.tf}
                first = j
        if first is None or any(j in self.moved_any for j in range(first, index)) or not all(
                isinstance(body[j], cst.SimpleStatementLine) for j in range(first, index)):
            self.stop(gradient, "`tf.gradients` of tensors computed from both `setUp`'s and the test's own")
        self.moved_any.update(range(first, index))
        return list(range(first, index))

    def _tape_region(self, body: List[cst.BaseStatement], gradients: List[cst.Call]) -> Tuple[int, int, List[str], bool]:
        """(start, end, sources, several): the straight-line statements from the last source made
        to the first `tf.gradients(ys, xs)`, each `y` computed there. An `xs` that lists the
        trainable variables of the test's model functions (`tf.trainable_variables()`, routed
        through its STORE object, native.test_models) is made where the model code first runs:
        the tape records from there and watches them itself, as they are trainable."""
        found = []  # (index in body, call, ys, xs)
        assigned: Optional[Set[str]] = None  # every name the body binds (read once, for an expression's ys)
        stores = _stores(self.function)
        first_model = next((i for i, s in enumerate(body) if any(dotted(c.func) in stores for c in calls_in(s))), None)
        listed_from = []
        for gradient in gradients:
            try:
                bound = _bound(gradient, ("ys", "xs"))
            except ValueError as error:
                self.stop(gradient, f"`tf.gradients`: {error}")
            if set(bound) != {"ys", "xs"}:
                self.stop(gradient, "`tf.gradients` given other than `ys` and `xs`")
            index = next((i for i, s in enumerate(body) if holds(s, gradient)), None)
            if index is None or not isinstance(body[index], cst.SimpleStatementLine):
                self.stop(gradient, "`tf.gradients` in a loop or a branch")
            if first_model is not None and first_model < index and self._lists_trainable(bound["xs"], body[:index], stores):
                self.listed.add(id(gradient))
                listed_from.append(first_model)
                found.append((index, gradient, _names_of(bound["ys"]), []))
                continue
            beside = _tensors_beside_trainable(bound["xs"], stores) if first_model is not None and first_model < index \
                else None
            if beside is not None:  # (`[x] + tf.trainable_variables()`: the tensors watched, the variables recorded)
                self.listed.add(id(gradient))
                listed_from.append(first_model)
                found.append((index, gradient, _names_of(bound["ys"]), beside))
                continue
            ys = _names_of(bound["ys"])
            if ys is None and not isinstance(bound["ys"], (cst.List, cst.Tuple)):  # (one tensor, written as an expression)
                if assigned is None:
                    assigned = {n for statement in body for n in names_assigned(statement)}
                ys = sorted((names_read(bound["ys"]) & assigned) - {"self", self.tf})
                self.targets[id(gradient)] = (fresh_name(self.taken, "target"), code(bound["ys"]))
            found.append((index, gradient, ys, _names_of(bound["xs"])))
        if any(ys is None or xs is None for _, _, ys, xs in found):
            self.stop(gradients[0], "`tf.gradients` of other than names of tensors")
        end = min(index for index, _, _, _ in found)
        sources = sorted({x for _, _, _, xs in found for x in xs})
        # (a variable the test read by name, `w = tf1_variables.variable("gc/w")`, was made by the model code)
        looked_up = {x for x in sources if first_model is not None and self._looked_up(x, body[:end], stores)}
        made = [first_model - 1 if x in looked_up else max((i for i in range(end) if x in names_assigned(body[i])),
                                                            default=None) for x in sources]
        made += [i - 1 for i in listed_from]
        self.watched_where_read |= looked_up
        if None in made:
            self.stop(gradients[0], "`tf.gradients` with respect to a tensor not made in this method")
        start = max(made) + 1
        for _, gradient, ys, _ in found:
            for y in ys:
                if id(gradient) in self.targets and y in sources:
                    continue  # (`tf.reduce_sum(x * x)` of a source: the expression is computed on the tape)
                where = [i for i in range(len(body)) if y in names_assigned(body[i])]
                if not where or not all(start <= i < end for i in where):
                    self.stop(gradient, f"`tf.gradients` of `{y}`, which is not computed from its sources "
                                        "in a straight line inside the method")
        if start >= end or not all(isinstance(s, cst.SimpleStatementLine) for s in body[start:end]):
            self.stop(gradients[0], "`tf.gradients` of a tensor computed in a loop, a branch or a block")
        return start, end, sources, len(found) > 1

    @staticmethod
    def _lists_trainable(xs: cst.BaseExpression, before: List[cst.BaseStatement], stores: Set[str]) -> bool:
        """`xs` is `<store>.trainable()`, or a name bound to it once before."""
        if m.matches(xs, _store_call(stores, "trainable")):
            return True
        return isinstance(xs, cst.Name) and _bound_once_to(xs.value, before, _store_call(stores, "trainable"))

    @staticmethod
    def _looked_up(name: str, before: List[cst.BaseStatement], stores: Set[str]) -> bool:
        """`name` is bound once, to `<store>.variable("...")` (native.test_models: read by name)."""
        return _bound_once_to(name, before, _store_call(stores, "variable"))

    def _taped(self, body, region, tape: str) -> List[cst.BaseStatement]:
        """The region's statements inside `with tf.GradientTape() as tape:`, its sources watched."""
        start, end, sources, several = region
        header = cst.parse_statement(
            f"with {self.tf}.GradientTape({'persistent=True' if several else ''}) as {tape}:\n    pass\n")
        watches = [cst.parse_statement(f"{tape}.watch({x})\n") for x in sources if x not in self.watched_where_read]
        first = body[start]
        inner = [*watches]
        for statement in [first.with_changes(leading_lines=[]), *body[start + 1:end]]:
            inner.append(statement)
            inner += [cst.parse_statement(f"{tape}.watch({x})\n") for x in sorted(
                self.watched_where_read & set(names_assigned(statement)) & set(sources))]
        inner += [cst.parse_statement(f"{name} = {expression}\n") for name, expression in self.targets.values()]
        block = header.with_changes(body=header.body.with_changes(body=inner, indent=None),
                                    leading_lines=first.leading_lines)
        return [*body[:start], block, *body[end:]]


def _is_tf_function(function: cst.FunctionDef, tf: str) -> bool:
    return any(isinstance(d.decorator, cst.Call) and dotted(d.decorator.func) == f"{tf}.function"
               for d in function.decorators)


def _tape_gradient(tape: str, gradient: cst.Call, listed: bool = False, target: Optional[str] = None) -> cst.BaseExpression:
    """`tf.gradients(ys, xs)` as the tape's gradient, in the same list structure (`listed`: `xs`
    is a list of variables, `_Method._lists_trainable`; `target`: the name `ys` was computed by on
    the tape, where it is an expression)."""
    bound = _bound(gradient, ("ys", "xs"))
    ys, xs = target or code(bound["ys"]), bound["xs"]
    if listed:
        return cst.parse_expression(f"{tape}.gradient({ys}, {code(xs)})")
    if isinstance(xs, cst.Name):
        return cst.parse_expression(f"[{tape}.gradient({ys}, {xs.value})]")
    return cst.parse_expression(f"{tape}.gradient({ys}, [{', '.join(_names_of(xs))}])")


def _tensors_beside_trainable(xs: cst.BaseExpression, stores: Set[str]) -> Optional[List[str]]:
    """The names of `[a, b] + <store>.trainable()` (what `[a, b] + tf.trainable_variables()`
    became for a test whose model code is routed, native.test_models), else None."""
    if not m.matches(xs, m.BinaryOperation(operator=m.Add(), left=m.List(), right=_store_call(stores, "trainable"))):
        return None
    return _names_of(xs.left)


def _names_of(node) -> Optional[List[str]]:
    if isinstance(node, cst.Name):
        return [node.value]
    if isinstance(node, (cst.List, cst.Tuple)) and all(isinstance(e.value, cst.Name) for e in node.elements):
        return [e.value.value for e in node.elements]
    return None


def _python_error(call: cst.Call) -> bool:
    """`self.assertRaises(NotImplementedError)`: an error that Python code raises, which no graph
    run raises instead (TF's run-time errors are `tf.errors.*`; its build-time shape errors are
    `ValueError` in a graph and `InvalidArgumentError` eagerly, so ValueError is not one)."""
    return bool(call.args) and isinstance(call.args[0].value, cst.Name) and call.args[0].value.value in PYTHON_ERRORS


def _bound(call: cst.Call, params: Sequence[str]) -> Dict[str, cst.BaseExpression]:
    """syntax.bind, refusing any argument outside `params`."""
    bound = bind(call, params)
    unknown = [key for key in bound if key not in params]
    if unknown:
        raise ValueError(f"the argument `{unknown[0]}`")
    return bound


def _assigned_call(statement) -> Optional[cst.Call]:
    small = statement.body[0] if isinstance(statement, cst.SimpleStatementLine) and len(statement.body) == 1 else None
    if isinstance(small, cst.Assign) and len(small.targets) == 1 and isinstance(small.targets[0].target, cst.Name) \
            and isinstance(small.value, cst.Call):
        return small.value
    return None


def _placeholder_calls(statement) -> List[cst.Call]:
    """The call of `x = f(...)`; `f(...)` of `x = [f(...) for ...]` (a list comprehension of calls
    alone, whose loop makes one each time: a list of placeholders); the calls of a dict literal
    `x = {"a": f(...), "b": g(...)}` whose keys are strings or numbers and values calls alone."""
    call = _assigned_call(statement)
    if call is not None:
        return [call]
    if _assigned_target(statement) is None:
        return []
    value = statement.body[0].value
    if isinstance(value, cst.ListComp) and isinstance(value.elt, cst.Call):
        return [value.elt]
    if isinstance(value, cst.Dict) and value.elements and all(
            isinstance(e, cst.DictElement) and isinstance(e.key, (cst.SimpleString, cst.Integer))
            and isinstance(e.value, cst.Call) for e in value.elements):
        return [e.value for e in value.elements]
    return []


def _assigned_target(statement) -> Optional[str]:
    """`x` of a statement `x = ...`."""
    small = statement.body[0] if isinstance(statement, cst.SimpleStatementLine) and len(statement.body) == 1 else None
    if isinstance(small, cst.Assign) and len(small.targets) == 1 and isinstance(small.targets[0].target, cst.Name):
        return small.targets[0].target.value
    return None


_REPEATED = m.ListComp() | m.SetComp() | m.DictComp() | m.GeneratorExp() | m.Lambda()
PURE_CALLS = re.compile(r"^(?:np|numpy)\.(?!random)[\w.]+$|^(?:list|tuple|range|dict|float|int|len|abs|zip|sum|min|max)$")


def _plain_assignment(statement) -> bool:
    return isinstance(statement, cst.SimpleStatementLine) and len(statement.body) == 1 \
        and isinstance(statement.body[0], cst.Assign) \
        and all(isinstance(t.target, (cst.Name, cst.Tuple)) for t in statement.body[0].targets)


def _pure(statement) -> bool:
    """Only numbers, numpy arrays and builtins made: no draw, no state, no tensor, no attribute
    read but numpy's (another object may change in between)."""
    return _plain_assignment(statement) and all(PURE_CALLS.match(dotted(c.func) or "") for c in calls_in(statement)) \
        and all(dotted(a) and dotted(a).split(".")[0] in ("np", "numpy") for a in _attributes(statement))


def _nested_withs(statement) -> List[cst.With]:
    """The `with`s under the statement (itself aside)."""
    return [node for node in found_in(statement, "visit_With") if node is not statement]


def _strings(node) -> List[cst.CSTNode]:
    """Strings fetched (a tensor or an op given by name), dict keys and subscripts aside."""
    found: List[cst.CSTNode] = []

    class _S(cst.CSTVisitor):
        def visit_SimpleString(self, string: cst.SimpleString) -> None:
            found.append(string)

        def visit_Subscript(self, subscript: cst.Subscript) -> bool:
            subscript.value.visit(self)
            return False

        def visit_DictElement(self, element: cst.DictElement) -> bool:
            element.value.visit(self)
            return False

        def visit_Call(self, call: cst.Call) -> bool:
            return False  # (a call's arguments are not fetches: `tf1_variables.variable("scope/w")`)

    node.visit(_S())
    return found


def _attributes(node) -> List[cst.Attribute]:
    return list(m.findall(node, m.Attribute()))


def _replaced(body: List[cst.BaseStatement], replace: "_Replace") -> List[cst.BaseStatement]:
    """The statements of a function's body, each rewritten by `replace` (the block's own
    leave_IndentedBlock: what it drops goes, its comments kept above the next)."""
    block = cst.IndentedBlock(body=[statement.visit(replace) for statement in body])
    return list(replace.leave_IndentedBlock(block, block).body)


class _Replace(cst.CSTTransformer):
    """Replaces the calls given by identity, each built from the call as rewritten inside it."""

    def __init__(self, builders: Dict[int, object], opened: Set[int] = frozenset(), dropped: Set[int] = frozenset()):
        self.builders, self.opened, self.dropped = builders, opened, dropped
        self.gone: Set[int] = set()

    def leave_SimpleStatementLine(self, original, updated):
        """A statement given by identity goes; its comments stay, above the next (leave_IndentedBlock)."""
        if id(original) not in self.dropped:
            return updated
        gone = updated.with_changes(body=[cst.Pass()])
        self.gone.add(id(gone))
        return gone

    def leave_IndentedBlock(self, original, updated):
        body, comments = [], []
        for statement in updated.body:
            if id(statement) in self.gone:
                comments.extend(line for line in statement.leading_lines if line.comment is not None)
                continue
            if comments:
                statement = statement.with_changes(leading_lines=[*comments, *statement.leading_lines])
                comments = []
            body.append(statement)
        return updated.with_changes(body=body or [cst.SimpleStatementLine([cst.Pass()])])

    def leave_With(self, original: cst.With, updated: cst.With):
        """A test session's `with` given by identity is replaced by its body."""
        if id(original) not in self.opened:
            return updated
        body = updated.body
        if isinstance(body, cst.SimpleStatementSuite):
            return cst.SimpleStatementLine(body=body.body, leading_lines=updated.leading_lines)
        inner = list(body.body)
        inner[0] = inner[0].with_changes(leading_lines=[*updated.leading_lines, *inner[0].leading_lines])
        return cst.FlattenSentinel(inner)

    def leave_Call(self, original: cst.Call, updated: cst.Call) -> cst.BaseExpression:
        build = self.builders.get(id(original))
        return build(updated) if build is not None else updated

    def leave_Subscript(self, original: cst.Subscript, updated: cst.Subscript) -> cst.BaseExpression:
        """`[tape.gradient(y, x)][0]` (`tf.gradients(y, x)[0]`) is `tape.gradient(y, x)`."""
        value, index = updated.value, code(updated.slice[0]) if len(updated.slice) == 1 else None
        if isinstance(value, cst.List) and len(value.elements) == 1 and index == "0" \
                and "gradient(" in code(value.elements[0].value) and id(original.value) in self.builders:
            return value.elements[0].value
        return updated
