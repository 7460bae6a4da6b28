"""Finding TF1-only API references, shared by every TFM2xx rule.

One walker per file (the first removed-API rule the engine creates) resolves each maximal
dotted name against the API table (tfmigrate/data/tf1_api.json) and hands the reference to the
rule that owns it: the enabled rule whose CLAIMS prefix is the longest match, TFM299 for the rest.
Rules own messages and fixes; this module owns what counts as a reference, so a symbol is
reported once, by one rule, whatever the spelling (`tf.Session`, `tf.compat.v1.Session`,
`from tensorflow.compat.v1 import Session`).
"""
from __future__ import annotations

import re
from dataclasses import dataclass, replace
from functools import lru_cache
from typing import ClassVar, Dict, Optional, Tuple

import libcst as cst

from tfmigrate import api_table
from tfmigrate.findings import Fix, Replace
from tfmigrate.names import Reference, dotted
from tfmigrate.probes import protected, self_assigned
from tfmigrate.program import graph_only, mentions_graph_mode
from tfmigrate.rule import Rule, all_rules


@dataclass(frozen=True)
class Ref:
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


@lru_cache(maxsize=None)
def _claims() -> Tuple[Tuple[str, str], ...]:
    """(prefix, code) for every removed-API rule, longest prefix first."""
    pairs = [
        (prefix, code)
        for code, rule in all_rules().items()
        if issubclass(rule, RemovedApiRule)
        for prefix in rule.CLAIMS
    ]
    return tuple(sorted(pairs, key=lambda p: -len(p[0])))


def _functional_layer_call(ref: Ref) -> bool:
    """A call of `tf.layers.dense` and the other functional layers TFM101 owns."""
    if ref.call is None or not ref.path.startswith("layers."):
        return False
    from tfmigrate.fixers.layers import SPECS

    return ref.path[len("layers."):] in SPECS


def owner(path: str) -> str:
    for prefix, code in _claims():
        if path == prefix or path.startswith(prefix + "."):
            return code
    return "TFM299"


def _exact_claim(path: str) -> bool:
    """A rule claims exactly this path (e.g. "contrib.eager.enable_eager_execution"), so it is
    reported whole even where the table only knows a shorter prefix ("contrib")."""
    return any(prefix == path for prefix, _ in _claims())


def _own_handler(cls: type, name: str) -> bool:
    """Whether the visit_/leave_ method `name` of a rule class is the rule's own, not the walk
    of a family base (a class whose body sets `_family_walk`)."""
    for klass in cls.__mro__:
        if name in vars(klass):
            return not vars(klass).get("_family_walk", False)
    return False


