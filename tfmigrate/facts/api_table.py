"""The TF1 API table: what TensorFlow 2.21 / Keras 3 did to each TF1 symbol, without TensorFlow.

Importing TensorFlow costs about 7 s (FACTS.md), so `scripts/gen_api_table.py` measured the
installed TensorFlow once and shipped the result as `tfmigrate/data/tf1_api.json`; this module
only reads that JSON (stdlib, loaded once, on first use). Paths are the ones
`ImportTable.api()` returns: relative to `tensorflow`, `compat.v1.` stripped ("layers.dense",
"train.AdamOptimizer", "Session").

Sections of the file:
  removed          in tf.compat.v1 (or TF1's API) but not in tf: kind, v1_available (does
                   tf.compat.v1.<path> work under Keras 3, measured), replacement if one resolves
  changed          in both, but arguments changed (TensorFlow's own tables): only for code that is
                   TF1 by evidence, since the same spelling is valid TF2
  diverged         in both, as different objects that TensorFlow's tables send to compat.v1
  contrib          tf.contrib paths with a TensorFlow replacement that still resolves
  gone             top-level modules absent from both tf and tf.compat.v1 (contrib, estimator)
  compat_v2_only   names tf.compat.v2 has and tf lacks (enable_v2_behavior)
  dropped_targets  TensorFlow's own renames whose target no longer resolves (never suggested)
"""
from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path
from typing import Any, Dict, Optional, Tuple

DATA = Path(__file__).resolve().parent.parent / "data" / "tf1_api.json"

Entry = Dict[str, Any]


@lru_cache(maxsize=None)
def table() -> Dict[str, Any]:
    """The whole table, parsed once per process (about 170 kB of JSON, a few milliseconds)."""
    with open(DATA, encoding="ascii") as fh:
        return json.load(fh)


def header() -> Dict[str, Any]:
    """TensorFlow and Keras versions the table was measured with, and its counts."""
    return table()["header"]


def removed(path: str) -> Optional[Entry]:
    """The entry for a path that `tf.<path>` no longer resolves, else None.

    Keys: kind (module/class/function/other), v1_available (measured: False for tf.layers,
    tf.nn.rnn_cell, ... under Keras 3), optional error, replacement, note, transformer.
    """
    return table()["removed"].get(path)


def v1_available(path: str) -> Optional[bool]:
    """Whether `tf.compat.v1.<path>` works under Keras 3; None when the path was not removed."""
    entry = removed(path)
    return None if entry is None else bool(entry["v1_available"])


def replacement(path: str) -> Optional[Entry]:
    """What to write instead of a removed path, best first, or None when nothing works.

    A measured replacement (target relative to `tf`, native, source, args renames, args_removed,
    defaults_changed, positional_ok, drop_in, note) when one exists; otherwise
    `compat.v1.<path>` when that still works under Keras 3 (native False, source "compat.v1").
    A `compat.v1` spelling is never offered for what Keras 3 made unavailable (tf.layers...).
    A native rewrite that the generator ran and found to return other values (`differs`, e.g.
    `resize_images` -> `tf.image.resize`: half-pixel centres) is never offered: the compat.v1
    fallback is, with `differs` (the reason) and `not_native` (the target that was rejected).
    """
    entry = removed(path)
    if entry is None:
        entry = contrib(path)
        return None if entry is None else entry.get("replacement")
    rejected = None
    if "replacement" in entry:
        if not entry["replacement"].get("differs"):
            return entry["replacement"]
        rejected = entry["replacement"]
    if entry["v1_available"]:
        fallback = {"target": f"compat.v1.{path}", "native": False, "source": "compat.v1"}
        if rejected is not None:
            fallback.update(not_native=rejected["target"], differs=rejected["differs"])
        return fallback
    return None


def changed_signature(path: str) -> Optional[Entry]:
    """Argument changes of a path valid in both TF1 and TF2 (e.g. nn.dropout keep_prob -> rate).

    Keys: args (old keyword -> new), args_removed, v1_positional (TF1 positional order, None =
    unchanged position), transformer/note (changes needing code, not a rename), v1_params,
    v2_params. Apply only where the code is TF1 by evidence: `tf.nn.dropout(x, 0.5)` is valid
    TF2 with a different meaning.
    """
    return table()["changed"].get(path)


def diverged(path: str) -> Optional[Entry]:
    """A path whose `tf.compat.v1` object is not TF2's `tf` object of the same name (`where`,
    the initializer classes, `assert_*`): keys when ("args", "always" or the parameters whose
    passing makes the difference), note (what differs), v1_params, v2_params, v2_max_positional.
    Only a use spelled through compat.v1 is TF1 by evidence."""
    return table()["diverged"].get(path)


def contrib(path: str) -> Optional[Entry]:
    """A tf.contrib path with a replacement that still resolves ("contrib.framework.argsort")."""
    return table()["contrib"].get(path)


def gone(path: str) -> Optional[Entry]:
    """The entry for a path whose top-level module exists in neither tf nor tf.compat.v1."""
    return table()["gone"].get(path.split(".", 1)[0])


