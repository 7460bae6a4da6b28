"""Generate tfmigrate/data/tf1_api.json: the TF1 API facts the linter reads instead of TensorFlow.

The linter must never import TensorFlow (about 7 s), so this script measures the installed
TensorFlow 2.21 / Keras 3 once and writes what it found:

* ``removed``: every public ``tf.compat.v1`` path that ``tf.<path>`` does not resolve, with its
  kind, whether ``tf.compat.v1.<path>`` really works under Keras 3 (``v1_available``, measured by
  access and, for a few families, by a cheap trial call), and a replacement where one resolves.
* ``changed``: paths present in both ``tf`` and ``tf.compat.v1`` whose arguments changed (from
  TensorFlow's own upgrade tables), so a rule can act on them only where code is TF1 by evidence.
* ``diverged``: paths TensorFlow's tables send to ``tf.compat.v1`` although TF2's ``tf`` has a
  different object of that name (``where``, the initializer classes, ``assert_*``), with what
  differs; a rule reports them where the code spells them through ``tf.compat.v1``.
* ``contrib``: ``tf.contrib`` is absent from both; TensorFlow's renames of contrib symbols whose
  targets still resolve.
* ``dropped_targets``: renames in TensorFlow's tables whose target no longer resolves in 2.21.

A second file, ``tfmigrate/data/tf_namespaces.json`` (next to the first; loaded by the linter
only when a reference is not in the first), lists what exists at all in TensorFlow 2.21, so a
reference that resolves nowhere can be reported instead of left silent:

* ``tf`` and ``v1``: every public API module under ``tf`` / ``tf.compat.v1`` (lazy loaders
  excluded: never judged) with its attribute names; ``tf`` also has the ``keras`` tree
  (``tf.keras`` is Keras 3's ``keras._tf_keras.keras`` under TF 2.21).
* ``python``: the private modules under ``tensorflow.python`` that TF1 code imports, with their
  attribute names and submodules, or null where a module-level ``__getattr__`` makes the names
  open-ended. See PRIVATE_PACKAGES for how they were chosen.

TensorFlow's tables (``tensorflow.tools.compatibility``) are read as a source of facts, never
copied into tfmigrate; every replacement target and every argument mapping is checked against
TF 2.21 here. Output is deterministic (sorted keys, one entry per line, no timestamps).

    .venv/bin/python scripts/gen_api_table.py [--out PATH]
"""
from __future__ import annotations

import argparse
import importlib
import inspect
import json
import os
import pkgutil
import re
import sys
import types
import warnings
from pathlib import Path

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
warnings.filterwarnings("ignore")

import keras  # noqa: E402
import tensorflow as tf  # noqa: E402
from tensorflow.tools.compatibility import all_renames_v2  # noqa: E402
from tensorflow.tools.compatibility import module_deprecations_v2  # noqa: E402
from tensorflow.tools.compatibility import reorders_v2  # noqa: E402
from tensorflow.tools.compatibility import tf_upgrade_v2  # noqa: E402

OUT = Path(__file__).resolve().parent.parent / "tfmigrate" / "data" / "tf1_api.json"
NAMESPACES_NAME = "tf_namespaces.json"  # written next to OUT
FORMAT = 1

# Modules under tf.compat.v1 whose names cannot be listed under Keras 3 (their KerasLazyLoader
# points at keras._tf_keras.keras.__internal__.legacy.*, which Keras 3 does not ship; dir()
# raises ModuleNotFoundError and every attribute raises "`X` is not available with Keras 3").
# Their members are taken from the TF 1.15 public API (these lists) plus TensorFlow's tables.
KNOWN_V1_MEMBERS = {
    "layers": [
        "AveragePooling1D", "AveragePooling2D", "AveragePooling3D", "BatchNormalization",
        "Conv1D", "Conv2D", "Conv2DTranspose", "Conv3D", "Conv3DTranspose", "Dense", "Dropout",
        "Flatten", "InputSpec", "Layer", "MaxPooling1D", "MaxPooling2D", "MaxPooling3D",
        "SeparableConv1D", "SeparableConv2D", "average_pooling1d", "average_pooling2d",
        "average_pooling3d", "batch_normalization", "conv1d", "conv2d", "conv2d_transpose",
        "conv3d", "conv3d_transpose", "dense", "dropout", "experimental", "flatten",
        "max_pooling1d", "max_pooling2d", "max_pooling3d", "separable_conv1d",
        "separable_conv2d",
    ],
    "layers.experimental": ["keras_style_scope", "set_keras_style"],
    "nn.rnn_cell": [
        "BasicLSTMCell", "BasicRNNCell", "DeviceWrapper", "DropoutWrapper", "GRUCell",
        "LSTMCell", "LSTMStateTuple", "MultiRNNCell", "RNNCell", "ResidualWrapper",
    ],
}

# TF1-era names of the v1 Keras API (tf_keras / Keras 2) that Keras 3 no longer lists at all:
# probed like any other path so the table says what happens to code that uses them.
EXTRA_V1_PATHS = [
    "keras.backend.get_session",
    "keras.backend.set_session",
    "keras.layers.CuDNNGRU",
    "keras.layers.CuDNNLSTM",
    "keras.utils.track_tf1_style_variables",
]


def _trial_rnn(fn_name):
    def trial(fn):
        cell = keras.layers.LSTMCell(2)
        if fn_name == "dynamic_rnn":
            return fn(cell, tf.zeros([1, 3, 2]), dtype=tf.float32)
        if fn_name == "static_rnn":
            return fn(cell, [tf.zeros([1, 2])], dtype=tf.float32)
        if fn_name == "bidirectional_dynamic_rnn":
            return fn(cell, keras.layers.LSTMCell(2), tf.zeros([1, 3, 2]), dtype=tf.float32)
        return fn(cell, keras.layers.LSTMCell(2), [tf.zeros([1, 2])], dtype=tf.float32)

    return trial


# Cheap trial calls for families that resolve but may not work under Keras 3. The layers and
# rnn_cell trials only run if access ever succeeds again (under TF 2.21 access already raises).
# The rnn functions resolve, but the only cells they could be given are Keras 3 cells (the v1
# cells are unavailable), which they reject.
TRIALS = {
    "layers.Dense": lambda c: c(units=1),
    "layers.dense": lambda f: f(tf.zeros([1, 1]), 1),
    "nn.rnn_cell.LSTMCell": lambda c: c(num_units=1),
    "nn.rnn_cell.GRUCell": lambda c: c(num_units=1),
    "nn.rnn_cell.BasicRNNCell": lambda c: c(num_units=1),
    "nn.dynamic_rnn": _trial_rnn("dynamic_rnn"),
    "nn.static_rnn": _trial_rnn("static_rnn"),
    "nn.bidirectional_dynamic_rnn": _trial_rnn("bidirectional_dynamic_rnn"),
    "nn.static_bidirectional_rnn": _trial_rnn("static_bidirectional_rnn"),
}

# Top-level modules checked for being gone from both tf and tf.compat.v1 (besides the heads of
# TensorFlow's table keys, which already include contrib).
GONE_NOTES = {
    "contrib": "tf.contrib was removed in TF 2.0",
    "estimator": "tf.estimator (and tf.compat.v1.estimator) were removed in TF 2.16; "
                 "use Keras (model.fit) or a custom training loop",
}

