"""Hypothesis building blocks for tests/test_fuzz.py: small TF1-era modules composed at random
from the constructs the rules look for, nested in the Python forms they must survive.

A module is drawn as a list of (depth, text) lines and rendered at the end with a random
indentation per depth (spaces, tabs, odd widths), random line endings (LF, CRLF) and optional
BOM / coding cookie / missing final newline. Names are drawn from the aliases the drawn imports
bind, and sometimes from aliases nothing binds, so the rules see both resolved and unresolved
spellings.
"""
from __future__ import annotations

from typing import List, Tuple

from hypothesis import strategies as st

Lines = List[Tuple[int, str]]

# ---------------------------------------------------------------------------------------------
# Imports: each entry binds some local names for the TensorFlow namespace ("tf"), for Keras
# ("keras"), for the keras.layers module ("layers") or for data ("tfdata").
IMPORTS = [
    ("import tensorflow as tf", {"tf": "tf"}),
    ("import tensorflow.compat.v1 as tf", {"tf": "tf"}),
    ("import tensorflow.compat.v2 as tf", {"tf": "tf"}),
    ("from tensorflow.compat import v1 as tf1", {"tf": "tf1"}),
    ("from tensorflow.compat import v1 as tf", {"tf": "tf"}),
    ("import tensorflow", {"tf": "tensorflow"}),
    ("import tensorflow as anything", {"tf": "anything"}),
    ("import tensorflow.compat.v1 as tfv1", {"tf": "tfv1"}),
    ("import tensorflow.compat.v1", {"tf": "tensorflow.compat.v1"}),
    ("from tensorflow.keras import layers", {"layers": "layers"}),
    ("from tensorflow.keras import layers as kl", {"layers": "kl"}),
    ("from tensorflow.keras.layers import Layer, Dense", {"layer_cls": "Layer"}),
    ("from tensorflow.keras.models import Model", {"model_cls": "Model"}),
    ("import keras", {"keras": "keras"}),
    ("from tensorflow import keras", {"keras": "keras"}),
    ("import tf_keras as keras", {"keras": "keras"}),
    ("from keras import layers", {"layers": "layers"}),
    ("from tensorflow import layers", {"v1layers": "layers"}),
    ("from tensorflow.compat.v1 import layers as v1_layers", {"v1layers": "v1_layers"}),
    ("from tensorflow.compat.v1.layers import dense as fully_connected", {"dense_fn": "fully_connected"}),
    ("from tensorflow import data as tfdata", {"tfdata": "tfdata"}),
    ("from tensorflow import Variable", {"variable_fn": "Variable"}),
    ("from tensorflow.compat.v1 import get_variable", {"get_variable_fn": "get_variable"}),
    ("from tensorflow.compat.v1 import InteractiveSession, Session", {"session_cls": "Session"}),
    ("from tensorflow.contrib import rnn", {"contrib_rnn": "rnn"}),
    ("from tensorflow.contrib import layers as contrib_layers", {"contrib_layers": "contrib_layers"}),
    ("import tensorflow.contrib.slim as slim", {"slim": "slim"}),
    ("from tensorflow.python.ops import variable_scope as vs", {"vs": "vs"}),
    ("from tensorflow.python import debug as tf_debug", {"tf_debug": "tf_debug"}),
    ("import tensorflow.compat.v1 as tf, numpy as np", {"tf": "tf"}),
    ("from tensorflow.compat.v1 import (\n    placeholder,\n    Session as S,\n)", {"placeholder_fn": "placeholder"}),
    ("import numpy as np", {}),
    ("import numpy as onp", {}),
    ("import functools", {}),
    ("from functools import partial", {}),
    ("from __future__ import print_function", {}),
    ("import os, sys", {}),
    ("try:\n    import tensorflow.compat.v1 as tf\nexcept ImportError:\n    import tensorflow as tf", {"tf": "tf"}),
    ("if True:\n    import tensorflow as tf\nelse:\n    tf = None", {"tf": "tf"}),
]

# Names no import binds: the rules must cope with unresolved spellings too.
UNBOUND_TF = ["tf", "tf1", "tensorflow", "np", "self.tf"]