class RemovedApiRule(Rule):
    """Base of the TFM2xx rules. Subclasses set CLAIMS and may override message() and fix().

    The family's walk (the visit_ methods below) runs once per file, in the first rule created;
    a rule's own visit_/leave_ methods (`visit_Call` of TFM201) run whichever rule walks, so a
    rule finds the same alone and with the others enabled (tests/test_selection.py)."""

    CLAIMS: ClassVar[Tuple[str, ...]] = ()
    _family_walk = True  # this class's visit_ methods are the family's walk (see _own_handler)

    def __init__(self, ctx):
        super().__init__(ctx)
        family: Dict[str, RemovedApiRule] = ctx.shared.setdefault("removed_api", {})
        self.is_walker = not family
        family[self.code] = self

    def handlers(self):
        names = super().handlers()
        if self.is_walker:
            return names
        return [name for name in names if _own_handler(type(self), name)]

    # The walker ---------------------------------------------------------------------------
    def visit_Attribute(self, node: cst.Attribute) -> None:
        if not self.is_walker:
            return  # a rule's own override calling super(): the walker resolves this node
        parent = self.ctx.stack[-1] if self.ctx.stack else None
        if isinstance(parent, cst.Attribute) and parent.value is node:
            return  # not the whole dotted name
        self._resolve(node, parent)

    def visit_Name(self, node: cst.Name) -> None:
        if node.value not in self.ctx.names.aliases or not self.is_walker:
            return
        parent = self.ctx.stack[-1] if self.ctx.stack else None
        if isinstance(parent, (cst.Attribute, cst.ImportAlias, cst.AsName)):
            return
        if isinstance(parent, cst.Param) and parent.default is not node:
            return  # the parameter's own name (a default value is a reference)
        if isinstance(parent, (cst.Arg, cst.Assign, cst.FunctionDef, cst.ClassDef)) and getattr(parent, "keyword", None) is node:
            return
        self._resolve(node, parent)

    def visit_ImportFrom(self, node: cst.ImportFrom) -> None:
        """`from tensorflow.contrib import slim`: the import itself fails under TF2."""
        if node.relative or node.module is None or not self.is_walker:
            return
        full = dotted(node.module)
        if not full:
            return
        from tfmigrate.names import normalize

        path = normalize(full)
        if path is None:
            return
        found = lookup(path) if path else None
        if found is not None and found[1] == "gone":
            self._dispatch(Ref(node.module, found[0], "gone", found[2], False, None))
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

    def visit_Import(self, node: cst.Import) -> None:
        from tfmigrate.names import normalize

        if not self.is_walker:
            return
        for alias in node.names:
            full = dotted(alias.name) or ""
            path = normalize(full)
            if path:
                found = lookup(path)
                if found is not None and found[1] == "gone":
                    self._dispatch(Ref(alias.name, found[0], "gone", found[2], False, None))
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
        self._report_missing(Ref(node, missing, "missing", {"full": full, "v1": v1, "import": True}, v1, None))
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
        if rebound(self.ctx, code.split(".")[0]) or guarded(self.ctx, leaf):
            return
        target = node
        for _ in range(path.count(".") - missing.count(".")):
            if not isinstance(target, cst.Attribute):
                break  # the missing part is inside what an import alias binds
            target = target.value
        self._report_missing(Ref(target, missing, "missing", {"full": full, "v1": v1}, v1, None))

    def _report_missing(self, ref: Ref) -> None:
        rule = self.ctx.shared["removed_api"].get("TFM299")
        if rule is not None and not protected(self.ctx, ref.node, ref.path, True):
            rule.report(ref.node, missing_message(ref), None)

    def _resolve(self, node: cst.BaseExpression, parent) -> None:
        names = self.ctx.names
        full = names.full_name(node)
        if full is None:
            return
        from tfmigrate.names import normalize

        path = normalize(full)
        if not path or self_assigned(self.ctx, path):
            return  # the script's own attribute on the module (`tf.model = ...`), not TF's API
        found = lookup(path)
        if found is not None and full.startswith("tensorflow.compat.v2.") and api_table.compat_v2_only(found[0]):
            call = parent if isinstance(parent, cst.Call) and parent.func is node else None
            self._dispatch(Ref(node, found[0], found[1], found[2], False, call, spelled_v2=True))
            return  # it runs: only a rule that claims it has something to say
        if found is None:
            self._changed(node, parent, path, full)
            self._arguments(node, parent, path, full)
            self._missing(node, path, full)
            return
        prefix, section, entry = found
        if section != "removed" and prefix != path and _exact_claim(path):
            prefix = path  # a rule claims this exact path under a gone/contrib module
        target = node
        for _ in range(path.count(".") - prefix.count(".")):
            if not isinstance(target, cst.Attribute):
                return
            target = target.value
        call = parent if isinstance(parent, cst.Call) and parent.func is node and target is node else None
        ref = Ref(target, prefix, section, entry, full.startswith("tensorflow.compat.v1"), call)
        self._dispatch(ref)

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
            # Spelled `tf.X` in TF1 graph code, it was written against TF1's object.
            tf1 = v1 or mentions_graph_mode(self.ctx)
            if not tf1 and entry.get("when") != "args":
                return
        if entry.get("transformer") == "softmax_cross_entropy_with_logits":
            tf1 = v1 or mentions_graph_mode(self.ctx)  # TF1 code meant TF1's gradient
        call = parent if isinstance(parent, cst.Call) and parent.func is node else None
        if entry.get("transformer") == "dropout" and call is not None and not tf1:
            # `tf.nn.dropout(x, keep_prob)`: TF2 reads the second argument as the drop rate. In
            # TF1 graph code, or when the argument's name says so, it is TF1's keep probability.
            tf1 = _keep_prob_named(call) or mentions_graph_mode(self.ctx)
        if section == "diverged" and entry.get("when") == "always":
            self._dispatch(Ref(node, path, section, entry, v1, call))
            return
        if call is None:
            return
        if section == "diverged" and path == "where" and same_shape_where(call):
            return  # TF1's and TF2's agree when the condition has the operands' shape
        evidence = signature_evidence(call, entry, tf1)
        if evidence:
            self._dispatch(Ref(node, path, section, entry, v1, call, evidence, _keyword_anchor(call, evidence)))

    def _arguments(self, node, parent, path: str, full: str) -> None:
        """A call whose keywords or positional count TF 2.21's signature of what it calls does
        not take (TypeError when the line runs): TFM215's, with TF1-signature calls of `changed`
        / `diverged` entries left to `_changed`."""
        rule = self.ctx.shared["removed_api"].get("TFM215")
        if rule is None or type(parent) is not cst.Call or parent.func is not node or not full.startswith("tensorflow."):
            return
        if api_table.changed_signature(path) is not None or api_table.diverged(path) is not None:
            return
        rule.check_call(parent, path, full.startswith("tensorflow.compat.v1"))

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
                self._dispatch(Ref(target, ".".join(parts[:-cut]), "diverged", entry, True, None))
                return

    def _dispatch(self, ref: Ref) -> None:
        if _functional_layer_call(ref):
            return  # TFM101 reports it, with a fix that builds the Keras layer object
        if ref.spelled_v2 and owner(ref.path) == "TFM299":
            return  # not removed API there
        debt = runs_on_route(self.ctx, ref)
        if not debt and protected(self.ctx, ref.node, ref.path, _access_fails(ref)):
            return  # a version probe: runs only where the name exists, or never under TF 2.21
        rule = self.ctx.shared["removed_api"].get(owner(ref.path))
        if rule is not None:  # (a probe never hides migration debt: the TF1 code is still there)
            program = self.ctx.program
            if not ref.spelled_v1 and program.graph and not program.v2_disabled:
                ref = replace(ref, routed=True)
            message, fix = rule.describe(ref)
            rule.report(ref.anchor or ref.node, message, fix, debt)

    # What each rule says ------------------------------------------------------------------
    def describe(self, ref: Ref) -> Tuple[str, Optional[Fix]]:
        fix = generic_fix(ref, self.ctx)
        return generic_message(ref, self.ctx, fix), fix