# tfmigrate's own TF2-native replacements, for removed paths where TensorFlow's tables only
# offer compat.v1. Every target and every argument mapping is verified below against the real
# signatures; mappings whose target keyword does not exist are dropped.
# (v1 path, target, {v1 keyword: target keyword}, drop_in, note)
OWN_REPLACEMENTS = [
    ("train.GradientDescentOptimizer", "keras.optimizers.SGD", {}, True, None),
    ("train.MomentumOptimizer", "keras.optimizers.SGD", {"use_nesterov": "nesterov"}, True, None),
    ("train.AdamOptimizer", "keras.optimizers.Adam",
     {"beta1": "beta_1", "beta2": "beta_2"}, True, None),
    ("train.AdagradOptimizer", "keras.optimizers.Adagrad", {}, True, None),
    ("train.AdadeltaOptimizer", "keras.optimizers.Adadelta", {}, True, None),
    ("train.RMSPropOptimizer", "keras.optimizers.RMSprop", {"decay": "rho"}, True, None),
    ("train.FtrlOptimizer", "keras.optimizers.Ftrl", {}, True, None),
    ("train.Saver", "train.Checkpoint", {}, False,
     "object-based checkpoints: tf.train.Checkpoint(model=..., optimizer=...) with "
     "CheckpointManager; the checkpoint format differs"),
    ("layers.Dense", "keras.layers.Dense", {}, True, None),
    ("layers.Conv1D", "keras.layers.Conv1D", {}, True, None),
    ("layers.Conv2D", "keras.layers.Conv2D", {}, True, None),
    ("layers.Conv3D", "keras.layers.Conv3D", {}, True, None),
    ("layers.Conv2DTranspose", "keras.layers.Conv2DTranspose", {}, True, None),
    ("layers.Conv3DTranspose", "keras.layers.Conv3DTranspose", {}, True, None),
    ("layers.SeparableConv1D", "keras.layers.SeparableConv1D", {}, True, None),
    ("layers.SeparableConv2D", "keras.layers.SeparableConv2D", {}, True, None),
    ("layers.MaxPooling1D", "keras.layers.MaxPooling1D", {}, True, None),
    ("layers.MaxPooling2D", "keras.layers.MaxPooling2D", {}, True, None),
    ("layers.MaxPooling3D", "keras.layers.MaxPooling3D", {}, True, None),
    ("layers.AveragePooling1D", "keras.layers.AveragePooling1D", {}, True, None),
    ("layers.AveragePooling2D", "keras.layers.AveragePooling2D", {}, True, None),
    ("layers.AveragePooling3D", "keras.layers.AveragePooling3D", {}, True, None),
    ("layers.BatchNormalization", "keras.layers.BatchNormalization", {}, True, None),
    ("layers.Dropout", "keras.layers.Dropout", {}, True, None),
    ("layers.Flatten", "keras.layers.Flatten", {}, True, None),
    ("layers.Layer", "keras.layers.Layer", {}, False,
     "Keras 3 layers build weights in build() and track them as attributes"),
    ("layers.InputSpec", "keras.layers.InputSpec", {}, True, None),
    ("nn.rnn_cell.LSTMCell", "keras.layers.LSTMCell", {"num_units": "units"}, False,
     "Keras cells return (output, [h, c]) and are run by keras.layers.RNN"),
    ("nn.rnn_cell.BasicLSTMCell", "keras.layers.LSTMCell", {"num_units": "units"}, False,
     "Keras cells return (output, [h, c]) and are run by keras.layers.RNN"),
    ("nn.rnn_cell.GRUCell", "keras.layers.GRUCell", {"num_units": "units"}, False,
     "Keras cells are run by keras.layers.RNN"),
    ("nn.rnn_cell.BasicRNNCell", "keras.layers.SimpleRNNCell", {"num_units": "units"}, False,
     "Keras cells are run by keras.layers.RNN"),
    ("nn.rnn_cell.MultiRNNCell", "keras.layers.StackedRNNCells", {}, False,
     "takes the list of cells as its first argument"),
    ("nn.dynamic_rnn", "keras.layers.RNN", {}, False,
     "keras.layers.RNN(cell, return_sequences=True, return_state=True)(inputs)"),
    ("nn.static_rnn", "keras.layers.RNN", {}, False,
     "keras.layers.RNN(cell, unroll=True, return_sequences=True, return_state=True)(inputs)"),
]
# tf.to_float(x) and friends: TensorFlow rewrites them with code (_cast_transformer).
for _fn, _dtype in [("to_bfloat16", "bfloat16"), ("to_complex128", "complex128"),
                    ("to_complex64", "complex64"), ("to_double", "float64"),
                    ("to_float", "float32"), ("to_int32", "int32"), ("to_int64", "int64")]:
    OWN_REPLACEMENTS.append((_fn, "cast", {}, False, f"tf.cast(x, tf.{_dtype})"))
# Functional layers: the replacement is a layer object created once and called where the
# function was (see TFM101); listed with their class and marked not drop-in.
FUNCTIONAL_LAYERS = {
    "average_pooling1d": "AveragePooling1D", "average_pooling2d": "AveragePooling2D",
    "average_pooling3d": "AveragePooling3D", "batch_normalization": "BatchNormalization",
    "conv1d": "Conv1D", "conv2d": "Conv2D", "conv2d_transpose": "Conv2DTranspose",
    "conv3d": "Conv3D", "conv3d_transpose": "Conv3DTranspose", "dense": "Dense",
    "dropout": "Dropout", "flatten": "Flatten", "max_pooling1d": "MaxPooling1D",
    "max_pooling2d": "MaxPooling2D", "max_pooling3d": "MaxPooling3D",
    "separable_conv1d": "SeparableConv1D", "separable_conv2d": "SeparableConv2D",
}
for _fn, _cls in sorted(FUNCTIONAL_LAYERS.items()):
    OWN_REPLACEMENTS.append((
        f"layers.{_fn}", f"keras.layers.{_cls}", {}, False,
        f"create keras.layers.{_cls}(...) once (e.g. in __init__) and call it on the input",
    ))

# The value of a keep_prob argument is not the value of rate: TensorFlow handles these with
# code (function_transformers); the table records the fact so a fixer can do the arithmetic.
TRANSFORM_NOTES = {
    "nn.dropout": "keep_prob=p became rate=1 - p",
    "name_scope": "TF2's takes only the name: pass `name or default_name`; `values` is not needed",
}

# Diverged: TensorFlow's upgrade tables send these to `tf.compat.v1` although TF 2.21's `tf` has
# an object of the same name, a different one: (pattern, when, what differs). `when` says which
# compat.v1-spelled uses are reported: "args" (a call passing an argument TF2's does not take, or
# one whose position means something else in TF2), "always", or the parameters whose passing
# makes the difference ("-name": whose absence does, TF2's default being another). Measured in tests/test_api_table.py (test_diverged_notes_hold...). A
# diverged path without an entry stops the generator, so a new TensorFlow cannot add one silently.
_INITIALIZERS = ("TF1's initializers take `dtype` when built (`dtype=` is a TypeError on TF2's, "
                 "which take the dtype when called)")
_RANDOM_INITIALIZERS = ("TF1's initializers take `dtype` when built (a TypeError on TF2's, which take "
                        "it when called), and TF2's draw different numbers for the same `seed`")
# TF2's random_normal / random_uniform also default to a narrower range: a TF1 call that leaves
# it to the default ("-stddev": not passing it makes the difference) draws other numbers too.
_NORMAL_DEFAULTS = _RANDOM_INITIALIZERS + ", and its default `stddev` is 0.05 where TF1's is 1.0"
_UNIFORM_DEFAULTS = _RANDOM_INITIALIZERS + ", and its default range is [-0.05, 0.05] where TF1's is [0, 1)"
DIVERGED_NOTES = [
    *((path, ["seed", "dtype", "-stddev"], _NORMAL_DEFAULTS)
      for path in ("random_normal_initializer", "initializers.random_normal")),
    *((path, ["seed", "dtype", "-minval", "-maxval"], _UNIFORM_DEFAULTS)
      for path in ("random_uniform_initializer", "initializers.random_uniform")),
    *((f"initializers.{leaf}", ["seed", "dtype"], _RANDOM_INITIALIZERS)
      for leaf in ("glorot_normal", "glorot_uniform", "he_normal", "he_uniform", "lecun_normal",
                   "lecun_uniform", "orthogonal", "random_normal", "random_uniform", "truncated_normal",
                   "variance_scaling")),
    ("*random_", ["seed", "dtype"], _RANDOM_INITIALIZERS),
    ("where", ["x", "y"], "TF1's `where(c, x, y)` picks whole rows of `x`/`y` where `c` is a vector; "
                          "TF2's `tf.where` broadcasts `c` against them, so a lower-rank `c` fails or "
                          "selects along the last axis instead"),
    ("initializers.", "args", _INITIALIZERS),
    ("*_initializer", "args", _INITIALIZERS),
    ("*assert_", "args", "TF1's takes `data` (tensors to print) as its third argument; TF2's takes "
                         "`message` there and has no `data=`"),
    ("losses.Reduction", "always", "TF1's reductions (`MEAN`, `SUM_BY_NONZERO_WEIGHTS`, ...) are not "
                                   "TF2's Keras reductions (`AUTO`, `SUM`, `SUM_OVER_BATCH_SIZE`, `NONE`)"),
    ("data.Iterator", "always", "TF1's `Iterator` (`from_structure`, `make_initializer`, `get_next` in "
                                "graphs) is not TF2's abstract `tf.data.Iterator`: iterate the dataset"),
    ("nn.ctc_loss", "always", "TF1's takes (labels as a SparseTensor, inputs, sequence_length); TF2's "
                              "takes (labels, logits, label_length, logit_length)"),
    ("saved_model.load", "always", "TF1's `load(sess, tags, export_dir)` loads into a session; TF2's "
                                   "`load(export_dir, tags)` returns the restored object"),
    ("test.compute_gradient", "always", "TF1's takes graph tensors and their shapes (x, x_shape, y, "
                                        "y_shape); TF2's takes a function and its arguments"),
]


def diverged_note(path):
    """(when, note) of the first DIVERGED_NOTES pattern that matches: an exact path, a prefix
    ending in "." or "*part" (the last name contains the part); None when none does."""
    leaf = path.rsplit(".", 1)[-1]
    for pattern, when, note in DIVERGED_NOTES:
        if pattern == path or (pattern.endswith(".") and path.startswith(pattern)):
            return when, note
        if pattern.startswith("*") and pattern[1:] in leaf:
            return when, note
    return None


