"""TF1's op seeds written out: each random op of a graph-seeded script given the seed TF1 gave it.

Under `tf.set_random_seed(s)`, TF1 gave the n-th random op a graph built without a seed of its own
the pair (s, n) (TF 2.21's `random_seed.get_seed`: a counter per graph, from 0). Eagerly TF2
draws that second seed from a Python RNG instead, so the rewrite drew other numbers. The op given
`seed=n` has the pair (s, n) in both (measured: a `tf.layers.dense` kernel under seed 1 starts at
`[0.579, -0.780, 0.725, -0.612]` in TF1's graph, and eagerly with `glorot_uniform_initializer(seed=0)`).
So writing `seed=n` into the TF1 program changes nothing under TF1, and the eager rewrite of it
draws TF1's initial weights, and TF1's dropout masks while one `tf.function` evaluates them (an op in
a `tf.function` continues its sequence from call to call, as TF1's did from run to run).

Counted where the count is certain, in the order the module builds the graph: module-level
statements and the module's functions they call, each call with its own arguments; random ops,
`tf.nn.dropout`, `tf.layers.dropout` with a `training=` flag, and the kernels TF1's `tf.layers` and
`get_variable` drew by default or from an initializer. A variable under a reusing
`variable_scope` (`reuse=True`, or `AUTO_REUSE` on a scope entered before) draws nothing: the
discriminator of a GAN called twice draws its kernels once. One place in the code can take only one
seed, so a place that draws at two calls (a dropout in a function called twice) is not certain.
Anything else that may draw (a loop or a branch around a draw, a class, RNN cells, Keras, a dataset
shuffle, a seed of the program's own) leaves the module as it is (None): the rewrite then says its
numbers change (native.seeded_draws).
"""
from __future__ import annotations

import re
from typing import Dict, List, Optional, Set, Tuple

import libcst as cst
import libcst.matchers as m

from tfmigrate.facts.graph_words import DEFAULT_INITIALIZERS, GRAPH_SEEDS, RNN_RUNNERS
from tfmigrate.facts.names import ImportTable, dotted
import tfmigrate.native.imported_models as imported_models
from tfmigrate.fixers.arguments import joined, keyword
from tfmigrate.native.class_bases import merged
from tfmigrate.native.syntax import bind, bound_names, calls_in, code, found_in, name_nodes, names_in

# The sampled losses, each drawing its negative classes with a log-uniform candidate sampler made
# inside it, and how many of their arguments may be given by position (the seed is not among them).
SAMPLED_LOSSES = {"nn.nce_loss": 6, "nn.sampled_softmax_loss": 6}
RANDOM_OPS = ("random_normal", "random_uniform", "truncated_normal", "random.normal", "random.uniform",
              "random.truncated_normal", "random_shuffle", "random.shuffle", "multinomial", "random.categorical")
# The layers that draw a kernel, and how many arguments each takes before `kernel_initializer`.
KERNEL_LAYERS = {"layers.dense": 4, "layers.conv1d": 9, "layers.conv2d": 9, "layers.conv3d": 9,
                 "layers.conv2d_transpose": 8}
NO_DRAW_LAYERS = ("layers.flatten", "contrib.layers.flatten", "layers.max_pooling1d", "layers.max_pooling2d",
                  "layers.max_pooling3d", "layers.average_pooling1d", "layers.average_pooling2d",
                  "layers.average_pooling3d")
RANDOM_INITIALIZERS = ("truncated_normal_initializer", "random_normal_initializer", "random_uniform_initializer",
                       "glorot_uniform_initializer", "glorot_normal_initializer", "variance_scaling_initializer",
                       "initializers.truncated_normal", "initializers.random_normal", "initializers.random_uniform",
                       "initializers.glorot_uniform", "initializers.glorot_normal", "initializers.variance_scaling",
                       "contrib.layers.xavier_initializer", "contrib.layers.xavier_initializer_conv2d")
FILLED_INITIALIZERS = ("zeros_initializer", "ones_initializer", "constant_initializer", "initializers.zeros",
                       "initializers.ones", "initializers.constant")
# The RNN cells that draw one kernel (their biases are zeros), drawn where an RNN first runs them
# (measured under TF 2.21: `dynamic_rnn` or `static_rnn` of a BasicLSTMCell, LSTMCell or BasicRNNCell
# makes one `get_seed` call; a GRUCell or a MultiRNNCell of two cells two); the arguments that keep it so.
ONE_KERNEL_CELLS = ("BasicLSTMCell", "LSTMCell", "BasicRNNCell")
CELL_HOMES = ("nn.rnn_cell.", "contrib.rnn.", "rnn_cell.")
CELL_ARGUMENTS = ("num_units", "forget_bias", "state_is_tuple", "activation", "name", "dtype")
RNN_RUNS = RNN_RUNNERS + ("contrib.rnn.static_rnn",)
# An RNN over two cells, the forward one built (and its kernel drawn) first
TWO_CELL_RUNS = ("nn.bidirectional_dynamic_rnn",)
# TF calls that may draw, or change what a draw's seed is (TF 2.21 draws in random_ops, the candidate
# samplers, shuffling queues and datasets, fractional pools, `sample_distorted_bounding_box` and
# k-means; everything else that draws, initializers, layers, dropout, cells, input producers, calls
# those). Any such call other than those counted leaves the module as it is.
_MAY_DRAW = re.compile(
    r"^(random|layers\.|keras\.|contrib\.|estimator|distributions|nn\.rnn_cell|image\.(random|sample)|Graph\b"
    r"|train\.\w*(producer|shuffle)|truncated_normal|parameterized|nn\.fractional|compat\.)|reset_default_graph"
    r"|dropout|shuffle|one_shot|sample|nce_loss|multinomial|categorical|initializers?\.|(?<!variables_)(?<!tables_)initializer\b"
    r"|glorot|xavier|variance_scaling|get_variable|variable_scope|Cell\b|rnn\b|kmeans|KMeans|clustering|RandomShuffle")
# Methods of objects that may draw (a dataset's `shuffle`, a distribution's `sample`, a cell called).
_MAY_DRAW_METHOD = re.compile(r"shuffle|dropout|sample|random|initializer|get_variable|cell|rnn|one_shot",
                              re.IGNORECASE)
# Libraries that build no TensorFlow graph (numpy draws from its own generator).
_NO_GRAPH = {"numpy", "np", "math", "random", "os", "sys", "time", "datetime", "matplotlib", "plt", "pandas", "pd",
             "collections", "itertools", "functools", "json", "re", "argparse", "pickle", "csv", "gzip", "zipfile",
             "shutil", "urllib", "io", "string", "glob", "scipy", "PIL", "tqdm", "pathlib", "logging", "struct",
             "tempfile", "subprocess", "warnings", "copy", "textwrap", "six", "platform", "mpl_toolkits", "sklearn",
             "tensorboard"}  # (its Python API reads event files: no graph op)


def tf_path(names: ImportTable, node: cst.BaseExpression) -> Optional[str]:
    """The TF path `node` names, read alike with or without `compat.v1.`."""
    path = names.api(node)
    return path[len("compat.v1."):] if path is not None and path.startswith("compat.v1.") else path


def tf_alias(names: ImportTable, modules=("tensorflow",)) -> str:
    """The alias the module spells TensorFlow with (one of `modules`)."""
    return next((alias for alias, full in names.aliases.items() if full in modules), "tf")


