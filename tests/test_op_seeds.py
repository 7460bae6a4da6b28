"""native.op_seeds: the seed TF1's graph gave each random op, written out.

The count is proven against TensorFlow itself: a TF1 program and its pinned copy run in graph mode
print the same draws. Where the count is not certain, the module is left as it is."""
import textwrap

import libcst as cst
import pytest

from tf_programs import run_python
from tfmigrate.native.op_seeds import pinned
from tfmigrate.native.seed_generators import drawn_apart, drawn_by_generators

HEADER = "import numpy as np\nimport tensorflow as tf\n\n"


def _pin(body: str):
    source = HEADER + textwrap.dedent(body)
    result = pinned(cst.parse_module(source), source)
    return None if result is None else result.code[len(HEADER):]


def test_counts_the_graphs_draws_in_the_order_it_builds_them():
    out = _pin("""\
        tf.set_random_seed(3)
        x = tf.placeholder(tf.float32, [None, 4])
        keep = tf.placeholder(tf.float32)
        flag = tf.placeholder(tf.bool)


        def weight(shape):
            return tf.Variable(tf.truncated_normal(shape, stddev=0.1))


        w = weight([4, 3])
        v = tf.get_variable("v", [3, 2])
        u = tf.get_variable("u", [2, 2], initializer=tf.random_normal_initializer(stddev=0.5))
        z = tf.get_variable("z", [2], initializer=tf.zeros_initializer())
        h = tf.nn.dropout(tf.matmul(x, w), keep)
        h = tf.layers.dense(h, 5, kernel_initializer=tf.zeros_initializer())
        h = tf.layers.dense(h, 5, tf.nn.relu)
        h = tf.layers.dropout(h, rate=0.2, training=flag)
        e = tf.layers.dropout(h, rate=0.2)
        """)
    assert "tf.truncated_normal(shape, stddev=0.1, seed=0)" in out
    assert 'tf.get_variable("v", [3, 2], initializer=tf.glorot_uniform_initializer(seed=1))' in out
    assert "tf.random_normal_initializer(stddev=0.5, seed=2)" in out
    assert 'tf.get_variable("z", [2], initializer=tf.zeros_initializer())' in out  # (no draw)
    assert "tf.nn.dropout(tf.matmul(x, w), keep, seed=3)" in out
    assert "tf.layers.dense(h, 5, kernel_initializer=tf.zeros_initializer())" in out
    assert "tf.layers.dense(h, 5, tf.nn.relu, kernel_initializer=tf.glorot_uniform_initializer(seed=4))" in out
    assert "tf.layers.dropout(h, rate=0.2, training=flag, seed=5)" in out
    assert "e = tf.layers.dropout(h, rate=0.2)\n" in out  # (training=False: no op)


@pytest.mark.parametrize("seed", ["tf.set_random_seed(3)", "tf.random.set_random_seed(3)", "tf.random.set_seed(3)",
                                  "tf.compat.v1.set_random_seed(3)", "tf.compat.v1.random.set_random_seed(3)"])
def test_each_spelling_of_the_graph_seed_seeds_the_count(seed):
    # (in graph mode `tf.random.set_seed(3)` and `tf.compat.v1.set_random_seed(3)` draw the same:
    # both set the graph's seed)
    out = _pin(f"""\
        {seed}
        a = tf.Variable(tf.random_normal([2]))
        b = tf.get_variable("b", [2, 2])
        """)
    assert out is not None and "tf.random_normal([2], seed=0)" in out
    assert "tf.glorot_uniform_initializer(seed=1)" in out


def test_a_new_graph_counts_from_zero_once_seeded_again():
    out = _pin("""\
        tf.set_random_seed(1)
        a = tf.Variable(tf.random_normal([2]))
        tf.reset_default_graph()
        tf.set_random_seed(1)
        b = tf.Variable(tf.random_uniform([2]))
        c = tf.Variable(tf.random_uniform([2]))
        """)
    assert "tf.random_normal([2], seed=0)" in out
    assert "tf.random_uniform([2], seed=0)" in out and "tf.random_uniform([2], seed=1)" in out


def test_reused_variables_draw_nothing_and_each_call_has_its_arguments():
    out = _pin("""\
        tf.set_random_seed(5)
        x = tf.placeholder(tf.float32, [None, 4])
        is_training = True


        def net(h, reuse=False, training=False):
            with tf.variable_scope("net", reuse=reuse):
                h = tf.layers.dense(h, 3)
                h = tf.layers.dropout(h, rate=0.5, training=training)
                return tf.layers.dense(h, 1)


        def critic(h):
            with tf.variable_scope("critic", reuse=tf.AUTO_REUSE):
                with tf.variable_scope("inner"):
                    w = tf.get_variable("w", [1, 2])
                return tf.matmul(h, w)


        train = net(x, training=is_training)
        test = net(x, reuse=True)
        a = critic(train)
        b = critic(test)
        noise = tf.random_normal([2])
        """)
    assert "tf.layers.dense(h, 3, kernel_initializer=tf.glorot_uniform_initializer(seed=0))" in out
    assert "tf.layers.dropout(h, rate=0.5, training=training, seed=1)" in out
    assert "tf.layers.dense(h, 1, kernel_initializer=tf.glorot_uniform_initializer(seed=2))" in out
    assert 'tf.get_variable("w", [1, 2], initializer=tf.glorot_uniform_initializer(seed=3))' in out
    assert "tf.random_normal([2], seed=4)" in out  # (the reused calls drew nothing)