# --------------------------------------------------------------------------- resolution
_MISSING = object()


def resolve(root, path):
    """getattr chain from root; returns (object, None) or (_MISSING, "Error: message")."""
    obj = root
    if not path:
        return obj, None
    for part in path.split("."):
        try:
            obj = getattr(obj, part)
        except Exception as exc:  # lazy loaders raise AttributeError, ImportError, ...
            return _MISSING, _err(exc)
    return obj, None


def _err(exc):
    msg = " ".join(str(exc).split())
    if len(msg) > 160:
        msg = msg[:157] + "..."
    return f"{type(exc).__name__}: {msg}"


def kind_of(obj):
    if isinstance(obj, types.ModuleType):
        return "module"
    if inspect.isclass(obj):
        return "class"
    if callable(obj):
        return "function"
    return "other"


def kind_by_name(name):
    if name == "experimental":
        return "module"
    return "class" if name[:1].isupper() else "function"


def is_api_module(obj):
    """A generated public API module (recurse into it), not a module TF merely re-exports."""
    name = getattr(obj, "__name__", "") or ""
    if type(obj).__name__ in ("TFModuleWrapper", "KerasLazyLoader", "LazyLoader"):
        return True
    return name.startswith(("tensorflow._api.", "keras._tf_keras.keras"))


def signature(obj):
    """Parameter list [(name, kind, default)] of a function or a class constructor, or None."""
    try:
        target = obj.__init__ if inspect.isclass(obj) else obj
        sig = inspect.signature(target)
    except (TypeError, ValueError):
        return None
    params = []
    for p in sig.parameters.values():
        if p.name == "self":
            continue
        params.append((p.name, p.kind, p.default))
    return params


def both_signatures(v1_obj, v2_obj):
    """v1_params, v2_params and v2_max_positional of a symbol both namespaces have ({} when
    either signature cannot be read)."""
    s1, s2 = signature(v1_obj), signature(v2_obj)
    if s1 is None or s2 is None:
        return {}
    return {"v1_params": [n for n, _, _ in s1], "v2_params": [n for n, _, _ in s2],
            "v2_max_positional": max_positional(s2)}


def required_renamed(v1_obj, renames):
    """The renamed TF1 keywords that TF1's signature requires (no default): `block_size` of
    `batch_to_space`. Renamed to TF2's keyword through `tf.compat.v1`, the call loses them."""
    params = signature(v1_obj) or []
    return sorted(n for n, kind, default in params
                  if n in renames and default is inspect.Parameter.empty
                  and kind in (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY))


def max_positional(params):
    """How many arguments a call can pass by position, or None when `*args` takes any number."""
    if any(kind is inspect.Parameter.VAR_POSITIONAL for _, kind, _ in params):
        return None
    return sum(1 for _, kind, _ in params
               if kind in (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD))


def _pinnable(v1_default, target_default):
    """Whether TF1's default may be written into the rewritten call to keep TF1's behaviour.
    A TF1 default of None means "the function's own default" (`dim=None` of softmax
    cross-entropy is -1, `keep_dims=None` is False, `padding=None` is required): never a value
    to pin, and the target may not take it (`axis=None`). A default of another type is another
    encoding of the choice, not a value the target takes (`resize_images(method=0)`, TF1's
    ResizeMethod.BILINEAR, is a ValueError for `tf.image.resize`, whose methods are strings)."""
    if v1_default is None:
        return False
    def family(value):
        return "number" if type(value) in (int, float) else type(value).__name__

    return family(v1_default) == family(target_default)


def _jsonable(value):
    if value is inspect.Parameter.empty:
        return _MISSING
    if value is None or isinstance(value, (bool, int, str)):
        return value
    if isinstance(value, float):
        return value
    return _MISSING


# --------------------------------------------------------------------------- walking tf.compat.v1
def walk_v1():
    """{path: (object or _MISSING, error or None, listed_from)} for public tf.compat.v1 paths."""
    v1 = tf.compat.v1
    found = {}
    unlistable = {}

    def walk(mod, prefix, ancestors):
        try:
            names = sorted(n for n in dir(mod) if not n.startswith("_"))
        except Exception as exc:
            unlistable[prefix.rstrip(".")] = _err(exc)
            return
        api = is_api_module(mod)
        for name in names:
            path = prefix + name
            if path == "compat":
                continue  # tf.compat.v1.compat.v2 is TF2 itself
            try:
                obj = getattr(mod, name)
            except Exception as exc:
                found[path] = (_MISSING, _err(exc), "dir")
                continue
            is_mod = isinstance(obj, types.ModuleType)
            if not api and is_mod:
                continue  # e.g. `sys` inside tf.compat.v1.flags (absl.flags re-exported)
            found[path] = (obj, None, "dir")
            if is_mod and name != "compat" and id(obj) not in ancestors:
                walk(obj, path + ".", ancestors | {id(obj)})

    walk(v1, "", {id(v1)})
    return found, unlistable


def table_v1_paths():
    """v1 paths TensorFlow's own tables mention (keys of its renames, reorders, keyword renames)."""
    spec = tf_upgrade_v2.TFAPIChangeSpec()
    keys = set(all_renames_v2.symbol_renames) | set(reorders_v2.reorders)
    keys |= set(spec.function_keyword_renames) | set(spec.function_transformers)
    return spec, sorted(k[3:] for k in keys if k.startswith("tf.") and not k.startswith("tf.contrib"))


def probe_v1(path):
    """(works, resolves, error, probe) for tf.compat.v1.<path> under Keras 3."""
    obj, error = resolve(tf.compat.v1, path)
    if obj is _MISSING:
        return False, False, error, "access"
    trial = TRIALS.get(path)
    if trial is not None:
        try:
            trial(obj)
        except Exception as exc:
            return False, True, _err(exc), "call"
        return True, True, None, "call"
    return True, True, None, "access"


# --------------------------------------------------------------------------- replacements
def normalize_target(target):
    """'tf.compat.v1.x' -> ('compat.v1.x', False); 'tf.x' -> ('x', True); not TF -> (None, None)."""
    if not target.startswith("tf."):
        return None, None
    rest = target[3:]
    if rest.startswith("compat.v2."):
        return rest[len("compat.v2."):], True
    return rest, not rest.startswith("compat.v1.")


def check_target(target):
    """Whether tf.<target> resolves under TF 2.21 / Keras 3 (layers & rnn_cell need more)."""
    obj, error = resolve(tf, target)
    if obj is _MISSING:
        return None, error
    if target.startswith("compat.v1."):
        works, _, error, _ = probe_v1(target[len("compat.v1."):])
        if not works:
            return None, error
    return obj, None


def map_arguments(v1_obj, target_obj, renames, counters, where, compare=True):
    """Argument facts for replacing v1_obj by target_obj: renames verified on the target.

    With compare (a drop-in replacement), also the v1 arguments the target lacks, defaults
    that changed, and how many leading positional arguments keep their meaning.
    """
    out = {}
    tgt = signature(target_obj)
    if tgt is None:
        if renames:
            counters["arg_mappings_unverifiable"] += len(renames)
            out["args_unverified"] = True
        return out
    tgt_names = {name for name, kind, _ in tgt if kind not in (inspect.Parameter.VAR_KEYWORD,
                                                                inspect.Parameter.VAR_POSITIONAL)}
    args, removed = {}, []
    for old, new in sorted(renames.items()):
        if new is None:
            removed.append(old)
        elif new in tgt_names:
            args[old] = new
        else:
            counters["arg_mappings_dropped"] += 1
            counters["_dropped_args"].append(f"{where}: {old}->{new}")
    src = signature(v1_obj) if v1_obj is not _MISSING and compare else None
    if src is not None:
        tgt_defaults = {name: default for name, _, default in tgt}
        for name, kind, default in src:
            if kind in (inspect.Parameter.VAR_KEYWORD, inspect.Parameter.VAR_POSITIONAL):
                continue
            new = args.get(name, name)
            if name in renames and renames[name] is None:
                continue
            if new not in tgt_names:
                if name not in removed:
                    removed.append(name)
                continue
            a, b = _jsonable(default), _jsonable(tgt_defaults.get(new))
            if new != "name" and a is not _MISSING and b is not _MISSING and a != b and _pinnable(a, b):
                # Keyed by the target's keyword: that is what a fix writes into the new call.
                out.setdefault("defaults_changed", {})[new] = [a, b]
        pos_src = [n for n, k, _ in src if k in (inspect.Parameter.POSITIONAL_ONLY,
                                                 inspect.Parameter.POSITIONAL_OR_KEYWORD)]
        pos_tgt = [n for n, k, _ in tgt if k in (inspect.Parameter.POSITIONAL_ONLY,
                                                 inspect.Parameter.POSITIONAL_OR_KEYWORD)]
        same = 0
        for old, new in zip(pos_src, pos_tgt):
            if args.get(old, old) != new:
                break
            same += 1
        out["positional_ok"] = same  # leading positional arguments that may stay positional
    if args:
        out["args"] = args
    if removed:
        out["args_removed"] = sorted(removed)
    return out