# The random op a draw runs, and where (`_kind`, `_step_kind`): "eager:<distribution>" for one drawn
# once eagerly (an initializer, a variable's initial value: each (op, seeds) pair is one kernel, one
# sequence, for every eager execution), "graph:<distribution>" for one in the functions' model code
# (its own op, or the Generator of its seed), _STEP where not known.
_STEP = "step"
_INITIALIZER_KINDS = {
    "uniform": ("random_uniform_initializer", "glorot_uniform_initializer", "initializers.random_uniform",
                "initializers.glorot_uniform", "contrib.layers.xavier_initializer",
                "contrib.layers.xavier_initializer_conv2d"),
    "normal": ("random_normal_initializer", "initializers.random_normal"),
    "truncated": ("truncated_normal_initializer", "initializers.truncated_normal", "glorot_normal_initializer",
                  "initializers.glorot_normal"),
}


def _share_a_sequence(kind: str, other: str) -> bool:
    """Whether two draws of one seed would share a sequence eagerly where TF1's did not: the same
    op drawn eagerly twice, or two draws in functions (one Generator per seed)."""
    if _STEP in (kind, other):
        return True
    if kind.startswith("graph:") and other.startswith("graph:"):
        return True
    return kind == other


def _kind(path: Optional[str], call: cst.BaseExpression) -> str:
    """The random op the initializer `call` draws with; `_STEP` (shares no seed) where not known
    (a variance-scaling or Xavier initializer told another distribution)."""
    if isinstance(call, cst.Call) and any(a.keyword is not None and a.keyword.value in ("distribution", "uniform")
                                          for a in call.args):
        return _STEP
    return next((f"eager:{kind}" for kind, paths in _INITIALIZER_KINDS.items() if path in paths), _STEP)


# What the source must spell to set a graph seed (`GRAPH_SEEDS`): most modules stop here
_SEEDED = re.compile(r"\bset_(?:random_)?seed\s*\(")


class _Unsure(Exception):
    """Where the count of TF1's draws is not certain."""


def pinned(module: cst.Module, source: str, listed: Tuple[str, ...] = ()) -> Optional[cst.Module]:
    """`module` with TF1's op seeds written into its random draws, or None (no graph seed, no
    unseeded draw, or a count that is not certain). `listed`: what it may call of its project's
    modules (native.imported_models), whose drawing model function's first call is given the op
    seed of its first draw (`tf1_seed=N`)."""
    if not _SEEDED.search(source):
        return None
    try:
        counter, seeds = _counted(module, source, listed)
    except _Unsure:
        return None
    if not seeds and not counter.helper_draws and not counter.own and counter.imported_seed is None:
        return None
    return module.visit(_Pin(seeds, counter.names, counter))


def why_not_pinned(module: cst.Module, source: str, listed: Tuple[str, ...] = ()) -> Optional[str]:
    """What keeps the count of a graph-seeded module's op seeds from being certain (None: nothing)."""
    if not _SEEDED.search(source):
        return None
    try:
        _counted(module, source, listed)
    except _Unsure as why:
        return str(why)
    return None


def _counted(module: cst.Module, source: str, listed: Tuple[str, ...] = ()):
    """(the counter, the op seed of each draw) of the module; _Unsure where the count is not certain."""
    counted, _lines = merged(module, lambda node: 1)  # (a base class as the class route reads it)
    counter = _Counter(counted, ImportTable(module, source), imported_models.imported(counted, listed))
    return counter, counter.count()


def _pure_objects(module: cst.Module, imported: imported_models.Imported) -> Set[str]:
    """The names the module binds only to an object of its project's classes that build no graph
    and draw nothing (`source = factors.TwoFactorData(...)`: its `sample` draws with numpy)."""
    made: Set[str] = set()
    other: Set[str] = set()
    for assign in found_in(module, "visit_Assign"):
        for target in assign.targets:
            name = target.target.value if isinstance(target.target, cst.Name) else None
            spelled = dotted(assign.value.func) if isinstance(assign.value, cst.Call) else None
            if name is not None and len(assign.targets) == 1 and spelled in imported.pure \
                    and not imported.draws.get(spelled):
                made.add(name)
            else:
                other.update(n.value for n in name_nodes(target.target))
    bound = [f.target for f in found_in(module, "visit_For")] + [
        w.asname.name for w in found_in(module, "visit_WithItem") if w.asname is not None] + [
        a.target for a in found_in(module, "visit_AugAssign") + found_in(module, "visit_AnnAssign")]
    for target in bound:  # (bound otherwise too: a loop's, a `with`'s, a parameter of that name)
        other.update(n.value for n in name_nodes(target))
    other.update(p.name.value for f in found_in(module, "visit_FunctionDef") for p in f.params.params)
    return made - other