LAYER_FUNCS = [
    "dense", "conv2d", "conv1d", "conv3d", "dropout", "batch_normalization", "max_pooling2d",
    "average_pooling2d", "max_pooling1d", "flatten", "separable_conv2d", "conv2d_transpose",
    "average_pooling1d", "Dense", "layer_norm",
]
LAYER_ARGS = [
    "x", "x, 3", "x, 64, tf.nn.relu", "h, units=32, activation=tf.nn.relu", "inputs=x, units=4",
    "x, 16, name='hidden'", "x, 0.3, training=training", "x, momentum=0.9, training=is_training",
    "x, 32, 5, padding='same', activation=tf.nn.relu", "x, pool_size=2, strides=2", "x, 2, 2, 'same'",
    "x, self.units, use_bias=False", "x, HIDDEN // 2", "x, n, reuse=tf.AUTO_REUSE",
    "x, 3, kernel_initializer=tf.keras.initializers.GlorotUniform(seed=1)", "*args", "x, **kw",
    "x, *dims", "", "x, units=lambda: 3", "x[..., None], 4, 3", "(x), (8)", "x, 8, name=f'l{i}'",
    "x,\n    10,\n    name='logits',  # scores\n", "x, 3, 'same', 'channels_last', 1, tf.nn.relu, True, 'zeros'",
    "x, units=3, units=4", "x, reuse=True, name='shared'", "x, filters=4, kernel_size=(3, 3), strides=(1, 1)",
]
VAR_ARGS = [
    "1.0", "0.0, name='bias'", "tf.zeros([units])", "0, False, None, True, None, 'count'",
    "1.0, trainable=False", "initial_value=2.0, dtype='float32'", "tf.zeros([0]), validate_shape=False",
    "1.0, caching_device='/cpu:0'", "*args", "1.0, **kwargs", "lambda: tf.zeros([2])",
    "1.0, name=prefix + '_x'", "tf.random.normal([3, 3]),\n    True,\n    name='w',\n", "",
    "1.0, constraint=tf.keras.constraints.NonNeg()", "1.0, name='block/scale'",
    "1.0, synchronization=tf.VariableSynchronization.ON_READ", "x", "1.0, trainable=trainable",
]
GETVAR_ARGS = [
    "'w', [2]", "'w', [4, 4]", "'kernel', [input_shape[-1], 4]", "name='b', shape=[3]",
    "'table', [vocab, dim], tf.float32, tf.random_normal_initializer(stddev=0.02)",
    "'bias', shape=[dim], initializer=tf.zeros_initializer(), trainable=None",
    "'step', initializer=tf.constant(0), trainable=False", "'w', [4, units]", "name, shape",
    "'parts', [8, 2], partitioner=tf.fixed_size_partitioner(2)", "'c', [1], collections=['mine']",
    "'w', [8, 4]", "'x', [], regularizer=tf.keras.regularizers.l2(1e-4)", "*a, **k", "",
    "'w' + str(i), [2]", "f'w{i}', [2]", "'w', [2], reuse=True",
]
SHAPE_READS = [
    "x.shape[0]", "x.shape[-1]", "x.get_shape()[1]", "x.get_shape().as_list()", "x.shape.as_list()",
    "x.shape[1:3]", "x.shape[:2] + (3,)", "int(x.shape[0])", "x.get_shape()[0].value", "x.shape",
    "x.shape[0] if x.shape else 1", "x.shape[i]", "tf.shape(x)[0]", "len(x.shape)", "x.shape.rank",
    "y.shape[0]", "x['image'].shape[-1]", "x.shape[x.shape[0]]",
]
OPTIMIZERS = [
    "AdamOptimizer(0.01)", "AdamOptimizer(1e-3, beta1=0.8)", "GradientDescentOptimizer(0.1)",
    "MomentumOptimizer(0.1, momentum=0.9, use_nesterov=True)", "MomentumOptimizer(0.1, 0.9)",
    "RMSPropOptimizer(0.01, decay=0.95)", "AdagradOptimizer(0.1, use_locking=True)",
    "ProximalAdagradOptimizer(0.1)", "AdamOptimizer(learning_rate=lr, epsilon=1e-8, name='adam')",
    "AdamOptimizer(*opt_args, **opt_kwargs)", "AdamOptimizer()", "AdadeltaOptimizer(1.0, rho=0.9)",
    "FtrlOptimizer(0.1, l1_regularization_strength=0.1)", "Optimizer",
]
REMOVED_ONE_LINERS = [
    "init = {tf}.global_variables_initializer()", "{tf}.local_variables_initializer()",
    "sess.run({tf}.initialize_all_variables())", "vs_ = {tf}.get_collection({tf}.GraphKeys.TRAINABLE_VARIABLES)",
    "params = {tf}.trainable_variables()", "{tf}.add_to_collection('losses', loss)",
    "{tf}.reset_default_graph()", "g = {tf}.get_default_graph()", "saver = {tf}.train.Saver()",
    "saver = {tf}.train.Saver(max_to_keep=5, var_list=params)", "{tf}.enable_eager_execution()",
    "{tf}.enable_v2_behavior()", "{tf}.disable_eager_execution()", "{tf}.disable_v2_behavior()",
    "est = {tf}.estimator.Estimator(model_fn, model_dir='/tmp')", "spec = {tf}.estimator.EstimatorSpec(mode, loss=loss)",
    "cell = {tf}.nn.rnn_cell.LSTMCell(num_units=128)", "cell = {tf}.nn.rnn_cell.BasicLSTMCell(64, forget_bias=1.0)",
    "stack = {tf}.nn.rnn_cell.MultiRNNCell([cell, cell])", "drop = {tf}.nn.rnn_cell.DropoutWrapper(cell, output_keep_prob=0.5)",
    "outputs, state = {tf}.nn.dynamic_rnn(cell, x, dtype={tf}.float32)", "y = {tf}.to_float(x)",
    "y = {tf}.to_int32(x)", "y = {tf}.log(x)", "y = {tf}.reduce_sum(x, keep_dims=True)",
    "y = {tf}.random_uniform([2])", "{tf}.set_random_seed(1)", "y = {tf}.Print(x, [x])",
    "config = {tf}.ConfigProto(allow_soft_placement=True)", "config.gpu_options.allow_growth = True",
    "sess = {tf}.InteractiveSession(config=config)", "default = {tf}.get_default_session()",
    "gs = {tf}.train.get_or_create_global_step()", "train_op = opt.minimize(loss, global_step=gs)",
    "model.load_weights('w.h5', by_name=True)", "model.load_weights(path, by_name=True, skip_mismatch=True)",
    "model.load_weights(\n    f'runs/{{run}}/final.weights.h5',\n    by_name=True,\n)",
    "m = {tf}.reduce_mean({tf}.image.decode_png(data, channels=3), axis=[0, 1])",
    "s = {tf}.reduce_sum({tf}.io.decode_raw(rec, out_type={tf}.uint8))",
    "q = {tf}.cast(x * 255.0, {tf}.uint8)", "t = {tf}.math.reduce_sum(input_tensor=q)",
    "s = {tf}.reduce_sum(q, 1)", "sess = {tf_debug}.LocalCLIDebugWrapperSession(sess)",
    "hook = {tf_debug}.LocalCLIDebugHook()", "AUTOTUNE = {tf}.contrib.data.AUTOTUNE",
    "init = {tf}.contrib.layers.xavier_initializer(seed=3)", "reg = {tf}.contrib.layers.l2_regularizer(scale=wd)",
    "net = {tf}.contrib.layers.fully_connected(x, 10)", "flat = {tf}.contrib.framework.nest.flatten(s)",
    "c = {tf}.contrib.rnn.GRUCell(16)", "c = {contrib_rnn}.BasicRNNCell(8)", "x = {slim}.conv2d(x, 32, [3, 3])",
    "i = {contrib_layers}.xavier_initializer()", "y = {tf}.contrib", "import tensorflow.contrib.slim as slim",
    "from tensorflow.contrib.framework import arg_scope", "from tensorflow.contrib import *",
    "x = {placeholder_fn}({tf}.float32)", "s = {session_cls}()", "y = {tf}.compat.v1.placeholder({tf}.float32, [None])",
    "y = {tf}.placeholder_with_default(1.0, [])", "y = {tf}.sparse_placeholder({tf}.float32)",
    "{tf}.logging.set_verbosity({tf}.logging.INFO)", "{tf}.summary.FileWriter('/tmp')",
    "{tf}.GraphKeys", "{tf}.Session", "{tf}.app", "del {tf}.app.flags", "{tf}.train.AdamOptimizer",
    "{tf}.app.flags.FLAGS.lr = 0.1", "{tf}.Session.run", "print({tf}.Session)", "type({tf}.Session())",
]