# --------------------------------------------------------------------------- proof by running
# A replacement is a rewrite of the user's call: the name, the table's keyword renames, its
# removed keywords dropped and TF1's changed defaults pinned. A name merely resolving proves
# nothing, so each rewrite with a sample below is run under TF 2.21: the TF1 form through
# tf.compat.v1 against the rewritten form, same outputs required. A rewrite that returns other
# values or fails is recorded as `differs` (the linter then offers no TF2-native fix for it);
# a target that is the very object tf.compat.v1 has is proven without running.
def _ramp():
    return tf.reshape(tf.range(16, dtype=tf.float32), [1, 4, 4, 1])


def _resize_samples():
    methods = tf.compat.v1.image.ResizeMethod
    return [((_ramp(), [2, 2]), {}),
            ((_ramp(), [2, 2]), {"method": methods.BILINEAR}),
            ((_ramp(), [3, 3]), {"method": methods.NEAREST_NEIGHBOR}),
            ((_ramp(), [8, 8]), {"method": methods.BICUBIC})]


def _sparse():
    return tf.SparseTensor(indices=[[0, 0], [1, 2]], values=[2.0, -3.0], dense_shape=[2, 3])


_DIFFERS = "running the rewritten call on a sample gives other results ({case})"

# path -> (samples: () -> [((positional args), {keywords})], what differs when it does)
PROOF_SAMPLES = {
    "nn.softmax_cross_entropy_with_logits_v2": (lambda: [
        ((), {"labels": [[0.2, 0.8], [1.0, 0.0]], "logits": [[1.0, 2.0], [0.5, -1.0]]}),
        ((), {"labels": [[0.2, 0.8], [1.0, 0.0]], "logits": [[1.0, 2.0], [0.5, -1.0]], "dim": 0})], _DIFFERS),
    "reduce_join": (lambda: [((tf.constant([["a", "b"], ["c", "d"]]),), {}),
                             ((tf.constant([["a", "b"], ["c", "d"]]),), {"axis": 1, "separator": "-"}),
                             ((tf.constant([["a", "b"]]),), {"reduction_indices": 1, "keep_dims": True})], _DIFFERS),
    "sparse_add": (lambda: [((_sparse(), _sparse()), {}), ((_sparse(), _sparse()), {"thresh": 5.0})], _DIFFERS),
    "sparse_concat": (lambda: [((1, [_sparse(), _sparse()]), {}),
                               ((1, [_sparse(), _sparse()]), {"expand_nonconcat_dim": True})], _DIFFERS),
    "sparse_reduce_sum": (lambda: [((_sparse(),), {"reduction_axes": 1, "keep_dims": True})], _DIFFERS),
    "sparse_reduce_max": (lambda: [((_sparse(),), {"reduction_axes": 1, "keep_dims": True})], _DIFFERS),
    "string_to_number": (lambda: [((), {"string_tensor": tf.constant(["1.5", "-2"])})], _DIFFERS),
    "string_to_hash_bucket": (lambda: [((), {"string_tensor": tf.constant(["a", "b"]), "num_buckets": 7})], _DIFFERS),
    "decode_raw": (lambda: [((), {"bytes": tf.constant([b"\x01\x02"]), "out_type": tf.uint8})], _DIFFERS),
    "multinomial": (lambda: [((tf.math.log([[1.0, 0.0]]), 3), {"output_dtype": tf.int64})], _DIFFERS),
    "random.multinomial": (lambda: [((tf.math.log([[1.0, 0.0]]), 3), {"output_dtype": tf.int64})], _DIFFERS),
    "extract_image_patches": (lambda: [((_ramp(),), {"ksizes": [1, 2, 2, 1], "strides": [1, 2, 2, 1],
                                                     "rates": [1, 1, 1, 1], "padding": "VALID"})], _DIFFERS),
    "image.extract_image_patches": (lambda: [((_ramp(),), {"ksizes": [1, 2, 2, 1], "strides": [1, 2, 2, 1],
                                                           "rates": [1, 1, 1, 1], "padding": "VALID"})], _DIFFERS),
    "nn.conv2d_backprop_input": (lambda: [((), {
        "input_sizes": [1, 4, 4, 1], "filter": tf.ones([2, 2, 1, 1]), "out_backprop": tf.ones([1, 2, 2, 1]),
        "strides": [1, 2, 2, 1], "padding": "VALID"})], _DIFFERS),
    "gfile.Exists": (lambda: [((), {"filename": "/"})], _DIFFERS),
    "gfile.IsDirectory": (lambda: [((), {"dirname": "/"})], _DIFFERS),
    "gfile.Glob": (lambda: [((), {"filename": "/*"})], _DIFFERS),
    "gfile.ListDirectory": (lambda: [((), {"dirname": "/"})], _DIFFERS),
    "image.resize_images": (
        _resize_samples,
        "it samples at half-pixel centres, so pixel values change (by up to {diff} on a 4x4 "
        "ramp: {case})"),
}


def _outcome(fn):
    try:
        value = fn()
    except Exception as exc:  # noqa: BLE001 - failing is an outcome to compare
        return "error", f"{type(exc).__name__}: {' '.join(str(exc).split())[:100]}"
    return "value", tf.nest.map_structure(lambda t: t.numpy() if hasattr(t, "numpy") else t, value,
                                          expand_composites=True)  # SparseTensor: its three parts


def _largest_difference(a, b):
    import numpy as np

    flat_a, flat_b = tf.nest.flatten(a, expand_composites=True), tf.nest.flatten(b, expand_composites=True)
    if len(flat_a) != len(flat_b):
        return float("inf")
    worst = 0.0
    for x, y in zip(flat_a, flat_b):
        x, y = np.asarray(x), np.asarray(y)
        if x.shape != y.shape:
            return float("inf")
        if x.dtype.kind in "fc" or y.dtype.kind in "fc":
            worst = max(worst, float(np.abs(x.astype(np.float64) - y.astype(np.float64)).max(initial=0.0)))
        elif not np.array_equal(x, y):
            return float("inf")
    return worst


def rewritten_keywords(kwargs, rep):
    """The keywords of the rewritten call: renames applied, removed ones dropped, TF1's changed
    defaults pinned where the call did not pass them (what removed_api.rename_arguments writes)."""
    renames, removed = rep.get("args", {}), set(rep.get("args_removed", []))
    out = {renames.get(k, k): v for k, v in kwargs.items() if k not in removed}
    for key, (old, _new) in rep.get("defaults_changed", {}).items():
        out.setdefault(key, old)
    return out


def prove(path, v1_obj, target_obj, rep):
    """{"proof": how} when the rewrite is proven, {"differs": why} when running it disproves
    it, {} when there is no sample to run."""
    if v1_obj is target_obj:
        return {"proof": "same object"}
    found = PROOF_SAMPLES.get(path)
    if path in OPTIMIZER_SAMPLES and v1_obj is not _MISSING:
        return prove_optimizer(path, v1_obj, target_obj, rep)
    if v1_obj is _MISSING or not callable(v1_obj) or inspect.isclass(v1_obj):
        return {}  # classes (layers, queues) are not run here
    if found is None and rep.get("drop_in") is False:
        dtype = re.search(r"tf\.cast\(x, tf\.(\w+)\)", rep.get("note", ""))
        if dtype is None:
            return {}  # rewritten by code, not a rename: nothing to run here
        # `tf.to_float(x)` -> `tf.cast(x, tf.float32)`: run what cast_fix writes.
        x = tf.constant([1.5, -2.0])
        before = _outcome(lambda: v1_obj(x))
        after = _outcome(lambda: target_obj(x, getattr(tf, dtype.group(1))))
        if before[0] == "error" or after[0] == "error" or before[1].dtype != after[1].dtype \
                or _largest_difference(before[1], after[1]) > 1e-6:
            return {"differs": f"`tf.cast(x, tf.{dtype.group(1)})` gives other results"}
        return {"proof": "ran a sample call"}
    if found is None:
        params = [n for n, _, _ in (signature(v1_obj) or [])]
        renames = rep.get("args", {})
        samples = _generic_samples(path, params, renames) if renames else \
            [((_matrix(),), {}), ((_matrix(), _matrix()), {})]
        if samples is None:
            return {}
        found = (lambda: samples, "running it on a sample gives other results ({case})")
    make, why = found
    samples = make()
    generic = path not in PROOF_SAMPLES
    ran = False
    for args, kwargs in samples:
        before = _outcome(lambda: v1_obj(*args, **kwargs))
        after = _outcome(lambda: target_obj(*args, **rewritten_keywords(kwargs, rep)))
        if before[0] == "error" and generic:
            continue  # the generic sample does not fit this function
        if before[0] == "error":
            raise SystemExit(f"proof sample for {path} fails in TF1's form: {before[1]}")
        diff = float("inf") if after[0] == "error" else _largest_difference(before[1], after[1])
        if diff > 1e-5:
            def plain(value):
                return isinstance(value, (int, float, str, bool)) or (
                    isinstance(value, list) and all(isinstance(v, (int, float)) for v in value))

            shown = ", ".join([*(repr(a) if plain(a) else "x" for a in args),
                               *(f"{k}={v!r}" if plain(v) else f"{k}=..." for k, v in kwargs.items())])
            case = after[1] if after[0] == "error" else f"`{path.rsplit('.', 1)[-1]}({shown})`"
            return {"differs": why.format(diff=f"{diff:g}", case=case)}
        ran = True
    if not ran:
        return {}
    return {"proof": "ran a sample call"}


