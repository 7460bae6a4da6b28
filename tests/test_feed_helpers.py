"""native.feed_helpers: feeds written out where the test runs them, and where not (the positive
cases run in tests/fixtures/TFM216/exec_test_setup_feed_helper.py)."""
import libcst as cst

from tfmigrate.native import feed_helpers

CLASS = ("class T(object):\n    def _feed(self, x, y):\n        return {self.x: x, self.y: y}\n\n"
         "    def test(self):\n        sess.run(z, feed_dict=%s)\n")


def _inlined(call: str, helper: str = ""):
    source = CLASS % call
    if helper:
        source = source.replace("    def _feed(self, x, y):\n        return {self.x: x, self.y: y}\n", helper)
    node = cst.parse_statement(source)
    return feed_helpers.inlined(node, {"x", "y"})


def test_a_feed_helper_is_written_out_where_each_call_binds():
    node, done = _inlined("self._feed(*batch)")
    assert done == {"_feed"} and "feed_dict={self.x: batch[0], self.y: batch[1]}" in cst.Module(body=[node]).code
    node, done = _inlined("self._feed(y=[1], x=[2])")
    assert done == {"_feed"} and "feed_dict={self.x: [2], self.y: [1]}" in cst.Module(body=[node]).code


def test_a_feed_helper_of_what_setup_kept_is_written_out_too():
    node, done = _inlined("self._feed()", "    def _feed(self):\n        return {self.x: self.x_np, self.y: self.y_np}\n")
    assert done == {"_feed"} and "feed_dict={self.x: self.x_np, self.y: self.y_np}" in cst.Module(body=[node]).code
    node, done = _inlined("self._feed([1])", "    def _feed(self, x):\n        return {self.x: x, self.y: self.y_np}\n")
    assert done == {"_feed"} and "feed_dict={self.x: [1], self.y: self.y_np}" in cst.Module(body=[node]).code
    # a placeholder fed with another placeholder is no value kept by `setUp`
    assert _inlined("self._feed()", "    def _feed(self):\n        return {self.x: self.y, self.y: self.y_np}\n")[1] == set()


def test_a_feed_helper_is_kept_where_writing_it_out_could_change_what_runs():
    # keywords out of the dict's order, with draws: Python drew `y` first
    assert _inlined("self._feed(y=rng.randn(2), x=rng.randn(2))")[1] == set()
    # read other than called, a default, more than the dict, a feed of other than placeholders
    assert _inlined("self._feed")[1] == set()
    assert _inlined("self._feed(1, 2)", "    def _feed(self, x, y=0):\n        return {self.x: x, self.y: y}\n")[1] == set()
    assert _inlined("self._feed(1, 2)", "    def _feed(self, x, y):\n        print(x)\n"
                                        "        return {self.x: x, self.y: y}\n")[1] == set()
    assert _inlined("self._feed(1, 2)", "    def _feed(self, x, y):\n        return {self.x: x, self.w: y}\n")[1] == set()


def test_a_feed_named_just_before_its_run_is_written_into_it():
    source = ("def test(self):\n    for n in (1, 2):\n        # the feed\n        feed = {x: [n]}\n"
              "        a, b = sess.run([p, q], feed_dict=feed)\n    kept = {x: [3]}\n    sess.run(f(p), kept)\n"
              "    twice = {x: [4]}\n    sess.run(p, twice)\n    sess.run(q, twice)\n")
    written = cst.Module(body=[feed_helpers.named_feeds(cst.parse_statement(source))]).code
    assert "        # the feed\n        a, b = sess.run([p, q], feed_dict={x: [n]})\n" in written, written
    assert "    kept = {x: [3]}\n" in written  # (what it fetches is computed: evaluated before the dict)
    assert "    twice = {x: [4]}\n" in written