def _access_fails(ref: Ref) -> bool:
    """Whether merely naming the reference raises under TF 2.21 (AttributeError and the like)."""
    if ref.section == "gone" or ref.section == "contrib":
        return True
    if ref.section != "removed":
        return False  # a `changed` / `diverged` name exists: the call is what differs
    return not ref.spelled_v1 or not ref.entry.get("v1_available")


def runs_on_route(ctx, ref: Ref) -> bool:
    """Migration debt, not breakage: TF1 API spelled through `tf.compat.v1` that runs as it did:
    on the compat route (with legacy Keras where Keras 3 lacks it), or in eager code when it
    needs no graph (a placeholder or a session does)."""
    program = ctx.program
    if ref.spelled_v2:
        return True  # `tf.compat.v2` has it: it runs
    if not ref.spelled_v1 or ref.section not in ("removed", "changed", "diverged"):
        return False
    if ref.section == "removed" and not ref.entry.get("v1_available") and not program.legacy_keras_set:
        return False  # tf.layers, tf.nn.rnn_cell: Keras 3 lacks them
    return program.on_compat_route or (not program.v2_disabled and not graph_only(ref.path))


_IMPORT_NODES = (cst.Import, cst.ImportFrom, cst.ImportAlias)
# Paths another walker owns (gone_api.OWN_PREFIXES), judged there.
_OTHER_WALKERS = ("contrib", "estimator", "python.debug")


def _not_judged(path: str, full: str) -> bool:
    """Keras paths are judged only as TensorFlow spells them (`tf.keras`, `from tensorflow
    import keras`: Keras 3's tree under TF 2.21); standalone `keras` code and the private
    `tensorflow.python.keras` are not this linter's to judge."""
    if path == "keras" or path.startswith("keras."):
        return not full.startswith("tensorflow.") or full.startswith("tensorflow.python.keras")
    return not path or any(path == p or path.startswith(p + ".") for p in _OTHER_WALKERS)


def rebound(ctx, local: str) -> bool:
    """Whether the module also binds `local` other than by import (an assignment, a parameter,
    a loop or `with`/`except` target, a def or class): then `ops.X` may not be the imported
    module, so no missing-name finding. A cheap, conservative text check."""
    cache = ctx.shared.setdefault("removed_api_rebound", {})
    if local not in cache:
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
        text = ctx.source
        found = False
        for match in re.finditer(pattern, text, re.MULTILINE):
            line_start = text.rfind("\n", 0, match.start()) + 1
            line_end = text.find("\n", match.start())
            line = text[line_start:line_end if line_end >= 0 else len(text)]
            if not re.match(r"[ \t]*(?:from|import)\b", line):
                found = True
                break
        cache[local] = found
    return cache[local]


def guarded(ctx, leaf: str) -> bool:
    """`hasattr(x, "leaf")` / `getattr(x, "leaf", ...)` in the module: the code checks for the
    name before using it, so its absence is handled."""
    return re.search(rf"\b(?:hasattr|getattr)\([^)]*['\"]{re.escape(leaf)}['\"]", ctx.source) is not None


# Keras 2 globals that Keras 3 dropped, and what replaces them (keras.io/guides/migrating_to_keras_3).
_NO_PHASE = "Keras 3 has no global learning phase: pass `training=True`/`False` when calling the model or layer."
_NO_SESSION = "Keras 3 has no TF1 session; graph code keeps its own `tf.compat.v1.Session`."
_KERAS_GONE = {"learning_phase": _NO_PHASE, "set_learning_phase": _NO_PHASE,
               "get_session": _NO_SESSION, "set_session": _NO_SESSION}


def missing_message(ref: Ref) -> str:
    """What a reference that exists nowhere in TensorFlow 2.21 is, and what to use instead."""
    missing, v1 = ref.path, ref.entry["v1"]
    code = dotted(ref.node) or ""
    module, _, leaf = missing.rpartition(".")
    if missing.startswith("python."):
        full = f"tensorflow.{missing}"
        named = f"`{code}`" if code in ("", full) else f"`{code}` (`{full}`)"
        head = (f"{named} does not exist in TensorFlow 2.21: `tensorflow.{module}` (private, changed "
                f"without notice) has no `{leaf}` any more.")
        hint = api_table.private_hint(leaf)
        if hint is not None:
            return f"{head} Use `tf.{hint}`."
        target = api_table.public_named(leaf)
        if target is not None:
            return f"{head} Use `tf.{target}`, the public API of that name."
        return f"{head} Use the public tf API instead."
    spelled_as = f"tf.compat.v1.{missing}" if v1 else f"tf.{missing}"
    named = f"`{code}`" if code in ("", spelled_as) else f"`{code}` (`{spelled_as}`)"
    if missing.startswith("keras."):
        head = f"{named} does not exist in Keras 3, which is `tf.keras` (and `tf.compat.v1.keras`) under TensorFlow 2.21."
        why = _KERAS_GONE.get(leaf)
        if why is not None:
            return f"{head} {why}"
        close = api_table.close_name(missing, False)
        return f"{head} Did you mean `tf.{close}`?" if close else f"{head} Use the Keras 3 API instead."
    if v1:
        if api_table.unresolved(missing, False) is None:
            return f"{named} does not exist in `tf.compat.v1` of TensorFlow 2.21. Use `tf.{missing}`."
        head = f"{named} does not exist in TensorFlow 2.21, neither in `tf.compat.v1` nor in `tf`."
    else:
        if api_table.unresolved(missing, True) is None:
            return f"{named} was removed from TensorFlow 2. It still works as `tf.compat.v1.{missing}`."
        head = f"{named} does not exist in TensorFlow 2.21, not even in `tf.compat.v1`."
    close = api_table.close_name(missing, v1)
    if close is not None:
        return f"{head} Did you mean `tf.{'compat.v1.' if v1 else ''}{close}`?"
    target = api_table.public_named(leaf)
    if target is not None and target != missing:
        return f"{head} Use `tf.{target}`, the public API of that name."
    return f"{head} Use the public tf API instead."


