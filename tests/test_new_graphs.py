"""native.new_graphs: a graph named first, read as the `with` test_files opens; where not (the
positive cases run in tests/fixtures/TFM216/exec_test_bound_graph.py)."""
import libcst as cst

from tfmigrate.facts.names import ImportTable
from tfmigrate.native import new_graphs


def _bound(body: str) -> str:
    source = f"import tensorflow as tf\n\n\ndef test(self):\n{body}"
    module = cst.parse_module(source)
    names = ImportTable(module, source)
    function = next(s for s in module.body if isinstance(s, cst.FunctionDef))
    return cst.Module(body=[new_graphs.bound_graphs(function, names.api)]).code


def test_a_graph_named_first_is_bound_by_its_with():
    written = _bound("    # own graph\n    g = tf.Graph()\n    with g.as_default():\n"
                     "        with self.test_session(graph=g):\n            pass\n")
    assert "    # own graph\n    with tf.Graph().as_default() as g:\n" in written, written


def test_a_graph_read_otherwise_stays():
    kept = "    g = tf.Graph()\n    with g.as_default():\n        pass\n    print(g.get_operations())\n"
    assert "g = tf.Graph()" in _bound(kept)


def test_a_with_of_a_graph_and_a_session_is_two_withs():
    written = _bound("    with tf.Graph().as_default(), self.test_session() as s:\n        s.run(x)\n")
    assert "    with tf.Graph().as_default():\n        with self.test_session() as s:\n            s.run(x)\n" in written, written