def _pick(draw, names, key, fallback):
    """An alias bound for `key`, or (sometimes) an unbound spelling."""
    bound = names.get(key)
    if bound and draw(st.integers(0, 9)):
        return bound
    return draw(st.sampled_from(fallback))


class Ctx:
    """What the generator knows while it draws one module."""

    def __init__(self, draw, names):
        self.draw = draw
        self.names = names

    def tf(self):
        return _pick(self.draw, self.names, "tf", UNBOUND_TF)

    def keras(self):
        tf = self.tf()
        return _pick(self.draw, self.names, "keras", [f"{tf}.keras", "keras", f"{tf}.compat.v1.keras"])

    def layers(self):
        return _pick(self.draw, self.names, "layers", [f"{self.keras()}.layers", "layers"])

    def fmt(self, text):
        """Fill {tf}, {keras}, ... placeholders with drawn aliases."""
        keys = {
            "tf": self.tf(),
            "keras": self.keras(),
            "layers": self.layers(),
            "tf_debug": self.names.get("tf_debug", f"{self.tf()}.python.debug"),
            "contrib_rnn": self.names.get("contrib_rnn", f"{self.tf()}.contrib.rnn"),
            "contrib_layers": self.names.get("contrib_layers", f"{self.tf()}.contrib.layers"),
            "slim": self.names.get("slim", "slim"),
            "placeholder_fn": self.names.get("placeholder_fn", f"{self.tf()}.placeholder"),
            "session_cls": self.names.get("session_cls", f"{self.tf()}.Session"),
        }
        return text.format(**keys)

    def i(self, a, b):
        return self.draw(st.integers(a, b))

    def pick(self, seq):
        return self.draw(st.sampled_from(seq))

    def flag(self, p=2):
        """True with chance 1/p."""
        return self.draw(st.integers(0, p - 1)) == 0


def _lines(text: str, depth: int) -> Lines:
    """A possibly multi-line statement: continuation lines keep their own relative indent."""
    parts = text.split("\n")
    return [(depth, parts[0])] + [(depth, p) if p.strip() else (depth, p) for p in parts[1:]]


# ---------------------------------------------------------------------------------------------
# Simple statements. Each returns the text of one logical statement (maybe several lines).

def functional_layer(c: Ctx) -> str:
    func = c.pick(LAYER_FUNCS)
    args = c.pick(LAYER_ARGS).replace("tf.", c.tf() + ".")
    spelled = c.pick([
        f"{c.tf()}.layers.{func}", f"{c.tf()}.compat.v1.layers.{func}",
        f"{c.names.get('v1layers', 'layers')}.{func}", c.names.get("dense_fn", f"{c.tf()}.layers.dense"),
        f"{c.tf()}.keras.layers.{func}",
    ])
    target = c.pick(["x = ", "h = ", "return ", "net = ", "self.out = ", "", "x, y = ", "logits = (", "outs += [", "yield "])
    close = {"logits = (": ")", "outs += [": "]"}.get(target, "")
    return f"{target}{spelled}({args}){close}"