class _Counter:
    def __init__(self, module: cst.Module, names: ImportTable, imported: Optional[imported_models.Imported] = None):
        self.module, self.names = module, names
        self.imported = imported or imported_models.Imported()
        # the first call of the project's model function that draws its variables' initial values
        # (native.imported_models) -> the op seed of its first draw; TF1's counter after it is not known
        self.imported_seed: Optional[Tuple[int, int]] = None
        self.imported_drawer: Optional[str] = None
        self.functions = {s.name.value: s for s in module.body if isinstance(s, cst.FunctionDef)}
        self.classes = {s.name.value: s for s in module.body if isinstance(s, cst.ClassDef)}
        self.drawing_methods: Set[str] = set()  # the names of the methods of the module's classes that draw
        self.walking: List[int] = []  # the functions being walked, innermost last
        self.bodies: List[cst.FunctionDef] = []  # ... and the functions themselves
        self.drawn_at: Optional[cst.Call] = None  # the call a counted draw takes its seed at, when not its own
        self.sites: List[cst.Call] = []  # the calls that run them
        self.first: Dict[int, Tuple[Optional[cst.Call], Optional[int]]] = {}  # id(draw) -> (site, function)
        self.per_site: Dict[int, Dict[int, int]] = {}  # id(a helper's draw) -> {id(call of the helper): seed}
        self.helpers: Dict[int, List[str]] = {}  # id(def) -> the seed parameters written into it
        self.helper_draws: Dict[int, str] = {}  # id(draw) -> its seed parameter
        self.site_seeds: Dict[int, List[Tuple[str, int]]] = {}  # id(call of a helper) -> (parameter, seed)
        self.bindings: List[Dict[str, cst.BaseExpression]] = [{}]  # each walked call's arguments by name
        self.reusing: List[bool] = [False]  # whether the variable scope shares its variables
        self.scope: List[str] = []  # the names of the variable scopes entered
        self.scope_as: List[Optional[str]] = []  # each one's `as` name (`scope.reuse_variables()`)
        self.entered: Set[Tuple[str, ...]] = set()
        self.constants = _constants(module)
        self.own_graphs = _own_graphs(module, names)  # `self.graph = tf.Graph()`, entered by one `with`
        self.seeded = False  # the graph has a seed
        self.next = 0        # the graph's counter
        self.seeds: Dict[int, int] = {}  # id(call) -> the op seed TF1 gave its draw
        self.kinds: Dict[int, str] = {}  # ... and the random op it draws with, where known (_kind)
        self.widths: Dict[int, int] = {}  # ... and how many seeds it takes, where more than one
        self.own: Dict[int, Tuple[int, str]] = {}  # id(call) -> (its own seed, _kind) (`seed=3`)
        self.kind = _STEP  # the kind of the draw `_draws` last found
        self.in_variable = 0  # inside the arguments of a `tf.Variable(...)` or `get_variable(...)` call
        self.line: Optional[cst.SimpleStatementLine] = None  # the statement whose calls are read
        self.lines: Dict[int, cst.SimpleStatementLine] = {}  # id(an RNN's call) -> its statement
        self.run_cells: Set[int] = set()  # id of the cell constructions an RNN has run
        self.cells: Dict[int, List[cst.Call]] = {}  # id(an RNN's call) -> its LSTMCells, given their kernels' initializers
        self.visiting: Set[int] = set()
        bound = _bound_by_imports(module)
        self.safe_libraries = {name for name, root in bound.items() if root in _NO_GRAPH}
        self.other_libraries = {name for name, root in bound.items()  # (what they build: not known)
                                if name not in names.aliases and root not in _NO_GRAPH}
        self.pure_objects = _pure_objects(module, self.imported)

    def count(self) -> Dict[int, int]:
        """The op seed of each draw, by id of its call (a run RNN's: by id of its statement too); a
        helper's draws seeded per call in `helpers`, `helper_draws` and `site_seeds`."""
        seeds = self._count()
        self._helpers()
        cells = {id(cell): seed + i for call, seed in seeds.items() for i, cell in enumerate(self.cells.get(call, ()))}
        return {**seeds, **cells, **{id(self.lines[call]): seed for call, seed in seeds.items() if call in self.lines}}

    def _count(self) -> Dict[int, int]:
        for _ in range(3):  # (a method may draw through another class's method: until no new one)
            drawing = {m.name.value for c in self.classes.values() for m in _methods(c).values()
                       if self._draws_in(m, c.name.value)}
            if drawing == self.drawing_methods:
                break
            self.drawing_methods = drawing
        for statement in self.module.body:
            if isinstance(statement, cst.ClassDef):
                self._check_class(statement)
                self.classes[statement.name.value] = statement
                continue
            if isinstance(statement, cst.FunctionDef):
                self.functions[statement.name.value] = statement  # (what the name means from here on)
                continue
            self._statement(statement)
        self._own_seeds_apart()
        return self.seeds

    def _own_seeds_apart(self) -> None:
        """A draw with a seed of the program's own (`seed=3`) takes no op seed from TF1's counter:
        TF1 and eager TF2 both draw with (graph seed, 3). Certain only where no other draw shares
        its seed: eagerly one kernel serves every execution of the same random op with the same
        seeds (a second initializer of seed 3 continues the first one's sequence, where TF1's two
        ops drew the same numbers), and a draw at each step becomes the Generator of its seed
        (native.seed_generators). Initializers of different distributions are different ops."""
        kinds: Dict[int, List[str]] = {}
        for draw, seed in self.seeds.items():
            for n in range(seed, seed + self.widths.get(draw, 1)):
                kinds.setdefault(n, []).append(self.kinds.get(draw, _STEP))
        for seeds in self.per_site.values():
            for seed in seeds.values():
                kinds.setdefault(seed, []).append(_STEP)
        for seed, kind in self.own.values():
            kinds.setdefault(seed, []).append(kind)
        for seed, kind in self.own.values():
            others = list(kinds[seed])
            others.remove(kind)
            if any(_share_a_sequence(kind, other) for other in others):
                raise _Unsure(f"a seed of the program's own (`seed={seed}`) that another draw shares")

    def _step_kind(self, path: Optional[str]) -> str:
        """The kind of a random op's or dropout's draw: `eager:` as a variable's initial value (drawn
        once, eagerly), `graph:` in the code a `tf.function` runs (module-level graph code too)."""
        where = "eager" if self.in_variable else "graph"
        dist = "uniform" if path in ("random_uniform", "random.uniform", "nn.dropout", "layers.dropout") else \
            "normal" if path in ("random_normal", "random.normal") else \
            "truncated" if path in ("truncated_normal", "random.truncated_normal") else None
        return f"{where}:{dist}" if dist else _STEP

    def _statement(self, statement: cst.CSTNode) -> None:
        if isinstance(statement, cst.SimpleStatementLine) and _graph_assigned(statement, self.own_graphs, self.names):
            return  # (a graph made: it draws nothing until its `with` block)
        reused = self._reused(statement)
        if reused is not None:
            self.reusing[-1] = self.reusing[-1] or reused
            return
        if isinstance(statement, cst.SimpleStatementLine):
            outer, self.line = self.line, statement
            for small in statement.body:
                self._calls(small)
            self.line = outer
        elif isinstance(statement, cst.With) and self._new_graph(statement):
            kept = self.seeded, self.next, self.entered, self.scope, self.reusing, self.scope_as
            self.seeded, self.next, self.entered, self.scope, self.reusing, self.scope_as = \
                False, 0, set(), [], [False], []
            for inner in statement.body.body:  # (a graph of its own: no seed, its counter from 0)
                self._statement(inner)
            self.seeded, self.next, self.entered, self.scope, self.reusing, self.scope_as = kept
        elif isinstance(statement, cst.With):
            scopes = 0
            for item in statement.items:
                if isinstance(item.item, cst.Call) and tf_path(self.names, item.item.func) == "variable_scope":
                    for argument in item.item.args:
                        self._calls(argument.value)
                    self._enter(item.item)
                    self.scope_as.append(item.asname.name.value if m.matches(item.asname, m.AsName(name=m.Name()))
                                         else None)
                    scopes += 1
                else:
                    self._calls(item.item)
            for inner in statement.body.body:
                self._statement(inner)
            for _ in range(scopes):
                self.scope.pop()
                self.reusing.pop()
                self.scope_as.pop()
        elif isinstance(statement, cst.If) and _is_main_guard(statement) and statement.orelse is None:
            for inner in statement.body.body:  # (the entry point, run once)
                self._statement(inner)
        elif isinstance(statement, (cst.FunctionDef, cst.ClassDef)):
            if self._draws_in(statement):
                raise _Unsure("a local function or class that may draw")
        elif self._draws_in(statement):  # a loop, a branch, a `try`: how often it draws is not certain
            raise _Unsure("a compound statement that may draw")

    def _reused(self, statement: cst.CSTNode) -> Optional[bool]:
        """Whether `scope.reuse_variables()` (or `if reuse: scope.reuse_variables()`, `reuse` known
        where the function was called) makes the innermost scope entered `as scope` share its
        variables from here; None for any other statement."""
        test = None
        if isinstance(statement, cst.If) and statement.orelse is None and len(statement.body.body) == 1:
            test, statement = statement.test, statement.body.body[0]
        if not m.matches(statement, m.SimpleStatementLine(body=[m.Expr(value=m.Call(
                func=m.Attribute(value=m.Name(), attr=m.Name("reuse_variables")), args=[]))])):
            return None
        name = statement.body[0].value.func.value.value
        if name not in self.scope_as:
            return None
        if name != self.scope_as[-1]:
            raise _Unsure("`reuse_variables()` of a variable scope other than the innermost one")
        if test is None:
            return True
        value = self._value(test) if isinstance(test, cst.Name) else test
        if isinstance(value, cst.Name) and value.value in ("True", "False", "None"):
            return value.value == "True"
        raise _Unsure("a variable scope whose reuse is not known")

    def _new_graph(self, statement: cst.With) -> bool:
        """`with tf.Graph().as_default():`"""
        item = statement.items[0].item if len(statement.items) == 1 else None
        if not (isinstance(item, cst.Call) and not item.args and isinstance(item.func, cst.Attribute)
                and item.func.attr.value == "as_default"):
            return False
        graph = item.func.value
        return isinstance(graph, cst.Call) and not graph.args and tf_path(self.names, graph.func) == "Graph" \
            or code(graph) in self.own_graphs

    def _calls(self, node: cst.CSTNode) -> None:
        """The draws of `node`'s calls, in the order Python runs them (arguments first)."""
        counter = self

        class _Order(cst.CSTVisitor):
            def visit_Lambda(self, _node) -> bool:
                if counter._draws_in(_node):
                    raise _Unsure("a lambda that may draw")
                return False

            def visit_ListComp(self, _node) -> bool:
                if counter._draws_in(_node):
                    raise _Unsure("a comprehension that may draw")
                return False

            visit_GeneratorExp = visit_DictComp = visit_SetComp = visit_ListComp

            def visit_Call(self, call: cst.Call) -> None:
                if tf_path(counter.names, call.func) in ("Variable", "get_variable"):
                    counter.in_variable += 1

            def leave_Call(self, call: cst.Call) -> None:
                if tf_path(counter.names, call.func) in ("Variable", "get_variable"):
                    counter.in_variable -= 1
                counter._call(call)

        node.visit(_Order())

    def _check_class(self, cls: cst.ClassDef) -> None:
        """A class whose methods draw is counted through the calls of its methods; one whose draws
        may come another way (a base class, a decorator such as `@property`, its body) is not."""
        methods = _methods(cls)
        drawing = [m for m in methods.values() if self._draws_in(m, cls.name.value)]
        if not drawing:
            if self._draws_in(cls, cls.name.value):
                raise _Unsure("a class body that may draw")
            return
        if any(not (isinstance(b.value, cst.Name) and b.value.value == "object") for b in cls.bases) or cls.keywords:
            raise _Unsure("a class with a base class, whose methods draw")
        if any(m.decorators and not _static(m) for m in drawing):
            raise _Unsure("a decorated method that draws (a property draws where it is read)")
        others = [s for s in cls.body.body if not isinstance(s, cst.FunctionDef)]
        if any(self._draws_in(s, cls.name.value) for s in others) or len(methods) != len(
                [s for s in cls.body.body if isinstance(s, cst.FunctionDef)]):
            raise _Unsure("a class body that draws, or defines a method twice")

    def _callee(self, call: cst.Call, owner: Optional[str] = None) -> Optional[Tuple[cst.FunctionDef, Optional[str]]]:
        """The module's function or method `call` runs, and the class of the method (None if not one
        of the module's): `f(...)`, `Model(...)` (its `__init__`), `model.build(...)` and `model(...)`
        on an instance, `self.build(...)` inside a method of class `owner`."""
        func = call.func
        if self.names.api(func) is not None:
            return None
        if isinstance(func, cst.Name):
            if func.value in self.functions:
                return self.functions[func.value], None
            if func.value in self.classes:
                init = _methods(self.classes[func.value]).get("__init__")
                return (init, func.value) if init is not None else None
            instance, method = func, "__call__"
        elif isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name):
            instance, method = func.value, func.attr.value
        else:
            return None
        cls = owner if owner is not None and instance.value == "self" else self._class_of(self._value(instance))
        found = _methods(self.classes[cls]).get(method) if cls in self.classes else None
        return (found, cls) if found is not None else None

    def _class_of(self, value: cst.BaseExpression) -> Optional[str]:
        """The module's class whose instance `value` (a value `_value` gave) is."""
        if isinstance(value, cst.Call) and isinstance(value.func, cst.Name) and value.func.value in self.classes:
            return value.func.value
        return None

    def _call(self, call: cst.Call) -> None:
        if self._imported_call(call):
            return
        path = tf_path(self.names, call.func)
        entry = _entry_run(call) if path == "app.run" else None
        if entry in self.functions:
            call = cst.Call(func=cst.Name(entry))  # (`tf.app.run()` runs `main`, once)
            path = None
        callee = self._callee(call) if path is None else None
        if callee is not None:
            function, owner = callee
            if self._draws_in(function, owner):
                if id(function) in self.walking:
                    raise _Unsure("a recursive function that draws")
                self.walking.append(id(function))
                self.bodies.append(function)
                self.sites.append(call)
                self.bindings.append(self._bound(function, call, owner))
                for statement in function.body.body:
                    self._statement(statement)
                self.bindings.pop()
                self.sites.pop()
                self.walking.pop()
                self.bodies.pop()
            return
        if path in GRAPH_SEEDS:
            self.seeded = True
            return
        if path is not None and path.endswith("reset_default_graph"):
            self.seeded, self.next = False, 0  # a new graph: its counter from 0, once it has a seed
            return
        if path == "variable_scope":  # (not entered by `with`)
            if any(a.keyword is not None and a.keyword.value in ("initializer", "reuse") for a in call.args):
                raise _Unsure("a variable scope with an initializer or reuse, not entered by `with`")
            return
        if _one_shot_iterator(call, path):
            if self.imported_drawer is not None:
                raise _Unsure(f"an iterator made after `{self.imported_drawer}`'s draws")
            self.next += 1 if self.seeded else 0  # (TF1 took an op seed for it; eagerly `iter(dataset)` takes none)
            return
        draws = self._draws(call, path)
        call, self.drawn_at = self.drawn_at or call, None  # (a local initializer's call takes the seed)
        if draws is None:
            return
        if not self.seeded:
            raise _Unsure("a draw before the graph's seed")
        if self.imported_drawer is not None:
            raise _Unsure(f"a draw after `{self.imported_drawer}`'s (how many it made is counted when the program runs)")
        if id(call) in self.seeds or id(call) in self.per_site:
            self._drawn_again(call, draws)
            return
        self.seeds[id(call)] = self.next
        self.kinds[id(call)] = self.kind
        if draws > 1:
            self.widths[id(call)] = draws
        self.first[id(call)] = (self.sites[-1] if self.sites else None, self.walking[-1] if self.walking else None)
        self.next += draws

    def _imported_call(self, call: cst.Call) -> bool:
        """A call of a function of the project the script may call (native.imported_models): a
        model function's variables drawn from TF1's counter where it is first called (the store
        counts on from there when the program runs), nothing drawn by a later call that reuses
        them, nor by a function that draws nothing. True where counted here."""
        spelled = dotted(call.func)
        if spelled is None or not self.imported.allowed(spelled):
            return False
        drawn = self.imported.draws.get(spelled, "")
        if not drawn:
            return True
        if drawn != "init" or spelled not in self.imported.models:
            raise _Unsure(f"`{spelled}`, a function of the project that draws at each run")
        if not self.seeded:
            raise _Unsure("a draw before the graph's seed")
        if self.imported_drawer is None:
            self.imported_drawer, self.imported_seed = spelled, (id(call), self.next)
            return True
        if spelled == self.imported_drawer and imported_models.reuses(call, self.imported.shares, spelled):
            return True
        raise _Unsure(f"`{spelled}`, a model function of the project drawing after another call's draws (the "
                      "order the eager program makes their variables in is not read)")

    def _drawn_again(self, call: cst.Call, draws: int) -> None:
        """A draw of a helper function called in several places (`weight_variable(shape)` of the
        Deep MNIST tutorial): each call took its own seed, which the helper is given as a parameter
        (checked in `_helpers`). Anything else drawing twice is not certain."""
        if self.seeds.get(id(call)) == self.next:  # (the same seed again: an object made twice, each in a
            self.next += draws                     # graph of its own that counts from 0)
            return
        site, function = self.first[id(call)]
        here = self.sites[-1] if self.sites else None
        if draws != 1 or site is None or here is None or not self.walking or self.walking[-1] != function \
                or id(call) in self.lines or id(call) in self.cells:
            raise _Unsure("one place in the code that draws at two calls")
        seeds = self.per_site.setdefault(id(call), {id(site): self.seeds.pop(id(call), None)})
        if id(here) in seeds:
            raise _Unsure("one place in the code that draws at two calls")
        seeds[id(here)] = self.next
        self.next += 1

    def _helpers(self) -> None:
        """The seed parameters of the helpers whose draws each call seeds: a module function or a
        method (`self.fc_layer(...)`) without `*args`, every call of which is one the count walked."""
        by_function: Dict[int, List[int]] = {}
        for draw in self.per_site:
            by_function.setdefault(self.first[draw][1], []).append(draw)
        functions = {id(f): f for f in self.module.body if isinstance(f, cst.FunctionDef)}
        methods = {id(f): f for c in self.module.body if isinstance(c, cst.ClassDef)
                   for f in c.body.body if isinstance(f, cst.FunctionDef) and f.name.value != "__init__"}
        for function_id, draws in by_function.items():
            function = functions.get(function_id) or methods.get(function_id)
            if function is None or function.params.star_arg != cst.MaybeSentinel.DEFAULT \
                    or function.params.star_kwarg is not None or function.params.kwonly_params:
                raise _Unsure("one place in the code that draws at two calls (not a module function's or a method's)")
            name = function.name.value
            if function_id in methods:  # (a method, `self.fc_layer(...)`: every call of that name counts)
                calls = [c for c in calls_in(self.module) if isinstance(c.func, cst.Attribute) and c.func.attr.value == name]
            else:
                calls = [c for c in calls_in(self.module) if isinstance(c.func, cst.Name) and c.func.value == name]
            sites = set().union(*(self.per_site[d] for d in draws))
            if {id(c) for c in calls} != sites or any(set(self.per_site[d]) != sites for d in draws):
                raise _Unsure(f"`{function.name.value}`, whose draws take a seed per call, called where the count "
                              "did not follow")
            taken = {p.name.value for p in function.params.params} | {n.value for n in bound_names(function)}
            params: List[str] = []
            for draw in sorted(draws, key=lambda d: min(self.per_site[d].values())):
                name = "tf1_seed" if not params else f"tf1_seed_{len(params)}"
                while name in taken:
                    name += "_"
                params.append(name)
                self.helper_draws[draw] = name
                for site, seed in self.per_site[draw].items():
                    self.site_seeds.setdefault(site, []).append((name, seed))
            self.helpers[function_id] = params

    def _draws(self, call: cst.Call, path: Optional[str]) -> Optional[int]:
        """1 for a call that draws once with TF1's next op seed, None for one that does not draw;
        _Unsure for one that may."""
        given = {a.keyword.value: a.value for a in call.args if a.keyword is not None}
        self.kind = _STEP
        made = call.func if isinstance(call.func, cst.Call) else None
        if made is not None and self._initializer(made) is not None:  # `tf.random_normal_initializer()([2])`
            self.drawn_at = made  # (its seed is the initializer's)
            kind = _kind(self._initializer(made), made)
            return self._own(made, made, kind if kind == _STEP or self.in_variable else "graph:" + kind[6:])
        if path in RANDOM_OPS or path == "nn.dropout":
            kept = given.get("keep_prob", given.get("rate"))
            if path == "nn.dropout" and _literal_number(self._value(kept) if kept is not None else None) in (0.0, 1.0):
                raise _Unsure("a dropout of a literal keep_prob 1 or rate 0")
            return self._own(call, call, self._step_kind(path))
        if path in SAMPLED_LOSSES:  # its candidate sampler (`log_uniform_candidate_sampler`) draws once
            if "sampled_values" in given or any(a.star for a in call.args) or \
                    len([a for a in call.args if a.keyword is None]) > SAMPLED_LOSSES[path]:
                raise _Unsure(f"`tf.{path}` with its sampler or its arguments given by position")
            return self._own(call, call, _STEP)
        if path == "layers.dropout":
            training = given.get("training")
            positional = [a for a in call.args if a.keyword is None]
            if len(positional) > 1 or any(a.star for a in call.args) or not isinstance(positional[0].value, cst.Name):
                raise _Unsure("a dropout other than of a name, with keywords")
            if training is None:
                return None
            training = self._value(training)
            if isinstance(training, cst.Name) and training.value in ("True", "False"):
                return 1 if training.value == "True" else None
            if not self._tensor(training):  # (a Python flag TF1 read as it was, or None: the learning phase)
                raise _Unsure("a dropout's training flag that is neither a literal nor a tensor")
            return self._own(call, call, self._step_kind(path))
        if (path in KERNEL_LAYERS or path == "get_variable") and self.reusing[-1]:
            return None  # (the variable exists: nothing drawn)
        if path in KERNEL_LAYERS:
            if "reuse" in given or any(a.star for a in call.args) or \
                    len([a for a in call.args if a.keyword is None]) > KERNEL_LAYERS[path]:
                raise _Unsure("a layer with reuse or its initializers given by position")
            bias = given.get("bias_initializer")
            if bias is not None and not self._filled(bias):  # (a second draw of the call, or an unknown one)
                raise _Unsure("a bias initializer other than zeros, ones or a constant")
            kernel = given.get("kernel_initializer")
            if kernel is None:
                self.kind = "eager:uniform"  # (Glorot uniform)
                return 1
            if self._initializer(kernel) is not None:
                return self._own(call, kernel, _kind(self._initializer(kernel), kernel))
            if self._filled(kernel):
                return None
            raise _Unsure("a kernel initializer")
        if path in NO_DRAW_LAYERS:
            return None  # (no variable, no draw)
        if path == "layers.batch_normalization":  # (ones and zeros)
            if any(name.endswith("_initializer") for name in given) or "reuse" in given:
                raise _Unsure("a batch normalization with initializers or reuse")
            return None
        if path == "get_variable":
            # (an integer or boolean dtype has zeros for its default initializer: no draw)
            floating = "dtype" in given and (self.names.api(given["dtype"]) or "") in FLOAT_DTYPES
            if any(a.star for a in call.args) or "dtype" in given and not floating \
                    or len([a for a in call.args if a.keyword is None]) > 2:
                raise _Unsure("get_variable with a dtype or an initializer by position")
            init = given.get("initializer")
            if init is None:
                self.kind = "eager:uniform"  # (Glorot uniform)
                return 1
            if self._initializer(init) is not None:
                return self._own(call, init, _kind(self._initializer(init), init))
            made = self._local_initializer(init)
            if made is not None:
                self.drawn_at = made
                return self._own(made, made, _kind(self._initializer(made), made))
            if self._filled(init) or self.names.api(init.func if isinstance(init, cst.Call) else init) in RANDOM_OPS:
                return None  # (a tensor's draw is its own call's)
            if self._tensor_value(init) or self._numpy_value(init):
                return None  # (`initializer=tf.constant(0.1, shape=[n])`, a numpy array: its value, drawn by nothing)
            raise _Unsure("get_variable with another initializer")
        if path is not None and path.startswith(CELL_HOMES) and path.rsplit(".", 1)[-1] in ONE_KERNEL_CELLS:
            if any(a.star or a.keyword is not None and a.keyword.value not in CELL_ARGUMENTS for a in call.args) or \
                    len([a for a in call.args if a.keyword is None]) > 1:
                raise _Unsure("an RNN cell with arguments that may draw more than its kernel")
            return None  # (drawn where it first runs)
        if path in RNN_RUNS:
            self.kind = "eager:uniform"  # (Glorot uniform)
            return self._cell_run(call, given)
        if path is not None and path in RANDOM_INITIALIZERS + FILLED_INITIALIZERS:
            return None  # (counted by the layer or get_variable that draws with it; checked there)
        if _seeded_shuffle(call):
            return None  # (TF1's pair is (graph seed, its seed), as eagerly: the counter is not read)
        if self._may_draw(call):
            raise _Unsure(f"`{cst.Module([]).code_for_node(call.func)}`, which may draw")
        return None

    def _own(self, draw: cst.Call, seeded: cst.BaseExpression, kind: str) -> Optional[int]:
        """1 for `draw`, which draws with TF1's next op seed; None where `seeded` (the draw, or the
        initializer it draws with) has a seed of the program's own (`seed=3`, `_own_seeds_apart`)."""
        self.kind = kind
        seed = next((a.value for a in seeded.args if a.keyword is not None and a.keyword.value == "seed"),
                    None) if isinstance(seeded, cst.Call) else None
        if seed is None or isinstance(seed, cst.Name) and seed.value == "None":
            return 1
        value = seed if not kind.startswith("eager:") else self._value(seed)  # (else a literal its Generator reads)
        if not isinstance(value, cst.Integer):
            raise _Unsure("a seed of the program's own that is not a literal number")
        if id(draw) in self.own:
            raise _Unsure("a seed of the program's own at a place that draws at two calls")
        self.own[id(draw)] = (int(value.value), kind)
        return None

    def _cell_run(self, call: cst.Call, given: Dict[str, cst.BaseExpression]) -> Optional[int]:
        """An RNN's first run of a one-kernel cell draws its kernel: written out as the initializer of
        a variable scope around the statement (`with tf.variable_scope(tf.get_variable_scope(),
        initializer=...)`: the same names, and the cell's zeros bias kept), or an LSTMCell's own
        `initializer=` (its kernel's alone: the cell may be run at module level). Run under a reusing
        scope it finds its variables and draws nothing (measured in TF 2.21's graph mode)."""
        if self.reusing[-1]:
            return None
        positional = [a.value for a in call.args if a.keyword is None]
        if tf_path(self.names, call.func) in TWO_CELL_RUNS:  # (each cell its own `initializer=`: one scope
            return self._two_cells(call, positional, given)  # around both would give both one seed)
        cell = self._value(given.get("cell", positional[0] if positional else UNKNOWN))
        path = self._run_cell(cell)
        if path.endswith(".LSTMCell") and not any(a.keyword is not None and a.keyword.value == "initializer"
                                                   for a in cell.args):
            self.cells[id(call)] = [cell]  # (its `initializer=`: the kernel's alone, anywhere the cell is made)
            return 1
        if self.line is None or any(self.lines.get(other) is self.line for other in self.lines):
            raise _Unsure("an RNN run other than alone in its statement")
        self.lines[id(call)] = self.line
        return 1

    def _run_cell(self, cell: cst.BaseExpression) -> str:
        """The path of a one-kernel cell an RNN runs (once)."""
        path = tf_path(self.names, cell.func) if isinstance(cell, cst.Call) else None
        if path is None or not path.startswith(CELL_HOMES) or path.rsplit(".", 1)[-1] not in ONE_KERNEL_CELLS:
            raise _Unsure("an RNN of a cell that is not known")
        if id(cell) in self.run_cells:
            raise _Unsure("an RNN cell run twice")
        self.run_cells.add(id(cell))
        return path

    def _two_cells(self, call: cst.Call, positional, given) -> int:
        """`bidirectional_dynamic_rnn(cell_fw, cell_bw, ...)` of two LSTMCells: two kernels drawn, the
        forward cell's first; each cell is given its seed as its own `initializer=`."""
        cells = [self._value(given.get(name, positional[i] if len(positional) > i else UNKNOWN))
                 for i, name in enumerate(("cell_fw", "cell_bw"))]
        for cell in cells:
            if not self._run_cell(cell).endswith(".LSTMCell") or any(
                    a.keyword is not None and a.keyword.value == "initializer" for a in cell.args):
                raise _Unsure("a bidirectional RNN of other than two LSTMCells without an initializer")
        self.cells[id(call)] = cells
        return 2

    def _bound(self, function: cst.FunctionDef, call: cst.Call, owner: Optional[str]) -> Dict[str, cst.BaseExpression]:
        """The names of `function`'s body for `call`: each parameter with the value the call gives it
        (a method's first, the instance of class `owner`), each local assigned once with its value,
        and any other name it binds as not known."""
        params = function.params
        ordered = [*params.posonly_params, *params.params]
        names: Dict[str, cst.BaseExpression] = {p.name.value: UNKNOWN for p in [*ordered, *params.kwonly_params]}
        if owner is not None and not _static(function):
            if not ordered:
                raise _Unsure("a method without its instance's parameter")
            names[ordered[0].name.value] = cst.Call(func=cst.Name(owner))
            ordered = ordered[1:]
        if not any(a.star for a in call.args) and params.star_kwarg is None and not isinstance(params.star_arg, cst.Param):
            names.update({p.name.value: self._constant(p.default) for p in [*ordered, *params.kwonly_params]
                          if p.default is not None})  # (a default is read where the function is defined)
            for param, argument in zip(ordered, [a for a in call.args if a.keyword is None]):
                names[param.name.value] = self._value(argument.value)
            for argument in call.args:
                if argument.keyword is not None:
                    names[argument.keyword.value] = self._value(argument.value)
        assigned = [n.value for n in bound_names(function.body)]
        for name in assigned:
            names[name] = UNKNOWN
        for name, value in _single_assignments(function.body.body).items():
            if assigned.count(name) == 1 and name not in [p.name.value for p in [*ordered, *params.kwonly_params]]:
                names[name] = value
        return names

    def _value(self, node: cst.BaseExpression) -> cst.BaseExpression:
        """`node`, or the value its name stands for: a name of the walked call, or a module-level
        constant."""
        if isinstance(node, cst.Name) and self.walking and node.value in self.bindings[-1]:
            return self.bindings[-1][node.value]
        return self._constant(node)

    def _constant(self, node: cst.BaseExpression) -> cst.BaseExpression:
        """`node`, or the module-level constant its name stands for."""
        return self.constants.get(node.value, node) if isinstance(node, cst.Name) else node

    def _tensor(self, node: cst.BaseExpression) -> bool:
        """Whether `node` (a value `_value` gave) is a TensorFlow call's result (a placeholder): its
        value is the graph's."""
        return isinstance(node, cst.Call) and self.names.api(node.func) is not None

    def _enter(self, scope: cst.Call) -> None:
        """Enters `with tf.variable_scope(...)`: its name, and whether its variables are shared."""
        given = {a.keyword.value: a.value for a in scope.args if a.keyword is not None}
        positional = [a.value for a in scope.args if a.keyword is None]
        if "initializer" in given and not self._tf1_default(given["initializer"]) or len(positional) > 3 \
                or any(a.star for a in scope.args):
            raise _Unsure("a variable scope with an initializer")
        name = self._value(given.get("name_or_scope", positional[0] if positional else cst.Name("None")))
        path = (*self.scope, name.evaluated_value if isinstance(name, cst.SimpleString) else "?")
        reuse = self._value(given["reuse"]) if "reuse" in given else cst.Name("None")
        if isinstance(reuse, cst.Name) and reuse.value in ("None", "False"):
            shared = self.reusing[-1]  # (inherited)
        elif isinstance(reuse, cst.Name) and reuse.value == "True":
            shared = True
        elif tf_path(self.names, reuse) == "AUTO_REUSE" and "?" not in path:
            shared = self.reusing[-1] or path in self.entered
        else:
            raise _Unsure("a variable scope whose reuse is not known")
        self.entered.add(path)
        self.scope.append(path[-1])
        self.reusing.append(shared)

    def _tf1_default(self, initializer: cst.BaseExpression) -> bool:
        """A scope's unseeded `tf.glorot_uniform_initializer()`: the initializer TF1 gives a variable
        made without one anyway (each draws with its own op seed, counted where it is made)."""
        return isinstance(initializer, cst.Call) and not initializer.args \
            and tf_path(self.names, initializer.func) in DEFAULT_INITIALIZERS

    def _local_initializer(self, node: cst.BaseExpression) -> Optional[cst.Call]:
        """`initer = tf.truncated_normal_initializer(stddev=0.1)` then `initializer=initer`, in the
        walked function, the name read there once: the initializer's call (its seed is the draw's)."""
        if not (isinstance(node, cst.Name) and self.bodies):
            return None
        made = self._value(node)
        if made is node or not isinstance(made, cst.Call) or self._initializer(made) is None:
            return None
        uses = [n for n in names_in(self.bodies[-1].body) if n == node.value]
        return made if len(uses) == 2 else None

    def _numpy_value(self, node: cst.BaseExpression) -> bool:
        """A numpy array: `x.astype(np.float32)` (a tensor has no `astype`), or a call of a library
        that builds no graph (`np.zeros([3])`): a constant initial value, where an initializer
        object would draw."""
        if not isinstance(node, cst.Call):
            return False
        if isinstance(node.func, cst.Attribute) and node.func.attr.value == "astype":
            return True
        root = node.func
        while isinstance(root, cst.Attribute):
            root = root.value
        return isinstance(root, cst.Name) and root.value in self.safe_libraries

    def _tensor_value(self, node: cst.BaseExpression) -> bool:
        """A TensorFlow call that makes a tensor without drawing (`tf.constant(...)`), no initializer."""
        path = tf_path(self.names, node.func) if isinstance(node, cst.Call) else None
        return path is not None and not self._may_draw(node) and not path.endswith(("initializer", "Initializer")) \
            and not path.startswith(("initializers.", "keras."))

    def _may_draw(self, call: cst.Call) -> bool:
        path = tf_path(self.names, call.func)
        if path is not None and re.search(r"(^|\.)(l1_l2|l1|l2)_regularizer$|^keras\.regularizers\.", path):
            return False  # (a regularizer of a variable: no op until the loss is computed, none random)
        if path is not None:
            return path in RANDOM_OPS or bool(_MAY_DRAW.search(path))
        root = call.func
        while isinstance(root, (cst.Attribute, cst.Call, cst.Subscript)):
            root = root.value if not isinstance(root, cst.Call) else root.func
        spelled = dotted(call.func)
        if spelled is not None and self.imported.allowed(spelled):
            return bool(self.imported.draws.get(spelled))  # (a function of the project: as it was read)
        if isinstance(root, cst.Name) and root.value in self.other_libraries:
            return True  # (a project module's function may build graph ops that draw)
        if isinstance(root, cst.Name) and root.value in self.safe_libraries:
            return False
        if isinstance(root, cst.Name) and root.value in self.pure_objects:
            return False  # (`source.sample(...)` of `source = data.Source(...)`, a class of the project drawing nothing)
        name = call.func.attr.value if isinstance(call.func, cst.Attribute) else \
            call.func.value if isinstance(call.func, cst.Name) else ""
        # (an instance's method whose class is not known here: one of the module's that draws may)
        return bool(_MAY_DRAW_METHOD.search(name)) or name in self.drawing_methods or name == "__call__" and any(
            "__call__" in _methods(c) for c in self.classes.values())

    def _initializer(self, node: cst.BaseExpression) -> Optional[str]:
        """The random initializer `node` makes, unseeded, or None."""
        path = tf_path(self.names, node.func) if isinstance(node, cst.Call) else None
        return path if path in RANDOM_INITIALIZERS else None

    def _filled(self, node: cst.BaseExpression) -> bool:
        return isinstance(node, cst.Call) and tf_path(self.names, node.func) in FILLED_INITIALIZERS

    def _draws_in(self, node: cst.CSTNode, owner: Optional[str] = None) -> bool:
        """Whether `node` (in a method of class `owner`) has a call that may draw, through the
        module's functions and methods it calls too."""
        for call in calls_in(node):
            callee = self._callee(call, owner)
            if callee is not None:
                function, cls = callee
                if id(function) in self.visiting:
                    continue
                self.visiting.add(id(function))
                try:
                    if self._draws_in(function, cls):
                        return True
                finally:
                    self.visiting.discard(id(function))
            elif self._may_draw(call):
                return True
        return False


