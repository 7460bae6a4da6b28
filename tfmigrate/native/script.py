"""What a TF1 graph script is made of, statement by statement: the analysis `fix --native` rests on.

A TF1 script builds a graph at module level (placeholders, variables, tensors, a train op), opens a
Session, and evaluates fetches with `sess.run(fetches, feed_dict)`. Each module-level statement is
put in one class (see `Kind`); anything outside the whitelist becomes a `Blocker` naming the
construct and its line, and the module keeps the compat route. Nothing here edits code.
"""
from __future__ import annotations

import enum
import re
from dataclasses import dataclass, field
from types import SimpleNamespace
from typing import Dict, List, Optional, Set, Tuple

import libcst as cst
import libcst.matchers as m

from tfmigrate.fixers import layers as layer_specs
from tfmigrate.facts.datasets import DatasetNames
from tfmigrate.facts.graph_words import DEFAULT_INITIALIZERS, GRAPH_SEEDS
from tfmigrate.facts.names import ImportTable, dotted
import tfmigrate.native.batch_norm as batch_norm
import tfmigrate.native.checkpoints as checkpoints
import tfmigrate.native.imported_models as imported_models
import tfmigrate.native.model_mapping as model_mapping
import tfmigrate.native.own_collections as own_collections
import tfmigrate.native.seeded_draws as seeded_draws
from tfmigrate.native.optimizers import KEPT_TF1, OPTIMIZERS, keras_optimizer, learning_rate_of
from tfmigrate.native.feed_builds import escape_reason, feed_uses, keys_added_before, set_key, update_dict
from tfmigrate.native.control_flow import CONTROL_FLOW, control_flow_differs
from tfmigrate.native.syntax import (assignments_in, bind, calls_in, code, fresh_name, functions_in, names_assigned,
                                     names_in, names_read)

PLACEHOLDERS = ("placeholder", "placeholder_with_default", "sparse_placeholder")
SUMMARY_OPS = ("summary.scalar", "summary.histogram", "summary.image")
VARIABLES = ("Variable", "get_variable")
STEP_MAKERS = ("train.get_or_create_global_step", "train.create_global_step")
SESSIONS = ("Session", "InteractiveSession")
# TF1's learning-rate schedules of a step variable (`tf.compat.v1.train.*`: eagerly, a function of it).
SCHEDULES = ("train.exponential_decay", "train.piecewise_constant", "train.polynomial_decay",
             "train.inverse_time_decay", "train.natural_exp_decay")
# Ops whose gradient is an IndexedSlices (rows of the tensor they read).
SPARSE_GRADIENTS = ("nn.embedding_lookup", "nn.embedding_lookup_sparse", "gather", "gather_nd",
                    "nn.safe_embedding_lookup_sparse", "contrib.layers.embedding_lookup_unique")
INITIALIZERS = ("global_variables_initializer", "initialize_all_variables", "local_variables_initializer",
                "initialize_local_variables")
# TF calls a script makes at module level that mean the same eagerly (kept where they are).
EAGER_STATEMENTS = ("set_random_seed", "random.set_seed", "logging.set_verbosity")
# Values that are Python objects, not tensors: kept at module level, usable anywhere.
# A dtype (`tf.float32`, `tf.bool`), matched whole: a prefix took the ops `tf.boolean_mask` and
# `tf.complex` for dtypes.
DTYPES = re.compile(r"b?float(16|32|64)|u?int(8|16|32|64)|bool|string|complex(64|128)|double|half|qu?int(8|16|32)"
                    r"|resource|variant")
OBJECT_PREFIXES = ("dtypes.", "errors.", "test.",
                   "ConfigProto", "GPUOptions", "examples.", "gfile.", "io.gfile.", "logging.", "app.", "flags",
                   "SparseTensorValue",  # (a namedtuple, what TF1 fed a sparse placeholder)
                   # tf.Example protocol buffers and the record writer: Python objects, no graph
                   "train.Example", "train.Features", "train.Feature", "train.Int64List", "train.BytesList",
                   "train.FloatList", "train.SequenceExample", "train.FeatureList", "python_io.TFRecordWriter",
                   "io.TFRecordWriter")
# Calls that create graph state or need a session: a module-level function making them is not a
# pure tensor helper that a `tf.function` may call.
STATEFUL = ("Variable", "get_variable", "layers.", "placeholder", "Session", "InteractiveSession", "train.",
            "summary.", "variable_scope", "get_collection", "add_to_collection", "metrics.", "nn.rnn_cell",
            "contrib.", "assign", "global_variables", "trainable_variables", "get_default_graph",
            "reset_default_graph", "py_func",
            "data.make_one_shot_iterator", "data.make_initializable_iterator")  # an iterator per call
OBJECT_SUFFIXES = ("_initializer", "Optimizer")


def is_object_path(path: str) -> bool:
    """A TensorFlow name for a Python object, not a graph op: a dtype, an error class, a config."""
    return bool(DTYPES.fullmatch(path)) or path.startswith(OBJECT_PREFIXES)


# Graph calls with a side effect of their own, which would run on every evaluation.
UNSUPPORTED = {
    "summary.": "TF1 summaries (`tf.summary.*` ops evaluated by `sess.run`)",
    "train.Saver": "`tf.train.Saver`",
    "get_collection": "graph collections (`tf.get_collection`)",
    "control_dependencies": "`tf.control_dependencies`",
    "metrics.": "`tf.metrics.*` (local variables updated by `sess.run`)",
    "data.Iterator": "`tf.data.Iterator` used other than through `from_structure`",
    "nn.rnn_cell": "an RNN cell made inside a graph expression (it would be made again on each call)",
    "variable_scope": "`tf.variable_scope`",
    "name_scope": "`tf.name_scope`",
    "sparse_placeholder": "`tf.sparse_placeholder` inside an expression",
    "train.start_queue_runners": "queue runners",
    "train.string_input_producer": "a queue input pipeline (`string_input_producer`)",
    "train.input_producer": "a queue input pipeline",
    "train.shuffle_batch": "a queue input pipeline (`shuffle_batch`)",
    "train.batch": "a queue input pipeline (`tf.train.batch`)",
    "TextLineReader": "a queue reader (`TextLineReader`)",
    "WholeFileReader": "a queue reader (`WholeFileReader`)",
    "TFRecordReader": "a queue reader (`TFRecordReader`)",
    "FixedLengthRecordReader": "a queue reader (`FixedLengthRecordReader`)",
    "train.Coordinator": "queue runners",
    "FIFOQueue": "queues",
    "py_func": "`tf.py_func`",
    "get_default_graph": "the default graph",
    "gradients": "`tf.gradients` (a training step is rewritten from `minimize`, or from gradients clipped by their "
                 "global norm)",
    "trainable_variables": "the graph's variable lists (`tf.trainable_variables()`)",
    "global_variables": "the graph's variable lists (`tf.global_variables()`)",
}
# What reads TF1's REGULARIZATION_LOSSES collection (Script._regularization).
REGULARIZATION_READS = ("get_collection", "losses.get_regularization_loss", "losses.get_regularization_losses")
# Optimizer methods of a training step that the rewrite writes only from `minimize`.
STEP_METHODS = ("apply_gradients", "compute_gradients")

# What a function only ever given to a dataset's `map` may call beside a pure helper's ops: tf.data
# traces it into a graph function of its own (`tf.cond` on a decoded record, as TF1's graph ran it).
RECORD_FUNCTION_OPS = ("cond",)
# What a pure helper function may open beside its ops: a name scope names the ops it makes (eagerly
# nothing; in a `tf.function` their graph names), and no variable is made in a pure helper.
HELPER_SCOPES = ("name_scope",)

# `Saver.save`'s parameters (eagerly no meta graph is written: `write_meta_graph` is moot).
SAVE_PARAMETERS = ("sess", "save_path", "global_step", "latest_filename", "meta_graph_suffix", "write_meta_graph",
                   "write_state", "strip_default_attrs", "save_debug_info")


class Kind(enum.Enum):
    PLACEHOLDER = "placeholder"  # removed; becomes a parameter
    VARIABLE = "variable"        # state: kept at module level, created once
    OBJECT = "object"            # dtypes, initializers, optimizers: kept at module level
    GRAPH = "graph"              # a tensor: computed inside the functions that need it
    TRAIN = "train"              # `opt.minimize(loss)`: a GradientTape step
    SESSION = "session"          # removed
    INIT = "init"                # removed
    DROP = "drop"                # `sess.run(init)`, `sess.close()`, `reset_default_graph()`
    PYTHON = "python"            # kept; its `sess.run` calls become function calls
    HELPER = "helper"            # a module-level function of tensor ops only: kept, callable in graph code
    DATASET = "dataset"          # a `tf.data.Dataset` built from Python data: kept, an eager dataset
    ITERATOR = "iterator"        # `dataset.make_*_iterator()`: a Python iterator over the dataset
    NEXT = "next"                # `x, y = iterator.get_next()`: arguments drawn from the iterator
    ITERATOR_INIT = "iterator_init"  # `init = iterator.make_initializer(ds)`: restarts on `ds`
    WRITER = "writer"            # `tf.summary.FileWriter(logdir, graph)`: a TF2 summary writer
    EAGER = "eager"              # a TF call that means the same eagerly: kept
    BLOCK = "block"              # `if <Python test>:` whose body is read as module-level code
    IMPORT_V1 = "import_v1"      # `import tensorflow.compat.v1 as tf` (the compat route): `import tensorflow`
    SAVER = "saver"              # `saver = tf.train.Saver()`: a name-based saver of the variables made so far


@dataclass
class Blocker:
    line: int
    construct: str
    function: Optional[str] = None  # a top-level function that holds it, which native.inline may write in place
    # A test file: the other test methods that hold it too ("Class.method", their blocker), and how many it has
    held: Tuple[Tuple[str, "Blocker"], ...] = ()
    tests: int = 0

    def __str__(self) -> str:
        return f"{self.construct} (line {self.line})"


# A module of graph code with no Session or placeholder of its own: it is eager when the programs
# that import it are (TFM216 names the one that holds it back, where the run knows it).
LIBRARY_MODULE = ("a library module, not a script: no Session or placeholder at its top level "
                  "(only scripts are rewritten)")


class Blocked(Exception):
    """Raised with the Blocker that stops the rewrite (the TFM216 rule, `not-native`, reports it)."""

    def __init__(self, line: int, construct: str, function: Optional[str] = None):
        super().__init__(construct)
        self.blocker = Blocker(line, construct, function)


@dataclass
class Layer:
    """A `tf.layers.<fn>(...)` call inside a graph statement, as a Keras layer made once."""
    call: cst.Call
    name: str                   # the module-level layer object
    mapped: layer_specs.Mapped
    scope: str = ""             # the variable scope it was made in (`Discriminator/`)
    reused: bool = False        # `reuse=True`: the object of the same name made before


@dataclass
class Metric:
    """`tf.metrics.accuracy(labels, predictions)[i]`: a running mean kept in two variables
    (TF1's local variables); `[1]` (the update op) adds the batch, `[0]` reads."""
    labels: cst.BaseExpression
    predictions: cst.BaseExpression
    update: bool
    total: str
    count: str


@dataclass
class Statement:
    node: cst.CSTNode           # the module-level statement (or one inside a Session block)
    kind: Kind
    line: int
    targets: Tuple[str, ...] = ()
    reads: Set[str] = field(default_factory=set)        # graph/placeholder/variable names read
    deps: Dict[str, "Statement"] = field(default_factory=dict)  # what each name read meant here
    layers: List[Layer] = field(default_factory=list)
    # TRAIN: the optimizer expression, the loss name, var_list / global_step expressions
    optimizer: Optional[cst.BaseExpression] = None
    optimizer_name: Optional[str] = None  # a hoisted optimizer's new name
    loss: Optional[str] = None
    var_list: Optional[cst.BaseExpression] = None
    var_scope: Optional[str] = None  # `var_list=tf.get_collection(TRAINABLE_VARIABLES, scope=...)`
    global_step: Optional[cst.BaseExpression] = None
    clip_norm: Optional[cst.BaseExpression] = None  # gradients clipped by this global norm (native.clipped_steps)
    clip_values: Optional[tuple] = None  # or each to these bounds
    norm_name: Optional[str] = None  # the name the program gives the clip's global norm (fetched with the step)
    updates: bool = False  # TRAIN: made under `tf.control_dependencies(update_ops)` (native.batch_norm)
    # PLACEHOLDER: dtype and shape expressions, the default of placeholder_with_default
    dtype: Optional[cst.BaseExpression] = None
    shape: Optional[cst.BaseExpression] = None
    default: Optional[cst.BaseExpression] = None
    trainable: bool = True
    sparse: bool = False  # PLACEHOLDER: `tf.sparse_placeholder`, fed `(indices, values, dense_shape)`
    metric: Optional["Metric"] = None   # `tf.metrics.accuracy(...)[1]`
    fed_only: bool = False  # `x = tf.placeholder(...) / 255.`: has a value only where it is fed
    fed_dataset: Optional["FedDataset"] = None  # DATASET / ITERATOR: built from placeholders
    summaries: Optional[List[Tuple[str, str, cst.BaseExpression]]] = None  # (kind, name, tensor) it evaluates
    iterator: Optional[str] = None       # NEXT: the iterator; ITERATOR_INIT: the iterator it restarts
    dataset: Optional[cst.BaseExpression] = None  # ITERATOR / ITERATOR_INIT, NEXT of an unnamed iterator: the dataset
    top: Optional[cst.CSTNode] = None   # the module-level node it came from
    scope: str = ""                     # the variable scope it is in
    container: Optional[str] = None     # VARIABLE: "dict" for a dict of variables
    children: List["Statement"] = field(default_factory=list)  # BLOCK: its body's statements
    tracked: List[Tuple[str, cst.Call]] = field(default_factory=list)  # (model function, call) it makes
    sites: List["RunSite"] = field(default_factory=list)  # PYTHON: its `sess.run` calls
    shapes: List["RunSite"] = field(default_factory=list)  # PYTHON: `t.shape` / `t.get_shape()` of tensors it reads
    values: List["RunSite"] = field(default_factory=list)  # PYTHON: tensors it reads (`print(c)`), computed eagerly
    saved: Optional[checkpoints.GraphNames] = None  # SAVER: TF1's names of the variables it saves
    schedule: Optional[str] = None  # GRAPH: `lr = tf.train.exponential_decay(...)`, its module-level schedule


@dataclass
class FedDataset:
    """`tf.data.Dataset.from_tensor_slices((x_ph, y_ph))` ... `make_initializable_iterator()`, its
    placeholders fed by `sess.run(iterator.initializer, feed_dict)`: eagerly, a function of the fed
    values (`function`), whose dataset the initializer's run iterates anew."""
    placeholders: List[str]
    statements: List["Statement"]
    function: str = ""


@dataclass
class RunSite:
    """`sess.run(fetches, feed_dict=...)` in Python code."""
    call: cst.Call
    line: int
    fetches: cst.BaseExpression
    fetched: List[str]                   # the graph names fetched
    feeds: Dict[str, cst.BaseExpression]  # placeholder name -> fed value
    defs: Dict[str, "Statement"] = field(default_factory=dict)  # what each name meant there
    optional: Set[str] = field(default_factory=set)  # fed tensors computed when the feed is None
    # `sess.run(tf.reduce_mean(y - labels), feed)`, an expression of graph tensors and Python values
    # (`labels`, numpy data): the tensors are computed by the run's function, the expression eagerly
    outer: Optional[cst.BaseExpression] = None


