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
`__init__`. Anything outside this shape is a Blocker, and the module keeps the compat route.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Dict, List, Optional, Set, Tuple

import libcst as cst

from tfmigrate.facts.graph_words import RNN_RUNNERS
from tfmigrate.facts.names import ImportTable
from tfmigrate.native.model_mapping import MAKES_VARIABLES, local_names, variable_as_get_variable
from tfmigrate.native.script import (EAGER_STATEMENTS, INITIALIZERS, OBJECT_PREFIXES, OBJECT_SUFFIXES, SESSIONS,
                                     Blocked)
from tfmigrate.native.syntax import assignments_in, bind, calls_in, code, names_read

# What the graph code of a class may not do on this route (model_mapping's list, less what a class
# is rewritten for: its placeholders and its `minimize`).
REFUSED = {
    "Session": "a Session", "InteractiveSession": "a Session",
    "train.": "`tf.train` (savers, queues, global steps) inside the graph a class builds",
    "summary.": "TF1 summaries", "get_collection": "graph collections", "add_to_collection": "graph collections",
    "control_dependencies": "`tf.control_dependencies`", "metrics.": "`tf.metrics.*`",
    "get_default_graph": "the default graph", "global_variables": "the graph's variable lists",
    "trainable_variables": "the graph's variable lists", "py_func": "`tf.py_func`", "assign": "variable assignments",
    "layers.batch_normalization": "`tf.layers.batch_normalization` (its UPDATE_OPS)",
    "get_variable_scope": "`tf.get_variable_scope()`", "Variable": "`tf.Variable` (made again at every call)",
    "data.": "`tf.data` inside the graph a class builds", "placeholder": "a placeholder made other than as "
    "`self.<name> = tf.placeholder(...)` in `__init__`", "sparse_placeholder": "a sparse placeholder",
    "cond": "`tf.cond`", "while_loop": "`tf.while_loop`",
}
# tf.Module's own members: a class assigning one cannot become a tf.Module as it is.
MODULE_MEMBERS = {"name", "name_scope", "variables", "trainable_variables", "non_trainable_variables",
                  "submodules", "with_name_scope"}
_MINIMIZE = ("loss", "global_step", "var_list", "gate_gradients", "aggregation_method",
             "colocate_gradients_with_ops", "name", "grad_loss")



@dataclass
class Placeholder:
    attr: str                      # `self.<attr>`, or the module-level name
    param: str                     # the parameter of build_graph and the run methods
    dtype: Optional[str]           # cast to it (None: placeholder_with_default, passed as it is)
    default: Optional[str] = None  # placeholder_with_default's value
    own: bool = True               # made in `__init__` (else a module-level placeholder)
    optional: bool = False         # some run leaves it unfed: None, and what it feeds is skipped
    fed_tensor: Optional[str] = None  # a tensor of the graph fed by a run: the attribute holding what it was fed

    @property
    def default_code(self) -> Optional[str]:
        return "None" if self.optional else self.default


@dataclass
class Train:
    attr: str        # `self.<attr> = <optimizer>.minimize(self.<loss>)`
    optimizer: str   # the receiver of `minimize`, made once in `__init__`
    loss: str
    node: cst.CSTNode
    global_step: Optional[str] = None  # `self.<attr>`, a state variable `apply_gradients` counts in


@dataclass
class RunMethod:
    name: str
    fetches: cst.BaseExpression   # the fetches with the instance as `self`
    train: Optional[Train]


@dataclass
class GraphClass:
    node: cst.ClassDef
    init: cst.FunctionDef
    python: List[cst.BaseStatement] = field(default_factory=list)   # stay in `__init__`
    graph: List[cst.BaseStatement] = field(default_factory=list)    # run by build_graph
    placeholders: List[Placeholder] = field(default_factory=list)
    trains: Dict[str, Train] = field(default_factory=dict)
    graph_attrs: Set[str] = field(default_factory=set)
    state: Set[str] = field(default_factory=set)  # `self.<a> = tf.Variable(..., trainable=False)`: made once
    graph_methods: Set[str] = field(default_factory=set)
    members: Set[str] = field(default_factory=set)
    build: str = "build_graph"
    captured: Dict[str, str] = field(default_factory=dict)  # `__init__`'s names the graph reads -> attribute
    methods: Dict[str, RunMethod] = field(default_factory=dict)    # key of a run -> its method
    session_methods: Dict[str, Tuple[int, str]] = field(default_factory=dict)  # method -> its Session parameter
    variables: Dict[int, str] = field(default_factory=dict)  # id(tf.Variable call) -> its get_variable
    variable_counts: Dict[str, int] = field(default_factory=dict)
    order: List[cst.BaseStatement] = field(default_factory=list)  # `__init__`'s statements, scopes of inputs undone
    python_read: Set[str] = field(default_factory=set)  # Python attributes the graph reads (fixed after __init__)

    def fresh(self, preferred: str) -> str:
        name, n = preferred, 2
        while name in self.members:
            name, n = f"{preferred}_{n}", n + 1
        self.members.add(name)
        return name


def _session_parameter(method: cst.FunctionDef) -> Optional[Tuple[int, str]]:
    """(index after `self`, name) of the method's parameter used only as `<it>.run(...)`: a Session it
    is given (None: none is)."""
    for index, param in enumerate(method.params.params[1:]):
        name = param.name.value
        uses = [n for n in _subtree(method.body) if isinstance(n, cst.Name) and n.value == name]
        runs = [c for c in calls_in(method.body) if isinstance(c.func, cst.Attribute) and c.func.attr.value == "run"
                and isinstance(c.func.value, cst.Name) and c.func.value.value == name]
        if param.default is None and runs and len(uses) == len(runs):
            return index, name
    return None


def _self_attr(node) -> Optional[str]:
    if isinstance(node, cst.Attribute) and isinstance(node.value, cst.Name) and node.value.value == "self":
        return node.attr.value
    return None