def _bound_by_imports(module: cst.Module) -> Dict[str, str]:
    """The names the module's imports bind, each with the top package it comes from (`import numpy
    as np`: np -> numpy; `from sklearn import datasets`: datasets -> sklearn; `from utils import
    build`: build -> utils)."""
    bound: Dict[str, str] = {}
    for statement in module.body:
        for small in statement.body if isinstance(statement, cst.SimpleStatementLine) else ():
            if isinstance(small, (cst.Import, cst.ImportFrom)) and not isinstance(small.names, cst.ImportStar):
                origin = _root(small.module) if isinstance(small, cst.ImportFrom) and small.module is not None else ""
                for alias in small.names:
                    target = alias.asname.name if alias.asname else alias.name
                    while isinstance(target, cst.Attribute):
                        target = target.value
                    if isinstance(target, cst.Name):
                        bound[target.value] = origin or _root(alias.name)
            elif isinstance(small, cst.ImportFrom):
                raise _Unsure("a star import")
    return bound


FLOAT_DTYPES = ("float16", "float32", "float64", "bfloat16", "half", "double")
UNKNOWN = cst.Name("__not_known__")  # (the value of a name the count cannot read)


def _graph_assigned(statement: cst.SimpleStatementLine, graphs: Set[str], names: ImportTable) -> bool:
    """`<g> = tf.Graph()`, `<g>` one of `graphs`."""
    small = statement.body[0] if len(statement.body) == 1 else None
    return isinstance(small, cst.Assign) and len(small.targets) == 1 and code(small.targets[0].target) in graphs \
        and isinstance(small.value, cst.Call) and not small.value.args and tf_path(names, small.value.func) == "Graph"