class Script:
    """The module's statements classified, or the first construct that stops a native rewrite."""

    def __init__(self, module: cst.Module, source: str, line_of, stateful: Tuple[str, ...] = (), pinned: bool = False,
                 keras3: bool = False, norm_names: Optional[Dict[str, str]] = None, listed: Tuple[str, ...] = ()):
        # Every seed the module gives is the one TF1's graph gave that op (native.op_seeds): the
        # module's draws are TF1's, each once, and a draw at each step is TF1's sequence. Below
        # Keras 3 (level 2) such a module also keeps TF1's optimizers, to print TF1's last digits.
        self.pinned = pinned
        # a clipped step's train op -> the name of the global norm its program fetches (native.clipped_steps)
        self.norm_names = dict(norm_names or {})
        self.tf1_updates = pinned and not keras3
        # id(statement running an RNN) -> the `tf.variable_scope(tf.get_variable_scope(), initializer=...)`
        # around it: TF1's seed of the cell's kernel (native.op_seeds), kept around it where it runs
        self.scope_initializers: Dict[int, cst.Call] = {}
        self._graph_seeded: Optional[bool] = None
        self.module = module
        self.source = source
        self.stateful = stateful  # checked modules it imports that make variables (graph_imports)
        # ... what it may call of them (their model functions through one store: native.imported_models)
        self.imported = imported_models.imported(module, listed) if stateful else imported_models.Imported()
        self.imported_store: Optional[str] = None  # the store's name, where it calls a model function
        self.imported_first_seed: Optional[int] = None  # TF1's op seed of its first draw (native.op_seeds)
        # ... whether it is the body of a function run more than once, each run in a new graph
        # (native.entry_functions): its global step is made anew at each run, not found again
        self.runs_anew = False
        self.names = ImportTable(module, source)
        self.line_of = line_of                  # node -> first line
        self.statements: List[Statement] = []   # in execution order, Session blocks flattened
        self.body: List[Statement] = []         # what the module is written from (BLOCKs hold theirs)
        self.current: List[Statement] = self.body
        self.sessions: Set[str] = set()
        self.blockers: List[Blocker] = []
        self.taken: Set[str] = set()
        for node in module.body:
            self.taken |= names_assigned(node) | names_read(node)
        self.kinds: Dict[str, Kind] = {}        # a name's current kind, in program order
        # a collection of the program's own -> the statements so far that add to it (own_collections)
        self.collection_adders: Dict[str, List[Statement]] = {}
        self._reading_graph = False  # `_graph` is reading a graph expression (its collections' reads are followed)
        self.defs: Dict[str, Statement] = {}    # the statement that defines each graph name now
        self.placeholders: Dict[str, Statement] = {}
        self.helpers: Set[str] = set()
        # `def evaluate(sess, data): return sess.run(acc, {x: data})`: function -> its Session parameter's
        # index (None: it runs the module's Session); each call passes the Session there (dropped eagerly)
        self.run_helpers: Dict[str, Optional[int]] = {}
        self.session_args: Dict[int, cst.Call] = {}  # id(call of a run helper) -> the call without its Session
        # `tf.add_n(tf.get_collection(tf.GraphKeys.REGULARIZATION_LOSSES))`, `tf.losses.get_regularization_loss()`:
        # id(call) -> ("list" or "loss", its line): the regularizers of the model objects (native.emit)
        self.regularizations: Dict[int, Tuple[str, int]] = {}
        self.configs: Set[str] = set()       # names of `tf.ConfigProto()` objects
        self.dead_configs: Set[str] = set()  # ... that only configure Sessions (dropped with them)
        self.scope: List[str] = []  # the `tf.variable_scope` names around the statement
        self.reuse: List[str] = []  # ... and how each reuses variables ("", "reuse", "auto")
        self.name_scopes: List[Optional[str]] = []  # the name scopes around it (None: not a literal)
        self.tf1_names = checkpoints.GraphNames()  # TF1's names of the variables made so far
        self.saver_calls: Dict[int, cst.Call] = {}  # id(`saver.save(sess, ...)` / `restore`) -> the call
        self.graph_objects: Set[str] = set()  # the script's `graph = tf.Graph()` ("" for `tf.Graph().as_default()`)
        self._graph_blocks: List[str] = []  # the graph of each `with ....as_default():` block
        self._graph_depth = 0  # inside such a block, or a Session of that graph
        self._graph_uses: List[str] = []  # each `graph.as_default()` and `Session(graph=graph)` read
        self.tf1_optimizers: Set[str] = set()  # optimizers kept TF1's: a Saver saves their state
        self._restores: List[int] = []  # lines of `saver.restore(...)`
        self._unsaved_state: List[Tuple[int, str]] = []  # (line, why) of Savers without the optimizers' state
        self.named_layers: Dict[Tuple[str, str], str] = {}  # (scope, name=) -> the layer object
        self.summary_ops: List[Statement] = []  # `tf.summary.*` ops so far (what `merge_all` merges)
        self.writers: Dict[int, cst.BaseExpression] = {}  # id(FileWriter call in Python code) -> logdir
        self.add_summaries: Dict[int, cst.Call] = {}  # id(`w.add_summary(v, step)`) -> the call
        self.factories: Set[str] = set()  # functions that only make a variable (`init_weights`)
        self.cell_factories: Set[str] = set()  # functions that only make RNN cells (`def lstm_cell(): ...`)
        self._cell_factory_calls: Set[int] = set()  # the calls of those read by a module-level cell statement
        self.factory_variables: Dict[str, cst.Call] = {}  # ... and the `tf.Variable(...)` each makes
        self.cells: Set[str] = set()  # RNN cell objects made at module level (their variables: on first call)
        self.builders: Dict[str, model_mapping.Builder] = {}  # TF1 model functions (model_mapping)
        self.helper_variables: Dict[str, Set[str]] = {}  # helper -> the module-level variables it reads
        self.helper_placeholders: Dict[str, Set[str]] = {}  # helper -> the placeholders it reads (given as keywords)
        # Datasets built from placeholders (fed when their iterator is initialized): name -> FedDataset
        self.fed_datasets: Dict[str, "FedDataset"] = {}
        # Feeds built ahead: name -> the dict literals it holds in the latest statement assigning it
        # (an `if` may build two: `{x: a}`, then `{x: a, state: s}` once there is a state to feed).
        self.feed_dicts: Dict[str, List[cst.Dict]] = {}
        self.feed_literals: List[cst.Dict] = []  # every such literal (a name may hold several in turn)
        self.feed_added: Dict[str, List[str]] = {}  # such a name -> the keys `.update`/`[k] = v` add
        self.feed_set_keys: List[cst.Name] = []  # the keys of `feed[k] = v` (written as strings)
        self._dtypes: Dict[int, Dict[str, cst.BaseExpression]] = {}  # data_dtypes, by statement
        self.restarts: Dict[int, Tuple[str, cst.BaseExpression]] = {}  # id(sess.run call) -> (iterator, dataset)
        self.aliases = set(self.names.tensorflow_aliases())
        self.schedules: Dict[str, Statement] = {}  # learning rates of a step variable, by name
        self.update_collections: Dict[str, int] = {}  # `update_ops = tf.get_collection(UPDATE_OPS)` -> uses
        self.updates_read = False  # UPDATE_OPS read: a batch-norm layer made after it is not in it

    # -- helpers ------------------------------------------------------------------------------
    def api(self, node: cst.CSTNode) -> Optional[str]:
        path = self.names.api(node)
        return path

    @property
    def tf(self) -> str:
        """The alias generated code spells TensorFlow with."""
        return sorted(self.aliases)[0]

    def tf_call(self, node: cst.CSTNode, *paths: str) -> Optional[str]:
        if isinstance(node, cst.Call):
            path = self.api(node.func)
            if path is not None and (not paths or path in paths):
                return path
        return None

    def graph_seeded(self) -> bool:
        """Whether the module sets TensorFlow's graph (global) seed."""
        if self._graph_seeded is None:
            self._graph_seeded = any(self.tf_call(call, *GRAPH_SEEDS) for call in calls_in(self.module))
        return self._graph_seeded

    def fresh(self, preferred: str) -> str:
        return fresh_name(self.taken, preferred)

    def variable_names(self) -> Set[str]:
        """Names of variables made once at module level (a model function may read them)."""
        return {n for n, k in self.kinds.items() if k is Kind.VARIABLE}

    def placeholder_names(self) -> Set[str]:
        """Names of placeholders (a function reading one is given it as a keyword)."""
        return {n for n, k in self.kinds.items() if k is Kind.PLACEHOLDER}

    def graph_names(self) -> Set[str]:
        return {n for n, k in self.kinds.items() if k in (Kind.GRAPH, Kind.PLACEHOLDER, Kind.VARIABLE, Kind.TRAIN,
                                                          Kind.INIT, Kind.NEXT, Kind.ITERATOR_INIT)}

    # -- analysis -----------------------------------------------------------------------------
    def analyse(self) -> "Script":
        if not self.aliases:
            raise Blocked(1, "no `import tensorflow as tf`")
        self._stateful_calls()
        for node in self.module.body:
            self._top(node)
        if not self.sessions and not self.placeholders:
            raise Blocked(1, LIBRARY_MODULE)
        self.dead_configs = {name for name in self.configs if self._only_configures_sessions(name)}
        self._graph_object_only_builds()
        self._map_model_functions()
        self._cell_factories_called_once()
        self._restored_state_is_saved()
        self._sparse_gradients_keep_tf1_optimizers()
        for name, uses in self.update_collections.items():
            if len(re.findall(rf"\b{name}\b", self.source)) != 1 + uses:
                raise Blocked(1, f"`{name}`, the UPDATE_OPS collection, used other than by "
                                 f"`tf.control_dependencies({name})` around a training op")
        return self

    def clip_steps(self, norms: Dict[str, cst.BaseExpression], values: Dict[str, tuple]) -> None:
        """The training steps whose gradients TF1 clipped by a global norm or each to bounds
        (native.clipped_steps), each given its norm or bounds: Python values, read where the step runs."""
        for statement in self.statements:
            name = statement.targets[0] if statement.kind is Kind.TRAIN and statement.targets else None
            if name in norms or name in values:
                clip = [norms[name]] if name in norms else list(values[name])
                if any(names_read(bound) & (self.graph_names() | self.sessions) for bound in clip):
                    raise Blocked(statement.line, "gradients clipped by a norm or bounds computed in the graph")
                statement.clip_norm = norms.get(name)
                statement.clip_values = values.get(name)
        for statement in self.statements:
            norms_read = {n for n in statement.reads if self.defs.get(n) is not None and self.defs[n].norm_name == n}
            if statement.kind is not Kind.TRAIN and norms_read:
                raise Blocked(statement.line, f"`{sorted(norms_read)[0]}`, the global norm of clipped gradients, "
                                              "read by graph code (eagerly it exists only inside the training step)")
            for site in statement.sites:
                for name in site.fetched:
                    step = site.defs.get(name)
                    if step is not None and step.norm_name == name and step.targets[0] not in site.fetched:
                        raise Blocked(site.line, f"`{name}`, the global norm of clipped gradients, fetched without "
                                                 f"its training op `{step.targets[0]}` (TF1 computed the gradients "
                                                 "alone; eagerly they exist only inside the training step)")

    def _graph_object_only_builds(self) -> None:
        """`graph = tf.Graph()` goes with its `as_default()` blocks and `Session(graph=graph)`
        arguments; any other use of it (`graph.finalize()`, a FileWriter given it) stops the rewrite."""
        for name in self.graph_objects - {""}:
            if names_in(self.module).count(name) != 1 + self._graph_uses.count(name):  # (1: its assignment)
                raise Blocked(1, f"the graph `{name}` used other than by `{name}.as_default()` and "
                                 f"`Session(graph={name})`")

    def _sparse_gradients_keep_tf1_optimizers(self) -> None:
        """An embedding lookup (`tf.nn.embedding_lookup`, `tf.gather`) gives its table a sparse
        gradient, which TF1's optimizers with state apply by a rule of their own: Keras 3's Adam
        trained such a model to another loss (25 steps, measured under TF 2.21: 0.00257 against
        TF1's 0.00607). TF1's optimizer, run eagerly, gives TF1's numbers, so it is kept. So it is
        where the module draws TF1's numbers (`tf1_updates`): Keras's Adam takes its beta powers by
        `pow` where TF1 multiplied them step by step, and the last digits drift (501_dropout, 500
        steps: loss 0.0588 against TF1's 0.0606)."""
        for statement in self.statements:
            if statement.kind is not Kind.TRAIN or statement.optimizer is None:
                continue
            path = self.optimizer_path(statement) or ""
            if path.endswith("GradientDescentOptimizer"):  # (no state: kept only where tf-keras's SGD, which a
                kept = self.tf1_updates and self._looks_up(statement)  # pinned module runs, applies a sparse
            else:                                                       # gradient in other last digits)
                kept = self.tf1_updates or self._looks_up(statement)
            if not kept:
                continue
            self.tf1_optimizers.add(statement.optimizer_name or code(statement.optimizer))

    def _looks_up(self, train: Statement) -> bool:
        """Whether the graph a training step differentiates gathers rows of a tensor."""
        todo, seen = [train], set()
        while todo:
            statement = todo.pop()
            if id(statement) in seen:
                continue
            seen.add(id(statement))
            if statement.node is not None and any(self.tf_call(call) in SPARSE_GRADIENTS
                                                  for call in calls_in(statement.node)):
                return True
            todo += list(statement.deps.values())
        return False

    def _map_model_functions(self) -> None:
        """Each call of a TF1 model function gets the tracked object it runs through: one per
        function when it shares its variables by scope name, one per call site when TF1 made new
        ones at each call (model_mapping)."""
        own = {name: b for name, b in self.builders.items() if b.node is not None}
        imported = {name: b for name, b in self.builders.items() if b.node is None}
        sites = {id(call) for b in self.builders.values() for call in b.sites}
        for call in calls_in(self.module) if self.imported.models else ():  # (most scripts: no second walk)
            spelled = dotted(call.func)
            if spelled in self.imported.models and id(call) not in sites:
                raise Blocked(self.line_of(call), f"`{spelled}(...)`, a model function of the project, called other "
                                                  "than by a graph statement at module level")
        if imported:
            try:
                imported_models.check_calls({name: b.sites for name, b in imported.items()}, self.imported.shares)
            except imported_models.Refused as why:
                raise Blocked(self.line_of(why.call or next(iter(imported.values())).sites[0]), str(why))
            self.imported_store = self.fresh("tf1_imports")
            for b in imported.values():
                b.objects.update({id(call): self.imported_store for call in b.sites})
        self._imported_draws_pinned()
        if not own:
            return
        try:
            model_mapping.check_sharing(own)
        except model_mapping.Refused as why:
            raise Blocked(self.line_of(next(iter(own.values())).node), str(why))
        sites |= {id(call) for b in own.values() for call in calls_in(b.node)}  # (inside their objects)
        for call in calls_in(self.module):
            if isinstance(call.func, cst.Name) and call.func.value in own and id(call) not in sites:
                raise Blocked(self.line_of(call), f"`{call.func.value}(...)`, a TF1 model function called other "
                                                  "than by a graph statement at module level")
        for b in own.values():
            shared = self.fresh(f"{b.name}_model") if (b.scoped or b.shared_by_scope) and b.sites else None
            for call in b.sites:
                b.objects[id(call)] = shared or self.fresh(f"{b.name}_model")

    def _imported_draws_pinned(self) -> None:
        """Under a graph seed, a function of the project that draws is called only where native.op_seeds
        gave the script TF1's op seeds (its first drawing model function's variables): else eager
        TF2 would print other numbers than the program printed, for a reason in another file."""
        if self.pinned or not self.imported.draws or not self.graph_seeded():
            return
        for call in calls_in(self.module):
            spelled = dotted(call.func)
            if spelled is not None and self.imported.allowed(spelled) and self.imported.draws.get(spelled):
                raise Blocked(self.line_of(call), f"`{spelled}`, a function of the project that draws under the graph "
                              "seed where TF1's op seeds are not written out (it draws at each run, or after other "
                              "draws): eager TF2 would draw, and print, other numbers")

    def _imported_site(self, spelled: str, call: cst.Call) -> None:
        """A call of a model function of the project in a graph statement: through the store
        (native.imported_models), under no module-level variable scope (the store names its
        variables without it); the first draw's TF1 op seed, where native.op_seeds wrote it."""
        if self.scope:
            raise Blocked(self.line_of(call), f"`{spelled}`, a model function of the project called under the "
                                              f"module-level variable scope `{'/'.join(self.scope)}`")
        found = self.builders.setdefault(spelled, model_mapping.Builder(spelled, None, True, [], True))
        found.sites.append(call)
        found.site_scopes[id(call)] = ("", self.reusing())
        seed = next((a.value for a in call.args if a.keyword is not None
                     and a.keyword.value == imported_models.SEED_KEYWORD), None)
        if seed is not None:
            self.imported_first_seed = int(seed.value)

    def _placeholder_helpers_in(self, node) -> List[str]:
        """The helpers `node` calls that read the module's placeholders (each call must pass them)."""
        return sorted(h for h in names_read(node) & set(self.helper_placeholders) if self.helper_placeholders[h])

    def _no_placeholder_helpers(self, node, at: int, name: str) -> None:
        """A function calling a helper that reads placeholders would have to pass them on: not done."""
        given = self._placeholder_helpers_in(node)
        if given:
            raise Blocked(at, f"`{name}`, a function that calls `{given[0]}`, which reads the module's placeholders")

    def _stateful_calls(self) -> None:
        """A call of a function from a checked module that makes variables (`get_variable`,
        `tf.layers`: TF1 model code): in a `tf.function` it would make them again at each trace,
        or fail; until such code is mapped into tracked layers, the script keeps the compat route."""
        if not self.stateful:
            return
        bound: Dict[str, str] = {}
        for node in self.module.body:
            for small in (node.body if isinstance(node, cst.SimpleStatementLine) else ()):
                if isinstance(small, cst.ImportFrom) and not isinstance(small.names, cst.ImportStar):
                    module = "." * len(small.relative) + (dotted(small.module) or "" if small.module else "")
                    if module in self.stateful:
                        for alias in small.names:
                            bound[dotted(alias.asname.name) if alias.asname else dotted(alias.name)] = module
                elif isinstance(small, cst.Import):
                    for alias in small.names:
                        if dotted(alias.name) in self.stateful:
                            local = dotted(alias.asname.name) if alias.asname else dotted(alias.name)
                            bound[local] = dotted(alias.name)
        if not bound:
            return
        for call in calls_in(self.module):
            name = dotted(call.func) or ""
            head = next((b for b in sorted(bound, key=len, reverse=True) if name == b or name.startswith(b + ".")), None)
            if head is not None and self.imported.allowed(name):
                continue  # (a pure function, or a model function through the store: _map_model_functions)
            if head is not None and name in self.imported.untracked:
                raise Blocked(self.line_of(call), f"`{name}` from `{bound[head]}`, a function that makes state a "
                              "tracked call would not find again by name (`tf.Variable`, a Keras layer, an RNN "
                              "cell, a module-level counter): TF1 model code this rewrite does not map yet")
            if head is not None:
                raise Blocked(self.line_of(call), f"`{name}` from `{bound[head]}`, a module that makes variables "
                              "(`get_variable`, `tf.layers`, ...): TF1 model code this rewrite does not map yet")

    def _only_configures_sessions(self, name: str) -> bool:
        """A `tf.ConfigProto()` only set up (`config.x.y = v`) and given to Sessions: eager TF2
        has no Session to give it to, so it goes with them."""
        rest = re.sub(rf"\bconfig[ \t]*=[ \t]*{name}\b", "", self.source)  # given to a Session
        rest = re.sub(rf"([(,][ \t]*){name}[ \t]*=(?!=)", r"\1", rest)  # a keyword of that name
        uses = len(re.findall(rf"(?<![\w.]){name}\b", rest))
        settings = len(re.findall(rf"^[ \t]*{name}(?:\.\w+)+[ \t]*=(?!=)", rest, re.MULTILINE))
        return uses == 1 + settings

    def _top(self, node: cst.CSTNode) -> None:
        if isinstance(node, cst.With) and self._graph_with(node):
            self._graph_depth += 1
            try:
                for inner in node.body.body:
                    self._top(inner)
            finally:
                self._graph_depth -= 1
            return
        if isinstance(node, cst.With) and self._session_with(node):
            of_graph = any(a.keyword is not None and a.keyword.value == "graph" for a in node.items[0].item.args) \
                if isinstance(node.items[0].item, cst.Call) else False
            self._graph_depth += of_graph
            try:
                for inner in node.body.body:
                    self._top(inner)
            finally:
                self._graph_depth -= of_graph
            return
        if isinstance(node, cst.With) and self._seeded_cell_scope(node):
            self._top(node.body.body[0])
            run = self.current[-1] if self.current else None
            if run is None or run.node is not node.body.body[0] or run.kind is not Kind.GRAPH:
                raise Blocked(self.line_of(node), "a variable scope's initializer around other than an RNN's run")
            self.scope_initializers[id(run.node)] = node.items[0].item
            return
        if isinstance(node, cst.With) and self._scope_with(node):
            call = node.items[0].item
            path = self.tf_call(call)
            scoped = path == "variable_scope"
            if scoped:
                name = call.args[0].value if call.args else None
                if not isinstance(name, cst.SimpleString):
                    raise Blocked(self.line_of(node), "a `tf.variable_scope` whose name is not a literal")
                self.scope.append(name.evaluated_value)
                self.reuse.append(self._reuse_mode(call))
            named = path in ("variable_scope", "name_scope")
            if named:
                self.name_scopes.append(self._name_scope(call))
            alias = node.items[0].asname
            for inner in node.body.body:
                if alias is not None and self._reuses_variables(inner, alias.name.value):
                    self.reuse[-1] = "reuse"  # `scope.reuse_variables()`: the calls after it share
                    drop = Statement(inner, Kind.DROP, self.line_of(inner), top=inner)
                    self.statements.append(drop)
                    self.current.append(drop)
                    continue
                self._top(inner)
            if scoped:
                self.scope.pop()
                self.reuse.pop()
            if named:
                self.name_scopes.pop()
            return
        if isinstance(node, cst.With) and batch_norm.updates_with(self, node, self.update_collections):
            self._updates_with(node)
            return
        if self._update_collection(node):
            return
        histograms = self._variable_histograms(node)
        if histograms is not None:
            self.statements.append(histograms)
            self.current.append(histograms)
            return
        if (isinstance(node, cst.If) and (self._mentions_tf(node) or names_read(node) & self.graph_names())
                or isinstance(node, cst.For) and names_read(node) & self.graph_names() and _assigns_only(node.body)) \
                and not self._runs(node):
            statement = self._graph_block(node)
            statement.top = node
            self.statements.append(statement)
            self.current.append(statement)
            return
        if isinstance(node, cst.If) and node.orelse is None and self._runs(node) \
                and not names_read(node.test) & (self.graph_names() | self.sessions):
            self._block(node)
            return
        if isinstance(node, cst.SimpleStatementLine) and len(node.body) == 1:
            statement = self._simple(node, node.body[0])
        else:
            statement = self._python(node)
        if self.graph_objects and not self._graph_depth and statement.kind in (Kind.GRAPH, Kind.VARIABLE,
                                                                               Kind.PLACEHOLDER, Kind.TRAIN):
            raise Blocked(statement.line, "graph code outside `with graph.as_default():` in a script that makes "
                                          "a `tf.Graph()` (it went into another graph)")
        if self.reusing() and (statement.kind is Kind.VARIABLE or statement.layers):
            raise Blocked(self.line_of(node), "a variable or a `tf.layers` layer made at module level under a "
                                              "variable scope that reuses variables (TF1 returned the existing one)")
        statement.top = node
        statement.scope = "/".join(self.scope)
        self.statements.append(statement)
        self.current.append(statement)

    def _update_collection(self, node) -> bool:
        """`update_ops = tf.get_collection(tf.GraphKeys.UPDATE_OPS)`: dropped; the training op made
        under its `control_dependencies` is what runs the updates (native.batch_norm)."""
        if not (isinstance(node, cst.SimpleStatementLine) and len(node.body) == 1
                and isinstance(node.body[0], cst.Assign) and len(node.body[0].targets) == 1
                and isinstance(node.body[0].targets[0].target, cst.Name)
                and batch_norm.is_update_collection(self, node.body[0].value)):
            return False
        self.update_collections[node.body[0].targets[0].target.value] = 0
        self.updates_read = True
        drop = Statement(node, Kind.DROP, self.line_of(node), top=node)
        self.statements.append(drop)
        self.current.append(drop)
        return True

    def _updates_with(self, node: cst.With) -> None:
        """`with tf.control_dependencies(update_ops): train_op = opt.minimize(loss)`: a training
        step that runs the batch-norm updates (Keras makes them in its training-mode calls)."""
        value = node.items[0].item.args[0].value
        if isinstance(value, cst.Name):
            self.update_collections[value.value] += 1
        self.updates_read = True
        for inner in node.body.body:
            before = len(self.statements)
            self._top(inner)
            made = self.statements[before:]
            if not made or any(s.kind is not Kind.TRAIN for s in made):
                raise Blocked(self.line_of(inner), "`tf.control_dependencies(update_ops)` around something other "
                                                   "than `train_op = optimizer.minimize(loss)`")
            for statement in made:
                statement.updates = True

    def reusing(self) -> str:
        """How the variable scopes around the statement reuse variables: "reuse" (`reuse=True`,
        or after `scope.reuse_variables()`; inherited by inner scopes), "auto" (`tf.AUTO_REUSE`), ""."""
        return "reuse" if "reuse" in self.reuse else "auto" if "auto" in self.reuse else ""

    def _reuse_mode(self, call: cst.Call) -> str:
        reuse = next((a.value for a in call.args if a.keyword is not None and a.keyword.value == "reuse"), None)
        if reuse is None or code(reuse) in ("False", "None"):
            return ""
        if code(reuse) == "True":
            return "reuse"
        return "auto"  # (_scope_with let only `tf.AUTO_REUSE` through)

    def _reuses_variables(self, node: cst.CSTNode, alias: str) -> bool:
        """`scope.reuse_variables()`, a statement of the `with ... as scope` block."""
        if not (isinstance(node, cst.SimpleStatementLine) and len(node.body) == 1 and isinstance(node.body[0], cst.Expr)):
            return False
        call = node.body[0].value
        return isinstance(call, cst.Call) and not call.args and isinstance(call.func, cst.Attribute) \
            and call.func.attr.value == "reuse_variables" and isinstance(call.func.value, cst.Name) \
            and call.func.value.value == alias

    def _name_scope(self, call: cst.Call) -> Optional[str]:
        """The name scope `with tf.name_scope("n")` / `variable_scope("n")` opens: `outer/n/`, made
        unique as TF1 made it (None: a name that is not a literal)."""
        name = call.args[0].value if call.args else None
        outer = self.name_scopes[-1] if self.name_scopes else ""
        if outer is None or not isinstance(name, cst.SimpleString):
            return None
        return self.tf1_names.unique(f"{outer}{name.evaluated_value}") + "/"

    def _graph_with(self, node: cst.With) -> bool:
        """`with graph.as_default():` of the script's one `graph = tf.Graph()`, or `with
        tf.Graph().as_default():`: the graph is built in it (a new graph: TF1's names start
        afresh), and eager TF2 builds the same without it; `with tf.Graph().as_default() as g:` names
        that graph (for `Session(graph=g)`). More than one graph is refused."""
        if len(node.items) != 1:
            return False
        item, alias = node.items[0].item, node.items[0].asname
        if not (isinstance(item, cst.Call) and not item.args and isinstance(item.func, cst.Attribute)
                and item.func.attr.value == "as_default"):
            return False
        owner = item.func.value
        if alias is None and isinstance(owner, cst.Name) and owner.value in self.graph_objects:
            name = owner.value
            self._graph_uses.append(name)
        elif self.tf_call(owner, "Graph") and not owner.args and (alias is None or isinstance(alias.name, cst.Name)):
            name = alias.name.value if alias is not None else ""  # (the alias: the graph's one assignment)
            if name in self._graph_blocks:
                raise Blocked(self.line_of(node), "more than one graph (`tf.Graph()`), or graph code before it")
            self._graph_uses.append("")
        else:
            return False
        self._graph_blocks.append(name)
        if len(set(self._graph_blocks)) > 1 or self._graph_blocks.count("") > 1 or self.graph_names():
            raise Blocked(self.line_of(node), "more than one graph (`tf.Graph()`), or graph code before it")
        if not isinstance(owner, cst.Name):
            self.graph_objects.add(name)
        self._new_graph()
        return True

    def _session_with(self, node: cst.With) -> bool:
        """`with tf.Session() as sess:`, or `with sess.as_default():` of a session made before
        (what its `t.eval()` / `op.run()` use): its body is module-level code."""
        if len(node.items) == 1 and node.items[0].asname is None and _as_default_of(node.items[0].item, self.sessions):
            return True
        if len(node.items) != 1 or not self.tf_call(node.items[0].item, *SESSIONS):
            return False
        item = node.items[0]
        if item.asname is None or not isinstance(item.asname.name, cst.Name):
            raise Blocked(self.line_of(node), "a Session used without a name")
        self._session_args(item.item)
        self.sessions.add(item.asname.name.value)
        return True

    def _block(self, node: cst.If) -> None:
        """`if <Python test>:` around graph statements and their runs (a branch taken at most
        once, like module-level code): its body is read as module-level code, and written back
        under the same `if`."""
        block = Statement(node, Kind.BLOCK, self.line_of(node), top=node, scope="/".join(self.scope))
        self.statements.append(block)
        self.current.append(block)
        outer, self.current = self.current, block.children
        try:
            for inner in node.body.body:
                self._top(inner)
        finally:
            self.current = outer

    def _scope_with(self, node: cst.With) -> bool:
        """`with tf.name_scope(...)` / `tf.device(...)` / `tf.variable_scope(name)`: they only
        name (or place) what is built inside; eager TF2 builds the same without them."""
        if len(node.items) != 1:
            return False
        call = node.items[0].item
        path = self.tf_call(call, "name_scope", "device", "variable_scope")
        alias = node.items[0].asname
        if alias is not None and (not isinstance(alias.name, cst.Name) or len(
                re.findall(rf"\b{alias.name.value}\b", self.source)) > 1) and not (
                path == "variable_scope" and self._only_reuses(node)):
            return False  # the scope object is used
        if path is None:
            return False
        if path == "variable_scope" and any(
                (a.keyword is not None and a.keyword.value not in ("name_or_scope", "reuse", "initializer")
                 or a.keyword is None and a is not call.args[0])
                or a.keyword is not None and a.keyword.value == "reuse" and not self._literal_reuse(a.value)
                or a.keyword is not None and a.keyword.value == "initializer" and not self._tf1_default(a.value)
                for a in call.args):
            raise Blocked(self.line_of(node), "`tf.variable_scope` with arguments other than a name, "
                                              "`reuse=True` / `tf.AUTO_REUSE` and TF1's default initializer")
        return True

    def _tf1_default(self, initializer: cst.BaseExpression) -> bool:
        """`tf.glorot_uniform_initializer()` (or contrib's `xavier_initializer()`), unseeded: what TF1
        gave a variable made without an initializer anyway, and what the eager code gives it
        (get_variable's Glorot, the model functions' `TF1Model`, Keras' kernels)."""
        return self.tf_call(initializer, *DEFAULT_INITIALIZERS) is not None and not initializer.args

    def _seeded_cell_scope(self, node: cst.With) -> bool:
        """`with tf.variable_scope(tf.get_variable_scope(), initializer=<seeded>):` around one statement,
        as native.op_seeds writes TF1's seed of an RNN cell's kernel (the cell draws it at its first
        run): kept around that statement in each function that runs it (native.emit)."""
        if not (self.pinned and len(node.items) == 1 and node.items[0].asname is None
                and len(node.body.body) == 1 and isinstance(node.body.body[0], cst.SimpleStatementLine)):
            return False
        call = node.items[0].item
        if self.tf_call(call) != "variable_scope" or len(call.args) != 2:
            return False
        first, given = call.args
        return first.keyword is None and self.tf_call(first.value) == "get_variable_scope" and not first.value.args \
            and given.keyword is not None and given.keyword.value == "initializer" \
            and self.tf_call(given.value) == "glorot_uniform_initializer" and len(given.value.args) == 1 \
            and given.value.args[0].keyword is not None and given.value.args[0].keyword.value == "seed" \
            and isinstance(given.value.args[0].value, cst.Integer)

    def _literal_reuse(self, value) -> bool:
        return code(value) in ("True", "False", "None") or self.api(value) in ("AUTO_REUSE", "compat.v1.AUTO_REUSE")

    def _only_reuses(self, node: cst.With) -> bool:
        """`with tf.variable_scope("model") as scope:` whose scope object module-level code only uses
        for `scope.reuse_variables()` statements of the block (functions have scopes of their own)."""
        alias = node.items[0].asname.name
        if not isinstance(alias, cst.Name):
            return False
        uses = sum(names_in(top).count(alias.value) for top in self.module.body
                   if not isinstance(top, (cst.FunctionDef, cst.ClassDef)))
        calls = sum(self._reuses_variables(inner, alias.value) for inner in node.body.body)
        return calls > 0 and uses == 1 + calls

    def _graph_block(self, node) -> Statement:
        """An `if` at module level that builds tensors in its branches (a Python switch between
        two graphs), or a `for` loop that builds them (`for i in range(3): h = tf.nn.relu(
        tf.matmul(h, w[i]))`, unrolled into the graph as TF1 did): it goes as it is into the
        functions that need what it defines, where the trace unrolls it the same way."""
        at = self.line_of(node)
        graph = self.graph_names()
        what = "an `if`" if isinstance(node, cst.If) else "a `for` loop"
        node.visit(_StateFree(self, at, f"{what} at module level that builds graph state"))
        if isinstance(node, cst.If) and names_read(node.test) & graph:
            raise Blocked(at, "an `if` on a tensor")
        containers = {n for n in graph if self.kinds.get(n) is Kind.VARIABLE and self.defs[n].container}
        if isinstance(node, cst.For) and (names_read(node.iter) & graph - containers or node.orelse is not None
                                          or _exits(node.body)):
            raise Blocked(at, "a `for` loop over a tensor, or with `else`, `break` or `return`")
        given = self._placeholder_helpers_in(node)
        if given:
            raise Blocked(at, f"{what} at module level calling `{given[0]}`, which reads the module's placeholders")
        targets = tuple(sorted(names_assigned(node)))
        statement = Statement(node, Kind.GRAPH, at, targets)
        statement.reads = names_read(node) & graph
        statement.deps = {name: self.defs[name] for name in statement.reads if name in self.defs}
        for name in targets:
            self.kinds[name] = Kind.GRAPH
            self.defs[name] = statement
        return statement

    def _session_args(self, call: cst.Call) -> None:
        for arg in call.args:
            if arg.keyword is not None and arg.keyword.value == "graph" and isinstance(arg.value, cst.Name) \
                    and arg.value.value in self.graph_objects:
                self._graph_uses.append(arg.value.value)
                continue  # the script's one graph
            if arg.keyword is None or arg.keyword.value != "config":
                raise Blocked(self.line_of(call), f"`Session({code(arg).rstrip(', ')})`")

    def _simple(self, line: cst.SimpleStatementLine, small: cst.BaseSmallStatement) -> Statement:
        at = self.line_of(line)
        if isinstance(small, cst.Import) and any(dotted(a.name) == "tensorflow.compat.v1" for a in small.names):
            if len(small.names) != 1 or small.names[0].asname is None:
                raise Blocked(at, "an `import tensorflow.compat.v1` without an alias of its own")
            return Statement(line, Kind.IMPORT_V1, at)  # the compat route's import: back to `tensorflow`
        if isinstance(small, (cst.Import, cst.ImportFrom)):
            return self._python(line)
        if isinstance(small, cst.Expr):
            value = small.value
            if self.tf_call(value, *EAGER_STATEMENTS):
                return Statement(line, Kind.EAGER, at)
            if self.tf_call(value, *SUMMARY_OPS):
                return self._summary(Statement(line, Kind.GRAPH, at), value)
            if self.tf_call(value, "disable_v2_behavior", "disable_eager_execution") or code(value).replace(
                    "'", '"') == 'os.environ.setdefault("TF_USE_LEGACY_KERAS", "1")':
                return Statement(line, Kind.DROP, at)  # the compat route's switches
            if self.tf_call(value, "reset_default_graph") or (
                    isinstance(value, cst.Call) and (dotted(value.func) or "").endswith("ops.reset_default_graph")):
                self._new_graph()
                return Statement(line, Kind.DROP, at)
            if self._initializer_run(value):
                return Statement(line, Kind.DROP, at)
            if self.tf_call(value, own_collections.ADD):
                return self._collection_add(line, value, at)
            if isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute) \
                    and isinstance(value.func.value, cst.Name) and value.func.value.value in self.sessions:
                method = value.func.attr.value
                if method == "close":
                    return Statement(line, Kind.DROP, at)
                if method == "run" and self._restart(value) is not None:
                    return self._python(line)
                if method == "run" and value.args and self._is_init(value.args[0].value):
                    if len(value.args) > 1:
                        raise Blocked(at, "an initializer run with a feed")
                    return Statement(line, Kind.DROP, at)
            return self._python(line)
        if isinstance(small, cst.Assign) and len(small.targets) == 1:
            targets = self._target_names(small.targets[0].target)
            if targets is not None:
                return self._assign(line, small, targets)
        return self._python(line)

    def _initializer_run(self, value) -> bool:
        """`init.run()` / `tf.global_variables_initializer().run()` (an InteractiveSession's
        default session, or `session=sess`): as `sess.run(init)`, nothing to do eagerly."""
        if not (isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute)
                and value.func.attr.value == "run" and self._is_init(value.func.value)):
            return False
        try:
            bound = bind(value, ("feed_dict", "session"))
        except ValueError:
            return False
        session = bound.get("session")
        if "feed_dict" in bound:
            raise Blocked(self.line_of(value), "an initializer run with a feed")
        return session is None or isinstance(session, cst.Name) and session.value in self.sessions

    def _runs(self, node: cst.CSTNode) -> bool:
        """Whether `node` calls `run` on a session, or evaluates a tensor (`loss.eval(feed)`,
        `op.run(feed)`), as Python code does."""
        sessions = self.sessions
        script = self

        class _Run(cst.CSTVisitor):
            found = False

            def visit_Call(self, call: cst.Call) -> None:
                func = call.func
                if isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name) and (
                        func.attr.value == "run" and func.value.value in sessions
                        or func.attr.value in ("run", "eval") and func.value.value in script.graph_names()) \
                        or script._evaluated_expression(call):
                    _Run.found = True

        visitor = _Run()
        node.visit(visitor)
        return _Run.found

    def _new_graph(self) -> None:
        """`reset_default_graph()`: what follows builds a new graph; the old one's names are gone
        (the Python objects they named stay, as in TF1)."""
        self.tf1_names.reset()
        for name, kind in list(self.kinds.items()):
            if kind in (Kind.GRAPH, Kind.PLACEHOLDER, Kind.TRAIN, Kind.INIT):
                del self.kinds[name]
                self.defs.pop(name, None)
                self.placeholders.pop(name, None)

    def _target_names(self, target) -> Optional[Tuple[str, ...]]:
        """The names a target binds, nested tuples flattened (`outputs, (c, h) = dynamic_rnn(...)`)."""
        if isinstance(target, cst.Name):
            return (target.value,)
        if isinstance(target, (cst.Tuple, cst.List)):
            names: Tuple[str, ...] = ()
            for element in target.elements:
                inner = self._target_names(element.value) if not isinstance(element, cst.StarredElement) else None
                if inner is None:
                    return None
                names += inner
            return names
        return None

    def _is_init(self, node) -> bool:
        if self.tf_call(node, *INITIALIZERS):
            return True
        if self.tf_call(node, "group") and node.args and all(self._is_init(a.value) for a in node.args):
            return True
        if isinstance(node, (cst.List, cst.Tuple)) and node.elements and all(  # `sess.run([global, local])`
                self._is_init(e.value) for e in node.elements):
            return True
        return isinstance(node, cst.Name) and self.kinds.get(node.value) is Kind.INIT

    def _assign(self, line, small: cst.Assign, targets: Tuple[str, ...]) -> Statement:
        at = self.line_of(line)
        self._line_of_lambda = line
        value = small.value
        graph = self.graph_names()
        kind = None
        statement = Statement(line, Kind.GRAPH, at, targets)
        if self._runs(value):
            return self._python(line)
        path = self.tf_call(value)
        if path == "Graph" and not value.args and len(targets) == 1:
            if self.graph_objects or self.graph_names():
                raise Blocked(at, "more than one graph (`tf.Graph()`), or graph code before it")
            self.graph_objects.add(targets[0])
            return Statement(line, Kind.DROP, at)  # the graph its `with graph.as_default():` builds
        if path in SESSIONS:
            self._session_args(value)
            self.sessions.add(targets[0])
            kind = Kind.SESSION
        elif self._is_init(value):
            kind = Kind.INIT
        elif path in SUMMARY_OPS:
            return self._summary(statement, value)
        elif path == "summary.merge_all":
            return self._merge_all(statement, value)
        elif path == "summary.FileWriter":
            kind = Kind.WRITER
            if not value.args or value.args[0].keyword not in (None,) and value.args[0].keyword.value != "logdir":
                raise Blocked(at, "a `FileWriter` without a log directory")
        elif path in checkpoints.CHECKPOINT_FILES:
            return self._python(line)  # a file name: Python
        elif path == "train.Saver":
            kind = Kind.SAVER
            self._saver(statement, value)
        elif path in PLACEHOLDERS:
            kind = Kind.PLACEHOLDER
            self._placeholder(statement, value, path)
        elif path in VARIABLES:
            kind = Kind.VARIABLE
            self._variable(statement, value, path)
        elif path in STEP_MAKERS and not value.args:
            kind = Kind.VARIABLE  # TF1's `global_step` variable: eagerly the same call makes it, once
            statement.trainable = False
        elif isinstance(value, cst.Call) and isinstance(value.func, cst.Name) and value.func.value in self.factories:
            if names_read(value) & graph:
                raise Blocked(at, f"`{value.func.value}(...)` of a tensor")
            kind = Kind.VARIABLE  # `A1 = init_weights([9, 81])`: made once, at module level
        elif isinstance(value, cst.Dict) and value.elements and all(
                isinstance(e, cst.DictElement) and isinstance(e.key, cst.Name)
                and self.kinds.get(e.key.value) is Kind.PLACEHOLDER for e in value.elements):
            return self._python(line)  # a feed built ahead (see sites_of)
        elif len(targets) == 1 and self._variable_dict(value):
            kind = Kind.VARIABLE  # `weights = {"h1": tf.Variable(...), ...}`: made once, at module level
            statement.container = "dict"
        elif len(targets) == 1 and self._variables_of(value) is not None:
            kind = Kind.VARIABLE  # `weights = [tf.Variable(...) for i in range(3)]`: made once, at module level
            statement.container = "list"
        elif len(targets) > 1 and self._variables_of(value) is not None:
            made = self._variables_of(value)
            named = len(made) == len(targets) and not isinstance(value, cst.ListComp)
            if not named:
                self.tf1_names.refuse("variables made by a comprehension")
            for i, name in enumerate(targets):  # `a, b = [tf.Variable(p) for p in ...]`: several variables
                variable = Statement(line, Kind.VARIABLE, at, (name,), top=statement)
                self.kinds[name] = Kind.VARIABLE
                self.defs[name] = variable
                if named:
                    self._name_variable(name, made[i])
            statement.kind = Kind.VARIABLE
            return statement
        elif isinstance(value, cst.Lambda) and self._mentions_tf(value):
            return self._helper(value, at, targets[0])
        elif path in SCHEDULES and len(targets) == 1:
            kind = Kind.GRAPH
            self._schedule(statement, value, path)
        elif self._is_cell(value, path, targets):
            kind = Kind.OBJECT
            self.cells.add(targets[0])
            self.tf1_names.refuse("an RNN cell (its variables exist only after its first call)")
        elif self._is_object(value, path):
            kind = Kind.OBJECT
            if path in KEPT_TF1 or path in OPTIMIZERS and self._scheduled(value) is not None:
                self.tf1_optimizers.add(targets[0])  # (a Keras optimizer would read its own iterations)
            if path in ("ConfigProto", "GPUOptions") and len(targets) == 1:
                self.configs.add(targets[0])
        elif isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute) and value.func.attr.value == "minimize":
            kind = Kind.TRAIN
            self._train(statement, value)
        elif self._metric(statement, value):
            kind = Kind.GRAPH
        elif self._data(statement, value, targets):
            kind = statement.kind
        elif self._mentions_tf(value) or names_read(value) & (graph | self.helpers) or self._builds_imported(value):
            kind = Kind.GRAPH
            self._graph(statement, value)
        if kind is None:
            return self._python(line)
        if len(targets) != 1 and kind not in (Kind.GRAPH, Kind.NEXT):
            raise Blocked(at, "a tuple assignment of a graph object")
        statement.kind = kind
        if kind in (Kind.GRAPH, Kind.VARIABLE, Kind.TRAIN, Kind.PLACEHOLDER, Kind.NEXT):
            statement.reads = names_read(value) & graph
            for helper in names_read(value) & self.helpers:  # the module's variables a helper reads
                statement.reads |= self.helper_variables.get(helper, set())
                statement.reads |= self.helper_placeholders.get(helper, set())
            if kind is Kind.TRAIN:  # an optimizer's schedule is read by the optimizer itself
                statement.reads -= set(self.schedules)
            statement.deps = {name: self.defs[name] for name in statement.reads if name in self.defs}
        if kind is Kind.GRAPH:
            self._collection_deps(statement, value)
        for name in targets:
            self.kinds[name] = kind
            self.defs[name] = statement
        if kind is Kind.TRAIN and targets[0] in self.norm_names:  # its norm: given back by the step
            statement.norm_name = self.norm_names[targets[0]]
            self.kinds[statement.norm_name] = kind
            self.defs[statement.norm_name] = statement
        if kind is Kind.PLACEHOLDER:
            self.placeholders[targets[0]] = statement
        if kind is Kind.VARIABLE:
            self._name_variables(statement, value)
        for name, call in statement.tracked:
            if self.builders[name].node is None:
                self.tf1_names.refuse(f"`{name}`, a model function of the project (TF1's names of its variables "
                                      "are not read here)")
            elif self.scope:
                self.tf1_names.refuse(f"`{name}`, a TF1 model function called under the module-level variable "
                                      f"scope `{'/'.join(self.scope)}` (the eager object names its variables "
                                      "without it)")
            elif self.builders[name].scoped:
                self.tf1_names.tracked(name, id(call))
            else:
                self.tf1_names.refuse(f"`{name}`, a TF1 model function that makes its variables outside a "
                                      "`variable_scope` (their TF1 names went on from the module's)")
        return statement

    def _name_variables(self, statement: Statement, value) -> None:
        """TF1's checkpoint names of the variables a module-level statement makes (checkpoints)."""
        target = statement.targets[0]
        if statement.container == "dict":
            for element in value.elements:
                self._name_variable(f'{target}["{element.key.evaluated_value}"]', element.value)
        elif statement.container == "list" and isinstance(value, cst.ListComp):
            self.tf1_names.refuse("variables made by a comprehension")
        elif statement.container == "list":
            for i, element in enumerate(value.elements):
                self._name_variable(f"{target}[{i}]", element.value)
        elif self.tf_call(value, *VARIABLES):
            self._name_variable(target, value)
        elif isinstance(value, cst.Call) and isinstance(value.func, cst.Name) and value.func.value in self.factories:
            self._name_variable(target, self.factory_variables[value.func.value])
        else:
            self.tf1_names.refuse(f"`{target}`, variables made by `{code(value)[:40]}`")

    def _name_variable(self, expression: str, call: cst.Call) -> None:
        path = self.tf_call(call)
        name = next((a.value for a in call.args if a.keyword is not None and a.keyword.value == "name"), None)
        if path == "get_variable":
            name = call.args[0].value if call.args and call.args[0].keyword is None else name
        if name is not None and not isinstance(name, cst.SimpleString):
            self.tf1_names.refuse(f"`{expression}`, a variable whose name is not a literal")
            return
        text = name.evaluated_value if name is not None else None
        if path == "get_variable":
            self.tf1_names.get_variable(expression, text, "/".join(self.scope))
        else:
            self.tf1_names.variable(expression, text, self.name_scopes[-1] if self.name_scopes else "")

    def _name_layer(self, layer_object: str, function: str, call: cst.Call, named: Optional[cst.Arg]) -> None:
        if named is not None and not isinstance(named.value, cst.SimpleString):
            self.tf1_names.refuse(f"`tf.layers.{function}`, a layer whose name is not a literal")
            return
        bias = next((a.value for a in call.args if a.keyword is not None and a.keyword.value == "use_bias"), None)
        if bias is not None and code(bias) not in ("True", "False"):
            self.tf1_names.refuse(f"`tf.layers.{function}(use_bias=...)` that is not a literal")
            return
        self.tf1_names.layer(layer_object, function, named.value.evaluated_value if named is not None else None,
                             "/".join(self.scope), bias is None or code(bias) == "True")

    def _saver(self, statement: Statement, call: cst.Call) -> None:
        """`saver = tf.train.Saver(max_to_keep=...)`: the variables made so far, by TF1's names
        (`var_list=`: those it lists, `_listed_saved`)."""
        listed = None
        for index, arg in enumerate(call.args):
            if arg.keyword is not None and arg.keyword.value == "var_list" or arg.keyword is None and index == 0:
                listed = self._listed_saved(arg.value)
                if listed is not None:
                    continue
            if arg.keyword is None or arg.keyword.value not in checkpoints.SAVER_OPTIONS:
                raise Blocked(statement.line, f"`tf.train.Saver({code(arg).rstrip(', ')})`")
        if listed is not None:
            statement.saved = listed
            return
        if self.tf1_names.unknown:
            raise Blocked(statement.line, f"`tf.train.Saver` over {self.tf1_names.unknown}: TF1's checkpoint "
                                          "names of its variables are not known")
        if not self.tf1_names.saved:
            raise Blocked(statement.line, "`tf.train.Saver` with no variables made before it (TF1 raised "
                                          "`ValueError: No variables to save`)")
        statement.saved = self.tf1_names
        self.tf1_names = self.tf1_names.copy()
        if self.tf1_names.layered:  # the layers must have made their variables: traced first
            statement.reads = {n for s in self.statements if s.layers or s.tracked for n in s.targets}
            statement.deps = dict(self.defs)
        if statement.saved.optimizers:  # and the optimizers their state: their training steps traced first
            untraced = next((why for why in map(self._untraceable, statement.saved.trained) if why), None)
            if untraced:
                self._unsaved_state.append((statement.line, untraced))
                statement.saved.optimizers, statement.saved.trained = {}, []
            else:
                self.tf1_optimizers |= set(statement.saved.optimizers)
                statement.reads = statement.reads | set(statement.saved.trained)
                statement.deps = dict(self.defs)

    def _listed_saved(self, node) -> Optional[checkpoints.GraphNames]:
        """The names of `Saver(var_list={"poly/w": w, ...})` (its keys) or `Saver([w, b])` (TF1's
        names of those variables), each a variable made by `tf.Variable` / `get_variable` at module
        level, whose eager variable is that name; None for any other list."""
        made = {expression: name for name, expression, weight in self.tf1_names.saved if not weight}
        if self.tf1_names.unknown:
            return None
        pairs = []
        if isinstance(node, cst.Dict):
            for element in node.elements:
                if not (isinstance(element, cst.DictElement) and isinstance(element.key, cst.SimpleString)
                        and isinstance(element.value, cst.Name) and element.value.value in made
                        and self.kinds.get(element.value.value) is Kind.VARIABLE):
                    return None
                pairs.append((element.key.evaluated_value, element.value.value))
        elif isinstance(node, (cst.List, cst.Tuple)):
            for element in node.elements:
                if not (isinstance(element.value, cst.Name) and element.value.value in made
                        and self.kinds.get(element.value.value) is Kind.VARIABLE):
                    return None
                pairs.append((made[element.value.value], element.value.value))
        if not pairs:
            return None
        names = checkpoints.GraphNames()
        names.saved = [(name, expression, "") for name, expression in pairs]
        return names

    def _untraceable(self, train_op: str) -> Optional[str]:
        """Why the training step `train_op` cannot be traced before a Saver (emit traces only
        functions of placeholders of a tensor dtype), or None."""
        todo, seen = [self.defs[train_op]], set()
        while todo:
            definition = todo.pop()
            if id(definition) in seen:
                continue
            seen.add(id(definition))
            if definition.kind is Kind.NEXT:
                return f"reads the dataset element `{definition.targets[0]}`"
            if definition.fed_only:
                return f"is fed `{definition.targets[0]}`, a placeholder expression"
            dtype = definition.dtype
            dtype = dtype if isinstance(dtype, str) or dtype is None else code(dtype)
            if definition.kind is Kind.PLACEHOLDER and (definition.sparse or (dtype or "").endswith("bool")):
                return f"is fed `{definition.targets[0]}`, a sparse tensor or a boolean flag"
            if definition.kind in (Kind.GRAPH, Kind.TRAIN):
                todo += list(definition.deps.values())
        return None

    def _restored_state_is_saved(self) -> None:
        """A Saver whose optimizers' state cannot be made before it (its training step is not
        traced) saves the model's variables only, as a Keras optimizer has no TF1 names: fine
        for a program that only saves, not for one that restores and trains on."""
        if self._unsaved_state and self._restores:
            line, why = self._unsaved_state[0]
            raise Blocked(self._restores[0], f"`saver.restore` of a checkpoint with TF1's optimizer state (slots, "
                                             f"beta powers) whose training step {why}: the eager program cannot "
                                             f"make that state before the Saver of line {line}")

    def _is_object(self, value, path: Optional[str]) -> bool:
        if isinstance(value, (cst.Attribute, cst.Name)):
            p = self.api(value)
            return p is not None and is_object_path(p)
        if path is None:
            return False
        if is_object_path(path):
            return True
        if path in OPTIMIZERS:
            return self._optimizer(value)
        if path.endswith(OBJECT_SUFFIXES) or path.startswith(("keras.initializers", "keras.regularizers")):
            return not (names_read(value) & self.graph_names())
        return False

    def _is_cell(self, value, path: Optional[str], targets: Tuple[str, ...]) -> bool:
        """`cell = tf.nn.rnn_cell.LSTMCell(64)`: a cell object made once, at module level, as in TF1;
        it makes its variables on its first call (TensorFlow's legacy Keras serves it eagerly), and
        `dynamic_rnn` over it inside a `tf.function` reuses them."""
        factory = isinstance(value, cst.Call) and isinstance(value.func, cst.Name) \
            and value.func.value in self.cell_factories
        # `cells = [tf.nn.rnn_cell.LSTMCell(n) for _ in range(k)]`, given to `MultiRNNCell(cells)`
        listed = isinstance(value, (cst.ListComp, cst.List)) and all(
            isinstance(e, cst.Call) and (self.tf_call(e) or "").startswith("nn.rnn_cell.")
            for e in ([value.elt] if isinstance(value, cst.ListComp) else [e.value for e in value.elements])) \
            and (isinstance(value, cst.List) and bool(value.elements) or isinstance(value, cst.ListComp)
                 and value.for_in.inner_for_in is None and not value.for_in.ifs)
        if not (factory or listed or path is not None and path.startswith("nn.rnn_cell.")) or len(targets) != 1:
            return False
        if names_read(value) & self.graph_names():
            raise Blocked(self.line_of(value), f"`{code(value.func) if factory else 'tf.' + path}` configured "
                                               "with a tensor" if not listed else "RNN cells configured with a tensor")
        self._cell_factory_calls |= {id(c) for c in calls_in(value) if isinstance(c.func, cst.Name)
                                     and c.func.value in self.cell_factories}
        return True

    def _optimizer(self, call: cst.Call) -> bool:
        at = self.line_of(call)
        if names_read(call) & self.graph_names() and self._scheduled(call) is None:
            raise Blocked(at, "an optimizer configured with a tensor")
        if self.tf_call(call) not in KEPT_TF1 and keras_optimizer(call, self.tf_call(call), self.tf) is None:
            raise Blocked(at, f"`{code(call.func)}(...)` with arguments that have no Keras equivalent")
        return True

    def _scheduled(self, call: cst.Call) -> Optional[str]:
        """The schedule an optimizer is given as its learning rate and reads no other tensor
        (`MomentumOptimizer(lr, 0.9)` of `lr = tf.train.exponential_decay(...)`), or None."""
        rate = learning_rate_of(call, self.tf_call(call))
        if isinstance(rate, cst.Name) and rate.value in self.schedules \
                and names_read(call) & self.graph_names() == {rate.value}:
            return rate.value
        return None

    def _schedule(self, statement: Statement, call: cst.Call, path: str) -> None:
        """`lr = tf.train.exponential_decay(0.1, global_step, ...)`: TF1 computed the rate from the
        step variable's value at each run. Eagerly `tf.compat.v1.train.exponential_decay` is a
        function of that variable (made once, at module level): given as a TF1 optimizer's learning
        rate, it is read at each step as TF1 read it, and a Keras schedule would read the
        optimizer's own iteration count instead (equal only while nothing else moves the step)."""
        at = statement.line
        graph = names_read(call) & self.graph_names()
        other = sorted(n for n in graph if self.kinds.get(n) is not Kind.VARIABLE
                       or self.defs[n].container is not None)
        if other:
            raise Blocked(at, f"`tf.{path}` of a tensor other than a variable (`{other[0]}`)")
        self._check_supported(call, at)
        statement.schedule = self.fresh(f"{statement.targets[0]}_schedule")
        self.schedules[statement.targets[0]] = statement

    def _mentions_tf(self, node: cst.CSTNode) -> bool:
        return bool(names_read(node) & self.aliases)

    def _builds_imported(self, node: cst.CSTNode) -> bool:
        """Whether `node` calls a model function of the project (its variables: graph state, of
        Python values too: `w = lib.embedding(VOCAB, 8)`)."""
        models = self.imported.models - self.imported.untracked
        return bool(models) and any(dotted(call.func) in models for call in calls_in(node))

    def _uses_tensors(self, node: cst.CSTNode) -> bool:
        """Whether `node` names TensorFlow for more than Python objects (dtypes, flags,
        `tf.SparseTensorValue`): a function that only builds those is Python, callable anywhere."""
        if not self._mentions_tf(node):
            return False
        script = self
        found = []

        class _Uses(cst.CSTVisitor):
            def visit_Attribute(self, attr: cst.Attribute) -> Optional[bool]:
                path = script.api(attr)
                if path is None:
                    return None
                if not is_object_path(path):
                    found.append(path)
                return False

            def visit_Name(self, name: cst.Name) -> None:
                if name.value in script.aliases:
                    found.append(name.value)  # the module itself, passed on

        node.visit(_Uses())
        return bool(found)

    def _check_supported(self, node: cst.CSTNode, at: int, drawn_once: Optional[cst.Call] = None) -> None:
        """Blocked at the first construct the script route cannot rewrite in `node`. `drawn_once`:
        a random op with its own seed that is drawn once, as a module-level variable's initial value
        (native.seeded_draws.drawn_once)."""
        script = self

        class _Calls(cst.CSTVisitor):
            def visit_Call(self, call: cst.Call) -> Optional[bool]:
                if call is drawn_once:
                    return None
                path = script.tf_call(call)
                if path in REGULARIZATION_READS and script._regularization(call, path, at):
                    return False
                if path == own_collections.READ and script._reading_graph and own_collections.read_key(call) is not None:
                    return False  # (read in the traced graph: `_collection_deps`)
                if path is not None and not script.pinned and any(
                        a.keyword is not None and a.keyword.value == "seed" for a in call.args):
                    raise Blocked(at, f"`tf.{path}(seed=...)`, a random op with its own seed, evaluated by "
                                        "`sess.run` (TF1 restarted its sequence in each Session; TF2 draws other numbers)")
                if isinstance(call.func, cst.Attribute) and call.func.attr.value in STEP_METHODS:
                    raise Blocked(at, f"`{call.func.attr.value}` of an optimizer (a training step is rewritten "
                                      "from `minimize`, or from gradients clipped by their global norm)")
                if path in CONTROL_FLOW:
                    why = control_flow_differs(call, path)
                    if why is not None:
                        raise Blocked(at, why)
                    for arg in call.args:
                        arg.value.visit(_StateFree(script, at, f"`tf.{path}` whose callable makes graph state"))

            def visit_Attribute(self, attr: cst.Attribute) -> Optional[bool]:
                path = script.api(attr)
                if path is None:
                    return None
                for prefix, what in UNSUPPORTED.items():
                    if path.startswith(prefix):
                        raise Blocked(at, what)
                return False

        node.visit(_Calls())

    def _collection_add(self, line, call: cst.Call, at: int) -> Statement:
        """`tf.add_to_collection("losses", t)`: a graph statement made only where a statement that
        reads the collection needs it (own_collections)."""
        if own_collections.key(call) is None:
            raise Blocked(at, "graph collections (`tf.add_to_collection` of a collection not named by a string)")
        statement = Statement(line, Kind.GRAPH, at)
        self._graph(statement, call)
        statement.reads = names_read(call) & self.graph_names()
        statement.deps = {name: self.defs[name] for name in statement.reads if name in self.defs}
        self._collection_deps(statement, call)
        return statement

    def _collection_deps(self, statement: Statement, value: cst.CSTNode) -> None:
        """The statement as one that reads or adds to the program's own collections: it depends on
        every statement before it that added to what it reads (TF1's collection at that point)."""
        read = own_collections.keys_read(value, self.tf_call)
        added = own_collections.keys_added(value, self.tf_call)
        for name, _call in statement.tracked:
            added |= self.builders[name].collections
        if read & added:
            raise Blocked(statement.line, f"a statement that both adds to the collection `{sorted(read & added)[0]}` "
                                          "and reads it (which comes first is not read here)")
        for name in sorted(read):
            for i, adder in enumerate(self.collection_adders.get(name, ())):
                statement.deps[f"<collection {name} {i}>"] = adder
        for name in added:
            self.collection_adders.setdefault(name, []).append(statement)

    def _regularization(self, call: cst.Call, path: str, at: int) -> bool:
        """`tf.get_collection(tf.GraphKeys.REGULARIZATION_LOSSES)` or `tf.losses.get_regularization_loss()`
        in graph code: TF1's collection held the losses of the regularizers given to the variables
        made so far, which eagerly are the model objects' (`_tf1_style_var_store`). Recorded where
        every regularizer is given inside a model function (Blocked otherwise)."""
        if path == "get_collection" and len(call.args) == 1 and call.args[0].keyword is None \
                and self.api(call.args[0].value) == "GraphKeys.REGULARIZATION_LOSSES":
            kind = "list"
        elif path != "get_collection" and not call.args:
            kind = "loss" if path.endswith("loss") else "list"
        else:
            return False
        inside = {id(c) for b in self.builders.values() if b.node is not None for c in calls_in(b.node)}
        for made in calls_in(self.module):
            if id(made) not in inside and any(a.keyword is not None and a.keyword.value.endswith("regularizer")
                                              for a in made.args):
                raise Blocked(at, "the regularization losses of a regularizer given outside the model functions")
        self.regularizations[id(call)] = (kind, at)
        return True

    def _placeholder(self, statement: Statement, call: cst.Call, path: str) -> None:
        at = statement.line
        try:
            if path != "placeholder_with_default":
                bound = bind(call, ("dtype", "shape", "name"))
            else:
                bound = bind(call, ("input", "shape", "name"))
        except ValueError as why:
            raise Blocked(at, f"a placeholder: {why}")
        statement.sparse = path == "sparse_placeholder"
        if path != "placeholder_with_default":
            if "dtype" not in bound:
                raise Blocked(at, "a placeholder without a dtype")
            statement.dtype = bound["dtype"]
        else:
            statement.default = bound["input"]
            statement.dtype = _literal_dtype(bound["input"], self)
            if statement.dtype is None:
                raise Blocked(at, "a `placeholder_with_default` whose dtype is not a literal's")
        statement.shape = bound.get("shape")
        if names_read(call) & self.graph_names():
            raise Blocked(at, "a placeholder whose shape is a tensor")

    def _variable_dict(self, value) -> bool:
        """`{"h1": tf.Variable(...), ...}`: TF1 tutorials' weights and biases, made once."""
        if not isinstance(value, cst.Dict) or not value.elements:
            return False
        if not all(isinstance(e, cst.DictElement) and isinstance(e.key, cst.SimpleString)
                   and self.tf_call(e.value, "Variable") for e in value.elements):
            return False
        if names_read(value) & self.graph_names():
            raise Blocked(self.line_of(value), "a dict of variables made from tensors of the graph")
        return True

    def _variables_of(self, value) -> Optional[List[cst.Call]]:
        """The `tf.Variable(...)` calls of `[tf.Variable(...), ...]` or a comprehension of one."""
        if isinstance(value, cst.ListComp) and self.tf_call(value.elt, "Variable"):
            if names_read(value) & self.graph_names():
                return None
            return [value.elt]
        if isinstance(value, (cst.List, cst.Tuple)) and value.elements and all(
                self.tf_call(e.value, "Variable") for e in value.elements):
            if names_read(value) & self.graph_names():
                return None
            return [e.value for e in value.elements]
        return None

    def _variable(self, statement: Statement, call: cst.Call, path: str) -> None:
        at = statement.line
        if names_read(call) & (self.graph_names() - {n for n, k in self.kinds.items() if k is Kind.VARIABLE}):
            raise Blocked(at, "a variable whose initial value is computed from the graph")
        drawn = seeded_draws.seeded_initial_value(call, self.tf_call)
        if drawn is not None and not self.pinned and not seeded_draws.drawn_once(drawn, self.module, self.tf_call):
            raise Blocked(at, "a variable's initial value drawn by a random op whose seed another TensorFlow call of "
                              "the module also gives (eagerly, random ops of one kind and seed share one sequence: "
                              "the second continues it where TF1's second op started it again)")
        self._check_supported(call, at, drawn)
        for arg in call.args:
            if arg.keyword is not None and arg.keyword.value == "trainable":
                if code(arg.value) == "False":
                    statement.trainable = False
                elif code(arg.value) != "True":
                    raise Blocked(at, "`trainable=` that is not a literal")

    def _collection_scope(self, node) -> Optional[str]:
        """`tf.get_collection(tf.GraphKeys.TRAINABLE_VARIABLES, scope="D")` -> "D"."""
        if not self.tf_call(node, "get_collection", "trainable_variables"):
            return None
        path = self.tf_call(node)
        try:
            bound = bind(node, ("key", "scope") if path == "get_collection" else ("scope",))
        except ValueError:
            return None
        if path == "get_collection" and self.api(bound.get("key", cst.Name("_"))) != "GraphKeys.TRAINABLE_VARIABLES":
            return None
        scope = bound.get("scope")
        if not isinstance(scope, cst.SimpleString) or set(bound) - {"key", "scope"}:
            return None
        return scope.evaluated_value

    def _train(self, statement: Statement, call: cst.Call) -> None:
        at = statement.line
        receiver = call.func.value
        try:
            bound = bind(call, ("loss", "global_step", "var_list"))
        except ValueError as why:
            raise Blocked(at, f"`minimize(...)`: {why}")
        extra = set(bound) - {"loss", "global_step", "var_list"}
        if extra:
            raise Blocked(at, f"`minimize({sorted(extra)[0]}=...)`")
        loss = bound.get("loss")
        if not isinstance(loss, cst.Name) or loss.value not in self.graph_names():
            raise Blocked(at, "`minimize` of something other than a named loss tensor")
        statement.loss = loss.value
        statement.global_step = bound.get("global_step")
        if self._no_global_step(statement.global_step):
            statement.global_step = None
        statement.var_list = bound.get("var_list")
        if statement.var_list is not None and self.tf_call(statement.var_list, "trainable_variables") \
                and not statement.var_list.args:
            statement.var_list = None  # (`var_list=tf.trainable_variables()`: what `minimize` trains by default)
        scope = self._collection_scope(statement.var_list) if statement.var_list is not None else None
        if scope is not None:
            statement.var_list, statement.var_scope = None, scope
        if statement.var_list is not None:
            listed = statement.var_list
            if not isinstance(listed, (cst.List, cst.Tuple)) or not all(
                    isinstance(e.value, cst.Name) and self.kinds.get(e.value.value) is Kind.VARIABLE
                    for e in listed.elements):
                raise Blocked(at, "`minimize(var_list=...)` that is not a list of variables")
        if statement.global_step is not None:
            step = statement.global_step
            if not isinstance(step, cst.Name) or self.kinds.get(step.value) is not Kind.VARIABLE:
                raise Blocked(at, "`minimize(global_step=...)` that is not a variable")
        if isinstance(receiver, cst.Name) and self.kinds.get(receiver.value) is Kind.OBJECT:
            statement.optimizer = receiver
        elif self.tf_call(receiver, *OPTIMIZERS) and self._optimizer(receiver):
            statement.optimizer = receiver
            statement.optimizer_name = self.fresh("optimizer")
            if self.tf_call(receiver) in KEPT_TF1 or self._scheduled(receiver) is not None:
                self.tf1_optimizers.add(statement.optimizer_name)
        else:
            raise Blocked(at, "`minimize` on an optimizer tfmigrate does not know")
        self.tf1_names.minimized(statement.optimizer_name or receiver.value, self.optimizer_path(statement),
                                 statement.targets[0])

    def _no_global_step(self, step: Optional[cst.BaseExpression]) -> bool:
        """`minimize(loss, global_step=tf.train.get_global_step())` in a module that makes no global
        step: TF1's `get_global_step()` found none (no GLOBAL_STEP collection, no variable named
        `global_step`) and returned None, so nothing counted the steps."""
        if not isinstance(step, cst.Call) or step.args or self.tf_call(step) != "train.get_global_step":
            return False
        from tfmigrate.facts.program import STRINGS_AND_COMMENTS

        rest = re.sub(r"\bglobal_step\s*=\s*[\w.]*\bget_global_step\(\s*\)", "",
                      STRINGS_AND_COMMENTS.sub("", self.source))
        return "global_step" not in rest

    def optimizer_path(self, train: Statement) -> Optional[str]:
        """The TF1 API that made a TRAIN statement's optimizer (`train.AdamOptimizer`)."""
        optimizer = train.optimizer
        if isinstance(optimizer, cst.Name) and optimizer.value in self.defs:
            optimizer = self.defs[optimizer.value].node.body[0].value
        return self.tf_call(optimizer)

    def _data(self, statement: Statement, value, targets) -> bool:
        """tf.data the TF1 way: datasets of Python data, their iterators, `get_next()`."""
        at = statement.line
        if isinstance(value, cst.Call) and isinstance(value.func, cst.Name) and value.func.value in self.helpers \
                and value.func.value in self._dataset_functions() and len(targets) == 1 \
                and not names_read(value) & (self.graph_names() | set(self.fed_datasets)):
            # `train_data = input_pipeline(batch_size)`: a function of the module returning a dataset
            # of Python data (what native.queues writes for a queue pipeline built by a function
            # called more than once): made once, at module level, as any such dataset
            statement.kind = Kind.DATASET
            self.fed_datasets.pop(targets[0], None)
            return True
        if isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute):
            receiver, method = value.func.value, value.func.attr.value
            receiver_kind = self.kinds.get(receiver.value) if isinstance(receiver, cst.Name) else None
            if receiver_kind is Kind.ITERATOR and method == "get_next" and not value.args:
                statement.kind, statement.iterator = Kind.NEXT, receiver.value
                return True
            dataset = self._one_shot_dataset(receiver) if method == "get_next" and not value.args else None
            if dataset is not None:
                # `ds.make_one_shot_iterator().get_next()`: the iterator has no name, so it gets
                # one (emitted where this statement was); each run draws the next element.
                statement.kind, statement.dataset = Kind.NEXT, dataset
                statement.iterator = self.fresh("iterator")
                return True
            if receiver_kind is Kind.ITERATOR and method == "make_initializer" and len(value.args) == 1:
                dataset = value.args[0].value
                if not (isinstance(dataset, cst.Name) and self.kinds.get(dataset.value) is Kind.DATASET):
                    raise Blocked(at, "`make_initializer` of something other than a named dataset")
                statement.kind, statement.iterator, statement.dataset = Kind.ITERATOR_INIT, receiver.value, dataset
                return True
            made = self._iterator_made(value)
            if made is not None:  # `tf.compat.v1.data.make_initializable_iterator(ds)`, as `fix` spells it
                receiver, method = made
                receiver_kind = self.kinds.get(receiver.value) if isinstance(receiver, cst.Name) else None
            if receiver_kind is Kind.DATASET and method in ("make_initializable_iterator", "make_one_shot_iterator") \
                    and (made is not None or not value.args):
                statement.kind, statement.dataset = Kind.ITERATOR, receiver
                fed = self.fed_datasets.get(receiver.value)
                if fed is not None:
                    if method != "make_initializable_iterator" or len(targets) != 1:
                        raise Blocked(at, "a dataset of placeholders without an initializable iterator")
                    fed.function = fed.function or self.fresh(f"make_{receiver.value}")
                    statement.fed_dataset = fed
                return True
            if self.tf_call(value, "data.Iterator.from_structure"):
                statement.kind = Kind.ITERATOR
                return True
            root = receiver
            while isinstance(root, cst.Call) and isinstance(root.func, cst.Attribute):
                root = root.func.value  # `tf.data.Dataset.from_tensor_slices(x).batch(4)`
            if isinstance(root, cst.Call):
                root = root.func
            root_is_data = (self.api(root) or "").startswith("data.") or (
                isinstance(root, cst.Name) and self.kinds.get(root.value) is Kind.DATASET)
            if receiver_kind is Kind.DATASET or root_is_data or (self.api(value.func) or "").startswith("data."):
                statement.kind = Kind.DATASET
                if names_read(value) & (self.graph_names() | set(self.fed_datasets)):
                    self._fed_dataset(statement, value, targets)
                else:
                    for name in targets:
                        self.fed_datasets.pop(name, None)
                return True
        return False

    def _dataset_functions(self) -> Set[str]:
        """The module's functions whose every `return` gives a `tf.data` dataset."""
        datasets = DatasetNames(SimpleNamespace(module=self.module, names=self.names))
        found = set()
        for function in self.module.body:
            if isinstance(function, cst.FunctionDef) and function.name.value in datasets.returners:
                returns = []
                function.body.visit(type("R", (cst.CSTVisitor,), {
                    "visit_Return": lambda self, r: returns.append(r),
                    "visit_FunctionDef": lambda self, f: False, "visit_Lambda": lambda self, f: False})())
                if all(r.value is not None and datasets.is_dataset(r.value) for r in returns):
                    found.add(function.name.value)
        return found

    def _fed_dataset(self, statement: Statement, value, targets) -> None:
        """A dataset of placeholders (or built on one): kept as a function of their fed values."""
        at = statement.line
        reads = names_read(value) & (self.graph_names() | set(self.fed_datasets))
        placeholders = [n for n in sorted(reads) if self.kinds.get(n) is Kind.PLACEHOLDER]
        bases = [self.fed_datasets[n] for n in sorted(reads) if n in self.fed_datasets]
        if len(targets) != 1 or len(placeholders) + len(bases) != len(reads) or len(bases) > 1 \
                or any(self.placeholders[n].default is not None for n in placeholders):
            raise Blocked(at, "a `tf.data` dataset built from graph tensors other than placeholders")
        base = bases[0] if bases else FedDataset([], [])
        fed = FedDataset(base.placeholders + [n for n in placeholders if n not in base.placeholders],
                         base.statements + [statement])
        statement.fed_dataset = fed
        self.fed_datasets[targets[0]] = fed

    def layer_dtype(self, statement: Statement) -> Optional[cst.BaseExpression]:
        """The dtype TF1's layers in `statement` took from their inputs when it is not float32.
        Keras layers are float32 unless given it (a float64 placeholder, `tf.placeholder(x.dtype,
        ...)` of numpy data: TF1 computed in float64)."""
        found = self.data_dtypes(statement)
        if len(found) > 1:
            raise Blocked(statement.line, f"layers computing on data of the dtypes {', '.join(sorted(found))} at once")
        return next(iter(found.values()), None)

    def data_dtypes(self, statement: Statement) -> Dict[str, cst.BaseExpression]:
        """The dtypes other than float32 of the placeholders `statement`'s data comes from (directly
        or through a dataset of them), up to a cast, by their code. Asked for each graph line the
        rewrite writes (a statement may be in several functions): computed once per statement."""
        if id(statement) in self._dtypes:
            return self._dtypes[id(statement)]
        found = self._dtypes[id(statement)] = {}
        seen: Set[Tuple[str, int]] = set()
        todo = [("", statement)]
        while todo:
            name, current = todo.pop()
            if (name, id(current)) in seen:
                continue
            seen.add((name, id(current)))
            if current is not statement and any((self.tf_call(c) or "").startswith(CASTS) for c in calls_in(current.node)):
                continue  # computed in the dtype it was cast to
            if current.kind is Kind.PLACEHOLDER and current.dtype is not None and not _narrow_dtype(current.dtype, self):
                found.setdefault(code(current.dtype), current.dtype)
            if current.kind is Kind.NEXT:
                todo += [(n, self.placeholders[n]) for n in self._element_placeholders(current, name)]
            todo += list(current.deps.items())
        return found

    def _element_placeholders(self, next_: Statement, name: str) -> List[str]:
        """The placeholders whose data `name`, one of `next_`'s targets, holds: the one in the same
        place of `from_tensor_slices((a, b))` when the dataset only reorders or groups elements,
        else every placeholder of its dataset."""
        iterator = self.defs.get(next_.iterator) if next_.iterator else None
        fed = iterator.fed_dataset if iterator is not None else None
        if fed is None:
            return []
        everything = [n for n in fed.placeholders if n in self.placeholders]
        first = fed.statements[0].node.body[0].value if fed.statements else None
        keeps = all(isinstance(s.node.body[0].value, cst.Call) and isinstance(s.node.body[0].value.func, cst.Attribute)
                    and s.node.body[0].value.func.attr.value in ELEMENT_WISE for s in fed.statements[1:])
        if not (keeps and self.tf_call(first, "data.Dataset.from_tensor_slices") and first.args
                and isinstance(first.args[0].value, cst.Tuple) and name in next_.targets):
            return everything
        parts = [e.value for e in first.args[0].value.elements]
        if len(parts) != len(next_.targets) or not all(isinstance(p, cst.Name) for p in parts):
            return everything
        part = parts[next_.targets.index(name)].value
        return [part] if part in self.placeholders else everything

    def _iterator_made(self, call: cst.Call):
        """(dataset, method) of `tf.compat.v1.data.make_<kind>_iterator(dataset)`, or None."""
        for method in ("make_initializable_iterator", "make_one_shot_iterator"):
            if self.tf_call(call, f"compat.v1.data.{method}", f"data.{method}") \
                    and len(call.args) == 1 and call.args[0].keyword is None:
                return call.args[0].value, method
        return None

    def _one_shot_dataset(self, node) -> Optional[cst.BaseExpression]:
        """The dataset of `ds.make_one_shot_iterator()` / `tf.compat.v1.data.make_one_shot_iterator(ds)`
        (a named dataset), or None."""
        if not isinstance(node, cst.Call):
            return None
        if isinstance(node.func, cst.Attribute) and node.func.attr.value == "make_one_shot_iterator" and not node.args:
            dataset = node.func.value
        elif self.tf_call(node, "compat.v1.data.make_one_shot_iterator", "data.make_one_shot_iterator") \
                and len(node.args) == 1 and node.args[0].keyword is None:
            dataset = node.args[0].value
        else:
            return None
        if isinstance(dataset, cst.Name) and self.kinds.get(dataset.value) is Kind.DATASET:
            return dataset
        return None

    def _summary(self, statement: Statement, call: cst.Call) -> Statement:
        """`tf.summary.scalar("loss", loss)`: a value `merge_all` (or a fetch of it) returns,
        written by `add_summary` with `tf.summary.scalar("loss", value, step=)`."""
        at = statement.line
        kind = self.tf_call(call)[len("summary."):]
        try:
            bound = bind(call, ("name", "tensor", "collections", "family") if kind != "image"
                         else ("name", "tensor", "max_outputs", "collections", "family"))
        except ValueError as why:
            raise Blocked(at, f"`tf.summary.{kind}`: {why}")
        if set(bound) - {"name", "tensor"} or not isinstance(bound.get("name"), cst.SimpleString) \
                or "tensor" not in bound:
            raise Blocked(at, f"`tf.summary.{kind}` with other than a literal name and a tensor")
        self._check_supported(bound["tensor"], at)
        statement.summaries = [(kind, bound["name"].evaluated_value, bound["tensor"])]
        graph = self.graph_names()
        statement.reads = names_read(bound["tensor"]) & graph
        statement.deps = {name: self.defs[name] for name in statement.reads if name in self.defs}
        self.summary_ops.append(statement)
        for name in statement.targets:
            self.kinds[name] = Kind.GRAPH
            self.defs[name] = statement
        return statement

    def _variable_histograms(self, node) -> Optional[Statement]:
        """`for var in tf.trainable_variables(): tf.summary.histogram(var.op.name, var)`: a summary
        of each trainable variable made so far, under TF1's name of it (`dense/kernel`), which
        `merge_all` returns with the others (native.emit writes the variables the model objects,
        layers and module made before it, their statements run first where it is evaluated)."""
        if not (isinstance(node, cst.For) and node.orelse is None and isinstance(node.target, cst.Name)
                and isinstance(node.iter, cst.Call) and not node.iter.args
                and self.tf_call(node.iter) == "trainable_variables" and isinstance(node.body, cst.IndentedBlock)
                and len(node.body.body) == 1 and m.matches(node.body.body[0], m.SimpleStatementLine(
                    body=[m.Expr(value=m.Call())]))):
            return None
        call = node.body.body[0].body[0].value
        var = node.target.value
        try:
            bound = bind(call, ("name", "values", "collections", "family"))
        except ValueError:
            return None
        if self.tf_call(call) != "summary.histogram" or set(bound) != {"name", "values"} \
                or code(bound["values"]) != var or code(bound["name"]) != f"{var}.op.name" or self.cells:
            return None
        statement = Statement(node, Kind.GRAPH, self.line_of(node), top=node, scope="/".join(self.scope))
        statement.summaries = [("histogram", None, statement)]
        makers = [s for s in self.statements if s.kind is Kind.GRAPH and (s.tracked or s.layers)]
        statement.deps = {f"<variables {i}>": made for i, made in enumerate(makers)}
        self.summary_ops.append(statement)
        return statement

    def _merge_all(self, statement: Statement, call: cst.Call) -> Statement:
        at = statement.line
        for arg in call.args:
            if not (arg.keyword is None or arg.keyword.value == "key") or not (
                    code(arg.value) in ('"summaries"', "'summaries'") or self.api(arg.value) == "GraphKeys.SUMMARIES"):
                raise Blocked(at, "`tf.summary.merge_all` of another collection")
        if not self.summary_ops:  # TF1 returns None: there is nothing to merge
            statement.kind, statement.summaries = Kind.OBJECT, []
            for name in statement.targets:
                self.kinds[name] = Kind.OBJECT
            return statement
        statement.summaries = [entry for op in self.summary_ops for entry in op.summaries]
        statement.deps = {f"<summary {i}>": op for i, op in enumerate(self.summary_ops)}
        for name in statement.targets:
            self.kinds[name] = Kind.GRAPH
            self.defs[name] = statement
        return statement

    def _metric(self, statement: Statement, value) -> bool:
        if not (isinstance(value, cst.Subscript) and self.tf_call(value.value, "metrics.accuracy")):
            return False
        at = statement.line
        index = value.slice[0].slice if len(value.slice) == 1 else None
        if not isinstance(index, cst.Index) or not isinstance(index.value, cst.Integer) \
                or index.value.value not in ("0", "1"):
            raise Blocked(at, "`tf.metrics.accuracy(...)` taken other than by `[0]` or `[1]`")
        try:
            bound = bind(value.value, ("labels", "predictions", "weights", "metrics_collections",
                                       "updates_collections", "name"))
        except ValueError as why:
            raise Blocked(at, f"`tf.metrics.accuracy`: {why}")
        if set(bound) - {"labels", "predictions", "name"} or "labels" not in bound or "predictions" not in bound:
            raise Blocked(at, "`tf.metrics.accuracy` with weights or collections")
        self._check_supported(bound["labels"], at)
        self._check_supported(bound["predictions"], at)
        base = statement.targets[0]
        statement.metric = Metric(bound["labels"], bound["predictions"], index.value.value == "1",
                                  self.fresh(f"{base}_total"), self.fresh(f"{base}_count"))
        return True

    def _graph(self, statement: Statement, value: cst.BaseExpression) -> None:
        at = statement.line
        self._reading_graph = True
        try:
            self._check_supported(value, at)
        finally:
            self._reading_graph = False
        script = self

        class _Inline(cst.CSTVisitor):
            def visit_Call(self, call: cst.Call) -> None:
                if script.tf_call(call, *PLACEHOLDERS):
                    statement.fed_only = True
                spelled = dotted(call.func)
                if spelled in script.imported.models and spelled not in script.imported.untracked:
                    script._imported_site(spelled, call)
                    statement.tracked.append((spelled, call))
                elif isinstance(call.func, cst.Name) and call.func.value in script.builders:
                    if script.updates_read and script.builders[call.func.value].batch_norms:
                        raise Blocked(at, batch_norm.MADE_AFTER)
                    script.builders[call.func.value].sites.append(call)
                    script.builders[call.func.value].site_scopes[id(call)] = ("/".join(script.scope), script.reusing())
                    statement.tracked.append((call.func.value, call))
                if isinstance(call.func, cst.Name) and call.func.value in script.factories:
                    raise Blocked(at, f"`{call.func.value}(...)`, which makes a variable, inside an expression")
                made = script.tf_call(call, *VARIABLES)
                if made:  # written into the `tf.function` that computes the tensor, it was made at each call
                    raise Blocked(at, f"`tf.{made}(...)` inside an expression of graph code")

        value.visit(_Inline())

        class _Layers(cst.CSTVisitor):
            def visit_Call(self, call: cst.Call) -> None:
                path = script.api(call.func)
                if path is None or not path.startswith("layers."):
                    return
                function = path[len("layers."):]
                if function == "dropout" and script.pinned and any(
                        a.keyword is not None and a.keyword.value == "seed" for a in call.args):
                    return  # TF1's op, with TF1's seed (native.tf2_spellings); Keras's layer draws other numbers
                if function not in layer_specs.SPECS:
                    raise Blocked(at, f"`tf.{path}`")
                reuse = next((a for a in call.args if a.keyword is not None and a.keyword.value == "reuse"), None)
                named = next((a for a in call.args if a.keyword is not None and a.keyword.value == "name"), None)
                scope = "/".join(script.scope)
                if reuse is not None and code(reuse.value) == "True":
                    # `name="l", reuse=True`: the layer made before under that name, shared
                    key = (scope, named.value.evaluated_value) if named is not None and isinstance(
                        named.value, cst.SimpleString) else None
                    if key not in script.named_layers:
                        raise Blocked(at, f"`tf.{path}(reuse=True)` of a layer tfmigrate did not see made")
                    mapped = layer_specs.map_call(function, call.with_changes(args=[a for a in call.args if a is not reuse]))
                    if isinstance(mapped, str):
                        raise Blocked(at, f"`tf.{path}`: {mapped}")
                    statement.layers.append(Layer(call, script.named_layers[key], mapped, scope, True))
                    return
                mapped = layer_specs.map_call(function, call)
                if isinstance(mapped, str):
                    raise Blocked(at, f"`tf.{path}`: {mapped}")
                why = batch_norm.unsupported(mapped, batch_norm.input_rank(script, mapped.inputs)) \
                    if function == "batch_normalization" else None
                if function == "batch_normalization" and script.updates_read:
                    why = batch_norm.MADE_AFTER
                if why is not None:
                    raise Blocked(at, why)
                for arg in mapped.ctor_args:
                    if names_read(arg.value) & script.graph_names():
                        raise Blocked(at, f"`tf.{path}` configured with a tensor")
                preferred = statement.targets[0] if statement.targets else function
                name = script.fresh(f"{preferred}_layer")
                if named is not None and isinstance(named.value, cst.SimpleString):
                    script.named_layers[(scope, named.value.evaluated_value)] = name
                statement.layers.append(Layer(call, name, mapped, scope))
                script._name_layer(name, function, call, named)

        value.visit(_Layers())

    def _python(self, node: cst.CSTNode) -> Statement:
        at = self.line_of(node)
        if isinstance(node, (cst.FunctionDef, cst.ClassDef)) or (
                isinstance(node, cst.SimpleStatementLine) and isinstance(node.body[0], (cst.Import, cst.ImportFrom))):
            if isinstance(node, (cst.FunctionDef, cst.ClassDef)) and (
                    self._uses_tensors(node) or names_read(node) & (set(self.builders) | self.graph_names())):
                runs = self._run_helper(node, at) if isinstance(node, cst.FunctionDef) else None
                return runs or self._helper(node, at)
            given = sorted(names_read(node) & {h for h, i in self.run_helpers.items() if i is not None})
            if given and isinstance(node, (cst.FunctionDef, cst.ClassDef)):
                raise Blocked(at, f"`{given[0]}`, a function given the Session, called by `{node.name.value}`, "
                                  "which runs no Session of its own")
            statement = Statement(node, Kind.PYTHON, at)
            for name in names_assigned(node):
                self.kinds[name] = Kind.PYTHON
                self.defs.pop(name, None)
            return statement
        statement = Statement(node, Kind.PYTHON, at)
        statement.sites = self.sites_of(statement)  # validates every use of the graph in it
        for name in names_assigned(node):
            self.kinds[name] = Kind.PYTHON
            self.defs.pop(name, None)
        return statement

    def _run_helper(self, node: cst.FunctionDef, at: int) -> Optional[Statement]:
        """`def evaluate(sess, data, labels): return sess.run(acc, {x: data, y: labels})`, called
        wherever the program evaluates: the module's graph read only by the runs of a Session (its
        parameter, or the module's), each run rewritten as at module level, the parameter dropped
        (native.emit) with the Session each call passes. None for any other function."""
        params = node.params
        if node.decorators or params.star_arg not in (None, cst.MaybeSentinel.DEFAULT) or params.star_kwarg \
                or params.kwonly_params or params.posonly_params or m.findall(node, m.Global() | m.Nonlocal() | m.Yield()):
            return None
        runs = [c.func.value.value for c in calls_in(node) if m.matches(c.func, m.Attribute(value=m.Name(),
                                                                                           attr=m.Name("run")))]
        names = names_in(node.body)
        given = [i for i, p in enumerate(params.params) if p.name.value in runs
                 and names.count(p.name.value) == runs.count(p.name.value) and p.default is None]
        if len(given) > 1 or not given and not set(runs) & self.sessions:
            return None
        parameter = params.params[given[0]].name.value if given else None
        added = parameter is not None and parameter not in self.sessions
        if added:
            self.sessions.add(parameter)
        body = Statement(node.body, Kind.PYTHON, at)  # (its parameters are no use of the Session)
        try:
            sites = self.sites_of(body)
        except Blocked:
            return None
        finally:
            if added:
                self.sessions.discard(parameter)
        if not sites or body.values:
            return None
        statement = Statement(node, Kind.PYTHON, at)
        statement.sites, statement.shapes = sites, body.shapes
        self.run_helpers[node.name.value] = given[0] if given else None
        self.kinds[node.name.value] = Kind.PYTHON
        self.defs.pop(node.name.value, None)
        return statement

    def _run_helper_call(self, call: cst.Call, visitor: cst.CSTVisitor) -> None:
        """A call of a run helper (`evaluate(sess, X_val, y_val)`): the Session it passes is the
        module's, dropped eagerly; its other arguments are Python's."""
        index = self.run_helpers[call.func.value]
        if index is None:
            for arg in call.args:
                arg.value.visit(visitor)
            return
        positional = [a for a in call.args if a.keyword is None and not a.star]
        if any(a.star for a in call.args) or len(positional) <= index:
            raise Blocked(self.line_of(call), f"`{call.func.value}(...)`, a function running a Session, called "
                                              "without it by position")
        session = positional[index]
        if not (isinstance(session.value, cst.Name) and session.value.value in self.sessions):
            raise Blocked(self.line_of(call), f"`{call.func.value}(...)`, a function running a Session, given "
                                              "something other than the program's Session")
        for arg in call.args:
            if arg is not session:
                arg.value.visit(visitor)
        args = [a for a in call.args if a is not session]
        if args:
            args[-1] = args[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)
        self.session_args[id(call)] = call.with_changes(args=args)

    def _factory(self, node) -> bool:
        """`def init_weights(shape): return tf.Variable(tf.random_normal(shape))`: a function that
        only makes a variable of its arguments; called at module level, it makes it once."""
        if not isinstance(node, cst.FunctionDef) or not isinstance(node.body, cst.IndentedBlock):
            return False
        body = [s for s in node.body.body if not (isinstance(s, cst.SimpleStatementLine) and isinstance(
            s.body[0], cst.Expr) and isinstance(s.body[0].value, (cst.SimpleString, cst.ConcatenatedString)))]
        if len(body) != 1 or not isinstance(body[0], cst.SimpleStatementLine) or not isinstance(body[0].body[0], cst.Return):
            return False
        value = body[0].body[0].value
        if not self.tf_call(value, "Variable") or names_read(node) & (self.graph_names() | self.sessions):
            return False
        self._check_supported(value, self.line_of(node))
        self.factory_variables[node.name.value] = value
        return True

    def _cell_factory(self, node) -> bool:
        """`def lstm_cell(): return tf.nn.rnn_cell.DropoutWrapper(tf.nn.rnn_cell.LSTMCell(n), ...)`:
        a function whose TF calls only make RNN cells (and their initializers) of Python values.
        Called by a module-level cell statement (`cell = MultiRNNCell([lstm_cell() for _ in
        range(2)])`), its cells are made once there, as in TF1; called anywhere else, the module keeps
        the compat route."""
        if not isinstance(node, cst.FunctionDef) or not isinstance(node.body, cst.IndentedBlock):
            return False
        if names_read(node) & (self.graph_names() | self.sessions | set(self.builders)):
            return False
        made = False
        for call in calls_in(node):
            path = self.tf_call(call)
            if path is not None:
                if path.startswith("nn.rnn_cell."):
                    made = True
                elif not (is_object_path(path) or path.endswith("_initializer")):
                    return False  # (an initializer object configures a cell)
            elif isinstance(call.func, cst.Name) and call.func.value in self.cell_factories:
                made = True
        return made

    def _cell_factories_called_once(self) -> None:
        """Each call of a cell factory is read by a module-level cell statement (made once), or by
        another cell factory."""
        if not self.cell_factories:  # (most scripts: no second walk of the module)
            return
        read = self._cell_factory_calls | {id(c) for f in functions_in(self.module)
                                           if f.name.value in self.cell_factories for c in calls_in(f)}
        for call in calls_in(self.module):
            if isinstance(call.func, cst.Name) and call.func.value in self.cell_factories and id(call) not in read:
                raise Blocked(self.line_of(call), f"`{call.func.value}(...)`, a function making RNN cells, called "
                                                  "other than by a cell made once at module level")

    def _record_function(self, name: str) -> bool:
        """`name` is only ever given to a dataset's `map` (`records.map(parse_record)`, what
        native.queues writes for a queue pipeline's per-record ops): tf.data traces it into a graph
        function of its own, called once per element, where a `tf.cond` on the record means what it
        meant in TF1's graph."""
        datasets = DatasetNames(SimpleNamespace(module=self.module, names=self.names))
        maps = [c for c in calls_in(self.module) if datasets.receiver(c, "map") is not None and len(c.args) == 1
                and c.args[0].keyword is None and isinstance(c.args[0].value, cst.Name) and c.args[0].value.value == name]
        defined = [d for d in functions_in(self.module) if d.name.value == name]
        return bool(maps) and len(defined) == 1 and names_in(self.module).count(name) == len(maps) + 1

    def _helper(self, node, at: int, name: Optional[str] = None) -> Statement:
        """A function of tensor ops only (no state, no session, no graph names of the module): it
        means the same called inside a `tf.function`."""
        name = name or node.name.value
        if isinstance(node, cst.ClassDef):
            raise Blocked(at, f"the class `{name}`, which builds graph code")
        if self._factory(node):
            self.factories.add(name)
            self.kinds[name] = Kind.HELPER
            return Statement(node, Kind.HELPER, at)
        if self._cell_factory(node):
            self.cell_factories.add(name)
            self.kinds[name] = Kind.HELPER
            return Statement(node, Kind.HELPER, at)
        if isinstance(node, cst.FunctionDef):
            try:
                found = model_mapping.builder(self, node)
            except model_mapping.Refused as why:  # (called once, it may be written where it is called)
                raise Blocked(at, str(why), name)
            if found is not None:
                self._no_placeholder_helpers(node, at, name)
                self.builders[name] = found
                self.helper_variables[name] = found.module_variables
                self.helper_placeholders[name] = found.module_placeholders
                self.helpers.add(name)
                self.kinds[name] = Kind.HELPER
                return Statement(node, Kind.HELPER, at)
        script = self
        graph = self.graph_names()
        calls_model = sorted(names_read(node) & set(self.builders))
        if calls_model:
            raise Blocked(at, f"`{name}`, a function that calls the model function `{calls_model[0]}` "
                              "(only graph statements at module level are mapped)", name)

        own = model_mapping.local_names(node) if isinstance(node, cst.FunctionDef) else set()
        variables = {n for n in names_read(node) - own if self.kinds.get(n) is Kind.VARIABLE}
        placeholders = {n for n in names_read(node) - own if self.kinds.get(n) is Kind.PLACEHOLDER} \
            if isinstance(node, cst.FunctionDef) else set()
        self._no_placeholder_helpers(node, at, name)

        class _Pure(_StateFree):
            def visit_Name(self, ref: cst.Name) -> None:
                if ref.value in variables or ref.value in own or ref.value in placeholders:
                    return  # a module-level variable (read where it is evaluated), a local, a placeholder it is given
                if ref.value in graph or ref.value in script.sessions:
                    raise Blocked(at, f"`{name}`, a function that uses the module's graph (`{ref.value}`)")

            def visit_Global(self, _node) -> None:
                raise Blocked(at, f"`{name}`, a function with `global`")

        allowed = RECORD_FUNCTION_OPS if isinstance(node, cst.FunctionDef) and self._record_function(name) else ()
        allowed += HELPER_SCOPES
        try:
            node.visit(_Pure(self, at, f"`{name}`, a function that builds graph state", allowed))
        except Blocked as stop:  # a function called once may be written where it is called (native.inline)
            if isinstance(node, cst.FunctionDef):
                stop.blocker.function = name
            raise
        self.helpers.add(name)
        self.helper_variables[name] = variables
        self.helper_placeholders[name] = placeholders
        self.kinds[name] = Kind.HELPER
        if isinstance(node, cst.Lambda):
            return Statement(self._line_of_lambda, Kind.HELPER, at)
        return Statement(node, Kind.HELPER, at)

    # -- run sites ----------------------------------------------------------------------------
    def sites_of(self, statement: Statement) -> List[RunSite]:
        """The `sess.run` calls in a Python statement; every other use of the graph is a blocker."""
        script = self
        graph = self.graph_names()
        sites: List[RunSite] = []
        shapes: List[RunSite] = statement.shapes
        assigned = names_assigned(statement.node)

        class _Uses(cst.CSTVisitor):
            def visit_Call(self, call: cst.Call) -> Optional[bool]:
                func = call.func
                if isinstance(func, cst.Name) and func.value in script.run_helpers:
                    script._run_helper_call(call, self)
                    return False
                if isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name) \
                        and func.value.value in script.sessions and func.attr.value == "run":
                    restart = script._restart(call)
                    if restart is not None:
                        script.restarts[id(call)] = restart
                        return False
                    sites.append(script._site(call))
                    for arg in call.args:
                        if arg.keyword is not None and arg.keyword.value == "feed_dict" or (
                                arg.keyword is None and arg is not call.args[0]):
                            if isinstance(arg.value, cst.Dict):
                                for element in arg.value.elements:
                                    element.value.visit(self)
                    return False
                if isinstance(func, cst.Attribute) and func.attr.value == "get_shape" and not call.args \
                        and script._static_shape(call, func.value, shapes):
                    return False
                bound = script._saver_call(call)
                if bound is not None:
                    for parameter, value in bound.items():
                        if parameter not in ("sess", "global_step"):  # (a variable as the step: checked)
                            value.visit(self)
                    return False
                if script.tf_call(call, "summary.FileWriter"):  # in a loop: the TF2 writer
                    if not call.args or call.args[0].keyword not in (None,) and call.args[0].keyword.value != "logdir":
                        raise Blocked(script.line_of(call), "a `FileWriter` without a log directory")
                    script.writers[id(call)] = call.args[0].value
                    call.args[0].value.visit(self)
                    return False
                if isinstance(func, cst.Attribute) and func.attr.value == "add_summary" and script.summary_ops:
                    if len(call.args) != 2 or any(a.keyword is not None and a.keyword.value not in (
                            "summary", "global_step") for a in call.args):
                        raise Blocked(script.line_of(call), "`add_summary` without a step")
                    script.add_summaries[id(call)] = call
                    return None
                if isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name) \
                        and func.attr.value in ("run", "eval") and func.value.value in graph \
                        or script._evaluated_expression(call):  # (`tf.nn.softmax(y).eval(feed)` too)
                    sites.append(script._method_site(call))  # `op.run(feed)`, `t.eval(session=sess)`
                    for arg in call.args:
                        if isinstance(arg.value, cst.Dict):
                            for element in arg.value.elements:
                                element.value.visit(self)
                    return False
                return None

            def visit_Attribute(self, attr: cst.Attribute) -> Optional[bool]:
                if attr.attr.value == "shape" and script._static_shape(attr, attr.value, shapes):
                    return False
                path = script.api(attr)
                if path is not None:
                    if not is_object_path(path) and path not in EAGER_STATEMENTS + checkpoints.CHECKPOINT_FILES:
                        raise Blocked(script.line_of(attr), f"`tf.{path}` in Python code outside the graph")
                    return False
                attr.value.visit(self)
                return False

            def visit_Arg(self, arg: cst.Arg) -> bool:
                arg.value.visit(self)
                return False

            def visit_Dict(self, node: cst.Dict) -> Optional[bool]:
                if id(node) in built:  # `feed.update({x: a})`: its values are Python's
                    for element in node.elements:
                        element.value.visit(self)
                    return False
                return None

            def visit_Subscript(self, node: cst.Subscript) -> Optional[bool]:
                if node.slice and any(node.slice[0].slice.value is k for k in script.feed_set_keys
                                      if isinstance(node.slice[0].slice, cst.Index)):
                    node.value.visit(self)  # `feed[x] = a`: `x` is the key
                    return False
                return None

            def visit_Assign(self, node: cst.Assign) -> Optional[bool]:
                if id(node.value) in built:  # a feed built ahead: its values are Python's
                    for element in node.value.elements:
                        element.value.visit(self)
                    return False
                return None

            def visit_Name(self, name: cst.Name) -> None:
                if name.value in script.sessions:
                    raise Blocked(script.line_of(name), f"the session `{name.value}` used other than by `run`")
                if script.run_helpers.get(name.value) is not None:  # (its calls are read in visit_Call)
                    raise Blocked(script.line_of(name), f"`{name.value}`, a function given the Session, used other "
                                                        "than by a call")
                if name.value in graph and name.value not in assigned:
                    if script.kinds.get(name.value) is not Kind.GRAPH:
                        raise Blocked(script.line_of(name), f"the tensor `{name.value}` used by Python code")
                    # `print(c)` while TF1 built the graph: eagerly, `c` is computed there (native.emit)
                    statement.values.append(RunSite(name, script.line_of(name), name, [name.value], {},
                                                    dict(script.defs)))
                if script.kinds.get(name.value) is Kind.SAVER:
                    raise Blocked(script.line_of(name), f"the saver `{name.value}` used other than by `save` or `restore`")
                if name.value in script.helpers:
                    raise Blocked(script.line_of(name), f"`{name.value}` (graph code) called by Python code")

        built = self._feeds_built_ahead(statement.node)
        statement.node.visit(_Uses())
        return sites

    def _feeds_built_ahead(self, node) -> Set[int]:
        """`feed = {x: a, y: b}` then `sess.run(..., feed_dict=feed)`: the dict literals of tensors
        assigned to a name in this statement, each name's kept in `feed_dicts` (ids returned)."""
        found: Dict[str, List[cst.Dict]] = {}
        copies: Dict[str, List[cst.Call]] = {}  # `fd = dict(base)` of a feed built ahead: its keys, its copy
        feedable = (Kind.PLACEHOLDER, Kind.GRAPH, Kind.NEXT)
        for assign in assignments_in(node):
            value = assign.value
            if len(assign.targets) != 1 or not isinstance(assign.targets[0].target, cst.Name):
                continue
            if isinstance(value, cst.Dict) and value.elements and all(
                    isinstance(e, cst.DictElement) and isinstance(e.key, cst.Name)
                    and self.kinds.get(e.key.value) in feedable for e in value.elements):
                found.setdefault(assign.targets[0].target.value, []).append(value)
            copied = _copied_dict(value)
            if copied in self.feed_dicts and copied not in self.feed_added:
                found.setdefault(assign.targets[0].target.value, []).extend(self.feed_dicts[copied])
                copies.setdefault(assign.targets[0].target.value, []).append(value)
        earlier = [name for name in self.feed_dicts if name not in found]
        self.feed_dicts.update(found)
        literals = [literal for name, group in found.items() if name not in copies for literal in group]
        for name, group in found.items():
            literals += self._feed_extended(node, name, [*group, *copies.get(name, [])])
        for name in earlier:  # (`fd = dict(base)` on one line, `fd[mask] = m` on the next)
            literals += self._feed_extended(node, name, [])
        self.feed_literals += literals
        return {id(literal) for literal in literals}

    def _feed_extended(self, node, name: str, group: List[cst.BaseExpression]) -> List[cst.Dict]:
        """`feed.update({y: b})` and `feed[y] = b` in this statement (native.feed_builds): their keys
        are fed by some runs only (the dict literals of the updates returned)."""
        targets = {id(a.targets[0].target) for a in assignments_in(node) if any(a.value is d for d in group)}
        runs = set()
        for call in calls_in(node):
            if isinstance(call.func, cst.Attribute) and call.func.attr.value == "run" \
                    and isinstance(call.func.value, cst.Name) and call.func.value.value in self.sessions:
                try:
                    feed = bind(call, ("fetches", "feed_dict", "options", "run_metadata")).get("feed_dict")
                except ValueError:
                    continue
                if isinstance(feed, cst.Name) and feed.value == name:
                    runs.add(id(feed))
        uses = feed_uses(node, name, targets, runs)
        if not uses.updates and not uses.sets:
            return []
        if uses.escape is not None:
            raise Blocked(self.line_of(uses.escape), escape_reason(name))
        feedable = (Kind.PLACEHOLDER, Kind.GRAPH, Kind.NEXT)
        dicts = [update_dict(call) for call in uses.updates]
        keys = [e.key if isinstance(e, cst.DictElement) else None for d in dicts for e in d.elements]
        keys += [set_key(target) for target in uses.sets]
        for key in keys:
            if not (isinstance(key, cst.Name) and self.kinds.get(key.value) in feedable):
                raise Blocked(self.line_of(node), f"a feed of `{code(key) if key is not None else '**'}` added to "
                                                  f"`{name}`, not a placeholder or tensor of the graph")
        self.feed_added.setdefault(name, []).extend(k.value for k in keys)
        self.feed_set_keys += [set_key(target) for target in uses.sets]
        return dicts

    def _static_shape(self, node, tensor, shapes: List[RunSite]) -> bool:
        """`t.shape` / `t.get_shape()` read by Python while TF1 built the graph: the static shape
        of `t`, which eager code reads from a trace of the function computing it (a placeholder's
        is its declared shape, a variable's its own)."""
        if not isinstance(tensor, cst.Name):
            return False
        kind = self.kinds.get(tensor.value)
        if kind is Kind.VARIABLE:
            return True  # an eager variable has the same shape
        if kind not in (Kind.GRAPH, Kind.PLACEHOLDER):
            return False
        site = RunSite(node, self.line_of(node), tensor, [tensor.value], {}, dict(self.defs))
        shapes.append(site)
        return True

    def _saver_call(self, call: cst.Call) -> Optional[Dict[str, cst.BaseExpression]]:
        """`saver.save(sess, path, global_step=step)` / `saver.restore(sess, path)`: the eager
        saver's, with no session (a variable given as `global_step` is read eagerly). Its
        arguments by parameter, or None when `call` is not one."""
        func = call.func
        if not (isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name)
                and self.kinds.get(func.value.value) is Kind.SAVER and func.attr.value in ("save", "restore")):
            return None
        at = self.line_of(call)
        try:
            bound = bind(call, SAVE_PARAMETERS if func.attr.value == "save" else ("sess", "save_path"))
        except ValueError as why:
            raise Blocked(at, f"`{code(func)}(...)`: {why}")
        session = bound.get("sess")
        if call.args[0].keyword is not None or not (isinstance(session, cst.Name) and session.value in self.sessions):
            raise Blocked(at, f"`{code(func)}(...)` on other than the script's session")
        step = bound.get("global_step")
        if step is not None and names_read(step) & self.graph_names() - self.variable_names():
            raise Blocked(at, f"`{code(func)}(global_step=...)` of a tensor")
        if func.attr.value == "restore":
            self._restores.append(at)
        self.saver_calls[id(call)] = call
        return bound

    def _restart(self, call: cst.Call):
        """`sess.run(iterator.initializer)` / `sess.run(init)` of `iterator.make_initializer(ds)`:
        (iterator, dataset) to restart, or None."""
        fed = self._fed_restart(call)
        if fed is not None:
            return fed
        if len(call.args) != 1:
            return None
        fetch = call.args[0].value
        if isinstance(fetch, cst.Attribute) and fetch.attr.value == "initializer" and isinstance(fetch.value, cst.Name):
            definition = self.defs.get(fetch.value.value)
            if definition is not None and definition.kind is Kind.ITERATOR and definition.dataset is not None:
                return fetch.value.value, definition.dataset
        if isinstance(fetch, cst.Name) and self.kinds.get(fetch.value) is Kind.ITERATOR_INIT:
            definition = self.defs[fetch.value]
            return definition.iterator, definition.dataset
        return None

    def _fed_restart(self, call: cst.Call):
        """`sess.run([iterator.initializer, <variable initializers>], feed_dict={x_ph: a, ...})` of
        an iterator over a dataset of placeholders: (iterator, `make_dataset(a, ...)`), or None."""
        if not call.args or len(call.args) > 2:
            return None
        fetch = call.args[0].value
        items = [e.value for e in fetch.elements] if isinstance(fetch, (cst.List, cst.Tuple)) else [fetch]
        starts = [i for i in items if isinstance(i, cst.Attribute) and i.attr.value == "initializer"
                  and isinstance(i.value, cst.Name) and self.defs.get(i.value.value) is not None
                  and self.defs[i.value.value].fed_dataset is not None]
        if len(starts) != 1 or any(i is not starts[0] and not self._is_init(i) for i in items):
            return None
        fed = self.defs[starts[0].value.value].fed_dataset
        feed = call.args[1] if len(call.args) == 2 else None
        if feed is None or (feed.keyword is not None and feed.keyword.value != "feed_dict") \
                or not isinstance(feed.value, cst.Dict):
            raise Blocked(self.line_of(call), "an iterator over a dataset of placeholders initialized without a feed")
        values = {e.key.value: e.value for e in feed.value.elements
                  if isinstance(e, cst.DictElement) and isinstance(e.key, cst.Name)}
        if set(values) != set(fed.placeholders) or len(values) != len(feed.value.elements):
            raise Blocked(self.line_of(call), "an iterator over a dataset of placeholders fed other than by each of them")
        made = f"{fed.function}({', '.join(code(values[n]) for n in fed.placeholders)})"
        return starts[0].value.value, cst.parse_expression(made)

    def _evaluated_expression(self, call: cst.Call) -> bool:
        """`tf.nn.softmax(logits).eval(feed)`: an expression of the graph's tensors evaluated (a
        fetch of it, as `sess.run(tf.nn.softmax(logits), feed)`)."""
        func = call.func
        if not (isinstance(func, cst.Attribute) and func.attr.value == "eval"
                and isinstance(func.value, (cst.Call, cst.BinaryOperation, cst.Subscript, cst.UnaryOperation))):
            return False
        reads = names_read(func.value)
        graph = self.graph_names()
        return bool(reads & graph) and not reads - graph - self.aliases - self.helpers

    def _method_site(self, call: cst.Call) -> RunSite:
        """`t.eval(feed_dict=None, session=None)` / `op.run(feed_dict=None, session=None)`: the
        same as `sess.run(t, feed_dict)` on the session given or the default one."""
        at = self.line_of(call)
        try:
            bound = bind(call, ("feed_dict", "session"))
        except ValueError as why:
            raise Blocked(at, f"`.{call.func.attr.value}(...)`: {why}")
        session = bound.get("session")
        if session is not None and not (isinstance(session, cst.Name) and session.value in self.sessions):
            raise Blocked(at, f"`.{call.func.attr.value}(session=...)` of an unknown session")
        args = [cst.Arg(call.func.value)]
        if "feed_dict" in bound:
            args.append(cst.Arg(bound["feed_dict"], keyword=cst.Name("feed_dict")))
        site = self._site(cst.Call(func=cst.Name("run"), args=args), at)
        site.call = call
        return site

    def _site(self, call: cst.Call, at: Optional[int] = None) -> RunSite:
        at = at or self.line_of(call)
        try:
            bound = bind(call, ("fetches", "feed_dict", "options", "run_metadata"))
        except ValueError as why:
            raise Blocked(at, f"`sess.run`: {why}")
        if set(bound) - {"fetches", "feed_dict"}:
            raise Blocked(at, "`sess.run(options=...)`")
        fetches = bound.get("fetches")
        if fetches is None:
            raise Blocked(at, "`sess.run` without fetches")
        outer = None
        if self._mixed(fetches, at):
            outer, fetched = fetches, sorted(names_read(fetches) & self.graph_names())
            fetches = cst.Name(fetched[0]) if len(fetched) == 1 else cst.Tuple([cst.Element(cst.Name(n))
                                                                                for n in fetched])
        else:
            fetched = self._fetched(fetches, at)
        feeds: Dict[str, cst.BaseExpression] = {}
        feed = bound.get("feed_dict")
        if isinstance(feed, cst.Name) and feed.value in self.feed_dicts:
            site = self._site_fed_ahead(call, at, fetches, fetched, feed.value)
            site.outer = outer
            return site
        if feed is not None:
            if not isinstance(feed, cst.Dict):
                raise Blocked(at, "a `feed_dict` that is not a dict literal")
            for element in feed.elements:
                if not isinstance(element, cst.DictElement) or not isinstance(element.key, cst.Name):
                    raise Blocked(at, "a `feed_dict` key that is not a name")
                key = element.key.value
                if self.kinds.get(key) not in (Kind.PLACEHOLDER, Kind.GRAPH, Kind.NEXT):
                    raise Blocked(at, f"a `feed_dict` that feeds `{key}`, which is not a tensor")
                feeds[key] = element.value
        return RunSite(call, at, fetches, fetched, feeds, dict(self.defs), outer=outer)

    def _mixed(self, fetches, at: int) -> bool:
        """A fetch that is one expression of graph tensors and Python values (`tf.reduce_mean(
        tf.square(y - targets))`, `targets` numpy data): TF1 built its ops anew at each run and
        computed them in it; eagerly the same ops run on the tensors the run's function returns."""
        if isinstance(fetches, (cst.Name, cst.List, cst.Tuple, cst.Dict)):
            return False
        reads = names_read(fetches)
        graph = self.graph_names()
        python = reads - graph - self.aliases - self.helpers
        if not reads & graph or not python or python & self.sessions:
            return False
        if any(self.kinds.get(n) in (Kind.TRAIN, Kind.INIT, Kind.SAVER) for n in reads):
            return False
        self._check_supported(fetches, at)
        fetches.visit(_StateFree(self, at, f"the fetch `{code(fetches)}`"))
        return True

    def _site_fed_ahead(self, call, at: int, fetches, fetched: List[str], feed: str) -> RunSite:
        """A run fed by a dict built ahead. A tensor that only some of its literals feed (an RNN's
        state, fed once there is one) is an optional argument: None computes it as TF1 did."""
        keys = [[e.key.value for e in literal.elements] for literal in self.feed_dicts[feed]]
        always = set.intersection(*map(set, keys))
        always |= set(keys_added_before(self.module, call, feed))  # (`fd = dict(base)`, `fd[mask] = m`, the run)
        keys.append(self.feed_added.get(feed, []))  # (`feed.update({k: v})`, `feed[k] = v`: some runs)
        feeds: Dict[str, cst.BaseExpression] = {}
        for key in dict.fromkeys(k for group in keys for k in group):
            default = self.defs[key].default if key in self.defs and self.kinds.get(key) is Kind.PLACEHOLDER else None
            if key in always:
                feeds[key] = cst.parse_expression(f"{feed}[{key!r}]")
            elif self.kinds.get(key) is Kind.GRAPH:
                feeds[key] = cst.parse_expression(f"{feed}.get({key!r})")
            elif default is not None:  # a `placeholder_with_default` left unfed: its (literal) default
                feeds[key] = cst.parse_expression(f"{feed}.get({key!r}, {code(default)})")
                always.add(key)
            else:
                raise Blocked(at, f"`{key}` fed by some of the dicts `{feed}` holds, not all")
        return RunSite(call, at, fetches, fetched, feeds, dict(self.defs), optional=set(feeds) - always)

    def _fetched(self, fetches, at: int) -> List[str]:
        if isinstance(fetches, cst.Name):
            kind = self.kinds.get(fetches.value)
            if kind in (Kind.GRAPH, Kind.VARIABLE, Kind.TRAIN, Kind.PLACEHOLDER, Kind.NEXT):
                return [fetches.value]
            if kind is Kind.INIT:
                raise Blocked(at, "an initializer run with other fetches, or again inside Python code (a loop, a "
                                  "function): TF1 reset the variables there, eager variables are made once")
            raise Blocked(at, f"`sess.run({fetches.value})`, a fetch tfmigrate cannot follow")
        if isinstance(fetches, (cst.List, cst.Tuple)):
            out: List[str] = []
            for element in fetches.elements:
                if isinstance(element, cst.StarredElement):
                    raise Blocked(at, "a starred fetch")
                out += self._fetched(element.value, at)
            return out
        if isinstance(fetches, cst.Dict):
            out = []
            for element in fetches.elements:
                if not isinstance(element, cst.DictElement):
                    raise Blocked(at, "a `**` fetch")
                out += self._fetched(element.value, at)
            return out
        reads = names_read(fetches)
        graph = self.graph_names()
        if reads & graph and not reads - graph - self.aliases - self.helpers:
            self._check_supported(fetches, at)  # `sess.run(tf.round(y))`: an expression of the graph
            return sorted(reads & graph)
        raise Blocked(at, f"the fetch `{code(fetches)}`")


