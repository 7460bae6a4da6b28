"""TF1's draws evaluated at each step, as the Generator that continues their sequence.

After native.op_seeds wrote out the op seed TF1 gave each draw and the module was rewritten as
eager TF2, a pinned draw inside a function (evaluated per step, or per call) draws from
`tf.random.Generator.from_state([0, n, s], alg="philox")`: an op with the pair (s, n) draws what
that generator draws, call after call (measured under TF 2.21: uniform, normal, and dropout through
`general_dropout`), and one generator is one sequence however many `tf.function`s or traces use
it, as TF1's one op was for every `sess.run` that evaluated it.
"""
from __future__ import annotations

import re
from typing import Dict, Optional

import libcst as cst

from tfmigrate.facts.graph_words import GRAPH_SEEDS
from tfmigrate.facts.names import ImportTable
from tfmigrate.fixers.arguments import joined
from tfmigrate.native.syntax import calls_in
from tfmigrate.native.op_seeds import RANDOM_OPS, SAMPLED_LOSSES, tf_alias, tf_path

_GENERATED = {"random_normal": "normal", "random.normal": "normal", "random_uniform": "uniform",
              "random.uniform": "uniform", "truncated_normal": "truncated_normal",
              "random.truncated_normal": "truncated_normal", "nn.dropout": "dropout", "layers.dropout": "layer_dropout"}


def drawn_by_generators(text: str) -> str:
    """The eager rewrite `text` with each pinned draw inside a function (evaluated per step, or
    per call) drawn from its own Generator, made after the module's one `tf.random.set_seed`."""
    module = cst.parse_module(text)
    names = ImportTable(module, text)
    if len(re.findall(r"\bset_(random_)?seed\s*\(", text)) != 1:
        return text
    if _seed_statements(module.body, names):
        return _generators_after_seed(module, names) or text
    # (the seed set in `main`, which builds and runs the graph: its draws there, from generators made there)
    for function in module.body:
        if isinstance(function, cst.FunctionDef) and isinstance(function.body, cst.IndentedBlock) \
                and _seed_statements(function.body.body, names):
            written = _generators_after_seed(function, names)
            if written is None:
                return text
            return module.with_changes(body=[written if s is function else s for s in module.body]).code
    return text


# The stateful draws a pinned rewrite leaves with a literal seed: random ops, dropout, the sampled
# losses' candidate samplers.
_SEEDED_OPS = (*RANDOM_OPS, *_GENERATED, *SAMPLED_LOSSES, "random.log_uniform_candidate_sampler")


def drawn_apart(text: str) -> Optional[int]:
    """A seed that two draws inside `tf.function`s of the rewrite `text`, after one graph seed, give a
    random op of their own (not a Generator's): the rewrite wrote one TF1 op into each function that
    evaluates it (a training step and an evaluation), and TF1's one op continued its sequence at
    each `sess.run` where eagerly each function starts it again. None where no seed is left so."""
    module = cst.parse_module(text)
    counter = _TracedDraws(ImportTable(module, text))
    module.visit(counter)
    return next((seed for (_graph, seed), count in counter.seen.items() if count > 1), None)


class _TracedDraws(cst.CSTVisitor):
    """The seeded random ops of each `tf.function`, by (graph seed, op seed), in source order: each
    graph seed starts TF1's op seeds again (ops of two graphs are two ops)."""

    def __init__(self, names: ImportTable):
        self.names, self.graph, self.seen = names, 0, {}

    def visit_SimpleStatementLine(self, node) -> None:
        if _seed_statements([node], self.names):
            self.graph += 1

    def visit_FunctionDef(self, node) -> bool:
        if not any(tf_path(self.names, d.decorator.func if isinstance(d.decorator, cst.Call) else d.decorator)
                   == "function" for d in node.decorators):
            return True
        for call in calls_in(node.body):  # (nce_loss's sampler is a call of its own: `sampled_values=`)
            path = tf_path(self.names, call.func) or ""
            seed = next((a.value for a in call.args if a.keyword is not None and a.keyword.value == "seed"), None)
            if path in _SEEDED_OPS and isinstance(seed, cst.Integer):
                key = (self.graph, int(seed.value))
                self.seen[key] = self.seen.get(key, 0) + 1
        return False


def _seed_statements(body, names: ImportTable):
    return [s for s in body if isinstance(s, cst.SimpleStatementLine) and len(s.body) == 1
            and isinstance(s.body[0], cst.Expr) and isinstance(s.body[0].value, cst.Call)
            and (names.api(s.body[0].value.func) or "") in GRAPH_SEEDS]


