"""Which enabled rule owns each TF1 reference the file's walk finds (tfmigrate.facts.references).

A reference goes to the rule whose CLAIMS prefix is the longest match, to TFM299 (FALLBACK) when
no rule claims it, and nowhere when its rule is off; a call of `tf.layers.dense` and the other
functional layers is TFM101's, which reports it from its own walk with a fix that builds the
Keras layer object. A rule owns its message and fix (`describe(ref)`), so a symbol is reported
once, by one rule, whatever the spelling. Calls of TF 2.21 API go to TFM215 (SIGNATURES), which
checks their arguments.

`walk_steps` also starts the facts that are fed by the walk itself (`walked`, such as the
traced functions) whenever an enabled rule reads them: they see each node before
the rules do.
"""
from __future__ import annotations

from dataclasses import replace
from functools import lru_cache
from typing import Dict, List, Sequence, Set, Tuple

import libcst as cst

from tfmigrate.core.registry import all_rules
from tfmigrate.facts.probes import protected
from tfmigrate.facts.program import ProgramMode
from tfmigrate.facts.references import GoneRef, References, TF1Ref, access_fails, own_path, runs_on_route
from tfmigrate.fixers.layers import SPECS as FUNCTIONAL_LAYERS
from tfmigrate.rules.base import ReferenceRule, Rule

FALLBACK = "TFM299"  # owns what no rule claims, and names no TF 2.21 namespace has
SIGNATURES = "TFM215"  # checks the arguments of calls of TF 2.21 API


@lru_cache(maxsize=None)
def _claims() -> Tuple[Tuple[str, str], ...]:
    """(prefix, code) for every reference rule, longest prefix first."""
    pairs = [
        (prefix, code)
        for code, rule in all_rules().items()
        if issubclass(rule, ReferenceRule)
        for prefix in rule.CLAIMS
    ]
    return tuple(sorted(pairs, key=lambda p: -len(p[0])))


def owner(path: str) -> str:
    for prefix, code in _claims():
        if path == prefix or path.startswith(prefix + "."):
            return code
    return FALLBACK


def _functional_layer_call(ref: TF1Ref) -> bool:
    """A call of `tf.layers.dense` and the other functional layers TFM101 owns."""
    return ref.call is not None and ref.path.startswith("layers.") and ref.path[len("layers."):] in FUNCTIONAL_LAYERS


class Dispatch:
    """Hands each reference found in one file to the enabled rule that owns it (a
    `references.Receiver`)."""

    def __init__(self, ctx, rules: Sequence[ReferenceRule]):
        self.ctx = ctx
        self.rules: Dict[str, ReferenceRule] = {rule.code: rule for rule in rules}
        self.whole_paths = any(rule.FULL_PATHS for rule in rules)
        self.checks_calls = SIGNATURES in self.rules
        # A rule whose describe()/report() raised: the engine reports it (TFM000) and drops its
        # findings; the other rules go on.
        self.failed: Dict[Rule, BaseException] = {}

    def claims_exactly(self, path: str) -> bool:
        return any(prefix == path for prefix, _ in _claims())

    def table_ref(self, ref: TF1Ref) -> None:
        if _functional_layer_call(ref):
            return  # TFM101 reports it, with a fix that builds the Keras layer object
        if ref.spelled_v2 and owner(ref.path) == FALLBACK:
            return  # not removed API there
        debt = runs_on_route(self.ctx, ref)
        if not debt and protected(self.ctx, ref.node, ref.path, access_fails(ref)):
            return  # a version probe: runs only where the name exists, or never under TF 2.21
        rule = self.rules.get(owner(ref.path))
        if rule is None or (rule.FULL_PATHS and own_path(ref.path)):
            return  # (the whole-path route hands it over with its whole path)
        # (a probe never hides migration debt: the TF1 code is still there)
        program = self.ctx.fact(ProgramMode)
        if not ref.spelled_v1 and program.graph and not program.v2_disabled:
            ref = replace(ref, routed=True)
        self._describe(rule, ref, ref.anchor or ref.node, debt)

    def missing_ref(self, ref: TF1Ref) -> None:
        rule = self.rules.get(FALLBACK)
        if rule is not None and not protected(self.ctx, ref.node, ref.path, True):
            self._describe(rule, ref, ref.node)

    def whole_ref(self, ref: GoneRef) -> None:
        rule = self.rules.get(owner(ref.path))
        if rule is not None and rule.FULL_PATHS:
            self._describe(rule, ref, ref.node)

    def api_call(self, call: cst.Call, path: str, v1: bool) -> None:
        rule = self.rules[SIGNATURES]
        self._deliver(rule, lambda: rule.check_call(call, path, v1))

    def _describe(self, rule: ReferenceRule, ref: TF1Ref, node: cst.CSTNode, debt: bool = False) -> None:
        def action():
            message, fix = rule.describe(ref)
            rule.report(node, message, fix, debt)

        self._deliver(rule, action)

    def _deliver(self, rule: ReferenceRule, action) -> None:
        if rule in self.failed:
            return
        try:
            action()
        except Exception as error:  # one broken rule must not stop the others
            self.failed[rule] = error


def walk_steps(ctx, rules: Sequence[Rule]) -> Tuple[list, Dict[Rule, BaseException]]:
    """The steps the engine walks before the rules, at each node: the references, when an
    enabled rule reads them, then the walked facts the enabled rules read (through the facts
    they need too). Also the rules that failed on a reference handed to them, filled as the
    walk goes."""
    readers = [rule for rule in rules if isinstance(rule, ReferenceRule)]
    dispatch = Dispatch(ctx, readers) if readers else None
    steps: list = [References(ctx, dispatch)] if dispatch is not None else []
    steps += [ctx.fact(kind) for kind in _walked(tuple(type(rule) for rule in rules))]
    return steps, dispatch.failed if dispatch is not None else {}


@lru_cache(maxsize=64)
def _walked(rules: Tuple[type, ...]) -> Tuple[type, ...]:
    """The walked facts these rule classes read (the same few selections come back file after file)."""
    return tuple(kind for kind in read_by(rules) if getattr(kind, "walked", False))


def read_by(rules: Sequence) -> List[type]:
    """Every fact kind the rules (instances or classes) read, with the kinds those need, in
    order of first mention."""
    found: List[type] = []
    seen: Set[type] = set()
    todo = [kind for rule in rules for kind in rule.facts_read()]
    while todo:
        kind = todo.pop(0)
        if kind not in seen:
            seen.add(kind)
            found.append(kind)
            todo.extend(kind.needs)
    return found
