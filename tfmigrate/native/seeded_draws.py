"""A seeded TF1 program's random draws, which eager TF2 cannot repeat (an unsafe native rewrite).

Under `tf.set_random_seed(s)` TF1 gave each random op of the graph the seed pair (s, the op's id in
the graph); eager TF2 under `tf.random.set_seed(s)` draws each op's second seed from a Python RNG
instead (measured under TF 2.21: `tf.Variable(tf.random_normal([2, 2]))` starts at
`[0.305, 0.567]` in TF1's graph and at `[-1.101, 1.546]` eagerly). So a seeded program whose
initial weights, dropout masks or noise are random computes the same thing after `fix --native`,
and the same numbers under `DeterministicRandomTestTool`, but prints other numbers than the compat
route did. That is a change a user must accept: the rewrite is an unsafe fix (`--unsafe-fixes`),
and the rewritten module says so above its seed.

Test files are left out: a `tf.test.TestCase` compares what it computes from its own draws.

A random op with a seed of its own draws the same numbers in both: its pair is (graph seed or
TF's default, its seed) in TF1's graph and eagerly (measured: `tf.Variable(tf.random_uniform([3],
-1.0, 1.0, seed=1))` starts at `[-0.522, 0.841, -0.899]` in both, with and without a graph seed).
Only its first draw is certain: eagerly, ops of one kind and seed share their state, so a second
`random_uniform(seed=1)` continues the sequence where TF1's second op started it again
(`drawn_once`).
"""
from __future__ import annotations

import ast
import re
from typing import Callable, Optional, Sequence

import libcst as cst

from tfmigrate.facts.program import code_only
from tfmigrate.native.syntax import calls_in, code

_SEED = re.compile(r"\b(set_random_seed|random\.set_seed)\s*\(")
# What draws random numbers in TF1 code: random ops, random initializers (TF1's default for
# `get_variable` and `tf.layers` kernels is glorot_uniform), dropout, shuffles, RNN cells.
_DRAWS = re.compile(
    r"\b(random_normal|random_uniform|truncated_normal|random_gamma|random_poisson|random_shuffle|random_crop"
    r"|multinomial|random\.\w+|\w*glorot\w*|\w*xavier\w*|variance_scaling\w*|he_normal|he_uniform|lecun_\w+"
    r"|orthogonal_initializer|uniform_unit_scaling\w*|dropout|shuffle|get_variable"
    r"|layers\.(dense|conv\w*|separable_conv\w*|fully_connected|embed\w*)|slim\.(fully_connected|conv\w*)"
    r"|\w*(RNN|LSTM|GRU)Cell|\w*_rnn)\b")
NOTE = (  # the comment the rewrite carries above the seed, one line each
    "# tfmigrate (unsafe fix, --unsafe-fixes): eager TF2 draws other random numbers from this seed",
    "# than TF1's graph did (TF1 seeded each random op by its place in the graph): the initial weights",
    "# and other draws, and the numbers printed from them, change. The program computes the same, and",
    "# the same numbers under `tf.compat.v1.keras.utils.DeterministicRandomTestTool`.",
)


def seed_line(source: str, drawing: Sequence[str] = ()) -> Optional[int]:
    """The line of the program's graph-level seed, when the program also draws random numbers (or
    calls one of `drawing`, its project's functions that draw: `lib.dense`); None otherwise
    (nothing that the rewrite draws differs) or for a test file."""
    code = code_only(source)
    seed = _SEED.search(code)
    if seed is None or "TestCase" in code or not (_DRAWS.search(code) or any(
            re.search(rf"(?<![\w.]){re.escape(name)}\s*\(", code) for name in drawing)):
        return None
    return code.count("\n", 0, seed.start()) + 1


PINNED_NOTE = (  # the same, where native.op_seeds wrote out the seed TF1's graph gave each random op
    "# tfmigrate (unsafe fix, --unsafe-fixes): each random op below draws what TF1's graph drew under",
    "# this seed: `seed=N` is the one TF1 gave it (its place among the graph's unseeded random ops), and",
    "# one drawn at each step draws from the `tf.random.Generator` that continues its sequence (`rng_N`).",
    "# A draw left with `seed=N` inside a `tf.function` repeats TF1's numbers only while that one function,",
    "# traced once, evaluates it.",
)


def noted(text: str, note: tuple = NOTE) -> str:
    """`text` (the rewrite) with `note` above its seed, once."""
    if note[0] in text:
        return text
    lines = text.splitlines(keepends=True)
    for index, line in enumerate(lines):
        if _SEED.search(line) and not line.lstrip().startswith("#"):
            indent = line[:len(line) - len(line.lstrip())]
            lines[index:index] = [f"{indent}{line}\n" for line in note]
            return "".join(lines)
    start = 0  # no seed left in the rewrite: the note opens the module's code, after its docstring and future imports
    for node in ast.parse(text).body:
        docstring = isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str)
        if not (docstring or isinstance(node, ast.ImportFrom) and node.module == "__future__"):
            break
        start = node.end_lineno
    lines[start:start] = [f"{line}\n" for line in note]
    return "".join(lines)


def seeded_initial_value(variable: cst.Call, tf_call: Callable[[cst.CSTNode], Optional[str]]) -> Optional[cst.Call]:
    """The TensorFlow call `tf.Variable(...)` takes as its initial value, when it is given a seed."""
    value = next((a.value for a in variable.args if a.keyword is None or a.keyword.value == "initial_value"), None)
    if not isinstance(value, cst.Call) or tf_call(value) is None:
        return None
    return None if seed_given(value) is None else value


def drawn_once(value: cst.Call, module: cst.Module, tf_call: Callable[[cst.CSTNode], Optional[str]]) -> bool:
    """A module-level variable's seeded initial value (seeded_initial_value) is drawn once as TF1
    drew it: no other TensorFlow call of the module gives that seed (`seed=S` written alike)."""
    seed = code(_seed(value))
    return sum(1 for c in calls_in(module) if tf_call(c) is not None
               and (given := _seed(c)) is not None and code(given) == seed) == 1


def _seed(call: cst.Call) -> Optional[cst.BaseExpression]:
    return next((a.value for a in call.args if a.keyword is not None and a.keyword.value == "seed"), None)


def seed_given(call: cst.Call) -> Optional[cst.BaseExpression]:
    """The call's own `seed=`, when one is given (not `seed=None`)."""
    seed = _seed(call)
    return None if seed is None or code(seed) == "None" else seed