def variable_store(c: Ctx) -> str:
    tf = c.tf()
    var = c.pick([f"{tf}.Variable", f"{tf}.compat.v1.Variable", c.names.get("variable_fn", f"{tf}.Variable"),
                  f"{c.keras()}.Variable", "Variable"])
    getvar = c.pick([f"{tf}.get_variable", f"{tf}.compat.v1.get_variable", c.names.get("get_variable_fn", f"{tf}.get_variable"),
                     f"{c.names.get('vs', 'vs')}.get_variable"])
    make = c.pick([f"{var}({c.pick(VAR_ARGS)})", f"{getvar}({c.pick(GETVAR_ARGS)})"]).replace("tf.", f"{tf}.")
    attr = c.pick(["w", "b", "kernel", "bias", "gain", "table", "v", "state", "_private", "__mangled"])
    owner = c.pick(["self", "self", "self", "self", "self", "me", "cls", "obj", "self.inner"])
    form = c.i(0, 15)
    if form == 0:
        return f"{owner}.{attr} = {make}"
    if form == 1:
        return f"{owner}.{attr}: {tf}.Variable = {make}"
    if form == 2:
        return f"{owner}.{attr}, {owner}.{attr}2 = {make}, {make}"
    if form == 3:
        return f"{owner}.{attr}s = [{make}, {make}]"
    if form == 4:
        return f"{owner}.{attr}s = ({make},\n        {make})"
    if form == 5:
        return f"{owner}.{attr}s = {{'k': {make}}}"
    if form == 6:
        return f"{owner}.{attr}s = [{make} for i in range(3)]"
    if form == 7:
        return f"{owner}.{attr}s.append({make})"
    if form == 8:
        return f"{owner}.{attr}s += [{make}]"
    if form == 9:
        return f"{owner}.{attr}s['k'] = {make}"
    if form == 10:
        return f"{owner}.{attr} = {make} if units else None"
    if form == 11:
        return f"local = {make}"
    if form == 12:
        return f"{owner}.{attr} = local = {make}"
    if form == 13:
        return f"{owner}.{attr}s.insert(0, {make})"
    if form == 14:
        return f"{attr} = {make}"
    return f"{owner}.{attr} = {make}  # noqa: TFM102"


def dataset_statement(c: Ctx) -> str:
    tf = c.tf()
    source = c.pick([
        f"{tf}.data.Dataset.range(3)", f"{tf}.data.TFRecordDataset(files)", "ds",
        f"{c.names.get('tfdata', tf + '.data')}.Dataset.from_tensor_slices(files)", "train_ds", "dataset",
        f"{tf}.data.TextLineDataset('x.txt')", f"{tf}.compat.v1.data.Dataset.range(3)", "load()",
    ])
    steps = []
    for _ in range(c.i(0, 4)):
        steps.append(c.pick([
            f".map({c.pick(['parse', 'preprocess', 'decode', 'self._parse', 'lambda x: ' + c.pick(SHAPE_READS), 'functools.partial(parse, 2)', 'partial(crop, fraction=0.5)', 'lambda x, y: (x, y)', 'len', 'map_fn', 'lambda x: x.numpy()', 'lambda x: np.sum(x)', 'parse, num_parallel_calls=4'])})",
            f".map(map_func={c.pick(['parse', 'self._scale', 'lambda e: e'])})",
            f".repeat({c.pick(['True', 'False', 'count=False', 'count=True', '', '2', 'None', '(False)', 'not True', 'True  # forever', 'False,'])})",
            ".batch(4)", ".shuffle(1000)", ".prefetch(1)", ".apply(fn)", ".filter(lambda x: x.shape[0] > 2)",
            ".flat_map(lambda x: ds.map(parse))", ".interleave(lambda f: TF(f))",
        ]))
    chain = source + "".join(steps)
    form = c.i(0, 4)
    if form == 0:
        return f"ds = {chain}"
    if form == 1 and steps:
        return "ds = (\n    " + source + "\n    " + "\n    ".join(steps) + "  # comment\n)"
    if form == 2:
        return f"return {chain}"
    if form == 3:
        return f"ds = {chain}.repeat({c.pick(['True', 'False'])})"
    return chain


def session_statement(c: Ctx) -> str:
    tf = c.tf()
    return c.pick([
        f"sess = {tf}.Session()", f"sess = {tf}.compat.v1.Session(config=config)",
        "print(sess.run(y, feed_dict={x: [1.0]}))", "sess.run(train_op)", "sess.run([a, b], {x: batch})",
        "val = y.eval(feed_dict={x: [2.0]})", "train_op.run()", "return self._sess.run(\n    y, feed_dict={x: batch}\n)",
        "model.runner.run(model.loss, feed_dict={model.x: data})", f"x = {tf}.placeholder({tf}.float32, [None, 28, 28, 1])",
        f"x = {tf}.placeholder({tf}.float32, shape=[None], name='x')", f"x = {tf}.placeholder(dtype={tf}.int32)",
        f"self._sess = {tf}.Session(graph={tf}.Graph())", "sess.close()",
    ])