def reference_like(ref: Ref, ctx, api: str) -> Reference:
    """How to spell `api` in the rewrite: through the alias the code itself used when that alias
    is `tensorflow` (`tf.Session` -> `tf.compat.v1.Session`, never another alias of the same
    module), else whatever `ImportTable.reference` picks (with the import it needs)."""
    head = ref.node
    while isinstance(head, cst.Attribute):
        head = head.value
    if isinstance(head, cst.Name) and ctx.names.aliases.get(head.value) == "tensorflow":
        return Reference(f"{head.value}.{api}", None)
    return ctx.names.reference(api)


def spelled(path: str) -> str:
    return f"tf.{path}"


def generic_message(ref: Ref, ctx, fix: Optional[Fix] = None) -> str:
    """`fix`: what generic_fix offers for `ref` (a changed signature's message describes it)."""
    entry = ref.entry
    name = f"`{spelled(ref.path)}`"
    if ref.section in ("changed", "diverged"):
        return changed_message(ref, fix)
    if ref.section == "gone":
        if ref.path == "contrib":
            return "`tf.contrib` was removed in TensorFlow 2 and is not in `tf.compat.v1` either. Replace it with a TF2 API or a maintained package."
        return f"{name} does not exist in TensorFlow 2.21, not even in `tf.compat.v1`. {entry.get('note', '')}".strip()
    replacement = api_table.replacement(ref.path)
    if ref.section == "contrib":
        target = replacement["target"] if replacement else None
        return f"{name} was removed with `tf.contrib`. Use `{spelled(target)}` instead." if target else f"{name} was removed with `tf.contrib`."
    if replacement and replacement.get("native"):
        how = f"use `{spelled(replacement['target'])}` (TF2-native)"
        if not replacement.get("drop_in", True):
            how += f": {replacement.get('note', 'not a drop-in replacement')}"
        obstacle = keras_class_obstacle(ref, ctx, replacement)
        if obstacle is not None:
            return (f"{name} is TF1-only API, removed from TensorFlow 2. Keras 3's "
                    f"`{spelled(replacement['target'])}` is not a drop-in here: {obstacle}. Rewrite it "
                    "for Keras 3 (or keep TF1's layer with tf_keras); no automatic fix.")
        if replacement.get("drop_in", True) and not replacement.get("proof") and api_table.removed(ref.path):
            how += "; the rewrite was not run on a sample, so its fix is unsafe"
        return f"{name} is TF1-only API, removed from TensorFlow 2. Instead, {how}."
    if replacement and replacement.get("differs"):  # a native rewrite that running disproved
        why = f"`{spelled(replacement['not_native'])}` is not a drop-in: {replacement['differs']}"
        if ref.spelled_v1:
            return f"{name} is TF1-only API that works only through `tf.compat.v1`; {why}. Keep it until the code is checked against TF2's results."
        return (f"{name} was removed from TensorFlow 2; {why}. `tf.compat.v1.{ref.path}` keeps TF1's "
                f"results (a compat.v1 fallback, not TF2-native).")
    if replacement:  # compat.v1 fallback
        if ref.spelled_v1:
            return f"{name} is TF1-only API: it works only through `tf.compat.v1` and has no TF2-native equivalent. Keep it until this code moves to TF2 idioms."
        if ref.routed:
            return (f"{name} was removed from TensorFlow 2. In this TF1 graph module TFM200's fix runs it through "
                    "`tf.compat.v1` with the rest of the graph code.")
        return f"{name} was removed from TensorFlow 2. It still works as `tf.compat.v1.{ref.path}` (a compat.v1 fallback, not TF2-native)."
    error = entry.get("error")
    return f"{name} does not work in TensorFlow 2.21 with Keras 3, not even as `tf.compat.v1.{ref.path}`{f' ({error})' if error else ''}. Rewrite it with TF2 APIs."


# What every Keras 3 layer takes besides its own parameters (keras.layers.Layer.__init__).
_KERAS_LAYER_KWARGS = frozenset({"activity_regularizer", "trainable", "dtype", "autocast", "name",
                                 "input_dim", "input_shape"})
