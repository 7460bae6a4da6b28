"""Issue 22 item 2 on issue 21's route: a test file that calls its library's TF1 model functions
(`variable_scope` + `get_variable`) becomes eager TF2, each call through one tracked object per
test (native.test_models), and the library's pure functions are callable one by one
(facts.eager_functions); where the object would share what TF1 made anew, the file keeps the
compat route and TFM216 says why.

Fixtures: tests/fixtures/test_models/<case>/ (a library `ops.py`, which `held` shares with
`shared`, and its `ops_test.py`); the
snapshot of what `fix --native` writes: tests/fixtures/test_models/expected/<case>_test.py.
"""
import os
import shutil
import subprocess
import sys
from pathlib import Path

import libcst as cst
import pytest

from fixtures_lib import snapshot
from tfmigrate.facts.eager_functions import function_draws, function_kinds
from tfmigrate.facts.names import ImportTable
from tfmigrate.native import test_models
from tfmigrate.project.graph_imports import eager_imports

FIXTURES = Path(__file__).parent / "fixtures" / "test_models"
ROOT = Path(__file__).resolve().parent.parent
GRAPH = ("Session(", "placeholder(", "feed_dict", "disable_v2", "test_session", "cached_session")


def _tool(*args, cwd):
    env = dict(os.environ, PYTHONPATH=str(ROOT), NO_COLOR="1")
    return subprocess.run([sys.executable, "-m", "tfmigrate", *args], capture_output=True, text=True, cwd=cwd, env=env)


def _assert_passes(cwd, program: str = "ops_test.py") -> None:
    """The (fixed) test file runs and passes under TF 2.21."""
    ran = _tests(cwd, program)
    assert ran.returncode == 0 and "OK" in ran.stderr, ran.stderr[-3000:]


def _fixed_native(cwd, program: str = "ops_test.py") -> str:
    """The text of `program` after `fix --native` of the project in `cwd`."""
    result = _tool("fix", "--native", "--no-cache", "--exit-zero", ".", cwd=cwd)
    assert result.returncode == 0, result.stderr
    return (cwd / program).read_text()


def _tests(cwd, program: str = "ops_test.py") -> subprocess.CompletedProcess:
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3")
    env.pop("TF_USE_LEGACY_KERAS", None)  # (the fixed file sets it where it needs it)
    return subprocess.run([sys.executable, program], capture_output=True, text=True, cwd=cwd, env=env,
                          timeout=600)


def test_function_kinds_judge_each_function_with_what_it_calls():
    source = (b"import tensorflow as tf\n\nSCALE = 2.0\nPair: tuple = (1, 2)\n\n\n"
              b"def pure(x):\n    return x * SCALE\n\n\n"
              b"def _weights(n):\n    return tf.get_variable('w', [n], initializer=tf.zeros_initializer())\n\n\n"
              b"def model(x, scope=None):\n    with tf.variable_scope(scope, 'model'):\n        return pure(x) * _weights(3)\n\n\n"
              b"def counted(x):\n    return tf.assign_add(_weights(1), x)\n\n\n"
              b"def named(x):\n    return x.name\n\n\n"
              b"class Net(object):\n    def __call__(self, x):\n        return model(x)\n\n\n"
              b"class Plain(object):\n    def __call__(self, x):\n        return pure(x)\n")
    assert function_kinds(source) == {"pure": "pure", "_weights": "model", "model": "model", "counted": "graph",
                                      "named": "graph", "Net": "graph", "Plain": "pure", "SCALE": "pure",
                                      "Pair": "pure"}
    # the module's own top-level code runs otherwise eagerly: nothing of it is callable alone
    assert function_kinds(b"import tensorflow as tf\nx = tf.placeholder(tf.float32)\n\n\ndef f(t):\n    return t\n") is None
    assert function_kinds(b"def broken(:\n") is None
    # a TF1 `Dimension`'s method on a shape's element: eagerly an int (gen51 p02's kernel_ridge_fit
    # failed in the eager test with AttributeError); a TensorShape's own method is TF2's too
    assert function_kinds(b"def square(k):\n    s = k.get_shape().with_rank(2)\n"
                          b"    s[0].assert_is_compatible_with(s[1])\n    return k\n\n\n"
                          b"def merged(a, b):\n    return a.get_shape().merge_with(b.get_shape())\n\n\n"
                          b"def sliced(a, b):\n    return a.get_shape()[:-1].is_compatible_with(b.get_shape())\n") == {
        "square": "graph", "merged": "pure", "sliced": "pure"}
    # a shape element's `.value` is what TFM111 writes `tf.compat.dimension_value(...)` (the same
    # under both behaviours); `tf.scatter_nd` makes a new tensor (a variable's scatter ops change state)
    assert function_kinds(b"import tensorflow as tf\n\n\ndef width(x):\n    return x.get_shape()[-1].value\n\n\n"
                          b"def depth(x):\n    return x.shape[1].value + 1\n\n\n"
                          b"def dims(x):\n    return [d.value for d in x.get_shape()]\n\n\n"
                          b"def dense(i, u):\n    return tf.scatter_nd(i, u, [4])\n\n\n"
                          b"def update(v, i, u):\n    return tf.scatter_nd_update(v, i, u)\n") == {
        "width": "pure", "depth": "pure", "dims": "graph", "dense": "pure", "update": "graph"}