def _attrs(node: cst.CSTNode, of: str = "self") -> Tuple[Set[str], Set[str]]:
    """The attributes of `of` that `node` reads and those it assigns (`x.a = ...`, `x.a.append(...)`)."""
    reads: Set[str] = set()
    writes: Set[str] = set()

    class _Visit(cst.CSTVisitor):
        def visit_AssignTarget(self, target: cst.AssignTarget) -> None:
            for value in ([e.value for e in target.target.elements]
                          if isinstance(target.target, (cst.Tuple, cst.List)) else [target.target]):
                if isinstance(value, cst.Attribute) and isinstance(value.value, cst.Name) and value.value.value == of:
                    writes.add(value.attr.value)

        def visit_AugAssign(self, node: cst.AugAssign) -> None:  # self.a += 1
            if isinstance(node.target, cst.Attribute) and isinstance(node.target.value, cst.Name) \
                    and node.target.value.value == of:
                writes.add(node.target.attr.value)

        def visit_Call(self, call: cst.Call) -> None:  # self.a.append(x): a change of `a`
            func = call.func
            if isinstance(func, cst.Attribute) and isinstance(func.value, cst.Attribute):
                inner = func.value
                if isinstance(inner.value, cst.Name) and inner.value.value == of:
                    writes.add(inner.attr.value)

        def visit_Attribute(self, attr: cst.Attribute) -> None:
            if isinstance(attr.value, cst.Name) and attr.value.value == of:
                reads.add(attr.attr.value)

    node.visit(_Visit())
    return reads, writes


def is_docstring(statement) -> bool:
    return (isinstance(statement, cst.SimpleStatementLine) and len(statement.body) == 1
            and isinstance(statement.body[0], cst.Expr) and isinstance(statement.body[0].value, cst.SimpleString))


