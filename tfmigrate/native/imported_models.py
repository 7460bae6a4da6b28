"""Model functions a script imports from its project, on TensorFlow's model-mapping route (issue 22).

Most TF1 training scripts build their model by calling a library's model function (21 of 32
unseen `train.py` files measured at stop 54):

    import lib                                      tf1_imports = TF1Imports()
    logits = lib.model(x)                    ->     ...   (inside the step's tf.function)
    loss = lib.mse(logits, y)                       logits = tf1_imports(lib.model, x)
    test = lib.model(x2, reuse=True)                loss = lib.mse(logits, y)

The library stays as it is (TF1 code on its compat route). The script calls its model functions
through one tracked object, a `tf.Module` whose call is decorated with `track_tf1_style_variables`:
one variable store for all of them, as TF1's graph had one. Each variable is made on its first call
with its TF1 name and found again by name on later calls. The library's pure functions (tensor ops
only) are called as they are. What each function is comes from the project
(project.graph_imports.eager_imports: `lib.model:model`, `lib.mse`, `lib.dense:untracked`).

Refused (the script keeps the compat route): a function that makes state a tracked call does not
find again by name (`tf.Variable`, a Keras layer, an RNN cell, a layer-name counter: `:untracked`),
and a model function called again without `reuse=True` (or `tf.AUTO_REUSE`, or a function whose
variables are all made under it) unless each call names a literal scope of its own: TF1 made new
variables there, or raised that they existed, where the store would share them.

Seeds. Under a graph seed TF1 gave the n-th seedless random op of its graph the op seed n
(native.op_seeds). The variables a library function makes are drawn by initializers that
`get_variable` and the legacy layers hand to a variable creator as `functools.partial(initializer,
shape, dtype)`; the store re-seeds each seedless one with TF1's next n, from the one
native.op_seeds counted for its first call (written there as `tf1_seed=N`, read back by
native.script). Measured under TF 2.21: the initial weights are TF1's for `get_variable` and
`tf.layers` alike. It is exact only where the order in which the eager program first calls the
functions is TF1's, so op_seeds counts through one drawing function, whose later calls reuse.
An initializer with a seed of its own (`random_normal_initializer(seed=17)` given to three
kernels) started a new sequence at each of TF1's ops, where eager ops of one kind and seed
continue one: the store draws each such value in a graph of its own (`wrap_function`), which
starts it anew (measured: TF1's numbers for both kernels).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Dict, FrozenSet, List, Optional, Tuple

import libcst as cst

from tfmigrate.facts.eager_functions import DRAWS_ENTRY, MODEL_ENTRY, SHARES_ENTRY, UNTRACKED_ENTRY
from tfmigrate.facts.names import dotted
from tfmigrate.native.syntax import code

# The keyword native.op_seeds writes on the first call of a drawing library function: the op seed
# TF1 gave its first draw (read back, and dropped, by native.script).
SEED_KEYWORD = "tf1_seed"
STORE_CLASS = "TF1Imports"
# What `fix --native` writes into a script that calls its project's model functions through the store.
STORE_LINE = f"class {STORE_CLASS}("

STORE = '''class TF1Imports({tf}.Module):
    """The TF1 model functions this program imports, run eagerly on TensorFlow's model-mapping
    route: one variable store for all of them, as TF1's graph had. Each variable they make is made
    on its first call with its TF1 name and found again by name on later calls (`reuse=True`). A
    variable made without an initializer gets TF1's default, Glorot uniform. A random initial value
    is drawn as TF1 drew it: an initializer's own seed starts its sequence anew for each variable (in
    a graph of its own), and, counted on from `first_seed` when given, a seedless one takes the op
    seed TF1's graph gave it (its place among the graph's seedless random ops)."""

    def __init__(self, first_seed=None):
        super().__init__()
        self.next_seed = first_seed

    def _tf1_initial_value(self, next_creator, **kwargs):
        import functools

        initial = kwargs.get("initial_value")
        initializer = getattr(initial, "func", None)
        if isinstance(initial, functools.partial) and hasattr(initializer, "seed") and (
                initializer.seed is not None or self.next_seed is not None):
            if initializer.seed is None:
                initializer = type(initializer).from_config({{**initializer.get_config(), "seed": self.next_seed}})
                self.next_seed += 1
            drawn = functools.partial(initializer, *initial.args, **initial.keywords)
            kwargs["initial_value"] = lambda: {tf}.compat.v1.wrap_function(drawn, [])()
        return next_creator(**kwargs)

    @{tf}.compat.v1.keras.utils.track_tf1_style_variables
    def __call__(self, build, *args, **kwargs):
        default = {tf}.compat.v1.glorot_uniform_initializer()
        with {tf}.variable_creator_scope(self._tf1_initial_value), {tf}.compat.v1.variable_scope(
                {tf}.compat.v1.get_variable_scope(), initializer=default):
            return build(*args, **kwargs)
'''


@dataclass(frozen=True)
class Imported:
    """What a script may call of its project's modules that make variables, by local spelling
    (`lib.model`, or `model` imported by name)."""
    models: FrozenSet[str] = frozenset()     # model functions: through the store
    pure: FrozenSet[str] = frozenset()       # tensor functions: called as they are
    shares: FrozenSet[str] = frozenset()     # model functions whose variables are made under AUTO_REUSE
    untracked: FrozenSet[str] = frozenset()  # functions that make untracked state: refused
    draws: Dict[str, str] = field(default_factory=dict)  # spelling -> what it draws ("init", "run")

    def allowed(self, spelling: str) -> bool:
        """A model function (through the store), or a pure one that makes no variable: one whose
        draws are its variables' (`tf.layers` outside `variable_scope` reads as pure) is neither."""
        return spelling not in self.untracked and (spelling in self.models or spelling in self.pure
                                                   and self.draws.get(spelling) != "init")