# TF1's `tf.layers` objects were also `tf.layers.Layer`s: what Keras 3's lack.
_TF1_LAYER_METHODS = ("apply",)


def keras_class_obstacle(ref: Ref, ctx, replacement: dict) -> Optional[str]:
    """Why a TF1 `tf.layers` class cannot become its Keras 3 namesake at this reference, or
    None. A subclass inherits TF1's API (`fused=` passed to `super().__init__`, `.apply`,
    variable scopes) that Keras 3's class rejects or lacks; a call passing a keyword Keras 3's
    class does not take raises ValueError; an instance used through `.apply` fails."""
    target = replacement.get("target", "")
    if not (ref.path.startswith("layers.") and target.startswith("keras.layers.")):
        return None
    parent = ctx.stack[-1] if ctx.stack else None
    if isinstance(parent, cst.Arg) and len(ctx.stack) > 1 and isinstance(ctx.stack[-2], cst.ClassDef) \
            and parent in ctx.stack[-2].bases:
        return "as a base class it brings TF1's layer API (`fused=`, `.apply`, variable scopes) that Keras 3's lacks"
    call = ref.call
    if call is None:
        return None
    signature = api_table.call_signature(target)
    if signature is not None:
        names = set(signature[0]) | _KERAS_LAYER_KWARGS
        unknown = [a.keyword.value for a in call.args if a.keyword is not None and a.keyword.value not in names]
        if unknown:
            return f"it takes no {', '.join(f'`{k}=`' for k in unknown)} (ValueError)"
    owner_assign = ctx.enclosing(cst.Assign)
    if owner_assign is not None and owner_assign.value is call and len(owner_assign.targets) == 1:
        local = dotted(owner_assign.targets[0].target)
        if local and any(re.search(rf"(?<![\w.]){re.escape(local)}\.{m}\(", ctx.source) for m in _TF1_LAYER_METHODS):
            return f"`{local}` is used through `.apply(...)`, which Keras 3 layers do not have"
    return None


def generic_fix(ref: Ref, ctx) -> Optional[Fix]:
    """A rename to the measured replacement: TF2-native when it is a drop-in, else the
    compat.v1 fallback (only where the code does not already go through compat.v1)."""
    if ref.section == "changed":
        return changed_fix(ref, ctx)
    if ref.section != "removed":
        return None
    replacement = api_table.replacement(ref.path)
    if replacement is None:
        return None
    native = bool(replacement.get("native"))
    if not native and (ref.spelled_v1 or ref.routed):
        return None  # already resolves through compat.v1, or will with the whole module (TFM200)
    if ref.entry.get("transformer") == "cast":
        return cast_fix(ref, ctx, replacement)
    if not replacement.get("drop_in", True) or replacement.get("transformer") or ref.entry.get("transformer"):
        return None
    if native and keras_class_obstacle(ref, ctx, replacement) is not None:
        return None
    edits = []
    args_fix = None
    if ref.call is not None and native and (replacement.get("args") or replacement.get("args_removed") or replacement.get("defaults_changed")):
        args_fix = rename_arguments(ref.call, replacement)
        if args_fix is None:
            return None
    elif ref.call is None and native and replacement.get("positional_ok") is not None:
        pass  # a reference that is not called (e.g. passed as a class): the rename is enough
    reference = reference_like(ref, ctx, replacement["target"])
    new = reference.expression()
    if args_fix is not None:
        new_call, unsafe = args_fix
        edits.append(Replace(ref.call, new_call.with_changes(func=new)))
    else:
        unsafe = False
        edits.append(Replace(ref.node, new))
    edits.extend(reference.import_edits())
    kind = "TF2-native" if native else "compat.v1 fallback"
    applicability = "unsafe" if unsafe or (native and replacement.get("note")) else "safe"
    if native and not replacement.get("proof") and applicability == "safe" and api_table.removed(ref.path):
        # Resolving proves the name, not the call: a rewrite the generator did not run is unsafe.
        return Fix("unsafe", f"Replace with `{reference.code}` ({kind}; not run on a sample)", tuple(edits))
    return Fix(applicability, f"Replace with `{reference.code}` ({kind})", tuple(edits))


def rename_arguments(call: cst.Call, replacement: dict):
    """Keyword renames, removed keywords and changed defaults for a native replacement.
    Returns (new call, unsafe) or None when the arguments cannot be mapped."""
    renames = replacement.get("args", {})
    removed = set(replacement.get("args_removed", []))
    positional_ok = replacement.get("positional_ok")
    positional = [a for a in call.args if a.keyword is None and not a.star]
    if any(a.star for a in call.args):
        return None
    if positional_ok is not None and len(positional) > positional_ok:
        return None
    unsafe = False
    args = []
    passed = set()
    for arg in call.args:
        if arg.keyword is not None:
            key = arg.keyword.value
            passed.add(renames.get(key, key))
            if key in removed:
                unsafe = True
                continue
            if key in renames:
                arg = arg.with_changes(keyword=cst.Name(renames[key]))
        args.append(arg)
    for key, (old, _new) in replacement.get("defaults_changed", {}).items():
        if key in passed:
            continue
        if len(positional) > 1:  # it may have been passed by position: cannot tell, so flag it
            unsafe = True
            continue
        if args:
            args[-1] = args[-1].with_changes(comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" ")))
        args.append(cst.Arg(value=cst.parse_expression(repr(old)), keyword=cst.Name(key), equal=_EQUAL))
    if args and call.args and call.args[-1].comma is cst.MaybeSentinel.DEFAULT:
        args[-1] = args[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)  # keep "no trailing comma"
    return call.with_changes(args=args), unsafe