def _own_graphs(module: cst.Module, names: ImportTable) -> Set[str]:
    """The names and `self.<attr>`s a graph of its own is kept in (`self.graph = tf.Graph()`), made
    by one statement, entered by one `with <g>.as_default():` block and otherwise only given to a
    Session (`graph=<g>`): that block is a new graph, its counter from 0, each time it runs."""
    made: Dict[str, int] = {}
    entered: Dict[str, int] = {}
    given: Dict[str, int] = {}
    uses: Dict[str, int] = {}

    class _Find(cst.CSTVisitor):
        def visit_Assign(self, node: cst.Assign) -> None:
            if len(node.targets) == 1 and isinstance(node.value, cst.Call) and not node.value.args \
                    and tf_path(names, node.value.func) == "Graph":
                key = code(node.targets[0].target)
                made[key] = made.get(key, 0) + 1

        def visit_With(self, node: cst.With) -> None:
            for item in node.items:
                call = item.item
                if isinstance(call, cst.Call) and isinstance(call.func, cst.Attribute) and call.func.attr.value == "as_default":
                    key = code(call.func.value)
                    entered[key] = entered.get(key, 0) + 1

        def visit_Arg(self, node: cst.Arg) -> None:
            if node.keyword is not None:
                uses[node.keyword.value] = uses.get(node.keyword.value, 0) - 1  # (a keyword is no use of a name)
            if node.keyword is not None and node.keyword.value == "graph":
                key = code(node.value)
                given[key] = given.get(key, 0) + 1

        def visit_Name(self, node: cst.Name) -> None:
            uses[node.value] = uses.get(node.value, 0) + 1

        def visit_Attribute(self, node: cst.Attribute) -> None:
            key = code(node)
            uses[key] = uses.get(key, 0) + 1

    module.visit(_Find())
    return {key for key, count in made.items()
            if count == 1 and entered.get(key) == 1 and uses.get(key, 0) == 2 + given.get(key, 0)}