def test_a_scope_reused_on_a_flag_draws_nothing_where_the_flag_is_true():
    """The DCGAN spelling: `with tf.variable_scope("d") as scope: if reuse: scope.reuse_variables()`,
    the flag known at each call; an unknown flag, or an outer scope reused, is not certain."""
    body = """\
        tf.set_random_seed(5)
        x = tf.placeholder(tf.float32, [None, 4])


        def disc(h, reuse=False):
            with tf.variable_scope("d") as scope:
                if reuse:
                    scope.reuse_variables()
                return tf.layers.dense(h, 1, name="out")


        real = disc(x)
        fake = disc(x * 2.0, reuse=True)
        noise = tf.random_normal([2])
        """
    out = _pin(body)
    assert "tf.layers.dense(h, 1, name=\"out\", kernel_initializer=tf.glorot_uniform_initializer(seed=0))" in out
    assert "tf.random_normal([2], seed=1)" in out  # (the reused call drew nothing)
    assert _pin(body.replace("reuse=True)", "reuse=flag)")) is None
    outer = body.replace('with tf.variable_scope("d") as scope:', 'with tf.variable_scope("d") as scope, '
                         'tf.variable_scope("e"):')
    assert _pin(outer) is None


def test_an_rnn_draws_its_cells_kernel_where_it_first_runs_it():
    out = _pin("""\
        tf.set_random_seed(5)
        x = tf.placeholder(tf.float32, [None, 6, 3])


        def rnn(inputs):
            cell = tf.nn.rnn_cell.BasicLSTMCell(8, forget_bias=1.0)
            # the cell's kernel
            outputs, state = tf.nn.dynamic_rnn(cell, inputs, dtype=tf.float32)
            return tf.layers.dense(outputs[:, -1], 2)


        logits = rnn(x)
        lstm = tf.nn.rnn_cell.LSTMCell(4)
        more, _ = tf.nn.dynamic_rnn(lstm, x, dtype=tf.float32, scope="more")
        """)
    assert ("    # the cell's kernel\n"
            "    with tf.variable_scope(tf.get_variable_scope(), initializer=tf.glorot_uniform_initializer(seed=0)):\n"
            "        outputs, state = tf.nn.dynamic_rnn(cell, inputs, dtype=tf.float32)\n") in out
    assert "tf.layers.dense(outputs[:, -1], 2, kernel_initializer=tf.glorot_uniform_initializer(seed=1))" in out
    # an LSTMCell takes the kernel's initializer itself (the cell may run at module level)
    assert "lstm = tf.nn.rnn_cell.LSTMCell(4, initializer=tf.glorot_uniform_initializer(seed=2))\n" in out
    assert "more, _ = tf.nn.dynamic_rnn(lstm, x, dtype=tf.float32, scope=\"more\")\n" in out


def test_a_class_is_counted_through_its_methods_calls():
    out = _pin("""\
        tf.set_random_seed(5)


        class Model(object):
            def __init__(self, units, training=True):
                self.x = tf.placeholder(tf.float32, [None, 4])
                self.w = tf.get_variable("w", [4, units])
                self._build(training)

            def _build(self, training):
                h = tf.matmul(self.x, self.w)
                h = tf.layers.dropout(h, rate=0.5, training=training)
                self.out = tf.layers.dense(h, 1)

            def noise(self):
                return tf.random_normal([2])

            def train(self, sess):
                return sess.run(self.out)


        model = Model(3)
        n = model.noise()
        after = tf.Variable(tf.random_uniform([2]))
        """)
    assert 'tf.get_variable("w", [4, units], initializer=tf.glorot_uniform_initializer(seed=0))' in out
    assert "tf.layers.dropout(h, rate=0.5, training=training, seed=1)" in out
    assert "tf.layers.dense(h, 1, kernel_initializer=tf.glorot_uniform_initializer(seed=2))" in out
    assert "tf.random_normal([2], seed=3)" in out and "tf.random_uniform([2], seed=4)" in out