_EQUAL = cst.AssignEqual(whitespace_before=cst.SimpleWhitespace(""), whitespace_after=cst.SimpleWhitespace(""))


# Transformers ------------------------------------------------------------------------------
_CAST_DTYPE = re.compile(r"tf\.cast\(x, tf\.(\w+)\)")


def cast_fix(ref: Ref, ctx, replacement: dict) -> Optional[Fix]:
    """`tf.to_float(x)` -> `tf.cast(x, tf.float32)` (TF2-native, same result); `name=` is kept.
    Only a call with the tensor as its one positional argument (or `x=`) is rewritten."""
    call = ref.call
    dtype = _CAST_DTYPE.search(replacement.get("note", ""))
    if call is None or dtype is None or any(a.star for a in call.args):
        return None
    tensor, rest = None, []
    for arg in call.args:
        key = arg.keyword.value if arg.keyword is not None else None
        if key is None and tensor is None and not rest:
            tensor = arg
        elif key == "x" and tensor is None:
            tensor = arg.with_changes(keyword=None, equal=cst.MaybeSentinel.DEFAULT)
        elif key == "name":
            rest.append(arg)
        else:
            return None
    if tensor is None:
        return None
    cast = reference_like(ref, ctx, "cast")
    dtype_ref = reference_like(ref, ctx, dtype.group(1))
    space = cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))
    args = [tensor.with_changes(comma=space), cst.Arg(dtype_ref.expression())]
    for arg in rest:
        args[-1] = args[-1].with_changes(comma=space)
        args.append(arg.with_changes(comma=cst.MaybeSentinel.DEFAULT))
    edits = [Replace(call, call.with_changes(func=cast.expression(), args=args))]
    for reference in (cast, dtype_ref):
        edits.extend(e for e in reference.import_edits() if e not in edits)
    code = f"{cast.code}(x, {dtype_ref.code})"
    return Fix("safe", f"Replace with `{code}` (TF2-native)", tuple(edits))


# Changed signatures: same symbol in TF1 and TF2, called with a keyword only TF1 accepts ---------
# Keywords TF2 dropped that only tuned performance or validation: dropping them keeps results.
_HARMLESS_REMOVED = frozenset({"colocate_gradients_with_ops", "use_cudnn_on_gpu", "validate_indices"})
# Transformers of TensorFlow's own upgrade script whose keyword renames stand alone.
_PLAIN_TRANSFORMERS = frozenset({None, "rename_if_arg_found", "dropout", "softmax_cross_entropy_with_logits"})


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
        passed = set(keywords) | set(v1_params[: len(positional)])
        named = [w for w in when if w in passed]
        return (f"passes {' and '.join(f'`{w}`' for w in named)}",) if named else ()
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


def _labels_arg(call: cst.Call) -> Optional[cst.Arg]:
    for i, arg in enumerate(call.args):
        key = arg.keyword.value if arg.keyword is not None else None
        if key == "labels" or (key is None and i == 0 and not arg.star):
            return arg
    return None


def _labels_unstopped(call: cst.Call) -> bool:
    """`labels` is passed and not already wrapped in `stop_gradient(...)`."""
    arg = _labels_arg(call)
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


def _describe_evidence(ref: Ref) -> str:
    entry = ref.entry
    renames = entry.get("args", {})
    v1_params, v2_params = entry.get("v1_params") or [], entry.get("v2_params") or []
    most = entry.get("v2_max_positional", len(v2_params))
    parts = []
    overflow = [int(k[1:]) for k in ref.evidence if k.startswith("#") and most is not None and int(k[1:]) >= most]
    if overflow:
        taken = ", ".join(f"`{v1_params[i]}`" for i in overflow)
        parts.append(f"TF2's takes {most} argument{'s' if most != 1 else ''} by position, this call "
                     f"passes {len(overflow) + most} ({taken} by position)")
    for key in ref.evidence:
        if key.startswith("passes "):
            parts.append(f"it {key}")
        elif key.startswith("#"):
            i = int(key[1:])
            if i in overflow:
                continue
            name = v1_params[i]
            if i < len(v2_params) and v2_params[i] not in ("args", "kwargs"):
                parts.append(f"argument {i + 1} is `{name}` in TF1 but `{v2_params[i]}` in TF2")
            else:
                parts.append(f"argument {i + 1} is `{name}`, which TF2's does not take")
        elif key == "labels-gradient":
            parts.append("TF1's does not backpropagate into `labels`, TF2's does")
        elif key == "name=None":
            parts.append("a `None` name (TF1: back to the root scope), where TF2's takes only a string")
        elif key == "keep_prob":
            parts.append("`keep_prob=p` became `rate=1 - p`")
        elif key in renames and key in entry.get("arg_values", {}):
            form = entry["arg_values"][key].format("n")
            parts.append(f"`{key}=n` became `{renames[key]}={form}`")
        elif key in renames:
            parts.append(f"`{key}=` became `{renames[key]}=`")
        else:
            parts.append(f"TF2's has no `{key}=`")
    return "; ".join(parts)


