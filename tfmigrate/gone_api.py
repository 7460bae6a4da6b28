"""A second walker for the TF1 modules that exist in neither `tf` nor `tf.compat.v1`
(`tf.contrib`, `tf.estimator`) and for TF1-era private modules (`tensorflow.python.debug`).

Why not only removed_api's walker: for these it hands over the reference cut at the table's
prefix (`tf.contrib`, path "contrib"), so a rule cannot tell `tf.contrib.slim.conv2d` from
`tf.contrib.rnn.LSTMCell`, longer CLAIMS ("contrib.rnn") never win, and a name bound by an alias
import (`import tensorflow.contrib.slim as slim; slim.conv2d`) is dropped, as is everything under
`tensorflow.python`. Here the whole dotted name is resolved, owned by the longest CLAIMS prefix
of the full path, and passed to that rule's `explain()` (imports too, one finding per imported
name). References the shared walker still dispatches for these paths are dropped, so each is
reported once. Rules of this family override `explain(ref)` instead of `describe(ref)`.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Optional, Tuple

import re

import libcst as cst

from tfmigrate.findings import Fix, Replace
from tfmigrate.names import dotted, normalize
from tfmigrate.probes import protected, self_assigned
from tfmigrate.removed_api import Ref, RemovedApiRule, lookup, owner

_IMPORTS = (cst.Import, cst.ImportFrom)

OWN_PREFIXES = ("contrib", "estimator", "python.debug")
_DROP = object()  # describe() result for a reference the gone walker reports itself


def own_path(path: Optional[str]) -> bool:
    return bool(path) and any(path == p or path.startswith(p + ".") for p in OWN_PREFIXES)


@dataclass(frozen=True)
class GoneRef(Ref):
    """A Ref with the whole dotted path; `statement` is the Import/ImportFrom it appears in (for
    a reference on an import line), `alias` the ImportAlias, `local` the name the import binds."""

    statement: Optional[cst.CSTNode] = None
    alias: Optional[cst.ImportAlias] = None
    local: Optional[str] = None
    via_alias: bool = False  # reached through a name bound to a gone module (`slim.conv2d`)


class GoneApiRule(RemovedApiRule):
    """Base of the rules owning OWN_PREFIXES paths."""

    _family_walk = True  # its visit_ methods are the walks (the family's and the gone walker's)

    def __init__(self, ctx):
        super().__init__(ctx)
        family = ctx.shared.setdefault("gone_api", {})
        self.isgone_api = not family
        family[self.code] = self

    def handlers(self):
        names = list(super().handlers())
        if self.isgone_api:
            for name in ("visit_Attribute", "visit_Name", "visit_Import", "visit_ImportFrom"):
                if name not in names:
                    names.append(name)
        return names

    # What subclasses override -------------------------------------------------------------
    def explain(self, ref: Ref) -> Tuple[str, Optional[Fix]]:
        return super().describe(ref)

    def describe(self, ref: Ref):
        if own_path(ref.path) and not isinstance(ref, GoneRef):
            return _DROP, None  # reported by the gone walker with the full path
        return self.explain(ref)

    def report(self, node, message, fix=None, debt: bool = False) -> None:
        if message is not _DROP:
            super().report(node, message, fix, debt)

    # The walker ---------------------------------------------------------------------------
    def visit_Attribute(self, node: cst.Attribute) -> None:
        if self.is_walker:
            super().visit_Attribute(node)
        if self.isgone_api:
            parent = self.ctx.stack[-1] if self.ctx.stack else None
            if isinstance(parent, cst.Attribute) and parent.value is node:
                return
            self._resolve_gone(node, parent)

    def visit_Name(self, node: cst.Name) -> None:
        if self.is_walker:
            super().visit_Name(node)
        if self.isgone_api and node.value in self.ctx.names.aliases:
            parent = self.ctx.stack[-1] if self.ctx.stack else None
            if isinstance(parent, (cst.Attribute, cst.ImportAlias, cst.AsName)):
                return  # (a Param's own name is caught below; its default is a reference)
            if getattr(parent, "keyword", None) is node or getattr(parent, "name", None) is node:
                return
            if isinstance(parent, (cst.AssignTarget, cst.AnnAssign, cst.AugAssign)) and parent.target is node:
                return  # rebinding the name (`tpu_config = None`), not using it
            self._resolve_gone(node, parent)

    def visit_Import(self, node: cst.Import) -> None:
        if self.is_walker:
            super().visit_Import(node)
        if not self.isgone_api:
            return
        for alias in node.names:
            full = dotted(alias.name) or ""
            path = normalize(full)
            if own_path(path):
                local = alias.asname.name.value if alias.asname is not None else full.split(".")[0]
                self._dispatch_gone(_import_ref(alias.name, path, node, alias, local))

    def visit_ImportFrom(self, node: cst.ImportFrom) -> None:
        if self.is_walker:
            super().visit_ImportFrom(node)
        if not self.isgone_api or node.relative or node.module is None:
            return
        base = dotted(node.module) or ""
        base_path = normalize(base)
        if base_path is None:
            return
        if isinstance(node.names, cst.ImportStar):
            if own_path(base_path):
                self._dispatch_gone(_import_ref(node.module, base_path, node, None, None))
            return
        for alias in node.names:
            name = dotted(alias.name) or ""
            path = f"{base_path}.{name}" if base_path else name
            if own_path(path):
                local = alias.asname.name.value if alias.asname is not None else name
                self._dispatch_gone(_import_ref(alias.name, path, node, alias, local))

    def _resolve_gone(self, node: cst.BaseExpression, parent) -> None:
        for ancestor in self.ctx.stack[-3:]:
            if type(ancestor) in _IMPORTS:
                return
        names = self.ctx.names
        full = names.full_name(node)
        if full is None:
            return
        path = normalize(full)
        if not own_path(path) or self_assigned(self.ctx, path):
            return
        found = lookup(path)
        section, entry = ("contrib", found[2]) if found and found[1] == "contrib" else ("gone", found[2] if found else {})
        head = dotted(node).split(".")[0]
        via_alias = own_path(normalize(names.aliases.get(head, "")))
        call = parent if isinstance(parent, cst.Call) and parent.func is node else None
        ref = GoneRef(node=node, path=path, section=section, entry=entry, spelled_v1=full.startswith("tensorflow.compat.v1"),
                      call=call, via_alias=via_alias, local=head)
        self._dispatch_gone(ref)

    def _ambiguous(self, ref: GoneRef) -> bool:
        """A fallback import in an `except` block (`try: new API / except: from tensorflow.contrib
        import x`), or a use through a name the module also assigns otherwise: which binding
        wins at run time is unknown, so no finding."""
        if ref.statement is not None:
            return any(isinstance(n, cst.ExceptHandler) for n in self.ctx.stack)
        if not ref.via_alias or not ref.local:
            return False
        assigned = self.ctx.shared.get("gone_api_assigned")
        if assigned is None:
            assigned = self.ctx.shared["gone_api_assigned"] = {}
            for name, value in re.findall(r"^[ \t]*([A-Za-z_]\w*)[ \t]*=(?!=)[ \t]*([^\n]*)", self.ctx.source, re.MULTILINE):
                assigned.setdefault(name, set()).add(value.split("#")[0].strip())
        # Only ever assigned None (`except ImportError: tpu_config = None`): the contrib import
        # always fails under TF 2, so the name is None and this use fails too.
        return ref.local in assigned and assigned[ref.local] != {"None"}

    def _dispatch_gone(self, ref: GoneRef) -> None:
        if self._ambiguous(ref):
            return
        if ref.statement is None and protected(self.ctx, ref.node, ref.path, True):
            return  # a version probe (`hasattr(tf, "contrib")`, `try: ... except AttributeError`)
        rule = self.ctx.shared["removed_api"].get(owner(ref.path))
        if isinstance(rule, GoneApiRule):
            message, fix = rule.explain(ref)
            rule.report(ref.node, message, fix)


def _import_ref(node, path, statement, alias, local) -> GoneRef:
    return GoneRef(node=node, path=path, section="gone", entry={}, spelled_v1=False, call=None,
                   statement=statement, alias=alias, local=local)


# Helpers for the rules of this family ---------------------------------------------------------
def spelled_gone(ref: Ref) -> str:
    """How to name the reference in a message: the code as written when short, else tf.<path>."""
    code = dotted(ref.node) if isinstance(ref.node, (cst.Name, cst.Attribute)) else None
    if isinstance(ref, GoneRef) and ref.statement is not None:
        return f"tf.{ref.path}" if not ref.path.startswith("python.") else f"tensorflow.{ref.path}"
    if code and len(code) <= 48:
        return code
    return f"tf.{ref.path}"


def alias_still_used(ctx, local: str, statement: cst.CSTNode) -> bool:
    """Whether `local` (bound by `statement`) is named anywhere else in the module's code
    (NAME tokens not after a dot; strings and comments do not count). True when unsure."""
    import io
    import tokenize

    def count(text: str) -> int:
        try:
            toks = [t for t in tokenize.generate_tokens(io.StringIO(text).readline)
                    if t.type not in (tokenize.NL, tokenize.NEWLINE, tokenize.COMMENT, tokenize.INDENT, tokenize.DEDENT)]
        except (tokenize.TokenError, SyntaxError):
            return -1
        return sum(1 for i, t in enumerate(toks) if t.type == tokenize.NAME and t.string == local and (i == 0 or toks[i - 1].string != "."))

    cache = ctx.shared.setdefault("gone_api_counts", {})
    if local not in cache:
        cache[local] = count(ctx.source)
    total = cache[local]
    own = count(ctx.module.code_for_node(statement).strip())
    return total < 0 or own < 0 or total > own


def remove_import_fix(ctx, ref: GoneRef, why: str) -> Optional[Fix]:
    """A safe fix deleting an import of a gone module whose bound name is no longer used: the
    import itself fails under TensorFlow 2 (ModuleNotFoundError), so it only breaks the program."""
    stmt, alias = ref.statement, ref.alias
    if stmt is None or alias is None or ref.local is None:
        return None
    if alias_still_used(ctx, ref.local, stmt):
        return None
    remaining = [a for a in stmt.names if a is not alias]
    if remaining:
        remaining[-1] = remaining[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)
        if isinstance(stmt, cst.ImportFrom) and stmt.rpar is not None and len(remaining) == 1:
            pass
        return Fix("safe", why, (Replace(stmt, stmt.with_changes(names=remaining)),))
    line = ctx.enclosing(cst.SimpleStatementLine)
    if line is not None and len(line.body) == 1:
        if any(el.comment is not None for el in line.leading_lines):
            return None  # keep the comments above it: let the user delete it
        if not _removable(ctx, line):
            return None
        return Fix("safe", why, (Replace(line, cst.RemovalSentinel.REMOVE),))
    return Fix("safe", why, (Replace(stmt, cst.RemovalSentinel.REMOVE),))


def _removable(ctx, line) -> bool:
    """A statement can go unless it is the only one of its block (`try:` with just the import)."""
    parent = None
    for i in range(len(ctx.stack) - 1, -1, -1):
        if ctx.stack[i] is line:
            parent = ctx.stack[i - 1] if i > 0 else None
            break
    if isinstance(parent, cst.IndentedBlock):
        return len(parent.body) > 1
    return True