@pytest.mark.parametrize("why, body", [
    ("no graph seed", "a = tf.Variable(tf.random_normal([2]))\n"),
    ("a seed of the program's own that TF1's count gives another draw of the same op",
     "tf.set_random_seed(1)\na = tf.Variable(tf.random_normal([2], seed=0))\nb = tf.Variable(tf.random_normal([2]))\n"),
    ("a draw before the seed", "a = tf.Variable(tf.random_normal([2]))\ntf.set_random_seed(1)\n"
                               "b = tf.Variable(tf.random_normal([2]))\n"),
    ("a draw in a loop", "tf.set_random_seed(1)\nws = []\nfor i in range(3):\n"
                         "    ws.append(tf.Variable(tf.random_normal([2])))\n"),
    ("a function that draws, called twice from one place",
     "tf.set_random_seed(1)\n\n\ndef w():\n    return tf.Variable(tf.random_normal([2]))\n\n\n"
     "def two():\n    return w(), w()\n\n\na = two()\nb = two()\n"),
    ("a reuse flag that is not known",
     "tf.set_random_seed(1)\nx = tf.placeholder(tf.float32, [None, 2])\n\n\ndef f(h, reuse):\n"
     "    with tf.variable_scope('f', reuse=reuse):\n        return tf.layers.dense(h, 2)\n\n\n"
     "a = f(x, reuse=len([1]) > 1)\n"),
    ("a training flag of Python's, not a literal",
     "tf.set_random_seed(1)\nx = tf.placeholder(tf.float32, [None, 2])\ntraining = True\ntraining = False\n"
     "h = tf.layers.dropout(x, rate=0.5, training=training)\n"),
    ("AUTO_REUSE on a scope named at run time",
     "tf.set_random_seed(1)\nx = tf.placeholder(tf.float32, [None, 2])\n\n\ndef f(h, name):\n"
     "    with tf.variable_scope(name, reuse=tf.AUTO_REUSE):\n        return tf.layers.dense(h, 2)\n\n\n"
     "a = f(x, input())\n"),
    ("a project module's function", "from model import build\ntf.set_random_seed(1)\n"
                                    "a = build()\nb = tf.Variable(tf.random_normal([2]))\n"),
    ("a GRU cell (two kernels)", "tf.set_random_seed(1)\nx = tf.placeholder(tf.float32, [None, 3, 2])\n"
                                 "o, s = tf.nn.dynamic_rnn(tf.nn.rnn_cell.GRUCell(4), x, dtype=tf.float32)\n"),
    ("a cell with a projection", "tf.set_random_seed(1)\nx = tf.placeholder(tf.float32, [None, 3, 2])\n"
                                 "c = tf.nn.rnn_cell.LSTMCell(4, num_proj=2)\no, s = tf.nn.dynamic_rnn(c, x, dtype=tf.float32)\n"),
    ("a cell run twice", "tf.set_random_seed(1)\nx = tf.placeholder(tf.float32, [None, 3, 2])\n"
                         "c = tf.nn.rnn_cell.LSTMCell(4)\no, s = tf.nn.dynamic_rnn(c, x, dtype=tf.float32)\n"
                         "p, q = tf.nn.dynamic_rnn(c, x, dtype=tf.float32, scope='again')\n"),
    ("a stacked cell", "tf.set_random_seed(1)\nx = tf.placeholder(tf.float32, [None, 3, 2])\n"
                       "c = tf.nn.rnn_cell.MultiRNNCell([tf.nn.rnn_cell.LSTMCell(4), tf.nn.rnn_cell.LSTMCell(4)])\n"
                       "o, s = tf.nn.dynamic_rnn(c, x, dtype=tf.float32)\n"),
    ("a cell's dropout", "tf.set_random_seed(1)\nx = tf.placeholder(tf.float32, [None, 3, 2])\n"
                         "c = tf.nn.rnn_cell.DropoutWrapper(tf.nn.rnn_cell.LSTMCell(4), output_keep_prob=0.5)\n"
                         "o, s = tf.nn.dynamic_rnn(c, x, dtype=tf.float32)\n"),
    ("a dataset shuffle", "tf.set_random_seed(1)\nd = tf.data.Dataset.range(4).shuffle(4)\n"
                          "b = tf.Variable(tf.random_normal([2]))\n"),
    ("a scope's initializer", "tf.set_random_seed(1)\nwith tf.variable_scope('s', initializer=tf.ones_initializer()):\n"
                              "    v = tf.get_variable('v', [2])\n"),
    ("a reused layer", "tf.set_random_seed(1)\nx = tf.placeholder(tf.float32, [None, 2])\n"
                       "h = tf.layers.dense(x, 2, name='d', reuse=tf.AUTO_REUSE)\n"),
    ("a class that draws, made twice", "tf.set_random_seed(1)\n\n\nclass M:\n    def __init__(self):\n"
                                       "        self.w = tf.Variable(tf.random_normal([2]))\n\n\nm = M()\nn = M()\n"),
    ("a method that draws, called in a loop",
     "tf.set_random_seed(1)\n\n\nclass M:\n    def noise(self):\n        return tf.random_normal([2])\n\n\n"
     "m = M()\nfor i in range(2):\n    m.noise()\n"),
    ("a method that draws, on an instance whose class is not known",
     "tf.set_random_seed(1)\n\n\nclass M:\n    def noise(self):\n        return tf.random_normal([2])\n\n\n"
     "models = [M()]\nb = models[0].noise()\n"),
    ("a property that draws", "tf.set_random_seed(1)\n\n\nclass M:\n    @property\n    def w(self):\n"
                              "        return tf.random_normal([2])\n\n\nm = M()\nv = m.w\n"),
    ("a class with a base class", "tf.set_random_seed(1)\n\n\nclass M(Base):\n    def __init__(self):\n"
                                  "        self.w = tf.Variable(tf.random_normal([2]))\n\n\nm = M()\n"),
    ("a random bias initializer (after a zeros kernel)",
     "tf.set_random_seed(1)\nx = tf.placeholder(tf.float32, [None, 2])\nh = tf.layers.dense(x, 2, "
     "kernel_initializer=tf.zeros_initializer(), bias_initializer=tf.random_normal_initializer())\n"
     "w = tf.Variable(tf.random_normal([2]))\n"),
    ("a Keras layer", "tf.set_random_seed(1)\nx = tf.placeholder(tf.float32, [None, 2])\n"
                      "h = tf.keras.layers.Dense(3)(x)\n"),
])
def test_left_as_it_is_where_the_count_is_not_certain(why, body):
    assert _pin(body) is None, why


