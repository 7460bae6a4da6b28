"""The removed-API rules (TFM2xx): a rule is its claims and what it says.

A `RemovedApiRule` declares CLAIMS, the API path prefixes it owns, and may override
`describe(ref)`: the message and the optional fix for one reference it owns. Resolving
references is tfmigrate.facts.references' (once per file, for every rule); fixes are built in
tfmigrate.fixers.api_rename; this module holds the messages the rules share.
"""
from __future__ import annotations

from typing import Optional, Tuple

from tfmigrate.facts import api_table
from tfmigrate.findings import Fix
from tfmigrate.fixers.api_rename import generic_fix, keras_class_obstacle
from tfmigrate.facts.names import dotted
from tfmigrate.facts.program import ProgramMode
from tfmigrate.facts.references import TF1Ref, fails_in_tf2
from tfmigrate.rules.base import ReferenceRule


class RemovedApiRule(ReferenceRule):
    """Base of the TFM2xx rules: subclasses set CLAIMS and may override describe(). TFM299, which
    claims nothing, is handed every reference no other rule claims."""

    def describe(self, ref: TF1Ref) -> Tuple[str, Optional[Fix]]:
        if ref.section == "missing":
            return missing_message(ref), None
        fix = generic_fix(ref, self.ctx)
        return generic_message(ref, self.ctx, fix), fix


# Keras 2 globals that Keras 3 dropped, and what replaces them (keras.io/guides/migrating_to_keras_3).
_NO_PHASE = "Keras 3 has no global learning phase: pass `training=True`/`False` when calling the model or layer."
_NO_SESSION = "Keras 3 has no TF1 session; graph code keeps its own `tf.compat.v1.Session`."
_KERAS_GONE = {"learning_phase": _NO_PHASE, "set_learning_phase": _NO_PHASE,
               "get_session": _NO_SESSION, "set_session": _NO_SESSION}


def missing_message(ref: TF1Ref) -> str:
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



def spelled(path: str) -> str:
    return f"tf.{path}"


# TF1's random initializers (removed from TF2, kept in compat.v1) and the Keras 3 class of the same
# law, which draws other numbers under a seed (measured for Glorot uniform: README, `fix --keras3`).
RANDOM_INITIALIZERS = {"glorot_uniform_initializer": "GlorotUniform", "glorot_normal_initializer": "GlorotNormal",
                       "truncated_normal_initializer": "TruncatedNormal", "orthogonal_initializer": "Orthogonal",
                       "variance_scaling_initializer": "VarianceScaling"}


def generic_message(ref: TF1Ref, ctx, fix: Optional[Fix] = None) -> str:
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
        if ref.spelled_v1 and ref.path in RANDOM_INITIALIZERS:
            return (f"{name} is TF1-only API that works only through `tf.compat.v1`. It draws with TensorFlow's "
                    f"random ops, as TF1 did (`fix --native` keeps it for that, where TF1's layers drew it by "
                    f"default); Keras 3's `keras.initializers.{RANDOM_INITIALIZERS[ref.path]}` samples the same "
                    "law from Keras's own random stream, so under a seed the first weights, and every number "
                    "after them, change. Switch once the numbers need not match TF1's.")
        if ref.spelled_v1:
            return f"{name} is TF1-only API: it works only through `tf.compat.v1` and has no TF2-native equivalent. Keep it until this code moves to TF2 idioms."
        if ref.routed:
            return (f"{name} was removed from TensorFlow 2. In this TF1 graph module TFM200's fix runs it through "
                    "`tf.compat.v1` with the rest of the graph code.")
        return f"{name} was removed from TensorFlow 2. It still works as `tf.compat.v1.{ref.path}` (a compat.v1 fallback, not TF2-native)."
    error = entry.get("error")
    if ref.path.startswith("keras.") and ref.spelled_v1 and ctx.fact(ProgramMode).legacy_keras_set:
        # (what `fix --native` writes for TF1 model code: track_tf1_style_variables under tf-keras)
        return (f"{name} is legacy Keras (tf-keras) API: it runs here because this module sets "
                f"`TF_USE_LEGACY_KERAS=1`, and Keras 3 has no such API{f' ({error})' if error else ''}. "
                "Keep it until this code moves to Keras 3.")
    return f"{name} does not work in TensorFlow 2.21 with Keras 3, not even as `tf.compat.v1.{ref.path}`{f' ({error})' if error else ''}. Rewrite it with TF2 APIs."


# What every Keras 3 layer takes besides its own parameters (keras.layers.Layer.__init__).

def _describe_evidence(ref: TF1Ref) -> str:
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
        if key.startswith(("passes ", "leaves ")):
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


def changed_message(ref: TF1Ref, fix: Optional[Fix] = None) -> str:
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
    elif not fails_in_tf2(ref) and (not ref.spelled_v1 or ref.evidence == ("labels-gradient",)):
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
    if ref.routed and ref.section == "changed":
        return (f"{head} In this TF1 graph module TFM200's fix runs it through `tf.compat.v1`, whose "
                "signature takes this call.")
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


# Messages of the TF1-idiom rules (TFM201-TFM211) ----------------------------------------------
def v1_spelling(ref: TF1Ref) -> str:
    return f"`tf.compat.v1.{ref.path}`" if ref.spelled_v1 else f"`{spelled(ref.path)}`"


def fallback_message(ref: TF1Ref, what: str, todo: str, fix: Optional[Fix] = None, caveat: str = "") -> str:
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
