"""The TF1 references of a file (uses of TensorFlow API that TF 2.21 removed or changed),
resolved once, during the engine's walk.

This module owns what counts as a reference, so a symbol is found once whatever the spelling
(`tf.Session`, `tf.compat.v1.Session`, `from tensorflow.compat.v1 import Session`). Which rule
owns a reference is not a fact: each one found goes to a `Receiver` (tfmigrate.core.dispatch
hands it to the enabled rule that claims it), at the node where it stands, while `ctx.stack`
holds its ancestors.

Two routes, one resolution per name:
- the API table's (tfmigrate/data/tf1_api.json): the name is cut at the longest prefix the table
  knows (`tf.train.AdamOptimizer`), with `changed` / `diverged` signatures, names TF 2.21 lacks
  (`missing`), and calls of TF 2.21 API handed over for a check of their arguments;
- whole paths, for the TF1 modules that exist in neither `tf` nor `tf.compat.v1` (`tf.contrib`,
  `tf.estimator`) and TF1-era private modules (`tensorflow.python.debug`), when the receiver
  asks for them (`whole_paths`): a rule can then tell `tf.contrib.slim.conv2d` from
  `tf.contrib.rnn.LSTMCell`, names bound by an alias import
  (`import tensorflow.contrib.slim as slim; slim.conv2d`) are followed, and each imported name
  of such a module is a reference (`GoneRef`).
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Dict, List, Optional, Protocol, Set, Tuple

import libcst as cst

from tfmigrate.facts import api_table
from tfmigrate.facts.names import dotted, normalize
from tfmigrate.facts.probes import AssignedPaths, FailedTries, protected, self_assigned
from tfmigrate.facts.program import ProgramMode, graph_only, written_for_tf1
from tfmigrate.facts.source_search import SourceSearch


@dataclass(frozen=True)
class TF1Ref:
    """A TF1-only reference: the node naming `path` (a prefix of what the code spells)."""

    node: cst.BaseExpression
    path: str  # API path, compat prefix removed: "train.AdamOptimizer", "contrib.slim"
    section: str  # "removed" | "contrib" | "gone"
    entry: dict
    spelled_v1: bool  # spelled through tensorflow.compat.v1 (so it still resolves if v1 works)
    call: Optional[cst.Call]  # the call whose func is `node`, if any
    # "changed"/"diverged" refs: what in the call only TF1's signature explains (keywords,
    # "#i" positions; see signature_evidence); () otherwise.
    evidence: Tuple[str, ...] = ()
    # Where the finding goes when that is not `node`: the first TF1-only keyword of a call
    # (`keep_dims=True` on a continuation line is what the reader must change).
    anchor: Optional[cst.CSTNode] = None
    # In TF1 graph code that TFM200 moves to the compat route as a whole: no per-call fallback.
    routed: bool = False
    # Spelled through `tf.compat.v2`, which has it although `tf` does not (`enable_v2_behavior`).
    spelled_v2: bool = False


def lookup(path: str) -> Optional[Tuple[str, str, dict]]:
    """The longest prefix of `path` that the table knows, as (prefix, section, entry)."""
    parts = path.split(".")
    for i in range(len(parts), 0, -1):
        prefix = ".".join(parts[:i])
        entry = api_table.removed(prefix)
        if entry is not None:
            return prefix, "removed", entry
        entry = api_table.contrib(prefix)
        if entry is not None:
            return prefix, "contrib", entry
    entry = api_table.gone(parts[0])
    if entry is not None:
        return parts[0], "gone", entry
    return None


@dataclass(frozen=True)
class GoneRef(TF1Ref):
    """A TF1Ref with the whole dotted path (the `FULL_PATHS` route); `statement` is the
    Import/ImportFrom it appears in (for a reference on an import line), `alias` the
    ImportAlias, `local` the name the import binds."""

    statement: Optional[cst.CSTNode] = None
    alias: Optional[cst.ImportAlias] = None
    local: Optional[str] = None
    via_alias: bool = False  # reached through a name bound to a gone module (`slim.conv2d`)


# Paths of the whole-path route: no TF 2.21 namespace has them, the table knows at most a prefix.
OWN_PREFIXES = ("contrib", "estimator", "python.debug")


def own_path(path: Optional[str]) -> bool:
    return bool(path) and any(path == p or path.startswith(p + ".") for p in OWN_PREFIXES)


_IMPORTS = (cst.Import, cst.ImportFrom)
_IMPORT_NODES = (cst.Import, cst.ImportFrom, cst.ImportAlias)


class Receiver(Protocol):
    """Where the references of a file go as the walk finds them (tfmigrate.core.dispatch)."""

    whole_paths: bool  # also resolve whole paths under OWN_PREFIXES (`GoneRef`s)
    checks_calls: bool  # hand over calls of TF 2.21 API, to be checked against its signature

    def claims_exactly(self, path: str) -> bool:
        """Someone claims exactly this path, so it is kept whole where the table only knows a
        shorter prefix (`contrib.eager.enable_eager_execution` under `contrib`)."""

    def table_ref(self, ref: "TF1Ref") -> None:
        """A name, import or call the API table knows as removed, changed or diverged."""

    def missing_ref(self, ref: "TF1Ref") -> None:
        """A module or name that no TF 2.21 namespace has (section "missing")."""

    def whole_ref(self, ref: "GoneRef") -> None:
        """A whole path under OWN_PREFIXES, when `whole_paths`."""

    def api_call(self, call: cst.Call, path: str, v1: bool) -> None:
        """A call of TF 2.21 API with no known TF1 signature, when `checks_calls`."""


class References:
    """A walk step: the references of one file, resolved at each node of the engine's walk
    (`ctx.stack` holds the ancestors of the node being visited) and handed to `receiver`."""

    # What resolving a reference asks, and judging it (`runs_on_route`, `protected`).
    needs = (ProgramMode, SourceSearch, FailedTries, AssignedPaths)
    code = "references"  # the step's name in a TFM000 finding, should it fail

    def __init__(self, ctx, receiver: Receiver):
        self.ctx = ctx
        self.receiver = receiver
        self.whole = receiver.whole_paths
        self._rebound: Dict[str, bool] = {}
        self._assigned: Optional[Dict[str, Set[str]]] = None

    def handlers(self) -> List[str]:
        return ["visit_Attribute", "visit_Name", "visit_ImportFrom", "visit_Import"]

    # The walk ------------------------------------------------------------------------------
    def visit_Attribute(self, node: cst.Attribute) -> None:
        parent = self.ctx.stack[-1] if self.ctx.stack else None
        if isinstance(parent, cst.Attribute) and parent.value is node:
            return  # not the whole dotted name
        self._resolve_both(node, parent, True, True)

    def visit_Name(self, node: cst.Name) -> None:
        if node.value not in self.ctx.names.aliases:
            return
        parent = self.ctx.stack[-1] if self.ctx.stack else None
        if isinstance(parent, (cst.Attribute, cst.ImportAlias, cst.AsName)):
            return
        keyword = getattr(parent, "keyword", None) is node
        # The table's route: not a parameter's own name (its default value is a reference), nor
        # a keyword. The whole-path route: nor a name being bound (`tpu_config = None`).
        table = not (isinstance(parent, cst.Param) and parent.default is not node) and not (
            keyword and isinstance(parent, (cst.Arg, cst.Assign, cst.FunctionDef, cst.ClassDef)))
        whole = not keyword and getattr(parent, "name", None) is not node and not (
            isinstance(parent, (cst.AssignTarget, cst.AnnAssign, cst.AugAssign)) and parent.target is node)
        if table or whole:
            self._resolve_both(node, parent, table, whole)

    def _resolve_both(self, node: cst.BaseExpression, parent, table: bool, whole: bool) -> None:
        """Resolve the name once and take it down the table's route and, for paths under
        OWN_PREFIXES, the whole-path route."""
        names = self.ctx.names
        full = names.full_name(node)
        if full is None:
            return
        path = normalize(full)
        if not path or self_assigned(self.ctx, path):
            return  # the script's own attribute on the module (`tf.model = ...`), not TF's API
        if table:
            self._resolve(node, parent, full, path)
        if whole and self.whole and own_path(path):
            self._resolve_whole(node, parent, full, path)

    def visit_ImportFrom(self, node: cst.ImportFrom) -> None:
        self._table_import_from(node)
        if self.whole:
            self._whole_import_from(node)

    def visit_Import(self, node: cst.Import) -> None:
        self._table_import(node)
        if self.whole:
            self._whole_import(node)

    # The table's route ---------------------------------------------------------------------
    def _table_import_from(self, node: cst.ImportFrom) -> None:
        """`from tensorflow.contrib import slim`: the import itself fails under TF2."""
        if node.relative or node.module is None:
            return
        full = dotted(node.module)
        if not full:
            return
        path = normalize(full)
        if path is None:
            return
        found = lookup(path) if path else None
        if found is not None and found[1] == "gone":
            self.receiver.table_ref(TF1Ref(node.module, found[0], "gone", found[2], False, None))
            return
        if found is not None or self._in_except():
            return
        v1 = full.startswith("tensorflow.compat.v1")
        if path and self._missing_import(node.module, path, full, v1):
            return  # the module itself is gone: one finding for the statement
        if isinstance(node.names, cst.ImportStar):
            return
        for alias in node.names:
            name = dotted(alias.name)
            if name:
                self._missing_import(alias.name, f"{path}.{name}" if path else name, f"{full}.{name}", v1)

    def _table_import(self, node: cst.Import) -> None:
        for alias in node.names:
            full = dotted(alias.name) or ""
            path = normalize(full)
            if path:
                found = lookup(path)
                if found is not None and found[1] == "gone":
                    self.receiver.table_ref(TF1Ref(alias.name, found[0], "gone", found[2], False, None))
                elif found is None and not self._in_except():
                    self._missing_import(alias.name, path, full, full.startswith("tensorflow.compat.v1"))

    # References that exist nowhere in TensorFlow 2.21 (tf_namespaces.json) -----------------
    def _in_except(self) -> bool:
        """Inside an `except` block: a fallback for an older TensorFlow, run only when the `try`
        failed (which one wins under TF 2.21 is not known here): no finding."""
        return any(type(n) is cst.ExceptHandler for n in self.ctx.stack)

    def _missing_import(self, node: cst.CSTNode, path: str, full: str, v1: bool) -> bool:
        """An imported module or name that does not exist: the import raises under TF 2.21."""
        if _not_judged(path, full):
            return False
        missing = api_table.unresolved(path, v1)
        if missing is None:
            return False
        self.receiver.missing_ref(TF1Ref(node, missing, "missing", {"full": full, "v1": v1, "import": True}, v1, None))
        return True

    def _missing(self, node: cst.BaseExpression, path: str, full: str) -> None:
        """`control_flow_ops.cond`, `tf.summary.historgram`: a name no TF 2.21 namespace has."""
        if _not_judged(path, full) or type(self.ctx.stack[-1] if self.ctx.stack else None) in _IMPORT_NODES:
            return
        v1 = full.startswith("tensorflow.compat.v1")
        missing = api_table.unresolved(path, v1)
        if missing is None:
            return
        code = dotted(node) or ""
        leaf = missing.rsplit(".", 1)[-1]
        if self.rebound(code.split(".")[0]) or guarded(self.ctx, leaf):
            return
        target = node
        for _ in range(path.count(".") - missing.count(".")):
            if not isinstance(target, cst.Attribute):
                break  # the missing part is inside what an import alias binds
            target = target.value
        self.receiver.missing_ref(TF1Ref(target, missing, "missing", {"full": full, "v1": v1}, v1, None))

    def _resolve(self, node: cst.BaseExpression, parent, full: str, path: str) -> None:
        found = lookup(path)
        if found is not None and full.startswith("tensorflow.compat.v2.") and api_table.compat_v2_only(found[0]):
            call = parent if isinstance(parent, cst.Call) and parent.func is node else None
            self.receiver.table_ref(TF1Ref(node, found[0], found[1], found[2], False, call, spelled_v2=True))
            return  # it runs: only a rule that claims it has something to say
        if found is None:
            self._changed(node, parent, path, full)
            self._arguments(node, parent, path, full)
            self._missing(node, path, full)
            return
        prefix, section, entry = found
        if section != "removed" and prefix != path and self.receiver.claims_exactly(path):
            prefix = path  # a rule claims this exact path under a gone/contrib module
        target = node
        for _ in range(path.count(".") - prefix.count(".")):
            if not isinstance(target, cst.Attribute):
                return
            target = target.value
        call = parent if isinstance(parent, cst.Call) and parent.func is node and target is node else None
        ref = TF1Ref(target, prefix, section, entry, full.startswith("tensorflow.compat.v1"), call)
        self.receiver.table_ref(ref)

    def _changed(self, node, parent, path: str, full: str) -> None:
        """A symbol TF2 still has, used the TF1 way. `changed`: called with an argument only its
        TF1 signature takes (`tf.argmax(x, dimension=1)`, `tf.nn.dropout(x, keep_prob=0.5)`), or
        one TF2's signature cannot take at that position (`tf.name_scope(n, "default")`).
        `diverged`: TF1's object of that name (`tf.compat.v1.where`) where TF2's differs.
        Spelled through `tf.compat.v1`, the code is TF1 by evidence: an argument whose position
        means something else in TF2 counts too. Spelled `tf.X`, only what TF2 rejects counts:
        `tf.nn.dropout(x, 0.5)` is valid TF2 meaning a rate."""
        if not full.startswith("tensorflow."):
            return
        v1 = full.startswith("tensorflow.compat.v1")
        section, entry = "changed", api_table.changed_signature(path)
        tf1 = v1
        if entry is None:
            section, entry = "diverged", api_table.diverged(path)
            if entry is None:
                if v1:
                    self._diverged_prefix(node, path)
                return
            # Spelled `tf.X` in TF1 code, it was written against TF1's object.
            tf1 = v1 or written_for_tf1(self.ctx)
            if not tf1 and entry.get("when") != "args":
                return
        if entry.get("transformer") == "softmax_cross_entropy_with_logits":
            tf1 = v1 or written_for_tf1(self.ctx)  # TF1 code meant TF1's gradient
        call = parent if isinstance(parent, cst.Call) and parent.func is node else None
        if entry.get("transformer") == "dropout" and call is not None and not tf1:
            # `tf.nn.dropout(x, keep_prob)`: TF2 reads the second argument as the drop rate. In
            # TF1 graph code, or when the argument's name says so, it is TF1's keep probability.
            tf1 = _keep_prob_named(call) or written_for_tf1(self.ctx)
        if section == "diverged" and entry.get("when") == "always":
            self.receiver.table_ref(TF1Ref(node, path, section, entry, v1, call))
            return
        if call is None:
            return
        if section == "diverged" and path == "where" and same_shape_where(call):
            return  # TF1's and TF2's agree when the condition has the operands' shape
        evidence = signature_evidence(call, entry, tf1)
        if evidence:
            self.receiver.table_ref(TF1Ref(node, path, section, entry, v1, call, evidence, _keyword_anchor(call, evidence)))

    def _arguments(self, node, parent, path: str, full: str) -> None:
        """A call of TF 2.21 API, for a check of its arguments against TF 2.21's signature, with
        TF1-signature calls of `changed` / `diverged` entries left to `_changed`."""
        if not self.receiver.checks_calls or type(parent) is not cst.Call or parent.func is not node \
                or not full.startswith("tensorflow."):
            return
        if api_table.changed_signature(path) is not None or api_table.diverged(path) is not None:
            return
        self.receiver.api_call(parent, path, full.startswith("tensorflow.compat.v1"))

    def _diverged_prefix(self, node, path: str) -> None:
        """`tf.losses.Reduction.MEAN` through compat.v1: the diverged object is a prefix."""
        parts = path.split(".")
        for cut in range(1, len(parts)):
            entry = api_table.diverged(".".join(parts[:-cut]))
            if entry is not None and entry.get("when") == "always":
                target = node
                for _ in range(cut):
                    if not isinstance(target, cst.Attribute):
                        return
                    target = target.value
                self.receiver.table_ref(TF1Ref(target, ".".join(parts[:-cut]), "diverged", entry, True, None))
                return

    def rebound(self, local: str) -> bool:
        """Whether the module also binds `local` other than by import (an assignment, a
        parameter, a loop or `with`/`except` target, a def or class): then `ops.X` may not be
        the imported module, so no missing-name finding. A cheap, conservative text check."""
        found = self._rebound.get(local)
        if found is None:
            found = self._rebound[local] = _rebound(self.ctx.source, local)
        return found

    # The whole-path route ------------------------------------------------------------------
    def _whole_import(self, node: cst.Import) -> None:
        for alias in node.names:
            full = dotted(alias.name) or ""
            path = normalize(full)
            if own_path(path):
                local = alias.asname.name.value if alias.asname is not None else full.split(".")[0]
                self._dispatch_whole(_import_ref(alias.name, path, node, alias, local))

    def _whole_import_from(self, node: cst.ImportFrom) -> None:
        if node.relative or node.module is None:
            return
        base = dotted(node.module) or ""
        base_path = normalize(base)
        if base_path is None:
            return
        if isinstance(node.names, cst.ImportStar):
            if own_path(base_path):
                self._dispatch_whole(_import_ref(node.module, base_path, node, None, None))
            return
        for alias in node.names:
            name = dotted(alias.name) or ""
            path = f"{base_path}.{name}" if base_path else name
            if own_path(path):
                local = alias.asname.name.value if alias.asname is not None else name
                self._dispatch_whole(_import_ref(alias.name, path, node, alias, local))

    def _resolve_whole(self, node: cst.BaseExpression, parent, full: str, path: str) -> None:
        for ancestor in self.ctx.stack[-3:]:
            if type(ancestor) in _IMPORTS:
                return
        found = lookup(path)
        section, entry = ("contrib", found[2]) if found and found[1] == "contrib" else ("gone", found[2] if found else {})
        head = dotted(node).split(".")[0]
        via_alias = own_path(normalize(self.ctx.names.aliases.get(head, "")))
        call = parent if isinstance(parent, cst.Call) and parent.func is node else None
        ref = GoneRef(node=node, path=path, section=section, entry=entry, spelled_v1=full.startswith("tensorflow.compat.v1"),
                      call=call, via_alias=via_alias, local=head)
        self._dispatch_whole(ref)

    def _ambiguous(self, ref: GoneRef) -> bool:
        """A fallback import in an `except` block (`try: new API / except: from tensorflow.contrib
        import x`), or a use through a name the module also assigns otherwise: which binding
        wins at run time is unknown, so no finding."""
        if ref.statement is not None:
            return any(isinstance(n, cst.ExceptHandler) for n in self.ctx.stack)
        if not ref.via_alias or not ref.local:
            return False
        if self._assigned is None:
            self._assigned = {}
            for name, value in re.findall(r"^[ \t]*([A-Za-z_]\w*)[ \t]*=(?!=)[ \t]*([^\n]*)", self.ctx.source, re.MULTILINE):
                self._assigned.setdefault(name, set()).add(value.split("#")[0].strip())
        # Only ever assigned None (`except ImportError: tpu_config = None`): the contrib import
        # always fails under TF 2, so the name is None and this use fails too.
        return ref.local in self._assigned and self._assigned[ref.local] != {"None"}

    def _dispatch_whole(self, ref: GoneRef) -> None:
        if self._ambiguous(ref):
            return
        if ref.statement is None and protected(self.ctx, ref.node, ref.path, True):
            return  # a version probe (`hasattr(tf, "contrib")`, `try: ... except AttributeError`)
        self.receiver.whole_ref(ref)


def _import_ref(node, path, statement, alias, local) -> GoneRef:
    return GoneRef(node=node, path=path, section="gone", entry={}, spelled_v1=False, call=None,
                   statement=statement, alias=alias, local=local)


def access_fails(ref: TF1Ref) -> bool:
    """Whether merely naming the reference raises under TF 2.21 (AttributeError and the like)."""
    if ref.section == "gone" or ref.section == "contrib":
        return True
    if ref.section != "removed":
        return False  # a `changed` / `diverged` name exists: the call is what differs
    return not ref.spelled_v1 or not ref.entry.get("v1_available")


def runs_on_route(ctx, ref: TF1Ref) -> bool:
    """Migration debt, not breakage: TF1 API spelled through `tf.compat.v1` that runs as it did:
    on the compat route (with legacy Keras where Keras 3 lacks it), or in eager code when it
    needs no graph (a placeholder or a session does)."""
    program = ctx.fact(ProgramMode)
    if ref.spelled_v2:
        return True  # `tf.compat.v2` has it: it runs
    if not ref.spelled_v1 or ref.section not in ("removed", "changed", "diverged"):
        return False
    if ref.section == "removed" and not ref.entry.get("v1_available") and not program.legacy_keras_set:
        return False  # tf.layers, tf.nn.rnn_cell: Keras 3 lacks them
    return program.on_compat_route or (not program.v2_disabled and not graph_only(ref.path))


def _not_judged(path: str, full: str) -> bool:
    """Keras paths are judged only as TensorFlow spells them (`tf.keras`, `from tensorflow
    import keras`: Keras 3's tree under TF 2.21); standalone `keras` code and the private
    `tensorflow.python.keras` are not this linter's to judge. Paths under OWN_PREFIXES are the
    whole-path route's."""
    if path == "keras" or path.startswith("keras."):
        return not full.startswith("tensorflow.") or full.startswith("tensorflow.python.keras")
    return not path or own_path(path)


def _rebound(text: str, local: str) -> bool:
    n = re.escape(local)
    pattern = (
        rf"^[ \t]*(?:[\w.]+[ \t]*,[ \t]*)*{n}[ \t]*(?:,[^=\n]*)?(?::[^=\n]*)?=(?!=)"  # n = / a, n = / n: T =
        rf"|\bfor[ \t]+[\w, \t()]*?\b{n}\b[\w, \t()]*?[ \t]in\b"
        rf"|\b(?:with|except)\b[^\n]*\bas[ \t]+\(?{n}\b"
        rf"|\b(?:def|class)[ \t]+{n}\b"
        rf"|\bdef[ \t]+\w+[ \t]*\((?:(?:[^()]|\([^()]*\))*?,)?[ \t\n]*\**{n}[ \t\n]*[,:)=]"  # a parameter
        rf"|\blambda\b[^:\n]*\b{n}\b"
        rf"|\b{n}[ \t]*:="
    )
    for match in re.finditer(pattern, text, re.MULTILINE):
        line_start = text.rfind("\n", 0, match.start()) + 1
        line_end = text.find("\n", match.start())
        line = text[line_start:line_end if line_end >= 0 else len(text)]
        if not re.match(r"[ \t]*(?:from|import)\b", line):
            return True
    return False


def guarded(ctx, leaf: str) -> bool:
    """`hasattr(x, "leaf")` / `getattr(x, "leaf", ...)` in the module: the code checks for the
    name before using it, so its absence is handled."""
    return re.search(rf"\b(?:hasattr|getattr)\([^)]*['\"]{re.escape(leaf)}['\"]", ctx.source) is not None


# Evidence of a TF1 signature in a call -------------------------------------------------

def fails_in_tf2(ref: TF1Ref) -> bool:
    """Whether TF2's signature rejects this call: a keyword it does not take, more positional
    arguments than it takes, or `name_scope(None)`. The other evidence (TF1's gradient of
    softmax cross-entropy, a position read as another parameter) is a call TF2 runs differently."""
    entry = ref.entry
    v2_params = entry.get("v2_params") or []
    most = entry.get("v2_max_positional", len(v2_params))
    for key in ref.evidence:
        if key == "labels-gradient" or key.startswith("passes "):
            continue
        if key.startswith("#"):
            if most is not None and int(key[1:]) >= most:
                return True
            continue
        return True  # a TF1-only keyword, or name=None
    return False


def signature_evidence(call: cst.Call, entry: dict, tf1: bool) -> Tuple[str, ...]:
    """What in this call only TF1's signature explains: keywords TF2's does not take, and
    positions ("#i", 0-based) where TF2's takes something else. A position whose meaning merely
    changed (`tf.nn.dropout(x, 0.5)`) counts only in code that is TF1 by evidence (`tf1`); one
    beyond what TF2's takes (a TypeError) always counts. A diverged entry whose difference is in
    some parameters (`where`: x, y) counts whenever they are passed."""
    v1_params, v2_params = entry.get("v1_params") or [], entry.get("v2_params") or []
    renames = entry.get("args", {})
    when = entry.get("when")
    old = set(renames) | set(entry.get("args_removed", []))
    if v2_params:
        old |= set(v1_params) - set(v2_params)
    if entry.get("transformer") == "dropout":
        old.add("keep_prob")
    keywords = tuple(a.keyword.value for a in call.args if a.keyword is not None)
    if isinstance(when, list):  # the difference is in these parameters: report passing them
        positional = [a for a in call.args if a.keyword is None and not a.star]
        if any(a.star for a in call.args):
            return ()  # (what `*args` / `**kwargs` pass is unknown)
        passed = set(keywords) | set(v1_params[: len(positional)])
        named = [w for w in when if w in passed]
        defaulted = [w[1:] for w in when if w.startswith("-") and w[1:] not in passed]
        found = (f"passes {' and '.join(f'`{w}`' for w in named)}",) if named else ()
        if defaulted:
            found += (f"leaves {' and '.join(f'`{w}`' for w in defaulted)} to the default",)
        return found
    evidence = [k for k in keywords if k in old]
    if entry.get("transformer") == "name_scope" and _passes_none_name(call):
        evidence.append("name=None")  # TF1: reset to the root scope; TF2: ValueError
    # A TF1-only keyword (`dim=`) is evidence too: the call was written for TF1's gradients.
    if entry.get("transformer") == "softmax_cross_entropy_with_logits" and (tf1 or evidence) \
            and _labels_unstopped(call):
        evidence.append("labels-gradient")  # TF1's stops the gradient into labels, TF2's does not
    most = entry.get("v2_max_positional", len(v2_params))
    for i, arg in enumerate(call.args):
        if arg.keyword is not None or arg.star:
            break
        if i >= len(v1_params):
            break
        name = v1_params[i]
        if most is not None and i >= most:
            evidence.append(f"#{i}")
            continue
        v2_name = v2_params[i] if i < len(v2_params) else None
        if v2_name and name.startswith(v2_name):
            continue  # a narrowed role, same meaning (`device_name_or_function` -> `device_name`)
        if renames.get(name, name) != v2_name and tf1 and v2_name not in ("args", "kwargs"):
            evidence.append(f"#{i}")
        elif tf1 and v2_name in ("args", "kwargs") and name not in v2_params:
            evidence.append(f"#{i}")
    return tuple(evidence)


# Elementwise predicates: their result has the shape of their (broadcast) operands.
_ELEMENTWISE = frozenset({"greater", "greater_equal", "less", "less_equal", "equal", "not_equal",
                          "is_nan", "is_inf", "is_finite", "logical_and", "logical_or", "logical_not",
                          "logical_xor", "isnan", "isinf", "isfinite"})
_LIKE = frozenset({"ones_like", "zeros_like"})


def same_shape_where(call: cst.Call) -> bool:
    """`where(c, x, y)` whose condition visibly has the shape of `x` and `y` (TF1 required them
    equal): `where(x > 0, x, y)`, `where(tf.greater(a, b), a, b)`, `where(tf.is_nan(x),
    tf.zeros_like(x), x)`, `where(m, tf.ones_like(m), tf.zeros_like(m))`. There TF1's row
    selection and TF2's broadcasting pick the same elements: nothing to review."""
    named = {}
    for i, arg in enumerate(call.args):
        if arg.star:
            return False
        key = arg.keyword.value if arg.keyword is not None else ("condition", "x", "y", "name")[i] if i < 4 else None
        named[key] = arg.value
    cond, x, y = named.get("condition"), named.get("x"), named.get("y")
    if cond is None or x is None or y is None:
        return False

    def like_of(node) -> Optional[str]:
        if type(node) is cst.Call and (dotted(node.func) or "").rsplit(".", 1)[-1] in _LIKE and node.args:
            return _code(node.args[0].value)
        return None

    cond_text = _code(cond)
    if like_of(x) == cond_text and like_of(y) == cond_text:
        return True
    operands = {_code(x), _code(y)} | {t for t in (like_of(x), like_of(y)) if t}

    def shaped(node) -> Optional[bool]:
        """True: has the operands' shape; False: a scalar; None: unknown."""
        if _code(node) in operands or like_of(node) in operands:
            return True
        if type(node) in (cst.Integer, cst.Float) or (type(node) is cst.UnaryOperation and type(node.expression) in (cst.Integer, cst.Float)):
            return False
        return None

    def elementwise(node) -> bool:
        parts = []
        if type(node) is cst.Comparison and len(node.comparisons) == 1:
            parts = [node.left, node.comparisons[0].comparator]
        elif type(node) is cst.Call and (dotted(node.func) or "").rsplit(".", 1)[-1] in _ELEMENTWISE \
                and all(a.keyword is None and not a.star for a in node.args) and node.args:
            parts = [a.value for a in node.args]
        elif type(node) is cst.UnaryOperation and type(node.operator) is cst.BitInvert:
            return elementwise(node.expression)
        elif type(node) is cst.BinaryOperation and type(node.operator) in (cst.BitAnd, cst.BitOr, cst.BitXor):
            return elementwise(node.left) and elementwise(node.right)
        else:
            return False
        kinds = [shaped(p) if shaped(p) is not None else (True if elementwise(p) else None) for p in parts]
        return None not in kinds and True in kinds

    return elementwise(cond)


def _keep_prob_named(call: cst.Call) -> bool:
    """The second positional argument of `dropout` is named as a keep probability
    (`keep_prob`, `self.keep_probability`, `FLAGS.dropout_keep`)."""
    positional = [a for a in call.args if a.keyword is None and not a.star]
    if len(positional) < 2:
        return False
    value = positional[1].value
    name = value.attr.value if isinstance(value, cst.Attribute) else value.value if isinstance(value, cst.Name) else ""
    return "keep" in name.lower()


def _keyword_anchor(call: cst.Call, evidence: Tuple[str, ...]) -> Optional[cst.CSTNode]:
    """The first TF1-only keyword argument, when it is on a later line than the callee would be
    (only keywords are evidence); None keeps the finding on the callee."""
    for arg in call.args:
        if arg.keyword is not None and arg.keyword.value in evidence:
            return arg if _breaks_before(call, arg) else None
    return None


def _breaks_before(call: cst.Call, arg: cst.Arg) -> bool:
    """Whether a line break separates the callee from `arg` (in the whitespace libcst keeps)."""
    if "\n" in _code(call.whitespace_before_args):
        return True
    for item in call.args:
        if item is arg:
            return False
        if item.comma is not cst.MaybeSentinel.DEFAULT and "\n" in _code(item.comma):
            return True
    return False


def _code(node) -> str:
    return cst.Module([]).code_for_node(node)


def labels_arg(call: cst.Call) -> Optional[cst.Arg]:
    for i, arg in enumerate(call.args):
        key = arg.keyword.value if arg.keyword is not None else None
        if key == "labels" or (key is None and i == 0 and not arg.star):
            return arg
    return None


def _labels_unstopped(call: cst.Call) -> bool:
    """`labels` is passed and not already wrapped in `stop_gradient(...)`."""
    arg = labels_arg(call)
    if arg is None:
        return False
    value = arg.value
    return not (type(value) is cst.Call and (dotted(value.func) or "").split(".")[-1] == "stop_gradient")


def _passes_none_name(call: cst.Call) -> bool:
    """`name_scope(None)` / `name_scope(name=None)` without a default name."""
    positional = [a for a in call.args if a.keyword is None]
    keywords = {a.keyword.value: a for a in call.args if a.keyword is not None}
    if "default_name" in keywords or len(positional) > 1:
        return False
    name = positional[0] if positional else keywords.get("name")
    return name is not None and type(name.value) is cst.Name and name.value.value == "None"