PROGRAM = """\
import os
os.environ["TF_USE_LEGACY_KERAS"] = "1"
import numpy as np
import tensorflow.compat.v1 as tf
tf.disable_v2_behavior()

tf.set_random_seed(11)
x = tf.placeholder(tf.float32, [None, 4])
flag = tf.placeholder(tf.bool)


def weight(shape):
    return tf.Variable(tf.truncated_normal(shape, stddev=0.1))


w = weight([4, 3])
v = tf.get_variable("v", [3, 2])
u = tf.get_variable("u", [2, 2], initializer=tf.random_uniform_initializer(-1.0, 1.0))
h = tf.nn.dropout(tf.matmul(x, w), 0.7)
h = tf.layers.dense(tf.matmul(h, v), 5, tf.nn.relu)
h = tf.layers.conv1d(tf.reshape(h, [-1, 5, 1]), 2, 3)
h = tf.layers.dropout(h, rate=0.4, training=flag)
noise = tf.random_normal([3]) + tf.random_uniform([3]) + tf.cast(tf.random_shuffle(tf.range(3)), tf.float32)
with tf.Session() as sess:
    sess.run(tf.global_variables_initializer())
    feed = {x: np.ones([2, 4], np.float32), flag: True}
    for _ in range(2):
        print(np.round(sess.run(h, feed).ravel()[:6], 6).tolist(), np.round(sess.run(noise), 6).tolist(),
              np.round(sess.run(u).ravel(), 6).tolist())
"""


REUSED = """\
import os
os.environ["TF_USE_LEGACY_KERAS"] = "1"
import numpy as np
import tensorflow.compat.v1 as tf
tf.disable_v2_behavior()

tf.set_random_seed(7)
x = tf.placeholder(tf.float32, [None, 3])


def tower(h, reuse, training):
    with tf.variable_scope("tower", reuse=reuse):
        h = tf.layers.dense(h, 4, tf.nn.relu)
        h = tf.layers.dropout(h, rate=0.5, training=training)
        v = tf.get_variable("v", [4, 2], initializer=tf.truncated_normal_initializer(stddev=0.1))
        return tf.matmul(h, v)


def critic(h):
    with tf.variable_scope("critic", reuse=tf.AUTO_REUSE):
        return tf.layers.dense(h, 1)


a = tower(x, False, True)
b = tower(x, True, False)
c = critic(a) + critic(b)
noise = tf.random_uniform([3])
with tf.Session() as sess:
    sess.run(tf.global_variables_initializer())
    for _ in range(2):
        print(np.round(sess.run([a, c], {x: np.ones([2, 3], np.float32)})[1].ravel(), 6).tolist(),
              np.round(sess.run(noise), 6).tolist())
"""


CELLS = """\
import os
os.environ["TF_USE_LEGACY_KERAS"] = "1"
import numpy as np
import tensorflow.compat.v1 as tf
tf.disable_v2_behavior()

tf.set_random_seed(3)
x = tf.placeholder(tf.float32, [None, 4, 3])
w = tf.Variable(tf.random_normal([5, 2]))


def encode(inputs):
    with tf.variable_scope("encoder"):
        cell = tf.nn.rnn_cell.BasicLSTMCell(5)
        outputs, state = tf.nn.dynamic_rnn(cell, inputs, dtype=tf.float32)
        return tf.matmul(state.h, w)


def decode(inputs):
    outputs, _ = tf.nn.static_rnn(tf.nn.rnn_cell.BasicRNNCell(3), tf.unstack(inputs, 4, 1), dtype=tf.float32)
    return outputs[-1]


h = encode(x) + tf.layers.dense(decode(x), 2)
top, _ = tf.nn.dynamic_rnn(tf.nn.rnn_cell.LSTMCell(2), x, dtype=tf.float32, scope="top")
h = h + top[:, -1]
noise = tf.random_uniform([2])
with tf.Session() as sess:
    sess.run(tf.global_variables_initializer())
    for _ in range(2):
        print(np.round(sess.run(h, {x: np.ones([2, 4, 3], np.float32)}).ravel(), 6).tolist(),
              np.round(sess.run(noise), 6).tolist())
"""


HELPERS = """\
import os
os.environ["TF_USE_LEGACY_KERAS"] = "1"
import numpy as np
import tensorflow.compat.v1 as tf
tf.disable_v2_behavior()

tf.set_random_seed(5)


def weight_variable(shape):
    initial = tf.truncated_normal(shape, stddev=0.1)
    return tf.Variable(initial)


def bias_variable(shape):
    return tf.Variable(tf.random_uniform(shape, 0.0, 0.1))


def block(h, reuse):
    with tf.variable_scope("block", reuse=reuse):
        return tf.nn.dropout(tf.layers.dense(h, 3), 0.8)


x = tf.placeholder(tf.float32, [None, 3])
w1, b1 = weight_variable([3, 4]), bias_variable([4])
h = tf.nn.relu(tf.matmul(block(x, False) + block(x, True), w1) + b1)
w2 = weight_variable([4, 2])
b2 = bias_variable([2])
out = tf.matmul(tf.nn.dropout(h, 0.5), w2) + b2
with tf.Session() as sess:
    sess.run(tf.global_variables_initializer())
    for _ in range(2):
        print(np.round(sess.run(out, {x: np.ones([2, 3], np.float32)}).ravel(), 6).tolist())
"""