def imported(module: cst.Module, listed: Tuple[str, ...]) -> Imported:
    """The spellings `listed` (project.graph_imports.eager_imports' entries for this script) gives
    the names the module imports."""
    if not listed:
        return Imported()
    outside = top_level_imports(module)
    kinds: Dict[str, set] = {}
    draws: Dict[str, str] = {}
    for entry in listed:
        name, _, drawn = entry.partition(DRAWS_ENTRY)
        suffix = next((s for s in (MODEL_ENTRY, SHARES_ENTRY, UNTRACKED_ENTRY) if name.endswith(s)), "")
        name = name[:len(name) - len(suffix)] if suffix else name
        for spelling in local_spellings(outside, name):
            if drawn:
                draws[spelling] = drawn
            else:
                kinds.setdefault(spelling, set()).add(suffix)
    return Imported(frozenset(s for s, k in kinds.items() if MODEL_ENTRY in k),
                    frozenset(s for s, k in kinds.items() if "" in k and MODEL_ENTRY not in k),
                    frozenset(s for s, k in kinds.items() if SHARES_ENTRY in k),
                    frozenset(s for s, k in kinds.items() if UNTRACKED_ENTRY in k), draws)


def local_spellings(outside: Dict[str, str], name: str) -> List[str]:
    """`lib.model` as a module spells it, given its imported names (`outside`: local name -> what it
    names): `lib.model` (`import lib`), `model` (`from lib import model`)."""
    found = []
    module, _, function = name.rpartition(".")
    for local, full in outside.items():
        if full == name:
            found.append(local)
        elif full == module:
            found.append(f"{local}.{function}")
    return found


def top_level_imports(module: cst.Module) -> Dict[str, str]:
    """Local name -> what it names (`lib`, `lib.model`), for the module's top-level imports."""
    found: Dict[str, str] = {}
    for statement in module.body:
        for small in statement.body if isinstance(statement, cst.SimpleStatementLine) else ():
            if isinstance(small, cst.Import):
                for alias in small.names:
                    full = dotted(alias.name) or ""
                    found[dotted(alias.asname.name) if alias.asname else full] = full
            elif isinstance(small, cst.ImportFrom) and not isinstance(small.names, cst.ImportStar):
                base = "." * len(small.relative) + (dotted(small.module) or "" if small.module else "")
                for alias in small.names:
                    name = dotted(alias.name) or ""
                    found[dotted(alias.asname.name) if alias.asname else name] = f"{base}.{name}"
    return found


class Refused(Exception):
    """The calls would share other variables than TF1's graph did (the message says why; `call`:
    the call where they would)."""

    def __init__(self, message: str, call: Optional[cst.Call] = None):
        super().__init__(message)
        self.call = call


def check_calls(sites: Dict[str, List[cst.Call]], shares: FrozenSet[str]) -> None:
    """Refused where one variable store would share what TF1 made anew (`unshared_call`)."""
    found = unshared_call(sites, shares)
    if found is not None:
        raise Refused(f"`{found[0]}` called again without `reuse=True` (TF1 made other variables, or raised "
                      "that they existed; one variable store would share them)", found[1])


def unshared_call(sites: Dict[str, List[cst.Call]], shares: FrozenSet[str]) -> Optional[Tuple[str, cst.Call]]:
    """The first call (with its function's spelling) of a model function that TF1 made new
    variables at, or raised at, where one variable store shares them: a call after the first that
    does not reuse (`reuses`), unless each such call names a literal scope of its own."""
    for spelling, calls in sites.items():
        seen: set = set()
        for call in calls:
            if reuses(call, shares, spelling):
                continue
            scope = _keyword(call, "scope")
            literal = scope.evaluated_value if isinstance(scope, cst.SimpleString) else None
            if seen and (literal is None or literal in seen or None in seen):
                return spelling, call
            seen.add(literal)
    return None


def reuses(call: cst.Call, shares: FrozenSet[str] = frozenset(), spelling: str = "") -> bool:
    """Whether TF1 found this call's variables made by an earlier one: `reuse=True`, AUTO_REUSE, or
    a function that shares them by default called without `reuse=`."""
    given = _keyword(call, "reuse")
    if given is not None and (code(given) == "True" or code(given).endswith("AUTO_REUSE")):
        return True
    return spelling in shares and given is None


def _keyword(call: cst.Call, name: str) -> Optional[cst.BaseExpression]:
    return next((a.value for a in call.args if a.keyword is not None and a.keyword.value == name), None)


def store_text(tf: str) -> str:
    return STORE.format(tf=tf)