def _static(function: cst.FunctionDef) -> bool:
    """`@staticmethod` alone: called as `self.m(...)`, its draws run where it is called."""
    return len(function.decorators) == 1 and isinstance(function.decorators[0].decorator, cst.Name) \
        and function.decorators[0].decorator.value == "staticmethod"


def _methods(cls: cst.ClassDef) -> Dict[str, cst.FunctionDef]:
    return {s.name.value: s for s in cls.body.body if isinstance(s, cst.FunctionDef)}


def _constants(module: cst.Module) -> Dict[str, cst.BaseExpression]:
    """The module-level names bound once in the whole module (in any scope), each to its value."""
    counts: Dict[str, int] = {}
    for name in bound_names(module):
        counts[name.value] = counts.get(name.value, 0) + 1
    return {name: value for name, value in _single_assignments(module.body).items() if counts.get(name) == 1}


def _single_assignments(body) -> Dict[str, cst.BaseExpression]:
    """`name = value` statements in `body`, by name (in a `with` block too, which runs once)."""
    values = {}
    for statement in body:
        if isinstance(statement, cst.With):
            values.update(_single_assignments(statement.body.body))
        for small in statement.body if isinstance(statement, cst.SimpleStatementLine) else ():
            if isinstance(small, cst.Assign) and len(small.targets) == 1 and isinstance(small.targets[0].target, cst.Name):
                values[small.targets[0].target.value] = small.value
    return values