def test_a_helper_called_in_several_places_takes_each_calls_seed():
    """`weight_variable(shape)` (the Deep MNIST tutorial's helper), called three times: each call drew
    its own seed, which the helper is given as a parameter."""
    out = _pin("""\
        tf.set_random_seed(1)


        def weight_variable(shape):
            return tf.Variable(tf.truncated_normal(shape, stddev=0.1))


        w1 = weight_variable([4, 3])
        noise = tf.random_normal([3])
        w2 = weight_variable([3, 2])
        """)
    assert "def weight_variable(shape, tf1_seed=None):" in out
    assert "tf.truncated_normal(shape, stddev=0.1, seed=tf1_seed)" in out
    assert "w1 = weight_variable([4, 3], tf1_seed=0)" in out
    assert "tf.random_normal([3], seed=1)" in out
    assert "w2 = weight_variable([3, 2], tf1_seed=2)" in out


def test_a_helper_called_where_the_count_does_not_follow_is_left():
    assert _pin("""\
        tf.set_random_seed(1)


        def weight_variable(shape):
            return tf.Variable(tf.truncated_normal(shape, stddev=0.1))


        def unused():
            return weight_variable([2, 2])


        w1 = weight_variable([4, 3])
        w2 = weight_variable([3, 2])
        """) is None


ENTRY_ITERATOR = """\
import os
os.environ["TF_USE_LEGACY_KERAS"] = "1"
import numpy as np
import tensorflow.compat.v1 as tf
tf.disable_v2_behavior()


def disc(h, reuse=False):
    with tf.variable_scope("d") as scope:
        if reuse:
            scope.reuse_variables()
        return tf.layers.dense(h, 2, name="out")


def train(_):
    tf.set_random_seed(6)
    data = tf.data.Dataset.from_tensor_slices(np.ones([8, 3], np.float32)).shuffle(8, seed=2).repeat().batch(2)
    batch = data.make_one_shot_iterator().get_next()
    real = disc(batch)
    fake = disc(tf.random_normal([2, 3]), reuse=True)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        for _ in range(2):
            print(np.round(sess.run(real + fake).ravel(), 6).tolist())


tf.app.run(main=train)
"""


def test_one_shot_iterators_take_a_seed_and_seeded_shuffles_none():
    """Measured in TF 2.21's graph mode: `make_one_shot_iterator()` takes the graph's next op seed
    (the next draw has the one after), a dataset shuffle given its seed takes none; `tf.app.run(main=f)`
    runs `f`."""
    out = _pin(ENTRY_ITERATOR.split("tf.disable_v2_behavior()\n", 1)[1])
    assert 'tf.layers.dense(h, 2, name="out", kernel_initializer=tf.glorot_uniform_initializer(seed=1))' in out
    assert "tf.random_normal([2, 3], seed=2)" in out


OWN_GRAPH = """\
import os
os.environ["TF_USE_LEGACY_KERAS"] = "1"
import numpy as np
import tensorflow.compat.v1 as tf
tf.disable_v2_behavior()

tf.set_random_seed(2)
before = tf.Variable(tf.random_normal([2]))


class Net(object):
    def __init__(self, seed):
        self.graph = tf.Graph()
        with self.graph.as_default():
            tf.set_random_seed(seed)
            self.x = tf.placeholder(tf.float32, [None, 3])
            w = tf.get_variable("w", [3, 2], dtype=tf.float32)
            b = tf.get_variable("b", initializer=tf.constant(0.1, shape=[2]))
            self.out = self.noisy(tf.matmul(self.x, w) + b)
            init = tf.global_variables_initializer()
        self.sess = tf.Session(graph=self.graph)
        self.sess.run(init)

    @staticmethod
    def noisy(h):
        return tf.nn.dropout(h + tf.random_uniform([2]), 0.5)

    def run(self):
        return self.sess.run(self.out, {self.x: np.ones([2, 3], np.float32)})


first, second = Net(3), Net(3)
with tf.Session() as sess:
    sess.run(tf.global_variables_initializer())
    print(np.round(sess.run(before), 6).tolist())
print(np.round(first.run(), 6).tolist(), np.round(second.run(), 6).tolist())
"""


METHOD_HELPER = """\
import os
os.environ["TF_USE_LEGACY_KERAS"] = "1"
import numpy as np
import tensorflow.compat.v1 as tf
tf.disable_v2_behavior()

tf.set_random_seed(11)


class Siamese(object):
    def __init__(self):
        self.x1 = tf.placeholder(tf.float32, [None, 3])
        self.x2 = tf.placeholder(tf.float32, [None, 3])
        self.o1 = self.tower(self.x1, reuse=False)
        self.o2 = self.tower(self.x2, reuse=True)

    def tower(self, x, reuse):
        with tf.variable_scope("tower", reuse=reuse):
            h = tf.nn.relu(self.fc(x, 4, "fc1"))
            return self.fc(h, 2, "fc2")

    @staticmethod
    def fc(bottom, units, name):
        initer = tf.truncated_normal_initializer(stddev=0.1)
        w = tf.get_variable(name + "_w", [bottom.get_shape()[1], units], dtype=tf.float32, initializer=initer)
        b = tf.get_variable(name + "_b", initializer=tf.constant(0.01, shape=[units]))
        return tf.matmul(bottom, w) + b


net = Siamese()
noise = tf.random_uniform([2])
with tf.Session() as sess:
    sess.run(tf.global_variables_initializer())
    ones = np.ones([1, 3], np.float32)
    print(np.round(sess.run(net.o1, {net.x1: ones}), 6).tolist(), np.round(sess.run(net.o2, {net.x2: ones}), 6).tolist())
    print(np.round(sess.run(noise), 6).tolist())
"""