def test_function_draws_name_what_depends_on_the_graph_seed():
    source = (b"import numpy as np\nimport tensorflow as tf\nfrom helpers import jitter\n\n\n"
              b"def shifted(x):\n    return x + np.random.randn(3)\n\n\n"  # numpy's draws: not the graph seed's
              b"def noise(shape):\n    return tf.random.normal(shape)\n\n\n"
              b"def dropped(x, rate):\n    return tf.nn.dropout(x, rate=rate)\n\n\n"
              b"def zeros(n):\n    return tf.get_variable('z', [n], initializer=tf.zeros_initializer())\n\n\n"
              b"def kernel(shape):\n    return tf.get_variable('k', shape=tf.TensorShape(shape))\n\n\n"
              b"def scaled(shape):\n    init = tf.random_normal_initializer(stddev=0.1)\n"
              b"    return tf.get_variable('s', shape, initializer=init)\n\n\n"
              b"def head(x):\n    return tf.matmul(x, kernel([3, 2]))\n\n\n"
              b"def shaken(x):\n    return jitter(x)\n\n\n"
              b"class Sampler(object):\n    def sample(self):\n        return noise([2])\n")
    assert function_draws(source) == {"noise": "run", "dropped": "run", "kernel": "init", "scaled": "init",
                                      "head": "init", "shaken": "run", "Sampler": "run"}
    assert function_draws(b"def broken(:\n") is None
    # a name that says "random" draws nothing; numpy's generators are not the graph seed's; a
    # dataset's shuffle and TensorFlow's dropout wrapper are
    source = (b"import numpy as np\nimport tensorflow as tf\n\n\n"
              b"def _random_graph(n, rng):\n    return (rng.rand(n, n) < 0.5).astype(np.float32)\n\n\n"
              b"def sample_weights(rng):\n    return np.random.shuffle(rng.randn(3))\n\n\n"
              b"def log_gamma(x):\n    return tf.lgamma(x)\n\n\n"
              b"def batches(dataset):\n    return dataset.shuffle(100).batch(2)\n\n\n"
              b"def cell(inner):\n    return tf.nn.rnn_cell.DropoutWrapper(inner, 0.5)\n\n\n"
              b"def first(x):\n    return tf.truncated_normal(tf.shape(x))\n")
    assert function_draws(source) == {"batches": "run", "cell": "run", "first": "run"}
    # what a function calls of the project's other modules: what they draw, function by function
    others = {"ops": {"noise": "run"}, "pkg.layers": {"dense": "init"}}
    source = (b"import ops\nimport unknown\nfrom pkg import layers\nfrom ops import noise, clean\n\n\n"
              b"def a(x):\n    return ops.clean(x)\n\n\ndef b(x):\n    return ops.noise(x)\n\n\n"
              b"def c(x):\n    return layers.dense(x)\n\n\ndef d(x):\n    return clean(x) + noise(x)\n\n\n"
              b"def e(x):\n    return unknown.f(x)\n\n\ndef f(x):\n    return clean(x)\n")
    assert function_draws(source, others.get) == {"b": "run", "c": "init", "d": "run", "e": "run"}


def test_a_seeded_test_of_a_model_function_is_rewritten_only_as_unsafe_and_says_so(tmp_path):
    """TF1 drew the kernel from the graph seed and the op's place in the graph; eagerly the same
    seed draws other numbers. A seeded test of a pure function stays a safe rewrite."""
    root = tmp_path / "seeded"
    shutil.copytree(FIXTURES / "seeded", root)
    pytest.importorskip("tensorflow")
    assert _tool("fix", "--native", "--no-cache", "--exit-zero", ".", cwd=root).returncode == 0
    safe = (root / "ops_test.py").read_text()
    assert "test_session" in safe, safe
    checked = _tool("check", "--native", "--no-cache", "--select", "TFM216", "ops_test.py", cwd=root)
    assert "`tf.set_random_seed` in a test that calls `ops.projection` of the project, whose own draws would " \
           "change under the same seed" in " ".join(checked.stdout.split()), checked.stdout
    shutil.rmtree(root)
    shutil.copytree(FIXTURES / "seeded", root)
    assert _tool("fix", "--native", "--unsafe-fixes", "--no-cache", "--exit-zero", ".", cwd=root).returncode == 0
    fixed = (root / "ops_test.py").read_text()
    assert fixed == snapshot(FIXTURES / "expected" / "seeded_test.py", fixed)
    assert not [w for w in GRAPH if w in fixed], fixed
    assert fixed.count("# tfmigrate: `ops.projection` draws under this seed") == 1, fixed
    assert _tool("fix", "--native", "--unsafe-fixes", "--no-cache", "--exit-zero", ".", cwd=root).returncode == 0
    assert (root / "ops_test.py").read_text() == fixed
    _assert_passes(root)


def test_a_project_draw_run_twice_keeps_the_compat_route(tmp_path):
    """TF1 drew anew at each run of `noise`; eagerly it is one value, drawn once."""
    root = tmp_path / "twice"
    shutil.copytree(FIXTURES / "seeded", root)
    (root / "ops_test.py").write_text(
        "import tensorflow as tf\n\nimport ops\n\n\nclass NoiseTest(tf.test.TestCase):\n\n"
        "    def testNoiseDiffersAtEachRun(self):\n        noise = ops.noise([4])\n"
        "        with self.test_session() as sess:\n            first = sess.run(noise)\n"
        "            second = sess.run(noise)\n        self.assertNotAllClose(first, second)\n\n\n"
        "if __name__ == '__main__':\n    tf.test.main()\n")
    checked = _tool("check", "--native", "--unsafe-fixes", "--no-cache", "--select", "TFM216", "ops_test.py", cwd=root)
    assert "random tensors run more than once" in " ".join(checked.stdout.split()), checked.stdout


