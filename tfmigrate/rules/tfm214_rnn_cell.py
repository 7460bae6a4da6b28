"""TFM214: TF1 RNN cells and drivers (`tf.nn.rnn_cell.*`, `tf.contrib.rnn.*`, `tf.nn.dynamic_rnn`,
`static_rnn`, `bidirectional_dynamic_rnn`): unavailable under Keras 3 even through `tf.compat.v1`
(measured: AttributeError for the cells, TypeError when `dynamic_rnn` is called).

The cells are renamed to Keras cells as an unsafe fix (a Keras cell returns `(output, [h, c])`,
initializes biases differently and is run by `tf.keras.layers.RNN`, not by `dynamic_rnn`); only
arguments with a Keras counterpart of the same meaning are accepted, otherwise no fix. The
drivers get guidance only: `keras.layers.RNN(cell, return_sequences=True, return_state=True)`
returns `[outputs, *states]`, has no `time_major` or `sequence_length` (use a mask).
"""
from __future__ import annotations

import re
from typing import Optional, Tuple

import libcst as cst

from tfmigrate.findings import Fix, Replace
from tfmigrate.fixers.arguments import joined, keyword
from tfmigrate.facts.references import GoneRef, TF1Ref
from tfmigrate.fixers.imports import NameCounts, remove_import_fix
from tfmigrate.rules._gone_api import GoneApiRule, spelled_gone
from tfmigrate.facts.graph_words import CONTRIB_RNN_CORE
from tfmigrate.facts.program import ProgramMode
from tfmigrate.facts.source_search import SourceSearch

_TRUE = "True"
# cell -> (Keras target, accepted keywords -> Keras keyword (None: drop), keywords to add)
CELLS = {
    "LSTMCell": ("keras.layers.LSTMCell", {"num_units": "units", "activation": "activation", "name": "name", "dtype": "dtype", "reuse": None}, ()),
    "BasicLSTMCell": ("keras.layers.LSTMCell", {"num_units": "units", "activation": "activation", "name": "name", "dtype": "dtype", "reuse": None}, ()),
    "GRUCell": ("keras.layers.GRUCell", {"num_units": "units", "activation": "activation", "name": "name", "dtype": "dtype", "reuse": None}, (("reset_after", "False"),)),
    "BasicRNNCell": ("keras.layers.SimpleRNNCell", {"num_units": "units", "activation": "activation", "name": "name", "dtype": "dtype", "reuse": None}, ()),
    "MultiRNNCell": ("keras.layers.StackedRNNCells", {"cells": "cells"}, ()),
}
# keywords dropped only with their TF1 default value (the Keras cell behaves that way already)
DEFAULT_ONLY = {"state_is_tuple": _TRUE, "forget_bias": "1.0"}
HINTS = {
    "dynamic_rnn": "use `tf.keras.layers.RNN(cell, return_sequences=True, return_state=True)(inputs)` (or a `LSTM`/`GRU` layer); it is batch-major (no `time_major`), takes a mask instead of `sequence_length`, and returns `[outputs, *states]`",
    "static_rnn": "use `tf.keras.layers.RNN(cell, unroll=True, return_sequences=True, return_state=True)` on a stacked tensor",
    "bidirectional_dynamic_rnn": "use `tf.keras.layers.Bidirectional(tf.keras.layers.RNN(cell, return_sequences=True))`",
    "static_bidirectional_rnn": "use `tf.keras.layers.Bidirectional(tf.keras.layers.RNN(cell, unroll=True, return_sequences=True))`",
    "DropoutWrapper": "pass `dropout=` / `recurrent_dropout=` to the Keras cell or layer",
    "LSTMStateTuple": "Keras LSTM states are a list `[h, c]`",
    "ResidualWrapper": "add the input to the RNN layer's output yourself",
    "DeviceWrapper": "place the layer with `tf.device`",
    "RNNCell": "subclass `tf.keras.layers.Layer` with `state_size` and `call(inputs, states)`",
    "LayerNormBasicLSTMCell": "use `tf.keras.layers.LSTMCell` followed by `LayerNormalization`, or vendor the cell",
}
# A cell migrates only with everything that runs it (dynamic_rnn needs TF1 cells; Keras cells
# have no zero_state and take no TF1 wrapper).
_RNN_PIECES = re.compile(r"\b(?:dynamic_rnn|static_rnn|bidirectional_dynamic_rnn|static_bidirectional_rnn|"
                         r"zero_state|DropoutWrapper|ResidualWrapper|DeviceWrapper|MultiRNNCell)\b")
KERAS = "run Keras cells with `tf.keras.layers.RNN`, or use `tf.keras.layers.LSTM`/`GRU`"