def flags_statement(c: Ctx) -> str:
    tf = c.tf()
    return c.pick([
        f"{tf}.app.flags.DEFINE_string('data_dir', '/tmp', 'Where.')", f"{tf}.flags.DEFINE_integer('steps', 100, '')",
        f"{tf}.app.flags.DEFINE_boolean('fast', False, 'Skip.')", f"FLAGS = {tf}.app.flags.FLAGS",
        f"flags = {tf}.app.flags", "flags.DEFINE_float('lr', 0.1, 'Learning rate.')", "FLAGS = flags.FLAGS",
        f"{tf}.app.run()", f"{tf}.app.run(main=main)", f"{tf}.app.run(main)", f"{tf}.app.run(main=train, argv=sys.argv)",
        f"return {tf}.app.flags.FLAGS.batch", f"{tf}.flags.FLAGS.mark_as_parsed()", f"FLAGS = {tf}.flags.FLAGS",
        f"from tensorflow.app import flags", f"{tf}.app.flags.DEFINE_string(\n    'mode',\n    'train',\n    'help',\n)",
    ])


def optimizer_statement(c: Ctx) -> str:
    tf = c.tf()
    opt = c.pick(OPTIMIZERS)
    spelled = c.pick([f"{tf}.train.{opt}", f"{tf}.compat.v1.train.{opt}"])
    return c.pick([f"opt = {spelled}", f"train_op = {spelled}.minimize(loss)", f"self.opt = {spelled}",
                   f"return {spelled}", f"optimizer = {spelled}  # noqa", f"opts = [{spelled}, {spelled}]"])


def tf_function_body_statement(c: Ctx) -> str:
    return c.pick([
        "print('step', x)", "print(f'y = {y}')", "print(x, file=None)", "history.append(y)",
        "calls += 1", "self.losses.append(loss)", "y = x.numpy()", "total = np.sum(y, axis=0)",
        "print('loss:', loss, sep=' ')", "print()", "tf.print(x)", "items.extend([x])",
        f"h = {c.layers()}.Dense(4)(x)", f"norm = {c.layers()}.LayerNormalization()",
        f"return {c.keras()}.layers.Conv2D(4, 3)(x)", "self.proj = layers.Dense(2)", "peak = onp.max(y)",
    ])


def misc_statement(c: Ctx) -> str:
    return c.pick([
        "pass", "x = 1", "y = x * 2", "return x", "del x", "x += 1", "global calls", "nonlocal_var = 0",
        "assert x is not None, 'x'", "raise ValueError('bad')", "continue", "break", "yield x",
        "x = lambda a: a.shape[0]", "(n := 3)", "print(f'{x=}')", "a, *b = c", "x = [i for i in range(3) if i]",
        "x = {k: v for k, v in d.items()}", "x = 'tensorflow # noqa: TFM105'", "import tensorflow as tf",
        "x = '''multi\n# noqa: TFM101\nline'''", "x = \\\n    1", "a = 1; b = 2", "...", "return",
        "w = x if x else y", "x = not x", "x = await y", "lst[0] = 1", "x: int = 1", "x: int",
        "print('tensorflow', 'keras')", "x = b'\\x00'", "x = r'\\s'", "x = (yield)",
    ])


def one_liner(c: Ctx) -> str:
    return c.fmt(c.pick(REMOVED_ONE_LINERS))


def with_comment(c: Ctx, stmt: str) -> str:
    if c.flag(5):
        first, sep, rest = stmt.partition("\n")
        comment = c.pick(["# comment", "# noqa", "# noqa: TFM105", "# noqa: TFM101, TFM102", "# noqa:TFM999",
                          "# type: ignore", "# expect: TFM101", "#", "# noqa: TFM002", "# tfmigrate: noqa"])
        if sep:  # a comment after the first line of a multi-line statement may end up in a string
            return stmt
        return f"{first}  {comment}"
    return stmt


def simple_statement(c: Ctx, in_function: bool) -> str:
    kind = c.i(0, 12)
    maker = [functional_layer, variable_store, dataset_statement, session_statement, flags_statement,
             optimizer_statement, tf_function_body_statement, misc_statement, one_liner, one_liner,
             variable_store, one_liner, one_liner][kind]
    stmt = maker(c)
    if not in_function and stmt.startswith(("return", "yield")):
        stmt = "value = " + stmt.split(" ", 1)[1] if " " in stmt else "pass"
    return with_comment(c, stmt)


# ---------------------------------------------------------------------------------------------
# Compound statements.

def body(c: Ctx, depth: int, budget: int, in_function: bool, in_class: bool = False) -> Lines:
    out: Lines = []
    for _ in range(c.i(1, 4)):
        out += statement(c, depth, budget - 1, in_function)
    if c.flag(4):
        out.insert(c.i(0, len(out)), (depth, c.pick(["", "# a comment", "    # indented comment", "\t", ""])))
    return out