def compat_v2_only(path: str) -> Optional[Entry]:
    """A name `tf.compat.v2` has and `tf` lacks (`enable_v2_behavior`): through compat.v2 it runs."""
    return table().get("compat_v2_only", {}).get(path)


def dropped_target(path: str) -> Optional[Entry]:
    """TensorFlow's own rename for this path when its target no longer resolves (for messages)."""
    return table()["dropped_targets"].get(path)


# What exists at all in TensorFlow 2.21 (tfmigrate/data/tf_namespaces.json, about 0.6 MB):
# read only when a reference is not in the table above, so most files never load it.
NAMESPACES = DATA.parent / "tf_namespaces.json"


@lru_cache(maxsize=None)
def namespaces() -> Dict[str, Any]:
    """Sections tf / v1 (public API modules -> attribute names, space-separated) and python
    (private modules under tensorflow.python -> names, or None where the names are open-ended)."""
    with open(NAMESPACES, encoding="ascii") as fh:
        return json.load(fh)


@lru_cache(maxsize=None)
def _names(section: str, module: str) -> Optional[frozenset]:
    text = namespaces()[section].get(module)
    return None if text is None else frozenset(text.split())


def unresolved(path: str, v1: bool = False) -> Optional[str]:
    """The shortest prefix of `path` that does not exist in TensorFlow 2.21, or None.

    `path` is relative to `tensorflow` with compat prefixes removed ("summary.historgram",
    "python.ops.control_flow_ops.cond"); `v1` when it was spelled through `tf.compat.v1`.
    Judged only inside the modules the generator walked: below a non-module object
    (`float32.as_numpy_dtype`), a lazy loader (`compat.v1.layers`), a module with a
    module-level `__getattr__`, or a private name (`_x`), nothing is judged (None).
    """
    if not path:
        return None
    parts = path.split(".")
    if parts[0] == "python":
        section, module, start = "python", "python", 1
    else:  # `tf.compat.v1.keras` is the same Keras 3 tree as `tf.keras`, listed under tf
        section, module, start = ("v1" if v1 and parts[0] != "keras" else "tf"), "", 0
    table = namespaces()[section]
    for i in range(start, len(parts)):
        if module not in table:
            return None  # not a walked module: an object, a lazy loader, an unimportable module
        names = _names(section, module)
        part = parts[i]
        if names is None or part.startswith("_"):
            return None
        if part not in names:
            return ".".join(parts[: i + 1])
        module = f"{module}.{part}" if module else part
    return None


@lru_cache(maxsize=None)
def _by_name() -> Dict[str, Dict[str, list]]:
    index: Dict[str, Dict[str, list]] = {"tf": {}, "v1": {}}
    for section in ("tf", "v1"):
        for module, text in namespaces()[section].items():
            if module == "keras" or module.startswith("keras."):
                continue  # Keras's names are not TensorFlow's replacements (keras.ops.moments)
            for name in (text or "").split():
                index[section].setdefault(name, []).append(f"{module}.{name}" if module else name)
    return index


def private_hint(name: str) -> Optional[str]:
    """The public replacement of a private TF1 name that TF2 spells differently ("VariableV1")."""
    return namespaces()["hints"].get(name)


def public_named(name: str) -> Optional[str]:
    """The public path (relative to `tf`) of the one TensorFlow 2.21 API of this exact name:
    `tf.<name>`, else the only `tf.*.<name>`, else the same in `tf.compat.v1` ("compat.v1.X");
    None when there is none or more than one."""
    index = _by_name()
    for section, prefix in (("tf", ""), ("v1", "compat.v1.")):
        paths = index[section].get(name, [])
        if name in paths:
            return prefix + name
        if len(paths) == 1:
            return prefix + paths[0]
        if len(paths) > 1:
            return None
    return None


def close_name(path: str, v1: bool = False) -> Optional[str]:
    """For a missing public path, the one name of its module that is spelled almost the same
    ("summary.historgram" -> "summary.histogram"), else None."""
    import difflib

    module, _, leaf = path.rpartition(".")
    names = _names("v1" if v1 else "tf", module)
    if not names:
        return None
    close = difflib.get_close_matches(leaf, sorted(names), n=2, cutoff=0.9)
    if len(close) != 1:
        return None
    return f"{module}.{close[0]}" if module else close[0]


SIGNATURES = Path(__file__).resolve().parent.parent / "data" / "tf_signatures.json"


@lru_cache(maxsize=None)
def _signatures() -> Dict[str, Any]:
    """scripts/gen_signatures.py's table, read on the first call that needs it."""
    with open(SIGNATURES, encoding="ascii") as fh:
        return json.load(fh)


def call_signature(path: str, v1: bool = False) -> Optional[Tuple[Tuple[str, ...], Optional[int], bool]]:
    """(parameter names, how many may be passed by position or None for any, takes **kwargs) of
    `tf.<path>` (`tf.compat.v1.<path>` with v1) under TF 2.21, or None when not measured."""
    section = "v1" if v1 and not path.startswith("keras.") else "tf"
    packed = _signatures()[section].get(path)
    if packed is None:
        return None
    names, most, kwargs = packed.split("|")
    return tuple(names.split()), None if most == "*" else int(most), kwargs == "k"