def _one_shot_iterator(call: cst.Call, path: Optional[str]) -> bool:
    """`dataset.make_one_shot_iterator()`: TF1 took the graph's next op seed for it (measured in TF
    2.21's graph mode: the next unseeded op draws with the one after)."""
    return path in ("data.make_one_shot_iterator", "compat.v1.data.make_one_shot_iterator") or path is None and \
        isinstance(call.func, cst.Attribute) and call.func.attr.value == "make_one_shot_iterator"


def _seeded_shuffle(call: cst.Call) -> bool:
    """`dataset.shuffle(n, seed=7)`: a dataset's shuffle given its seed (TF1 and eager TF2 both
    seed it with the pair (graph seed, 7), without reading the graph's op counter)."""
    return isinstance(call.func, cst.Attribute) and call.func.attr.value == "shuffle" and any(
        a.keyword is not None and a.keyword.value == "seed" and isinstance(a.value, cst.Integer) for a in call.args)


def _entry_run(call: cst.Call) -> Optional[str]:
    """The function `tf.app.run()` runs: `main`, or the one given (`main=train`, `run(train)`)."""
    if not call.args:
        return "main"
    given = call.args[0]
    if len(call.args) == 1 and not given.star and isinstance(given.value, cst.Name) and (
            given.keyword is None or given.keyword.value == "main"):
        return given.value.value
    return None