# TF1 optimizers -> Keras 3's: three steps on the same quadratic, TF1's `minimize` against
# Keras's `apply_gradients` with the table's keyword renames and pinned defaults.
OPTIMIZER_SAMPLES = {
    "train.GradientDescentOptimizer": {"learning_rate": 0.1},
    "train.MomentumOptimizer": {"learning_rate": 0.1, "momentum": 0.9},
    "train.AdamOptimizer": {"learning_rate": 0.1, "beta1": 0.8},
    "train.AdagradOptimizer": {"learning_rate": 0.1},
    "train.AdadeltaOptimizer": {"learning_rate": 1.0},
    "train.RMSPropOptimizer": {"learning_rate": 0.1, "decay": 0.8},
    "train.FtrlOptimizer": {"learning_rate": 0.1},
}


def _steps(step):
    var = tf.Variable([1.0, -2.0])
    for _ in range(3):
        step(var, lambda: tf.reduce_sum(var * var * [1.0, 3.0]))
    return var.numpy()


def prove_optimizer(path, v1_cls, keras_cls, rep):
    kwargs = OPTIMIZER_SAMPLES[path]

    def tf1(var, loss):
        optimizer.minimize(loss, var_list=[var])

    def keras(var, loss):
        with tf.GradientTape() as tape:
            value = loss()
        optimizer.apply_gradients([(tape.gradient(value, var), var)])

    optimizer = v1_cls(**kwargs)
    before = _steps(tf1)
    optimizer = keras_cls(**rewritten_keywords(kwargs, rep))
    after = _steps(keras)
    diff = _largest_difference(before, after)
    if diff > 1e-5:
        return {"differs": f"three steps on a sample quadratic end up to {diff:.3g} apart from TF1's"}
    return {"proof": "ran three training steps"}


def _block_samples():
    x = tf.reshape(tf.range(16.0), [1, 4, 4, 1])
    return [((x,), {"paddings": [[0, 0], [0, 0]], "block_size": 2})]


def _crop_samples():
    x = tf.reshape(tf.range(16.0), [4, 2, 2, 1])
    return [((x,), {"crops": [[0, 0], [0, 0]], "block_size": 2})]


# Keyword renames of the `changed` section (same name in TF1 and TF2, TF1's keyword renamed),
# run like the replacements above: path -> (samples, {TF1 keyword: the value's TF2 form, "{0}"
# being the value as written, tried when the plain rename is disproven}).
def _one(**kwargs):
    """A sample of keywords, built when run (tensors need TensorFlow initialised)."""
    return lambda: [((), {k: (v() if callable(v) and getattr(v, "__name__", "") == "<lambda>" and k not in ("fn1", "fn2") else v)
                          for k, v in kwargs.items()})]


def _volume():
    return tf.reshape(tf.range(64.0), [1, 4, 4, 4, 1])


_POOL = {"ksize": [1, 2, 2, 1], "strides": [1, 2, 2, 1], "padding": "VALID"}
_BOOLS = lambda: tf.constant([[True, False], [True, True]])  # noqa: E731
_MATRIX = lambda: _matrix()  # noqa: E731

RENAME_SAMPLES = {
    "space_to_batch": (_block_samples, {"block_size": "[{0}, {0}]"}),
    "nn.space_to_batch": (_block_samples, {"block_size": "[{0}, {0}]"}),
    "batch_to_space": (_crop_samples, {"block_size": "[{0}, {0}]"}),
    "nn.conv2d": (_one(input=lambda: _ramp(), filter=lambda: tf.ones([2, 2, 1, 1]), strides=[1, 1, 1, 1],
                       padding="VALID"), {}),
    "nn.conv1d": (_one(value=lambda: tf.reshape(tf.range(4.0), [1, 4, 1]), filters=lambda: tf.ones([2, 1, 1]),
                       stride=1, padding="VALID"), {}),
    "nn.conv3d": (_one(input=lambda: _volume(), filter=lambda: tf.ones([2, 2, 2, 1, 1]), strides=[1] * 5,
                       padding="VALID"), {}),
    "nn.conv2d_transpose": (_one(value=lambda: tf.ones([1, 2, 2, 1]), filter=lambda: tf.ones([2, 2, 1, 1]),
                                 output_shape=[1, 4, 4, 1], strides=[1, 2, 2, 1], padding="VALID"), {}),
    "nn.conv3d_transpose": (_one(value=lambda: tf.ones([1, 2, 2, 2, 1]), filter=lambda: tf.ones([2, 2, 2, 1, 1]),
                                 output_shape=[1, 4, 4, 4, 1], strides=[1, 2, 2, 2, 1], padding="VALID"), {}),
    "nn.convolution": (_one(input=lambda: _ramp(), filter=lambda: tf.ones([2, 2, 1, 1]), padding="VALID",
                            dilation_rate=[2, 2]), {}),
    "nn.avg_pool": (_one(value=lambda: _ramp(), **_POOL), {}),
    "nn.avg_pool2d": (_one(value=lambda: _ramp(), **_POOL), {}),
    "nn.max_pool": (_one(value=lambda: _ramp(), **_POOL), {}),
    "nn.max_pool_with_argmax": (_one(input=lambda: _ramp(), Targmax=tf.int64, **_POOL), {}),
    "nn.depthwise_conv2d": (_one(input=lambda: _ramp(), filter=lambda: tf.ones([2, 2, 1, 1]),
                                 strides=[1, 1, 1, 1], padding="VALID", rate=[2, 2]), {}),
    "nn.separable_conv2d": (_one(input=lambda: _ramp(), depthwise_filter=lambda: tf.ones([2, 2, 1, 1]),
                                 pointwise_filter=lambda: tf.ones([1, 1, 1, 1]), strides=[1, 1, 1, 1],
                                 padding="VALID", rate=[2, 2]), {}),
    "nn.pool": (_one(input=lambda: _ramp(), window_shape=[2, 2], pooling_type="MAX", padding="VALID",
                     dilation_rate=[2, 2]), {}),
    "nn.moments": (_one(x=_MATRIX, axes=[1], keep_dims=True), {}),
    "nn.sufficient_statistics": (_one(x=_MATRIX, axes=[1], keep_dims=True), {}),
    "nn.weighted_moments": (_one(x=_MATRIX, axes=[1], frequency_weights=lambda: tf.ones([2, 3]),
                                 keep_dims=True), {}),
    "nn.batch_norm_with_global_normalization": (_one(t=lambda: _ramp(), m=lambda: tf.constant([0.5]), v=lambda: tf.constant([2.0]),
                                                     beta=lambda: tf.constant([0.1]), gamma=lambda: tf.constant([1.5]),
                                                     variance_epsilon=1e-3,
                                                     scale_after_normalization=True), {}),
    "nn.softmax_cross_entropy_with_logits": (_one(labels=[[0.2, 0.8], [1.0, 0.0]],
                                                  logits=[[1.0, 2.0], [0.5, -1.0]], dim=0), {}),
    "reduce_all": (_one(input_tensor=_BOOLS, reduction_indices=1, keep_dims=True), {}),
    "reduce_any": (_one(input_tensor=_BOOLS, reduction_indices=1, keep_dims=True), {}),
    "math.reduce_all": (_one(input_tensor=_BOOLS, reduction_indices=1, keep_dims=True), {}),
    "math.reduce_any": (_one(input_tensor=_BOOLS, reduction_indices=1, keep_dims=True), {}),
    "reverse_sequence": (_one(input=_MATRIX, seq_lengths=[2, 3], seq_dim=1, batch_dim=0), {}),
    "cond": (_one(pred=True, fn1=lambda: tf.constant(1.0), fn2=lambda: tf.constant(2.0)), {}),
    "image.crop_and_resize": (_one(image=lambda: _ramp(), boxes=[[0.0, 0.0, 1.0, 1.0]], box_ind=[0],
                                   crop_size=[2, 2]), {}),
    "io.decode_raw": (_one(bytes=lambda: tf.constant([b"\x01\x02"]), out_type=tf.uint8), {}),
    "sparse.add": (lambda: [((_sparse(), _sparse()), {"thresh": 5.0})], {}),
    "sparse.concat": (lambda: [((), {"axis": 1, "sp_inputs": [_sparse(), _sparse()], "expand_nonconcat_dim": True})], {}),
    "sparse.reduce_sum": (lambda: [((_sparse(),), {"reduction_axes": 1, "keep_dims": True})], {}),
    "sparse.reduce_max": (lambda: [((_sparse(),), {"reduction_axes": 1, "keep_dims": True})], {}),
    "strings.reduce_join": (lambda: [((tf.constant([["a", "b"]]),), {"reduction_indices": 1, "keep_dims": True})], {}),
    "strings.to_hash_bucket": (_one(string_tensor=lambda: tf.constant(["a", "b"]), num_buckets=7), {}),
    "strings.to_number": (_one(string_tensor=lambda: tf.constant(["1.5", "-2"])), {}),
}


