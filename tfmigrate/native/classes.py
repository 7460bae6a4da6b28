"""Scripts whose graph a class builds (issue 21): the class becomes a `tf.Module` on TensorFlow's
model-mapping route.

    class Net:                                         class Net(tf.Module):
        def __init__(self, opt):                           def __init__(self, opt):
            self.x = tf.placeholder(tf.float32, [None, 1])     super().__init__()
            self.y = tf.placeholder(tf.float32, [None, 1])     self.train_op_optimizer = opt(0.1)
            out = tf.layers.dense(self.x, 1)               @tf.compat.v1.keras.utils.track_tf1_style_variables
            self.loss = tf.losses.mean_squared_error(  ->  def build_graph(self, x, y):
                self.y, out)                                   self.x = tf.cast(x, tf.float32) ...
            self.train_op = opt(0.1).minimize(self.loss)       (the rest of the graph, as it was)
    net = Net(tf.train.AdamOptimizer)                      @tf.function
    sess = tf.Session()                                    def train_step(self, x, y):
    sess.run(tf.global_variables_initializer())                (GradientTape around build_graph, the
    _, l = sess.run([net.train_op, net.loss],                  optimizer's apply_gradients)
                    {net.x: a, net.y: b})              _, l = to_numpy(net.train_step(a, b))

The graph code is kept and run inside the tracked `build_graph`: its variables are made on the
first call with their TF1 names and found again by name later, whatever Python control flow or
helper methods built them. TF1 computed only what a run's fetches needed: a placeholder a run
leaves unfed becomes `None`, and what it feeds is skipped (`if labels is not None:`), when that
part makes no variables (skipping one would rename the layers after it). The optimizer stays
TF1's (`tf.compat.v1.train`, eager-capable: the same update rule and slot names), made once in
`__init__`. Methods called once right after construction (`model.build()`) are read as part of
`__init__`, and a method that opens its own Session, run once, as the program's code
(native.class_calls). Anything outside this shape is a Blocker, and the module keeps the compat
route.
"""
from __future__ import annotations

import re
from typing import Dict, List, Optional, Set, Tuple

import libcst as cst

from tfmigrate.facts.graph_words import RNN_RUNNERS
from tfmigrate.facts.names import ImportTable
from tfmigrate.native.class_facts import (GraphClass, Placeholder, RunMethod, Train, attrs_of, is_docstring,
                                          self_attr, session_parameters, subtree)
import tfmigrate.native.class_clips as class_clips
import tfmigrate.native.class_data as class_data
import tfmigrate.native.class_feeds as class_feeds
import tfmigrate.native.class_sessions as class_sessions
import tfmigrate.native.class_savers as class_savers
from tfmigrate.native.checkpoints import CHECKPOINT_FILES
import tfmigrate.native.class_summaries as class_summaries
import tfmigrate.native.class_updates as class_updates
from tfmigrate.native.class_calls import (built_after, builder_call, check_locals, inlined, other_calls,
                                          runs_once)
from tfmigrate.native.class_runs import ProgramRuns
from tfmigrate.native.control_flow import tracked_control_flow_refused
from tfmigrate.native.model_mapping import MAKES_VARIABLES, local_names, variable_as_get_variable
from tfmigrate.native.script import OBJECT_SUFFIXES, SCHEDULES, SESSIONS, STEP_MAKERS, Blocked, is_object_path
from tfmigrate.native.syntax import bind, calls_in, code, names_assigned, names_read

# What the graph code of a class may not do on this route (model_mapping's list, less what a class
# is rewritten for: its placeholders and its `minimize`).
REFUSED = {
    "Session": "a Session", "InteractiveSession": "a Session",
    "train.": "`tf.train` (savers, queues, global steps) inside the graph a class builds",
    "summary.": "TF1 summaries", "get_collection": "graph collections", "add_to_collection": "graph collections",
    "control_dependencies": "`tf.control_dependencies`", "metrics.": "`tf.metrics.*`",
    "get_default_graph": "the default graph", "global_variables": "the graph's variable lists",
    "trainable_variables": "the graph's variable lists", "py_func": "`tf.py_func`", "assign": "variable assignments",
    "get_variable_scope": "`tf.get_variable_scope()`", "Variable": "`tf.Variable` (made again at every call)",
    "data.": "`tf.data` inside the graph a class builds", "placeholder": "a placeholder made other than as "
    "`self.<name> = tf.placeholder(...)` in `__init__`", "sparse_placeholder": "a sparse placeholder",
}
# tf.Module's own members: a class assigning one cannot become a tf.Module as it is.
MODULE_MEMBERS = {"name", "name_scope", "variables", "trainable_variables", "non_trainable_variables",
                  "submodules", "with_name_scope"}
_SCHEDULES = frozenset(SCHEDULES)
_MINIMIZE = ("loss", "global_step", "var_list", "gate_gradients", "aggregation_method",
             "colocate_gradients_with_ops", "name", "grad_loss")


_LOOPS = (cst.For, cst.While, cst.CompFor, cst.Lambda, cst.FunctionDef)


def _joined(parts) -> str:
    """The scope names around a variable (`"embedding/"`, or `(code,)` of a name computed at each
    pass) as one expression without the last `/`: `"conv-maxpool-%s" % filter_size`."""
    pieces: List[str] = []
    text = ""
    for part in parts:
        if isinstance(part, str):
            text += part
        else:
            if text:
                pieces.append(f'"{text}"')
            parsed = cst.parse_expression(part[0])
            plain = isinstance(parsed, (cst.Name, cst.Attribute, cst.Call, cst.Subscript)) or (
                not pieces and isinstance(parsed, cst.BinaryOperation))
            pieces.append(part[0] if plain else f"({part[0]})")
            text = "/"
    text = text[:-1] if text.endswith("/") else text
    if text:
        pieces.append(f'"{text}"')
    return " + ".join(pieces)


def scoped_lines(statements, tf_call) -> List[cst.BaseStatement]:
    """The statements, those of a `with tf.variable_scope(...)` / `name_scope` block each on its own
    (what an unfed placeholder feeds is skipped line by line inside the scope too)."""
    out: List[cst.BaseStatement] = []
    for statement in statements:
        if isinstance(statement, cst.With) and all(tf_call(item.item) in ("name_scope", "variable_scope")
                                                   for item in statement.items):
            out += scoped_lines(statement.body.body, tf_call)
        else:
            out.append(statement)
    return out


