"""native.gradient_checks: what `tf.test.compute_gradient_error` becomes eagerly, and what it
refuses (the positive case runs in tests/fixtures/TFM216/exec_test_gradient_error.py)."""
import libcst as cst
import pytest

from tfmigrate.facts.names import ImportTable
from tfmigrate.native import gradient_checks


def _checked(body: str):
    source = f"import numpy as np\nimport tensorflow as tf\n\n\ndef test(self):\n{body}"
    module = cst.parse_module(source)
    names = ImportTable(module, source)
    function = next(s for s in module.body if isinstance(s, cst.FunctionDef))
    return gradient_checks.checked(function, names.api, "tf")


@pytest.mark.parametrize("body, refused", [
    ("    x = tf.placeholder(tf.float32, [2])\n    y = x * 2.0\n"
     "    e = tf.test.compute_gradient_error(x, [2], y, [2], x_init_value=np.ones(2))\n", "of a placeholder"),
    ("    x = tf.constant([1.0])\n    y = tf.constant([2.0])\n    e = tf.test.compute_gradient_error(x, [1], y, [1])\n",
     "not built from `x`"),
    ("    x = tf.constant([1.0])\n    for k in range(2):\n        y = x * k\n"
     "    e = tf.test.compute_gradient_error(x, [1], y, [1])\n", "written once"),
    ("    x = tf.constant([1.0])\n    e = tf.test.compute_gradient_error([x], [[1]], x * 2.0, [1])\n",
     "given by name"),
    ("    x = tf.constant([1.0])\n    y = x * 2.0\n"
     "    e = tf.test.compute_gradient_error(x, [1], y, [1], extra_feed_dict={})\n", "extra_feed_dict"),
])
def test_a_check_that_no_function_of_x_says_is_refused(body, refused):
    with pytest.raises(gradient_checks.Refused) as raised:
        _checked(body)
    assert refused in raised.value.what


def test_only_what_y_needs_goes_into_the_function():
    written = cst.Module(body=[_checked(
        "    x = tf.constant([1.0, 2.0])\n    other = tf.constant(3.0)\n    h = tf.sin(x)\n    unused = x + 1.0\n"
        "    y = h * other\n    err = tf.test.compute_gradient_error(x, [2], y, [2], delta=1e-4)\n")]).code
    assert "    def y_of(x):\n        h = tf.sin(x)\n        y = h * other\n        return y\n" in written, written
    assert "err = gradient_error(y_of, x, delta=1e-4)" in written
    assert _checked("    x = tf.constant([1.0])\n") is None