# A generic sample for the other renames: the first argument a small float matrix, each renamed
# TF1 keyword given a value of its kind. A sample TF1's form itself rejects proves nothing (not run).
def _matrix():
    return tf.constant([[1.0, -2.0, 3.0], [4.0, 5.0, -6.0]])


GENERIC_KEYWORD_VALUES = {
    "keep_dims": True, "reduction_indices": 1, "dim": 1, "dimension": 1, "reduction_axes": 1,
    "squeeze_dims": None,  # needs a size-1 axis: see _generic_samples
    "input_tensor": "x", "t": "x", "value": "x", "tensor": "x", "targets": "x", "msg": "checked",
    "preferred_dtype": tf.float32,
}


def _generic_samples(path, v1_params, renames):
    if not v1_params or not renames or any(old not in GENERIC_KEYWORD_VALUES for old in renames):
        return None
    x = _matrix()
    kwargs = {}
    for old in renames:
        value = GENERIC_KEYWORD_VALUES[old]
        kwargs[old] = x if value == "x" else value
    if "squeeze_dims" in renames:
        x = tf.constant([[1.0, 2.0, 3.0]])
        kwargs["squeeze_dims"] = [0]
    if v1_params[0] in renames:
        kwargs[v1_params[0]] = x
        return [((), kwargs)]
    if "targets" in renames:  # weighted_cross_entropy_with_logits(targets, logits, pos_weight)
        return [((), {"targets": tf.nn.sigmoid(x), "logits": x, "pos_weight": 2.0})]
    return [((x,), kwargs)]


def prove_renames(path, v1_obj, v2_obj, renames, v1_params=None):
    """For each keyword rename with a sample: recorded in renames_proven when the plain rename
    gives TF1's outputs; arg_values[old] = form when only the value in that form does
    (`block_size=2` -> `block_shape=[2, 2]`: TF2's takes one size per spatial dimension);
    args_differ[old] = what happened when neither does (the linter then has no fix for it)."""
    found = RENAME_SAMPLES.get(path)
    if found is None:
        samples = _generic_samples(path, v1_params, renames)
        if samples is None:
            return {}
        found = (lambda: samples, {})
    make, forms = found
    out = {}
    proven = set()
    for args, kwargs in make():
        before = _outcome(lambda: v1_obj(*args, **kwargs))
        if before[0] == "error":
            if path in RENAME_SAMPLES:
                raise SystemExit(f"rename sample for {path} fails in TF1's form: {before[1]}")
            return {}  # the generic sample does not fit this function: not run
        for old, value in kwargs.items():
            if old not in renames:
                continue
            plain = {renames.get(k, k): v for k, v in kwargs.items()}
            after = _outcome(lambda: v2_obj(*args, **plain))
            if after[0] != "error" and _largest_difference(before[1], after[1]) <= 1e-5:
                proven.add(old)
                continue
            failure = after[1] if after[0] == "error" else "other values"
            form = forms.get(old)
            if form is not None:
                shaped = dict(plain, **{renames[old]: eval(form.format(repr(value)))})  # noqa: S307 - our own forms
                again = _outcome(lambda: v2_obj(*args, **shaped))
                if again[0] != "error" and _largest_difference(before[1], again[1]) <= 1e-5:
                    out.setdefault("arg_values", {})[old] = form
                    continue
            shown = "x" if hasattr(value, "shape") else repr(value)
            out.setdefault("args_differ", {})[old] = (
                f"`{renames[old]}={shown}` {'raises ' + failure if after[0] == 'error' else 'gives ' + failure}")
    if proven - set(out.get("args_differ", {})):
        out["renames_proven"] = sorted(proven - set(out.get("args_differ", {})))
    return out