def _fails_in_tf2(ref: Ref) -> bool:
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


def changed_message(ref: Ref, fix: Optional[Fix] = None) -> str:
    entry = ref.entry
    code = dotted(ref.node) or spelled(ref.path)
    name = f"`{code}`"
    if ref.spelled_v1 and "compat" not in code:
        name += f" (here `tf.compat.v1.{ref.path}`)"
    what = _describe_evidence(ref)
    if ref.section == "diverged" and not ref.spelled_v1:
        head = (f"{name} was TF1's `{ref.path}` when this code was written; under TensorFlow 2 it is "
                f"TF2's, a different one: {entry['note']}.")
        if what:
            head += f" This use: {what}."
    elif ref.section == "diverged":
        head = f"{name} is TF1's `{ref.path}`, not TF2's `tf.{ref.path}`: {entry['note']}."
        if what:
            head += f" This use: {what}."
    elif not _fails_in_tf2(ref) and (not ref.spelled_v1 or ref.evidence == ("labels-gradient",)):
        # Valid TF2 call whose meaning changed (TF1's gradient of softmax cross-entropy).
        gradient = " (the same loss; training differs only when `labels` carries gradients)" \
            if "labels-gradient" in ref.evidence else ""
        if ref.spelled_v1:
            head = f"{name} is TF1's, which TF2's of that name does not match: {what}{gradient}."
        else:
            head = f"{name} runs in TensorFlow 2, but not as TF1's did: {what}{gradient}."
    elif ref.spelled_v1:
        head = (f"{name} is called with its TF1 signature, which works only through `tf.compat.v1`: "
                f"{what}.")
    else:
        fails = ("is deprecated" if entry.get("same_object") else
                 "raises ValueError" if ref.evidence == ("name=None",) else "raises TypeError")
        head = f"{name} is called with its TF1 signature, which {fails} in TensorFlow 2: {what}."
    if fix is not None:
        return f"{head} The fix: {fix.description[0].lower()}{fix.description[1:]}."
    note = entry.get("note") if ref.section == "changed" else None
    if ref.evidence == ("name=None",):
        note = "TF2 has no spelling for it; graph code can keep `tf.compat.v1.name_scope(None)`"
    if note and entry.get("transformer") != "dropout":
        return f"{head} {note[0].upper()}{note[1:]}."
    if ref.section == "diverged" and ref.spelled_v1:
        return f"{head} Review it before the code drops `tf.compat.v1`; no automatic fix."
    if ref.section == "diverged":
        return f"{head} Check it, or keep TF1's with `tf.compat.v1.{ref.path}`; no automatic fix."
    return f"{head} Pass the TF2 arguments instead; no automatic fix."


def _one_minus(value: cst.BaseExpression) -> cst.BaseExpression:
    """`1 - value`, computed when the value is a number literal (`0.8` -> `0.2`)."""
    if isinstance(value, (cst.Integer, cst.Float)) and not value.lpar:
        number = round(1 - float(value.evaluated_value), 10)
        if 0 <= number <= 1:
            return cst.Float(repr(number)) if number != int(number) else cst.Float(f"{int(number)}.0")
    simple = (cst.Name, cst.Attribute, cst.Call, cst.Subscript, cst.Integer, cst.Float)
    if not isinstance(value, simple) or value.lpar:
        value = value.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()]) if not value.lpar else value
    return cst.BinaryOperation(
        left=cst.Integer("1"),
        operator=cst.Subtract(whitespace_before=cst.SimpleWhitespace(" "), whitespace_after=cst.SimpleWhitespace(" ")),
        right=value,
    )


