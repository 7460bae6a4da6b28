"""The Rule base class every rule module in `tfmigrate/rules/` subclasses.

A rule is a small visitor: it defines `visit_<Node>` / `leave_<Node>` methods, which the engine
runs for all rules in one walk of the tree, and calls `self.report(node, message, fix)` on the
smallest node that is wrong. Metadata (name, severity, rationale, examples) lives in rules.yaml.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar, Dict, List, Optional, Sequence, Tuple

import libcst as cst

from tfmigrate.facts.references import References
from tfmigrate.findings import Fix

if TYPE_CHECKING:
    from tfmigrate.facts.context import FileContext
    from tfmigrate.facts.references import TF1Ref


@dataclass
class Report:
    """A finding before positions are known: the node, the rule's words, the optional fix."""

    code: str
    node: cst.CSTNode
    message: str
    fix: Optional[Fix]
    statements: Sequence[cst.CSTNode] = ()  # the statements around the node: a position hint
    debt: bool = False  # runs as it did through tf.compat.v1 (Finding.kind "debt")


_HANDLERS: Dict[type, List[str]] = {}  # rule class -> its handlers()


class Rule:
    code: ClassVar[str] = ""
    # The facts it reads (`self.ctx.fact(Kind)`, its fixes' reads included): tests/test_facts.py
    # holds every rule to it, and the engine walks those fed by the walk before the rules.
    reads: ClassVar[Tuple[type, ...]] = ()

    def __init__(self, ctx: "FileContext"):
        self.ctx = ctx
        self.reports: List[Report] = []

    def report(self, node: cst.CSTNode, message: str, fix: Optional[Fix] = None, debt: bool = False) -> None:
        """`debt`: the code runs as it did under TF 2.21 (through `tf.compat.v1`) and is reported
        as migration debt, not as breakage."""
        self.reports.append(Report(self.code, node, message, fix, self.ctx.statements(node), debt))

    def handlers(self) -> List[str]:
        """Names of this instance's visit_/leave_ methods the engine should call (found once per
        class: `dir` of a rule class costs more than most rules' work on a small file)."""
        kind = type(self)
        found = _HANDLERS.get(kind)
        if found is None:
            found = _HANDLERS[kind] = [a for a in dir(kind) if a.startswith(("visit_", "leave_"))]
        return found

    @classmethod
    def facts_read(cls) -> Tuple[type, ...]:
        """`reads` of the rule and of its base classes."""
        return tuple(kind for klass in reversed(cls.__mro__) for kind in vars(klass).get("reads", ()))

    @classmethod
    def applies_to(cls, ctx: "FileContext") -> bool:
        """Cheap per-file precondition; rules that cannot fire are not walked at all."""
        return ctx.names.has_tensorflow


class ReferenceRule(Rule):
    """A rule that reads the file's TF1 references (tfmigrate.facts.references): the API path
    prefixes it CLAIMS, and what it says about each reference handed to it (`describe`).
    FULL_PATHS: it is handed whole paths under OWN_PREFIXES (`GoneRef`s)."""

    reads = (References,)
    CLAIMS: ClassVar[Tuple[str, ...]] = ()
    FULL_PATHS: ClassVar[bool] = False

    def describe(self, ref: "TF1Ref") -> Tuple[str, Optional[Fix]]:
        raise NotImplementedError