def decorators(c: Ctx, in_class: bool) -> List[str]:
    tf = c.tf()
    options = [f"@{tf}.function", f"@{tf}.function(jit_compile=True)", "@functools.wraps(f)", "@property",
               f"@{tf}.function(input_signature=[{tf}.TensorSpec([None], {tf}.float32)])", "@staticmethod",
               "@classmethod", "@some.decorator(x=1)", f"@{tf}.compat.v1.function", "@tf_function"]
    return [c.pick(options) for _ in range(c.i(0, 2))]


def function_def(c: Ctx, depth: int, budget: int, in_class: bool) -> Lines:
    name = c.pick(["parse", "preprocess", "decode", "model", "tower", "step", "main", "input_fn", "helper",
                   "map_fn", "crop", "train", "_parse", "_scale", "build", "call", "__init__", "block", "dense"])
    if in_class:
        params = c.pick(["self", "self, x", "self, x, training=None", "self, inputs, *args, **kwargs",
                         "self, input_shape", "me, x", "self, units=3, **kw", "cls", "x", ""])
    else:
        params = c.pick(["x", "x, y", "image, label", "features, is_training, n=10", "", "argv", "*args, **kw",
                         "x, /, y=1, *, z", "size, image, label", "record", "x: tf.Tensor = None"])
    out: Lines = [(depth, d) for d in decorators(c, in_class)]
    header = f"{c.pick(['def', 'def', 'def', 'async def'])} {name}({params}):"
    if c.flag(8):  # a one-line body
        return out + [(depth, f"{header} {simple_statement(c, True)}")]
    out.append((depth, header))
    if c.flag(4):
        out.append((depth + 1, c.pick(['"""Docstring: tf.layers.dense(x, 3)."""', "'''# noqa: TFM101'''", '"doc"'])))
    if in_class and name == "__init__" and c.flag(2):
        out.append((depth + 1, c.pick(["super().__init__()", "super().__init__(**kwargs)",
                                        f"super({c.pick(['Net', 'Model', 'X'])}, self).__init__()"])))
    out += body(c, depth + 1, budget, True)
    return out


def class_def(c: Ctx, depth: int, budget: int) -> Lines:
    keras, layers, tf = c.keras(), c.layers(), c.tf()
    base = c.pick([
        f"{keras}.Model", f"{keras}.layers.Layer", f"{layers}.Layer", f"{keras}.models.Model",
        f"{keras}.Sequential", f"{layers}.Dense", c.names.get("layer_cls", "Layer"), c.names.get("model_cls", "Model"),
        "object", "", "Net", "Base", f"{tf}.Module", f"{tf}.train.Optimizer", f"{tf}.keras.Model, Mixin",
        f"metaclass=abc.ABCMeta", f"{tf}.estimator.Estimator",
    ])
    name = c.pick(["Net", "Base", "Head", "Encoder", "Block", "Tower", "Model", "Trainer", "Problem"])
    head = f"class {name}({base}):" if base else f"class {name}:"
    out: Lines = []
    if c.flag(6):
        out.append((depth, "@dataclasses.dataclass"))
    if c.flag(10):
        return out + [(depth, f"{head} pass")]
    out.append((depth, head))
    if c.flag(3):
        out.append((depth + 1, '"""A docstring."""'))
    for _ in range(c.i(1, 4)):
        kind = c.i(0, 5)
        if kind <= 3:
            out += function_def(c, depth + 1, budget - 1, in_class=True)
        elif kind == 4:
            out.append((depth + 1, c.pick(["units = 3", f"w = {tf}.Variable(1.0)", "pass", "x: int = 1"])))
        else:
            out += class_def(c, depth + 1, budget - 2) if budget > 1 else [(depth + 1, "pass")]
        if c.flag(2):
            out.append((depth + 1, ""))
    return out


def compound(c: Ctx, depth: int, budget: int, in_function: bool) -> Lines:
    tf = c.tf()
    kind = c.i(0, 10)
    if kind == 0:
        out = [(depth, c.pick(["for i in range(3):", "for x in inputs:", "async for x in xs:", "for _ in range(self.depth):"]))]
        out += body(c, depth + 1, budget, in_function)
        if c.flag(4):
            out += [(depth, "else:")] + body(c, depth + 1, budget, in_function)
        return out
    if kind == 1:
        out = [(depth, c.pick(["if training:", "if x is not None:", "if __name__ == '__main__':", "if True:", "if (n := 3) > 2:"]))]
        out += body(c, depth + 1, budget, in_function)
        if c.flag(2):
            out += [(depth, "elif x:")] + body(c, depth + 1, budget, in_function)
        if c.flag(2):
            out += [(depth, "else:")] + body(c, depth + 1, budget, in_function)
        return out
    if kind in (2, 3):
        scope = c.pick([f"{tf}.variable_scope", f"{tf}.compat.v1.variable_scope", f"{c.names.get('vs', 'vs')}.variable_scope",
                        f"{tf}.name_scope", f"{tf}.variable_scope"])
        args = c.pick(["'s'", "'layer'", "'a/b'", "'s', reuse=True", "'s', reuse=tf.AUTO_REUSE", "'s', reuse=False",
                       "name", "'s', reuse=None", "None, default_name='d'", "\n    'emb',\n    initializer=init,\n",
                       "scope", "'s' + str(i)"]).replace("tf.", f"{tf}.")
        item = c.pick([f"{scope}({args})", f"{scope}({args}) as sc", f"{tf}.Session() as sess", f"{scope}({args}), {tf}.device('/cpu:0')",
                       f"{tf}.GradientTape() as tape", f"{tf}.Graph().as_default()", "open(f) as fh", f"({scope}({args}))"])
        return [(depth, f"with {item}:")] + body(c, depth + 1, budget, in_function)
    if kind == 4:
        out = [(depth, "try:")] + body(c, depth + 1, budget, in_function)
        out += [(depth, c.pick(["except ValueError:", "except (A, B) as e:", "except:", "except* TypeError:"]))]
        out += body(c, depth + 1, budget, in_function)
        if c.flag(3):
            out += [(depth, "finally:")] + body(c, depth + 1, budget, in_function)
        return out
    if kind == 5:
        return [(depth, "while x:")] + body(c, depth + 1, budget, in_function)
    if kind in (6, 7):
        return function_def(c, depth, budget, in_class=False)
    if kind == 8:
        return class_def(c, depth, budget)
    if kind == 9:
        return [(depth, c.pick(["match x:"])), (depth + 1, "case {'a': 1}:")] + body(c, depth + 2, budget, in_function) + \
            [(depth + 1, "case _:")] + body(c, depth + 2, budget, in_function)
    return [(depth, c.pick(["if x: ", "for i in y: ", "while 0: ", "with s: "]) + simple_statement(c, in_function))]