class ClassScript:
    """A script whose graph is built by classes, analysed (`analyse`); native.class_writer writes it."""

    def __init__(self, module: cst.Module, source: str, line_of):
        self.module = module
        self.source = source
        self.line_of = line_of
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
        self._current: Optional[GraphClass] = None  # the class whose method is read
        self._changing: Optional[Set[str]] = None  # module-level names set more than once
        self.to_numpy = False  # whether a run returns a structure (the `to_numpy` helper is written)
        self.feed_names: Dict[str, List[cst.Dict]] = {}  # a feed built ahead -> the dict literals it holds
        self.key_params: Dict[int, str] = {}  # id(a key of such a dict) -> the parameter it feeds
        self.targets: Dict[int, cst.BaseExpression] = {}  # id(assignment of a run) -> its target, `_`s dropped
        self.removed: Set[int] = set()      # id of module-level statements that go
        self.unwrapped: Set[int] = set()    # id of `with tf.Session() as sess:` whose body stays

    @property
    def tf(self) -> str:
        return sorted(self.aliases)[0]

    def api(self, node) -> Optional[str]:
        return self.names.api(node)

    def tf_call(self, node) -> Optional[str]:
        return self.api(node.func) if isinstance(node, cst.Call) else None

    def _mentions_tf(self, node) -> bool:
        return bool(names_read(node) & self.aliases)

    def _tensor_apis(self, node) -> List[Tuple[str, cst.CSTNode]]:
        """TF APIs `node` calls that make tensors or graph state (objects such as dtypes,
        initializers and optimizer classes excluded), with the node naming each."""
        found: List[Tuple[str, cst.CSTNode]] = []
        script = self

        class _Uses(cst.CSTVisitor):
            def visit_Attribute(self, attr: cst.Attribute) -> Optional[bool]:
                path = script.api(attr)
                if path is None:
                    return None
                if not (path.startswith(OBJECT_PREFIXES) or path.endswith(OBJECT_SUFFIXES)
                        or path.startswith("nn.") and not path.startswith("nn.rnn_cell")):
                    found.append((path, attr))
                return False

        node.visit(_Uses())
        return found

    # -- analysis -----------------------------------------------------------------------------
    def applies(self) -> bool:
        """Whether the module builds its graph in a class (else this route has nothing to say)."""
        top = [n for n in self.module.body if not isinstance(n, cst.ClassDef)]
        return bool(self.aliases) and any(isinstance(n, cst.ClassDef) and self._tensor_apis(n)
                                          for n in self.module.body) and any(
            self.tf_call(call) in SESSIONS for n in top for call in calls_in(n))

    def analyse(self) -> "ClassScript":
        for node in self.module.body:
            if isinstance(node, cst.ClassDef) and self._tensor_apis(node):
                self.classes[node.name.value] = self._graph_class(node)
        self._module_placeholders()
        self._no_other_graphs()
        self._session_names()
        self._feeds_built_ahead()
        for node in self.module.body:
            self._top(node)
        for cls in self.classes.values():  # the runs of methods given a Session, as the module's code
            for method in cls.node.body.body:
                if isinstance(method, cst.FunctionDef) and method.name.value in cls.session_methods:
                    self._current = cls
                    for statement in method.body.body:
                        self._top(statement)
        self._current = None
        if not self.sites:
            raise Blocked(1, "a class that builds a graph no `sess.run` at module level evaluates")
        return self

    def _no_other_graphs(self) -> None:
        """A class's graph may not read another object's tensors through what `__init__` was given
        (`Discriminator(generator)` reading `generator.output`): each object builds its own graph
        at each call, so the other's tensors would be those of another call."""
        tensors = set().union(*(c.graph_attrs | set(c.trains) for c in self.classes.values()))
        for cls in self.classes.values():
            for statement in cls.graph:
                for node in _subtree(statement):
                    if isinstance(node, cst.Attribute) and isinstance(node.value, cst.Name) \
                            and node.value.value in cls.captured and node.attr.value in tensors:
                        raise Blocked(self.line_of(node), f"`{code(node)}`, a tensor of another object's graph, read "
                                                          f"by `{cls.node.name.value}.__init__`")

    def _session_names(self) -> None:
        """The names Sessions are bound to anywhere, and the functions given one (`train(model, sess)`):
        the parameter and the argument go with the Session."""
        for node in _subtree(self.module):
            if isinstance(node, cst.Assign) and len(node.targets) == 1 and isinstance(node.targets[0].target, cst.Name) \
                    and self.tf_call(node.value) in SESSIONS:
                self.sessions.add(node.targets[0].target.value)
            elif isinstance(node, cst.WithItem) and self.tf_call(node.item) in SESSIONS and node.asname is not None \
                    and isinstance(node.asname.name, cst.Name):
                self.sessions.add(node.asname.name.value)
        for node in self.module.body:
            if isinstance(node, cst.FunctionDef):
                params = node.params.params
                for index, param in enumerate(params):
                    if param.name.value in self.sessions and param.default is None:
                        self.session_params[node.name.value] = (index, param.name.value)
                        self.session_defs[id(node)] = index
        for cls in self.classes.values():
            for node in cls.node.body.body:
                if isinstance(node, cst.FunctionDef) and node.name.value in cls.session_methods:
                    index, param = cls.session_methods[node.name.value]
                    if self.session_params.get(node.name.value, (index, param)) != (index, param):
                        raise Blocked(self.line_of(node), f"`{node.name.value}`, a function and a method given a "
                                                          "Session in other places")
                    self.sessions.add(param)
                    self.session_methods[node.name.value] = (index, param)
                    self.session_defs[id(node)] = index + 1  # (after `self`)

    def _feeds_built_ahead(self) -> None:
        """`feed = {model.x: a, model.y: b}` used only as the feed of runs: its keys become the
        parameters' names (`{"x": a, "y": b}`) and the runs call `model.train_step(**feed)`, so the
        values are taken where the program took them."""
        placeholders: Dict[str, Set[str]] = {}
        for cls in self.classes.values():
            for p in cls.placeholders:
                placeholders.setdefault(p.attr, set()).add(p.param)
        feeds_given = set()
        for call in calls_in(self.module):
            if self._session_method(call, "run"):
                try:
                    feed = bind(call, ("fetches", "feed_dict", "options", "run_metadata")).get("feed_dict")
                except ValueError:
                    continue
                if isinstance(feed, cst.Name):
                    feeds_given.add(id(feed))
        candidates: Dict[str, List[cst.Assign]] = {}
        for assign in assignments_in(self.module):
            target = assign.targets[0].target if len(assign.targets) == 1 else None
            if isinstance(target, cst.Name) and isinstance(assign.value, cst.Dict) and assign.value.elements:
                candidates.setdefault(target.value, []).append(assign)
        for name, assigns in candidates.items():
            params: Dict[int, str] = {}
            for element in (e for a in assigns for e in a.value.elements):
                key = element.key if isinstance(element, cst.DictElement) else None
                if isinstance(key, cst.Name) and key.value in self.module_placeholders:
                    params[id(key)] = key.value
                elif isinstance(key, cst.Attribute) and _plain(key.value) and len(placeholders.get(key.attr.value, ())) == 1:
                    params[id(key)] = next(iter(placeholders[key.attr.value]))
                elif isinstance(key, cst.Attribute) and _plain(key.value) and not placeholders.get(key.attr.value) and len(
                        owners := [c for c in self.classes.values() if key.attr.value in c.graph_attrs]) == 1:
                    params[id(key)] = self._fed_tensor(owners[0], key.attr.value, self.line_of(key))
                else:
                    break
            else:
                targets = {id(a.targets[0].target) for a in assigns}
                uses = [n for n in _subtree(self.module) if isinstance(n, cst.Name) and n.value == name
                        and id(n) not in targets]
                if all(id(n) in feeds_given for n in uses):
                    self.feed_names[name] = [a.value for a in assigns]
                    self.key_params.update(params)

    def _session_argument(self, call: cst.Call) -> Optional[cst.Arg]:
        """The argument of `call` that gives a function or a method its Session (None: none does)."""
        if isinstance(call.func, cst.Name) and call.func.value in self.session_params:
            index, name = self.session_params[call.func.value]
        elif isinstance(call.func, cst.Attribute) and call.func.attr.value in self.session_methods:
            index, name = self.session_methods[call.func.attr.value]
        else:
            return None
        for position, arg in enumerate(call.args):
            if arg.keyword is not None and arg.keyword.value == name or arg.keyword is None and position == index \
                    and not arg.star:
                return arg if isinstance(arg.value, cst.Name) and arg.value.value in self.sessions else None
        return None

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
        cls = GraphClass(node, init, members=set(methods).union(*(_attrs(s)[1] for s in body)))
        params = init.params
        if not params.params or params.params[0].name.value != "self":
            raise Blocked(at, f"`{name}.__init__` without `self`")
        # Which methods build the graph: those `__init__`'s graph calls on `self`, transitively.
        graph_methods: Set[str] = set()
        for method in methods.values():
            if method is not init and self._tensor_apis(method):
                graph_methods.add(method.name.value)
        changed = True
        while changed:
            changed = False
            for method in methods.values():
                if method is init or method.name.value in graph_methods:
                    continue
                reads, _ = _attrs(method)
                if reads & graph_methods:
                    graph_methods.add(method.name.value)
                    changed = True
        cls.graph_methods = graph_methods
        for attr in set().union(*(_attrs(s)[1] for s in body)) | set(methods):
            if attr in MODULE_MEMBERS:
                raise Blocked(at, f"`self.{attr}` in the class `{name}`: a member of `tf.Module`, which the class "
                                  "would become")
        self._init_statements(cls)
        reached = set().union(*(_attrs(st)[0] for st in cls.graph)) & graph_methods if cls.graph else set()
        todo = list(reached)
        while todo:
            for called in _attrs(methods[todo.pop()])[0] & graph_methods - reached:
                reached.add(called)
                todo.append(called)
        for method_name in sorted(graph_methods - reached):
            raise Blocked(self.line_of(methods[method_name]), f"the method `{name}.{method_name}` builds graph code that "
                                                               "`__init__` does not run (TF1 built it when the program "
                                                               "called it)")
        for method_name in graph_methods:
            method = methods[method_name]
            self._refused_in(method, f"the method `{name}.{method_name}`")
            reads, _ = _attrs(method)
            if reads & {t for t in cls.trains}:
                raise Blocked(self.line_of(method), f"`{name}.{method_name}` reads a train op")
        for method in methods.values():  # a method run by the program: Python, or runs in a Session it is given
            if method is init or method.name.value in graph_methods:
                continue
            session = _session_parameter(method)
            if session is not None:  # `def predict(self, sess, x): return sess.run(self.out, {self.x: x})`
                cls.session_methods[method.name.value] = session
                continue
            reads, _ = _attrs(method)
            if self._tensor_apis(method) or reads & (cls.graph_attrs | set(cls.trains) | graph_methods):
                raise Blocked(self.line_of(method), f"the method `{name}.{method.name.value}` uses the graph outside "
                                                    "`__init__` (a Session, tensors read by Python)")
        self._built_once(cls, methods)
        cls.build = cls.fresh("build_graph")
        for local in cls.captured:
            cls.captured[local] = cls.fresh(local)
        return cls

    def _variables_made_once(self, cls: GraphClass, statement) -> bool:
        """The `tf.Variable(...)` calls of a statement of `__init__` outside loops, each made once by
        TF1: in tracked code each becomes `get_variable` under a name unique in the class (a
        `tf.Variable` there would be made again at every call). False when there are none."""
        calls = [c for c in calls_in(statement) if self.tf_call(c) == "Variable"]
        if not calls:
            return False
        if any(isinstance(n, (cst.For, cst.While, cst.CompFor, cst.Lambda, cst.FunctionDef))
               for n in _subtree(statement)):
            raise Blocked(self.line_of(calls[0]), f"`tf.Variable` in a loop of `{cls.node.name.value}.__init__` "
                                                  "(one call made several variables)")
        scopes = self._scopes_of(calls, statement)
        for call in calls:
            named = next((a.value for a in call.args if a.keyword is not None and a.keyword.value == "name"), None)
            base = scopes[id(call)] + (named.evaluated_value if isinstance(named, cst.SimpleString) else "Variable")
            count = cls.variable_counts.get(base, 0)
            cls.variable_counts[base] = count + 1
            new = variable_as_get_variable(self.tf, call, base if count == 0 else f"{base}_{count}")
            if new is None:
                raise Blocked(self.line_of(call), "a `tf.Variable` with arguments `get_variable` does not take")
            cls.variables[id(call)] = new
        return True

    def _scopes_of(self, calls: List[cst.Call], statement) -> Dict[int, str]:
        """The name-scope prefix (`embedding/`) TF1 gave each call's variable: the literal names of the
        `name_scope` / `variable_scope` blocks around it in the statement."""
        wanted = {id(c) for c in calls}
        found: Dict[int, str] = {}
        script = self

        class _Scopes(cst.CSTVisitor):
            def __init__(self):
                self.stack: List[str] = []

            def visit_With(self, node: cst.With) -> Optional[bool]:
                names = []
                for item in node.items:
                    path = script.tf_call(item.item)
                    if path in ("name_scope", "variable_scope"):
                        first = item.item.args[0].value if item.item.args else None
                        if not isinstance(first, cst.SimpleString):
                            raise Blocked(script.line_of(node), "a `tf.Variable` under a scope whose name is not a literal")
                        names.append(first.evaluated_value + "/")
                self.stack.append("".join(names))
                return True

            def leave_With(self, node: cst.With) -> None:
                self.stack.pop()

            def visit_Call(self, call: cst.Call) -> None:
                if id(call) in wanted:
                    found[id(call)] = "".join(self.stack)

        statement.visit(_Scopes())
        return found

    def _built_once(self, cls: GraphClass, methods: Dict[str, cst.FunctionDef]) -> None:
        """TF1 ran the graph code once, in `__init__`; this route runs it at each call. So the Python
        attributes it reads may not change after `__init__` (a `self.training` flag set by `train()`
        was read once by TF1), and what it changes may not be Python state that outlives a call
        (`self.layers = []` in `__init__`, appended to by the graph code, would grow at each call)."""
        name = cls.node.name.value
        graph_nodes = cls.graph + [methods[m] for m in cls.graph_methods]
        read = set().union(*(_attrs(n)[0] for n in graph_nodes)) if graph_nodes else set()
        written = set().union(*(_attrs(n)[1] for n in graph_nodes)) if graph_nodes else set()
        python = read - cls.graph_attrs - cls.graph_methods - set(cls.trains) - cls.state
        kept = set().union(*(_attrs(s)[1] for s in cls.python)) if cls.python else set()
        outlives = written & kept
        if outlives:
            raise Blocked(self.line_of(cls.init), f"`self.{sorted(outlives)[0]}` of `{name}`: set by Python in "
                                                  "`__init__` and changed by the graph code, which runs at each call")
        for method in methods.values():
            if method is cls.init or method.name.value in cls.graph_methods:
                continue
            changed = _attrs(method)[1] & python
            if changed:
                raise Blocked(self.line_of(method), f"`self.{sorted(changed)[0]}`, which the graph of `{name}` reads, "
                                                    f"changed by `{name}.{method.name.value}` (TF1 read it once, in "
                                                    "`__init__`)")
        cls.python_read = python
        changing = self._changing_globals()
        init_locals = local_names(cls.init)
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
                assigned = _assigned_names(node)
                if not isinstance(node, cst.SimpleStatementLine):
                    self._changing |= assigned
                self._changing |= assigned & seen
                seen |= assigned
        return self._changing

    def _refused_in(self, node, where: str, allowed: Tuple[str, ...] = ()) -> None:
        for path, attr in self._tensor_apis(node):
            if path in allowed:
                continue
            for prefix, what in REFUSED.items():
                if path == prefix or path.startswith(prefix) and prefix.endswith("."):
                    raise Blocked(self.line_of(attr), f"{what}, in {where}")
        for call in calls_in(node):
            if isinstance(call.func, cst.Name) and call.func.value == "print":
                raise Blocked(self.line_of(call), f"`print` in {where} (TF1 printed tensors once, as it built them)")
            if isinstance(call.func, cst.Attribute) and call.func.attr.value == "minimize":
                raise Blocked(self.line_of(call), f"`minimize` in {where} other than `self.<op> = "
                                                  "<optimizer>.minimize(self.<loss>)` in `__init__`")
            path = self.tf_call(call)
            if path is not None and any(a.keyword is not None and a.keyword.value == "seed" and code(a.value) != "None"
                                        for a in call.args):
                raise Blocked(self.line_of(call), f"`tf.{path}(seed=...)` in {where}, a random op with its own seed "
                                                  "(TF1 drew its numbers from the graph's seed and its own; eager TF2 "
                                                  "draws others)")

    def _init_statements(self, cls: GraphClass) -> None:
        """Each statement of `__init__` goes to one of three places: a placeholder becomes a parameter,
        a `minimize` a train op, Python stays in `__init__`, the rest is graph code."""
        name = cls.node.name.value
        statements = cls.order = self._placeholders_unscoped(list(cls.init.body.body))
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
        for statement in statements:
            at = self.line_of(statement)
            small = statement.body[0] if isinstance(statement, cst.SimpleStatementLine) and len(statement.body) == 1 \
                else None
            value = small.value if isinstance(small, cst.Assign) and len(small.targets) == 1 else None
            target = _self_attr(small.targets[0].target) if value is not None else None
            path = self.tf_call(value) if value is not None else None
            reads, writes = _attrs(statement)
            local_reads = names_read(statement)
            if path == "Variable" and target is not None and self._state_variable(value) \
                    and not reads & cls.graph_attrs and not local_reads & graph_locals:
                cls.python.append(statement)  # a counter (the global step): state made once, in `__init__`
                cls.state.add(target)
                continue
            if path in ("placeholder", "placeholder_with_default") and target is not None:
                cls.placeholders.append(self._placeholder(value, path, target, at))
                cls.graph_attrs.add(target)
                continue
            if target is not None and isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute) \
                    and value.func.attr.value == "minimize":
                cls.trains[target] = self._train(cls, statement, value, target, at, graph_locals)
                continue
            is_graph = bool(self._tensor_apis(statement) or reads & (cls.graph_attrs | cls.graph_methods)
                            or local_reads & graph_locals)
            if is_graph:
                made_once = self._variables_made_once(cls, statement)
                self._refused_in(statement, f"`{name}.__init__`", ("Variable",) if made_once else ())
                if cls.trains and self._makes_variables(cls, statement):
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
                graph_locals |= _assigned_names(statement)
                graph_read_so_far |= reads
            else:
                late = writes & graph_read_so_far | _assigned_names(statement) & set(cls.captured)
                if late:
                    raise Blocked(at, f"`{sorted(late)[0]}` set in `{name}.__init__` after the graph read it")
                cls.python.append(statement)
                python_locals |= _assigned_names(statement)
                locals_changed |= _assigned_names(statement) & set(cls.captured)
        if not cls.graph and not cls.placeholders:
            raise Blocked(self.line_of(cls.init), f"`{name}.__init__` builds no graph itself")
        for method in cls.graph_methods:  # what the graph methods assign is graph too
            node = next(s for s in cls.node.body.body if isinstance(s, cst.FunctionDef) and s.name.value == method)
            cls.graph_attrs |= _attrs(node)[1]
        taken = set().union(*(names_read(s) for s in cls.graph)) if cls.graph else set()
        for placeholder in cls.placeholders:
            param = placeholder.attr
            while param in taken or param == "self":
                param += "_"
            placeholder.param = param
            taken.add(param)

    def _placeholders_unscoped(self, statements: List[cst.BaseStatement]) -> List[cst.BaseStatement]:
        """`with tf.name_scope("inputs"):` around placeholders or `minimize` only: those statements
        (a scope names their ops, which eager code does not have)."""
        out: List[cst.BaseStatement] = []
        for statement in statements:
            if isinstance(statement, cst.With) and all(
                    self.tf_call(item.item) in ("name_scope", "variable_scope") and item.asname is None
                    for item in statement.items) and statement.body.body and all(
                    isinstance(inner, cst.SimpleStatementLine) and len(inner.body) == 1
                    and isinstance(inner.body[0], cst.Assign) and _self_attr(inner.body[0].targets[0].target)
                    and (self.tf_call(inner.body[0].value) in ("placeholder", "placeholder_with_default")
                         or isinstance(inner.body[0].value, cst.Call)
                         and isinstance(inner.body[0].value.func, cst.Attribute)
                         and inner.body[0].value.func.attr.value == "minimize")
                    for inner in statement.body.body):
                out.extend(statement.body.body)
            else:
                out.append(statement)
        return out

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
        if "input" not in bound or self._mentions_tf(bound["input"]) or _attrs(bound["input"])[0]:
            raise Blocked(at, "a `placeholder_with_default` whose default is a tensor")
        return Placeholder(attr, attr, None, code(bound["input"]))

    def _train(self, cls: GraphClass, statement, call: cst.Call, target: str, at: int, graph_locals) -> Train:
        try:
            bound = bind(call, _MINIMIZE)
        except ValueError:
            raise Blocked(at, "`minimize(*args)`")
        other = sorted(set(bound) - {"loss", "name", "global_step"})
        if other:
            raise Blocked(at, f"`minimize({other[0]}=...)` in a class (this route trains the class's own variables)")
        step = _self_attr(bound.get("global_step")) if "global_step" in bound else None
        if "global_step" in bound and step not in cls.state:
            raise Blocked(at, "a `global_step` other than a `self.<step> = tf.Variable(0, trainable=False)` of the class")
        loss = _self_attr(bound.get("loss"))
        if loss is None or loss not in cls.graph_attrs:
            raise Blocked(at, "`minimize` of something other than a `self.<loss>` the graph made")
        receiver = call.func.value
        reads, _ = _attrs(receiver)
        if reads & cls.graph_attrs or names_read(receiver) & graph_locals:
            raise Blocked(at, "an optimizer made from tensors")
        for path, _node in self._tensor_apis(receiver):
            raise Blocked(at, f"`tf.{path}` in the optimizer of `minimize`")
        return Train(target, code(receiver), loss, statement, step)

    def _state_variable(self, call: cst.Call) -> bool:
        """`tf.Variable(<value>, ..., trainable=False)`: a counter the graph does not train."""
        return any(a.keyword is not None and a.keyword.value == "trainable" and code(a.value) == "False"
                   for a in call.args) and not any(a.star for a in call.args)

    def _makes_variables(self, cls: GraphClass, statement) -> bool:
        """Whether `statement` makes variables: by a TF1 model call, or through a graph method."""
        return any(path.startswith(MAKES_VARIABLES) or path in RNN_RUNNERS for path, _ in self._tensor_apis(statement)) \
            or bool(_attrs(statement)[0] & cls.graph_methods)

    def _module_placeholders(self) -> None:
        """`x = tf.placeholder(...)` at module level, read by a class's graph (a parameter of it)."""
        for node in self.module.body:
            if not (isinstance(node, cst.SimpleStatementLine) and len(node.body) == 1
                    and isinstance(node.body[0], cst.Assign) and len(node.body[0].targets) == 1
                    and isinstance(node.body[0].targets[0].target, cst.Name)):
                continue
            value = node.body[0].value
            path = self.tf_call(value)
            if path in ("placeholder", "placeholder_with_default"):
                name = node.body[0].targets[0].target.value
                placeholder = self._placeholder(value, path, name, self.line_of(node))
                placeholder.own = False
                self.module_placeholders[name] = placeholder
                self.removed.add(id(node))
        for cls in self.classes.values():
            read = set().union(*(names_read(s) for s in cls.graph)) if cls.graph else set()
            for method in cls.graph_methods:
                node = next(s for s in cls.node.body.body if isinstance(s, cst.FunctionDef) and s.name.value == method)
                if names_read(node) & set(self.module_placeholders):
                    raise Blocked(self.line_of(node), f"the method `{cls.node.name.value}.{method}` reads a "
                                                      "module-level placeholder")
            for name, placeholder in self.module_placeholders.items():
                if name in read:
                    cls.placeholders.append(placeholder)

    # -- the module's statements ----------------------------------------------------------------
    def _top(self, node: cst.CSTNode) -> None:
        if isinstance(node, cst.ClassDef) and node.name.value in self.classes or id(node) in self.removed:
            return
        if isinstance(node, cst.FunctionDef) and not node.decorators:  # `main()`: its statements, as the module's
            for inner in node.body.body:
                self._top(inner)
            return
        if isinstance(node, (cst.FunctionDef, cst.ClassDef)):
            if self._mentions_tf(node):
                raise Blocked(self.line_of(node), f"`{node.name.value}`, a function or class that uses TensorFlow "
                                                  "beside the classes that build the graph")
            return
        if isinstance(node, cst.With) and len(node.items) == 1 and self.tf_call(node.items[0].item) in SESSIONS:
            item = node.items[0]
            if item.asname is None or not isinstance(item.asname.name, cst.Name):
                raise Blocked(self.line_of(node), "a Session entered without a name")
            self.sessions.add(item.asname.name.value)
            self.unwrapped.add(id(node))
            for inner in node.body.body:
                self._top(inner)
            return
        if isinstance(node, cst.SimpleStatementLine) and len(node.body) == 1:
            small = node.body[0]
            if isinstance(small, cst.Assign) and len(small.targets) == 1 \
                    and isinstance(small.targets[0].target, cst.Name):
                path = self.tf_call(small.value)
                if path in SESSIONS:
                    self.sessions.add(small.targets[0].target.value)
                    self.removed.add(id(node))
                    return
                if path in INITIALIZERS:
                    self.initializers.add(small.targets[0].target.value)
                    self.removed.add(id(node))
                    return
            if isinstance(small, cst.Expr) and isinstance(small.value, cst.Call):
                call = small.value
                if self._session_method(call, "close"):
                    self.removed.add(id(node))
                    return
                if self._session_method(call, "run") and call.args and (
                        self.tf_call(call.args[0].value) in INITIALIZERS
                        or isinstance(call.args[0].value, cst.Name) and call.args[0].value.value in self.initializers):
                    self.removed.add(id(node))
                    return
                if self.tf_call(call) in EAGER_STATEMENTS:
                    return
        self._python(node)

    def _session_method(self, call: cst.Call, method: str) -> bool:
        func = call.func
        return (isinstance(func, cst.Attribute) and func.attr.value == method and isinstance(func.value, cst.Name)
                and func.value.value in self.sessions)

    def _python(self, node: cst.CSTNode) -> None:
        """A module-level statement of the program: its `sess.run` calls become run methods, and it may
        use TensorFlow only for objects (dtypes, optimizer classes, initializers)."""
        runs = [c for c in calls_in(node) if self._session_method(c, "run")]
        inside = {id(n) for c in runs for n in _subtree(c)} | {
            id(n) for key in _subtree(node) if id(key) in self.key_params for n in _subtree(key)}
        for path, attr in self._tensor_apis(node):
            if id(attr) not in inside:
                raise Blocked(self.line_of(attr), f"`tf.{path}` at module level beside the classes that build the graph")
        for call in calls_in(node):
            given = self._session_argument(call)
            if given is not None:
                self.session_args.add(id(given))
                inside.add(id(given.value))
        sessions_used = [n for n in _subtree(node) if isinstance(n, cst.Name) and n.value in self.sessions
                         and id(n) not in inside]
        if sessions_used:
            raise Blocked(self.line_of(node), f"the Session `{sessions_used[0].value}` used other than by `run`")
        graph_attrs = set().union(*(c.graph_attrs | set(c.trains) | c.graph_methods for c in self.classes.values()))
        for attr in _subtree(node):
            if isinstance(attr, cst.Attribute) and id(attr) not in inside and attr.attr.value in graph_attrs \
                    and _root(attr) not in self.aliases:
                raise Blocked(self.line_of(node), f"`{code(attr)}`, a tensor of the graph read by Python")
        fixed = set().union(*(c.python_read for c in self.classes.values()))
        for target in _subtree(node):  # `net.training = True`: TF1 had read it once, in `__init__`
            if isinstance(target, (cst.AssignTarget, cst.AugAssign)) and isinstance(target.target, cst.Attribute) \
                    and target.target.attr.value in fixed and not (isinstance(target.target.value, cst.Name)
                                                                  and target.target.value.value == "self"):
                raise Blocked(self.line_of(node), f"`{code(target.target)}` set after the object was made: the graph "
                                                  "reads it at each call on this route, TF1 read it once")
        placeholders = [n for n in _subtree(node) if isinstance(n, cst.Name) and n.value in self.module_placeholders
                        and id(n) not in inside]
        if placeholders:
            raise Blocked(self.line_of(node), f"the placeholder `{placeholders[0].value}` used other than as a feed")
        assigned = {id(a.value): a for a in assignments_in(node) if len(a.targets) == 1}
        for call in runs:
            self._site(call, assigned.get(id(call)))

    def _site(self, call: cst.Call, assign: Optional[cst.Assign] = None) -> None:
        at = self.line_of(call)
        try:
            bound = bind(call, ("fetches", "feed_dict", "options", "run_metadata"))
        except ValueError:
            raise Blocked(at, "`sess.run(*args)`")
        if set(bound) - {"fetches", "feed_dict"}:
            raise Blocked(at, "`sess.run` with options")
        instances: Set[str] = set()
        fetched: List[str] = []

        def leaves(node) -> None:
            if isinstance(node, (cst.List, cst.Tuple)):
                for element in node.elements:
                    leaves(element.value)
            elif isinstance(node, cst.Dict):
                for element in node.elements:
                    if not isinstance(element, cst.DictElement):
                        raise Blocked(at, "a fetched `**dict`")
                    leaves(element.value)
            elif isinstance(node, cst.Attribute) and _plain(node.value):
                instances.add(code(node.value))
                fetched.append(node.attr.value)
            else:
                raise Blocked(at, f"`sess.run` of `{code(node)}`, not a tensor of a class's graph")

        leaves(bound["fetches"])
        feeds: List[Tuple[str, cst.BaseExpression]] = []  # (placeholder attr or module name, value)
        feed = bound.get("feed_dict")
        spread = None  # `**feed`: a feed built ahead
        if isinstance(feed, cst.Name) and feed.value in self.feed_names:
            spread = feed.value
            dicts = self.feed_names[spread]
            keys = [[e.key for e in d.elements] for d in dicts]
            every = set.intersection(*({code(k) for k in ks} for ks in keys))  # (fed in each of them)
            feed = cst.Dict([cst.DictElement(k, cst.Name("None")) for k in keys[0] if code(k) in every])
        if feed is not None:
            if not isinstance(feed, cst.Dict):
                raise Blocked(at, "a `feed_dict` that is not a dict literal")
            for element in feed.elements:
                if not isinstance(element, cst.DictElement):
                    raise Blocked(at, "a `feed_dict` with `**`")
                key = element.key
                if isinstance(key, cst.Name) and key.value in self.module_placeholders:
                    feeds.append((key.value, element.value))
                elif isinstance(key, cst.Attribute) and _plain(key.value):
                    instances.add(code(key.value))
                    feeds.append((key.attr.value, element.value))
                else:
                    raise Blocked(at, f"a feed of `{code(key)}`, not a placeholder of a class")
        if len(instances) != 1:
            raise Blocked(at, "a `sess.run` over more than one object" if instances else
                              "a `sess.run` of no class's tensors")
        instance = next(iter(instances))
        candidates = [c for c in ([self._current] if instance == "self" and self._current else self.classes.values())
                      if set(fetched) <= c.graph_attrs | set(c.trains) | c.state
                      and {k for k, _ in feeds} <= {p.attr for p in c.placeholders} | c.graph_attrs]
        if len(candidates) != 1:
            raise Blocked(at, f"`sess.run` of `{instance}.{fetched[0]}`: " + (
                "no class's graph makes it" if not candidates else "more than one class makes it"))
        cls = candidates[0]
        for attr in {k for k, _ in feeds} - {p.attr for p in cls.placeholders}:
            self._fed_tensor(cls, attr, at)
        if set(fetched) <= cls.state:  # variables read as they are: `net.step.numpy()`
            self.sites[id(call)] = (cls, None, bound["fetches"], [])
            self.to_numpy |= isinstance(bound["fetches"], (cst.List, cst.Tuple, cst.Dict))
            return
        trains = [t for t in fetched if t in cls.trains]
        if len(trains) > 1:
            raise Blocked(at, "a `sess.run` of two train ops of one object")
        train = cls.trains[trains[0]] if trains else None
        fed = {k for k, _ in feeds}
        needed = set(fetched) | ({train.loss} if train else set())
        for placeholder in cls.placeholders:
            if placeholder.attr not in fed and placeholder.default is None:
                attrs, _statements, skippable = self._computed_from(cls, placeholder)
                if skippable and not needed & attrs:  # what it feeds is skipped: `if labels is not None:`
                    placeholder.optional = True
                    continue
                where = f"`{instance}.{placeholder.attr}`" if placeholder.own else f"`{placeholder.attr}`"
                why = "its fetches need it" if skippable else "the graph makes variables from it"
                raise Blocked(at, f"a `sess.run` that leaves {where} unfed where {why} (TF1 computed only what the "
                                  "fetches needed; the class's graph is built eagerly, skipping only what an unfed "
                                  "placeholder feeds)")
        fetched_node = bound["fetches"]
        if train is not None and assign is not None:  # `_, l = sess.run([train_op, loss])`: `l = ...`
            fetched_node = self._unpacked(assign, fetched_node, instance, set(cls.trains))
        fetches = _with_self(fetched_node, instance, set(cls.trains))
        key = f"{code(fetches)} {train.attr if train else ''}"  # (a train step may return what an evaluation does)
        if key not in cls.methods:
            cls.methods[key] = RunMethod(cls.fresh("train_step" if train else "evaluate"), fetches, train)
        args: List[Tuple[str, str]] = [("**", spread)] if spread else []
        values = {} if spread else dict(feeds)
        for placeholder in cls.placeholders:
            if placeholder.attr in values:
                args.append((placeholder.param, code(values[placeholder.attr])))
        self.sites[id(call)] = (cls, cls.methods[key], fetched_node, args)
        self.to_numpy |= isinstance(fetched_node, (cst.List, cst.Tuple, cst.Dict))

    def _fed_tensor(self, cls: GraphClass, attr: str, at: int) -> str:
        """A tensor of the graph that a run feeds (an RNN's initial state, fed the last final state):
        an optional parameter that, when given, replaces the tensor right where the graph made it."""
        known = next((p for p in cls.placeholders if p.attr == attr), None)
        if known is not None:
            return known.param
        if attr in cls.trains:
            raise Blocked(at, f"a feed of the train op `{attr}`")
        taken = {p.param for p in cls.placeholders} | set(cls.captured) | set().union(
            *(names_read(s) for s in cls.graph))
        param = attr
        while param in taken:
            param += "_"
        cls.placeholders.append(Placeholder(attr, param, None, "None", fed_tensor=cls.fresh(f"{attr}_fed")))
        return param

    def _unpacked(self, assign: cst.Assign, fetches, instance: str, trains: Set[str]):
        """The fetches without the train ops whose `None` the assignment drops into `_` (the
        assignment then names only the others: `l = net.train_step(...).numpy()`)."""
        target = assign.targets[0].target
        if not (isinstance(target, (cst.Tuple, cst.List)) and isinstance(fetches, (cst.Tuple, cst.List))
                and len(target.elements) == len(fetches.elements)
                and not any(isinstance(e, cst.StarredElement) for e in target.elements)):
            return fetches
        kept = [(t, f) for t, f in zip(target.elements, fetches.elements)
                if not (isinstance(t.value, cst.Name) and t.value.value == "_" and isinstance(f.value, cst.Attribute)
                        and code(f.value.value) == instance and f.value.attr.value in trains)]
        if len(kept) == len(target.elements) or not kept:
            return fetches
        if len(kept) == 1:
            self.targets[id(assign)] = kept[0][0].value
            return kept[0][1].value
        self.targets[id(assign)] = target.with_changes(elements=[
            t.with_changes(comma=cst.MaybeSentinel.DEFAULT) if i == len(kept) - 1 else t for i, (t, _f) in enumerate(kept)])
        return fetches.with_changes(elements=[
            f.with_changes(comma=cst.MaybeSentinel.DEFAULT) if i == len(kept) - 1 else f for i, (_t, f) in enumerate(kept)])

    def _computed_from(self, cls: GraphClass, placeholder: Placeholder) -> Tuple[Set[str], Set[int], bool]:
        """What the class's graph computes from `placeholder`: the attributes, the statements (ids),
        and whether those may be skipped when it is not fed (they make no variables, so the rest of
        the graph keeps its TF1 names)."""
        methods = {m.name.value: _attrs(m) for m in cls.node.body.body
                   if isinstance(m, cst.FunctionDef) and m.name.value in cls.graph_methods}
        attrs = {placeholder.attr} if placeholder.own else set()
        names = set() if placeholder.own else {placeholder.attr}
        statements: Set[int] = set()
        skippable = True
        for statement in cls.graph:
            reads, writes = _attrs(statement)
            for method in reads & set(methods):
                reads, writes = reads | methods[method][0], writes | methods[method][1]
            if reads & attrs or names_read(statement) & names:
                statements.add(id(statement))
                attrs |= writes
                names |= _assigned_names(statement)
                skippable = skippable and not self._makes_variables(cls, statement)
        return attrs, statements, skippable

