"""TF1 checkpoint names of a script's variables, so that the eager program restores what the TF1
program saved (issue 22: checkpoints that still load).

A TF1 `tf.train.Saver()` saves each global variable under its op name: `tf.Variable(name="w")`
made inside `name_scope("layer2")` is `layer2/w`, an unnamed one `Variable`, `Variable_1`, ...
(the graph makes names unique, case-insensitively), `get_variable("W1")` inside
`variable_scope("model")` is `model/W1` (name scopes do not prefix it). The eager program gets
a name-based `tf.compat.v1.train.Saver(var_list={tf1_name: variable})`, which reads and writes
the same keys (measured with TF 2.21: a checkpoint written by the compat-route original restores).

A Saver made after `minimize` with Adam or Momentum also saved the optimizer's state (`W/Adam`,
`W/Adam_1`, `beta1_power`, `beta2_power`; `W/Momentum`; a second Adam's `beta1_power_1`), which
Keras optimizers keep under no TF1 name: there the eager program keeps TF1's optimizers
(`tf.compat.v1.train.AdamOptimizer`, which runs eagerly inside a `tf.function` with TF1's update
rule) and saves their state by TF1's names, so training goes on where the checkpoint stopped.
"""
from __future__ import annotations

from typing import Dict, List, Optional, Tuple

# Saver arguments that mean the same with an explicit var_list in eager mode.
SAVER_OPTIONS = ("max_to_keep", "keep_checkpoint_every_n_hours", "pad_step_number", "save_relative_paths",
                 "filename")
# Python calls on checkpoint files that need no graph (kept as they are in the eager program).
CHECKPOINT_FILES = ("train.latest_checkpoint", "train.get_checkpoint_state", "train.checkpoint_exists")
# Optimizers whose TF1 checkpoint holds no state of their own (no slots, no beta powers).
STATELESS_OPTIMIZERS = ("train.GradientDescentOptimizer",)
# Optimizers with state -> the variables of their own, in the order TF1 made them (slots aside).
ACCUMULATORS = {"train.AdamOptimizer": ("beta1_power", "beta2_power"), "train.MomentumOptimizer": ()}
# `tf.layers.<function>` -> the variables its layer makes, in TF1's names under the layer's scope.
LAYER_WEIGHTS = {name: ("kernel", "bias") for name in (
    "dense", "conv1d", "conv2d", "conv3d", "conv2d_transpose", "conv3d_transpose")}
LAYER_WEIGHTS.update({name: () for name in (
    "max_pooling1d", "max_pooling2d", "max_pooling3d", "average_pooling1d", "average_pooling2d",
    "average_pooling3d", "dropout", "flatten")})


