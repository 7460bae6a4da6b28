"""TF1 checkpoint names of a script's variables, so that the eager program restores what the TF1
program saved (issue 22: checkpoints that still load).

A TF1 `tf.train.Saver()` saves each global variable under its op name: `tf.Variable(name="w")`
made inside `name_scope("layer2")` is `layer2/w`, an unnamed one `Variable`, `Variable_1`, ...
(the graph makes names unique, case-insensitively), `get_variable("W1")` inside
`variable_scope("model")` is `model/W1` (name scopes do not prefix it). The eager program gets
a name-based `tf.compat.v1.train.Saver(var_list={tf1_name: variable})`, which reads and writes
the same keys (measured with TF 2.21: a checkpoint written by the compat-route original restores).
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


class GraphNames:
    """The names a TF1 graph gives variables, in the order the script makes them."""

    def __init__(self):
        self.used: Dict[str, int] = {}
        self.saved: List[Tuple[str, str]] = []  # (TF1 name, the eager program's expression)
        self.unknown: Optional[str] = None       # why a name cannot be known, once one cannot

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
        self.saved.append((self.unique(f"{name_scope}{name or 'Variable'}"), expression))

    def get_variable(self, expression: str, name: str, variable_scope: str) -> None:
        full = f"{variable_scope}/{name}" if variable_scope else name
        self.used[full.lower()] = self.used.get(full.lower(), 0) + 1
        self.saved.append((full, expression))

    def refuse(self, why: str) -> None:
        self.unknown = self.unknown or why

    def var_list(self) -> str:
        """The eager Saver's `var_list` literal."""
        return "{" + ", ".join(f'"{name}": {expression}' for name, expression in self.saved) + "}"