def test_eager_imports_list_a_mixed_module_function_by_function(tmp_path):
    paths = []
    for name in ("ops.py", "ops_test.py"):
        shutil.copy(FIXTURES / "shared" / name, tmp_path / name)
        paths.append(str(tmp_path / name))
    found = eager_imports(paths, lambda path: open(path, "rb").read())
    assert found[str(tmp_path / "ops_test.py")] == ("ops._dense:draws=init", "ops._dense:model", "ops.gated:model",
                                                    "ops.masked_mean", "ops.projection:draws=init",
                                                    "ops.projection:model"), found
    # a library with graph code beyond variables leaves v2 behaviour to the programs that run it
    # (its compat route under --native has no `disable_v2_behavior()`): its other functions stay listed
    (tmp_path / "ops.py").write_text((FIXTURES / "shared" / "ops.py").read_text()
                                     + "\n\ndef collected(x):\n    tf.add_to_collection('c', x)\n    return x\n")
    found = eager_imports(paths, lambda path: open(path, "rb").read())[str(tmp_path / "ops_test.py")]
    assert "ops.gated:model" in found and not [e for e in found if e.startswith("ops.collected")], found
    # a program (a session of its own) turns v2 behaviour off where it starts, for the eager test too:
    # nothing of it is listed
    (tmp_path / "ops.py").write_text((FIXTURES / "shared" / "ops.py").read_text()
                                     + "\n\ndef collected(x):\n    tf.add_to_collection('c', x)\n"
                                       "    return tf.Session().run(x)\n")
    assert str(tmp_path / "ops_test.py") not in eager_imports(paths, lambda path: open(path, "rb").read())


_PACKAGE_INIT = "from .dists import *\nfrom .meta import Meta\n"
_DISTS = ("import tensorflow as tf\n\nfrom pkg.meta import Meta\n\n\nclass Normal(object):\n"
          "    def __init__(self, mean):\n        self.mean = tf.convert_to_tensor(mean)\n\n"
          "    def check(self, value):\n        if value.dtype.name != self.mean.dtype.name:\n"
          "            raise TypeError('use %s.observe' % Meta.observe.__name__)\n        return value\n\n"
          "    def sample(self):\n        return self.mean + tf.random_normal(tf.shape(self.mean))\n\n\n"
          "def _private(x):\n    return x\n")
_META = ("import tensorflow as tf\n\n\nclass Meta(object):\n    def observe(self, x):\n"
         "        with tf.variable_scope('meta'):\n            return x * tf.get_variable('s', [])\n")


def test_eager_imports_read_a_package_through_its_reexports(tmp_path):
    """`from pkg import Normal`, which `pkg/__init__.py` passes on from `.dists` (`from .dists import *`):
    a test may call it as `dists` lists it, with what it draws. A dtype's `.name` and a graph class
    named only for its `__name__` (an error message) make nothing of it graph code; `Meta`, which
    makes a variable at each call, stays unlisted (zhusuan's `framework` package)."""
    (tmp_path / "pkg").mkdir()
    files = {"pkg/__init__.py": _PACKAGE_INIT, "pkg/dists.py": _DISTS, "pkg/meta.py": _META,
             "dists_test.py": "import tensorflow as tf\n\nfrom pkg import Normal\n\n\n"
                              "class NormalTest(tf.test.TestCase):\n    def testMean(self):\n"
                              "        self.assertAllClose(Normal(1.0).mean, 1.0)\n"}
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    paths = [str(tmp_path / name) for name in files]
    found = eager_imports(paths, lambda path: open(path, "rb").read())[paths[-1]]
    assert "pkg.Normal" in found and "pkg.Normal:draws=run" in found, found
    assert not [e for e in found if e.startswith(("pkg.Meta", "pkg._private"))], found


def test_a_test_calling_model_functions_becomes_eager_and_passes(tmp_path):
    root = tmp_path / "shared"
    shutil.copytree(FIXTURES / "shared", root)
    pytest.importorskip("tensorflow")
    broken = _tests(root)
    assert broken.returncode != 0 and "placeholder" in broken.stderr, broken.stderr[-2000:]
    result = _tool("fix", "--native", "--unsafe-fixes", "--no-cache", "--exit-zero", ".", cwd=root)
    assert result.returncode == 0, result.stderr
    fixed = (root / "ops_test.py").read_text()
    assert fixed == snapshot(FIXTURES / "expected" / "shared_test.py", fixed)
    library = (root / "ops.py").read_text()
    assert not [w for w in GRAPH if w in fixed or w in library], (fixed, library)
    assert "tf1_variables(ops.projection, states, 3, scope=\"proj\", reuse=True)" in fixed
    # a fixed point: the tracked object's `variable_scope` is no graph code for the next pass
    assert _tool("fix", "--native", "--unsafe-fixes", "--no-cache", "--exit-zero", ".", cwd=root).returncode == 0
    assert (root / "ops_test.py").read_text() == fixed and (root / "ops.py").read_text() == library
    _assert_passes(root)


def test_plain_fix_of_the_same_project_passes_too(tmp_path):
    root = tmp_path / "shared"
    shutil.copytree(FIXTURES / "shared", root)
    pytest.importorskip("tensorflow")
    assert _tool("fix", "--no-cache", "--exit-zero", ".", cwd=root).returncode == 0
    _assert_passes(root)


def test_a_model_function_called_again_without_reuse_keeps_the_compat_route(tmp_path):
    """TF1 made `projection_1/...` at the second call, or raised that `p/...` existed: one tracked
    object would share them instead."""
    root = tmp_path / "held"
    shutil.copytree(FIXTURES / "held", root)
    shutil.copy(FIXTURES / "shared" / "ops.py", root / "ops.py")  # (the same library)
    result = _tool("fix", "--native", "--unsafe-fixes", "--no-cache", "--exit-zero", ".", cwd=root)
    assert result.returncode == 0, result.stderr
    assert "disable_v2_behavior()" in (root / "ops_test.py").read_text()
    check = _tool("check", "--native", "--no-cache", "--format", "concise", ".", cwd=root)
    assert "`ops.projection` called again without `reuse=True`" in check.stdout, check.stdout
    pytest.importorskip("tensorflow")
    _assert_passes(root)