class GraphNames:
    """The names a TF1 graph gives variables, in the order the script makes them."""

    def __init__(self):
        self.used: Dict[str, int] = {}
        self.saved: List[Tuple[str, str, str]] = []  # (TF1 name, the eager expression, a layer's weight or "")
        self.scopes: Dict[str, int] = {}         # variable scopes opened by default name (`dense`, `dense_1`)
        self.unknown: Optional[str] = None       # why a name cannot be known, once one cannot
        self.optimizers: Dict[str, Tuple[str, ...]] = {}  # optimizers with state `minimize` ran -> TF1's
        #                                          names of their accumulators, in the order TF1 made them
        self.trained: List[str] = []             # the train ops that made that state (traced before a Saver)

    def copy(self) -> "GraphNames":
        """The names so far, for a Saver made now (what is made later is not its)."""
        other = GraphNames()
        other.used, other.saved, other.scopes, other.unknown = dict(self.used), list(self.saved), dict(self.scopes), self.unknown
        other.optimizers, other.trained = dict(self.optimizers), list(self.trained)
        return other

    def reset(self) -> None:
        """`tf.reset_default_graph()`: a new graph, a new set of names."""
        self.__init__()

    def unique(self, name: str) -> str:
        """tf.Graph.unique_name: `w`, then `w_1`, `w_2` (case-insensitive, as TF1 counted)."""
        key = name.lower()
        i = self.used.get(key, 0)
        self.used[key] = i + 1
        if i == 0:
            return name
        base = key
        while key in self.used:
            key = f"{base}_{i}"
            i += 1
        self.used[key] = 1
        return f"{name}_{i - 1}"

    def variable(self, expression: str, name: Optional[str], name_scope: Optional[str]) -> None:
        """A `tf.Variable(name=name)` made where the name scope is `name_scope` ('' at the top,
        None when it is not a literal)."""
        if name_scope is None:
            self.refuse("a variable made under a `name_scope` whose name is not a literal")
            return
        self.saved.append((self.unique(f"{name_scope}{name or 'Variable'}"), expression, ""))

    def get_variable(self, expression: str, name: str, variable_scope: str) -> None:
        full = f"{variable_scope}/{name}" if variable_scope else name
        self.used[full.lower()] = self.used.get(full.lower(), 0) + 1
        self.saved.append((full, expression, ""))

    def layer(self, layer_object: str, function: str, name: Optional[str], variable_scope: str,
              use_bias: bool = True) -> None:
        """A `tf.layers.<function>(name=name)` made under `variable_scope`: its variables are
        `<scope>/<name>/kernel`, or, unnamed, `<scope>/dense`, `<scope>/dense_1`, ... (TF1's
        layers open `variable_scope(None, default_name=...)`, counted per scope)."""
        weights = LAYER_WEIGHTS.get(function)
        if weights is None:
            self.refuse(f"`tf.layers.{function}`, whose variables' TF1 names tfmigrate does not know")
            return
        prefix = f"{variable_scope}/" if variable_scope else ""
        if name is None:
            base = f"{prefix}{function}"
            count = self.scopes.get(base, 0)
            self.scopes[base] = count + 1
            full = base if count == 0 else f"{base}_{count}"
        else:
            full = f"{prefix}{name}"
            self.scopes[full] = self.scopes.get(full, 0) + 1
        for weight in weights:
            if weight != "bias" or use_bias:
                self.saved.append((f"{full}/{weight}", layer_object, weight))

    def tracked(self, builder: str, call_id: int) -> None:
        """A call of a TF1 model function that makes its variables under a `variable_scope`: the
        tracked object keeps TF1's names (`G/dense/kernel`, measured), read from it at run time."""
        self.saved.append(("", builder, str(call_id)))

    def minimized(self, optimizer: str, path: Optional[str], train_op: str) -> None:
        """`train_op = optimizer.minimize(loss)` in this graph: an optimizer with state made its
        slots and accumulators (Adam's `beta1_power`, unique in the graph: `beta1_power_1` for a
        second Adam), which a Saver made after saves."""
        if path in STATELESS_OPTIMIZERS:
            return
        if path not in ACCUMULATORS:
            self.refuse(f"the state of `{optimizer}`, an optimizer whose TF1 checkpoint names tfmigrate does not know")
            return
        if optimizer not in self.optimizers:  # (one optimizer's accumulators are made once per graph)
            self.optimizers[optimizer] = tuple(self.unique(name) for name in ACCUMULATORS[path])
        self.trained.append(train_op)

    def refuse(self, why: str) -> None:
        self.unknown = self.unknown or why

    @property
    def layered(self) -> bool:
        """Whether some saved variable is a layer's or a model function's (made on first call)."""
        return any(weight for _, _, weight in self.saved)

    def var_list(self, keras3: bool, objects) -> str:
        """The eager Saver's `var_list` literal (a Keras 3 weight's `tf.Variable` is its `.value`:
        the weight itself would be saved as `<name>VARIABLE_VALUE`, measured). `objects(builder,
        call_id)`: the tracked object a model function's call goes through."""
        items: List[str] = []
        for name, expression, weight in self.saved:
            if not name:  # a tracked object: its variables by the names they were made with
                model = objects(expression, int(weight))
                item = f'**{{v.name.split(":")[0]: v for v in {model}.variables}}'
                if item not in items:
                    items.append(item)
            elif not weight:
                items.append(f'"{name}": {expression}')
            else:
                items.append(f'"{name}": {expression}.{weight}' + (".value" if keras3 else ""))
        if len(items) == 1 and items[0].startswith("**"):
            literal = items[0][2:]  # one model's variables: the comprehension itself
        else:
            literal = "{" + ", ".join(items) + "}"
        if self.optimizers:
            kept = ", ".join(f"({name}, {tuple(own)!r})".replace("'", '"') for name, own in self.optimizers.items())
            return f"with_tf1_optimizer_state({literal}, {kept})"
        return literal


# Written once into an eager program whose Saver saves TF1's optimizer state (GraphNames.minimized).
OPTIMIZER_STATE = '''

def with_tf1_optimizer_state(variables, *optimizers):
    """`variables` ({TF1 name: variable}) and the state of TF1's optimizers, given as (optimizer,
    TF1's names of its accumulators) in the order TF1 made them, by the names TF1's Saver gave it:
    each slot of a variable as `<name>/Adam`, then `<name>/Adam_1` (Adam's `m`, then `v`: the sorted
    slot names; TF1 made a taken name unique with `_1`, `_2`), the accumulators (`beta1_power`) by
    the names given. A checkpoint of either program restores into the other, and training goes on
    where it stopped."""
    state = dict(variables)
    for optimizer, accumulators in optimizers:
        slots = set()
        for name, variable in variables.items():
            for slot in optimizer.get_slot_names():
                value = optimizer.get_slot(variable, slot)
                if value is not None:
                    key, i = f"{name}/{optimizer.get_name()}", 0
                    while key in state:
                        i += 1
                        key = f"{name}/{optimizer.get_name()}_{i}"
                    state[key] = value
                    slots.add(id(value))
        own = sorted((v for v in optimizer.variables() if id(v) not in slots), key=lambda v: v.name)
        state.update(zip(accumulators, own))
    return state


'''