# --------------------------------------------------------------------------- build
def build():
    counters = {"arg_mappings_dropped": 0, "arg_mappings_unverifiable": 0, "_dropped_args": []}
    walked, unlistable = walk_v1()
    spec, table_paths = table_v1_paths()
    kw_renames = {k[3:]: v for k, v in spec.function_keyword_renames.items()
                  if k.startswith("tf.")}
    transformers = {k[3:]: getattr(v, "func", v).__name__.strip("_").replace("_transformer", "")
                    for k, v in spec.function_transformers.items() if k.startswith("tf.")}
    reorders = {k[3:]: v for k, v in spec.function_reorders.items() if k.startswith("tf.")}

    # Candidate paths: walked + members of unlistable modules + TF tables' v1 paths + extras.
    candidates = {p: "dir" for p in walked}
    for mod, names in KNOWN_V1_MEMBERS.items():
        for name in names:
            candidates.setdefault(f"{mod}.{name}", "tf1.15_api")
    for p in table_paths:
        head = p.split(".")[0]
        if resolve(tf.compat.v1, head)[0] is not _MISSING:
            candidates.setdefault(p, "tf_tables")
    for p in EXTRA_V1_PATHS:
        candidates.setdefault(p, "tf1_keras_api")
    for mod in unlistable:
        candidates.setdefault(mod, "dir")

    removed, changed = {}, {}
    for path in sorted(candidates):
        if resolve(tf, path)[0] is not _MISSING:
            continue
        works, resolves, error, probe = probe_v1(path)
        obj = resolve(tf.compat.v1, path)[0]
        entry = {
            "kind": kind_of(obj) if obj is not _MISSING else kind_by_name(path.split(".")[-1]),
            "v1_available": works,
        }
        if path in unlistable:
            entry["v1_available"] = False
            error = unlistable[path]
            probe = "dir"
        if not works or path in unlistable:
            entry["error"] = error
            entry["probe"] = probe
            if resolves:
                entry["v1_resolves"] = True
        if candidates[path] != "dir":
            entry["listed_from"] = candidates[path]
        removed[path] = entry

    # Replacements from TensorFlow's tables.
    dropped = {}
    table_targets = {}
    for old, new in sorted(all_renames_v2.symbol_renames.items()):
        if not old.startswith("tf."):
            continue
        target, native = normalize_target(new)
        ok = None
        error = "not a TensorFlow path"
        if target is not None:
            ok, error = check_target(target)
        if ok is None:
            dropped[old[3:]] = {"target": new, "error": error}
            continue
        table_targets[old[3:]] = (target, native)

    for path, entry in removed.items():
        if path in table_targets:
            target, native = table_targets[path]
            if target == f"compat.v1.{path}":
                continue  # "use compat.v1" is the loader's fallback, not a replacement
            rep = {"target": target, "native": native, "source": "tf_tables"}
            v1_obj = resolve(tf.compat.v1, path)[0]
            rep.update(map_arguments(v1_obj, resolve(tf, target)[0], kw_renames.get(path, {}),
                                     counters, path))
            entry["replacement"] = rep
    for path, target, renames, drop_in, note in OWN_REPLACEMENTS:
        entry = removed.get(path)
        if entry is None:
            raise SystemExit(f"own replacement for {path}: not a removed v1 path")
        obj, error = check_target(target)
        if obj is None:
            raise SystemExit(f"own replacement {path} -> {target} does not resolve: {error}")
        rep = {"target": target, "native": not target.startswith("compat.v1."),
               "source": "tfmigrate", "drop_in": drop_in}
        if note:
            rep["note"] = note
        v1_obj = resolve(tf.compat.v1, path)[0]
        rep.update(map_arguments(v1_obj, obj, renames, counters, path, compare=drop_in))
        entry["replacement"] = rep

    for path, entry in sorted(removed.items()):
        rep = entry.get("replacement")
        if rep is not None and rep["native"]:
            rep.update(prove(path, resolve(tf.compat.v1, path)[0], resolve(tf, rep["target"])[0], rep))

    for path, entry in removed.items():
        if path in transformers:
            entry["transformer"] = transformers[path]
        if path in reorders:
            entry["v1_positional"] = reorders[path]

    for path, (level, message) in module_deprecations_v2.MODULE_DEPRECATIONS.items():
        p = path[3:]
        if p in removed:
            removed[p]["note"] = " ".join(message.split())

    # Changed: in both tf and tf.compat.v1, with argument changes in TensorFlow's tables.
    for path in sorted(set(kw_renames) | set(reorders) | set(transformers)):
        if path.startswith("contrib") or path in removed:
            continue
        v2_obj = resolve(tf, path)[0]
        v1_obj = resolve(tf.compat.v1, path)[0]
        if v2_obj is _MISSING or v1_obj is _MISSING:
            continue
        entry = {"same_object": v1_obj is v2_obj}
        ren = kw_renames.get(path, {})
        if ren:
            tgt = signature(v2_obj)
            names = None if tgt is None else {n for n, _, _ in tgt}
            kept = {}
            for old, new in sorted(ren.items()):
                if new is None:
                    entry.setdefault("args_removed", []).append(old)
                elif names is None or new in names:
                    kept[old] = new
                else:
                    counters["arg_mappings_dropped"] += 1
                    counters["_dropped_args"].append(f"{path}: {old}->{new}")
            if kept:
                entry["args"] = kept
        if path in reorders:
            entry["v1_positional"] = reorders[path]
        if path in transformers:
            entry["transformer"] = transformers[path]
        if path in TRANSFORM_NOTES:
            entry["note"] = TRANSFORM_NOTES[path]
        entry.update(both_signatures(v1_obj, v2_obj))
        required = required_renamed(v1_obj, entry.get("args", {}))
        if required:
            entry["v1_required"] = required  # TF1's call fails without them: never renamed through compat.v1
        entry.update(prove_renames(path, v1_obj, v2_obj, entry.get("args", {}), entry.get("v1_params")))
        changed[path] = entry

    # Diverged: TensorFlow's tables rename tf.<path> to tf.compat.v1.<path>, and TF 2.21 has both,
    # as different objects. Only code spelled through compat.v1 is TF1 by evidence.
    diverged = {}
    for old, new in sorted(all_renames_v2.symbol_renames.items()):
        path = old[3:]
        if new != f"tf.compat.v1.{path}" or path in removed or path in changed:
            continue
        v2_obj, v1_obj = resolve(tf, path)[0], resolve(tf.compat.v1, path)[0]
        if v2_obj is _MISSING or v1_obj is _MISSING or v1_obj is v2_obj:
            continue
        found = diverged_note(path)
        if found is None:
            raise SystemExit(f"diverged path without a note: {path} (add it to DIVERGED_NOTES)")
        entry = {"when": found[0], "note": found[1]}
        entry.update(both_signatures(v1_obj, v2_obj))
        diverged[path] = entry

    # contrib: absent from both tf and tf.compat.v1; renames whose targets resolve.
    contrib = {}
    for old, new in sorted(all_renames_v2.symbol_renames.items()):
        if not old.startswith("tf.contrib."):
            continue
        p = old[3:]
        if p in dropped:
            continue
        target, native = table_targets[p]
        rep = {"target": target, "native": native, "source": "tf_tables"}
        ren = spec.function_keyword_renames.get(old, {})
        rep.update(map_arguments(_MISSING, resolve(tf, target)[0], ren, counters, p))
        contrib[p] = {"replacement": rep}
    # gone: top-level modules absent from both tf and tf.compat.v1 (measured).
    heads = set(GONE_NOTES)
    for p in table_paths:
        heads.add(p.split(".")[0])
    gone = {}
    for head in sorted(heads):
        in_tf = resolve(tf, head)[0] is not _MISSING
        in_v1 = resolve(tf.compat.v1, head)[0] is not _MISSING
        if in_tf or in_v1:
            continue
        note = GONE_NOTES.get(head)
        if f"tf.{head}" in module_deprecations_v2.MODULE_DEPRECATIONS:
            note = " ".join(module_deprecations_v2.MODULE_DEPRECATIONS[f"tf.{head}"][1].split())
        gone[head] = {"in_compat_v1": False, "in_tf": False, "note": note,
                      "tf_table_paths": sum(1 for k in all_renames_v2.symbol_renames
                                            if k.startswith(f"tf.{head}."))}

    # What `tf.compat.v2` has that `tf` lacks (`enable_v2_behavior`, for TF 1.15 code): code spelled
    # through compat.v2 runs with it, so it is not removed API there.
    compat_v2_only = {}
    for name in sorted(n for n in dir(tf.compat.v2) if not n.startswith("_")):
        if resolve(tf, name)[0] is _MISSING:
            compat_v2_only[name] = {"kind": kind_of(getattr(tf.compat.v2, name))}

    n_rep = sum(1 for e in removed.values() if "replacement" in e)
    n_native = sum(1 for e in removed.values() if e.get("replacement", {}).get("native"))
    tf_dropped = {k: v for k, v in dropped.items() if v["target"].startswith("tf.")}
    counts = {
        "removed": len(removed),
        "removed_v1_available": sum(1 for e in removed.values() if e["v1_available"]),
        "removed_v1_unavailable": sum(1 for e in removed.values() if not e["v1_available"]),
        "removed_with_replacement": n_rep,
        "removed_with_native_replacement": n_native,
        "changed": len(changed),
        "diverged": len(diverged),
        "contrib_replacements": len(contrib),
        "tf_table_renames": len(all_renames_v2.symbol_renames),
        "tf_table_targets_dropped": len(dropped),
        "tf_table_targets_dropped_tf_paths": len(tf_dropped),
        "tf_table_targets_dropped_non_tf": len(dropped) - len(tf_dropped),
        "arg_mappings_dropped": counters["arg_mappings_dropped"],
        "arg_mappings_unverifiable": counters["arg_mappings_unverifiable"],
        "unlistable_modules": len(unlistable),
        "gone_modules": len(gone),
        # Proof by running (see prove / prove_renames): native replacements and keyword renames.
        "replacements_native": sum(1 for e in removed.values() if e.get("replacement", {}).get("native")),
        "replacements_same_object": sum(1 for e in removed.values()
                                        if e.get("replacement", {}).get("proof") == "same object"),
        "replacements_proven_by_running": sum(1 for e in removed.values()
                                              if e.get("replacement", {}).get("proof", "same object") != "same object"),
        "replacements_disproven": sum(1 for e in removed.values() if e.get("replacement", {}).get("differs")),
        "renames_changed": sum(len(e.get("args", {})) for e in changed.values()),
        "renames_proven_by_running": sum(len(e.get("renames_proven", [])) + len(e.get("arg_values", {}))
                                         for e in changed.values()),
        "renames_disproven": sum(len(e.get("args_differ", {})) for e in changed.values()),
    }
    header = {
        "format": FORMAT,
        "generator": "scripts/gen_api_table.py",
        "tensorflow": tf.__version__,
        "keras": keras.__version__,
        "counts": counts,
        "unlistable_modules": unlistable,
    }
    return {
        "header": header,
        "removed": removed,
        "changed": changed,
        "diverged": diverged,
        "contrib": contrib,
        "compat_v2_only": compat_v2_only,
        "dropped_targets": dropped,
        "gone": gone,
    }, counters

# --------------------------------------------------------------------------- namespaces
# Private packages under tensorflow.python whose modules TF1-era code imports directly (tf-slim,
# tensor2tensor, stable-baselines, tflearn, tensorpack in the corpus all import from these and
# from tensorflow.python.pywrap_tensorflow): every module in them that imports without error is
# listed, recursively, except tests (`*_test`, `tests` packages; `test_util` is kept). Other
# subpackages (keras: mapped to `keras.` by the linter; debug: TFM212; distribute, tpu, tools,
# ...) exist as names of `tensorflow.python` but are never judged below it.
PRIVATE_PACKAGES = ("client", "data", "eager", "framework", "layers", "lib", "ops", "platform",
                    "summary", "training", "util")
PRIVATE_MODULES = ("pywrap_tensorflow",)
# Private TF1 names whose public replacement has another name (the linter otherwise suggests only
# the public API of the same name): checked to resolve below.
PRIVATE_HINTS = {
    "VariableV1": "compat.v1.Variable",  # TF1 exported VariableV1 as tf.Variable
    "is_sequence": "nest.is_nested",  # nest.is_sequence was renamed is_nested
    # tensorflow.python.layers.* forwarded these to tf_keras (not installed with Keras 3)
    "BatchNormalization": "keras.layers.BatchNormalization",
    "batch_normalization": "keras.layers.BatchNormalization",
}


def _public_names(mod):
    return {n for n in dir(mod) if not n.startswith("_")}