@pytest.mark.parametrize("body, refused", [
    ("for n in (1, 2):\n        ops.projection(x, n, scope='p%d' % n)\n", "called in a loop"),
    ("f = ops.projection\n    f(x, 3)\n", "read other than called"),
    ("ops.projection(x, 3)\n    v = tf.Variable(1.0)\n    n = len(tf.trainable_variables())\n",
     "also makes variables itself"),
    ("ops.projection(x, 3, scope='a')\n    ops.projection(x, 3, scope='a')\n", "called again without `reuse=True`"),
    ("ops.projection(x, 3, scope='a')\n    n = tf.trainable_variables('a')\n", "given a scope or collection"),
    # expected to raise, where a TF1 graph would not build what the test's graph had built before it:
    # a name bound twice, a placeholder, an earlier model call inside a block
    ("y = tf.ones([2, 3])\n    ops.projection(y, 3, scope='a')\n    y = tf.ones([2, 4])\n"
     "    with self.assertRaises(ValueError):\n        ops.projection(y, 3, scope='a')\n", "expected to raise"),
    ("p = tf.placeholder(tf.float32, [None, 3])\n    ops.projection(p, 3, scope='a')\n"
     "    with self.assertRaises(ValueError):\n        ops.projection(p, 3, scope='a')\n", "expected to raise"),
    ("with tf.name_scope('n'):\n        ops.projection(x, 3, scope='a')\n"
     "    with self.assertRaises(ValueError):\n        ops.projection(x, 3, scope='a')\n", "expected to raise"),
])
def test_what_one_tracked_object_would_share_unlike_tf1_is_refused(body, refused):
    source = f"import tensorflow as tf\nimport ops\n\n\ndef test(x):\n    {body}"
    module = cst.parse_module(source)
    names = ImportTable(module, source)
    function = next(s for s in module.body if isinstance(s, cst.FunctionDef))
    with pytest.raises(test_models.Refused) as raised:
        test_models.routed(function, test_models.Models(frozenset({"ops.projection"})), names.api, "tf")
    assert refused in raised.value.what


@pytest.mark.parametrize("body, built", [
    ("with self.assertRaises(ValueError):\n        ops.projection(x, 3, scope='a', reuse=True)\n",
     "tf.compat.v1.wrap_function(lambda: [ops.projection(x, 3, scope='a', reuse=True)], [])"),
    ("ops.projection(x, 3, scope='a')\n    with self.assertRaises(ValueError):\n        ops.projection(x, 3, scope='a')\n",
     "tf.compat.v1.wrap_function(lambda: [ops.projection(x, 3, scope='a'), ops.projection(x, 3, scope='a')], [])"),
    # in the test's graph block, where its calls are
    ("with tf.Graph().as_default():\n        y = tf.zeros([1, 3])\n        ops.projection(y, 3, scope='a')\n"
     "        with self.assertRaises(ValueError):\n            ops.projection(y, 3, scope='a')\n",
     "tf.compat.v1.wrap_function(lambda: [ops.projection(y, 3, scope='a'), ops.projection(y, 3, scope='a')], [])"),
])
def test_a_model_function_expected_to_raise_is_built_in_a_tf1_graph_after_the_tests_model_calls(body, built):
    """TF1's variable store raised ("already exists", "does not exist"); one tracked object never
    does, so the check builds the call in a TF1 graph (`wrap_function`), after the model calls the
    test's graph had built before it (the seeded fixture runs both kinds)."""
    source = f"import tensorflow as tf\nimport ops\n\n\ndef test(self, x):\n    {body}"
    module = cst.parse_module(source)
    names = ImportTable(module, source)
    function = next(s for s in module.body if isinstance(s, cst.FunctionDef))
    routed, _, _ = test_models.routed(function, test_models.Models(frozenset({"ops.projection"})), names.api, "tf")
    assert built in cst.Module(body=[routed]).code, cst.Module(body=[routed]).code


def test_two_scopes_of_their_own_and_a_reuse_are_routed():
    source = ("import tensorflow as tf\nimport ops\n\n\ndef test(x):\n    a = ops.projection(x, 3, scope='enc')\n"
              "    b = ops.projection(x, 3, scope='dec')\n    c = ops.projection(x, 3, scope='enc', reuse=True)\n"
              "    names = [v.op.name for v in tf.global_variables()]\n")
    module = cst.parse_module(source)
    names = ImportTable(module, source)
    function = next(s for s in module.body if isinstance(s, cst.FunctionDef))
    routed, held, store = test_models.routed(function, test_models.Models(frozenset({"ops.projection"})), names.api, "tf")
    written = cst.Module(body=[routed]).code
    assert store == "tf1_variables" and held == {"v"}
    assert "tf1_variables = TF1Variables()\n" in written
    assert "c = tf1_variables(ops.projection, x, 3, scope='enc', reuse=True)" in written
    assert 'names = [v.name.split(":")[0] for v in tf1_variables.all()]' in written


def test_model_functions_called_outside_a_test_method_keep_the_compat_route():
    """`setUp` or a helper making the variables: they would not be the test's (its object is the
    test's own), so the file keeps the route; a pure function of the same module stays callable."""
    from tfmigrate.native import _with_lines, test_files
    from tfmigrate.native.script import Blocked

    eager = ("ops.masked_mean", "ops.projection:model")
    for source in ("import tensorflow as tf\nimport ops\n\n\nclass T(tf.test.TestCase):\n\n    def setUp(self):\n"
                   "        self.y = ops.projection(tf.ones([1, 2, 4]), 3)\n\n    def test_y(self):\n"
                   "        self.assertEqual(3, self.y.shape[-1])\n",
                   "import tensorflow as tf\nimport ops\n\n\ndef build():\n    return ops.projection(tf.ones([1, 2, 4]), 3)\n\n\n"
                   "class T(tf.test.TestCase):\n\n    def test_y(self):\n        self.assertEqual(3, build().shape[-1])\n"):
        module, line_of = _with_lines(cst.parse_module(source))
        with pytest.raises(Blocked):
            test_files.rewrite(module, source, line_of, eager)
    pure = ("import tensorflow as tf\nimport ops\n\n\nclass T(tf.test.TestCase):\n\n    def test_mean(self):\n"
            "        with self.test_session() as sess:\n"
            "            self.assertAllClose([1.0], sess.run(ops.masked_mean(tf.ones([1, 2]), [2])))\n")
    module, line_of = _with_lines(cst.parse_module(pure))
    assert "self.evaluate(ops.masked_mean(" in test_files.rewrite(module, pure, line_of, eager)