def changed_fix(ref: Ref, ctx=None) -> Optional[Fix]:
    """Rename the TF1 keywords to TF2's (`keep_prob=p` -> `rate=1 - p`); drop removed keywords
    (safe only for the performance hints TF2 ignores). The callee is unchanged. Through
    `tf.compat.v1`, a new keyword is used only where TF1's signature takes it too (so the call
    keeps working before and after the alias goes), and a positional `keep_prob` becomes `rate`.
    `labels` of TF1's softmax cross-entropy is wrapped in `stop_gradient` (TF1's gradients under
    both). Other positional evidence has no fix."""
    entry, call = ref.entry, ref.call
    transformer = entry.get("transformer")
    if call is None or ref.section != "changed" or transformer not in _PLAIN_TRANSFORMERS:
        return None
    v1_params = set(entry.get("v1_params") or [])
    positions = [int(k[1:]) for k in ref.evidence if k.startswith("#")]
    if positions and not (transformer == "dropout" and positions == [1] and
                          sum(1 for a in call.args if a.keyword is None) == 2 and
                          not any(a.star for a in call.args)):
        return None
    renames = entry.get("args", {})
    removed = set(entry.get("args_removed", []))
    present = {a.keyword.value for a in call.args if a.keyword is not None}
    v1_order, v2_order = entry.get("v1_params") or [], entry.get("v2_params") or []
    for i, arg in enumerate(call.args):
        if arg.keyword is not None or arg.star or i in positions:
            continue
        if i < len(v1_order) and i < len(v2_order) and renames.get(v1_order[i], v1_order[i]) != v2_order[i] \
                and not v1_order[i].startswith(v2_order[i]):
            return None  # a positional argument TF2 reads as another parameter (`paddings`)
    stop = None
    if "labels-gradient" in ref.evidence:
        if ctx is None:
            return None
        stop = reference_like(ref, ctx, "stop_gradient")
    labels = _labels_arg(call) if stop is not None else None
    unsafe = False
    unproven = []
    args = []
    for i, arg in enumerate(call.args):
        key = arg.keyword.value if arg.keyword is not None else None
        if arg is labels:
            arg = arg.with_changes(value=cst.Call(func=stop.expression(), args=[cst.Arg(arg.value)]))
        if i in positions or (key == "keep_prob" and transformer == "dropout"):
            if "rate" in present or (ref.spelled_v1 and "rate" not in v1_params):
                return None
            arg = arg.with_changes(keyword=cst.Name("rate"), equal=_EQUAL, value=_one_minus(arg.value))
        elif key in renames:
            if renames[key] in present or (ref.spelled_v1 and renames[key] not in v1_params):
                return None  # both spellings passed, or TF1's would not take the new one
            if key in entry.get("args_differ", {}):
                return None  # the generator ran the rename: it does not give TF1's outputs
            form = entry.get("arg_values", {}).get(key)
            if form is not None:
                # TF2's keyword takes the value in another form (`block_size=2` ->
                # `block_shape=[2, 2]`, proven by the generator); TF1's alias of that keyword
                # takes TF1's form, so not through compat.v1; the value is written twice, so
                # only a plain name or literal.
                if ref.spelled_v1 or not isinstance(arg.value, (cst.Name, cst.Integer, cst.Attribute)):
                    return None
                arg = arg.with_changes(value=cst.parse_expression(form.format(_code(arg.value))))
            elif key not in entry.get("renames_proven", ()):
                unproven.append(key)  # no sample the generator could run: not proven
            arg = arg.with_changes(keyword=cst.Name(renames[key]))
        elif key in removed:
            unsafe = unsafe or key not in _HARMLESS_REMOVED
            continue
        elif key is not None and key not in (entry.get("v2_params") or [key]):
            return None  # a TF1-only keyword with no TF2 counterpart (`default_name=`)
        args.append(arg)
    if args and call.args[-1].comma is cst.MaybeSentinel.DEFAULT:
        args[-1] = args[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)
    if transformer == "rename_if_arg_found" and not entry.get("args"):
        return None
    new = call.with_changes(args=args)
    edits = (Replace(call, new),) + (stop.import_edits() if stop is not None else ())
    rate = next((a for a in args if a.keyword is not None and a.keyword.value == "rate"
                 and transformer == "dropout" and "rate" not in present), None)
    what = ("Wrap `labels` in `stop_gradient`" if stop is not None else
            f"Pass `rate={_code(rate.value)}`, the drop rate TF2's `dropout` takes" if rate is not None else
            "Use the TF2 keywords")
    if stop is not None and any(k in renames or k in removed for k in ref.evidence):
        what += " and use the TF2 keywords"
    if unproven:  # the rename stands on TensorFlow's tables alone
        names = ", ".join(f"`{k}=`" for k in unproven)
        return Fix("unsafe", f"{what} (TF2-native; the rename of {names} was not run on a sample)", edits)
    return Fix("unsafe" if unsafe else "safe", f"{what} (TF2-native)", edits)


# Messages of the TF1-idiom rules (TFM201-TFM211) ----------------------------------------------
def v1_spelling(ref: Ref) -> str:
    return f"`tf.compat.v1.{ref.path}`" if ref.spelled_v1 else f"`{spelled(ref.path)}`"


def fallback_message(ref: Ref, what: str, todo: str, fix: Optional[Fix] = None, caveat: str = "") -> str:
    """`<name> <what>, and TensorFlow 2 removed it. <todo>; <what the fix does>.` The last clause
    says whether the fix is TF2-native or the compat.v1 fallback (or that there is none)."""
    name = v1_spelling(ref)
    if ref.spelled_v1:
        head = f"{name} {what}: TF1 API that works only through `tf.compat.v1`."
    else:
        head = f"{name} {what}, and TensorFlow 2 removed it."
    if fix is None and ref.routed:
        tail = "in this TF1 graph module TFM200's fix runs it through `tf.compat.v1` with the rest of the graph code"
    elif fix is None:
        tail = "there is no automatic fix"
    elif fix.description.startswith("Remove"):
        tail = "the fix removes the statement (TF2-native)"
    elif "TF2-native" in fix.description:
        tail = f"the fix: {fix.description[0].lower()}{fix.description[1:]}"
    else:
        tail = f"the fix keeps the TF1 behaviour through `tf.compat.v1.{ref.path}` (a compat.v1 fallback, not TF2-native{caveat})"
    return f"{head} {todo}; {tail}."
