"""native.global_steps: the step made inside another call and found by `get_global_step()`, by one name."""
import textwrap

import pytest

from tfmigrate.native.global_steps import named

HEADER = "import tensorflow as tf\n\n"


def _named(body: str):
    result = named(HEADER + textwrap.dedent(body))
    return None if result is None else result[len(HEADER):]


def test_the_step_made_inline_gets_a_line_of_its_own_and_each_finder_its_name():
    out = _named("""\
        lr = tf.train.exponential_decay(0.1, tf.train.get_or_create_global_step(), 10, 0.9)
        train_op = tf.train.AdamOptimizer(lr).minimize(loss, global_step=tf.train.get_global_step())
        print(sess.run(tf.compat.v1.train.get_global_step()))
        """)
    assert out == textwrap.dedent("""\
        global_step = tf.train.get_or_create_global_step()
        lr = tf.train.exponential_decay(0.1, global_step, 10, 0.9)
        train_op = tf.train.AdamOptimizer(lr).minimize(loss, global_step=global_step)
        print(sess.run(global_step))
        """)


def test_a_step_made_by_a_line_of_its_own_is_named_on_that_line():
    out = _named("""\
        tf.train.get_or_create_global_step()
        train_op = opt.minimize(loss, global_step=tf.train.get_global_step())
        """)
    assert out == textwrap.dedent("""\
        global_step = tf.train.get_or_create_global_step()
        train_op = opt.minimize(loss, global_step=global_step)
        """)


def test_a_step_already_named_is_read_by_that_name():
    out = _named("""\
        def main():
            step = tf.train.get_or_create_global_step()
            train_op = opt.minimize(loss, global_step=tf.train.get_global_step())
        """)
    assert "minimize(loss, global_step=step)" in out


@pytest.mark.parametrize("why, body", [
    ("no finder and nothing inline", "step = tf.train.get_or_create_global_step()\nx = step + 1\n"),
    ("made twice", "a = f(tf.train.get_or_create_global_step())\nb = f(tf.train.get_or_create_global_step())\n"),
    ("found before it is made (TF1: None)",
     "s = tf.train.get_global_step()\nlr = f(tf.train.get_or_create_global_step())\n"),
    ("a variable of its own named so", "v = tf.Variable(0, name='global_step')\n"
                                       "lr = f(tf.train.get_or_create_global_step())\n"),
    ("the name is taken", "global_step = 3\nlr = f(tf.train.get_or_create_global_step())\n"),
    ("in two functions", "def a():\n    lr = f(tf.train.get_or_create_global_step())\n"
                         "def b():\n    return tf.train.get_global_step()\n"),
    ("bound to an attribute (the class route reads it)",
     "class M:\n    def __init__(self):\n        self.global_step = tf.train.get_or_create_global_step()\n"
     "        self.op = opt.minimize(loss, global_step=self.global_step)\n"),
    ("made inside a compound statement's header", "for _ in f(tf.train.get_or_create_global_step()):\n    pass\n"),
])
def test_left_as_it_is_where_one_name_is_not_certain(why, body):
    assert _named(body) is None, why


@pytest.mark.parametrize("body, expected", [
    ("step = tf.train.global_step(sess, global_step)\n", "step = int(sess.run(global_step))\n"),
    ("print(tf.compat.v1.train.global_step(sess=s, global_step_tensor=model.step))\n",
     "print(int(s.run(model.step)))\n"),
    # a session other than by its name (an attribute), or no step given: left as written
    ("step = tf.train.global_step(self.sess, global_step)\n", None),
    ("step = tf.train.global_step(sess)\n", None),
])
def test_the_step_read_by_a_session_is_the_run_it_makes(body, expected):
    from tfmigrate.native.global_steps import read_by_run

    result = read_by_run(HEADER + body)
    assert (None if result is None else result[len(HEADER):]) == expected