def test_a_variable_list_read_before_the_model_code_runs_eagerly_keeps_the_compat_route():
    """A fresh judge project: the build went into a graph function below the list read (TF1 had
    built it first; eagerly nothing was made yet: `var, = []`)."""
    from tfmigrate.native import _with_lines, test_files
    from tfmigrate.native.script import Blocked

    source = ("import numpy as np\nimport tensorflow as tf\nimport ops\n\n\nclass T(tf.test.TestCase):\n\n"
              "    def test_gradient(self):\n        x = tf.placeholder(tf.float32, [None, 4])\n"
              "        y = ops.gated(x, scope='g')\n        var, = tf.global_variables()\n"
              "        grad, = tf.gradients(tf.reduce_sum(y), [var])\n        with self.test_session() as sess:\n"
              "            sess.run(tf.global_variables_initializer())\n"
              "            sess.run(grad, {x: np.ones([2, 4])})\n            sess.run(grad, {x: np.ones([3, 4])})\n")
    module, line_of = _with_lines(cst.parse_module(source))
    with pytest.raises(Blocked, match="the variable lists read before the model code"):
        test_files.rewrite(module, source, line_of, ("ops.gated:model",))


def test_a_test_that_trains_its_model_becomes_eager_and_follows_tf1s_numbers(tmp_path):
    """The `trained` fixture checks each optimizer's losses against the same rule in numpy
    (rtol 1e-5): TF1's optimizer in the eager step meets it; Keras's Adam, measured, did not."""
    root = tmp_path / "trained"
    shutil.copytree(FIXTURES / "trained", root)
    pytest.importorskip("tensorflow")
    broken = _tests(root)
    assert broken.returncode != 0, broken.stderr[-2000:]
    assert _tool("fix", "--native", "--no-cache", "--exit-zero", ".", cwd=root).returncode == 0
    fixed = (root / "ops_test.py").read_text()
    assert fixed == snapshot(FIXTURES / "expected" / "trained_test.py", fixed)
    assert not [w for w in GRAPH if w in fixed], fixed
    assert fixed.count("def train_op():") == 6 and "inputs = tf.constant(data, dtype=tf.float32)" in fixed and "tf.compat.v1.train.AdagradOptimizer(0.1)" in fixed
    assert _tool("fix", "--native", "--no-cache", "--exit-zero", ".", cwd=root).returncode == 0
    assert (root / "ops_test.py").read_text() == fixed
    _assert_passes(root)
    shutil.rmtree(root)
    shutil.copytree(FIXTURES / "trained", root)
    assert _tool("fix", "--no-cache", "--exit-zero", ".", cwd=root).returncode == 0
    compat = _tests(root)
    assert compat.returncode == 0 and "OK" in compat.stderr, compat.stderr[-3000:]


_TRAIN = ("y = ops.projection(x, 3)\n    loss = tf.reduce_sum(y)\n"
          "    train_op = tf.train.GradientDescentOptimizer(0.1).minimize({minimize})\n"
          "    with self.test_session() as sess:\n        {runs}\n")


@pytest.mark.parametrize("body, refused", [
    (_TRAIN.format(minimize="loss, global_step=step", runs="sess.run(train_op)"), "given `global_step=`"),
    (_TRAIN.format(minimize="loss", runs="sess.run(train_op, {x: np.ones([2, 4])})"), "given a feed"),
    (_TRAIN.format(minimize="loss", runs="self.assertIsNotNone(train_op)"), "used other than run"),
    (_TRAIN.format(minimize="loss", runs="sess.run(train_op)\n        z = 2.0 * loss"),
     "computed from the model after its train op"),
    (_TRAIN.format(minimize="loss", runs="a, b = sess.run(loss), sess.run(loss)"), "two runs of the model"),
    (_TRAIN.format(minimize="loss + 1.0", runs="sess.run(train_op)"), "of other than a name"),
    (_TRAIN.format(minimize="loss", runs="sess.run(train_op)") + "    g = tf.gradients(loss, [x])\n", "beside a train op"),
    (_TRAIN.format(minimize="loss", runs="sess.run(train_op)") + "    v = tf.Variable(1.0)\n", "beside a train op"),
    ("y = ops.projection(x, 3)\n    self.assertEqual(3, y.shape[-1])\n    loss = tf.reduce_sum(y)\n"
     "    train_op = tf.train.AdamOptimizer(0.1).minimize(loss)\n", "other than `x = ...`"),
    ("y = ops.projection(x, 3)\n    y = tf.ones([2, 3])\n    loss = tf.reduce_sum(y)\n"
     "    train_op = tf.train.AdamOptimizer(0.1).minimize(loss)\n", "bound between the statements"),
    ("y = ops.projection(x, 3)\n    loss = tf.reduce_sum(y) * x\n    x = 2.0\n"
     "    train_op = tf.train.AdamOptimizer(0.1).minimize(loss)\n", "bound more than once"),
    ("y = ops.projection(x, 3)\n    loss = tf.reduce_sum(y) * self.scale\n"
     "    train_op = tf.train.AdamOptimizer(0.1).minimize(loss)\n", "`self.` state"),
    ("y = ops.projection(x, 3)\n    loss = tf.reduce_sum(y)\n    a = tf.train.AdamOptimizer(0.1).minimize(loss)\n"
     "    b = tf.train.AdamOptimizer(0.1).minimize(loss)\n", "a second `minimize`"),
    ("y = ops.projection(x, 3)\n    loss = tf.reduce_sum(y)\n    train_op = make_optimizer().minimize(loss)\n",
     "of other than a TF1 optimizer"),
])
def test_a_train_op_that_would_not_step_as_tf1_did_is_refused(body, refused):
    from tfmigrate.native import test_training

    source = f"import numpy as np\nimport tensorflow as tf\nimport ops\n\n\ndef test(self, x, step):\n    {body}"
    module = cst.parse_module(source)
    names = ImportTable(module, source)
    function = next(s for s in module.body if isinstance(s, cst.FunctionDef))
    routed, _, store = test_models.routed(function, test_models.Models(frozenset({"ops.projection"})), names.api, "tf")
    with pytest.raises(test_training.Refused) as raised:
        test_training.trained(routed, store, names.api, "tf")
    assert refused in raised.value.what


