"""The words that say "TF1 graph code", in one place: named sets, and the text and bytes regexes
that the program fact, the project scans and the rules build from them (compiled once, here).

Consumers ask different questions, so they compose different sets; where two differ, the
difference is a named set below with its reason. Imports only `re`: the project scans read
bytes before anything is parsed, and a cached run must not pay for libcst.
"""
from __future__ import annotations

import re
from typing import Iterable

# Calls that turn TF2 behaviour off for the whole program (the compat route's switch).
V2_OFF = ("disable_v2_behavior", "disable_eager_execution")
# Each turns one TF2 behaviour off: a file calling one may switch it back on with `enable_*`.
SWITCHES_OFF = V2_OFF + ("disable_resource_variables", "disable_v2_tensorshape", "disable_control_flow_v2")
# What only TF1 graph code does (a graph is built, then run by a session), as API paths after a
# TensorFlow alias (`tf.` or `tf.compat.v1.`). One of these makes the module graph code.
GRAPH_ONLY = (
    "placeholder", "placeholder_with_default", "sparse_placeholder", "Session", "InteractiveSession",
    "train.MonitoredTrainingSession", "train.MonitoredSession", "get_collection", "get_collection_ref",
    "add_to_collection", "get_default_graph", "reset_default_graph", "train.start_queue_runners",
    "train.Coordinator", "train.string_input_producer", "train.slice_input_producer", "train.shuffle_batch",
    "train.batch", "FIFOQueue", "RandomShuffleQueue", "summary.FileWriter", "summary.merge_all",
)
# Graph-only words that TF2 code may hold too: inside a `tf.function` a collection is the traced
# graph's own (`fix --native` writes a program's own collections there, native.own_collections).
TRACED_COLLECTIONS = ("get_collection", "add_to_collection")
# TF1 constructs that TF1's eager mode ran too: evidence shown alongside, never decisive alone
# (`tf.layers.conv2d` in an eager script is not graph code). Patterns: some name a family.
TF1_STYLE = (
    "GraphKeys", "get_variable", "variable_scope", "global_variables_initializer", "local_variables_initializer",
    "initialize_all_variables", "variables_initializer", r"train\.Saver", r"train\.\w+Optimizer", r"nn\.dynamic_rnn",
    r"nn\.static_rnn", r"nn\.bidirectional_dynamic_rnn", r"nn\.rnn_cell\.\w+", r"layers\.[a-z]\w*",
)
# TF1 runs these on a TF1 graph and TF2 has no call of that meaning: an RNN run over time by
# `dynamic_rnn` & co works under TF 2.21 only on the compat route with legacy Keras (TFM214: no
# per-call fix), so one of them makes the module graph code unless it turns eager execution on.
RNN_RUNNERS = ("nn.dynamic_rnn", "nn.static_rnn", "nn.bidirectional_dynamic_rnn")
# The calls that set TensorFlow's graph (global) seed (in graph mode `tf.random.set_seed` sets the
# same graph seed as TF1's `set_random_seed`).
GRAPH_SEEDS = ("set_random_seed", "random.set_random_seed", "random.set_seed", "compat.v1.set_random_seed",
               "compat.v1.random.set_random_seed")
# contrib.rnn names that TF1 itself re-exported from core (the same objects): TFM214 respells them
# in graph code, and `fix --native` reads them as the core names (native.contrib_spellings).
CONTRIB_RNN_CORE = {
    **{name: f"nn.rnn_cell.{name}" for name in (
        "BasicLSTMCell", "BasicRNNCell", "GRUCell", "LSTMCell", "MultiRNNCell", "DropoutWrapper",
        "ResidualWrapper", "DeviceWrapper", "LSTMStateTuple", "RNNCell")},
    "static_rnn": "nn.static_rnn",
    "static_bidirectional_rnn": "nn.static_bidirectional_rnn",
    "static_state_saving_rnn": "nn.static_state_saving_rnn",
}
EAGER_ON = ("enable_eager_execution", "enable_v2_behavior")
# API paths of TF1 classes that only `tf.compat.v1` with legacy Keras serves (and no TF2 class
# replaces one by one): a module subclassing one at import time must run through the compat route.
TF1_ONLY_BASES = (r"nn\.rnn_cell\.\w+", r"contrib\.rnn\.\w+", r"contrib\.seq2seq\.\w+", r"layers\.[A-Z]\w*")
# The broad word test (any spelling, no alias needed) of a file that may run TF1 graphs at all:
# sessions of every kind, graph inputs, graphs entered, tf.test's graph-mode helpers, Estimators.
SESSIONS = ("Session", "InteractiveSession", "MonitoredSession", "MonitoredTrainingSession", "SingularMonitoredSession")
PLACEHOLDERS = ("placeholder", "placeholder_with_default")
GRAPHS_ENTERED = ("Graph", "as_default", "feed_dict")
GRAPH_TESTS = ("test_session", "cached_session", "graph_mode", "run_deprecated_v1")
ESTIMATORS = ("Estimator", "EstimatorSpec")
# Calls a graph helper module shows most: the project scan's cheap stand-in, on bytes, for the
# program fact's evidence (which needs the parsed module), so it needs no alias.
HELPER_GRAPH_CALLS = ("placeholder", "Session", "InteractiveSession", "get_variable", "variable_scope",
                      "get_collection", "add_to_collection", "global_variables_initializer", "start_queue_runners") + V2_OFF
