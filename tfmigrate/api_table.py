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
  contrib          tf.contrib paths with a TensorFlow replacement that still resolves
  gone             top-level modules absent from both tf and tf.compat.v1 (contrib, estimator)
  dropped_targets  TensorFlow's own renames whose target no longer resolves (never suggested)
"""
from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path
from typing import Any, Dict, Optional

DATA = Path(__file__).resolve().parent / "data" / "tf1_api.json"

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
    """
    entry = removed(path)
    if entry is None:
        entry = contrib(path)
        return None if entry is None else entry.get("replacement")
    if "replacement" in entry:
        return entry["replacement"]
    if entry["v1_available"]:
        return {"target": f"compat.v1.{path}", "native": False, "source": "compat.v1"}
    return None


def changed_signature(path: str) -> Optional[Entry]:
    """Argument changes of a path valid in both TF1 and TF2 (e.g. nn.dropout keep_prob -> rate).

    Keys: args (old keyword -> new), args_removed, v1_positional (TF1 positional order, None =
    unchanged position), transformer/note (changes needing code, not a rename), v1_params,
    v2_params. Apply only where the code is TF1 by evidence: `tf.nn.dropout(x, 0.5)` is valid
    TF2 with a different meaning.
    """
    return table()["changed"].get(path)


def contrib(path: str) -> Optional[Entry]:
    """A tf.contrib path with a replacement that still resolves ("contrib.framework.argsort")."""
    return table()["contrib"].get(path)


def gone(path: str) -> Optional[Entry]:
    """The entry for a path whose top-level module exists in neither tf nor tf.compat.v1."""
    return table()["gone"].get(path.split(".", 1)[0])


def dropped_target(path: str) -> Optional[Entry]:
    """TensorFlow's own rename for this path when its target no longer resolves (for messages)."""
    return table()["dropped_targets"].get(path)