def test_a_method_drawing_through_a_local_initializer_takes_each_calls_seed():
    out = _pin(METHOD_HELPER[METHOD_HELPER.index("tf.set_random_seed"):METHOD_HELPER.index("with tf.Session")])
    assert 'h = tf.nn.relu(self.fc(x, 4, "fc1", tf1_seed=0))' in out
    assert 'return self.fc(h, 2, "fc2", tf1_seed=1)' in out
    assert "def fc(bottom, units, name, tf1_seed=None):" in out
    assert "initer = tf.truncated_normal_initializer(stddev=0.1, seed=tf1_seed)" in out
    assert "noise = tf.random_uniform([2], seed=2)" in out


def test_a_local_initializer_read_twice_is_left():
    assert _pin("""\
        tf.set_random_seed(1)


        def layer(x):
            initer = tf.random_normal_initializer(stddev=0.1)
            w = tf.get_variable("w", [3, 3], initializer=initer)
            v = tf.get_variable("v", [3, 3], initializer=initer)
            return tf.matmul(tf.matmul(x, w), v)


        y = layer(tf.ones([1, 3]))
        """) is None


def test_a_graph_a_class_keeps_counts_from_zero_at_each_object():
    out = _pin("""\
        tf.set_random_seed(1)
        a = tf.Variable(tf.random_normal([2]))


        class Net(object):
            def __init__(self):
                self.graph = tf.Graph()
                with self.graph.as_default():
                    tf.set_random_seed(1)
                    self.w = tf.get_variable("w", [3], dtype=tf.float32)
                    self.out = self.noisy(self.w)

            @staticmethod
            def noisy(h):
                return h + tf.random_uniform([3])


        net = Net()
        """)
    assert "tf.random_normal([2], seed=0)" in out
    assert 'tf.get_variable("w", [3], dtype=tf.float32, initializer=tf.glorot_uniform_initializer(seed=0))' in out
    assert "tf.random_uniform([3], seed=1)" in out


def test_a_graph_kept_and_used_otherwise_is_left():
    assert _pin("""\
        tf.set_random_seed(1)


        class Net(object):
            def __init__(self):
                self.graph = tf.Graph()
                with self.graph.as_default():
                    tf.set_random_seed(1)
                    self.w = tf.Variable(tf.random_normal([3]))
                with self.graph.as_default():
                    self.v = tf.Variable(tf.random_normal([3]))


        net = Net()
        """) is None


OWN_SEEDS = """\
import os
os.environ["TF_USE_LEGACY_KERAS"] = "1"
import numpy as np
import tensorflow.compat.v1 as tf
tf.disable_v2_behavior()

tf.set_random_seed(5)
x = tf.placeholder(tf.float32, [None, 3])


def net(h, keep):
    h = tf.layers.dense(h, 4, kernel_initializer=tf.random_normal_initializer(stddev=0.3, seed=1))
    h = tf.nn.dropout(tf.nn.relu(h), keep, seed=2)
    h = tf.layers.dense(h, 3)
    w = tf.get_variable("w", [3, 2], initializer=tf.glorot_uniform_initializer(seed=1))
    return tf.matmul(h, w) + tf.random_normal([2])


out = net(x, 0.6)
extra = tf.Variable(tf.random_uniform_initializer(-1.0, 1.0)([2]))  # (an initializer called: a draw)
noise = tf.random_normal([2])
with tf.Session() as sess:
    sess.run(tf.global_variables_initializer())
    for _ in range(2):
        print(np.round(sess.run(out, {x: np.ones([2, 3], np.float32)}).ravel(), 6).tolist(),
              np.round(sess.run(extra), 6).tolist(), np.round(sess.run(noise), 6).tolist())
"""


def test_a_seed_of_the_programs_own_takes_none_of_the_graphs():
    """`seed=2` draws with (graph seed, 2) in TF1 and eagerly, and takes no seed from TF1's counter:
    the draws around it keep theirs (own_seeds runs it under TF1). Left where another draw shares
    the seed in a way eager TF2 would not (one eager kernel per op and seeds; one Generator per
    seed), or where the seed is not a number the count can read."""
    out = _pin(OWN_SEEDS.split("tf.disable_v2_behavior()\n\n")[1])
    assert out is not None
    assert "tf.layers.dense(h, 3, kernel_initializer=tf.glorot_uniform_initializer(seed=0))" in out, out
    assert "tf.random_normal([2], seed=1)" in out and "seed=2)" in out
    assert "tf.random_uniform_initializer(-1.0, 1.0, seed=2)([2])" in out and "tf.random_normal([2], seed=3)" in out
    for shared in (
            "v = tf.get_variable('v', [2], initializer=tf.glorot_uniform_initializer(seed=1))\n"
            "u = tf.get_variable('u', [2], initializer=tf.glorot_uniform_initializer(seed=1))\n",
            "v = tf.get_variable('v', [2], initializer=tf.random_uniform_initializer(seed=0))\n"
            "u = tf.get_variable('u', [2])\n",
            "def f(h):\n    return tf.nn.dropout(h, 0.5, seed=3) + tf.random_normal([2], seed=3)\n\n\n"
            "y = f(tf.ones([2]))\n",
            # (module-level graph code runs in the functions too: one Generator for seed 3)
            "noise = tf.random_normal([2], seed=3)\n\n\ndef f(h):\n    return tf.nn.dropout(h, 0.5, seed=3)\n\n\n"
            "y = f(tf.ones([2]))\n",
            "v = tf.get_variable('v', initializer=tf.random_normal([2], seed=3))\n"
            "u = tf.Variable(tf.random_normal_initializer(seed=3)([2]))\n"):
        assert _pin("tf.set_random_seed(1)\n" + shared) is None, shared
    apart = ("v = tf.get_variable('v', [2], initializer=tf.glorot_uniform_initializer(seed=1))\n"
             "u = tf.get_variable('u', [2], initializer=tf.random_normal_initializer(seed=1))\n\n\n"
             "def f(h):\n    return tf.nn.dropout(h, 0.5, seed=1)\n\n\ny = f(tf.ones([2]))\n")
    assert _pin("tf.set_random_seed(1)\n" + apart) is not None  # (other ops; a draw in a function)
    for unread in ("SEED = 3\n\n\ndef f(h):\n    return tf.nn.dropout(h, 0.5, seed=SEED)\n\n\ny = f(tf.ones([2]))\n",
                   "for i in range(2):\n    v = tf.get_variable(str(i), [2], "
                   "initializer=tf.glorot_uniform_initializer(seed=i))\n"):
        assert _pin("tf.set_random_seed(1)\n" + unread) is None, unread