class RnnCell(GoneApiRule):
    code = "TFM214"
    reads = (NameCounts, ProgramMode, SourceSearch)
    CLAIMS = (
        "nn.rnn_cell",
        "nn.dynamic_rnn",
        "nn.static_rnn",
        "nn.bidirectional_dynamic_rnn",
        "nn.static_bidirectional_rnn",
        "contrib.rnn",
    )

    def describe(self, ref: TF1Ref) -> Tuple[str, Optional[Fix]]:
        parts = ref.path.split(".")
        leaf = parts[2] if len(parts) > 2 else parts[-1]
        name = spelled_gone(ref)
        contrib = parts[0] == "contrib"
        why = "was removed with `tf.contrib`" if contrib else "does not work under Keras 3, not even through `tf.compat.v1`"
        if isinstance(ref, GoneRef) and ref.statement is not None:
            fix = remove_import_fix(self.ctx, ref, "Remove the import, no longer used (TF2-native)")
            if fix is not None:
                return f"Importing `{name}` fails under TensorFlow 2 and nothing here uses `{ref.local}` any more. Remove the import.", fix
            return f"Importing `{name}` fails under TensorFlow 2: `tf.contrib` was removed. Instead, {KERAS}. No automatic fix.", None
        program = self.ctx.fact(ProgramMode)
        if contrib and program.v2_disabled and len(parts) == 3 and parts[2] in CONTRIB_RNN_CORE:
            target = CONTRIB_RNN_CORE[parts[2]]
            reference = self.ctx.names.spelling(target)
            edits = (Replace(ref.node, reference.expression()),) + reference.import_edits()
            fix = Fix("safe", f"Replace with `{reference.code}`, the same class in TF1 graph code (needs tf-keras, "
                              "which TFM200's fix sets up)", edits, requires=("tf-keras",))
            return f"`{name}` {why}. {fix.description}.", fix
        if not contrib and program.graph:
            native = ("The TF2-native form (Keras cells run by `tf.keras.layers.RNN`) must replace the cell, its "
                      "wrappers, `zero_state` and the `dynamic_rnn` that runs it together")
            if program.on_compat_route and program.legacy_keras_set and ref.spelled_v1:
                return f"`{name}` runs through `tf.compat.v1` with TensorFlow's legacy Keras (tf-keras). {native}; no automatic fix.", None
            return (f"`{name}` {why} without TensorFlow's legacy Keras. In this TF1 graph module TFM200's fix keeps it "
                    f"on `tf.compat.v1` with legacy Keras (tf-keras), with its cell, wrappers and `zero_state`. {native}."), None
        if leaf in CELLS and len(parts) == (3 if contrib or parts[1] == "rnn_cell" else 2):
            if self.ctx.fact(SourceSearch).found(_RNN_PIECES):
                return (f"`{name}` {why}: use `tf.{CELLS[leaf][0]}`. No automatic fix: this module also uses "
                        "`dynamic_rnn`, a cell wrapper or `zero_state`, which a Keras cell does not work with, "
                        "so the cell cannot move alone."), None
            fix = self._cell_fix(ref, leaf)
            if fix is not None:
                return (
                    f"`{name}` {why}. {fix.description}: a Keras cell returns `(output, [h, c])`, initializes its biases "
                    f"differently and is run by `tf.keras.layers.RNN`, not `dynamic_rnn`.",
                    fix,
                )
            return f"`{name}` {why}: use `tf.{CELLS[leaf][0]}` (its arguments differ). No automatic fix.", None
        hint = HINTS.get(leaf, KERAS)
        return f"`{name}` {why}: {hint}. No automatic fix.", None

    def _cell_fix(self, ref: TF1Ref, leaf: str) -> Optional[Fix]:
        call = ref.call
        if call is None:
            return None
        target, keywords, extra = CELLS[leaf]
        positional = [a for a in call.args if a.keyword is None]
        if any(a.star for a in call.args) or len(positional) > 1:
            return None
        args = []
        for arg in call.args:
            if arg.keyword is None:
                args.append(arg)
                continue
            key = arg.keyword.value
            if key in DEFAULT_ONLY:
                code = self.ctx.module.code_for_node(arg.value)
                if code not in (DEFAULT_ONLY[key], DEFAULT_ONLY[key].rstrip(".0") or code):
                    return None
                continue
            if key not in keywords:
                return None
            if keywords[key] is None:
                continue
            args.append(arg.with_changes(keyword=cst.Name(keywords[key])))
        passed = {a.keyword.value for a in args if a.keyword is not None}
        for key, value in extra:
            if key not in passed:
                args.append(keyword(key, cst.parse_expression(value)))
        args = joined(call, args)
        reference = self.ctx.names.spelling(target)
        edits = [Replace(call, call.with_changes(func=reference.expression(), args=args))]
        edits.extend(reference.import_edits())
        return Fix("unsafe", f"Replace with `{reference.code}` (TF2-native)", tuple(edits))
