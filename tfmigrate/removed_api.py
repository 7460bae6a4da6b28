"""Finding TF1-only API references, shared by every TFM2xx rule.

One walker per file (the first removed-API rule the engine creates) resolves each maximal
dotted name against the API table (tfmigrate/data/tf1_api.json) and hands the reference to the
rule that owns it: the enabled rule whose CLAIMS prefix is the longest match, TFM299 for the rest.
Rules own messages and fixes; this module owns what counts as a reference, so a symbol is
reported once, by one rule, whatever the spelling (`tf.Session`, `tf.compat.v1.Session`,
`from tensorflow.compat.v1 import Session`).
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import ClassVar, Dict, Optional, Tuple

import libcst as cst

from tfmigrate import api_table
from tfmigrate.findings import AddImport, Fix, Replace
from tfmigrate.names import dotted
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


def owner(path: str) -> str:
    for prefix, code in _claims():
        if path == prefix or path.startswith(prefix + "."):
            return code
    return "TFM299"


class RemovedApiRule(Rule):
    """Base of the TFM2xx rules. Subclasses set CLAIMS and may override message() and fix()."""

    CLAIMS: ClassVar[Tuple[str, ...]] = ()

    def __init__(self, ctx):
        super().__init__(ctx)
        family: Dict[str, RemovedApiRule] = ctx.shared.setdefault("removed_api", {})
        self.is_walker = not family
        family[self.code] = self

    def handlers(self):
        return super().handlers() if self.is_walker else []

    # The walker ---------------------------------------------------------------------------
    def visit_Attribute(self, node: cst.Attribute) -> None:
        parent = self.ctx.stack[-1] if self.ctx.stack else None
        if isinstance(parent, cst.Attribute) and parent.value is node:
            return  # not the whole dotted name
        self._resolve(node, parent)

    def visit_Name(self, node: cst.Name) -> None:
        if node.value not in self.ctx.names.aliases:
            return
        parent = self.ctx.stack[-1] if self.ctx.stack else None
        if isinstance(parent, (cst.Attribute, cst.ImportAlias, cst.AsName, cst.Param)):
            return
        if isinstance(parent, (cst.Arg, cst.Assign, cst.FunctionDef, cst.ClassDef)) and getattr(parent, "keyword", None) is node:
            return
        self._resolve(node, parent)

    def visit_ImportFrom(self, node: cst.ImportFrom) -> None:
        """`from tensorflow.contrib import slim`: the import itself fails under TF2."""
        if node.relative or node.module is None:
            return
        full = dotted(node.module)
        if not full:
            return
        from tfmigrate.names import normalize

        path = normalize(full)
        if not path:
            return
        found = lookup(path)
        if found is None or found[1] != "gone":
            return
        self._dispatch(Ref(node.module, found[0], "gone", found[2], False, None))

    def visit_Import(self, node: cst.Import) -> None:
        from tfmigrate.names import normalize

        for alias in node.names:
            path = normalize(dotted(alias.name) or "")
            if path:
                found = lookup(path)
                if found is not None and found[1] == "gone":
                    self._dispatch(Ref(alias.name, found[0], "gone", found[2], False, None))

    def _resolve(self, node: cst.BaseExpression, parent) -> None:
        names = self.ctx.names
        full = names.full_name(node)
        if full is None:
            return
        from tfmigrate.names import normalize

        path = normalize(full)
        if not path:
            return
        found = lookup(path)
        if found is None:
            return
        prefix, section, entry = found
        target = node
        for _ in range(path.count(".") - prefix.count(".")):
            if not isinstance(target, cst.Attribute):
                return
            target = target.value
        call = parent if isinstance(parent, cst.Call) and parent.func is node and target is node else None
        ref = Ref(target, prefix, section, entry, full.startswith("tensorflow.compat.v1"), call)
        self._dispatch(ref)

    def _dispatch(self, ref: Ref) -> None:
        rule = self.ctx.shared["removed_api"].get(owner(ref.path))
        if rule is not None:
            message, fix = rule.describe(ref)
            rule.report(ref.node, message, fix)

    # What each rule says ------------------------------------------------------------------
    def describe(self, ref: Ref) -> Tuple[str, Optional[Fix]]:
        return generic_message(ref, self.ctx), generic_fix(ref, self.ctx)


def spelled(path: str) -> str:
    return f"tf.{path}"


def generic_message(ref: Ref, ctx) -> str:
    entry = ref.entry
    name = f"`{spelled(ref.path)}`"
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
        return f"{name} is TF1-only API, removed from TensorFlow 2. Instead, {how}."
    if replacement:  # compat.v1 fallback
        if ref.spelled_v1:
            return f"{name} is TF1-only API: it works only through `tf.compat.v1` and has no TF2-native equivalent. Keep it until this code moves to TF2 idioms."
        return f"{name} was removed from TensorFlow 2. It still works as `tf.compat.v1.{ref.path}` (a compat.v1 fallback, not TF2-native)."
    error = entry.get("error")
    return f"{name} does not work in TensorFlow 2.21 with Keras 3, not even as `tf.compat.v1.{ref.path}`{f' ({error})' if error else ''}. Rewrite it with TF2 APIs."


def generic_fix(ref: Ref, ctx) -> Optional[Fix]:
    """A rename to the measured replacement: TF2-native when it is a drop-in, else the
    compat.v1 fallback (only where the code does not already go through compat.v1)."""
    if ref.section != "removed":
        return None
    replacement = api_table.replacement(ref.path)
    if replacement is None:
        return None
    native = bool(replacement.get("native"))
    if not native and ref.spelled_v1:
        return None  # already resolves through compat.v1: nothing to rename
    if not replacement.get("drop_in", True) or replacement.get("transformer") or ref.entry.get("transformer"):
        return None
    edits = []
    args_fix = None
    if ref.call is not None and native and (replacement.get("args") or replacement.get("args_removed") or replacement.get("defaults_changed")):
        args_fix = rename_arguments(ref.call, replacement)
        if args_fix is None:
            return None
    elif ref.call is None and native and replacement.get("positional_ok") is not None:
        pass  # a reference that is not called (e.g. passed as a class): the rename is enough
    reference = ctx.names.reference(replacement["target"])
    new = reference.expression()
    if args_fix is not None:
        new_call, unsafe = args_fix
        edits.append(Replace(ref.call, new_call.with_changes(func=new)))
    else:
        unsafe = False
        edits.append(Replace(ref.node, new))
    if reference.import_statement:
        edits.append(AddImport(reference.import_statement))
    kind = "TF2-native" if native else "compat.v1 fallback"
    applicability = "unsafe" if unsafe or (native and replacement.get("note")) else "safe"
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