# The sampled losses draw their negative classes with a candidate sampler made inside them (one op
# seed of TF1's counter): nce_loss, which takes no seed, is given the sampler it makes, seeded; the
# word2vec tutorial's graph of its own, given to the Session as `graph=graph`, counts from 0.
SAMPLED = """\
import numpy as np
import tensorflow.compat.v1 as tf
tf.disable_v2_behavior()

graph = tf.Graph()
with graph.as_default():
    tf.set_random_seed(5)
    words = tf.placeholder(tf.int32, [4])
    labels = tf.placeholder(tf.int32, [4, 1])
    emb = tf.Variable(tf.random_uniform([20, 3], -1.0, 1.0))
    nce_w = tf.Variable(tf.truncated_normal([20, 3], stddev=0.5))
    nce_b = tf.Variable(tf.zeros([20]))
    embed = tf.nn.embedding_lookup(emb, words)
    nce = tf.reduce_mean(tf.nn.nce_loss(weights=nce_w, biases=nce_b, labels=labels, inputs=embed,
                                        num_sampled=5, num_classes=20))
    softmax = tf.reduce_mean(tf.nn.sampled_softmax_loss(nce_w, nce_b, labels, embed, 5, 20))
    init = tf.global_variables_initializer()
with tf.Session(graph=graph) as sess:
    sess.run(init)
    feed = {words: [1, 2, 3, 4], labels: [[2], [3], [4], [5]]}
    print(sess.run(nce, feed), sess.run(softmax, feed))
    print(sess.run([nce, softmax], feed))
"""


@pytest.mark.parametrize("program, written_seeds", [(PROGRAM, 10), (REUSED, 5), (CELLS, 6), (HELPERS, 14),
                                                    (OWN_GRAPH, 4), (METHOD_HELPER, 5), (ENTRY_ITERATOR, 3), (OWN_SEEDS, 7),
                                                    (SAMPLED, 4)],
                         ids=["flat", "reused", "cells", "helpers", "own_graph", "method_helper", "entry_iterator",
                              "own_seeds", "sampled"])
def test_the_pinned_program_draws_what_tf1_drew(tmp_path, program, written_seeds):
    """TF1's graph mode itself: the program with its seeds written out prints the same draws, run
    after run (the kernels of dense, conv1d, get_variable; dropout, random ops, an initializer;
    functions called twice under `reuse=True` and AUTO_REUSE)."""
    module = cst.parse_module(program)
    written = pinned(module, program)
    assert written is not None and written.code.count("seed=") == written_seeds, written.code
    (tmp_path / "original.py").write_text(program)
    (tmp_path / "pinned.py").write_text(written.code)
    runs = [run_python([name], cwd=tmp_path) for name in ("original.py", "pinned.py")]
    for run in runs:
        assert run.returncode == 0, run.stderr[-3000:]
    assert runs[0].stdout == runs[1].stdout and runs[0].stdout.count("\n") == 2


def test_draws_at_each_step_come_from_generators_in_tf1s_state():
    text = ("import tensorflow as tf\n\ntf.random.set_seed(SEED)\nw = tf.Variable(tf.random.normal([2], seed=0))\n\n\n"
            "@tf.function\ndef step(x, keep):\n    x = x + tf.random_normal(tf.shape(x), stddev=0.1, seed=1)\n"
            "    x = tf.nn.dropout(x, keep, seed=2)\n    return tf.nn.dropout(x, rate=0.5, seed=3)\n")
    out = drawn_by_generators(text)
    assert 'rng_1 = tf.random.Generator.from_state([0, 1, SEED], alg="philox")\n' in out
    assert "tf.random.normal([2], seed=0)" in out  # (drawn once, at module level: as it was)
    assert "x + rng_1.normal(tf.shape(x), stddev=0.1)" in out
    assert "general_dropout(x, rate=1 - keep, uniform_sampler=rng_2.uniform)" in out
    assert "general_dropout(x, rate=0.5, uniform_sampler=rng_3.uniform)" in out
    layers = drawn_by_generators(text.replace("    return tf.nn.dropout(x, rate=0.5, seed=3)\n", (
        "    x = tf.compat.v1.layers.dropout(x, rate=0.3, training=flag, seed=4)\n"
        "    return tf.compat.v1.layers.dropout(x, training=True, seed=5)\n")))
    assert ("x = tf.cond(tf.cast(flag, tf.bool), lambda: tf.nn.experimental.general_dropout(x, rate=0.3, "
            "uniform_sampler=rng_4.uniform), lambda: x)") in layers  # (a tensor flag: TF1's smart_cond)
    assert "return tf.nn.experimental.general_dropout(x, rate=0.5, uniform_sampler=rng_5.uniform)" in layers
    # two seeds (two graphs): which generator belongs to which is not certain, left as it is
    assert drawn_by_generators(text.replace("w = ", "tf.random.set_seed(1)\nw = ")) == text.replace(
        "w = ", "tf.random.set_seed(1)\nw = ")