class ClassScript(ProgramRuns):
    """A script whose graph is built by classes, analysed (`analyse`); native.class_writer writes it."""

    def __init__(self, module: cst.Module, source: str, line_of, pinned: bool = False):
        self.module = module
        self.pinned = pinned  # the seeds of its random ops are TF1's, written out (native.op_seeds)
        self.source = source
        self.copies: Dict[int, int] = {}  # id of a node written for a run split by object -> the run's line
        self.line_of = lambda node: self.copies.get(id(node)) or line_of(node)
        self.names = ImportTable(module, source)
        self.aliases = set(self.names.tensorflow_aliases())
        self.classes: Dict[str, GraphClass] = {}
        self.module_placeholders: Dict[str, Placeholder] = {}
        self.sessions: Set[str] = set()
        self.initializers: Set[str] = set()
        self.sites: Dict[int, Tuple[GraphClass, RunMethod, cst.BaseExpression, List[Tuple[str, str]]]] = {}
        self.session_params: Dict[str, Tuple[int, str]] = {}  # function -> (index, name) of its Session parameter
        self.session_args: Set[int] = set()  # id of the arguments that gave it
        self.session_methods: Dict[str, Tuple[int, str]] = {}  # method -> (index after self, name) of its Session
        self.session_defs: Dict[int, int] = {}  # id(def) -> the position of the Session among its parameters
        self.current_class: Optional[GraphClass] = None  # the class whose method is read
        self.current_method = ""  # and that method's name
        self._changing: Optional[Set[str]] = None  # module-level names set more than once
        self.to_numpy = False  # whether a run returns a structure (the `to_numpy` helper is written)
        self.feed_names: Dict[str, List[cst.Dict]] = {}  # a feed built ahead -> the dict literals it holds
        self.feed_methods: Dict[str, object] = {}  # a method returning a feed dict -> its class_feeds.FeedMethod
        self.feed_aliases: Dict[str, Tuple[str, cst.BaseExpression]] = {}  # `feed = m.create_feed_dict(x)`: (method, m)
        self.key_params: Dict[int, str] = {}  # id(a key of such a dict) -> the parameter it feeds
        self._making: Dict[tuple, Set[str]] = {}  # (class, its graph methods) -> those that make variables
        self.python_statements: Set[int] = set()  # id of `__init__` statements read as Python (class_sessions)
        self.graph_writers: Dict[int, cst.Assign] = {}  # id(`w = tf.summary.FileWriter(d, sess.graph)` line)
        self.element_feeds: Dict[int, str] = {}  # id(`feed.update(...)`/`feed[k]` of `net.state[i]` keys) -> parameter
        self.targets: Dict[int, cst.BaseExpression] = {}  # id(assignment of a run) -> its target, `_`s dropped
        self.state_reads: Set[int] = set()  # id of `net.<state>.eval()`, the value of a variable made once
        self.removed: Set[int] = set()      # id of module-level statements that go
        self.unwrapped: Set[int] = set()    # id of `with tf.Session() as sess:` whose body stays
        self.writers: Dict[int, str] = {}  # id of `FileWriter(...)` / `w.add_summary(s, step)` -> its TF2 code
        self.savers: Dict[int, str] = {}  # id of `saver = tf.train.Saver()` in a method -> the code it becomes
        self.pending_savers: List[Tuple[GraphClass, cst.SimpleStatementLine]] = []  # found, written by `analyse`
        self.saver_sessions: Set[int] = set()  # id of the Session argument of `saver.save(sess, ...)`: None
        self.optimizer_state = False  # whether a Saver keeps TF1's optimizer state (its helper is written)
        self.restarts: Dict[int, str] = {}  # id of `sess.run(<iterator initializer>)` -> the statement it becomes
        self.joint_runs: Dict[int, List[cst.SimpleStatementLine]] = {}  # id(run over several objects) -> one per object
        self.joint_calls: Set[int] = set()  # id of those runs' calls
        self.joint_trains: Set[str] = set()  # the objects whose training op the joint run being read runs

    @property
    def tf(self) -> str:
        return sorted(self.aliases)[0]

    def api(self, node) -> Optional[str]:
        return self.names.api(node)

    def tf_call(self, node, *paths: str) -> Optional[str]:
        path = self.api(node.func) if isinstance(node, cst.Call) else None
        return path if path is not None and (not paths or path in paths) else None

    def _mentions_tf(self, node) -> bool:
        return bool(names_read(node) & self.aliases)

    def tensor_apis(self, node) -> List[Tuple[str, cst.CSTNode]]:
        """TF APIs `node` calls that make tensors or graph state (objects such as dtypes,
        initializers and optimizer classes excluded), with the node naming each."""
        found: List[Tuple[str, cst.CSTNode]] = []
        script = self

        class _Uses(cst.CSTVisitor):
            def visit_Attribute(self, attr: cst.Attribute) -> Optional[bool]:
                path = script.api(attr)
                if path is None:
                    return None
                if not (is_object_path(path) or path.endswith(OBJECT_SUFFIXES)
                        or path in CHECKPOINT_FILES  # (`tf.train.latest_checkpoint(folder)`: a file's name)
                        or path.startswith("nn.") and not path.startswith("nn.rnn_cell")):
                    found.append((path, attr))
                return False

        node.visit(_Uses())
        return found

    # -- analysis -----------------------------------------------------------------------------
    def applies(self) -> bool:
        """Whether the module builds its graph in a class (else this route has nothing to say)."""
        return bool(self.aliases) and any(isinstance(n, cst.ClassDef) and self.tensor_apis(n)
                                          for n in self.module.body) and any(
            self.tf_call(call) in SESSIONS for call in calls_in(self.module))

    def analyse(self) -> "ClassScript":
        self._module_placeholders_made()
        for node in self.module.body:
            if isinstance(node, cst.ClassDef) and self.tensor_apis(node):
                self.classes[node.name.value] = self._graph_class(node)
        self._module_placeholders()
        for cls in self.classes.values():
            class_updates.check_class(self, cls, cls.graph + [m for m in cls.node.body.body if isinstance(
                m, cst.FunctionDef) and m.name.value in cls.graph_methods])
        self._no_other_graphs()
        self._session_names()
        self._feeds_built_ahead()
        class_feeds.analyse(self)
        for node in self.module.body:
            self._top(node)
        for cls in self.classes.values():  # the runs of methods given a Session, as the module's code
            for method in cls.node.body.body:
                if isinstance(method, cst.FunctionDef) and method.name.value in cls.session_methods:
                    self.current_class, self.current_method = cls, method.name.value
                    for statement in method.body.body:
                        self._top(statement)
        self._runners()
        for cls, saver in self.pending_savers:  # once every run is known
            self.savers[id(saver)] = class_savers.saver_code(self, cls, saver)
        for cls in self.classes.values():
            if cls.init_saver is not None:
                cls.init_saver_code = class_savers.saver_code(self, cls, cls.init_saver)
        self.current_class = None
        if not self.sites:
            raise Blocked(1, "a class that builds a graph no `sess.run` at module level evaluates")
        return self


    def _graph_class(self, node: cst.ClassDef) -> GraphClass:
        at = self.line_of(node)
        name = node.name.value
        if node.decorators or any(code(b.value) != "object" for b in node.bases) or node.keywords:
            raise Blocked(at, f"the class `{name}` that builds the graph has bases or decorators")
        body = node.body.body
        methods = {s.name.value: s for s in body if isinstance(s, cst.FunctionDef)}
        if "__init__" not in methods:
            raise Blocked(at, f"the class `{name}` builds the graph outside `__init__`")
        for s in body:
            if not isinstance(s, cst.FunctionDef) and self._mentions_tf(s):
                raise Blocked(self.line_of(s), f"a class attribute of `{name}` that uses TensorFlow")
        init = methods["__init__"]
        cls = GraphClass(node, init, members=set(methods).union(*(attrs_of(s)[1] for s in body)))
        params = init.params
        if not params.params or params.params[0].name.value != "self":
            raise Blocked(at, f"`{name}.__init__` without `self`")
        # Which methods build the graph: those `__init__`'s graph calls on `self`, transitively.
        # Methods run by the program (given a Session, or opening one) are not graph code.
        given = session_parameters(methods)
        cls.held_session = class_sessions.held(self, node, init, list(init.body.body))
        for m, method in methods.items():  # `self.sess.run(...)`: a method of the program
            if method is not init and m not in given and class_sessions.runs_held(method, cls.held_session):
                given[m] = (-1, "")
        cls.runners = {m for m, method in methods.items() if method is not init and m not in given
                       and any(self.tf_call(c) in SESSIONS for c in calls_in(method))}
        program = set(given) | cls.runners
        graph_methods = self._graph_methods(init, methods, program)
        after, calls = built_after(self.module, name, graph_methods, self.line_of)
        cls.body = self._init_body(node, init, methods, graph_methods, cls)
        if cls.inlined:  # `self._build()` in `__init__` that makes the train op: read as `__init__`'s own
            graph_methods = self._graph_methods(init, methods, program | set(cls.inlined))
        if after:  # `model = Net(); model.build()`: `build` (and what it calls) as the end of `__init__`
            statements, names = inlined(node, after, graph_methods, self.line_of, self.copies)
            cls.inlined += names
            check_locals(node, init, cls.inlined, self.line_of)
            other_calls(self.module, node, set(names), calls, self.aliases, self.line_of)
            cls.body += statements
            self.removed |= calls
            cls.members -= set(cls.inlined) - set().union(*(attrs_of(s)[1] for s in body))  # (names gone)
            graph_methods = self._graph_methods(init, methods, program | set(cls.inlined))
        cls.graph_methods = graph_methods
        if cls.held_session is not None:  # (its lines go: it is made, initialised, closed)
            cls.body = class_sessions.settled(self, node, cls.held_session, cls.body)
            self.removed |= class_sessions.check_uses(self, self.module, node, cls.held_session)
        for attr in set().union(*(attrs_of(s)[1] for s in body)) | set(methods):
            if attr in MODULE_MEMBERS:
                raise Blocked(at, f"`self.{attr}` in the class `{name}`: a member of `tf.Module`, which the class "
                                  "would become")
        self._init_statements(cls)
        reached = set().union(*(attrs_of(st)[0] for st in cls.graph)) & graph_methods if cls.graph else set()
        todo = list(reached)
        while todo:
            for called in attrs_of(methods[todo.pop()])[0] & graph_methods - reached:
                reached.add(called)
                todo.append(called)
        for method_name in sorted(graph_methods - reached):
            raise Blocked(self.line_of(methods[method_name]), f"the method `{name}.{method_name}` builds graph code that "
                                                               "`__init__` does not run (TF1 built it when the program "
                                                               "called it)")
        for method_name in sorted(graph_methods, key=lambda m: self.line_of(methods[m])):
            method = methods[method_name]
            made_once = self._method_variables_made_once(cls, method)
            self._refused_in(method, f"the method `{name}.{method_name}`", ("Variable",) if made_once else ())
            reads, _ = attrs_of(method)
            if reads & {t for t in cls.trains}:
                raise Blocked(self.line_of(method), f"`{name}.{method_name}` reads a train op")
        for method in methods.values():  # a method run by the program: Python, or runs in a Session it is given
            if method is init or method.name.value in graph_methods or method.name.value in cls.inlined:
                continue
            if method.name.value in cls.runners:  # `def train(self): with tf.Session() as sess: ...`
                continue
            if class_feeds.is_feed_method(self, cls, method):  # `def create_feed_dict(self, x): return {self.x: x}`
                cls.feed_methods.add(method.name.value)
                continue
            session = given.get(method.name.value)
            if session is not None:  # `def predict(self, sess, x): return sess.run(self.out, {self.x: x})`
                cls.session_methods[method.name.value] = session
                continue
            reads, _ = attrs_of(method)
            if self.tensor_apis(method) or reads & (cls.graph_attrs | set(cls.trains) | graph_methods):
                raise Blocked(self.line_of(method), f"the method `{name}.{method.name.value}` uses the graph outside "
                                                    "`__init__` (a Session, tensors read by Python)")
        self._built_once(cls, methods)
        cls.build = cls.fresh("build_graph")
        for local in cls.captured:
            cls.captured[local] = cls.fresh(local)
        return cls

    def _init_body(self, node: cst.ClassDef, init: cst.FunctionDef, methods: Dict[str, cst.FunctionDef],
                   graph_methods: Set[str], cls: GraphClass) -> List[cst.BaseStatement]:
        """`__init__`'s statements, each call of a graph method that makes the train op or placeholders
        (`self.add_placeholders()`, `self.train_op = self.add_training_op(self.loss)`) replaced by
        that method's body: this route rewrites those where `__init__` makes them. Such a method may be
        run nowhere else."""
        body: List[cst.BaseStatement] = []
        for statement in init.body.body:
            found = builder_call(statement, graph_methods)
            if found is not None and self._builds_inputs(found[0], methods, graph_methods, set()):
                statements, names = inlined(node, [statement], graph_methods, self.line_of, self.copies, init,
                                            lambda m: self._builds_inputs(m, methods, graph_methods, set()))
                for other in methods.values():
                    if other is not init and other.name.value not in names and attrs_of(other)[0] & set(names):
                        called = sorted(attrs_of(other)[0] & set(names))[0]
                        raise Blocked(self.line_of(other), f"the method `{called}`, which makes the train op or "
                                                           f"placeholders, run by `{other.name.value}` too")
                cls.inlined += [n for n in names if n not in cls.inlined]
                body += statements
            else:
                body.append(statement)
        if cls.inlined:
            check_locals(node, init, cls.inlined, self.line_of)
        return body

    def _builds_inputs(self, name: str, methods: Dict[str, cst.FunctionDef], graph_methods: Set[str],
                       seen: Set[str]) -> bool:
        """Whether the graph method `name`, or one it calls, makes the train op or a placeholder
        (which this route rewrites only where `__init__` makes them; a `placeholder_with_default`
        is its default in a graph method)."""
        seen.add(name)
        method = methods[name]
        if any(isinstance(c.func, cst.Attribute) and c.func.attr.value == "minimize"
               or self.tf_call(c, "placeholder") for c in calls_in(method)):
            return True
        return any(self._builds_inputs(m, methods, graph_methods, seen)
                   for m in attrs_of(method)[0] & graph_methods - seen)

    def _runners(self) -> None:
        """The methods that open their own Session (`def train(self): with tf.Session() as sess:`),
        each run once by the program and the program's only Session: read as the program's code."""
        from tfmigrate.native.entry_functions import called_once

        sessions = {id(c) for c in calls_in(self.module) if self.tf_call(c) in SESSIONS}
        mains = {f.name.value for f in self.module.body if isinstance(f, cst.FunctionDef)
                 and called_once(self.module, f, self.names)}
        for cls in self.classes.values():
            for method in cls.node.body.body:
                if not (isinstance(method, cst.FunctionDef) and method.name.value in cls.runners):
                    continue
                if len(sessions) > 1:
                    raise Blocked(self.line_of(method), f"`{cls.node.name.value}.{method.name.value}` opens a Session "
                                                        "beside others (each began from the variables' initial values)")
                runs_once(self.module, cls.node, method, mains, sessions, self.aliases, self.line_of)
                self.current_class, self.current_method = cls, method.name.value
                for statement in method.body.body:
                    self._top(statement)

    def _graph_methods(self, init, methods: Dict[str, cst.FunctionDef], program: Set[str]) -> Set[str]:
        """The methods that build graph code: those that use TensorFlow or `minimize` (of an optimizer
        made elsewhere), and those that call them (the methods of the program, `program`, left out)."""
        found = {m for m, method in methods.items() if method is not init and m not in program
                 and (self.tensor_apis(method) or any(isinstance(c.func, cst.Attribute) and c.func.attr.value == "minimize"
                                                       for c in calls_in(method)))}
        changed = True
        while changed:
            changed = False
            for m, method in methods.items():
                if method is init or m in found or m in program:
                    continue
                if attrs_of(method)[0] & found:
                    found.add(m)
                    changed = True
        return found

    def _variables_made_once(self, cls: GraphClass, statement) -> bool:
        """The `tf.Variable(...)` calls of a statement of `__init__` outside loops, each made once by
        TF1: in tracked code each becomes `get_variable` under a name unique in the class (a
        `tf.Variable` there would be made again at every call). False when there are none."""
        calls = [c for c in calls_in(statement) if self.tf_call(c) == "Variable"]
        if not calls:
            return False
        loops = [n for n in subtree(statement) if isinstance(n, (cst.For, cst.While, cst.CompFor, cst.Lambda, cst.FunctionDef))]
        scopes = self._scopes_of(calls, statement, named_in_loops=loops)
        if loops and not all(id(c) in scopes for c in calls):
            raise Blocked(self.line_of(calls[0]), f"`tf.Variable` in a loop of `{cls.node.name.value}.__init__` "
                                                  "(one call made several variables) other than under a scope named "
                                                  "at each pass (`with tf.name_scope(\"conv-%s\" % size):`)")
        self._as_get_variables(cls, calls, scopes)
        return True

    def _method_variables_made_once(self, cls: GraphClass, method: cst.FunctionDef) -> bool:
        """The `tf.Variable(...)` calls of a graph method that the build runs once (one call, in a
        statement of `__init__`'s graph, outside loops; none in a loop of the method): as in
        `__init__`, each becomes `get_variable` under a name unique in the class. False when none."""
        calls = [c for c in calls_in(method) if self.tf_call(c) == "Variable"]
        if not calls:
            return False
        looped = {id(n) for loop in subtree(method.body) if isinstance(loop, _LOOPS) for n in subtree(loop)}
        if not self._built_once_per_call(cls, method.name.value, set()) or any(id(c) in looped for c in calls):
            return False  # (refused: made again at each call)
        self._as_get_variables(cls, calls, self._scopes_of(calls, method.body))
        return True

    def _as_get_variables(self, cls: GraphClass, calls: List[cst.Call], scopes: Dict[int, str]) -> None:
        """Each `tf.Variable(...)` of `calls` as a `get_variable` under TF1's name (`Variable_1`), in
        `cls.variables`."""
        for call in calls:
            named = next((a.value for a in call.args if a.keyword is not None and a.keyword.value == "name"), None)
            leaf = named.evaluated_value if isinstance(named, cst.SimpleString) else "Variable"
            if not isinstance(scopes[id(call)], str):  # (named at each pass of a loop: made unique where made)
                name_code = f"tf1_unique_name(tf1_variable_names, {scopes[id(call)][0]} + \"/{leaf}\")"
                new = variable_as_get_variable(self.tf, call, "", name_code)
                if new is None:
                    raise Blocked(self.line_of(call), "a `tf.Variable` with arguments `get_variable` does not take")
                cls.variables[id(call)] = new
                cls.loop_variables = True
                continue
            base = scopes[id(call)] + leaf
            count = cls.variable_counts.get(base, 0)
            cls.variable_counts[base] = count + 1
            new = variable_as_get_variable(self.tf, call, base if count == 0 else f"{base}_{count}")
            if new is None:
                raise Blocked(self.line_of(call), "a `tf.Variable` with arguments `get_variable` does not take")
            cls.variables[id(call)] = new

    def _built_once_per_call(self, cls: GraphClass, name: str, seen: Set[str]) -> bool:
        """Whether the graph method `name` runs once per build: called in one place, outside loops,
        by a statement of `__init__`'s graph or by a graph method that runs once itself."""
        sites = [(n, m) for m in cls.node.body.body if isinstance(m, cst.FunctionDef)
                 for n in subtree(m.body) if isinstance(n, cst.Call) and isinstance(n.func, cst.Attribute)
                 and self_attr(n.func) == name]
        if len(sites) != 1 or name in seen:
            return False
        site, caller = sites[0]
        if caller is cls.init or caller.name.value in cls.inlined:
            statements = cls.graph
        elif caller.name.value in cls.graph_methods and self._built_once_per_call(cls, caller.name.value, seen | {name}):
            statements = [caller.body]
        else:
            return False
        inside = {id(n) for s in statements for n in subtree(s)}
        looped = {id(n) for s in statements for loop in subtree(s) if isinstance(loop, _LOOPS) for n in subtree(loop)}
        return id(site) in inside and id(site) not in looped

    def _scopes_of(self, calls: List[cst.Call], statement, named_in_loops=()) -> Dict[int, object]:
        """The name-scope prefix (`embedding/`) TF1 gave each call's variable: the literal names of the
        `name_scope` / `variable_scope` blocks around it in the statement. Where `named_in_loops`
        (the loops of the statement) are given, a call in a `for` loop under a scope named inside it
        by an expression (`"conv-maxpool-%s" % filter_size`, the text classifiers' shape) has its
        prefix as a Python expression instead, `(code,)`; a call in a loop otherwise has none."""
        wanted = {id(c) for c in calls}
        loops = {id(n) for n in named_in_loops}
        found: Dict[int, object] = {}
        script = self

        class _Scopes(cst.CSTVisitor):
            def __init__(self):
                self.stack: List[List[object]] = []  # per `with`: its scope names, literal or an expression
                self.loops: List[int] = []  # the depth of `stack` at each loop entered

            def visit_With(self, node: cst.With) -> Optional[bool]:
                names: List[object] = []
                for item in node.items:
                    path = script.tf_call(item.item)
                    if path in ("name_scope", "variable_scope"):
                        first = item.item.args[0].value if item.item.args else None
                        if isinstance(first, cst.SimpleString):
                            names.append(first.evaluated_value + "/")
                        elif self.loops and isinstance(self.loops[-1], int) and first is not None:
                            names.append((code(first),))
                        else:
                            raise Blocked(script.line_of(node), "a `tf.Variable` under a scope whose name is not a literal")
                self.stack.append(names)
                return True

            def leave_With(self, node: cst.With) -> None:
                self.stack.pop()

            def visit_For(self, node: cst.For) -> None:
                self.loops.append(len(self.stack) if id(node) in loops else None)

            def leave_For(self, node: cst.For) -> None:
                self.loops.pop()

            def on_visit(self, node) -> bool:
                if isinstance(node, (cst.While, cst.CompFor, cst.Lambda, cst.FunctionDef)) and id(node) in loops:
                    self.loops.append(None)  # (no variable made here gets a name)
                return super().on_visit(node)

            def on_leave(self, node) -> None:
                if isinstance(node, (cst.While, cst.CompFor, cst.Lambda, cst.FunctionDef)) and id(node) in loops:
                    self.loops.pop()
                super().on_leave(node)

            def visit_Call(self, call: cst.Call) -> None:
                if id(call) not in wanted:
                    return
                parts = [name for names in self.stack for name in names]
                if not self.loops:
                    found[id(call)] = "".join(parts)
                    return
                depth = self.loops[-1]
                inner = [name for names in self.stack[depth:] for name in names] if depth is not None else []
                if any(None is d for d in self.loops) or not any(isinstance(n, tuple) for n in inner):
                    return  # (in a loop, under no scope named at each pass: no name of its own)
                found[id(call)] = (_joined(parts),)

        statement.visit(_Scopes())
        return found

    def _built_once(self, cls: GraphClass, methods: Dict[str, cst.FunctionDef]) -> None:
        """TF1 ran the graph code once, in `__init__`; this route runs it at each call. So the Python
        attributes it reads may not change after `__init__` (a `self.training` flag set by `train()`
        was read once by TF1), and what it changes may not be Python state that outlives a call
        (`self.layers = []` in `__init__`, appended to by the graph code, would grow at each call)."""
        name = cls.node.name.value
        graph_nodes = cls.graph + [methods[m] for m in cls.graph_methods]
        read = set().union(*(attrs_of(n)[0] for n in graph_nodes)) if graph_nodes else set()
        written = set().union(*(attrs_of(n)[1] for n in graph_nodes)) if graph_nodes else set()
        python = read - cls.graph_attrs - cls.graph_methods - set(cls.trains) - cls.state
        kept = set().union(*(attrs_of(s)[1] for s in cls.python)) if cls.python else set()
        outlives = written & kept
        if outlives:
            raise Blocked(self.line_of(cls.init), f"`self.{sorted(outlives)[0]}` of `{name}`: set by Python in "
                                                  "`__init__` and changed by the graph code, which runs at each call")
        for method in methods.values():
            if method is cls.init or method.name.value in cls.graph_methods or method.name.value in cls.inlined:
                continue
            for attr in sorted(attrs_of(method)[1] & python - set(cls.frozen)):
                # `self.training = True` in `train()`: TF1 had read it once, in `__init__`; the graph,
                # built at each call here, reads the copy `__init__` keeps of it
                cls.frozen[attr] = cls.fresh(f"{attr}_built")
        cls.python_read = python
        changing = self._changing_globals()
        init_locals = local_names(cls.init).union(*(local_names(methods[m]) for m in cls.inlined))
        for node in graph_nodes:
            local = local_names(node) if isinstance(node, cst.FunctionDef) else init_locals
            late = (names_read(node) - local) & changing
            if late:
                raise Blocked(self.line_of(node), f"`{sorted(late)[0]}`, a module-level name set more than once, read "
                                                  f"by the graph of `{name}` (TF1 read it once, in `__init__`)")

    def _changing_globals(self) -> Set[str]:
        """Module-level names assigned by more than one top-level statement, or in a loop or block."""
        if self._changing is None:
            seen: Set[str] = set()
            self._changing = set()
            for node in self.module.body:
                if isinstance(node, (cst.FunctionDef, cst.ClassDef)) or (
                        isinstance(node, cst.SimpleStatementLine) and isinstance(node.body[0], (cst.Import, cst.ImportFrom))):
                    continue
                assigned = names_assigned(node)
                if not isinstance(node, cst.SimpleStatementLine):
                    self._changing |= assigned
                self._changing |= assigned & seen
                seen |= assigned
        return self._changing

    def _refused_in(self, node, where: str, allowed: Tuple[str, ...] = ()) -> None:
        seeded = self._seeded_cell_scopes(node)
        for path, attr in self.tensor_apis(node):
            if path in allowed or id(attr) in seeded:
                continue
            for prefix, what in REFUSED.items():
                if path == prefix or path.startswith(prefix) and prefix.endswith("."):
                    raise Blocked(self.line_of(attr), f"{what}, in {where}")
        for call in calls_in(node):
            if isinstance(call.func, cst.Name) and call.func.value == "print":
                raise Blocked(self.line_of(call), f"`print` in {where} (TF1 printed tensors once, as it built them)")
            why = tracked_control_flow_refused(call, self.tf_call(call), self.tf_call, MAKES_VARIABLES)
            if why is not None:
                raise Blocked(self.line_of(call), f"{why}, in {where}")
            if isinstance(call.func, cst.Attribute) and call.func.attr.value == "minimize":
                raise Blocked(self.line_of(call), f"`minimize` in {where} other than `self.<op> = "
                                                  "<optimizer>.minimize(self.<loss>)` in `__init__`")
            path = self.tf_call(call)
            if path is not None and not self.pinned and any(a.keyword is not None and a.keyword.value == "seed" and code(a.value) != "None"
                                        for a in call.args):
                raise Blocked(self.line_of(call), f"`tf.{path}(seed=...)` in {where}, a random op with its own seed "
                                                  "(kept where TF1's op seeds are written out; else eager TF2 may "
                                                  "draw others)")

    def _seeded_cell_scopes(self, node) -> Set[int]:
        """The `tf.get_variable_scope` of each `tf.variable_scope(tf.get_variable_scope(), initializer=...)`
        that native.op_seeds wrote around an RNN's run (its kernel's TF1 seed; the same names): kept."""
        if not self.pinned:
            return set()
        found = set()
        for call in calls_in(node):
            first = call.args[0].value if call.args and call.args[0].keyword is None else None
            if self.tf_call(call) == "variable_scope" and len(call.args) == 2 and isinstance(first, cst.Call) \
                    and not first.args and self.tf_call(first) == "get_variable_scope" \
                    and call.args[1].keyword is not None and call.args[1].keyword.value == "initializer":
                found.add(id(first.func))
        return found

    def _init_statements(self, cls: GraphClass) -> None:
        """Each statement of `__init__` goes to one of three places: a placeholder becomes a parameter,
        a `minimize` a train op, Python stays in `__init__`, the rest is graph code."""
        name = cls.node.name.value
        statements = cls.order = class_updates.unwrapped(self, cls, class_summaries.merged(
            self, cls, class_data.unscoped(self, cls, self._placeholders_unscoped(list(cls.body)))))
        origin = {id(s): m.name.value for m in cls.node.body.body  # the inlined method each statement is from
                  if isinstance(m, cst.FunctionDef) and m.name.value in cls.inlined for s in m.body.body}
        clips = class_clips.as_minimize(self, statements)  # `apply_gradients` of clipped gradients: `minimize`
        if statements and is_docstring(statements[0]):
            cls.python.append(statements.pop(0))
        params = {p.name.value for p in (*cls.init.params.params, *cls.init.params.kwonly_params)}
        for star in (cls.init.params.star_arg, cls.init.params.star_kwarg):
            if isinstance(star, cst.Param):
                params.add(star.name.value)
        params.discard("self")
        graph_locals: Set[str] = set()
        python_locals: Set[str] = set()
        graph_read_so_far: Set[str] = set()
        locals_changed: Set[str] = set()
        for index in range(len(statements)):
            at = self.line_of(statements[index])
            data = class_data.data_statement(self, cls, statements, index, python_locals | params)
            statement = statements[index]
            if data == "gone":
                continue
            if data == "python":
                cls.python.append(statement)
                continue
            small = statement.body[0] if isinstance(statement, cst.SimpleStatementLine) and len(statement.body) == 1 \
                else None
            value = small.value if isinstance(small, cst.Assign) and len(small.targets) == 1 else None
            target = self_attr(small.targets[0].target) if value is not None else None
            path = self.tf_call(value) if value is not None else None
            reads, writes = attrs_of(statement)
            local_reads = names_read(statement)
            if target is not None and (path == "Variable" and self._state_variable(value) or path in STEP_MAKERS
                                       and not value.args) \
                    and not reads & cls.graph_attrs and not local_reads & graph_locals:
                cls.python.append(statement)  # a counter (the global step): state made once, in `__init__`
                # (eagerly `get_or_create_global_step()` makes the one `global_step` too, or finds it)
                cls.state.add(target)
                continue
            if id(statement) in self.python_statements:
                cls.python.append(statement)
                continue
            if isinstance(small, cst.Expr) and self.tf_call(small.value) == "set_random_seed":
                cls.python.append(statement)  # the graph's seed: eagerly the process's, set as the object is made
                continue
            if path in _SCHEDULES and target is not None and reads - {target} <= cls.state \
                    and not local_reads & graph_locals and self._schedule_read_by_optimizers(target):
                cls.python.append(statement)  # eagerly a function of the step, which an optimizer calls
                continue
            if path in ("placeholder", "placeholder_with_default") and target is not None:
                cls.placeholders.append(self._placeholder(value, path, target, at))
                cls.graph_attrs.add(target)
                continue
            if class_savers.init_saver(self, cls, statement, target, value):
                continue
            if target is not None and isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute) \
                    and value.func.attr.value == "minimize":
                if cls.init_saver is not None:
                    raise Blocked(at, f"`minimize` in `{name}.__init__` after its `tf.train.Saver` (TF1 saved no "
                                      "state of that optimizer)")
                cls.trains[target] = self._train(cls, statement, value, target, at, graph_locals)
                if id(statement) in clips:
                    self._clipped(cls, cls.trains[target], clips[id(statement)], at, graph_locals)
                continue
            is_graph = bool(self.tensor_apis(statement) or reads & (cls.graph_attrs | cls.graph_methods)
                            or local_reads & (graph_locals | set(self.module_placeholders) - params - python_locals)
                            ) or data == "input" or self._collects_tensors(statement, statements[index + 1:])
            if is_graph and data is None and class_data.datasets_only(self, statement) \
                    and not (reads & (cls.graph_attrs | cls.graph_methods) or local_reads & graph_locals):
                is_graph = False  # `train = tf.data.Dataset.from_tensor_slices((x, y)).batch(4)`: made once
            if is_graph:
                made_once = self._variables_made_once(cls, statement)
                self._refused_in(statement, f"`{name}.{origin.get(id(statement), '__init__')}`",
                                 ("Variable",) if made_once else ())
                if cls.trains and self.makes_variables(cls, statement):
                    raise Blocked(at, f"variables made in `{name}.__init__` after its `minimize` (TF1 trained only "
                                      "those made before it)")
                given = local_reads & (params | python_locals) - graph_locals
                if given & locals_changed:
                    raise Blocked(at, f"`{sorted(given & locals_changed)[0]}` of `{name}.__init__` read by the graph "
                                      "after Python changed it")
                for local in sorted(given - set(cls.captured)):
                    cls.captured[local] = ""
                cls.graph.append(statement)
                cls.graph_attrs |= writes
                graph_locals |= names_assigned(statement)
                graph_read_so_far |= reads
            else:
                late = writes & graph_read_so_far | names_assigned(statement) & set(cls.captured)
                if late:
                    raise Blocked(at, f"`{sorted(late)[0]}` set in `{name}.__init__` after the graph read it")
                cls.python.append(statement)
                python_locals |= names_assigned(statement)
                locals_changed |= names_assigned(statement) & set(cls.captured)
        class_data.iterators_consumed(self, cls)
        if not cls.graph and not cls.placeholders:
            raise Blocked(self.line_of(cls.init), f"`{name}.__init__` builds no graph itself")
        for method in cls.graph_methods:  # what the graph methods assign is graph too
            node = next(s for s in cls.node.body.body if isinstance(s, cst.FunctionDef) and s.name.value == method)
            cls.graph_attrs |= attrs_of(node)[1]
        taken = set().union(*(names_read(s) for s in cls.graph)) if cls.graph else set()
        for placeholder in cls.placeholders:
            if placeholder.iterator:  # (named fresh where its `get_next()` became it)
                continue
            param = placeholder.attr
            while param in taken or param == "self":
                param += "_"
            placeholder.param = param
            taken.add(param)

    def _placeholders_unscoped(self, statements: List[cst.BaseStatement]) -> List[cst.BaseStatement]:
        """`with tf.name_scope("inputs"):` / `tf.variable_scope(scope)` around placeholders: those
        statements taken out before the block (a scope names their ops, which eager code does not
        have; the rest of the block keeps it), and a block of placeholders or `minimize` only undone."""
        out: List[cst.BaseStatement] = []
        for statement in statements:
            if not (isinstance(statement, cst.With) and all(
                    self.tf_call(item.item) in ("name_scope", "variable_scope") and item.asname is None
                    for item in statement.items) and statement.body.body):
                out.append(statement)
                continue
            inner = list(statement.body.body)
            if all(self._input_line(s, ("placeholder", "placeholder_with_default")) or self._minimize_line(s)
                   for s in inner):
                out.extend(inner)
                continue
            hoisted, kept, assigned = [], [], set()
            for line in inner:
                if self._input_line(line, ("placeholder",)) and not names_read(line) & assigned:
                    hoisted.append(line)
                else:
                    kept.append(line)
                    assigned |= names_assigned(line)
            if hoisted and kept:
                out.extend(hoisted)
                out.append(statement.with_changes(body=statement.body.with_changes(body=kept)))
                self.copies[id(out[-1])] = self.line_of(statement)
            else:
                out.append(statement)
        return out

    def _input_line(self, statement, paths: Tuple[str, ...]) -> bool:
        """`self.<attr> = tf.placeholder(...)` (one of `paths`) as a line of its own."""
        return isinstance(statement, cst.SimpleStatementLine) and len(statement.body) == 1 \
            and isinstance(statement.body[0], cst.Assign) and len(statement.body[0].targets) == 1 \
            and self_attr(statement.body[0].targets[0].target) is not None \
            and self.tf_call(statement.body[0].value, *paths) is not None

    @staticmethod
    def _minimize_line(statement) -> bool:
        small = statement.body[0] if isinstance(statement, cst.SimpleStatementLine) and len(statement.body) == 1 \
            else None
        return isinstance(small, cst.Assign) and self_attr(small.targets[0].target) is not None \
            and isinstance(small.value, cst.Call) and isinstance(small.value.func, cst.Attribute) \
            and small.value.func.attr.value == "minimize"

    def _placeholder(self, call: cst.Call, path: str, attr: str, at: int) -> Placeholder:
        try:
            if path == "placeholder":
                bound = bind(call, ("dtype", "shape", "name"))
                if "dtype" not in bound:
                    raise ValueError("no dtype")
                return Placeholder(attr, attr, code(bound["dtype"]))
            bound = bind(call, ("input", "shape", "name"))
        except ValueError:
            raise Blocked(at, "a placeholder whose arguments are not plain")
        if "input" not in bound or self._mentions_tf(bound["input"]) or attrs_of(bound["input"])[0]:
            raise Blocked(at, "a `placeholder_with_default` whose default is a tensor")
        return Placeholder(attr, attr, None, code(bound["input"]))

    def _train(self, cls: GraphClass, statement, call: cst.Call, target: str, at: int, graph_locals) -> Train:
        try:
            bound = bind(call, _MINIMIZE)
        except ValueError:
            raise Blocked(at, "`minimize(*args)`")
        other = sorted(set(bound) - {"loss", "name", "global_step"} - ({"var_list"} if self._scope_listed(
            bound.get("var_list")) else set()))
        if other:
            raise Blocked(at, f"`minimize({other[0]}=...)` in a class (this route trains the class's own variables, "
                              "or those of a variable scope)")
        step = self_attr(bound.get("global_step")) if "global_step" in bound else None
        if "global_step" in bound and step not in cls.state:
            raise Blocked(at, "a `global_step` other than a `self.<step> = tf.Variable(0, trainable=False)` of the class")
        value = bound.get("loss")
        negated = isinstance(value, cst.UnaryOperation) and isinstance(value.operator, cst.Minus)
        loss = self_attr(value.expression if negated else value)
        if loss is None or loss not in cls.graph_attrs:
            raise Blocked(at, "`minimize` of something other than a `self.<loss>` the graph made")
        receiver = call.func.value
        reads, _ = attrs_of(receiver)
        if reads & cls.graph_attrs or names_read(receiver) & graph_locals:
            raise Blocked(at, "an optimizer made from tensors")
        for path, _node in self.tensor_apis(receiver):
            raise Blocked(at, f"`tf.{path}` in the optimizer of `minimize`")
        return Train(target, code(receiver), loss, statement, step, negated, self._scope_listed(bound.get("var_list")))

    def _clipped(self, cls: GraphClass, train: Train, clip, at: int, graph_locals) -> None:
        """The train op's gradients clipped by `clip`'s global norm (native.class_clips), a number
        `__init__` reads as the optimizer is made."""
        reads, _ = attrs_of(clip.norm)
        if reads & cls.graph_attrs or names_read(clip.norm) & graph_locals or self.tensor_apis(clip.norm):
            raise Blocked(at, "a gradient clip norm computed from tensors")
        members = attrs_of(cls.node)[0] | attrs_of(cls.node)[1]
        if f"{train.attr}_clip_norm" in members:
            raise Blocked(at, f"`self.{train.attr}_clip_norm`, a name the eager class would take for the clip norm")
        train.clip_norm, train.norm_attr = clip.norm, clip.norm_attr
        if clip.norm_attr is not None:
            cls.graph_attrs.add(clip.norm_attr)

    def _scope_listed(self, node) -> Optional[str]:
        """"disc" of `tf.get_collection(tf.GraphKeys.TRAINABLE_VARIABLES, scope="disc")` (TF1 matched the
        start of each variable's name: a plain scope name, as `startswith`), else None."""
        if not (isinstance(node, cst.Call) and self.tf_call(node) == "get_collection" and len(node.args) == 2):
            return None
        key, scope = node.args
        if key.keyword is not None or self.api(key.value) != "GraphKeys.TRAINABLE_VARIABLES" \
                or not (scope.keyword is not None and scope.keyword.value == "scope") \
                or not isinstance(scope.value, cst.SimpleString):
            return None
        name = scope.value.evaluated_value
        return name if isinstance(name, str) and re.fullmatch(r"[A-Za-z0-9_/]+", name) else None

    def _collects_tensors(self, statement, later) -> bool:
        """`pooled_outputs = []` that graph code after it fills (`pooled_outputs.append(pooled)` in the
        loop over filter sizes): made again at each build, or the list would grow at every call."""
        small = statement.body[0] if isinstance(statement, cst.SimpleStatementLine) and len(statement.body) == 1 \
            else None
        if not (isinstance(small, cst.Assign) and len(small.targets) == 1 and isinstance(small.targets[0].target, cst.Name)
                and (isinstance(small.value, (cst.List, cst.Dict)) and not small.value.elements
                     or isinstance(small.value, cst.Call) and code(small.value) in ("list()", "dict()"))):
            return False
        name = small.targets[0].target.value
        return any(name in names_read(s) and self.tensor_apis(s) for s in later)

    def _schedule_read_by_optimizers(self, attr: str) -> bool:
        """Whether `self.<attr>` (a learning-rate schedule) is read only by optimizers of `minimize`
        calls (`tf.train.RMSPropOptimizer(self.lr).minimize(...)`): eagerly the schedule is a function
        of the step (`tf.compat.v1.train.exponential_decay` returns one), which TF1's optimizers call."""
        allowed: Set[int] = set()
        for call in calls_in(self.module):
            if isinstance(call.func, cst.Attribute) and call.func.attr.value == "minimize":
                allowed.update(id(n) for n in subtree(call.func.value))
        uses = [n for n in subtree(self.module) if isinstance(n, cst.Attribute) and n.attr.value == attr
                and isinstance(n.value, cst.Name) and n.value.value == "self"]
        assigned = [n for n in uses if id(n) not in allowed]
        return len(assigned) == 1 and len(uses) > 1

    def _state_variable(self, call: cst.Call) -> bool:
        """`tf.Variable(<value>, ..., trainable=False)`: a counter the graph does not train."""
        return any(a.keyword is not None and a.keyword.value == "trainable" and code(a.value) == "False"
                   for a in call.args) and not any(a.star for a in call.args)

    def makes_variables(self, cls: GraphClass, statement) -> bool:
        """Whether `statement` makes variables: by a TF1 model call, or through a graph method."""
        return self._makes_variables_itself(statement) \
            or bool(attrs_of(statement)[0] & self._variable_methods(cls))

    def _makes_variables_itself(self, node) -> bool:
        return any(path.startswith(MAKES_VARIABLES) or path in RNN_RUNNERS for path, _ in self.tensor_apis(node))

    def _variable_methods(self, cls: GraphClass) -> Set[str]:
        """The graph methods that make variables, themselves or through the graph methods they call
        (`contrastive_loss` makes none: a statement that calls it may be skipped)."""
        key = (id(cls), frozenset(cls.graph_methods))  # (asked for each statement a run reads)
        if key in self._making:
            return self._making[key]
        methods = {m.name.value: m for m in cls.node.body.body
                   if isinstance(m, cst.FunctionDef) and m.name.value in cls.graph_methods}
        making = {name for name, method in methods.items() if self._makes_variables_itself(method)}
        grown = True
        while grown:
            grown = False
            for name, method in methods.items():
                if name not in making and attrs_of(method)[0] & making:
                    making.add(name)
                    grown = True
        self._making[key] = making
        return making


    # -- the module's statements ----------------------------------------------------------------


    def computed_from(self, cls: GraphClass, placeholder: Placeholder) -> Tuple[Set[str], Set[int], bool]:
        """What the class's graph computes from `placeholder`: the attributes, the statements (ids),
        and whether those may be skipped when it is not fed (they make no variables, so the rest of
        the graph keeps its TF1 names)."""
        methods = {m.name.value: attrs_of(m) for m in cls.node.body.body
                   if isinstance(m, cst.FunctionDef) and m.name.value in cls.graph_methods}
        inputs = {m.name.value: names_read(m) & set(cls.method_inputs) for m in cls.node.body.body
                  if isinstance(m, cst.FunctionDef) and m.name.value in cls.graph_methods}
        attrs = {placeholder.attr} if placeholder.own else set()
        names = set() if placeholder.own else {placeholder.attr}
        statements: Set[int] = set()
        skippable = True
        for statement in scoped_lines(cls.graph, self.tf_call):
            reads, writes = attrs_of(statement)
            read_names = names_read(statement)
            todo, seen = list(reads & set(methods)), set()
            while todo:  # (the methods it calls, and those they call)
                method = todo.pop()
                if method in seen:
                    continue
                seen.add(method)
                reads, writes = reads | methods[method][0], writes | methods[method][1]
                read_names = read_names | inputs[method]
                todo += list(methods[method][0] & set(methods))
            if reads & attrs or read_names & names:
                statements.add(id(statement))
                attrs |= writes
                names |= names_assigned(statement)
                skippable = skippable and not (self.makes_variables(cls, statement)
                                               and not self._reuses_only(cls, statement))
        return attrs, statements, skippable

    def _reuses_only(self, cls: GraphClass, statement) -> bool:
        """`self.o2 = self.tower(self.x2, reuse=True)`: a call of a graph method whose variables are all
        made under `tf.variable_scope(..., reuse=<its parameter>)`, given `True`: it makes none (the
        first tower made them), so skipping it leaves the graph's variables and their names."""
        making = self._variable_methods(cls)
        methods = {m.name.value: m for m in cls.node.body.body if isinstance(m, cst.FunctionDef)}
        if self._makes_variables_itself(statement):
            return False
        calls = [c for c in calls_in(statement) if self_attr(c.func) in making]
        if len(calls) != 1:
            return False
        call, method = calls[0], methods[calls[0].func.attr.value]
        params = [p.name.value for p in method.params.params]
        offset = 1 if params and params[0] == "self" else 0
        try:
            bound = bind(call, tuple(params[offset:]))
        except ValueError:
            return False
        reusing = {name for name, value in bound.items() if code(value) == "True"}
        if not reusing:
            return False

        def under_reuse(node) -> bool:  # `with tf.variable_scope(..., reuse=<param>):`
            return isinstance(node, cst.With) and any(
                isinstance(item.item, cst.Call) and (self.tf_call(item.item) or "").endswith("variable_scope")
                and any(a.keyword is not None and a.keyword.value == "reuse" and isinstance(a.value, cst.Name)
                        and a.value.value in reusing for a in item.item.args) for item in node.items)

        def unreused(body) -> bool:  # variables made outside such a block
            for inner in body:
                if under_reuse(inner):
                    continue
                if isinstance(inner, cst.SimpleStatementLine):
                    if self.makes_variables(cls, inner):
                        return True
                elif self.makes_variables(cls, inner):
                    block = getattr(inner, "body", None)
                    if not isinstance(block, cst.IndentedBlock) or unreused(block.body) or getattr(inner, "orelse", None):
                        return True
            return False

        return not unreused(method.body.body)


