"""Smoke test of scripts/compare_upgrade.py on a tiny synthetic TF1 package: the three figures
(coverage, unresolvable references, native share) are computed. Their values are not checked:
tfmigrate's rules change. Runs tf_upgrade_v2 and imports TensorFlow: about 30 s.
"""
import shutil
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "scripts"))

import compare_upgrade  # noqa: E402

pytestmark = pytest.mark.skipif(
    shutil.which(compare_upgrade.tool_path("tf_upgrade_v2")) is None,
    reason="needs TensorFlow's tf_upgrade_v2 (tensorflow-cpu in the venv)",
)

MODEL = '''\
import tensorflow as tf
from tensorflow.contrib import layers as contrib_layers


def build(x):
    w = tf.get_variable("w", [3, 3])
    y = tf.matmul(x, w)
    y = contrib_layers.fully_connected(y, 4)
    return tf.layers.dense(y, 2)
'''

TRAIN = '''\
import tensorflow as tf


def main():
    x = tf.placeholder(tf.float32, [None, 3])
    y = tf.reduce_sum(x, keep_dims=True)
    tf.logging.info("built")
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        print(sess.run(y, {x: [[1.0, 2.0, 3.0]]}))
    tf.gfile.MakeDirs("/tmp/never")
'''

PLAIN = "def helper():\n    return 1\n"


@pytest.fixture
def package(tmp_path):
    root = tmp_path / "corpus" / "tinypkg-0.1"
    (root / "tinypkg").mkdir(parents=True)
    (root / "tinypkg" / "__init__.py").write_text(PLAIN)
    (root / "tinypkg" / "model.py").write_text(MODEL)
    (root / "tinypkg" / "train.py").write_text(TRAIN)
    return root


def test_report_parser_keeps_changes_and_warnings(tmp_path):
    report = (
        "TensorFlow 2.0 Upgrade Script\nDetailed log follows:\n\n"
        f"Processing file '{tmp_path}/a.py'\n outputting to '{tmp_path}/out/a.py'\n" + "-" * 80 + "\n\n"
        "3:4: INFO: Renamed 'tf.Session' to 'tf.compat.v1.Session'\n"
        "5:0: INFO: `name` passed to `name_scope`. Because you may be re-entering...\n\n"
        "7:2: WARNING: tf.get_variable requires manual check.\nsecond line\n"
    )
    records, unparsed = compare_upgrade.parse_report(report, tmp_path)
    assert [r.kind for r in records[("a.py", 3)]] == ["change"]
    assert [r.kind for r in records[("a.py", 5)]] == ["info"]
    assert records[("a.py", 7)][0].message.endswith("second line")
    assert unparsed == []


def test_three_figures_are_computed(package, tmp_path, capsys):
    figures = compare_upgrade.run(
        [(package.name, package)], tmp_path / "out", timeout=300
    )
    printed = capsys.readouterr().out
    for heading in ("1. COVERAGE", "2. SILENT BREAKAGE", "3. NATIVE SHARE", "SUMMARY"):
        assert heading in printed

    covered, tfu_lines = figures["coverage"]
    assert tfu_lines > 0 and 0 <= covered <= tfu_lines
    assert figures["refs_total"] > 0
    assert 0 <= figures["unresolvable_silent"] <= figures["unresolvable"] <= figures["refs_total"]
    assert figures["tfu_unresolvable"] > 0  # tf.contrib survives tf_upgrade_v2
    assert figures["fixed_unparsable"] == 0
    assert sum(figures["native_tf_upgrade_v2"].values()) > 0
    assert isinstance(figures["ratio"], str)
    assert (tmp_path / "out" / "coverage_misses.txt").exists()
    # nothing was written into the package
    assert (package / "tinypkg" / "train.py").read_text() == TRAIN
    assert (package / "tinypkg" / "model.py").read_text() == MODEL


SCOPED = '''\
import tensorflow.compat.v1 as tf
try:
    from tensorflow.python.ops import rnn_cell_impl as cells
    core = cells
except ImportError:
    from tensorflow.contrib.rnn.python.ops import core_rnn_cell as core


class Cell(core.RNNCell):
    pass


def registered(name):
    layer = lookup(name)
    if layer is not None:
        return layer.use_scope
    import tensorflow as layer
    return layer.ones([1])


def uses_tf_locally():
    import tensorflow as layer
    return layer.ones([1])


from tensorflow.contrib.layers import (
    xavier_initializer)
'''


def test_refs_are_scoped_spanned_and_guarded():
    """A function-local import binds its name only in that function; a reference knows its
    statement's lines; a reference in (or through a name bound in) an `except` block carries the
    TensorFlow imports of its `try`, which decide whether TF 2.21 ever runs it."""
    refs = {(r.line, r.spelled): r for r in compare_upgrade.extract_refs(SCOPED.encode())}
    assert (16, "layer.use_scope") not in refs  # `layer` there is a local variable
    assert refs[(18, "layer.ones")].full == "tensorflow.ones"
    assert refs[(23, "layer.ones")].full == "tensorflow.ones"
    guard = ("tensorflow.python.ops.rnn_cell_impl",)
    assert refs[(6, "tensorflow.contrib.rnn.python.ops.core_rnn_cell")].guard == guard
    assert refs[(9, "core.RNNCell")].guard == guard
    assert refs[(9, "core.RNNCell")].first == refs[(9, "core.RNNCell")].last == 9  # the class header
    assert refs[(3, "tensorflow.python.ops.rnn_cell_impl")].guard == ()
    imported = refs[(26, "tensorflow.contrib.layers.xavier_initializer")]
    assert (imported.first, imported.last) == (26, 27)