def test_a_float32_draw_in_two_functions_shares_one_generator():
    # the noise of a VAE, which the rewrite writes into the training step and the evaluation: TF1 ran
    # one op, whose sequence the evaluation continued; eagerly, one Generator continues it
    text = ("import tensorflow as tf\n\ntf.random.set_seed(1)\n\n\n@tf.function\ndef step(mu):\n"
            "    return mu + tf.random.normal(tf.shape(mu), dtype=tf.float32, seed=4)\n\n\n"
            "@tf.function\ndef evaluate(mu):\n    return mu + tf.random.normal(tf.shape(mu), dtype='float32', seed=4)\n")
    assert drawn_apart(text) == 4
    out = drawn_by_generators(text)
    assert out.count("rng_4.normal(tf.shape(mu), dtype=") == 2 and drawn_apart(out) is None
    # a float64 draw is another kernel's: left as it is, and so two of them are drawn apart
    doubled = text.replace("tf.float32", "tf.float64").replace("'float32'", "tf.float64")
    assert drawn_by_generators(doubled) == doubled and drawn_apart(doubled) == 4
    assert drawn_apart(text.replace("seed=4)\n\n\n", "seed=5)\n\n\n")) is None
    # ops of two graphs (each seeded again), or of helpers that are not traced functions, are two ops in TF1 too
    assert drawn_apart(doubled.replace("@tf.function\ndef evaluate", "tf.random.set_seed(1)\n\n\n@tf.function\ndef evaluate")) is None
    assert drawn_apart(doubled.replace("@tf.function\n", "")) is None
    # a sampled loss's candidate sampler is a stateful op too (nce_loss's, given as `sampled_values=`)
    sampled = text.replace("mu + tf.random.normal(tf.shape(mu), dtype=tf.float32, seed=4)",
                           "tf.nn.nce_loss(w, b, y, mu, 5, 20, sampled_values=tf.random.log_uniform_candidate_sampler("
                           "y, 1, 5, True, 20, seed=4))")
    assert sampled.count("seed=4") == 2 and drawn_apart(sampled) == 4


def test_other_libraries_and_positional_layer_arguments():
    out = _pin("""\
        from sklearn import datasets
        tf.set_random_seed(2)
        iris = datasets.load_iris()
        x = tf.placeholder(tf.float32, [None, 28, 28, 1])
        h = tf.layers.conv2d(x, 16, 5, 1, "same", activation=tf.nn.relu)
        """)
    assert 'tf.layers.conv2d(x, 16, 5, 1, "same", activation=tf.nn.relu, ' \
           "kernel_initializer=tf.glorot_uniform_initializer(seed=0))" in out
    # a kernel initializer given by position (dense's fifth argument): not counted
    assert _pin("tf.set_random_seed(2)\nx = tf.placeholder(tf.float32, [None, 2])\n"
                "h = tf.layers.dense(x, 2, None, True, tf.ones_initializer())\n") is None


@pytest.mark.parametrize("entry", ['if __name__ == "__main__":\n    main(None)\n',
                                   'if __name__ == "__main__":\n    tf.app.run()\n'])
def test_the_entry_point_runs_main_once(entry):
    out = _pin("def main(_):\n    tf.set_random_seed(2)\n    w = tf.Variable(tf.random_normal([4, 2]))\n"
               "    b = tf.Variable(tf.random_normal([2]))\n\n\n" + entry)
    assert "tf.random_normal([4, 2], seed=0)" in out and "tf.random_normal([2], seed=1)" in out


def test_an_object_of_a_project_class_that_draws_nothing_does_not_stop_the_count():
    """`source.sample(...)` of `source = data.Source(...)`, a class of the project listed pure and
    drawing nothing (its `sample` draws with numpy): counted through; an object bound otherwise
    too, or of a class that draws, stops the count as a method that may draw."""
    body = ("import data\ntf.set_random_seed(1)\nsource = data.Source(3)\nxs = source.sample(4)\n"
            "w = tf.Variable(tf.random_normal([2]))\n")
    source = HEADER + body
    listed = ("data.Source",)
    assert "tf.random_normal([2], seed=0)" in pinned(cst.parse_module(source), source, listed).code
    assert pinned(cst.parse_module(source), source, ("data.Source", "data.Source:draws=run")) is None
    rebound = source.replace("xs = ", "source = other()\nxs = ")
    assert pinned(cst.parse_module(rebound), rebound, listed) is None