def _walk_modules(root, prefix, skip, enter, open_ended=lambda mod: False):
    """{module path: sorted attribute names, or None when open_ended(module)} for `root` and the
    submodules it reaches. `skip(path, name)`: attributes never touched (getattr of a lazy loader
    imports it); `enter(module)`: which module attributes to walk into."""
    out = {}

    def walk(mod, prefix, seen):
        if open_ended(mod):
            out[prefix] = None
            return
        names = _public_names(mod)
        out[prefix] = sorted(names)
        for name in sorted(names):
            path = f"{prefix}.{name}" if prefix else name
            if skip(path, name):
                continue
            try:
                obj = getattr(mod, name)
            except Exception:
                continue
            if isinstance(obj, types.ModuleType) and id(obj) not in seen and enter(obj):
                walk(obj, path, seen | {id(obj)})

    walk(root, prefix, {id(root)})
    return out


def walk_public(root):
    """{module path relative to root: sorted attribute names} for the generated API modules.
    Lazy loaders (tf.keras, tf.compat.v1.layers, tf.losses, ...) and compat.v1/v2 are not
    entered: they appear as names only, and the linter never judges below them."""
    return _walk_modules(
        root, "",
        skip=lambda path, name: name == "keras" or path in ("compat.v1", "compat.v2", "compat"),
        enter=lambda obj: type(obj).__name__ not in ("KerasLazyLoader", "LazyLoader")
        and (getattr(obj, "__name__", "") or "").startswith("tensorflow._api."),
    )


def walk_keras():
    """{"keras": names, "keras.backend": names, ...}: `tf.keras` under TF 2.21 is Keras 3's
    `keras._tf_keras.keras` (its modules from there or Keras's public `keras.*` API, never
    `keras.src`), a tree of plain generated modules, so what it lacks is measurable
    (`tf.keras.backend.learning_phase`, `get_session`). A module with a module-level
    `__getattr__` is open-ended (None)."""
    def public_keras(obj):
        name = getattr(obj, "__name__", "") or ""
        return name.startswith("keras.") and ".src" not in name

    return _walk_modules(
        importlib.import_module(tf.keras.__name__), "keras",
        skip=lambda path, name: False, enter=public_keras,
        open_ended=lambda mod: "__getattr__" in vars(mod),
    )


def _is_test(name):
    leaf = name.rsplit(".", 1)[-1]
    return leaf.endswith("_test") or leaf == "tests"


def _closed_getattr(mod):
    """The names a module-level `__getattr__` really serves, or None when it is open-ended.

    Closed: an unknown name raises AttributeError. Then the names it may serve are the string
    constants in its source, each kept only if getattr works (measured: `tensorflow.python.
    layers.normalization` forwards `BatchNormalization` to the missing `tf_keras`, so it is not
    kept and a TF1 import of it is reported)."""
    import ast as _ast

    try:
        getattr(mod, "tfmigrate_probe_no_such_name")
        return None
    except AttributeError:
        pass
    except BaseException:  # noqa: BLE001 - it answers unknown names with something else
        return None
    try:
        tree = _ast.parse(inspect.getsource(vars(mod)["__getattr__"]))
    except (OSError, TypeError, SyntaxError):
        return None
    served = set()
    for node in _ast.walk(tree):
        if isinstance(node, _ast.Constant) and isinstance(node.value, str) and node.value.isidentifier():
            try:
                getattr(mod, node.value)
                served.add(node.value)
            except BaseException:  # noqa: BLE001 - forwarded somewhere that fails: not served
                pass
    return served


def walk_private():
    """{"python.ops.array_ops": names or None (open-ended), ...}; "python" lists the top level."""
    import tensorflow.python as tp

    out = {}

    def names_of(mod):
        if type(mod) is not types.ModuleType:
            return None
        names = _public_names(mod)
        if "__getattr__" in vars(mod):
            forwarded = _closed_getattr(mod)
            if forwarded is None:
                return None
            names |= forwarded
        for info in pkgutil.iter_modules(getattr(mod, "__path__", None) or []):
            names.add(info.name)
        return sorted(names)

    def walk(name):
        try:
            mod = importlib.import_module(name)
        except BaseException:  # noqa: BLE001 - a module that fails to import is never judged
            return
        out[name[len("tensorflow."):]] = names_of(mod)
        for info in pkgutil.iter_modules(getattr(mod, "__path__", None) or []):
            child = f"{name}.{info.name}"
            if not _is_test(child):
                walk(child)

    for sub in PRIVATE_PACKAGES:
        walk(f"tensorflow.python.{sub}")
    for sub in PRIVATE_MODULES:
        walk(f"tensorflow.python.{sub}")
    out["python"] = names_of(tp)
    return out


def build_namespaces():
    tf_ns = walk_public(tf)
    # Subpackages of tensorflow that `import tensorflow.core...` reaches even where they are no
    # attribute of `tf` (core, compiler, lite, ...): they exist, never judged below.
    tf_ns[""] = sorted(set(tf_ns[""]) | {i.name for i in pkgutil.iter_modules(tf.__path__)
                                         if not i.name.startswith("_")})
    v1_ns = walk_public(tf.compat.v1)
    tf_ns.update(walk_keras())  # tf.compat.v1.keras is the same Keras 3 tree: judged through tf
    private = walk_private()
    header = {
        "format": FORMAT,
        "generator": "scripts/gen_api_table.py",
        "tensorflow": tf.__version__,
        "keras": keras.__version__,
        "private_packages": list(PRIVATE_PACKAGES) + list(PRIVATE_MODULES),
        "counts": {
            "tf_modules": len(tf_ns),
            "tf_names": sum(len(v) for v in tf_ns.values()),
            "v1_modules": len(v1_ns),
            "v1_names": sum(len(v) for v in v1_ns.values()),
            "private_modules": len(private),
            "private_open_modules": sum(1 for v in private.values() if v is None),
            "private_names": sum(len(v) for v in private.values() if v),
        },
    }

    def packed(section):
        return {k: (None if v is None else " ".join(v)) for k, v in section.items()}

    for name, target in PRIVATE_HINTS.items():
        if resolve(tf, target)[0] is _MISSING:
            raise SystemExit(f"private hint {name} -> tf.{target} does not resolve")
    return {"header": header, "tf": packed(tf_ns), "v1": packed(v1_ns), "python": packed(private),
            "hints": dict(PRIVATE_HINTS)}


def dumps(table):
    """Stable text: top-level sections one entry per line, compact JSON, sorted keys."""
    def one(v):
        return json.dumps(v, sort_keys=True, separators=(",", ":"), ensure_ascii=True)

    lines = ["{"]
    sections = sorted(table)
    for i, section in enumerate(sections):
        body = table[section]
        lines.append(f"{one(section)}:{{")
        keys = sorted(body)
        for j, key in enumerate(keys):
            comma = "," if j < len(keys) - 1 else ""
            lines.append(f"{one(key)}:{one(body[key])}{comma}")
        lines.append("}" + ("," if i < len(sections) - 1 else ""))
    lines.append("}")
    return "\n".join(lines) + "\n"


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=OUT)
    parser.add_argument("--quiet", action="store_true")
    args = parser.parse_args(argv)
    table, counters = build()
    text = dumps(table)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_bytes(text.encode("ascii"))
    namespaces = build_namespaces()
    ns_text = dumps(namespaces)
    ns_out = args.out.parent / NAMESPACES_NAME
    ns_out.write_bytes(ns_text.encode("ascii"))
    if not args.quiet:
        h = table["header"]
        print(f"TensorFlow {h['tensorflow']}, Keras {h['keras']} -> {args.out} "
              f"({len(text.encode()):,} bytes)")
        for key, value in h["counts"].items():
            print(f"  {key:36} {value}")
        print("  TF-table renames whose target does not resolve in this TensorFlow:")
        for old, info in sorted(table["dropped_targets"].items()):
            print(f"    tf.{old} -> {info['target']}  [{info['error'][:70]}]")
        if counters["_dropped_args"]:
            print("  argument mappings dropped (target keyword missing):")
            for item in counters["_dropped_args"]:
                print(f"    {item}")
        print("  native replacements disproven by running (never offered; compat.v1 instead):")
        for path, entry in sorted(table["removed"].items()):
            if entry.get("replacement", {}).get("differs"):
                print(f"    tf.{path} -> tf.{entry['replacement']['target']}: {entry['replacement']['differs']}")
        unrun = sorted(p for p, e in table["removed"].items()
                       if e.get("replacement", {}).get("native") and not e["replacement"].get("proof")
                       and not e["replacement"].get("differs"))
        print(f"  native replacements not run (no sample; classes, constants, files): {len(unrun)}")
        print("    " + " ".join(unrun))
        print(f"namespaces -> {ns_out} ({len(ns_text.encode()):,} bytes)")
        for key, value in namespaces["header"]["counts"].items():
            print(f"  {key:36} {value}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