def _copied_dict(value: cst.BaseExpression) -> Optional[str]:
    """`base` of `dict(base)`, a copy of the dict it names."""
    if isinstance(value, cst.Call) and isinstance(value.func, cst.Name) and value.func.value == "dict" \
            and len(value.args) == 1 and value.args[0].keyword is None and not value.args[0].star \
            and isinstance(value.args[0].value, cst.Name):
        return value.args[0].value.value
    return None


def _assigns_only(block) -> bool:
    """A loop body that only binds names (`h = tf.matmul(h, w[i])`, under `if`s and loops): it
    builds values; one with a bare call (`print(h.shape)`, `hs.append(h)`) is Python code."""
    for statement in block.body:
        if isinstance(statement, cst.SimpleStatementLine):
            if not all(isinstance(small, (cst.Assign, cst.AugAssign, cst.AnnAssign, cst.Pass))
                       for small in statement.body):
                return False
        elif isinstance(statement, (cst.If, cst.For)):
            if not _assigns_only(statement.body) or statement.orelse is not None and not _assigns_only(
                    statement.orelse.body if isinstance(statement.orelse, cst.Else) else cst.IndentedBlock([statement.orelse])):
                return False
        else:
            return False
    return True


def _exits(node) -> bool:
    """Whether a loop body leaves early (`break`, `return`), which a graph block may not."""
    class _Exit(cst.CSTVisitor):
        found = False

        def visit_Break(self, _) -> None:
            _Exit.found = True

        def visit_Return(self, _) -> None:
            _Exit.found = True

        def visit_FunctionDef(self, _) -> bool:
            return False

    node.visit(_Exit())
    return _Exit.found