def keras_class(c: Ctx, depth: int, budget: int) -> Lines:
    """The shape most fixes work on: a Keras Model/Layer with `__init__`, `build` and `call`."""
    keras, layers, tf = c.keras(), c.layers(), c.tf()
    base = c.pick([f"{keras}.Model", f"{keras}.layers.Layer", f"{layers}.Layer", c.names.get("layer_cls", "Layer"),
                   c.names.get("model_cls", f"{keras}.Model"), "Net", f"{tf}.keras.Model", f"{tf}.keras.layers.Layer",
                   f"{tf}.keras.Model", f"{tf}.keras.layers.Layer"])
    name = c.pick(["Net", "Head", "Block", "Tower"])
    out: Lines = [(depth, f"class {name}({base}):")]
    if c.flag(3):
        out.append((depth + 1, '"""Docstring."""'))
    methods = c.pick([("__init__", "call"), ("call",), ("__init__",), ("__init__", "build", "call"), ("call", "__init__"),
                      ("build", "call", "helper"), ("__init__", "call", "call")])
    for method in methods:
        params = {"__init__": c.pick(["self", "self, units=3, **kwargs", "self, *args, **kwargs", "self, units"]),
                  "call": c.pick(["self, x", "self, x, training=None", "self, inputs, units=16, **kw", "me, x"]),
                  "build": "self, input_shape", "helper": "self, x"}[method]
        if c.flag(4):
            out.append((depth + 1, c.pick(["@tf.function", "@staticmethod", "@property"])))
        out.append((depth + 1, f"def {method}({params}):"))
        inner: Lines = []
        if method == "__init__" and not c.flag(5):
            inner.append((depth + 2, c.pick(["super().__init__()", "super().__init__(**kwargs)", f"super({name}, self).__init__()"])))
        for _ in range(c.i(1, 5)):
            maker = c.pick([functional_layer, functional_layer, variable_store, variable_store, variable_store,
                            tf_function_body_statement, dataset_statement, misc_statement, one_liner])
            if budget > 0 and c.flag(4):
                inner += compound(c, depth + 2, budget - 1, True)
            else:
                inner += _lines(with_comment(c, maker(c)), depth + 2)
        if method in ("call", "helper") and c.flag(2):
            inner.append((depth + 2, "return x"))
        out += inner
        if c.flag(2):
            out.append((depth + 1, ""))
    return out


def map_pipeline(c: Ctx, depth: int, budget: int) -> Lines:
    """A map function that reads static shapes (or calls NumPy, or prints) and a Dataset mapping it."""
    tf = c.tf()
    name = c.pick(["parse", "preprocess", "decode", "map_fn"])
    out: Lines = [(depth, f"def {name}({c.pick(['x', 'x, y', 'x, label', 'size, x', 'x, fraction=0.5'])}):")]
    for _ in range(c.i(1, 4)):
        read = c.pick(SHAPE_READS)
        out += _lines(with_comment(c, c.pick([
            f"h = {read}", f"if {read} == 1:\n    x = x + 1", f"x = {tf}.reshape(x, {read})", f"for i in range({read}):\n    pass",
            f"return {read}, x", f"w = {c.layers()}.Dense({read})", "print(x)", "y = np.sum(x)", "x = x.numpy()",
            f"n = {read} if {read} else 0", f"h, w = {read}, {read}",
        ])), depth + 1)
    if c.flag(2):
        out.append((depth + 1, "return x"))
    mapped = c.pick([name, f"lambda e: {name}(e)", f"functools.partial({name}, 3)", f"partial({name}, fraction=0.25)",
                     f"map_func={name}", f"{name}, num_parallel_calls=4"])
    out.append((depth, f"ds = {tf}.data.Dataset.from_tensor_slices(files).map({mapped}){c.pick(['', '.repeat(False)', '.batch(2).repeat(True)'])}"))
    return out