def test_a_test_without_a_train_op_is_left_to_the_other_rewrites():
    from tfmigrate.native import test_training

    source = "import tensorflow as tf\nimport ops\n\n\ndef test(self, x):\n    y = ops.projection(x, 3)\n"
    module = cst.parse_module(source)
    names = ImportTable(module, source)
    function = next(s for s in module.body if isinstance(s, cst.FunctionDef))
    routed, _, store = test_models.routed(function, test_models.Models(frozenset({"ops.projection"})), names.api, "tf")
    assert test_training.trained(routed, store, names.api, "tf") is None


def test_a_model_function_stacked_from_another_modules_model_functions_is_routed_too(tmp_path):
    """`model.two_layer` makes its variables through `layers.dense` (one store tracks both);
    `model.named` reaches `layers.op_name`, graph code: not callable from an eager test."""
    root = tmp_path / "split"
    shutil.copytree(FIXTURES / "split", root)
    paths = [str(root / name) for name in ("layers.py", "model.py", "model_test.py")]
    found = eager_imports(paths, lambda path: open(path, "rb").read())[paths[2]]
    assert "model.two_layer:model" in found and not [e for e in found if e.startswith("model.named")], found
    pytest.importorskip("tensorflow")
    assert _tool("fix", "--native", "--no-cache", "--exit-zero", ".", cwd=root).returncode == 0
    fixed = (root / "model_test.py").read_text()
    assert "tf1_variables(model.two_layer, x, 4, 2)" in fixed and not [w for w in GRAPH if w in fixed], fixed
    assert "disable_v2_behavior" not in (root / "layers.py").read_text() + (root / "model.py").read_text()
    _assert_passes(root, "model_test.py")


def test_a_library_checking_shapes_with_dimension_methods_is_callable_once_fixed(tmp_path):
    """`shape[0].assert_is_compatible_with(...)` is graph code as written (an int has no such
    method eagerly) and eager code once TFM111 writes `tf.compat.dimension_at_index`: the test
    file's imports are judged as `fix` leaves them (workspace.plan._as_fixed)."""
    (tmp_path / "checks.py").write_text(
        "import tensorflow as tf\n\n\ndef gram(x):\n    shape = x.get_shape().with_rank(2)\n"
        "    shape[0].assert_is_compatible_with(shape[1])\n    return tf.matmul(x, x, transpose_b=True)\n")
    (tmp_path / "checks_test.py").write_text(
        "import numpy as np\nimport tensorflow as tf\n\nimport checks\n\n\nclass GramTest(tf.test.TestCase):\n\n"
        "    def testGram(self):\n        with self.test_session() as sess:\n"
        "            value = sess.run(checks.gram(tf.eye(3)))\n        self.assertAllClose(np.eye(3), value)\n\n\n"
        "if __name__ == '__main__':\n    tf.test.main()\n")
    fixed = _fixed_native(tmp_path, "checks_test.py")
    assert "self.evaluate(checks.gram(tf.eye(3)))" in fixed and "test_session" not in fixed, fixed
    assert "tf.compat.dimension_at_index(shape, 0)" in (tmp_path / "checks.py").read_text()
    pytest.importorskip("tensorflow")
    _assert_passes(tmp_path, "checks_test.py")


def test_a_library_beside_its_programs_graph_code_is_callable_by_an_eager_test(tmp_path):
    """`ops.py` holds a trainer class with placeholders (graph code `train.py` runs) beside the model
    function and loss its tests call. With --native the library's compat route leaves v2 behaviour
    to `train.py`, which turns it off where it starts, and the test file (naming no class of it, so
    not of the class group) becomes eager; `train.py` prints the compat route's line."""
    root = tmp_path / "beside_graph"
    shutil.copytree(FIXTURES / "beside_graph", root)
    assert _tool("fix", "--native", "--no-cache", "--exit-zero", ".", cwd=root).returncode == 0
    fixed = (root / "ops_test.py").read_text()
    assert "tf1_variables(ops.dense, tf.ones([2, 4]), 3)" in fixed and not [w for w in GRAPH if w in fixed], fixed
    library, program = (root / "ops.py").read_text(), (root / "train.py").read_text()
    assert "disable_v2_behavior" not in library and "tf.placeholder(" in library, library
    assert "tf.disable_v2_behavior()" in program, program
    assert _tool("fix", "--native", "--no-cache", "--exit-zero", ".", cwd=root).returncode == 0
    assert (root / "ops.py").read_text() == library and (root / "ops_test.py").read_text() == fixed
    pytest.importorskip("tensorflow")
    _assert_passes(root)
    trained = _tests(root, "train.py")
    assert trained.stdout.strip().splitlines()[-1] == "loss=0.00066", trained.stderr[-2000:]