def _is_main_guard(statement: cst.If) -> bool:
    """`if __name__ == "__main__":`"""
    test = statement.test
    return isinstance(test, cst.Comparison) and isinstance(test.left, cst.Name) and test.left.value == "__name__" \
        and len(test.comparisons) == 1 and isinstance(test.comparisons[0].operator, cst.Equal) \
        and isinstance(test.comparisons[0].comparator, cst.SimpleString) \
        and test.comparisons[0].comparator.evaluated_value == "__main__"


def _root(name: cst.BaseExpression) -> str:
    while isinstance(name, cst.Attribute):
        name = name.value
    return name.value if isinstance(name, cst.Name) else ""


def _literal_number(node: Optional[cst.BaseExpression]) -> Optional[float]:
    if isinstance(node, (cst.Integer, cst.Float)):
        return float(node.evaluated_value)
    return None


class _Pin(cst.CSTTransformer):
    """Writes `seed=n` (or TF1's default kernel initializer with it) into each counted call."""

    def __init__(self, seeds: Dict[int, int], names: ImportTable, counter: Optional["_Counter"] = None):
        self.seeds, self.names, self.tf = seeds, names, tf_alias(names, ("tensorflow", "tensorflow.compat.v1"))
        self.helpers = counter.helpers if counter is not None else {}
        self.helper_draws = counter.helper_draws if counter is not None else {}
        self.site_seeds = counter.site_seeds if counter is not None else {}
        self.imported_seed = counter.imported_seed if counter is not None else None

    def leave_FunctionDef(self, original: cst.FunctionDef, updated: cst.FunctionDef) -> cst.FunctionDef:
        """A helper whose draws each call seeds: `def weight_variable(shape, tf1_seed=None)`."""
        params = self.helpers.get(id(original))
        if not params:
            return updated
        added = [cst.Param(cst.Name(p), default=cst.Name("None"), equal=cst.AssignEqual(
            whitespace_before=cst.SimpleWhitespace(""), whitespace_after=cst.SimpleWhitespace(""))) for p in params]
        old = list(updated.params.params)
        if old:
            old[-1] = old[-1].with_changes(comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" ")))
        for index in range(len(added) - 1):
            added[index] = added[index].with_changes(comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" ")))
        return updated.with_changes(params=updated.params.with_changes(params=[*old, *added]))

    def leave_SimpleStatementLine(self, original, updated):
        seed = self.seeds.get(id(original))  # (a statement that runs an RNN: its cell's kernel)
        if seed is None:
            return updated
        scope = cst.parse_expression(f"{self.tf}.variable_scope({self.tf}.get_variable_scope(), "
                                     f"initializer={self.tf}.glorot_uniform_initializer(seed={seed}))")
        return cst.With(items=[cst.WithItem(scope)], body=cst.IndentedBlock([updated.with_changes(leading_lines=[])]),
                        leading_lines=updated.leading_lines)

    def leave_Call(self, original: cst.Call, updated: cst.Call) -> cst.Call:
        if self.imported_seed is not None and self.imported_seed[0] == id(original):
            return updated.with_changes(args=joined(updated, [*updated.args, keyword(
                imported_models.SEED_KEYWORD, cst.Integer(str(self.imported_seed[1])))]))
        given = self.site_seeds.get(id(original))
        if given:  # a call of a helper: the seeds of its draws
            return updated.with_changes(args=joined(updated, [*updated.args, *(
                keyword(param, cst.Integer(str(seed))) for param, seed in given)]))
        seed = self.seeds.get(id(original))
        if id(original) in self.helper_draws:
            seed = self.helper_draws[id(original)]
        path = tf_path(self.names, original.func)
        if seed is None or path in RNN_RUNS:
            return updated
        if path.startswith(CELL_HOMES):  # an LSTMCell: the kernel's initializer
            init = cst.parse_expression(f"{self.tf}.glorot_uniform_initializer(seed={seed})")
            return updated.with_changes(args=joined(updated, [*updated.args, keyword("initializer", init)]))
        number = cst.Name(seed) if isinstance(seed, str) else cst.Integer(str(seed))
        if path == "nn.nce_loss":  # (no `seed=`: its sampler, written as the loss makes it, given the seed)
            return updated.with_changes(args=joined(updated, [*updated.args, keyword("sampled_values", _sampler(
                self.tf, updated, number))]))
        if path in KERNEL_LAYERS or path == "get_variable":
            name = "kernel_initializer" if path in KERNEL_LAYERS else "initializer"
            given = next((a for a in updated.args if a.keyword is not None and a.keyword.value == name), None)
            if given is None:
                init = cst.parse_expression(f"{self.tf}.glorot_uniform_initializer(seed={seed})")
                return updated.with_changes(args=joined(updated, [*updated.args, keyword(name, init)]))
            init = given.value.with_changes(args=joined(given.value, [*given.value.args, keyword("seed", number)]))
            return updated.with_changes(args=[a if a is not given else a.with_changes(value=init) for a in updated.args])
        return updated.with_changes(args=joined(updated, [*updated.args, keyword("seed", number)]))


def _sampler(tf: str, loss: cst.Call, seed: cst.BaseExpression) -> cst.BaseExpression:
    """The sampler `tf.nn.nce_loss(...)` makes when given none (TF 2.21's `_compute_sampled_logits`:
    the labels as int64, `unique=True`, `range_max=num_classes`), given `seed`."""
    bound = bind(loss, ("weights", "biases", "labels", "inputs", "num_sampled", "num_classes", "num_true"))
    text = cst.Module([]).code_for_node
    true = bound.get("num_true")
    return cst.parse_expression(
        f"{tf}.random.log_uniform_candidate_sampler(true_classes={tf}.cast({text(bound['labels'])}, {tf}.int64), "
        f"num_true={text(true) if true is not None else '1'}, num_sampled={text(bound['num_sampled'])}, "
        f"unique=True, range_max={text(bound['num_classes'])}, seed={text(seed)})")