def _generators_after_seed(owner, names: ImportTable):
    """`owner` (the module, or the function that sets the seed) with its pinned draws in functions
    drawn from generators made after the seed in its body; None if it has none. The module's text
    for the module."""
    inner = owner if isinstance(owner, cst.Module) else owner.body
    seeds = _seed_statements(inner.body, names)
    if len(seeds) != 1 or not seeds[0].body[0].value.args:
        return None
    seed = seeds[0].body[0].value.args[0].value
    mover = _ToGenerators(names, -1 if isinstance(owner, cst.FunctionDef) else 0)
    owner = owner.visit(mover)
    if not mover.made:
        return None
    tf = tf_alias(names)
    lines = [cst.parse_statement(f'{name} = {tf}.random.Generator.from_state([0, {n}, '
                                 f'{cst.Module([]).code_for_node(seed)}], alg="philox")\n')
             for n, name in sorted(mover.made.items())]
    lines[0] = lines[0].with_changes(leading_lines=[cst.EmptyLine(comment=cst.Comment(
        "# TF1's random ops drawn at each step, each from the Generator that continues its sequence"))])
    inner = owner if isinstance(owner, cst.Module) else owner.body  # (the visited owner's)
    body = []
    for statement in inner.body:
        body.append(statement)
        if isinstance(statement, cst.SimpleStatementLine) and statement.deep_equals(seeds[0]):
            body.extend(lines)
    if isinstance(owner, cst.Module):
        return owner.with_changes(body=body).code
    return owner.with_changes(body=owner.body.with_changes(body=body))


def _float32(dtype: cst.BaseExpression, names: ImportTable) -> bool:
    """Whether `dtype` is float32, the draws' default (`dtype=tf.float32` draws what no dtype does)."""
    if isinstance(dtype, cst.SimpleString):
        return dtype.evaluated_value == "float32"
    return names.api(dtype) == "float32"


class _ToGenerators(cst.CSTTransformer):
    def __init__(self, names: ImportTable, depth: int = 0):
        self.names, self.depth = names, depth  # (-1: the function that sets the seed is not one that draws per step)
        self.made: Dict[int, str] = {}  # op seed -> its generator

    def visit_FunctionDef(self, node) -> None:
        self.depth += 1

    def leave_FunctionDef(self, original, updated):
        self.depth -= 1
        return updated

    def leave_Call(self, original: cst.Call, updated: cst.Call) -> cst.BaseExpression:
        if not self.depth:
            return updated
        method = _GENERATED.get(tf_path(self.names, original.func) or "")
        seed = next((a for a in updated.args if a.keyword is not None and a.keyword.value == "seed"), None)
        if method is None or seed is None or not isinstance(seed.value, cst.Integer) or any(a.star for a in updated.args):
            return updated
        given = {a.keyword.value: a for a in updated.args if a.keyword is not None}
        if "dtype" in given and not _float32(given["dtype"].value, self.names) or "name" in given or len([a for a in updated.args if a.keyword is None]) > (
                1 if method == "layer_dropout" else 2 if method == "dropout" else 3):
            return updated  # (another dtype: integer draws are another kernel's)
        n = int(seed.value.value)
        args = [a for a in updated.args if a is not seed]
        if method == "layer_dropout":
            return self._layer_dropout(updated, n, given, args)
        if method != "dropout":
            name = self.made.setdefault(n, f"rng_{n}")
            return updated.with_changes(func=cst.parse_expression(f"{name}.{method}"), args=joined(updated, args))
        positional = [a for a in args if a.keyword is None]
        rate = given.get("rate")
        keep = given.get("keep_prob") or (positional[1] if len(positional) > 1 else None)
        if (rate is None) == (keep is None) or "noise_shape" in given or not positional:
            return updated
        name = self.made.setdefault(n, f"rng_{n}")
        code_of = cst.Module([]).code_for_node
        kept = code_of(keep.value) if keep is not None else ""
        simple = isinstance(keep.value, (cst.Name, cst.Attribute, cst.Integer, cst.Float)) if keep is not None else True
        rate_text = code_of(rate.value) if rate is not None else f"1 - {kept}" if simple else f"1 - ({kept})"
        return cst.parse_expression(f"{tf_alias(self.names)}.nn.experimental.general_dropout({code_of(positional[0].value)}, "
                                    f"rate={rate_text}, uniform_sampler={name}.uniform)").with_changes(
            lpar=updated.lpar, rpar=updated.rpar)

    def _layer_dropout(self, call: cst.Call, n: int, given, args) -> cst.BaseExpression:
        """`tf.layers.dropout(x, rate=r, training=t, seed=n)`: TF1 dropped with op n where `t` held
        (a tensor: in a `tf.cond`, as TF1's `smart_cond` did), else passed `x` through."""
        positional = [a for a in args if a.keyword is None]
        if len(positional) != 1 or "noise_shape" in given or "training" not in given:
            return call
        code_of = cst.Module([]).code_for_node
        x, tf = code_of(positional[0].value), tf_alias(self.names)
        rate = code_of(given["rate"].value) if "rate" in given else "0.5"
        training = given["training"].value
        name = self.made.setdefault(n, f"rng_{n}")
        dropped = f"{tf}.nn.experimental.general_dropout({x}, rate={rate}, uniform_sampler={name}.uniform)"
        if isinstance(training, cst.Name) and training.value == "True":
            return cst.parse_expression(dropped).with_changes(lpar=call.lpar, rpar=call.rpar)
        return cst.parse_expression(f"{tf}.cond({tf}.cast({code_of(training)}, {tf}.bool), lambda: {dropped}, "
                                    f"lambda: {x})").with_changes(lpar=call.lpar, rpar=call.rpar)