def test_a_class_that_makes_its_variables_in_init_is_made_through_the_store(tmp_path):
    """`model.Factors` makes its variables in `__init__` only and computes in pure methods: the
    test makes the object through the store (its variables by TF1 name, listed as TF1 listed
    them) and calls its methods outside it, a training step included. `model.Lazy` makes a
    variable at each call: not callable from an eager test."""
    root = tmp_path / "objects"
    shutil.copytree(FIXTURES / "objects", root)
    paths = [str(root / name) for name in ("model.py", "model_test.py")]
    found = eager_imports(paths, lambda path: open(path, "rb").read())[paths[1]]
    assert "model.Factors:model" in found and not [e for e in found if e.startswith("model.Lazy")], found
    assert function_kinds((root / "model.py").read_bytes()) == {"Factors": "model", "Lazy": "graph"}
    assert _tool("fix", "--native", "--no-cache", "--exit-zero", ".", cwd=root).returncode == 0
    fixed = (root / "model_test.py").read_text()
    assert "factors = tf1_variables(model.Factors, 3, 4, 2)" in fixed and not [w for w in GRAPH if w in fixed], fixed
    pytest.importorskip("tensorflow")
    _assert_passes(root, "model_test.py")


@pytest.mark.parametrize("tail, library", [
    ("", True),
    ("\n\nclass Trainer(object):\n    def __init__(self):\n        self.x = tf.placeholder(tf.float32)\n", True),
    ("\n\ndef run(y):\n    return tf.Session().run(y)\n", False),  # a program: its own session
    ("\n\ndef run(y):\n    return tf.train.MonitoredSession().run(y)\n", False),
    ("\n\nif __name__ == '__main__':\n    print(1)\n", False),  # an entry point
    ("\n\nX = tf.placeholder(tf.float32)\n", False),  # its top level builds a graph
])
def test_a_library_of_graph_programs_is_one_without_a_program_of_its_own(tail, library):
    from tfmigrate.facts.eager_functions import library_only

    source = (FIXTURES / "shared" / "ops.py").read_text() + tail
    assert library_only(source.encode("utf-8")) is library


_SHARING = ("import tensorflow as tf\n\n\ndef encode(x, reuse=tf.AUTO_REUSE):\n"
            "    with tf.variable_scope('enc', reuse=reuse):\n"
            "        w = tf.get_variable('w', [3, 2], initializer=tf.constant_initializer(0.5))\n"
            "        h = tf.matmul(x, w)\n    return tf.nn.relu(h)\n%s")


@pytest.mark.parametrize("tail, shared", [
    ("", {"encode"}),
    ("\n\ndef literal(x):\n    with tf.variable_scope('lit', reuse=tf.AUTO_REUSE):\n"
     "        return x * tf.get_variable('s', [], initializer=tf.ones_initializer())\n", {"encode", "literal"}),
    ("\n\ndef outside(x):\n    with tf.variable_scope('o', reuse=tf.AUTO_REUSE):\n        y = encode(x)\n"
     "    return y * tf.get_variable('extra', [])\n", {"encode"}),  # a variable made outside the shared scope
    ("\n\ndef twice(x):\n    with tf.variable_scope('t', reuse=tf.AUTO_REUSE):\n        y = x\n"
     "    return encode(y, reuse=None)\n", {"encode"}),  # model code called outside it
    # `reuse=True`: it finds what an earlier call made, at every call
    ("\n\ndef again(x):\n    with tf.variable_scope('enc', reuse=True):\n"
     "        return x * tf.get_variable('w', [3, 2])\n", {"encode", "again"}),
    # its variables all made by the module's sharing functions (a loss over an AUTO_REUSE step)
    ("\n\ndef loss(x):\n    h = encode(x)\n    return tf.reduce_mean(encode(h * 2.0))\n", {"encode", "loss"}),
    ("\n\ndef mixed(x):\n    h = encode(x)\n    with tf.variable_scope('m'):\n"
     "        return h * tf.get_variable('k', [])\n", {"encode"}),
])
def test_model_functions_that_share_their_variables_by_default(tail, shared):
    from tfmigrate.facts.eager_functions import shared_by_default

    data = (_SHARING % tail).encode("utf-8")
    assert shared_by_default(data, function_kinds(data)) == shared


def test_a_model_function_sharing_by_default_may_be_called_in_a_loop():
    """TF1 shared its variables at each call of the loop (`reuse=tf.AUTO_REUSE`), as the object does."""
    source = ("import tensorflow as tf\nimport ops\n\n\ndef test(x):\n    for n in (1, 2):\n"
              "        x = ops.projection(x, 3)\n")
    module = cst.parse_module(source)
    function = next(s for s in module.body if isinstance(s, cst.FunctionDef))
    models = test_models.Models(frozenset({"ops.projection"}), frozenset({"ops.projection"}))
    routed, _, store = test_models.routed(function, models, ImportTable(module, source).api, "tf")
    assert f"x = {store}(ops.projection, x, 3)" in cst.Module(body=[routed]).code


def test_a_model_function_sharing_by_default_may_be_called_twice(tmp_path):
    """`reuse=tf.AUTO_REUSE` as its default: TF1's second call shared the variables, and so does the
    test's store (gen53 p08's `capsnet`)."""
    (tmp_path / "ops.py").write_text(_SHARING % "")
    (tmp_path / "ops_test.py").write_text(
        "import numpy as np\nimport tensorflow as tf\n\nimport ops\n\n\nclass SharedTest(tf.test.TestCase):\n\n"
        "    def testSharedByDefault(self):\n        a = ops.encode(tf.ones([2, 3]))\n        b = ops.encode(tf.ones([2, 3]))\n"
        "        self.assertEqual(1, len(tf.trainable_variables()))\n        with self.test_session() as sess:\n"
        "            sess.run(tf.global_variables_initializer())\n            va, vb = sess.run([a, b])\n"
        "        self.assertAllClose(np.full((2, 2), 1.5), va)\n        self.assertAllClose(va, vb)\n\n\n"
        "if __name__ == '__main__':\n    tf.test.main()\n")
    fixed = _fixed_native(tmp_path)
    assert fixed.count("tf1_variables(ops.encode, tf.ones([2, 3]))") == 2 and "test_session" not in fixed, fixed
    pytest.importorskip("tensorflow")
    _assert_passes(tmp_path)


