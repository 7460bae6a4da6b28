"""The data every part of tfmigrate speaks: findings, fixes and the edits a fix is made of.

Edits point at libcst nodes of the tree they were found in, so that applying a fix rewrites
exactly the matched nodes and every other byte of the file round-trips unchanged.
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any, Literal, Optional, Tuple

Applicability = Literal["safe", "unsafe"]
# What else a fix's pass may apply (Ruff's IsolationLevel): "none", any fix whose edits do not
# overlap; "module", nothing else: the fix rewrites the module as a whole (TFM200's move to the
# compat route), and the other fixes, chosen for the module as it was, are chosen again next pass.
Isolation = Literal["none", "module"]


@dataclass(frozen=True)
class Replace:
    """Replace `node` (by identity) with `new`."""

    node: Any
    new: Any


@dataclass(frozen=True)
class Insert:
    """Insert statements into the body of `owner` (a FunctionDef or ClassDef).

    `where` is "end" (after the last statement) or "first_def" (before the first method).
    Inserts into the same owner compose; `exclusive` ones (such as creating `__init__`) do not.
    """

    owner: Any
    statements: Tuple[Any, ...]
    where: Literal["end", "first_def"] = "end"
    exclusive: bool = False


@dataclass(frozen=True)
class AddImport:
    """A top-level import statement the fix needs, e.g. "import tensorflow as tf2"."""

    statement: str


@dataclass(frozen=True)
class Fix:
    """A fix on offer. Rules give `fix=None` when there is none; `edits` is empty only on a
    finding that came from the cache or another process (see Finding.portable)."""

    applicability: Applicability
    description: str
    edits: Tuple[Any, ...] = field(default=(), repr=False, compare=False)
    # Packages the fixed program needs that the original did not ("tf-keras"): said once in
    # the report's summary.
    requires: Tuple[str, ...] = ()
    # Only how the fix loop applies the edits: not compared, cached or sent (a fix without its
    # edits is never applied).
    isolation: Isolation = field(default="none", compare=False)


@dataclass(frozen=True)
class Finding:
    rule: str
    name: str
    path: str
    line: int
    column: int
    end_line: int
    end_column: int
    severity: str
    message: str
    fix: Optional[Fix] = field(default=None, compare=False)
    # "breaks": fails or computes something else under TensorFlow 2.21. "debt": TF1 API that
    # runs as it did through `tf.compat.v1` (the compat route), left for a TF2-native rewrite.
    kind: str = "breaks"
    # A notebook's finding: `line`/`column` are within code cell `cell` (numbered as Jupyter shows
    # them, every cell counting, from 1), and `file_range` is where that span sits in the .ipynb
    # file's own JSON text, (line, column, end_line, end_column): what annotations on the file
    # (github, sarif) point at. None for every other file.
    cell: Optional[int] = None
    file_range: Optional[Tuple[int, int, int, int]] = None

    def portable(self) -> "Finding":
        """This finding without the fix's edits (libcst nodes) and isolation, which only applying
        it needs: what to_json keeps, to cache or send between processes."""
        if self.fix is None or not self.fix.edits:
            return self
        return replace(self, fix=Fix(self.fix.applicability, self.fix.description, (), self.fix.requires))

    @classmethod
    def from_json(cls, data: dict) -> "Finding":
        fix = data.get("fix")
        if fix is not None:
            fix = Fix(fix["applicability"], fix["description"], (), tuple(fix.get("requires", ())))
        where = data.get("file_range")
        if isinstance(where, dict):
            where = (where["line"], where["column"], where["end_line"], where["end_column"])
        return cls(**{**data, "fix": fix, "file_range": where})

    def to_json(self) -> dict:
        return {
            "rule": self.rule,
            "name": self.name,
            "path": self.path,
            "line": self.line,
            "column": self.column,
            "end_line": self.end_line,
            "end_column": self.end_column,
            "severity": self.severity,
            "message": self.message,
            "fix": None
            if self.fix is None
            else {"applicability": self.fix.applicability, "description": self.fix.description,
                  **({"requires": list(self.fix.requires)} if self.fix.requires else {})},
            "kind": self.kind,
            **({} if self.cell is None else {"cell": self.cell}),
            **({} if self.file_range is None else {"file_range": dict(zip(
                ("line", "column", "end_line", "end_column"), self.file_range))}),
        }