def _as_default_of(node, sessions: Set[str]) -> bool:
    """`sess.as_default()` of one of `sessions`."""
    return (isinstance(node, cst.Call) and not node.args and isinstance(node.func, cst.Attribute)
            and node.func.attr.value == "as_default" and isinstance(node.func.value, cst.Name)
            and node.func.value.value in sessions)


class _StateFree(cst.CSTVisitor):
    """Refuses TF calls that make graph state or need a session (STATEFUL, UNSUPPORTED): what
    a function or block may not do to mean the same inside a `tf.function`."""

    def __init__(self, script: Script, at: int, what: str, allowed: Tuple[str, ...] = ()):
        super().__init__()
        self.script, self.at, self.what, self.allowed = script, at, what, allowed

    def visit_Attribute(self, attr: cst.Attribute) -> Optional[bool]:
        path = self.script.api(attr)
        if path is None:
            return None
        if path in self.allowed:
            return False
        if path.startswith(STATEFUL) or path.startswith(tuple(UNSUPPORTED)):
            raise Blocked(self.at, f"{self.what} (`tf.{path}`)")
        return False

    def visit_Call(self, call: cst.Call) -> None:
        """A random op draws anew at each evaluation, in TF1's `sess.run` as in a `tf.function`;
        one with its own seed restarted its sequence in each Session (TF2 draws other numbers)."""
        path = self.script.tf_call(call)
        if path is not None and not self.script.pinned and any(
                a.keyword is not None and a.keyword.value == "seed" for a in call.args):
            raise Blocked(self.at, f"{self.what} (`tf.{path}(seed=...)`, a random op with its own seed)")
        why = control_flow_differs(call, path) if path in CONTROL_FLOW and path not in self.allowed else None
        if why is not None:
            raise Blocked(self.at, f"{self.what} ({why})")