def tf_function_block(c: Ctx, depth: int, budget: int) -> Lines:
    tf = c.tf()
    out: Lines = [(depth, c.pick([f"@{tf}.function", f"@{tf}.function(jit_compile=True)", f"@{tf}.compat.v1.function"]))]
    out.append((depth, f"def {c.pick(['step', 'train', 'f'])}(x):"))
    if c.flag(3):
        out.append((depth + 1, "global calls"))
    for _ in range(c.i(1, 4)):
        out += statement(c, depth + 1, budget - 1, True) if c.flag(3) else _lines(tf_function_body_statement(c), depth + 1)
    return out


def scope_block(c: Ctx, depth: int, budget: int) -> Lines:
    tf = c.tf()
    scope = c.pick([f"{tf}.variable_scope", f"{tf}.compat.v1.variable_scope"])
    name = c.pick(["'enc'", "'a/b'", "'s', reuse=True", "'s', reuse=False", "'s', reuse=None", "name", "'s',", ""])
    getvar = c.pick([f"{tf}.get_variable", f"{tf}.compat.v1.get_variable"])
    out: Lines = []
    if c.flag(2):
        out.append((depth, f"def {c.pick(['tower', 'block', 'net'])}(x):"))
        depth += 1
    out.append((depth, f"with {scope}({name}):"))
    for _ in range(c.i(1, 3)):
        out += _lines(with_comment(c, f"{c.pick(['w', 'w2', 'b'])} = {getvar}({c.pick(GETVAR_ARGS)})"), depth + 1)
    if c.flag(2):
        out += [(depth + 1, "for i in range(3):"), (depth + 2, f"v = {getvar}('v', [2])")]
    if c.flag(2):
        out.append((depth + 1, "return x * w"))
    return out


TOP_LEVEL = [keras_class, keras_class, map_pipeline, tf_function_block, scope_block]


def top_level(c: Ctx, budget: int) -> Lines:
    if c.flag(2):
        return c.pick(TOP_LEVEL)(c, 0, budget)
    return statement(c, 0, budget, in_function=False)


def statement(c: Ctx, depth: int, budget: int, in_function: bool) -> Lines:
    if budget > 0 and c.flag(3):
        return compound(c, depth, budget, in_function)
    return _lines(simple_statement(c, in_function), depth)


# ---------------------------------------------------------------------------------------------
# Rendering.

INDENT_UNITS = ["    ", "    ", "  ", "\t", " ", "        ", "   ", "\t    ", " \t"]


@st.composite
def tf1_modules(draw, max_blocks: int = 4) -> bytes:
    imports = draw(st.lists(st.sampled_from(IMPORTS), min_size=0, max_size=4))
    if draw(st.integers(0, 4)):  # mostly one import that binds the TensorFlow namespace
        main = draw(st.sampled_from([entry for entry in IMPORTS if "tf" in entry[1]]))
        imports.insert(draw(st.integers(0, len(imports))), main)
    names = {}
    for _, binds in imports:
        names.update(binds)
    c = Ctx(draw, names)
    lines: Lines = []
    if draw(st.integers(0, 3)) == 0:
        lines.append((0, draw(st.sampled_from(['"""Module docstring: import tensorflow as tf."""', "# -*- coding: utf-8 -*-", "#!/usr/bin/env python"]))))
    for text, _ in imports:
        lines += _lines(text, 0)
    if not imports or draw(st.integers(0, 4)) == 0:
        lines.append((0, "# tensorflow"))  # so the cheap prefilter never skips the module
    budget = draw(st.integers(0, 3))
    for _ in range(draw(st.integers(1, max_blocks))):
        if draw(st.booleans()):
            lines.append((0, ""))
        lines += top_level(c, budget)

    # One indentation string per depth, each extending the one above (so tabs and spaces mix
    # consistently, as CPython demands), sometimes an odd unit.
    units = [draw(st.sampled_from(INDENT_UNITS)) for _ in range(12)]
    prefix = [""]
    for unit in units:
        prefix.append(prefix[-1] + unit)
    text_lines = []
    for depth, text in lines:
        if not text.strip():
            text_lines.append(text if draw(st.integers(0, 3)) else prefix[min(depth, 12)] + text)
            continue
        indent = prefix[min(depth, 12)]
        # continuation lines of a multi-line statement are indented relative to its depth
        text_lines.append(indent + text)
    newline = draw(st.sampled_from(["\n", "\n", "\n", "\r\n", "\r\n", "mixed"]))
    if newline == "mixed":
        out = "".join(line + draw(st.sampled_from(["\n", "\r\n"])) for line in text_lines)
    else:
        out = "".join(line + newline for line in text_lines)
    if draw(st.integers(0, 5)) == 0:
        out = out.rstrip("\r\n")  # no final newline
    if draw(st.integers(0, 9)) == 0:
        out += draw(st.sampled_from(["\x0c\n", "   ", "\\\n", "# trailing", "\n\n\n"]))
    data = out.encode("utf-8")
    if draw(st.integers(0, 14)) == 0:
        data = b"\xef\xbb\xbf" + data
    return data