def test_a_function_of_sharing_functions_called_in_a_loop_shares_them_too(tmp_path):
    """`stacked` makes its variables only through `encode` (`reuse=tf.AUTO_REUSE`): TF1 shared them
    at each call, in a loop too, and so does the test's store (gen57 p07's `unroll` over `lstm_step`)."""
    (tmp_path / "ops.py").write_text(_SHARING % "\n\ndef stacked(x):\n    h = encode(x)\n"
                                                 "    return encode(tf.concat([h, h[:, :1]], 1))\n")
    (tmp_path / "ops_test.py").write_text(
        "import numpy as np\nimport tensorflow as tf\n\nimport ops\n\n\nclass SharedTest(tf.test.TestCase):\n\n"
        "    def testLoopShares(self):\n        h = tf.ones([2, 3])\n        for _ in range(2):\n"
        "            h = tf.concat([ops.stacked(h), tf.ones([2, 1])], 1)\n"
        "        self.assertEqual(1, len(tf.trainable_variables()))\n        with self.test_session() as sess:\n"
        "            sess.run(tf.global_variables_initializer())\n            value = sess.run(h)\n"
        "        self.assertAllClose(np.array([[4.125, 4.125, 1.0]] * 2), value)\n\n\n"
        "if __name__ == '__main__':\n    tf.test.main()\n")
    fixed = _fixed_native(tmp_path)
    assert "tf1_variables(ops.stacked, h)" in fixed and "test_session" not in fixed, fixed
    pytest.importorskip("tensorflow")
    _assert_passes(tmp_path)


_GRADIENT_OPS = ("import tensorflow as tf\n\n\ndef encode(x, units):\n    with tf.variable_scope('enc'):\n"
                 "        w = tf.get_variable('w', [int(x.shape[-1]), units], "
                 "initializer=tf.constant_initializer(0.5))\n        return tf.reduce_sum(tf.tanh(tf.matmul(x, w)))\n")
_GRADIENT_TEST = ("import numpy as np\nimport tensorflow as tf\n\nimport ops\n\n\nclass EncodeTest(tf.test.TestCase):\n\n"
                  "    def test_gradients_reach_the_input_and_the_weights(self):\n"
                  "        x = tf.constant(np.ones((2, 3), np.float32))\n        loss = ops.encode(x, 4)\n"
                  "        grads = tf.gradients(loss, [x] + tf.trainable_variables())\n"
                  "        self.assertNotIn(None, grads)\n        with self.test_session() as sess:\n"
                  "            sess.run(tf.global_variables_initializer())\n"
                  "            gx, gw = sess.run(grads)\n"
                  "        slope = 1.0 - np.tanh(1.5) ** 2\n"
                  "        self.assertAllClose(gx, np.full((2, 3), 4 * 0.5 * slope), rtol=1e-5)\n"
                  "        self.assertAllClose(gw, np.full((3, 4), 2 * slope), rtol=1e-5)\n\n\n"
                  "if __name__ == '__main__':\n    tf.test.main()\n")


def test_gradients_of_tensors_beside_the_models_trainable_variables_are_taped(tmp_path):
    """`tf.gradients(loss, [x] + tf.trainable_variables())` (gen54 p08's protonet test): the tape
    records from where the model code first runs, watches `x`, and takes the gradient of the same
    list, the variables the store made."""
    (tmp_path / "ops.py").write_text(_GRADIENT_OPS)
    (tmp_path / "ops_test.py").write_text(_GRADIENT_TEST)
    fixed = _fixed_native(tmp_path)
    assert not [w for w in GRAPH if w in fixed], fixed
    assert "            tape.watch(x)\n            loss = tf1_variables(ops.encode, x, 4)\n" in fixed, fixed
    assert "grads = tape.gradient(loss, [x] + tf1_variables.trainable())" in fixed, fixed
    pytest.importorskip("tensorflow")
    _assert_passes(tmp_path)


def test_variables_read_by_name_inside_a_run_are_the_store_variables_in_place():
    """`with tf.variable_scope("s", reuse=True): k, b = sess.run([tf.get_variable("k"), ...])`:
    each read is the store's variable of that name where it is; a block that also builds model
    code is no such read (its scope names what it builds)."""
    head = "import tensorflow as tf\nimport ops\n\n\ndef test(self, x, sess):\n    y = ops.projection(x, 3, scope='s')\n"
    read = ("    with tf.variable_scope('s', reuse=True):\n"
            "        k, b = sess.run([tf.get_variable('kernel'), tf.get_variable('bias')])\n")
    module = cst.parse_module(head + read)
    names = ImportTable(module, head + read)
    function = next(s for s in module.body if isinstance(s, cst.FunctionDef))
    routed, held, _ = test_models.routed(function, test_models.Models(frozenset({"ops.projection"})), names.api, "tf")
    written = cst.Module(body=[routed]).code
    assert ('    k, b = sess.run([tf1_variables.variable("s/kernel"), tf1_variables.variable("s/bias")])\n'
            in written), written
    assert "variable_scope" not in written and not held
    building = read.replace("tf.get_variable('bias')]", "tf.get_variable('bias'), tf.layers.dense(x, 2)]")
    module = cst.parse_module(head + building)
    function = next(s for s in module.body if isinstance(s, cst.FunctionDef))
    routed, _, _ = test_models.routed(function, test_models.Models(frozenset({"ops.projection"})),
                                      ImportTable(module, head + building).api, "tf")
    assert "tf.variable_scope('s', reuse=True)" in cst.Module(body=[routed]).code