# Dataset methods that keep each element's parts in place (reorder, group, repeat them).
ELEMENT_WISE = ("shuffle", "batch", "repeat", "prefetch", "take", "skip", "cache", "padded_batch")
# Calls whose result has the dtype they name, not their input's.
CASTS = ("cast", "to_float", "to_double", "to_int32", "to_int64", "dtypes.cast", "saturate_cast")


def _narrow_dtype(dtype, script: Script) -> bool:
    """A dtype Keras layers compute in as TF1's did: float32 (their default), or one layers never take."""
    if isinstance(dtype, str):  # a literal default's (`placeholder_with_default(0.5, ...)`)
        return dtype in ("float32", "int32", "bool")
    if isinstance(dtype, cst.SimpleString):
        return dtype.evaluated_value in ("float", "float32", "int32", "int64", "string", "bool")
    return script.api(dtype) in ("float32", "int32", "int64", "string", "bool", "uint8")


def _literal_dtype(node, script: Script) -> Optional[str]:
    if isinstance(node, cst.Name) and node.value in ("True", "False"):
        return "bool"
    if isinstance(node, cst.Comparison) or isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Not):
        return "bool"  # (`config["mode"] == "st_gumbel"`: a bool, or an array or tensor of bools)
    if isinstance(node, cst.Float):
        return "float32"
    if isinstance(node, cst.Integer):
        return "int32"
    if isinstance(node, cst.Call) and script.tf_call(node, "constant") and node.args:
        inner = node.args[0].value
        for arg in node.args[1:]:
            if arg.keyword is not None and arg.keyword.value == "dtype" or arg.keyword is None:
                return None
        return _literal_dtype(inner, script)
    return None