LEGACY_KERAS_VARIABLE = "TF_USE_LEGACY_KERAS"  # set, TF 2.21 runs TensorFlow's legacy Keras (tf-keras)


def either(words: Iterable[str]) -> str:
    """A regex alternation of the words, escaped (dotted paths match their dots only)."""
    return "|".join(re.escape(word) for word in words)


# Text ---------------------------------------------------------------------------------------
GRAPH_ONLY_TEXT = either(GRAPH_ONLY)
GRAPH_CALLS_TEXT = GRAPH_ONLY_TEXT + "|" + "|".join(TF1_STYLE)  # the program fact's evidence
RNN_RUNNERS_TEXT = either(RNN_RUNNERS)
EAGER_ON_CALL = re.compile(rf"\b(?:{either(EAGER_ON)})\s*\(")
# TF2 code (`fix --native` writes it: a training step, or only `tf.function`s that evaluate): its
# `tf.compat.v1` RNNs run eagerly, inside `tf.function`s.
EAGER_TRAINING_CALL = re.compile(r"\bGradientTape\s*\(|^[ \t]*@[ \t]*(?:\w+\.)*function\b", re.MULTILINE)
TF1_ONLY_BASE = re.compile("|".join(TF1_ONLY_BASES))  # fullmatch an API path
V2_OFF_CALL = re.compile(rf"\b(?:{either(V2_OFF)})\s*\(")
V2_OFF_WORD = re.compile(rf"\b(?:{either(V2_OFF)})\b")
SWITCH_OFF_WORD = re.compile(rf"\b(?:{either(SWITCHES_OFF)})\b")
GRAPH_WORD = re.compile(rf"\b(?:{either(SWITCHES_OFF + SESSIONS + PLACEHOLDERS + GRAPHS_ENTERED + GRAPH_TESTS + ESTIMATORS)})\b")
LEGACY_KERAS_SET = re.compile(rf"""["']{LEGACY_KERAS_VARIABLE}["']""")
# TFM103: variables may be shared by graph-mode reuse: a switch, or a graph made or entered.
GRAPH_MODE = re.compile(either(V2_OFF) + r"|Session\(|\bplaceholder\(|\bGraph\(\)|\.as_default\(\)|EstimatorSpec\(")
# TFM209: an optimizer used the TF1 way: in graph code, or through API Keras 3 optimizers lack.
TF1_OPTIMIZER_USE = re.compile(
    r"\.minimize\(|compute_gradients|get_slot|global_step|\.variables\(\)|"
    r"Session\(|placeholder|get_collection|MonitoredTrainingSession|Estimator|" + either(V2_OFF)
)

# Bytes (the project scans, before any parse) ---------------------------------------------------
V2_OFF_CALL_BYTES = re.compile(V2_OFF_CALL.pattern.encode())
# After a TensorFlow alias (a pattern tail: the alias varies by file), what TF 2.21 serves only from
# TensorFlow's legacy Keras: program.ProgramMode.needs_legacy_keras's words, on bytes.
LEGACY_KERAS_AFTER_ALIAS_BYTES = (rb"\s*\.\s*(?:compat\s*\.\s*v1\s*\.\s*)?"
                                  rb"(?:layers|nn\s*\.\s*rnn_cell|contrib\s*\.\s*rnn|keras)\s*\.\s*\w")
LEGACY_KERAS_SET_BYTES = re.compile(LEGACY_KERAS_SET.pattern.encode())
HELPER_GRAPH_CALL_BYTES = re.compile(rf"\.(?:{either(HELPER_GRAPH_CALLS)})\s*\(|\bfeed_dict\s*=".encode())
# The same, less the variable calls the model-mapping route keeps inside its tracked `call`s
# (`track_tf1_style_variables`): what `fix --native` writes still has those, and is eager TF2.
MAPPED_GRAPH_CALL_BYTES = re.compile(
    rf"\.(?:{either(w for w in HELPER_GRAPH_CALLS if w not in ('get_variable', 'variable_scope'))})\s*\(|\bfeed_dict\s*=".encode())
# Substring tests first (C speed): the regex then scans only the likely graph modules. A word
# containing another (InteractiveSession, Session) needs no test of its own.
HELPER_GRAPH_BYTES = tuple(
    word.encode() for word in HELPER_GRAPH_CALLS + ("feed_dict",)
    if not any(other != word and other in word for other in HELPER_GRAPH_CALLS)
)
# TF1's initializer of a variable made without one (`get_variable`, `tf.layers` kernels, RNN cells)
DEFAULT_INITIALIZERS = ("glorot_uniform_initializer", "compat.v1.glorot_uniform_initializer",
                        "contrib.layers.xavier_initializer", "initializers.glorot_uniform")