def test_a_run_in_a_comprehension_feeding_its_variable_keeps_the_compat_route():
    """A fresh judge project: `[sess.run(loss, {src: [[c]]}) for c in ...]` was read as one feed,
    and the constant made of it outside the comprehension read `c` undefined."""
    import pytest

    from tfmigrate.native import _with_lines, test_files
    from tfmigrate.native.script import Blocked

    source = ("import tensorflow as tf\n\n\nclass T(tf.test.TestCase):\n\n    def test_min(self):\n"
              "        src = tf.placeholder(tf.float32, [1, 1])\n        loss = tf.abs(src - 1.0)\n"
              "        with self.test_session() as sess:\n"
              "            vals = [sess.run(loss, {src: [[c]]})[0] for c in [0., 1., 2.]]\n")
    module, line_of = _with_lines(cst.parse_module(source))
    with pytest.raises(Blocked):
        test_files.rewrite(module, source, line_of)


def _shared(source: str) -> str:
    function = cst.parse_statement(source)
    return cst.Module(body=[feed_helpers.shared_feeds(function)]).code


def test_a_feed_shared_by_runs_is_written_into_each_its_draws_named_once():
    source = ("def test(self):\n    feed = {x: rng.randn(2), y: ys}\n    a = sess.run(p, feed_dict=feed)\n"
              "    with s:\n        b = s.run(q, feed)\n")
    assert _shared(source) == ("def test(self):\n    feed_x = rng.randn(2)\n"
                               "    a = sess.run(p, feed_dict={x: feed_x, y: ys})\n"
                               "    with s:\n        b = s.run(q, {x: feed_x, y: ys})\n")


def test_a_feed_shared_by_runs_is_kept_where_it_is_read_otherwise_or_its_keys_change():
    kept = ["def test(self):\n    feed = {x: a}\n    sess.run(p, feed_dict=feed)\n    print(feed[x])\n",
            "def test(self):\n    feed = {x: a}\n    sess.run(p, feed_dict=feed)\n    x = other\n"
            "    sess.run(p, feed_dict=feed)\n",
            "def test(self):\n    feed = {x: a, **more}\n    sess.run(p, feed_dict=feed)\n",
            "def test(self):\n    feed = {x: a}\n    feed[y] = b\n    sess.run(p, feed_dict=feed)\n"]
    for source in kept:
        assert _shared(source) == source, source


_FED = ("import numpy as np\nimport tensorflow as tf\n\n\ndef test(self, given):\n    data = np.ones((4, 2))\n"
        "    x = tf.placeholder(tf.float32, [None, 2])\n    loss = tf.reduce_sum(x)\n"
        "    with self.test_session() as sess:\n        a = sess.run(loss, {x: data})\n"
        "        for _ in range(3):\n            sess.run(step, feed_dict={x: %s})\n%s")


def _constant(source: str) -> str:
    from tfmigrate.facts.names import ImportTable

    module = cst.parse_module(source)
    names = ImportTable(module, source)
    function = next(s for s in module.body if isinstance(s, cst.FunctionDef))
    return cst.Module(body=[feed_helpers.constant_feeds(function, names.api, "tf")]).code


def test_a_placeholder_fed_the_same_value_at_every_run_is_that_value():
    written = _constant(_FED % ("data", ""))
    assert "x = tf.constant(data, dtype=tf.float32)" in written and "feed" not in written.replace("feed_dict", "")
    assert "a = sess.run(loss)" in written and "sess.run(step)" in written, written
    assert "x = tf.constant(given, dtype=tf.float32)" in _constant(_FED.replace("{x: data}", "{x: given}") % ("given", ""))


def test_a_placeholder_fed_otherwise_stays():
    for source in (_FED % ("data * 2", ""),  # another value
                   _FED % ("data", "    data = np.zeros((4, 2))\n"),  # the value bound again
                   _FED % ("data", "    n = x.get_shape()[0]\n"),  # a static shape read (the constant's differs)
                   _FED.replace("{x: data}", "{x: given}") % ("given", "    given = 2\n")):  # a parameter rebound
        written = _constant(source)
        assert "tf.placeholder(tf.float32, [None, 2])" in written, (source, written)
