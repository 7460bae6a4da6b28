"""TF1 model functions on TensorFlow's model-mapping route (issue 21).

A module-level function that makes variables the TF1 way (`get_variable`, `variable_scope`,
`tf.layers`, `tf.Variable`) cannot run inside a `tf.function` as it is: it would make its
variables again at every trace. TensorFlow's migration guide keeps such code and runs it inside a
`tf.Module` whose `__call__` is decorated with `track_tf1_style_variables`: each variable is made
once, with its TF1 name, and found again by name on every later call.

    def generator(z):                                    def generator(z):   (unchanged)
        with tf.variable_scope("generator"):                 ...
            return tf.layers.dense(z, 8)             ->  generator_model = TF1Model(generator)
    G = generator(Z)        (graph statement)            G = generator_model(Z)   (inside the tf.function)

Which object a call goes through decides which variables it shares, so the analysis refuses what
it cannot prove the same as TF1:
- a function that makes variables under `variable_scope` shares them by name: one object for all
  its calls; a second call under a literal scope name must say `reuse=`, else TF1 made new layers;
- a function that makes them outside any scope (`tf.Variable`, unnamed layers) made new ones at
  each call in TF1: one object per call site;
- `tf.Variable` inside tracked code would be made at every call (it is not tracked): it becomes
  `get_variable` under TF1's name (`Variable`, `Variable_1`, ... in the function's own order) with
  its initial value as the initializer, computed once.
Nothing here touches the rest of the script: native.script calls `builder` for each function,
native.emit writes `TF1MODEL` and the objects.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Dict, List, Optional, Set, Tuple

import libcst as cst
import libcst.matchers as m

from tfmigrate.facts.graph_words import RNN_RUNNERS
import tfmigrate.native.own_collections as own_collections
import tfmigrate.native.seeded_draws as seeded_draws
from tfmigrate.native.control_flow import tracked_control_flow_refused
from tfmigrate.native.syntax import bind, code, names_assigned, names_in, names_read

# API paths (after the alias) whose call makes variables in TF1 model code (an RNN cell makes its
# own when `dynamic_rnn` runs it: under the tracked scope, found again by name at each call).
MAKES_VARIABLES = ("get_variable", "Variable", "layers.", "nn.rnn_cell.")
SCOPES = ("variable_scope",)
# What a model function may not do on this route (it needs a graph or a session, or its state
# would not be tracked): the script keeps the compat route.
REFUSED = {
    "placeholder": "a placeholder",
    "sparse_placeholder": "a placeholder",
    "Session": "a Session",
    "InteractiveSession": "a Session",
    "train.": "`tf.train` (optimizers, savers, queues) inside model code",
    "summary.": "TF1 summaries",
    "get_collection": "graph collections",
    "add_to_collection": "graph collections",
    "control_dependencies": "`tf.control_dependencies`",
    "metrics.": "`tf.metrics.*`",
    "get_default_graph": "the default graph",
    "global_variables": "the graph's variable lists",
    "trainable_variables": "the graph's variable lists",
    "py_func": "`tf.py_func`",
    "assign": "variable assignments",
    "get_variable_scope": "`tf.get_variable_scope()`",
}
_VARIABLE_PARAMS = ("initial_value", "trainable", "collections", "validate_shape", "caching_device", "name",
                    "variable_def", "dtype", "expected_shape", "import_scope", "constraint", "use_resource",
                    "synchronization", "aggregation", "shape")

TF1MODEL = '''class TF1Model({tf}.Module):
    """TF1 model code run eagerly on TensorFlow's model-mapping route: the variables `build` makes
    (`get_variable`, `variable_scope`, `tf.compat.v1.layers`) are made on the first call, with their
    TF1 names, and reused by every later call. A variable made without an initializer gets TF1's
    default, Glorot uniform (tf-keras would draw another one)."""

    def __init__(self, build):
        super().__init__(name=build.__name__)
        self.build = build

    @{tf}.compat.v1.keras.utils.track_tf1_style_variables
    def __call__(self, *args, **kwargs):
        default = {tf}.compat.v1.glorot_uniform_initializer()
        with {tf}.compat.v1.variable_scope({tf}.compat.v1.get_variable_scope(), initializer=default):
            return self.build(*args, **kwargs)
'''

# The same, for a module whose model functions TF1 called under a module-level variable scope
# (`with tf.variable_scope("disc") as scope: d_real = discriminator(x)`): the object opens that
# scope, so its variables keep their TF1 names (`disc/h/kernel`), which checkpoints and
# `v.name.startswith("disc/")` read.
TF1MODEL_SCOPED = '''class TF1Model({tf}.Module):
    """TF1 model code run eagerly on TensorFlow's model-mapping route: the variables `build` makes
    (`get_variable`, `variable_scope`, `tf.compat.v1.layers`) are made on the first call, with their
    TF1 names (under `scope`, the variable scope TF1 called it in, when given), and reused by every
    later call. A variable made without an initializer gets TF1's default, Glorot uniform (tf-keras
    would draw another one)."""

    def __init__(self, build, scope=None):
        super().__init__(name=build.__name__)
        self.build, self.scope = build, scope

    @{tf}.compat.v1.keras.utils.track_tf1_style_variables
    def __call__(self, *args, **kwargs):
        default = {tf}.compat.v1.glorot_uniform_initializer()
        with {tf}.compat.v1.variable_scope(self.scope or {tf}.compat.v1.get_variable_scope(), initializer=default):
            return self.build(*args, **kwargs)
'''


def object_scopes(b: "Builder") -> Dict[str, str]:
    """Object name -> the module-level variable scope every call through it was made under (TF1's
    prefix of its variables' names), for the objects whose calls all share one."""
    scopes: Dict[str, Set[str]] = {}
    for call in b.sites:
        name = b.objects.get(id(call))
        if name is not None:
            scopes.setdefault(name, set()).add(b.site_scopes.get(id(call), ("", ""))[0])
    return {name: next(iter(found)) for name, found in scopes.items() if len(found) == 1 and "" not in found}


class Refused(Exception):
    """The function is TF1 model code this route cannot prove the same (the message says why)."""


@dataclass
class Builder:
    """A module-level function that makes variables."""
    name: str
    node: Optional[cst.FunctionDef]    # None: a model function the script imports (native.imported_models)
    scoped: bool                       # its variables are made under `variable_scope` (shared by name)
    literal_scopes: List[str]          # its `variable_scope("name")` names
    reuse_given: bool                  # every literal `variable_scope` takes `reuse=`
    variables: List[cst.Call] = field(default_factory=list)  # its `tf.Variable(...)` calls
    module_variables: Set[str] = field(default_factory=set)  # module-level variables it reads
    module_placeholders: Set[str] = field(default_factory=set)  # placeholders it reads (keyword parameters)
    sites: List[cst.Call] = field(default_factory=list)      # its calls in graph statements
    # id(site) -> (the module-level variable scope around it, how it reuses: "", "reuse", "auto")
    site_scopes: Dict[int, Tuple[str, str]] = field(default_factory=dict)
    anew: Optional[str] = None  # what TF1 made anew at each call even in a reused scope (`tf.Variable`)
    shared_by_scope: bool = False  # its calls share one object: a module-level scope reuses its variables
    objects: Dict[int, str] = field(default_factory=dict)    # id(site) -> the tracked object
    batch_norms: List[cst.Call] = field(default_factory=list)  # its `tf.layers.batch_normalization` calls
    seeded: Optional[str] = None  # a variable's initial value drawn with a seed of its own (`tf.random_uniform`)
    computed_scopes: bool = False  # a `variable_scope` named by an expression (`"fc%d" % i`), not in literal_scopes
    collections: Set[str] = field(default_factory=set)  # the program's own collections it adds to (own_collections)


def builder(script, node: cst.FunctionDef) -> Optional[Builder]:
    """The function as a Builder; None when it makes no variable; Refused when it does, in a way
    this route cannot keep (`script`: the native.script.Script analysing the module)."""
    name = node.name.value
    paths = []  # (call, api path, loop depth) of every TensorFlow call in the body, in order
    makers: List[bool] = []  # per call that makes variables: under a variable scope (its own or a callee's)
    inherited: List[Builder] = []  # model functions it calls

    class _Calls(cst.CSTVisitor):
        def __init__(self):
            self.depth = 0  # loops and comprehensions around the call
            self.scoped = 0  # `with variable_scope(...)` blocks around it
            self.local: List[str] = []  # the local functions around it (`def weight(...)` in the body)
            self.local_makers: Set[str] = set()  # local functions that make variables where they are called

        def visit_FunctionDef(self, fn: cst.FunctionDef) -> None:
            self.local.append(fn.name.value)

        def leave_FunctionDef(self, fn: cst.FunctionDef) -> None:
            self.local.pop()

        def visit_With(self, node: cst.With) -> None:
            if any(_names_a_scope(script, item.item) for item in node.items):
                self.scoped += 1

        def leave_With(self, node: cst.With) -> None:
            if any(_names_a_scope(script, item.item) for item in node.items):
                self.scoped -= 1

        def _enter(self, _node) -> None:
            self.depth += 1

        def _leave(self, _node) -> None:
            self.depth -= 1

        visit_For = visit_While = visit_ListComp = visit_GeneratorExp = visit_DictComp = visit_SetComp = _enter
        leave_For = leave_While = leave_ListComp = leave_GeneratorExp = leave_DictComp = leave_SetComp = _leave

        def visit_Call(self, call: cst.Call) -> None:
            path = script.tf_call(call)
            if path is not None and self.local and path == "Variable":
                raise Refused(f"`{name}`, a model function that makes a `tf.Variable` in its local function "
                              f"`{self.local[-1]}`")
            if path is not None:
                paths.append((call, path, self.depth))
                if path.startswith(MAKES_VARIABLES) and self.local:
                    self.local_makers.update(self.local)  # (made where the local function is called)
                elif path.startswith(MAKES_VARIABLES):
                    makers.append(bool(self.scoped))
            elif isinstance(call.func, cst.Name) and call.func.value in self.local_makers:
                makers.append(bool(self.scoped))
            elif isinstance(call.func, cst.Name) and call.func.value in script.builders:
                inner = script.builders[call.func.value]
                makers.append(inner.scoped or bool(self.scoped))  # (its variables named under the scope around it)
                inherited.append(inner)

        def visit_Global(self, _node) -> None:
            raise Refused(f"`{name}`, a model function with `global`")

        visit_Nonlocal = visit_Global

    node.body.visit(_Calls())
    if not makers and not any(path in SCOPES for _, path, _ in paths):
        return None
    # (variables made both inside and outside a scope of its own (`emb`, then `rnn_layer/...`): named
    # from the scope around each call, as a function making them all outside one)
    reentered = {id(item.item.args[0].value) for w in _withs(node) for item in w.items
                 if script.tf_call(item.item, *SCOPES) and not _names_a_scope(script, item.item)}
    collections = own_collections.keys_added(node.body, script.tf_call)
    for call, path, _ in paths:
        if path == own_collections.ADD and own_collections.key(call) is not None:
            continue  # (a collection of the program's own: made in the traced graph, native.own_collections)
        for prefix, what in REFUSED.items():
            if path.startswith(prefix) and id(call) not in reentered:
                raise Refused(f"`{name}`, a model function using {what} (`tf.{path}`)")
        why = tracked_control_flow_refused(call, path, script.tf_call, MAKES_VARIABLES)
        if why is not None:
            raise Refused(f"`{name}`, a model function with {why}")
    graph = script.graph_names() | script.sessions
    read = names_read(node.body) - local_names(node)
    variables = read & script.variable_names()  # made once, at module level
    placeholders = read & script.placeholder_names()  # given as keywords at each call
    used = sorted(read & graph - variables - placeholders)
    if used:
        raise Refused(f"`{name}`, a model function that reads the module's graph (`{used[0]}`)")
    scopes = [call for call, path, _ in paths if path in SCOPES and _names_a_scope(script, call)]
    literal, reuse_given, computed = [], True, False
    for call in scopes:
        first = call.args[0].value if call.args and call.args[0].keyword is None else None
        if isinstance(first, cst.SimpleString):
            literal.append(first.evaluated_value)
            reuse_given &= any(a.keyword is not None and a.keyword.value == "reuse" for a in call.args) \
                or _reuses_on_a_flag(node, call)
        elif not (isinstance(first, cst.Name) and first.value in _params(node)):
            # `variable_scope("fc%d" % i)`: named as TF1 named it (the body runs as written), for a
            # function called once (check_sharing): which names it makes is not read here
            if first is None or names_read(first) - local_names(node) - {"str", "format", "len"}:
                raise Refused(f"`{name}`, a model function whose `variable_scope` name reads the module "
                              "(neither a literal, a parameter nor computed from its own values)")
            computed = True
    made, anew = [], None
    for call, path, depth in paths:
        if path == "Variable":
            if depth:
                raise Refused(f"`{name}`, a model function that makes a `tf.Variable` in a loop")
            made.append(call)
        if anew is None and (path == "Variable" or path.startswith("layers.") and not any(
                a.keyword is not None and a.keyword.value == "name" for a in call.args)):
            # (an unnamed layer's scope is counted, `dense_1`: TF1 looked for new names after `reuse_variables()`;
            # an RNN cell made again under a reusing scope found its variables, run by dynamic_rnn or called:
            # measured in TF 2.21's graph mode)
            anew = f"`tf.{path}`" + (" without a name" if path.startswith("layers.") else "")
    for inner in inherited:
        computed |= inner.computed_scopes
        if inner.module_placeholders:
            raise Refused(f"`{name}`, a model function calling `{inner.name}`, which reads the module's placeholders")
        literal += inner.literal_scopes
        reuse_given &= inner.reuse_given
        variables |= inner.module_variables
        anew = anew or inner.anew
        collections |= inner.collections
    seeded = _seeded_initial_value(name, paths, script.pinned)
    for inner in inherited:
        seeded = seeded or inner.seeded
    norms = [call for call, path, _ in paths if path == "layers.batch_normalization"]
    for inner in inherited:
        if inner.batch_norms:
            raise Refused(f"`{name}`, a model function calling `{inner.name}`, which makes batch normalization")
    return Builder(name, node, all(makers) if makers else True, literal, reuse_given, made, set(variables),
                   set(placeholders), anew=anew, batch_norms=norms, seeded=seeded, computed_scopes=computed,
                   collections=collections)


def _withs(node: cst.CSTNode):
    found = []

    class _Withs(cst.CSTVisitor):
        def visit_With(self, w: cst.With) -> None:
            found.append(w)

    node.visit(_Withs())
    return found


def _reuses_on_a_flag(node: cst.FunctionDef, call: cst.Call) -> bool:
    """`with tf.variable_scope("D") as scope: if reuse: scope.reuse_variables()`, the DCGAN
    spelling of `variable_scope("D", reuse=reuse)`, with `reuse` a parameter of the function."""
    for w in _withs(node):
        item = next((item for item in w.items if item.item is call), None)
        if item is None or not m.matches(item.asname, m.AsName(name=m.Name())):
            continue
        scope = item.asname.name.value
        first = w.body.body[0] if w.body.body else None
        return m.matches(first, m.If(test=m.Name(), orelse=None, body=m.IndentedBlock(body=[m.SimpleStatementLine(
            body=[m.Expr(value=m.Call(func=m.Attribute(value=m.Name(scope), attr=m.Name("reuse_variables")),
                                      args=[]))])]))) and first.test.value in _params(node)
    return False


def _names_a_scope(script, item: cst.BaseExpression) -> bool:
    """A `with` item that opens a named scope: not `variable_scope(tf.get_variable_scope(), ...)`,
    which enters the current scope again (for its initializer; native.op_seeds writes it)."""
    if not script.tf_call(item, *SCOPES):
        return False
    first = item.args[0].value if isinstance(item, cst.Call) and item.args and item.args[0].keyword is None else None
    return not (isinstance(first, cst.Call) and script.tf_call(first) == "get_variable_scope")


def _seeded_initial_value(name: str, paths, pinned: bool = False) -> Optional[str]:
    """The first random op with a seed of its own that draws a variable's initial value (its TF
    path; an initializer given to a layer draws its kernel); Refused for one drawn elsewhere.
    Eagerly, ops of one kind and seed share one sequence where TF1 restarted it per op
    (native.seeded_draws): a value drawn once is the same, a draw at every call or step is not,
    unless the seeds are TF1's own, written out (`pinned`, native.op_seeds: the function is called
    once, and a draw at each step becomes a Generator that continues TF1's sequence)."""
    initial = {id(arg.value) for call, path, _ in paths if path in ("Variable", "get_variable")
               for arg in call.args if arg.keyword is None or arg.keyword.value in ("initial_value", "initializer")}
    initial |= {id(arg.value) for call, _, _ in paths for arg in call.args
                if arg.keyword is not None and arg.keyword.value.endswith("initializer")}
    first = None
    for call, path, _ in paths:
        seed = seeded_draws.seed_given(call)
        if seed is None or pinned and isinstance(seed, cst.Name):
            continue  # (a seed parameter native.op_seeds wrote: each call gives its own, TF1's)
        if id(call) not in initial and not pinned:
            raise Refused(f"`{name}`, a model function evaluating `tf.{path}(seed=...)`, a random op with its own "
                          "seed, at each call (eager TF2 continues one sequence for every op of its kind and seed, "
                          "where TF1 started one per op)")
        first = first or path
    return first


def check_sharing(builders: Dict[str, Builder]) -> None:
    """Refused where one object per function (scoped) or per call site (unscoped) would share
    other variables than TF1 did."""
    owner: Dict[str, str] = {}
    for b in builders.values():
        if not b.sites:
            continue  # only called by other model functions: inside their objects
        b.shared_by_scope = _shared_by_scope(b)
        if b.computed_scopes and (len(b.sites) > 1 or b.shared_by_scope):
            raise Refused(f"`{b.name}`, called {len(b.sites)} times, with a `variable_scope` named by an expression "
                          "(whether TF1 shared its variables between the calls is not read)")
        if b.scoped and len(b.sites) > 1 and b.literal_scopes and not b.reuse_given and not b.shared_by_scope:
            raise Refused(f"`{b.name}`, called {len(b.sites)} times under the variable scope "
                          f"`{b.literal_scopes[0]}` without `reuse=` (TF1 made new layers at each call)")
        for scope in b.literal_scopes:
            if owner.setdefault(scope, b.name) != b.name:
                raise Refused(f"`{owner[scope]}` and `{b.name}`, two model functions making variables under "
                              f"the same variable scope `{scope}`")


def _shared_by_scope(b: Builder) -> bool:
    """Whether the module-level variable scope around the function's calls shares its variables
    between them, as TF1 did: all under the same scope, the first call making them (no `reuse=True`),
    every later one reusing them (`scope.reuse_variables()` before it, `reuse=True`, `tf.AUTO_REUSE`).
    Refused where a scope reuses variables some other way (TF1 raised, or made new ones)."""
    modes = [b.site_scopes.get(id(call), ("", "")) for call in b.sites]
    if not any(mode for _, mode in modes) or len(modes) == 1 and modes[0][1] == "auto":
        return False  # (no reuse; one call under AUTO_REUSE: made once either way)
    scopes = {scope for scope, _ in modes}
    if len(modes) == 1 or len(scopes) != 1 or "" in scopes or modes[0][1] == "reuse" \
            or not all(mode for _, mode in modes[1:]):
        raise Refused(f"`{b.name}`, called under variable scopes that reuse its variables other than by a first "
                      "call making them and later calls under the same scope reusing them")
    if b.anew:
        raise Refused(f"`{b.name}`, a model function making {b.anew}, called again under a variable scope that "
                      "reuses variables (TF1 made that one anew, or looked for it under a new name)")
    return True


def variable_as_get_variable(tf: str, call: cst.Call, name: str, name_code: Optional[str] = None) -> Optional[str]:
    """`tf.Variable(init, name="w")` as `get_variable` (tracked), or None when an argument has no
    `get_variable` meaning (`name_code`: the name as an expression computed where it is made)."""
    try:
        bound = bind(call, _VARIABLE_PARAMS)
    except ValueError:
        return None
    if "initial_value" not in bound or set(bound) - {"initial_value", "trainable", "name", "dtype"}:
        return None
    args = [name_code or f'"{name}"', f"initializer=lambda: {code(bound['initial_value'])}"]
    if "dtype" in bound:
        args.append(f"dtype={code(bound['dtype'])}")
    if "trainable" in bound:
        args.append(f"trainable={code(bound['trainable'])}")
    return f"{tf}.compat.v1.get_variable({', '.join(args)})"


def variable_names(b: Builder) -> List[str]:
    """TF1's names for the function's `tf.Variable`s, in order: `name=` or `Variable`, made unique
    as TF1's graph did (`w`, `w_1`)."""
    seen: Dict[str, int] = {}
    names = []
    for call in b.variables:
        named = next((a.value for a in call.args if a.keyword is not None and a.keyword.value == "name"), None)
        base = named.evaluated_value if isinstance(named, cst.SimpleString) else "Variable"
        count = seen.get(base, 0)
        seen[base] = count + 1
        names.append(base if count == 0 else f"{base}_{count}")
    return names


def deferred_initial_value(call: cst.Call, path: Optional[str], api) -> cst.Call:
    """`get_variable("b", initializer=tf.constant(0.01, shape=[n]))` in tracked code, with the
    tensor as a function of nothing (`initializer=lambda: tf.constant(...)`): TF1 made the tensor in
    the graph; in a traced call it would be a tensor of the trace, which the variable, made outside
    it, cannot read. `api(node)`: the TF path of an expression, or None."""
    if path is None or not path.endswith("get_variable") or any(a.keyword is None for a in call.args[1:]):
        return call
    if any(a.keyword is not None and a.keyword.value == "shape" for a in call.args):
        return call
    args = list(call.args)
    for index, arg in enumerate(args):
        value = arg.value
        if arg.keyword is None or arg.keyword.value != "initializer" or not isinstance(value, cst.Call):
            continue
        made = api(value.func) or ""
        if not made or made.endswith(("_initializer", "Initializer")) or made.startswith(("initializers.", "keras.")) \
                or made.split(".")[-1][:1].isupper():
            return call
        args[index] = arg.with_changes(value=cst.Lambda(cst.Parameters(), value))
        return call.with_changes(args=args)
    return call


class ToTracked(cst.CSTTransformer):
    """The function's body for tracked code: `tf.Variable` as `get_variable`, the TF1 model calls
    spelled through `tf.compat.v1` (what TensorFlow's legacy Keras runs eagerly), and a static
    dimension read as TF1's `Dimension` (`x.get_shape()[1].value`) as `tf.compat.v1.dimension_value`
    (eagerly a shape's item is already an int, with no `.value`)."""

    def leave_Attribute(self, original: cst.Attribute, updated: cst.Attribute):
        item = updated.value
        if original.attr.value != "value" or not isinstance(item, cst.Subscript):
            return updated
        shape = item.value
        if isinstance(shape, cst.Call) and not shape.args and isinstance(shape.func, cst.Attribute) \
                and shape.func.attr.value == "get_shape" or isinstance(shape, cst.Attribute) and shape.attr.value == "shape":
            return cst.parse_expression(f"{self.script.tf}.compat.v1.dimension_value({code(item)})")
        return updated

    def __init__(self, script, b: Builder):
        self.script = script
        self.new = {id(call): n for call, n in zip(b.variables, variable_names(b))}
        self.initial = _initial_values(b)  # id of `initial = <value>` -> its name (read by the variable only)
        self.values: Dict[str, cst.BaseExpression] = {}

    def leave_SimpleStatementLine(self, original, updated):
        name = self.initial.get(id(original))
        if name is None:
            return updated
        self.values[name] = updated.body[0].value  # (written into the initializer: made where it is used)
        return cst.RemovalSentinel.REMOVE

    def leave_Call(self, original: cst.Call, updated: cst.Call):
        path = self.script.tf_call(original)
        if path is None:
            return updated
        tf = self.script.tf
        if id(original) in self.new:
            first = updated.args[0] if updated.args and updated.args[0].keyword is None else None
            if first is not None and isinstance(first.value, cst.Name) and first.value.value in self.values:
                updated = updated.with_changes(args=[first.with_changes(value=self.values[first.value.value]),
                                                     *updated.args[1:]])
            text = variable_as_get_variable(tf, updated, self.new[id(original)])
            if text is None:
                raise Refused(f"`tf.Variable({code(original.args[0].value) if original.args else ''}, ...)` with "
                              "arguments `get_variable` does not take")
            return cst.parse_expression(text)
        if path == own_collections.ADD:
            return updated.with_changes(func=cst.parse_expression(f"{tf}.compat.v1.{path}"))
        if path.startswith(MAKES_VARIABLES) or path in SCOPES or path in RNN_RUNNERS or path.endswith("_initializer"):
            updated = deferred_initial_value(updated, path, lambda func: self.script.tf_call(cst.Call(func=func)))
            return updated.with_changes(func=cst.parse_expression(f"{tf}.compat.v1.{path}"))
        return updated


def _initial_values(b: Builder) -> Dict[int, str]:
    """`initial = tf.truncated_normal(shape)` then `tf.Variable(initial)` (the TF tutorials' helper):
    the statement, by id, for each such name the function reads only there. The initializer runs
    it when the variable is made (outside the trace: a tensor of the trace cannot be read there)."""
    firsts = {c.args[0].value.value for c in b.variables
              if c.args and c.args[0].keyword is None and isinstance(c.args[0].value, cst.Name)}
    counts: Dict[str, int] = {}
    for name in names_in(b.node.body):
        counts[name] = counts.get(name, 0) + 1
    found = {}
    for statement in b.node.body.body:
        if isinstance(statement, cst.SimpleStatementLine) and len(statement.body) == 1 \
                and isinstance(statement.body[0], cst.Assign) and len(statement.body[0].targets) == 1 \
                and isinstance(statement.body[0].targets[0].target, cst.Name):
            name = statement.body[0].targets[0].target.value
            if name in firsts and counts.get(name) == 2:
                found[id(statement)] = name
    return found


def _params(node: cst.FunctionDef) -> set:
    p = node.params
    return {param.name.value for param in [*p.posonly_params, *p.params, *p.kwonly_params]} | {
        s.name.value for s in (p.star_arg, p.star_kwarg) if isinstance(s, cst.Param)}


def local_names(node: cst.FunctionDef) -> set:
    """The function's parameters and the names it assigns."""
    return _params(node) | names_assigned(node.body)
