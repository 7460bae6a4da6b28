"""native.outside_trains: a train op made beside the class whose graph it trains, moved into it."""
import textwrap

import pytest

from tfmigrate.native.outside_trains import moved

CLASS = """\
import tensorflow as tf
LR = 0.1


class Net(object):
    def __init__(self):
        self.x = tf.placeholder(tf.float32, [None, 2])
        w = tf.get_variable("w", [2, 1])
        self.loss = tf.reduce_sum(tf.matmul(self.x, w))


"""


def _moved(body: str):
    result = moved(CLASS + textwrap.dedent(body))
    return None if result is None else result


def test_the_step_and_its_global_step_end_the_init_and_are_read_on_the_instance():
    out = _moved("""\
        net = Net()
        print("built")
        step = tf.Variable(0, trainable=False)
        train_op = tf.train.AdamOptimizer(1e-3).minimize(net.loss, global_step=step)
        sess.run([train_op, net.loss])
        print(sess.run(step))
        """)
    assert "        self.step = tf.Variable(0, trainable=False)\n" \
           "        self.train_op = tf.train.AdamOptimizer(1e-3).minimize(self.loss, global_step=self.step)\n" in out
    assert "sess.run([net.train_op, net.loss])\nprint(sess.run(net.step))\n" in out
    assert "train_op = tf" not in out.split("net = Net()")[1]


@pytest.mark.parametrize("why, body", [
    ("two instances", "a = Net()\nb = Net()\nop = tf.train.AdamOptimizer(1e-3).minimize(a.loss)\n"),
    ("graph code between (TF1 trained its variables too)",
     "net = Net()\nv = tf.get_variable('v', [1])\nop = tf.train.AdamOptimizer(1e-3).minimize(net.loss + v)\n"),
    ("a loss other than the instance's tensor", "net = Net()\nop = tf.train.AdamOptimizer(1e-3).minimize(2 * net.loss)\n"),
    ("an optimizer reading a name (only literals and TF calls are moved)",
     "net = Net()\nop = tf.train.AdamOptimizer(LR).minimize(net.loss)\n"),
    ("a var_list", "net = Net()\nop = tf.train.AdamOptimizer(1e-3).minimize(net.loss, var_list=[w])\n"),
    ("an attribute the class has", "net = Net()\nloss = tf.train.AdamOptimizer(1e-3).minimize(net.loss)\n"),
    ("a step the module made elsewhere",
     "gs = tf.Variable(0, trainable=False)\nnet = Net()\nop = tf.train.AdamOptimizer(1e-3).minimize(net.loss, global_step=gs)\n"),
])
def test_left_as_it_is_where_the_move_may_change_what_is_trained(why, body):
    assert _moved(body) is None, why