def ordered(placeholders: List[Placeholder]) -> List[Placeholder]:
    """Parameters without a default first (Python's rule), each group in the order TF1 made them."""
    return [p for p in placeholders if p.default_code is None] + [p for p in placeholders if p.default_code is not None]


def _assigned_names(statement) -> Set[str]:
    from tfmigrate.native.syntax import names_assigned
    return names_assigned(statement)


def _plain(node) -> bool:
    """An object expression without side effects: `net`, `self.net`, `nets[0]`."""
    if isinstance(node, cst.Name):
        return True
    if isinstance(node, cst.Attribute):
        return _plain(node.value)
    if isinstance(node, cst.Subscript):
        return _plain(node.value) and all(
            isinstance(e.slice, cst.Index) and isinstance(e.slice.value, (cst.Integer, cst.SimpleString, cst.Name))
            for e in node.slice)
    return False


def _root(node) -> Optional[str]:
    while isinstance(node, (cst.Attribute, cst.Subscript, cst.Call)):
        node = node.func if isinstance(node, cst.Call) else node.value
    return node.value if isinstance(node, cst.Name) else None


def _subtree(node) -> List[cst.CSTNode]:
    found: List[cst.CSTNode] = []

    class _All(cst.CSTVisitor):
        def on_visit(self, each) -> bool:
            found.append(each)
            return True

    node.visit(_All())
    return found


def instance_of(fetches) -> cst.BaseExpression:
    for node in _subtree(fetches):
        if isinstance(node, cst.Attribute) and _plain(node.value):
            return node.value
    raise AssertionError("a run site without its object")


def _with_self(fetches, instance: str, trains: Set[str]) -> cst.BaseExpression:
    """The fetches as the run method returns them: `net.loss` -> `self.loss`, a train op -> None."""

    class _Self(cst.CSTTransformer):
        def leave_Attribute(self, original: cst.Attribute, updated: cst.Attribute):
            if code(original.value) == instance:
                if original.attr.value in trains:
                    return cst.Name("None")
                return updated.with_changes(value=cst.Name("self"))
            return updated

    return fetches.visit(_Self())
