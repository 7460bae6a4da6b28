"""`fix --native` (tfmigrate.native, issue 13): the rewrite of each TFM216 executable program is
snapshotted and leaves no TF1 graph construct; what stops a rewrite is named; the option works
from the command line and from `[tool.tfmigrate]`; a helper of a rewritten script stays eager.
Whether the rewritten programs print the graph originals' numbers: tests/test_exec.py (after
`fix --native`) and tests/test_program_mode.py (the original through the compat route)."""
import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Dict, Optional

import pytest

from fixtures_lib import FIXTURES, snapshot
from tf_programs import run_python
from tfmigrate.catalogue import catalogue
from tfmigrate.core.engine import fix_source
from tfmigrate.native import rewrite

EXEC = sorted((FIXTURES / "TFM216").glob("exec_*.py"))
# Graph mode's constructs (issue 21's definition of eager TF2). `tf.compat.v1` names that run
# eagerly (RNN cells, the model-mapping route's `track_tf1_style_variables`) are allowed, except
# the compat-route import itself. The program's own names may say what they were
# (`input_placeholder`, `create_feed_dict`): the API calls and the `feed_dict=` of a run may not.
TF1_LEFT = re.compile(r"Session\(|\.placeholder(_with_default)?\(|\bplaceholder\(|feed_dict=|disable_v2_behavior|"
                      r"disable_eager_execution|import tensorflow\.compat\.v1")
ALL = list(catalogue())


def _code_lines(text: str) -> str:
    return "\n".join(line for line in text.splitlines() if not line.lstrip().startswith("#"))


@pytest.mark.parametrize("case", EXEC, ids=lambda p: p.name)
def test_rewrite_snapshot(case):
    source = case.read_text(encoding="utf-8")
    unsafe = bool(re.search(r"^# fix-args:.*--unsafe-fixes", source, re.MULTILINE))  # a shuffled queue pipeline
    keras3 = bool(re.search(r"^# fix-args:.*--keras3", source, re.MULTILINE))  # level 3 (native.keras3)
    outcome = rewrite(source, unsafe=unsafe, keras3=keras3)
    assert outcome.blocker is None, str(outcome.blocker)
    assert outcome.code == snapshot(case.parent / "expected" / f"{case.stem}.native", outcome.code)


@pytest.mark.parametrize("case", EXEC, ids=lambda p: p.name)
def test_fixed_program_is_native_and_a_fixed_point(case):
    result = fix_source(case.read_bytes(), case.name, ALL, unsafe=True, native=True)
    fixed = result.fixed.decode("utf-8")
    assert not TF1_LEFT.search(_code_lines(fixed)), _code_lines(fixed)
    assert "TFM216" in result.fixed_rules
    again = fix_source(result.fixed, case.name, ALL, unsafe=True, native=True)
    assert again.fixed is None


MODEL = "import tensorflow as tf\nx = tf.placeholder(tf.float32, [None, 1])\n"
RUN = "with tf.Session() as s:\n    s.run([a, b], {x: [[1.0]]})\n"
SAVER = "import tensorflow as tf\nx = tf.placeholder(tf.float32)\n"
DATASET_ADAM = ("import tensorflow as tf\nds = tf.data.Dataset.from_tensor_slices([1.0, 2.0]).repeat()\n"
                "it = ds.make_one_shot_iterator()\nx = it.get_next()\nw = tf.Variable(1.0)\nl = tf.square(x * w)\n"
                "t = tf.train.AdamOptimizer(0.1).minimize(l)\ns = tf.train.Saver()\nwith tf.Session() as sess:\n"
                "    sess.run(tf.global_variables_initializer())\n    sess.run(t)\n    s.save(sess, 'm')\n")
ENTRY = ("import tensorflow as tf\ndef main():\n    x = tf.placeholder(tf.float32)\n    w = tf.Variable(2.0)\n"
         "    with tf.Session() as sess:\n        sess.run(tf.global_variables_initializer())\n"
         "        print(sess.run(w * x, {x: 1.0}))\n        print(sess.run(w))\n")


@pytest.mark.parametrize("source, construct", [
    ("import tensorflow as tf\nx = tf.placeholder(tf.float32)\ny = x * 2\nprint(y)\n"
     "with tf.Session() as s:\n    s.run(y, {x: 1.0})\n", "the tensor `y` used by Python code"),
    ("import tensorflow as tf\na = tf.constant(1.0)\nb = 3\nwith tf.Session() as s:\n    s.run(a, {b: 1.0})\n",
     "which is not a tensor"),
    ("import tensorflow as tf\ndef f(x):\n    w = tf.Variable(1.0)\n    return w * x\nx = tf.placeholder(tf.float32)\n"
     "y = f(x)\nwith tf.Session() as s:\n    s.run(y, {x: 1.0}, options=None)\n", "options"),
    # TF1 model functions (model_mapping): what one tracked object per function or call cannot keep
    (MODEL + "def net(x):\n    with tf.variable_scope('net'):\n        return tf.layers.dense(x, 1)\n"
     "a = net(x)\nb = net(x)\n" + RUN, "called 2 times under the variable scope `net` without `reuse=`"),
    (MODEL + "def f(x):\n    with tf.variable_scope('s'):\n        return tf.layers.dense(x, 1)\n"
     "def g(x):\n    with tf.variable_scope('s', reuse=True):\n        return tf.layers.dense(x, 1)\n"
     "a = f(x)\nb = g(x)\n" + RUN, "two model functions making variables under the same variable scope `s`"),
    (MODEL + "y = x * 2.0\ndef f(t):\n    return t * tf.get_variable('w', [1]) + y\na = f(x)\nb = a\n" + RUN,
     "reads the module's graph (`y`)"),
    (MODEL + "def f(t):\n    for i in range(2):\n        t = t * tf.Variable(1.0)\n    return t\na = f(x)\nb = a\n" + RUN,
     "makes a `tf.Variable` in a loop"),
    (MODEL + "def f(t):\n    return tf.layers.batch_normalization(tf.layers.dense(t, 1), training=True)\n"
     "a = f(x)\nb = a\n" + RUN, "in training mode without its update ops"),
    (MODEL + "def f(t):\n    return tf.layers.dense(t, 1)\ng = lambda t: f(t) * tf.constant(2.0)\na = g(x)\nb = a\n"
     + RUN, "calls the model function `f`"),
    ("import numpy as np\nimport tensorflow as tf\nd = np.zeros([4, 1])\nx = tf.placeholder(d.dtype, d.shape)\n"
     "y = tf.placeholder(tf.float64, [4, 1])\nh = tf.layers.dense(tf.concat([x, y], 1), 1)\n"
     "s = tf.Session()\nprint(s.run(h, {x: d, y: d}))\n", "layers computing on data of the dtypes"),
    ("import tensorflow as tf\nx = tf.placeholder(tf.float32, [None])\ny = tf.placeholder(tf.float32, [None])\n"
     "ds = tf.data.Dataset.from_tensor_slices((x, y))\nit = ds.make_initializable_iterator()\na, b = it.get_next()\n"
     "s = tf.Session()\ns.run(it.initializer, {x: [1.0]})\nprint(s.run(a + b))\n", "fed other than by each of them"),
    (MODEL + "def h(t):\n    return t * x\ndef g(t):\n    return h(t) + tf.constant(1.0)\na = g(x)\nb = a\n" + RUN,
     "`g`, a function that calls `h`, which reads the module's placeholders"),
    (MODEL + "def h(t):\n    return t * x\nif True:\n    a = h(x)\nb = x\n" + RUN,
     "calling `h`, which reads the module's placeholders"),
    ("import tensorflow as tf\ndef make(v):\n    return tf.Variable(v)\nx = tf.placeholder(tf.float32)\n"
     "y = make(1.0) * x\nwith tf.Session() as s:\n    s.run(y, {x: 1.0})\n", "which makes a variable, inside an expression"),
    ("import tensorflow as tf\nx = tf.placeholder(tf.float32) / 2\nwith tf.Session() as s:\n    s.run(x)\n",
     "is not fed"),
    ("import tensorflow as tf\nx = tf.placeholder(tf.float32)\nwith tf.Session() as s:\n"
     "    s.run(x, {x: 1}, options=None)\n", "options"),
    ("import tensorflow as tf\nv = tf.Variable(1.0)\nl = v * 2\n"
     "o = tf.train.SyncReplicasOptimizer(tf.train.AdamOptimizer(0.1), 2).minimize(l)\nwith tf.Session() as s:\n"
     "    s.run(o)\n", "an optimizer tfmigrate does not know"),
    # `tf.train.Saver` (checkpoints): where TF1's names or state are not known, the route is kept
    (DATASET_ADAM.replace("s.save(", "s.restore("), "`saver.restore` of a checkpoint with TF1's optimizer state "
     "(slots, beta powers) whose training step reads the dataset element `x`"),
    (MODEL + "def f(t):\n    return tf.layers.dense(t, 1)\na = f(x)\nb = a\n"
     "saver = tf.train.Saver()\n" + RUN.replace("]})\n", "]})\n    saver.save(s, 'm')\n"),
     "`f`, a TF1 model function that makes its variables outside a `variable_scope`"),
    (SAVER + "h = tf.layers.dense(x, 1, name=n)\ns = tf.train.Saver()\nwith tf.Session() as sess:\n"
     "    sess.run(h, {x: [[1.0]]})\n    s.save(sess, 'm')\n", "a layer whose name is not a literal"),
    (SAVER + "n = 'v'\nw = tf.Variable(1.0, name=n)\ns = tf.train.Saver()\nwith tf.Session() as sess:\n"
     "    s.save(sess, 'm')\n", "a variable whose name is not a literal"),
    (SAVER + "w = tf.Variable(1.0)\ns = tf.train.Saver([w[0]])\nwith tf.Session() as sess:\n    s.save(sess, 'm')\n",
     "`tf.train.Saver([w[0]])`"),
    (SAVER + "w = tf.Variable(1.0)\ns = tf.train.Saver()\nwith tf.Session() as sess:\n    print(s.last_checkpoints)\n",
     "the saver `s` used other than by `save` or `restore`"),
    # functions that run their own Session (entry_functions): called once each, no graph beside
    (ENTRY.replace("w = tf.Variable(2.0)", "w = tf.get_variable('w', [], reuse=tf.AUTO_REUSE)") + "main()\nmain()\n",
     "`main`, a function that runs its own Session, run more than once or from other functions, with `reuse`"),
    (ENTRY, "`main`, a function that runs its own Session, not run from the module's entry point"),
    ("import tensorflow as tf\nz = tf.placeholder(tf.float32)\n" + ENTRY[24:] + "main()\nmain()\n",
     "graph code at module level beside `main`, a function that runs its own Session more than once"),
    # model classes (native.classes): what their route cannot keep equal
    ("import tensorflow as tf\nclass Net:\n    def __init__(self):\n        self.x = tf.placeholder(tf.float32, [None, 2])\n"
     "        self.out = tf.layers.dense(self.x, 1, kernel_initializer=tf.random_normal_initializer(seed=3))\n"
     "net = Net()\nwith tf.Session() as sess:\n    print(sess.run(net.out, {net.x: [[1.0, 2.0]]}))\n",
     "`tf.random_normal_initializer(seed=...)` in `Net.__init__`"),
    ("import tensorflow as tf\nclass Net:\n    def __init__(self):\n        self.x = tf.placeholder(tf.float32, [None, 2])\n"
     "        self.out = tf.layers.dense(self.x, 1)\n"
     "a, b = Net(), Net()\nwith tf.Session() as sess:\n    print(sess.run([a.out, b.out], {a.x: [[1.0, 2.0]], b.x: [[1.0, 2.0]]}))\n",
     "a `sess.run` over more than one object"),
    # a graph class over a reinitializable tf.data iterator (native.class_data)
    ("import tensorflow as tf\nclass Net:\n    def __init__(self, ds):\n"
     "        it = tf.data.Iterator.from_structure(ds.output_types, ds.output_shapes)\n"
     "        x, self.y = it.get_next()\n        self.h = tf.layers.dense(x, 1)\n"
     "        self.loss = tf.reduce_mean(tf.square(self.h - self.y))\n        self.init = it.make_initializer(ds)\n"
     "net = Net(tf.data.Dataset.from_tensor_slices(([[1.0, 2.0]], [[1.0]])).batch(1))\n"
     "with tf.Session() as sess:\n    sess.run(tf.global_variables_initializer())\n    sess.run(net.init)\n"
     "    print(sess.run(net.loss, {net.h: [[0.5]]}))\n",
     "a `sess.run` that feeds `net.h`, computed from a `tf.data` iterator's `get_next()`"),
    ("import tensorflow as tf\nclass Net:\n    def __init__(self, ds):\n"
     "        it = tf.data.Iterator.from_structure(ds.output_types, ds.output_shapes)\n"
     "        x, self.y = it.get_next()\n        self.loss = tf.reduce_mean(tf.square(tf.layers.dense(x, 1) - self.y))\n"
     "        self.init = it.make_initializer(ds.batch(1))\n"
     "net = Net(tf.data.Dataset.from_tensor_slices(([[1.0, 2.0]], [[1.0]])))\n"
     "with tf.Session() as sess:\n    sess.run(tf.global_variables_initializer())\n    sess.run(net.init)\n"
     "    print(sess.run(net.loss))\n",
     "`make_initializer` in `Net` other than `self.<init> = iterator.make_initializer(<dataset>)`"),
    ("import tensorflow as tf\nclass Net:\n    def __init__(self):\n        self.layers = []\n"
     "        self.x = tf.placeholder(tf.float32, [None, 2])\n        self.layers.append(tf.layers.dense(self.x, 1))\n"
     "        self.out = self.layers[-1]\n"
     "net = Net()\nwith tf.Session() as sess:\n    print(sess.run(net.out, {net.x: [[1.0, 2.0]]}))\n",
     "`self.layers` of `Net`: set by Python in `__init__` and changed by the graph code"),
    ("import tensorflow as tf\nSCALE = 1.0\nclass Net:\n    def __init__(self):\n"
     "        self.x = tf.placeholder(tf.float32, [None, 2])\n        self.out = tf.layers.dense(self.x, 1) * SCALE\n"
     "net = Net()\nSCALE = 2.0\nwith tf.Session() as sess:\n    print(sess.run(net.out, {net.x: [[1.0, 2.0]]}))\n",
     "`SCALE`, a module-level name set more than once, read by the graph of `Net`"),
    ("import tensorflow as tf\nclass Net:\n    def __init__(self):\n        self.x = tf.placeholder(tf.float32, [None, 2])\n"
     "    def build(self):\n        self.out = tf.layers.dense(self.x, 1)\n"
     "net = Net()\nsess = tf.Session()\nnet.build()\nprint(sess.run(net.out, {net.x: [[1.0, 2.0]]}))\n",
     "the method `Net.build` builds graph code that `__init__` does not run"),
    ("import tensorflow as tf\nclass Net:\n    def __init__(self):\n        self.x = tf.placeholder(tf.float32, [None, 2])\n"
     "    def build(self):\n        self.out = tf.layers.dense(self.x, 1)\n"
     "net = Net()\nnet.build()\nnet.build()\nwith tf.Session() as sess:\n    print(sess.run(net.out, {net.x: [[1.0, 2.0]]}))\n",
     "`net.build()` called twice"),
    ("import tensorflow as tf\nclass Net:\n    def __init__(self):\n        self.x = tf.placeholder(tf.float32, [None, 2])\n"
     "        self.out = tf.layers.dense(self.x, 1)\n"
     "    def predict(self, x):\n        with tf.Session() as sess:\n            sess.run(tf.global_variables_initializer())\n"
     "            return sess.run(self.out, {self.x: x})\n"
     "net = Net()\nfor i in range(2):\n    print(net.predict([[1.0, 2.0]]))\n",
     "`Net.predict`, a method that opens its own Session, called more than once"),
    ("import tensorflow as tf\nclass Net:\n    def __init__(self):\n        self.x = tf.placeholder(tf.float32, [None, 2])\n"
     "        self.out = tf.layers.dense(self.x, 1)\n"
     "    def predict(self, x):\n        for i in range(2):\n            with tf.Session() as sess:\n"
     "                sess.run(tf.global_variables_initializer())\n                print(sess.run(self.out, {self.x: x}))\n"
     "net = Net()\nnet.predict([[1.0, 2.0]])\n",
     "a Session made in a loop of `Net.predict`"),
    ("import tensorflow as tf\nclass Net:\n    def __init__(self):\n        self.x = tf.placeholder(tf.float32, [None, 2])\n"
     "        self.out = tf.layers.dense(self.x, 1)\n"
     "    def predict(self, x):\n        with tf.Session() as sess:\n            sess.run(tf.global_variables_initializer())\n"
     "            return sess.run(self.out, {self.x: x})\n"
     "net = Net()\nwith tf.Session() as sess:\n    sess.run(tf.global_variables_initializer())\n"
     "    print(sess.run(net.out, {net.x: [[1.0, 2.0]]}))\nprint(net.predict([[1.0, 2.0]]))\n",
     "`Net.predict` opens a Session beside others"),
    ("import tensorflow as tf\nclass Net:\n    def __init__(self):\n        self.x = tf.placeholder(tf.float32, [None, 2])\n"
     "        self.out = tf.layers.dense(self.x, 1)\n"
     "net = Net()\nfeed = {net.x: [[1.0, 2.0]]}\nfeed.update({net.x: [[3.0, 4.0]]})\nprint(list(feed))\n"
     "with tf.Session() as sess:\n    print(sess.run(net.out, feed))\n",
     "the feed dict `feed` used other than as"),  # (`.update` alone is followed since issue 21)
    (ENTRY.replace("print(sess.run(w))", "tf.train.Saver().save(sess, 'm')") + "main()\n",
     "`tf.train.Saver` in Python code outside the graph"),
    (ENTRY + ENTRY[24:].replace("main", "again").replace("with tf.Session() as sess:",
                                                          "s = tf.train.Saver()\n    with tf.Session() as sess:")
     + "main()\nagain()\n", "no `reset_default_graph()` between their calls"),
    ("import tensorflow as tf\ng = tf.Graph()\nwith g.as_default():\n    x = tf.placeholder(tf.float32)\n"
     "    y = x * 2.0\ng.finalize()\nwith tf.Session(graph=g) as s:\n    print(s.run(y, {x: 1.0}))\n",
     "the graph `g` used other than by"),
    ("import tensorflow as tf\ng = tf.Graph()\nwith g.as_default():\n    x = tf.placeholder(tf.float32)\n"
     "z = tf.constant(1.0)\nwith tf.Session(graph=g) as s:\n    print(s.run(x, {x: 1.0}))\n",
     "graph code outside `with graph.as_default():`"),
    # the program's own collections (native.own_collections): named by a string, read in graph code,
    # never by a statement that also adds to them
    ("import tensorflow as tf\nx = tf.placeholder(tf.float32)\nK = 'losses'\ntf.add_to_collection(K, x * 2.0)\n"
     "t = tf.add_n(tf.get_collection(K))\nwith tf.Session() as s:\n    print(s.run(t, {x: 1.0}))\n",
     "`tf.add_to_collection` of a collection not named by a string"),
    ("import tensorflow as tf\nx = tf.placeholder(tf.float32)\ntf.add_to_collection('l', x * 2.0)\n"
     "print(len(tf.get_collection('l')))\nt = tf.add_n(tf.get_collection('l'))\n"
     "with tf.Session() as s:\n    print(s.run(t, {x: 1.0}))\n", "`tf.get_collection` in Python code outside the graph"),
    ("import tensorflow as tf\nx = tf.placeholder(tf.float32)\ndef f(v):\n    w = tf.get_variable('w', [])\n"
     "    tf.add_to_collection('l', w * v)\n    return w * v\nt = f(x) + tf.add_n(tf.get_collection('l'))\n"
     "with tf.Session() as s:\n    print(s.run(t, {x: 1.0}))\n", "both adds to the collection `l` and reads it"),
    ("import tensorflow as tf\nx = tf.placeholder(tf.float32)\ntf.add_to_collection('l', x * 2.0)\n"
     "t = tf.add_n(tf.get_collection('l', scope='a'))\nwith tf.Session() as s:\n    print(s.run(t, {x: 1.0}))\n",
     "graph collections (`tf.get_collection`)"),
    # a histogram of each trainable variable: named as TF1 named it (`var.op.name`), nothing else
    ("import tensorflow as tf\nx = tf.placeholder(tf.float32, [None, 1])\ny = tf.layers.dense(x, 1)\n"
     "for var in tf.trainable_variables():\n    tf.summary.histogram(var.name, var)\nm = tf.summary.merge_all()\n"
     "with tf.Session() as s:\n    s.run(tf.global_variables_initializer())\n    print(s.run(m, {x: [[1.0]]}))\n",
     "`tf.trainable_variables` in Python code outside the graph"),
])
def test_what_stops_a_rewrite_is_named(source, construct):
    outcome = rewrite(source)
    assert outcome.code is None
    assert construct in str(outcome.blocker)


def test_no_graph_code_is_not_rewritten():
    assert rewrite("import tensorflow as tf\nprint(tf.constant(1.0))\n").code is None


def _run(*args, cwd):
    env = dict(os.environ, PYTHONPATH=str(Path(__file__).resolve().parent.parent), NO_COLOR="1")
    return subprocess.run([sys.executable, "-m", "tfmigrate", *args], capture_output=True, text=True, cwd=cwd,
                          env=env)


BLOCKED = "import tensorflow as tf\nx = tf.placeholder(tf.float32)\nsaver = tf.train.Saver()\n" \
          "with tf.Session() as s:\n    saver.save(s, 'm')\n"
NATIVE = "import tensorflow as tf\nimport helper\nx = tf.placeholder(tf.float32)\ny = helper.twice(x)\n" \
         "with tf.Session() as s:\n    print(s.run(y, feed_dict={x: 2.0}))\n"
HELPER = "import tensorflow as tf\n\n\ndef twice(t):\n    return tf.multiply(t, 2.0)\n"


def test_check_native_names_the_construct(tmp_path):
    (tmp_path / "blocked.py").write_text(BLOCKED)
    plain = _run("check", "--no-cache", "--select", "TFM216", ".", cwd=tmp_path)
    assert "TFM216" not in plain.stdout
    native = _run("check", "--native", "--no-cache", "--select", "TFM216", ".", cwd=tmp_path)
    assert "blocked.py:1:8: TFM216" in native.stdout and "tf.train.Saver" in native.stdout, native.stdout


def test_native_setting_in_pyproject_and_helper_stays_eager(tmp_path):
    (tmp_path / "pyproject.toml").write_text("[tool.tfmigrate]\nnative = true\n")
    (tmp_path / "train.py").write_text(NATIVE)
    (tmp_path / "helper.py").write_text(HELPER)
    result = _run("fix", "--no-cache", "--exit-zero", ".", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    train = (tmp_path / "train.py").read_text()
    assert "@tf.function" in train and not TF1_LEFT.search(train), train
    assert "disable_v2_behavior" not in (tmp_path / "helper.py").read_text()
    pytest.importorskip("tensorflow")
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3")
    ran = run_python(["train.py"], cwd=tmp_path, env=env)
    assert ran.returncode == 0, ran.stderr[-2000:]
    assert ran.stdout.strip().splitlines()[-1] == "4.0"


def test_readme_before_and_after_are_real():
    """The README's whole-script example is the fixture and what `fix --native` makes of it."""
    readme = (Path(__file__).resolve().parent.parent / "README.md").read_text(encoding="utf-8")
    before = re.search(r"<!-- native-before -->\n```python\n(.*?)```", readme, re.DOTALL).group(1)
    after = re.search(r"<!-- native-after -->\n```python\n(.*?)```", readme, re.DOTALL).group(1)
    fixture = (FIXTURES / "TFM216" / "exec_layers_adam.py").read_text(encoding="utf-8")
    assert before == "".join(line for line in fixture.splitlines(True)
                             if not re.match(r"# (broken|fixed|fix-args):", line))
    result = fix_source(before.encode("utf-8"), "train.py", ALL, native=True)
    assert result.fixed.decode("utf-8") == after


LEGACY = "import tensorflow as tf\nimport helper\nds = helper.numbers()\n" \
         "it = tf.data.Iterator.from_structure(ds.output_types, ds.output_shapes)\nx = it.get_next()\n" \
         "saver = tf.train.Saver([tf.Variable(1.0)])\nwith tf.Session() as s:\n" \
         "    s.run(it.make_initializer(ds))\n    print(s.run(helper.twice(x)))\n"
SHARED = HELPER + "\n\ndef numbers():\n    return tf.data.Dataset.from_tensor_slices([1.0, 2.0]).batch(2)\n"


def test_a_helper_shared_with_a_graph_script_stays_eager(tmp_path):
    """train.py is rewritten, legacy.py (a Saver) is not: helper.py, which both import, stays
    eager TF2 (the compat route's alias or `disable_v2_behavior()` in it would leave TF1 in, or
    stop, train.py's eager code), and legacy.py, on the route, reads the helper's TF2 dataset with
    `tf.data.get_output_types`; both run."""
    (tmp_path / "train.py").write_text(NATIVE)
    (tmp_path / "legacy.py").write_text(LEGACY)
    (tmp_path / "helper.py").write_text(SHARED)
    result = _run("fix", "--native", "--no-cache", "--exit-zero", ".", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "helper.py").read_text() == SHARED
    legacy = (tmp_path / "legacy.py").read_text()
    assert "disable_v2_behavior()" in legacy and "tf.data.get_output_types(ds)" in legacy, legacy
    assert not TF1_LEFT.search((tmp_path / "train.py").read_text())
    tree = {p.name: p.read_text() for p in tmp_path.glob("*.py")}
    _run("fix", "--native", "--no-cache", "--exit-zero", ".", cwd=tmp_path)  # a fixed point: the
    assert {p.name: p.read_text() for p in tmp_path.glob("*.py")} == tree  # eager train.py keeps it
    pytest.importorskip("tensorflow")
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3")
    for script, last in (("train.py", "4.0"), ("legacy.py", "[2. 4.]")):
        ran = run_python([script], cwd=tmp_path, env=env)
        assert ran.returncode == 0, ran.stderr[-2000:]
        assert ran.stdout.strip().splitlines()[-1] == last


PICKING_HELPER = """import tensorflow as tf


def pick(c, x):
    return tf.where(c, x, tf.zeros_like(x))
"""
PICKING_SCRIPT = """import numpy as np
import tensorflow as tf

import ops

c = tf.placeholder(tf.bool, [None])
x = tf.placeholder(tf.float32, [None, 2])
y = ops.pick(c, x)
with tf.Session() as sess:
    print(sess.run(y, {c: [True, False], x: np.ones((2, 2))}).tolist())
"""
DROPPING_HELPER = """import tensorflow as tf


def drop(x):
    return tf.nn.dropout(x, 0.8) * 0.8
"""
DROPPING_SCRIPT = """import numpy as np
import tensorflow as tf

import ops

x = tf.placeholder(tf.float32, [None, 1000])
y = tf.reduce_mean(tf.cast(tf.equal(ops.drop(x), 0.0), tf.float32))
with tf.Session() as sess:
    print("dropped=%.1f" % sess.run(y, {x: np.ones((1, 1000))}))
"""


@pytest.mark.parametrize("helper, script, written, last", [
    (PICKING_HELPER, PICKING_SCRIPT, "tf.compat.v1.where(c, x", "[[1.0, 1.0], [0.0, 0.0]]"),
    (DROPPING_HELPER, DROPPING_SCRIPT, "tf.nn.dropout(x, rate=0.2)", "dropped=0.2"),
], ids=["where", "dropout"])
def test_a_helper_of_a_script_made_eager_keeps_the_tf1_objects_it_meant(tmp_path, helper, script, written, last):
    """`fix` routes a helper with its graph script, where `tf.where(c, x, y)` is TF1's (rows where
    `c` is a vector) and `tf.nn.dropout(x, 0.8)` keeps 0.8. `fix --native` rewrites the script as
    eager TF2 and keeps the helper eager too, where they were TF2's (`c` broadcast: `[[1, 0], [1,
    0]]`; a drop rate of 0.8): the helper is TF1 code since a TF1 script imports it, so it calls
    TF1's `where` and drops at rate 0.2, printing what `fix` prints."""
    (tmp_path / "ops.py").write_text(helper)
    (tmp_path / "train.py").write_text(script)
    result = _run("fix", "--native", "--unsafe-fixes", "--no-cache", "--exit-zero", ".", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert written in (tmp_path / "ops.py").read_text()
    assert not TF1_LEFT.search((tmp_path / "train.py").read_text())
    pytest.importorskip("tensorflow")
    ran = run_python(["train.py"], cwd=tmp_path, env=dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3"))
    assert ran.returncode == 0 and ran.stdout.strip().splitlines()[-1] == last, ran.stderr[-2000:]


def test_notebooks_are_checked_with_native_on_but_never_rewritten(tmp_path):
    import json

    cell = {"cell_type": "code", "metadata": {}, "outputs": [], "execution_count": None, "source": BLOCKED}
    (tmp_path / "n.ipynb").write_text(json.dumps({"cells": [cell], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}))
    (tmp_path / "blocked.py").write_text(BLOCKED)
    result = _run("fix", "--native", "--no-cache", "--exit-zero", ".", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert "tf.train.Saver" in (tmp_path / "n.ipynb").read_text()


STATEFUL_HELPER = '''import tensorflow as tf


def dense(x, units):
    w = tf.Variable(tf.ones([int(x.shape[-1]), units]))
    return tf.matmul(x, w)
'''
STATEFUL_SCRIPT = '''import tensorflow as tf

from helper import dense

x = tf.placeholder(tf.float32, [None, 2])
y = dense(x, 3)
with tf.Session() as sess:
    sess.run(tf.global_variables_initializer())
    print(sess.run(y, {x: [[1.0, 2.0]]}).sum())
'''


def test_a_script_calling_a_helper_that_makes_variables_keeps_the_compat_route(tmp_path):
    """`dense` makes a `tf.Variable`: called in a tf.function it would make it again at each trace,
    and the project's model-function store (native.imported_models) does not find it again by
    name, so `fix --native` leaves the script on the compat route with a TFM216 naming the
    helper, which takes the route too; nothing is left that a fix offers, and a second run
    changes nothing (issue 21: never worse than `fix`)."""
    (tmp_path / "helper.py").write_text(STATEFUL_HELPER)
    (tmp_path / "main.py").write_text(STATEFUL_SCRIPT)
    result = _run("fix", "--native", "--no-cache", "--exit-zero", ".", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert "fixable" not in result.stdout, result.stdout[-500:]
    main = (tmp_path / "main.py").read_text()
    assert "disable_v2_behavior()" in main and "Session" in main, main
    check = _run("check", "--native", "--no-cache", "--format", "concise", ".", cwd=tmp_path)
    assert "main.py:1:8: TFM216" in check.stdout and "`dense` from `helper`, a function that makes state a tracked call" in check.stdout
    tree = {p.name: p.read_text() for p in tmp_path.glob("*.py")}
    _run("fix", "--native", "--no-cache", "--exit-zero", ".", cwd=tmp_path)
    assert {p.name: p.read_text() for p in tmp_path.glob("*.py")} == tree
    pytest.importorskip("tensorflow")
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3")
    ran = run_python(["main.py"], cwd=tmp_path, env=env)
    assert ran.returncode == 0, ran.stderr[-2000:]
    assert ran.stdout.strip().splitlines()[-1] == "9.0"


def test_fix_native_says_once_that_the_model_mapping_route_needs_tf_keras(tmp_path):
    source = (FIXTURES / "TFM216" / "exec_model_functions.py").read_text(encoding="utf-8")
    (tmp_path / "gan.py").write_text(source)
    (tmp_path / "gan_copy.py").write_text(source)
    result = _run("fix", "--native", "--no-cache", "--exit-zero", ".", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert "track_tf1_style_variables" in (tmp_path / "gan.py").read_text()
    said = (result.stdout + result.stderr).count("The fixed code needs: tf-keras")
    assert said == 1, result.stdout + result.stderr


def test_generated_code_reads_as_tf2():
    """Issue 21's style defects: variables fetched alone are read with `.numpy()`, a zeros
    initializer is `tf.zeros`, no run of more than two blank lines."""
    source = ("import tensorflow as tf\nw = tf.get_variable('w', [3], initializer=tf.zeros_initializer())\n"
              "x = tf.placeholder(tf.float32, [3])\ny = tf.reduce_sum(x * w)\n"
              "train = tf.train.GradientDescentOptimizer(0.1).minimize(y)\n"
              "z = y * 2.0\nsess = tf.Session()\nsess.run(tf.global_variables_initializer())\n"
              "sess.run(train, {x: [1.0, 2.0, 3.0]})\nprint(sess.run(z, {x: [1.0, 1.0, 1.0]}))\nprint(sess.run([w]))\n")
    code = rewrite(source).code
    assert code is not None
    assert "w = tf.Variable(tf.zeros([3], dtype=tf.float32), name='w')" in code, code
    assert "print([w.numpy()])" in code and "tf.identity" not in code, code
    assert "\n\n\n\n" not in code, code


ROUTED_HELPER = '''import tensorflow.compat.v1 as tf
from tensorflow.python.training import moving_averages


def scaled(x):
    w = tf.get_variable("w", [], initializer=tf.ones_initializer())
    return x * w
'''
ROUTED_TEST = '''import tensorflow.compat.v1 as tf
tf.disable_v2_behavior()

from helper import scaled

with tf.Session() as sess:
    y = scaled(tf.constant(3.0))
    sess.run(tf.global_variables_initializer())
    print(sess.run(y))
'''


def test_a_compat_v1_helper_of_graph_modules_is_left_with_nothing_to_fix(tmp_path):
    """zhusuan's library modules import `tensorflow.compat.v1 as tf` and also from
    `tensorflow.python...`: under --native the route has nothing to add there (its importers turn
    v2 behaviour off), so no TFM200 offers a fix that no run applies (issue 21's fixed point)."""
    (tmp_path / "helper.py").write_text(ROUTED_HELPER)
    (tmp_path / "main.py").write_text(ROUTED_TEST)
    result = _run("fix", "--native", "--no-cache", "--exit-zero", ".", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert "fixable" not in result.stdout, result.stdout[-800:]
    assert (tmp_path / "helper.py").read_text() == ROUTED_HELPER
    check = _run("check", "--native", "--no-cache", "--format", "concise", ".", cwd=tmp_path)
    assert not re.search(r":\d+:\d+: TFM200", check.stdout), check.stdout


# Issue 22, checkpoint compatibility: every executable fixture with a Saver declares what it saves
# (`# checkpoint: <its folder or its files' prefix>`), optionally a statement that writes it, which a run that only
# reads leaves out (`# checkpoint-reads-without: train()`), and, for a program that trains on from
# its latest checkpoint, the steps of the run that writes and of the run that reads
# (`# resume: N M`, the program's first argument).
SAVERS = [case for case in EXEC if "Saver(" in case.read_text(encoding="utf-8")]
LIST_CHECKPOINT = ("import sys, tensorflow as tf\n"
                   "for path in sys.argv[1:]:\n"
                   "    print(sorted((n, tuple(s)) for n, s in tf.train.list_variables(tf.train.latest_checkpoint(path)"
                   " or path)))\n")


def _declared(source: str, key: str) -> Optional[str]:
    match = re.search(rf"^# {key}:[ \t]*(.*)$", source, re.MULTILINE)
    return match.group(1).strip() if match else None


def _checkpoint_files(folder: Path, saved: str) -> Dict[str, bytes]:
    """The files of the checkpoint at `saved` (a folder, or the prefix of its files) and their bytes."""
    files = {}
    for path in folder.glob(saved + "*"):
        for file in ([path] if path.is_file() else sorted(path.rglob("*"))):
            if file.is_file():
                files[str(file.relative_to(folder))] = file.read_bytes()
    return files


@pytest.mark.parametrize("case", SAVERS, ids=lambda p: p.name)
def test_checkpoints_of_the_tf1_program_and_of_the_eager_one_restore_into_each_other(tmp_path, case):
    """Issue 22, checkpoint compatibility, for every fixture with a Saver: the TF1 program on the
    compat route (`fix`) trains and saves; the `fix --native` program restores that checkpoint and
    prints the same last line (the fixture's `# fixed:`), without writing it again (it restored,
    it did not train anew); and the other way round; both write the same names and shapes. With
    `# resume: N M`, the reading run trains M more steps from the N steps the writer saved and
    prints what the compat-route original prints after N+M steps from scratch (Adam's slots and
    beta powers restored: a restarted optimizer prints other numbers)."""
    import shutil

    source = case.read_text(encoding="utf-8")
    saved, line = _declared(source, "checkpoint"), _declared(source, "fixed")
    assert saved, f"{case.name} has a Saver: declare what it saves with `# checkpoint: <path>`"
    without = _declared(source, "checkpoint-reads-without")
    resume = (_declared(source, "resume") or "").split()
    programs = {}
    for route, native in (("compat", False), ("native", True)):
        programs[route] = fix_source(case.read_bytes(), case.name, ALL, native=native).fixed.decode("utf-8")
    assert not TF1_LEFT.search(_code_lines(programs["native"])), programs["native"]
    assert "tf.compat.v1.train.Saver(var_list=" in programs["native"], programs["native"]
    assert "disable_v2_behavior()" in programs["compat"]
    pytest.importorskip("tensorflow")
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3", PYTHONWARNINGS="ignore")

    def last_line(folder: Path, program: str, *args: str) -> str:
        folder.mkdir(exist_ok=True)
        (folder / "train.py").write_text(program, encoding="utf-8")
        ran = run_python(["train.py", *args], cwd=folder,
                             env=env, timeout=300)
        assert ran.returncode == 0, ran.stderr[-2000:]
        return ran.stdout.strip().splitlines()[-1]

    def reading(program: str) -> str:
        if without is None:
            return program
        assert program.count(f"\n{without}\n") == 1, program
        return program.replace(f"\n{without}\n", "\n")

    if resume:
        line = last_line(tmp_path / "reference", programs["compat"], str(int(resume[0]) + int(resume[1])))
    for writer, reader in (("compat", "native"), ("native", "compat")):
        written, read = tmp_path / f"{writer}_writes", tmp_path / f"{reader}_reads"
        printed = last_line(written, programs[writer], *resume[:1])
        assert resume or printed == line, (writer, printed)
        read.mkdir()
        for found in written.glob(saved + "*"):
            (shutil.copytree if found.is_dir() else shutil.copy)(found, read / found.name)
        before = _checkpoint_files(read, saved)
        assert before, f"{writer} saved nothing at {saved}"
        assert last_line(read, reading(programs[reader]), *resume[1:]) == line, (writer, reader)
        if not resume:
            assert _checkpoint_files(read, saved) == before, f"{reader} trained anew instead of restoring"
    listed = run_python(["-c", LIST_CHECKPOINT, *(str(tmp_path / f"{route}_writes" / saved)
                                                                      for route in ("compat", "native"))],
                            env=env, timeout=300)
    assert listed.returncode == 0, listed.stderr[-2000:]
    compat_names, native_names = listed.stdout.strip().splitlines()[-2:]
    assert native_names == compat_names


def test_a_saver_whose_optimizer_state_cannot_be_made_first_saves_the_variables_only():
    """A training step that reads a dataset is not traced before the Saver, so TF1's optimizer
    state cannot exist when the Saver is made: a program that only saves keeps the Keras optimizer
    and saves the model's variables (as before issue 22's item 5); one that restores is refused
    (test_what_stops_a_rewrite_is_named)."""
    outcome = rewrite(DATASET_ADAM)
    assert outcome.blocker is None, str(outcome.blocker)
    assert "tf.keras.optimizers.Adam(" in outcome.code and "with_tf1_optimizer_state" not in outcome.code


def test_variables_unpacked_from_a_comprehension_are_each_a_variable():
    """morvan-503: `a, b = [tf.Variable(p) for p in INIT]` makes two variables (a regression of
    the Saver's naming, which stopped at the comprehension's one call); a Saver over them is
    refused, as their TF1 names come from a loop."""
    source = ("import tensorflow as tf\nINIT = [1.0, 2.0]\na, b = [tf.Variable(p) for p in INIT]\n"
              "loss = tf.square(a * b - 1.0)\ntrain = tf.train.GradientDescentOptimizer(0.1).minimize(loss)\n"
              "with tf.Session() as sess:\n    sess.run(tf.global_variables_initializer())\n"
              "    sess.run(train)\n    print(sess.run([a, b]))\n")
    outcome = rewrite(source)
    assert outcome.blocker is None, str(outcome.blocker)
    assert "variables = [a, b]" in outcome.code, outcome.code
    saved = source.replace("with tf.Session() as sess:\n", "s = tf.train.Saver()\nwith tf.Session() as sess:\n")
    saved = saved.replace("    sess.run(train)\n", "    sess.run(train)\n    s.save(sess, 'm')\n")
    assert "variables made by a comprehension" in str(rewrite(saved).blocker)


def test_tf_flags_is_a_python_object():
    """tensor2tensor's scripts: `flags = tf.flags` then `flags.DEFINE_string(...)` is absl's flags
    module (a Python object), not a tensor that Python code uses."""
    source = ("import tensorflow as tf\nflags = tf.flags\nflags.DEFINE_float('scale', 2.0, 'a factor')\n"
              "FLAGS = flags.FLAGS\nx = tf.placeholder(tf.float32)\ny = x * FLAGS.scale\n"
              "with tf.Session() as sess:\n    print(sess.run(y, {x: 1.0}))\n")
    outcome = rewrite(source)
    assert outcome.blocker is None, str(outcome.blocker)
    assert "flags = tf.flags" in outcome.code


def test_a_function_building_tf_example_protos_is_python():
    """`def _int64_feature(v): return tf.train.Feature(int64_list=tf.train.Int64List(value=[v]))`
    (stanford's TFRecord example) builds protocol buffers, not graph state: Python code may call it."""
    source = ("import tensorflow as tf\n\n\ndef feature(v):\n"
              "    return tf.train.Feature(int64_list=tf.train.Int64List(value=[v]))\n\n\n"
              "x = tf.placeholder(tf.float32)\nwith tf.Session() as sess:\n"
              "    print(sess.run(x * 2, {x: feature(3).int64_list.value[0]}))\n")
    outcome = rewrite(source)
    assert outcome.blocker is None, str(outcome.blocker)
    assert _printed(outcome.code) == "6.0"


def test_an_entry_function_given_the_parsed_arguments_is_rewritten_in_place():
    """`main(parser.parse_args())` under `if __name__ == "__main__":` (argparse scripts): the
    graph and Session inside `main` become eager code inside `main`, which keeps its parameter."""
    source = ("import argparse\n\nimport tensorflow as tf\n\n\ndef main(args):\n"
              "    x = tf.placeholder(tf.float32, [None])\n    w = tf.Variable(args.scale)\n"
              "    with tf.Session() as sess:\n        sess.run(tf.global_variables_initializer())\n"
              "        print(sess.run(tf.reduce_sum(w * x), {x: [1.0, 2.0]}))\n\n\n"
              "if __name__ == \"__main__\":\n    parser = argparse.ArgumentParser()\n"
              "    parser.add_argument(\"--scale\", type=float, default=3.0)\n    main(parser.parse_args())\n")
    outcome = rewrite(source)
    assert outcome.blocker is None, str(outcome.blocker)
    assert not TF1_LEFT.search(outcome.code)
    assert "def main(args):\n    w = tf.Variable(args.scale)\n" in outcome.code, outcome.code
    assert outcome.code.endswith("    main(parser.parse_args())\n")
    assert _printed(outcome.code, "--scale", "2").splitlines()[-1] == "6.0"


def test_a_session_function_run_from_main_or_twice_is_rewritten_in_place():
    """`main()` calls `train(scale)` twice (the usual script: an entry point calling the function
    that builds and runs the graph): each call built its own graph and Session in TF1, each call
    makes its own state eagerly."""
    source = ("import tensorflow as tf\n\n\ndef train(scale):\n    x = tf.placeholder(tf.float32, [None])\n"
              "    w = tf.Variable(scale)\n    loss = tf.reduce_sum(tf.square(w * x - 1.0))\n"
              "    step = tf.train.GradientDescentOptimizer(0.05).minimize(loss)\n"
              "    with tf.Session() as sess:\n        sess.run(tf.global_variables_initializer())\n"
              "        for _ in range(10):\n            sess.run(step, {x: [1.0, 2.0]})\n"
              "        return sess.run(loss, {x: [1.0, 2.0]})\n\n\n"
              "def main():\n    print('%.5f %.5f' % (train(2.0), train(-1.0)))\n\n\n"
              "if __name__ == \"__main__\":\n    main()\n")
    outcome = rewrite(source)
    assert outcome.blocker is None, str(outcome.blocker)
    assert not TF1_LEFT.search(outcome.code), outcome.code
    assert outcome.code.startswith("import tensorflow as tf\n\n\ndef train(scale):\n    w = tf.Variable(scale)\n")
    assert _printed(outcome.code) == "0.20001 0.20001"  # what the compat route prints


def test_static_shapes_read_by_python_come_from_a_trace():
    """cookbook-06_05: `x.shape.as_list()` of a placeholder and `t.shape` / `t.get_shape()` of a
    tensor, printed while the graph is built: the declared shape, and the output shape of a trace
    of the function computing `t` (no value computed); two feeds built ahead under one name keep
    their keys each."""
    source = ("import numpy as np\nimport tensorflow as tf\nx = tf.placeholder(tf.float32, [4, 3])\n"
              "y = tf.reduce_sum(x, axis=1, keepdims=True)\nsess = tf.Session()\n"
              "print(x.shape.as_list(), y.shape.as_list(), y.get_shape()[0])\n"
              "feed_dict = {x: np.ones([4, 3])}\nprint(sess.run(y, feed_dict=feed_dict).sum())\n"
              "feed_dict = {x: np.zeros([4, 3])}\nprint(sess.run(y, feed_dict=feed_dict).sum())\n")
    outcome = rewrite(source)
    assert outcome.blocker is None, str(outcome.blocker)
    assert "tf.TensorShape([4, 3]).as_list()" in outcome.code
    assert "compute_y.get_concrete_function().structured_outputs.shape.as_list()" in outcome.code
    assert outcome.code.count("feed = {'x': ") == 2, outcome.code
    assert _printed(outcome.code).split() == ["[4,", "3]", "[4,", "1]", "4", "12.0", "0.0"]


def test_layers_keep_tf1s_kernel_initializer_and_variable_order():
    """A kernel TF1 left to `get_variable`'s default gets TF1's Glorot initializer (a kernel given,
    by keyword or by position, is kept as given), and a variable made after layers comes after a
    trace that builds them, as TF1's graph made them (the proof: tests/fixtures/equivalence)."""
    source = ("import tensorflow as tf\nx = tf.placeholder(tf.float32, [None, 3])\n"
              "h = tf.layers.dense(x, 4, tf.nn.relu)\n"
              "g = tf.layers.dense(h, 4, tf.nn.relu, True, tf.ones_initializer())\n"
              "k = tf.layers.dense(g, 2, kernel_initializer=tf.zeros_initializer())\n"
              "w = tf.Variable(tf.random.normal([2, 1]))\ny = tf.matmul(k, w)\n"
              "sess = tf.Session()\nsess.run(tf.global_variables_initializer())\n"
              "print(sess.run(y, {x: [[1.0, 2.0, 3.0]]}).shape)\n")
    outcome = rewrite(source)
    assert outcome.blocker is None, str(outcome.blocker)
    assert "Dense(4, tf.nn.relu, kernel_initializer=tf.compat.v1.glorot_uniform_initializer())" in outcome.code
    assert "Dense(4, tf.nn.relu, True, tf.ones_initializer())\n" in outcome.code
    assert "Dense(2, kernel_initializer=tf.zeros_initializer())\n" in outcome.code
    built, made = outcome.code.index("build_variables.get_concrete_function()"), outcome.code.index("w = tf.Variable(")
    assert built < made, outcome.code
    assert _printed(outcome.code) == "(1, 1)"


def test_a_defect_of_the_rewrite_keeps_the_compat_route_and_says_so(monkeypatch):
    """An unexpected error inside the rewrite never stops the run: the module keeps the compat
    route and TFM216 names the defect."""
    import tfmigrate.native.emit as emit

    def broken(self):
        raise AttributeError("'str' object has no attribute '_codegen'")

    monkeypatch.setattr(emit.Emitter, "module", broken)
    outcome = rewrite("import tensorflow as tf\nx = tf.placeholder(tf.float32)  # defect test\n"
                      "sess = tf.Session()\nprint(sess.run(x * 2, {x: 1.0}))\n")
    assert outcome.code is None
    assert str(outcome.blocker).startswith("internal: the rewrite failed (AttributeError"), str(outcome.blocker)


def _printed(program: str, *args: str) -> str:
    """What `program` prints, run with TensorFlow (the test is skipped without it)."""
    pytest.importorskip("tensorflow")
    ran = run_python(["-c", program, *args], env=dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3"))
    assert ran.returncode == 0, ran.stderr[-2000:]
    return ran.stdout.strip()


# --- tf.test.TestCase files (issue 22, item 2) ----------------------------------------------------
TEST_HEAD = "import numpy as np\nimport tensorflow as tf\n\n\nclass T(tf.test.TestCase):\n\n    def testIt(self):\n"


def _test_file(*lines: str, head: str = TEST_HEAD) -> str:
    return head + "".join(f"        {line}\n" for line in lines)


@pytest.mark.parametrize("source, construct", [
    (_test_file("with self.test_session() as sess:", "    x = tf.placeholder(tf.float32, [2])",
                "    self.assertEqual(x.shape.as_list(), [2])"), "the placeholder `x`, which no run feeds"),
    (_test_file("x = tf.placeholder(tf.float32)", "with self.test_session() as sess:",
                "    for v in [1.0, 2.0]:", "        sess.run(x * 2, {x: v})"), "`feed_dict` in a loop"),
    (_test_file("v = tf.Variable(2.0)", "for i in range(2):", "    with self.test_session() as sess:",
                "        sess.run(v * 2)"), "in a method that makes variables (each session initializes them anew)"),
    (_test_file("x = tf.placeholder(tf.float32)", "def check(v):", "    with self.test_session() as sess:",
                "        return sess.run(x * 2, {x: v})", "check(1.0)"), "`feed_dict` in a loop"),
    (_test_file("x = tf.placeholder(tf.float32)", "with self.test_session() as sess:", "    feed = {x: 1.0}",
                "    sess.run(x * 2, feed)", "    sess.run(x * 3, feed)"), "a `feed_dict` that is not written out"),
    (_test_file("x = tf.placeholder(tf.float32)", "with self.test_session() as sess:", "    feed = {x: 1.0}",
                "    y = x * 2", "    sess.run(y, feed_dict=feed)"), "a `feed_dict` that is not written out"),
    (_test_file("x = tf.placeholder(tf.float32, [2])", "for i in range(2):",
                "    self.assertAllEqual(x.get_shape(), [2])"), "`self.assertAllEqual` in a block of a shape test"),
    (_test_file("x = tf.placeholder(tf.float32, [2])", "self._check(x)"), "`self._check(...)` given the test"),
    (_test_file("x = tf.placeholder(tf.float32, [2])", "self.assertAllEqual(tf.shape(x), [2])"),
     "`tf.shape(...)` inside `self.assertAllEqual` of a shape test"),
    (_test_file("with self.test_session():", "    with self.assertRaises(tf.errors.InvalidArgumentError):",
                "        tf.debugging.assert_positive(tf.constant(-1.0)).run()"), "other than a test session's run"),
    (_test_file("v = tf.Variable(1.0)", "with self.test_session() as sess:", "    sess.run(v.assign_add(1.0))"),
     "`.assign_add(...)`, which changes state"),
    (_test_file("with self.test_session() as sess:", "    r = tf.random_normal([2])",
                "    self.assertNotAllClose(sess.run(r), sess.run(r))"), "`tf.random_normal` without a seed"),
    (TEST_HEAD.replace("\n\n\nclass", "\nfrom mylib import ops\n\n\nclass")
     + "        with self.test_session():\n            self.assertAllClose(ops.f(1.0).eval(), 2.0)\n",
     "`ops`, from `mylib.ops`, a module `fix --native` has not proven to run eagerly"),
    (TEST_HEAD.replace("    def testIt(self):\n", "    def setUp(self):\n        self.x = tf.constant(1.0)\n"
                       "        self.y = self.x * 2.0\n\n    def testIt(self):\n")
     + "        self.y = self.x * 3.0\n        with self.test_session() as sess:\n"
       "            g = tf.gradients(self.y, self.x)\n            sess.run(g)\n",
     "`tf.gradients` of `self.y`, which the test makes anew after `setUp` (off its tape)"),
    # (native.setup_tapes: a gradient of what setUp made is taped there; these stay refused)
    (TEST_HEAD.replace("    def testIt(self):\n", "    def setUp(self):\n        self.x = tf.constant(1.0)\n"
                       "        self.y = self.x * 2.0\n\n    def build(self):\n        self.y = self.x * 3.0\n\n"
                       "    def testIt(self):\n")
     + "        self.build()\n        g = tf.gradients(self.y, self.x)\n        self.assertAllClose(self.evaluate(g), [3.0])\n",
     "`self.build(...)` in a test taking `tf.gradients` of what `setUp` made"),
    (TEST_HEAD.replace("    def testIt(self):\n", "    def setUp(self):\n        self.x = tf.constant(1.0)\n"
                       "        self.y = self.x * 2.0\n\n    def testIt(self):\n")
     + "        if self.x is not None:\n            z = self.y * self.x\n        g = tf.gradients([z + self.y], self.x)\n",
     "computed from both `setUp`'s and the test's own"),
    (TEST_HEAD.replace("    def testIt(self):\n", "    def setUp(self):\n        self.x = tf.constant(1.0)\n"
                       "        self.y = self.x * 2.0\n\n    def testIt(self):\n")
     + "        xs = [self.x]\n        xs.append(tf.constant(2.0))\n        g = tf.gradients([self.y], xs)\n",
     "`tf.gradients` of other than names"),
    # (shape_traces.named_placeholders names a placeholder given straight to a top-level call; not these)
    (_test_file("ps = [tf.square(tf.placeholder(tf.float32, [n])) for n in (1, 2)]",
                "self.assertEqual(ps[1].shape.as_list(), [2])"), "`tf.placeholder(...)` other than assigned to a name"),
    # (a list comprehension of placeholders is traced in a shape test; a run cannot feed it)
    (_test_file("ps = [tf.placeholder(tf.float32, [2]) for _ in range(2)]", "with self.test_session() as sess:",
                "    sess.run(ps[0] * 2.0, {ps[0]: [1.0, 2.0]})"), "the placeholders `ps` made in a comprehension"),
    (_test_file("ps = {'a': tf.placeholder(tf.float32, [2])}", "with self.test_session() as sess:",
                "    sess.run(ps['a'] * 2.0, {ps['a']: [1.0, 2.0]})"),
     "the placeholders `ps` made in a comprehension or a dict"),
    (_test_file("k = 'a'", "ps = {k: tf.placeholder(tf.float32, [2])}", "self.assertEqual(ps['a'].shape.as_list(), [2])"),
     "`tf.placeholder(...)` other than assigned to a name"),
    # (a helper whose `assertRaises` sees build errors only inside shape traces: every caller traced)
    (TEST_HEAD.replace("    def testIt(self):\n", "    def assertRankChecked(self, x):\n"
                       "        with self.assertRaises(ValueError):\n            tf.matmul(x, x)\n\n"
                       "    def testShape(self):\n        p = tf.placeholder(tf.float32, [2])\n"
                       "        self.assertRankChecked(p)\n\n    def testIt(self):\n")
     + "        self.assertRankChecked(tf.constant([1.0, 2.0]))\n",
     "`self.assertRankChecked(...)` given the test in a shape test"),
    (TEST_HEAD.replace("    def testIt(self):\n", "    def _checkRank(self, x):\n"
                       "        self.assertAllEqual(tf.rank(x), 1)\n\n    def testIt(self):\n")
     + "        p = tf.placeholder(tf.float32, [None])\n        self._checkRank(p)\n",
     "`self._checkRank(...)` given the test in a shape test"),
    (_test_file("y = tf.square(tf.placeholder(tf.float32, [2]))", "with self.test_session() as sess:",
                "    sess.run(y)"), "`tf.placeholder(...)` other than assigned to a name"),
    (_test_file("x = tf.constant(1.0)", "y = x * 2", "with self.test_session() as sess:",
                "    for _ in range(2):", "        y = y * x", "    g = tf.gradients(y, x)", "    sess.run(g)"),
     "computed in a loop, a branch or a block"),
    # (a test that runs nothing takes its gradients in the traced graph: not one before its placeholders)
    (_test_file("x = tf.constant(1.0)", "g = tf.gradients(x * 2.0, x)", "p = tf.placeholder(tf.float32, [None])",
                "self.assertEqual((p * g[0]).shape.as_list(), [None])"), "before the test's placeholders"),
    (_test_file("p = tf.placeholder(tf.float32, [None])", "g = tf.gradients(p * 2.0, p, colocate_gradients_with_ops=True)",
                "self.assertEqual(g[0].shape.as_list(), [None])"), "`colocate_gradients_with_ops`"),
    (_test_file("a = tf.placeholder(tf.float32, [None, 3])", "n = a.shape[1]", "b = tf.placeholder(tf.float32, [None, n])",
                "self.assertEqual((b * 2.0).shape.as_list(), [None, 3])"), "a placeholder's shape reading `n`"),
    (_test_file("with self.test_session() as sess:", "    print(sess.graph)"), "used other than by `run`"),
    (_test_file("with self.test_session() as sess:", "    t = tf.constant(1.0)", "    self.assertEqual(t.name, 'Const:0')"),
     "`.name`, which eager tensors do not have"),
])
def test_what_keeps_a_test_file_on_the_compat_route_is_named(source, construct):
    outcome = rewrite(source)
    assert outcome.code is None, outcome.code
    assert construct in outcome.blocker.construct, outcome.blocker.construct
    assert "the test method `T." in outcome.blocker.construct or "top level" in outcome.blocker.construct


HELD_TESTS = (TEST_HEAD.replace("    def testIt(self):\n", "    def testEager(self):\n"
                                "        with self.test_session() as sess:\n"
                                "            self.assertAllClose(sess.run(tf.constant(2.0)), 2.0)\n\n"
                                "    def testName(self):\n        t = tf.constant(1.0)\n"
                                "        self.assertEqual(t.name, 'Const:0')\n\n    def testIt(self):\n")
              + "        with self.test_session() as sess:\n            print(sess.graph)\n")


def test_a_shape_test_part_reading_an_earlier_part_is_traced_with_it():
    """native.shape_traces: `y`, made after the first placeholders, read after the second ones:
    one function with both placeholders as parameters (only the op names' order differs)."""
    outcome = rewrite(_test_file("x = tf.placeholder(tf.float32, [2])", "y = x * 2", "w = tf.placeholder(tf.float32, [3])",
                                 "self.assertEqual(w.get_shape().as_list(), [3])", "z = tf.placeholder(tf.float32, [2])",
                                 "self.assertEqual((y + z).get_shape().as_list(), [2])"))
    assert outcome.code is not None, outcome.blocker
    assert "        def shapes(x, w, z):\n            y = x * 2\n" in outcome.code
    assert outcome.code.count("get_concrete_function(") == 1


def test_a_blocker_on_code_a_pre_pass_wrote_names_the_method_line_not_line_1():
    source = _test_file("a = tf.placeholder(tf.float32, [None, 3])", "n = a.shape[1]",
                        "y = tf.square(tf.placeholder(tf.float32, [None, n]))", "self.assertEqual(y.shape.as_list(), [None, 3])")
    blocker = rewrite(source).blocker
    assert "a placeholder's shape reading `n`" in blocker.construct
    assert blocker.line == source.splitlines().index("    def testIt(self):") + 1


def test_a_construction_error_checked_before_a_shape_tests_placeholders_is_traced():
    """Eagerly `tf.reshape` of 3 values to [2] raises InvalidArgumentError; TF1's graph raised
    ValueError while building: the checked call is traced on its own, the rest from its specs."""
    outcome = rewrite(_test_file("with self.assertRaises(ValueError):", "    tf.reshape(tf.ones([3]), [2])",
                                 "y = tf.placeholder(tf.float32, [2])", "self.assertEqual(y.get_shape().as_list(), [2])"))
    assert outcome.code is not None, outcome.blocker
    assert ("        with self.assertRaises(ValueError):\n            tf.function(lambda: tf.reshape(tf.ones([3]), [2]), "
            "autograph=False).get_concrete_function()\n") in outcome.code
    assert "        def shapes(y):\n" in outcome.code


def test_every_test_method_that_holds_a_test_file_is_named():
    """The first is the blocker (as on every fix pass); the others ride along with it, each with
    its own construct, and the count of test methods: `check --native` lists them all."""
    blocker = rewrite(HELD_TESTS).blocker
    assert "the test method `T.testName`" in blocker.construct and "`.name`" in blocker.construct
    assert [(where, "used other than by `run`" in held.construct) for where, held in blocker.held] == [
        ("T.testIt", True)]
    assert blocker.tests == 3


def test_check_native_reports_each_other_held_test_method_at_its_def(tmp_path):
    (tmp_path / "ops_test.py").write_text(HELD_TESTS)
    native = _run("check", "--native", "--no-cache", "--select", "TFM216", ".", cwd=tmp_path)
    assert "ops_test.py:2:8: TFM216" in native.stdout and "2 of its 3 test methods hold it there" in native.stdout
    line = HELD_TESTS.splitlines().index("    def testIt(self):") + 1
    assert f"ops_test.py:{line}:9: TFM216" in native.stdout, native.stdout
    assert "for this test method too" in native.stdout and "used other than by `run`" in native.stdout


def test_a_placeholder_fed_one_unchanged_value_in_a_loop_is_that_constant():
    """A graph built in a loop on one placeholder, each run feeding it the same array (gen55 p07's
    `testTimeToBatchRoundTrip`): every run fed that value, so it is the constant, made where the
    placeholder was."""
    outcome = rewrite(_test_file("x = np.arange(6, dtype=np.float32).reshape(2, 3)",
                                 "value = tf.placeholder(tf.float32, [None, 3])",
                                 "with self.test_session() as sess:",
                                 "    for k in (1, 2):",
                                 "        out = value * k",
                                 "        self.assertAllClose(sess.run(out, feed_dict={value: x}), x * k)",
                                 "    self.assertAllClose(sess.run(value + 1.0, {value: x}), x + 1.0)"))
    assert outcome.code is not None, outcome.blocker
    assert ("        x = np.arange(6, dtype=np.float32).reshape(2, 3)\n"
            "        value = tf.constant(x, dtype=tf.float32)\n"
            "        for k in (1, 2):\n            out = value * k\n"
            "            self.assertAllClose(self.evaluate(out), x * k)\n"
            "        self.assertAllClose(self.evaluate(value + 1.0), x + 1.0)\n") in outcome.code, outcome.code


@pytest.mark.parametrize("change", [
    "    x = x + 1.0",          # bound again in the loop
    "    x[0, 0] = 5.0",        # changed in place
    "    x.sort()",             # a method that may change it
    "    np.random.shuffle(x)",  # shuffled
])
def test_a_value_that_may_change_between_runs_is_no_constant(change):
    outcome = rewrite(_test_file("x = np.ones((2, 3), np.float32)", "value = tf.placeholder(tf.float32, [None, 3])",
                                 "out = value * 2.0", "for k in (1, 2):", change,
                                 "    with self.test_session() as sess:", "        sess.run(out, feed_dict={value: x})"))
    assert outcome.code is None or "tf.constant(x" not in outcome.code, outcome.code


def test_a_graph_run_with_several_feeds_becomes_a_traced_function_called_per_run():
    """native.graph_functions: placeholders fed by two runs (no constant stands for them) become
    the parameters of a `tf.function` traced from their specs; each run calls it with its feed,
    by keyword in the feed's order; static shapes read before the runs come from the trace."""
    outcome = rewrite(_test_file("x = tf.placeholder(tf.float32, [None])", "y = 2.0 * x",
                                 "self.assertEqual(y.shape.as_list(), [None])",
                                 "with self.test_session() as sess:",
                                 "    self.assertAllClose(sess.run(y, {x: [1.0]}), [2.0])",
                                 "    out = y.eval(feed_dict={x: np.ones(2)})"))
    assert outcome.code is not None, outcome.blocker
    assert ("        @tf.function(autograph=False, input_signature=[tf.TensorSpec([None], tf.float32)])\n"
            "        def graph(x):\n            y = 2.0 * x\n            return y\n\n"
            "        y = graph.get_concrete_function().structured_outputs\n"
            "        self.assertEqual(y.shape.as_list(), [None])\n"
            "        y = graph(x=[1.0])\n        self.assertAllClose(self.evaluate(y), [2.0])\n"
            "        y = graph(x=np.ones(2))\n        out = self.evaluate(y)\n") in outcome.code


@pytest.mark.parametrize("lines", [
    # a static shape read of what the placeholder made, then a run
    ("x = tf.placeholder(tf.float32, [None])", "with self.test_session() as sess:", "    y = x * 2",
     "    self.assertEqual(y.shape.as_list(), [None])", "    sess.run(y, {x: [1.0]})"),
    # fed a value that is not known where the placeholder is made (read, or drawn, in between)
    ("x = tf.placeholder(tf.float32)", "y = x * 2", "v = self.value", "with self.test_session() as sess:",
     "    sess.run(y, {x: v})"),
    ("x = tf.placeholder(tf.float32)", "y = x * 2", "v = np.random.rand(3)", "with self.test_session() as sess:",
     "    sess.run(y, {x: v})"),
])
def test_what_no_constant_can_feed_is_fed_to_a_traced_function(lines):
    outcome = rewrite(_test_file(*lines))
    assert outcome.code is not None, outcome.blocker
    assert "input_signature=" in outcome.code and "placeholder" not in outcome.code and "sess" not in outcome.code


_FED_TWICE = ("x = tf.placeholder(tf.float32, [2])", "w = tf.placeholder(tf.float32, [2])", "y = x * w")


@pytest.mark.parametrize("lines", [
    # a run feeding only some of the graph's placeholders
    _FED_TWICE + ("with self.test_session() as sess:", "    sess.run(y, {x: [1.0, 2.0], w: [1.0, 1.0]})",
                  "    sess.run(y, {x: [1.0, 2.0]})"),
    # the graph's tensor read beside the run (eagerly it would be a value)
    _FED_TWICE + ("with self.test_session() as sess:", "    print(y, sess.run(y, {x: [1.0, 2.0], w: [1.0, 1.0]}))",
                  "    sess.run(y, {x: [1.0, 2.0], w: [1.0, 1.0]})"),
    # built from the placeholders after a run of them
    _FED_TWICE + ("with self.test_session() as sess:", "    sess.run(y, {x: [1.0, 2.0], w: [1.0, 1.0]})",
                  "    z = y + x", "    sess.run(z, {x: [1.0, 2.0], w: [1.0, 1.0]})"),
    # a feed drawn at random after another draw of the same statement (the draws would swap)
    _FED_TWICE + ("with self.test_session() as sess:",
                  "    self.assertAllClose(np.random.rand(2), sess.run(y, {x: np.random.rand(2), w: [1.0, 1.0]}))",
                  "    sess.run(y, {x: [1.0, 2.0], w: [1.0, 1.0]})"),
    # what the graph reads changed between its build and its last run's trace point
    ("x = tf.placeholder(tf.float32, [2])", "k = 2.0", "y = x * k", "k = 3.0", "z = y + 1.0",
     "with self.test_session() as sess:", "    sess.run(z, {x: [1.0, 2.0]})", "    sess.run(z, {x: [1.0, 3.0]})"),
    # a variable made from the placeholders
    ("x = tf.placeholder(tf.float32, [2])", "v = tf.Variable(x)", "with self.test_session() as sess:",
     "    sess.run(v, {x: [1.0, 2.0]})", "    sess.run(v, {x: [1.0, 3.0]})"),
    # a named placeholder read outside its check too (native.test_files._named_for)
    ("for shape in ([None], [3]):", "    x = tf.placeholder(tf.float32, shape)", "    print(x)",
     "    with self.assertRaises(ValueError):", "        tf.matmul(x, x)"),
    # its shape changed between the placeholder and the check
    ("for shape in ([None], [3]):", "    x = tf.placeholder(tf.float32, shape)", "    shape = [2]",
     "    with self.assertRaises(ValueError):", "        tf.matmul(x, x)"),
])
def test_a_graph_run_that_a_traced_function_would_change_keeps_the_compat_route(lines):
    """Graph functions (native.graph_functions) and traced checks (test_files._named_for) refuse
    what a trace would say otherwise than the graph."""
    outcome = rewrite(_test_file(*lines))
    assert outcome.code is None, outcome.code


def test_a_gradient_of_an_expression_records_it_on_the_tape_by_a_name_of_its_own():
    """`tf.gradients(out[1], r)`: the element is computed on the tape (`target = out[1]`), the
    tape's gradient taken of it, as a TF2 engineer writes it."""
    outcome = rewrite(_test_file("r = tf.constant([1.0, 2.0])", "out = tf.cumsum(r)", "g = tf.gradients(out[1], r)[0]",
                                 "with self.test_session() as sess:", "    self.assertAllClose(sess.run(g), [1.0, 1.0])"))
    assert outcome.code is not None, outcome.blocker
    assert ("        r = tf.constant([1.0, 2.0])\n        with tf.GradientTape() as tape:\n            tape.watch(r)\n"
            "            out = tf.cumsum(r)\n            target = out[1]\n        g = tape.gradient(target, r)\n"
            "        self.assertAllClose(self.evaluate(g), [1.0, 1.0])\n") in outcome.code


_SETUP_TWO = TEST_HEAD.replace("    def testIt(self):\n", "    def setUp(self):\n        self.a = tf.constant(1.0)\n"
                               "        self.b = self.a * 2.0\n\n    def testIt(self):\n")


@pytest.mark.parametrize("source", [
    # the gradient's ys made outside the loop: the function would see it as a constant
    _test_file("x = tf.constant(1.0)", "y = x * 2.0", "for k in (1.0, 2.0):", "    g = tf.gradients(y * k, x)[0]",
               "    self.assertAllClose(self.evaluate(g), 2.0 * k)"),
    # sources given by a call: which tensors, unknown
    _test_file("x = tf.constant(1.0)", "for k in (1.0, 2.0):", "    g = tf.gradients(x * k, list([x]))[0]",
               "    self.assertAllClose(self.evaluate(g), k)"),
    # two sources made outside (one may depend on the other)
    _SETUP_TWO + "        for k in (1.0, 2.0):\n            g = tf.gradients(self.a * self.b * k, [self.a, self.b])\n"
    "            self.assertAllClose(self.evaluate(g[0]), 2.0 * k)\n",
    # a helper of the test class in the moved statements (it may read other tensors of setUp's)
    _SETUP_TWO + "        for k in (1.0, 2.0):\n            g = tf.gradients(self._scaled(self.a) * k, self.a)[0]\n"
    "            self.assertAllClose(self.evaluate(g), 2.0 * k)\n",
    # a tensor of setUp's read that is not the source (its path to the source would be lost)
    _SETUP_TWO + "        for k in (1.0, 2.0):\n            g = tf.gradients(self.b * k, self.a)[0]\n"
    "            self.assertAllClose(self.evaluate(g), 2.0 * k)\n",
])
def test_a_gradient_a_traced_function_would_lose_a_path_of_is_refused(source):
    outcome = rewrite(source)
    assert outcome.code is None, outcome.code


@pytest.mark.parametrize("lines, construct", [
    (("a = tf.random_normal([2], seed=1)", "b = tf.random_normal([2], seed=1)", "with self.test_session() as sess:",
      "    sess.run([a, b])"), "two draws of one kind with the same seed"),
    (("for _ in range(2):", "    a = tf.random_uniform([2], seed=1)", "    self.evaluate(a)"), "in a loop"),
    # a seed given by a name: its value unknown here, so alone of its kind
    (("k = 2", "a = tf.random_normal([2], seed=k)", "b = tf.random_normal([2], seed=1)",
      "with self.test_session() as sess:", "    sess.run([a, b])"), "two draws of one kind with the same seed"),
    (("a = tf.random_normal([2], seed=1)", "b = a * 2.0", "with self.test_session() as sess:", "    sess.run(a)",
      "    sess.run(b)"), "random tensors run more than once"),
])
def test_a_draw_eager_tf2_cannot_repeat_keeps_the_compat_route(lines, construct):
    """native.test_files.op_seed: only the first draw of each kind and seed of its own, run once,
    is TF1's number eagerly."""
    outcome = rewrite(_test_file(*lines))
    assert outcome.code is None, outcome.code
    assert construct in outcome.blocker.construct, outcome.blocker.construct


def test_a_seed_set_for_the_projects_own_draws_keeps_the_compat_route():
    """A test that sets the graph seed and calls the project, whose draws (unseeded, in a module an
    eager test may call) would change under it: refused, not only the test's own draws."""
    source = (TEST_HEAD.replace("\n\n\nclass", "\nfrom mylib import sample\n\n\nclass")
              + "        tf.set_random_seed(1)\n        a = sample([2])\n        with self.test_session() as sess:\n"
              "            sess.run(a)\n")
    outcome = rewrite(source, eager=("mylib", "mylib.sample:draws=run"))
    assert outcome.code is None, outcome.code
    assert "`tf.set_random_seed` in a test that calls `sample` of the project" in outcome.blocker.construct
    # a module that does not parse may draw anywhere
    outcome = rewrite(source, eager=("mylib", "mylib:draws=run"))
    assert outcome.code is None and "calls `sample` of the project" in outcome.blocker.construct, outcome.code
    # facts.eager_functions found no draw in `sample`: the seed changes nothing it computes
    outcome = rewrite(source, eager=("mylib",))
    assert outcome.code is not None and "tf.random.set_seed(1)" in outcome.code, outcome.blocker


def test_a_placeholder_written_inside_a_checked_call_becomes_a_parameter_of_its_trace():
    """`with self.assertRaises(ValueError):` around a call on an inline placeholder: TF1 raised
    the shape error building the graph; the call is traced from the placeholder's spec."""
    outcome = rewrite(_test_file("with self.assertRaises(ValueError):",
                                 "    tf.matmul(tf.placeholder(tf.float32, [2]), tf.ones([2, 2]))"))
    assert outcome.code is not None, outcome.blocker
    assert ("            tf.function(lambda t: tf.matmul(t, tf.ones([2, 2])), autograph=False)"
            ".get_concrete_function(\n                tf.TensorSpec([2], tf.float32))\n") in outcome.code


def test_a_placeholder_named_just_before_a_checked_call_becomes_a_parameter_of_its_trace():
    """A loop over shapes naming its placeholder, then the check (native.test_files._named_for):
    the name becomes the lambda's parameter and its statement goes, its comment kept."""
    outcome = rewrite(_test_file("for shape in ([None], [3]):", "    # rank 1", "    x = tf.placeholder(tf.float32, shape)",
                                 "    with self.assertRaises(ValueError):", "        tf.matmul(x, x)"))
    assert outcome.code is not None, outcome.blocker
    assert ("        for shape in ([None], [3]):\n            # rank 1\n            with self.assertRaises(ValueError):\n"
            "                tf.function(lambda x: tf.matmul(x, x), autograph=False).get_concrete_function(\n"
            "                    tf.TensorSpec(shape, tf.float32))\n") in outcome.code


def test_a_gradient_source_setup_does_not_make_itself_is_refused_at_setup():
    """native.setup_tapes watches each source where `setUp` assigns it: one made by a helper
    `setUp` calls is not watched there, so the file keeps the compat route."""
    source = (TEST_HEAD.replace("    def testIt(self):\n", "    def setUp(self):\n        self._make()\n\n"
                                "    def _make(self):\n        self.x = tf.constant(1.0)\n        self.y = self.x * 2.0\n\n"
                                "    def testIt(self):\n")
              + "        g = tf.gradients(self.y, self.x)\n")
    outcome = rewrite(source)
    assert outcome.code is None
    assert "`T.setUp`: `tf.gradients` with respect to `self.x`, which `setUp` does not make" in outcome.blocker.construct


_BASE_AND_SUBCLASS = (
    "import tensorflow as tf\n\n\nclass Base(tf.test.TestCase):\n\n    def setUp(self):\n"
    "        super(Base, self).setUp()\n        self.x = tf.constant([1.0, 2.0])\n\n\n"
    "class T(Base):\n\n    def setUp(self):\n{setup}\n\n    def testGrad(self):\n"
    "        with self.test_session() as sess:\n            g = tf.gradients(self.y, [self.x])\n"
    "            self.assertAllClose(sess.run(g[0]), [3.0, 3.0])\n")


@pytest.mark.parametrize("setup, construct", [
    # the base's setUp runs after the subclass made `y`: nothing recorded it on the base's tape
    ("        self.y = 3.0 * tf.constant([1.0, 2.0])\n        super(T, self).setUp()",
     "with respect to `self.x`, which `setUp` does not make"),
    # no `super().setUp()`: `self.x` is not the base's
    ("        self.y = self.x * 3.0", "with respect to `self.x`, which `setUp` does not make"),
])
def test_gradients_of_a_base_classes_tensors_need_its_setup_first(setup, construct):
    """native.setup_tapes.module_tapes: a subclass records on its base's tape only when its
    `setUp` starts with `super().setUp()` (else the file keeps the compat route)."""
    outcome = rewrite(_BASE_AND_SUBCLASS.format(setup=setup))
    assert outcome.code is None, outcome.code
    assert construct in outcome.blocker.construct, outcome.blocker.construct


def test_gradients_of_a_base_classes_tensors_record_on_its_tape():
    outcome = rewrite(_BASE_AND_SUBCLASS.format(setup="        super(T, self).setUp()\n        self.y = self.x * 3.0"))
    assert outcome.code is not None, outcome.blocker
    assert "        with tf.GradientTape(persistent=True) as self.tape:\n            self.x = tf.constant" in outcome.code
    assert "        super(T, self).setUp()\n        with self.tape:\n            self.y = self.x * 3.0" in outcome.code
    assert "self.tape.gradient(self.y, [self.x])" in outcome.code


def test_a_test_file_that_cannot_be_eager_takes_the_compat_route_itself_and_passes(tmp_path):
    """The hard negative: its own `disable_v2_behavior()` at its top, TFM216 naming the method
    and the construct, and its tests pass after `fix --unsafe-fixes --native`."""
    program = tmp_path / "state_test.py"
    program.write_bytes((FIXTURES / "TFM216" / "bad_test_file_state.py").read_bytes())
    result = fix_source(program.read_bytes(), program.name, ALL, unsafe=True, native=True)
    fixed = result.fixed.decode("utf-8")
    assert re.search(r"^import tensorflow\.compat\.v1 as tf\b.*\ntf\.disable_v2_behavior\(\)$", fixed, re.MULTILINE)
    assert "TFM216" not in result.fixed_rules
    message = next(f.message for f in result.findings if f.rule == "TFM216")
    assert "`StateTest.testAssign`: `.assign(...)`" in message
    program.write_text(fixed, encoding="utf-8")
    run = run_python([str(program)], timeout=300, cwd=tmp_path,
                         env=dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3", PYTHONWARNINGS="ignore"))
    assert run.stdout.strip().splitlines()[-1] == "2 tests, 0 failed", run.stderr[-2000:]


OPS_TEST = ("import tensorflow as tf\nfrom ops import scaled\n\n\nclass OpsTest(tf.test.TestCase):\n\n"
            "    def testScaled(self):\n        with self.test_session() as sess:\n"
            "            x = tf.placeholder(tf.float32, [2])\n            y = scaled(x)\n"
            "            self.assertAllClose(sess.run(y, {x: [1.0, 2.0]}), [3.0, 6.0])\n\n\n"
            "if __name__ == '__main__':\n    tf.test.main()\n")


@pytest.mark.parametrize("helper, eager", [
    ("import tensorflow as tf\n\n\ndef scaled(t):\n    return t * 3.0\n", True),
    ("import tensorflow as tf\n\n\ndef scaled(t):\n    return t * 3.0 + 0.0 * tf.gradients(t, t)[0]\n", False),
    # a docstring's example and a comment run nothing
    ('import tensorflow as tf\n\n\ndef scaled(t):\n    """with tf.Session() as s: s.run(y, feed_dict={x: 1})"""\n'
     "    return t * 3.0  # not t.name\n", True),
    # TF1's `Dimension.value`, which the same fix reads as TF2 does (TFM111) before the test runs
    ("import tensorflow as tf\n\n\ndef scaled(t):\n    n = t.get_shape()[0].value\n    return t * (n + 1.0)\n",
     True),
])
def test_a_test_file_calls_a_module_of_its_project_only_if_that_module_runs_eagerly(tmp_path, helper, eager):
    """project.graph_imports.eager_imports: the module a test calls has no construct that runs
    otherwise eagerly (here `tf.gradients`), else the test file keeps the compat route; either way
    its test passes."""
    (tmp_path / "ops.py").write_text(helper)
    (tmp_path / "ops_test.py").write_text(OPS_TEST)
    result = _run("fix", "--native", "--unsafe-fixes", "--no-cache", "--exit-zero", ".", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    fixed = (tmp_path / "ops_test.py").read_text()
    assert ("self.evaluate(y)" in fixed) is eager and ("disable_v2_behavior()" in fixed) is not eager, fixed
    if not eager:
        check = _run("check", "--native", "--no-cache", "--format", "concise", ".", cwd=tmp_path)
        assert "`scaled`, from `ops.scaled`, a module `fix --native` has not proven to run eagerly" in check.stdout
    pytest.importorskip("tensorflow")
    ran = run_python(["ops_test.py"], cwd=tmp_path,
                         env=dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3"))
    assert ran.returncode == 0 and "OK" in ran.stderr, ran.stderr[-2000:]


def test_eager_test_files_still_pass_when_another_module_of_the_run_turns_v2_off(tmp_path):
    """A test run imports every test module first (pytest): one left on the compat route turns v2
    behaviour off for the whole process, and the eager tests then run in graph mode. They pass
    there too (the variables' initializer run is kept, a no-op eagerly): never worse than `fix`."""
    pytest.importorskip("tensorflow")
    names = []
    for case in EXEC:
        if case.name.startswith("exec_test_"):
            fixed = fix_source(case.read_bytes(), case.name, ALL, unsafe=True, native=True).fixed
            if b"def gradient_error(" in fixed:
                continue  # (a known gap, native.gradient_checks: TF2's check runs eagerly only)
            (tmp_path / case.name).write_bytes(fixed)
            names.append(case.stem)
    runner = ("import sys, unittest\nimport tensorflow as tf\ntf.compat.v1.disable_v2_behavior()\n"
              "suite = unittest.TestSuite(unittest.defaultTestLoader.loadTestsFromName(n) for n in sys.argv[1:])\n"
              "result = unittest.TextTestRunner().run(suite)\nprint(len(result.failures) + len(result.errors))\n")
    run = run_python(["-c", runner, *names], timeout=300,
                         cwd=tmp_path, env=dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3", PYTHONWARNINGS="ignore"))
    assert run.stdout.strip().splitlines()[-1] == "0", run.stderr[-3000:]


# A seeded program's random draws (native.seeded_draws): eager TF2 draws other numbers from the same
# seed, so the rewrite is an unsafe fix that says so above the seed (equivalence:
# tests/fixtures/equivalence/seeded_momentum_saver.py).
SEEDED = ("import tensorflow as tf\n\ntf.set_random_seed(3)\nx = tf.placeholder(tf.float32, [None, 2])\n"
          "w = tf.Variable(tf.random_normal([2, 1]))\ny = tf.matmul(x, w)\nwith tf.Session() as sess:\n"
          "    sess.run(tf.global_variables_initializer())\n    print(sess.run(y, {x: [[1.0, 2.0]]}))\n")


def test_a_seeded_program_with_random_draws_is_rewritten_only_as_an_unsafe_fix():
    from tfmigrate.native.seeded_draws import NOTE, PINNED_NOTE, seed_line

    assert seed_line(SEEDED) == 3 and seed_line(SEEDED + "class T(tf.test.TestCase):\n    pass\n") is None
    refused = rewrite(SEEDED)
    assert refused.code is None and refused.blocker.line == 3
    assert "graph-level seed" in refused.blocker.construct and "--unsafe-fixes" in refused.blocker.construct
    # TF1's op seed written out where it is certain (native.op_seeds), with its own note
    converted = rewrite(SEEDED, unsafe=True)
    assert converted.blocker is None, str(converted.blocker)
    assert "\n".join(PINNED_NOTE) + "\ntf.random.set_seed(3)\n" in converted.code
    assert "tf.random_normal([2, 1], seed=0)" in converted.code
    assert rewrite(converted.code, unsafe=True).code is None  # eager already: nothing more to rewrite, no second note
    spelled = rewrite(SEEDED.replace("tf.set_random_seed(3)", "tf.random.set_seed(3)"), unsafe=True)
    assert "tf.random_normal([2, 1], seed=0)" in spelled.code  # (TF2's spelling sets the graph's seed alike)
    # where it is not (a draw in a loop), the numbers change, and the note says so
    looped = SEEDED.replace("w = tf.Variable(tf.random_normal([2, 1]))\n",
                            "ws = [tf.Variable(tf.random_normal([2, 1])) for _ in range(2)]\nw = ws[0]\n")
    converted = rewrite(looped, unsafe=True)
    assert converted.blocker is None, str(converted.blocker)
    assert "\n".join(NOTE) + "\ntf.random.set_seed(3)\n" in converted.code and "seed=0" not in converted.code
    # nothing random drawn, no seed, or a test file (it compares what it computes from its own draws): safe
    assert rewrite(SEEDED.replace("tf.random_normal([2, 1])", "tf.ones([2, 1])")).blocker is None
    assert rewrite(SEEDED.replace("tf.set_random_seed(3)", "")).blocker is None
    assert "unsafe" not in rewrite(SEEDED.replace("tf.set_random_seed(3)", "")).code


def test_the_seed_note_follows_the_seed_into_a_function():
    from tfmigrate.native.seeded_draws import NOTE, noted

    text = noted("import tensorflow as tf\n\n\ndef main():\n    tf.random.set_seed(1)\n    return 1\n")
    assert "def main():\n" + "".join(f"    {line}\n" for line in NOTE) + "    tf.random.set_seed(1)\n" in text
    assert noted(text) == text
    opening = noted('"""Doc."""\nfrom __future__ import print_function\nimport tensorflow as tf\n')
    assert opening.startswith('"""Doc."""\nfrom __future__ import print_function\n' + NOTE[0])


# Queue input pipelines (issue 22, native.queues): converted to `tf.data` where the order is TF1's,
# refused with a reason where it is random (converted by --unsafe-fixes, with a note), and a
# function that makes an iterator is never a pure helper (it would make one per `tf.function`).
QUEUE = ("import tensorflow as tf\nq = tf.train.string_input_producer(['a.txt', 'b.txt'])\nr = tf.TextLineReader()\n"
         "_, line = r.read(q)\nwith tf.Session() as sess:\n    coord = tf.train.Coordinator()\n"
         "    threads = tf.train.start_queue_runners(coord=coord)\n    print(sess.run(line))\n"
         "    coord.request_stop()\n    coord.join(threads)\n")


def test_a_shuffled_queue_is_converted_only_as_an_unsafe_fix():
    refused = rewrite(QUEUE)
    assert refused.code is None and "order is random" in refused.blocker.construct
    assert "--unsafe-fixes" in refused.blocker.construct and refused.blocker.line == 2
    converted = rewrite(QUEUE, unsafe=True)
    assert converted.blocker is None, str(converted.blocker)
    assert "# tfmigrate (unsafe fix, --unsafe-fixes): `string_input_producer` shuffled" in converted.code
    assert ".shuffle(2).repeat()" in converted.code and "Coordinator" not in converted.code
    exact = rewrite(QUEUE.replace("'b.txt'])", "'b.txt'], shuffle=False)"))
    assert exact.blocker is None and "shuffle" not in exact.code and "unsafe" not in exact.code
    one = rewrite(QUEUE.replace("['a.txt', 'b.txt']", "['a.txt']"))  # shuffling one file name changes nothing
    assert one.blocker is None and "shuffle" not in one.code


@pytest.mark.parametrize("batch, returned", [
    ("tf.train.batch([n], batch_size=2)", "return n\n"),  # a one-tensor list batches to the tensor itself
    ("tf.train.batch([n, n * 2], batch_size=2, allow_smaller_final_batch=True)", "return (n, n * 2)\n"),
    ("tf.train.batch({'n': n}, batch_size=2)", "return {'n': n}\n"),
])
def test_a_queue_batch_becomes_map_and_batch(batch, returned):
    source = QUEUE.replace("'b.txt'])", "'b.txt'], shuffle=False, num_epochs=3)").replace(
        "_, line = r.read(q)\n", f"_, line = r.read(q)\nn = tf.string_to_number(line)\nb = {batch}\n").replace(
        "sess.run(line)", "sess.run(b)")
    outcome = rewrite(source)
    assert outcome.blocker is None, str(outcome.blocker)
    assert returned in outcome.code and ".repeat(3)" in outcome.code
    assert ("drop_remainder=True" in outcome.code) == ("allow_smaller" not in batch)


def test_a_function_that_makes_an_iterator_is_not_a_pure_helper():
    """Inlined into each `tf.function` that reads its tensors, it made one iterator per function:
    `x * 2` and `x * 3` of the same element read two streams (0 0, 2 3, ... instead of 0 3, 4 9).
    Called once, it is written where it is called (native.inline): one iterator, at module level,
    as TF1 made it; called twice, once inside an expression, each call is written where it is
    (native.inline.inline_each; the one in `pipeline() * 3` first given a statement of its own):
    two iterators, as TF1's two calls made."""
    source = ("import tensorflow as tf\ndef pipeline():\n    ds = tf.data.Dataset.range(9)\n"
              "    return tf.compat.v1.data.make_one_shot_iterator(ds).get_next()\n"
              "x = pipeline()\na = x * 2\nb = x * 3\nwith tf.Session() as s:\n    print(s.run(a), s.run(b))\n")
    outcome = rewrite(source)
    assert outcome.blocker is None and "def pipeline" not in outcome.code
    assert outcome.code.count("iter(ds)") == 1 and "iterator.get_next()" in outcome.code
    twice = rewrite(source.replace("b = x * 3", "b = pipeline() * 3"))
    assert twice.blocker is None and "def pipeline" not in twice.code, twice.blocker
    assert "iterator = iter(ds)" in twice.code and "iterator_2 = iter(ds_2)" in twice.code, twice.code
    assert "compute_b(iterator_2.get_next())" in twice.code, twice.code


def test_a_helper_of_a_script_made_eager_by_an_unsafe_queue_conversion_stays_eager(tmp_path):
    """With --unsafe-fixes the shuffled queue becomes `tf.data` and the script eager TF2: the
    workspace's plan must know it too, else the helper takes the compat route alone."""
    (tmp_path / "train.py").write_text(QUEUE.replace("import tensorflow as tf\n", "import tensorflow as tf\nimport helper\n")
                                       .replace("with tf.Session", "y = helper.twice(line)\nwith tf.Session")
                                       .replace("print(sess.run(line))", "print(sess.run(y))"))
    (tmp_path / "helper.py").write_text("import tensorflow as tf\n\n\ndef twice(t):\n    return tf.strings.join([t, t])\n")
    result = _run("fix", "--native", "--unsafe-fixes", "--no-cache", "--exit-zero", ".", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    train = (tmp_path / "train.py").read_text()
    assert "@tf.function" in train and not TF1_LEFT.search(train), train
    assert "compat.v1" not in (tmp_path / "helper.py").read_text()


def test_shuffled_slices_are_converted_only_as_an_unsafe_fix():
    source = ("import numpy as np\nimport tensorflow as tf\nxs = np.arange(6.0)\n"
              "x, = tf.train.slice_input_producer([xs])\ny = x * 2.0\n"
              "with tf.Session() as sess:\n    print(sess.run(y))\n")
    refused = rewrite(source)
    assert refused.code is None and "`slice_input_producer` shuffles its slices" in refused.blocker.construct
    converted = rewrite(source, unsafe=True)
    assert converted.blocker is None, str(converted.blocker)
    assert "from_tensor_slices((xs,)).shuffle(tf.shape(xs, out_type=tf.int64)[0]).repeat()" in converted.code
    assert "# tfmigrate (unsafe fix, --unsafe-fixes): `slice_input_producer` shuffled" in converted.code


def test_a_tf_cond_with_tensor_branches_is_allowed_in_a_map_function_and_in_graph_code():
    """tf.data traces a `map` function into a graph of its own (05_csv_reader's `tf.cond` on a
    decoded column); graph code's `tf.cond` of lambdas returning tensors means the same inside a
    `tf.function`. One whose branch returns a one-element list is refused: TF1 unpacked it."""
    head = ("import tensorflow as tf\n\n\ndef parse(line):\n    n = tf.strings.to_number(line)\n"
            "    return tf.cond(n > 1.0, lambda: n, lambda: -n)\n\n\n")
    mapped = head + ("ds = tf.data.TextLineDataset('a.txt').map(parse).batch(2)\n"
                     "x = tf.compat.v1.data.make_one_shot_iterator(ds).get_next()\n"
                     "with tf.Session() as sess:\n    print(sess.run(x))\n")
    outcome = rewrite(mapped)
    assert outcome.blocker is None, str(outcome.blocker)
    assert ".map(parse)" in outcome.code and "tf.cond(" in outcome.code
    fetched = head + "y = parse(tf.constant('2'))\nwith tf.Session() as sess:\n    print(sess.run(y))\n"
    outcome = rewrite(fetched)
    assert outcome.blocker is None, str(outcome.blocker)
    assert "def compute_y():\n    y = parse(tf.constant('2'))\n" in outcome.code
    listed = fetched.replace("lambda: n, lambda: -n", "lambda: [n], lambda: [-n]")
    assert "one-element lists" in str(rewrite(listed).blocker)
    inline = "import tensorflow as tf\nx = tf.placeholder(tf.float32)\ny = tf.cond(x > 0.0, lambda: [x], lambda: [-x])\n" \
             "with tf.Session() as sess:\n    print(sess.run(y, {x: 1.0}))\n"
    assert "one-element lists" in str(rewrite(inline).blocker)


def test_a_dataset_returned_by_a_function_is_made_once_at_module_level():
    """`train_data = pipeline(2)` then its iterator: the dataset was read as a graph tensor, made
    anew with a new iterator in each call of the `tf.function` (every run read the first batch)."""
    source = ("import tensorflow as tf\n\n\ndef pipeline(n, train=True):\n"
              "    xs = [1.0, 2.0, 3.0] if train else [5.0, 6.0]\n"
              "    return tf.data.Dataset.from_tensor_slices(xs).repeat().batch(n)\n\n\n"
              "train_data = pipeline(2)\na = tf.compat.v1.data.make_one_shot_iterator(train_data).get_next()\n"
              "test_data = pipeline(2, train=False)\nb = tf.compat.v1.data.make_one_shot_iterator(test_data).get_next()\n"
              "s = a + 1.0\nsess = tf.Session()\nfor i in range(3):\n    print(sess.run([s, b]))\n")
    outcome = rewrite(source)
    assert outcome.blocker is None, str(outcome.blocker)
    assert "train_data = pipeline(2)\niterator = iter(train_data)\n" in outcome.code
    assert "pipeline(" not in outcome.code.split("@tf.function")[1]
    two_returns = source.replace("    xs = [1.0, 2.0, 3.0] if train else [5.0, 6.0]\n",
                                 "    if not train:\n        return tf.constant([5.0, 6.0])\n    xs = [1.0, 2.0, 3.0]\n")
    assert rewrite(two_returns).code is None or "iter(train_data)" not in rewrite(two_returns).code


def test_a_fetched_helper_result_that_is_a_list_stays_a_list():
    """`images = convolve(...)` returning a list of tensors, fetched alone: `sess.run` gave a list
    of arrays (the eager call wrote `.numpy()` on the list: AttributeError, 07_basic_filters)."""
    source = ("import tensorflow as tf\ndef pair(t):\n    out = [t, t * 2.0]\n    return out\n"
              "x = tf.placeholder(tf.float32)\ny = pair(x)\nwith tf.Session() as sess:\n"
              "    print(sess.run(y, {x: 1.0}))\n")
    outcome = rewrite(source)
    assert outcome.blocker is None, str(outcome.blocker)
    assert "print(to_numpy(compute_y(1.0)))" in outcome.code and ".numpy())" not in outcome.code.split("def to_numpy")[0]


def test_a_library_module_names_the_program_that_holds_it(tmp_path):
    """Across files (issue 21, item 3): a library module is eager when the programs that import
    it are; its TFM216 names the graph program that keeps the compat route, whose own TFM216 names
    the construct. The same module imported by no checked program is not graph code by itself."""
    (tmp_path / "blocked.py").write_text(BLOCKED.replace("import tensorflow as tf\n",
                                                         "import tensorflow as tf\nimport layers\n"))
    (tmp_path / "layers.py").write_text("import tensorflow as tf\n\n\ndef dense(x):\n"
                                        "    return tf.matmul(x, tf.get_variable('w', [1, 1]))\n")
    (tmp_path / "orphan.py").write_text("import tensorflow as tf\n\n\ndef dense(x):\n"
                                        "    return tf.matmul(x, tf.get_variable('w', [1, 1]))\n")
    native = _run("check", "--native", "--no-cache", "--select", "TFM216", "--output-format", "json", ".",
                  cwd=tmp_path)
    found = {f["path"]: f["message"] for f in json.loads(native.stdout)}
    assert "tf.train.Saver" in found["blocked.py"]
    assert "the graph module `blocked.py` imports, and `blocked.py` keeps the compat route" in found["layers.py"]
    assert "orphan.py" not in found, found


def test_a_library_of_ops_is_held_by_its_importer_and_names_its_own_graph_state(tmp_path):
    """A library whose functions open `tf.name_scope` (called by no code of its own) is held by
    the test file that imports it, not by "a function called 0 times"; one that assigns a
    variable says so, since an eager test could not call it either."""
    (tmp_path / "ops.py").write_text("import tensorflow as tf\n\n\ndef td(v, r):\n    with tf.name_scope('td'):\n"
                                     "        return r - v\n")
    (tmp_path / "state.py").write_text("import tensorflow as tf\n\n\ndef bump(v):\n    with tf.name_scope('bump'):\n"
                                       "        return v.assign_add(1.0)\n")
    (tmp_path / "ops_test.py").write_text(
        "import tensorflow as tf\nimport ops\nimport state\n\n\nclass T(tf.test.TestCase):\n\n"
        "    def testIt(self):\n        v = tf.Variable(1.0)\n        x = tf.placeholder(tf.float32, [])\n"
        "        with self.test_session() as sess:\n            sess.run([ops.td(x, 2.0), v.assign_add(1.0)], {x: 1.0})\n")
    native = _run("check", "--native", "--no-cache", "--select", "TFM216", "--output-format", "json", ".",
                  cwd=tmp_path)
    found = {f["path"]: f["message"] for f in json.loads(native.stdout)}
    assert "`.assign_add(...)`" in found["ops_test.py"], found
    assert "the graph module `ops_test.py` imports, and `ops_test.py` keeps the compat route:" in found["ops.py"]
    assert "called 0 times" not in found["ops.py"]
    assert "it uses `.assign_add` itself" in found["state.py"], found["state.py"]


def test_a_module_imported_from_its_package_is_judged_alone(tmp_path):
    """`from pkg import base` in the module a test calls: it calls `pkg/base.py`, and only runs
    `pkg/__init__.py`'s own code, so another module the package imports (one that makes variables)
    does not hold it back; a name the package re-exports from that module does."""
    from tfmigrate.project.graph_imports import eager_imports

    package = tmp_path / "pkg"
    package.mkdir()
    files = {"__init__.py": "from pkg import ops\nfrom pkg.stateful import counter\n",
             "ops.py": "import tensorflow as tf\nfrom pkg import base\n\n\ndef scaled(t):\n    return base.k * t\n",
             "base.py": "k = 3.0\n",
             "stateful.py": "import tensorflow as tf\n\n\ndef counter():\n    return tf.get_variable('c', [])\n",
             "ops_test.py": "import tensorflow as tf\nfrom pkg import ops\n\n\nclass T(tf.test.TestCase):\n    pass\n",
             "counter_test.py": "import tensorflow as tf\nfrom pkg import counter\n\n\nclass T(tf.test.TestCase):\n"
                                "    pass\n"}
    for name, text in files.items():
        (package / name).write_text(text)
    paths = [str(package / name) for name in files]
    found = eager_imports(paths, lambda path: open(path, "rb").read())
    assert "pkg.ops" in found.get(str(package / "ops_test.py"), ()), found
    assert str(package / "counter_test.py") not in found, found


def test_under_unsafe_fixes_tfm216_names_what_holds_the_module_after_the_unsafe_conversion():
    """Issue 21: `fix --native --unsafe-fixes` converted the shuffled queue; the TFM216 left names
    the next construct, not the advice to give the flag that was given."""
    source = QUEUE.replace("import tensorflow as tf\n", "import tensorflow as tf\nclass Net(object):\n"
                                                         "    def __init__(self, t):\n        self.t = t\n"
                                                         "    def out(self):\n        return self.t\n"
                                                         "    def run(self, s):\n        return s.run(self.t)\n")
    source = source.replace("print(sess.run(line))", "print(Net(line).run(sess))")
    safe = fix_source(source.encode(), "q.py", ALL, native=True)
    unsafe = fix_source(source.encode(), "q.py", ALL, unsafe=True, native=True)
    said = next(f.message for f in safe.findings if f.rule == "TFM216")
    assert "order is random" in said and "`fix --native --unsafe-fixes` converts it" in said
    said = next(f.message for f in unsafe.findings if f.rule == "TFM216")
    assert "order is random" not in said and "--unsafe-fixes` converts it" not in said, said


TRAINING = ("import tensorflow as tf\nx = tf.placeholder(tf.float32, [None])\nw = tf.Variable(1.0)\n"
            "loss = tf.reduce_mean(tf.square(w * x - 1.0))\n"
            "def training(loss, rate):\n    opt = tf.train.GradientDescentOptimizer(rate)\n"
            "    return opt.minimize(loss)\n"
            "train_op = training(loss, 0.1)\n"
            "with tf.Session() as s:\n    s.run(tf.global_variables_initializer())\n"
            "    s.run(train_op, {x: [1.0, 2.0]})\n    print(s.run(w))\n")


@pytest.mark.parametrize("change, reason", [
    (("def training(loss, rate):\n", "def training(loss, rate, *more):\n"), "`*args` or `**kwargs`"),
    (("def training(loss, rate):\n", "def training(loss, rate=tf.constant(0.1)):\n",
      "train_op = training(loss, 0.1)\n", "train_op = training(loss)\n"), None),
    (("train_op = training(loss, 0.1)\n", "train_op = training(loss)\n"), None),
    (("    return opt.minimize(loss)\n", "    if rate > 1:\n        return None\n    return opt.minimize(loss)\n"),
     "a `return` before its end"),
    (("    opt = tf", "    global w\n    opt = tf"), "`global`"),
    (("train_op = training(loss, 0.1)\n", "train_op = training(loss, 0.1) if loss is not None else None\n"),
     "called inside an expression"),
    (("train_op = training(loss, 0.1)\n", "train_op = [tf.no_op(), training(loss, 0.1)][1]\n"),
     "called inside an expression"),
    (("    return opt.minimize(loss)\n", "    return opt.minimize(loss) if rate else training(loss, 0)\n"),
     "a recursive function"),
])
def test_a_graph_function_is_written_in_place_only_where_that_is_exact(change, reason):
    """native.inline: each way the body written at its call site would not mean the call is
    refused, and TFM216 names the function and why (the unchanged program is inlined)."""
    assert rewrite(TRAINING).blocker is None and "def training" not in rewrite(TRAINING).code
    source = TRAINING
    for old, new in zip(change[::2], change[1::2]):
        source = source.replace(old, new)
    outcome = rewrite(source)
    assert outcome.code is None, outcome.code
    construct = outcome.blocker.construct
    assert construct.startswith("`training`, a "), construct
    if reason is None:  # a default evaluated at `def`, other than a literal
        assert "a default argument `rate=tf.constant(0.1)` that is not a literal" in construct \
            or "does not give" in construct, construct
    else:
        assert f"not written where it is called: {reason}" in construct or reason in construct, construct


def test_a_graph_function_called_inside_an_expression_gets_a_statement_of_its_own():
    """native.inline: `total = xent + weight_decay(1e-4)` is first `loss = weight_decay(1e-4)`, then
    `total = xent + loss` (the function's body written there): nothing of the statement ran before
    the call. A returned pair of a pair assigned is written name by name (the script route reads each)."""
    import libcst as cst

    from tfmigrate.native.inline import inline

    source = ("import tensorflow as tf\n\ndef weight_decay(scale):\n    w = tf.add_n(tf.get_collection('w'))\n"
              "    loss = scale * w\n    return loss\n\ndef main():\n    xent = tf.constant(1.0)\n"
              "    total = xent + weight_decay(1e-4)\n    print(total)\n")
    code = inline(cst.parse_module(source), "weight_decay").module.code
    assert "    scale = 1e-4\n    w = tf.add_n(tf.get_collection('w'))\n    loss = scale * w\n" \
           "    total = xent + loss\n" in code, code
    paired = ("import tensorflow as tf\n\ndef _optimize(loss, rate):\n    step = tf.train.get_or_create_global_step()\n"
              "    return tf.train.GradientDescentOptimizer(rate).minimize(loss, global_step=step), step\n\n"
              "loss = tf.constant(1.0)\ntrain_op, step = _optimize(loss, 0.1)\nprint(step)\n")
    code = inline(cst.parse_module(paired), "_optimize").module.code
    assert "train_op = tf.train.GradientDescentOptimizer(rate).minimize(loss, global_step=step_2)\n" \
           "step = step_2\n" in code, code


def test_a_nested_function_keeps_its_own_names_when_its_function_is_written_in_place():
    """native.inline: `def body(i, x)` of a `while_loop` binds `d` for itself: the caller's `d` is
    not what the function reads from its module (written in place); a parameter given the caller's
    `d` is bound to it, not substituted (the nested `d` would be read instead)."""
    import libcst as cst

    from tfmigrate.native.inline import Refused, inline

    source = ("import tensorflow as tf\n\ndef sample(n, dim):\n    def body(i, x):\n        d = i * 2\n"
              "        return i + 1, x + d + dim\n    x0 = tf.zeros([n, dim])\n"
              "    _, samples = tf.while_loop(lambda i, x: i < dim, body, [tf.constant(0), x0])\n    return samples\n\n"
              "def fit():\n    d = 3\n    s = sample(4, d)\n    print(s)\n")
    code = inline(cst.parse_module(source), "sample").module.code
    assert "    dim = d\n" in code and "        return i + 1, x + d + dim\n" in code, code
    with pytest.raises(Refused, match="reads the module's `d`, which `fit` binds"):
        inline(cst.parse_module(source.replace("        d = i * 2\n", "")), "sample")


def test_a_model_function_making_variables_inside_and_outside_its_scopes_is_named_per_call():
    """A model function making `emb` beside `with tf.variable_scope("rnn_layer")` (research code's
    encoders) is read as one making its variables outside a scope: named from each call's scope
    (run equal to the compat route: exec_rnn_towers_reused_scope)."""
    source = (MODEL + "def f(t):\n    with tf.variable_scope('a'):\n        w = tf.get_variable('w', [1])\n"
              "    return t * w * tf.Variable(2.0)\na = f(x)\nb = a\n" + RUN)
    outcome = rewrite(source)
    assert outcome.blocker is None, outcome.blocker
    assert 'tf.compat.v1.get_variable("Variable", initializer=lambda: 2.0)' in outcome.code


def test_a_function_running_the_session_for_its_arguments_keeps_its_calls():
    """Script._run_helper: `def evaluate(sess, data)` whose graph use is its Session's runs stays
    a function, without the Session (exec_run_helper_evaluate runs it); one using its Session
    otherwise, called with something else, or used as a value keeps the compat route."""
    source = (MODEL + "y = tf.layers.dense(x, 1)\n\n\ndef evaluate(sess, data):\n"
              "    return sess.run(y, feed_dict={x: data})\n\n\n"
              "with tf.Session() as sess:\n    sess.run(tf.global_variables_initializer())\n"
              "    print(evaluate(sess, [[1.0]]))\n    print(evaluate(sess, data=[[2.0]]))\n")
    outcome = rewrite(source)
    assert outcome.blocker is None, outcome.blocker
    assert "def evaluate(data):\n" in outcome.code
    assert "print(evaluate([[1.0]]))" in outcome.code and "print(evaluate(data=[[2.0]]))" in outcome.code
    for changed, construct in (
            (source.replace("    return sess.run", "    print(sess.graph)\n    return sess.run"),
             "a function that uses the module's graph"),
            (source.replace("evaluate(sess, [[1.0]])", "evaluate(None, [[1.0]])"),
             "given something other than the program's Session"),
            (source + "checks = [evaluate]\n", "used other than by a call")):
        outcome = rewrite(changed)
        assert outcome.code is None and construct in str(outcome.blocker), outcome.blocker


def test_regularization_losses_are_the_model_objects_regularizers_where_tf1_read_them():
    """Script._regularization: TF1's REGULARIZATION_LOSSES read in graph code are the regularizers
    of the model objects called before (exec_regularization_losses runs it); a regularizer given
    outside a model function, or a model function called after the read, keeps the compat route."""
    source = (MODEL + "def f(t, reuse=False):\n    with tf.variable_scope('f', reuse=reuse):\n"
              "        return tf.layers.dense(t, 1, kernel_regularizer=tf.keras.regularizers.l2(0.1))\n"
              "a = f(x)\nr = tf.add_n(tf.get_collection(tf.GraphKeys.REGULARIZATION_LOSSES))\nb = a + r\n" + RUN)
    outcome = rewrite(source)
    assert outcome.blocker is None, outcome.blocker
    assert "r = tf.add_n(regularization_losses(f_model))" in outcome.code
    for changed, construct in (
            (source.replace("b = a + r\n", "b = a + r + tf.layers.dense(x, 1, kernel_regularizer=tf.keras.regularizers."
                                           "l2(0.1))\n"), "a regularizer given outside the model functions"),
            (source.replace("b = a + r\n", "b = a + r + f(x, reuse=True)\n"),
             "the regularization losses read before `f` is called")):
        outcome = rewrite(changed)
        assert outcome.code is None and construct in str(outcome.blocker), outcome.blocker


def test_a_function_returning_its_step_and_a_local_gives_each_back_by_name():
    """native.inline: `train_op, lr = training(loss, step)` of `return opt.apply_gradients(...), lr`:
    the local `lr` is the caller's `lr` and the step is assigned on its own (no tuple assignment the
    script route would read as one statement); a returned value reading a target stays a tuple."""
    import libcst as cst

    from tfmigrate.native.inline import inline

    source = ("import tensorflow as tf\n\n\ndef training(loss, step):\n"
              "    lr = tf.train.exponential_decay(0.1, step, 10, 0.9)\n"
              "    opt = tf.train.GradientDescentOptimizer(lr)\n"
              "    return opt.minimize(loss, global_step=step), lr\n\n\n"
              "step = tf.train.get_or_create_global_step()\nloss = tf.reduce_sum(tf.get_variable('w', [2]))\n"
              "train_op, lr = training(loss, step)\n")
    out = inline(cst.parse_module(source), "training").module.code
    assert "    lr = tf.train.exponential_decay(0.1, step, 10, 0.9)" not in out  # (at module level now)
    assert "\nlr = tf.train.exponential_decay(0.1, step, 10, 0.9)\n" in out
    assert "\ntrain_op = opt.minimize(loss, global_step=step)\n" in out and "train_op, lr" not in out
    crossed = source.replace("return opt.minimize(loss, global_step=step), lr", "return lr * 2.0, lr") \
        .replace("train_op, lr = training", "scaled, lr = training")
    # (the pair written name by name, its values read no target: the same assignment)
    assert "\nscaled = lr_2 * 2.0\nlr = lr_2\n" in inline(cst.parse_module(crossed), "training").module.code


@pytest.mark.parametrize("name, construct", [
    ("bad_class_feed_returned", "the feed dict `feed` used other than as"),
    ("bad_class_feed_passed_on", "the feed dict `feed` used other than as"),
    ("bad_class_feed_mutated_after_run", "the feed dict `feed` used other than as"),
    ("bad_class_feed_key_not_placeholder", 'a feed of `"x:0"` added to `feed`, not a placeholder'),
    ("bad_feed_update_printed", "the feed dict `feed` used other than as"),
    ("bad_class_saver_placeholder_shape", "a placeholder whose shape or dtype is written with names of `__init__`"),
    ("bad_class_saver_placeholder_dtype", "a placeholder whose shape or dtype is written with names of `__init__`"),
    ("bad_class_saver_module_placeholder", "a `tf.train.Saver` of a graph class fed by `inputs`, not a `self.<x> ="),
])
def test_a_feed_dict_that_escapes_or_feeds_a_non_placeholder_is_refused(name, construct):
    outcome = rewrite((FIXTURES / "TFM216" / f"{name}.py").read_text(encoding="utf-8"))
    assert outcome.code is None
    assert construct in str(outcome.blocker)


def test_tensorflow_imports_the_rewrite_left_unused_go_and_no_other():
    """native.tidy: `from tensorflow.python.framework import ops` for the dropped
    `ops.reset_default_graph()` goes; a user's import, `import tensorflow as tf`, an import with a
    comment above it, one the rewrite still reads, and one the original never read stay."""
    from tfmigrate.native.tidy import dropped_unused

    original = ("import os\nimport tensorflow as tf\nfrom tensorflow.python.framework import ops, dtypes\n"
                "from tensorflow.python.ops import math_ops\n# why\nfrom tensorflow.python import pywrap\n"
                "from tensorflow.python.util import nest\n"
                "ops.reset_default_graph()\nx = dtypes.float32\nos.getcwd(); tf.constant(1); pywrap.x\n")
    rewritten = ("import os\nimport tensorflow as tf\nfrom tensorflow.python.framework import ops, dtypes\n"
                 "from tensorflow.python.ops import math_ops\n# why\nfrom tensorflow.python import pywrap\n"
                 "from tensorflow.python.util import nest\n"
                 "x = dtypes.float32\n")
    assert dropped_unused(original, rewritten) == (
        "import os\nimport tensorflow as tf\nfrom tensorflow.python.framework import dtypes\n"
        "from tensorflow.python.ops import math_ops\n# why\nfrom tensorflow.python import pywrap\n"
        "from tensorflow.python.util import nest\n"
        "x = dtypes.float32\n")
    only_ops = rewritten.replace(", dtypes", "").replace("x = dtypes.float32\n", "")
    assert "framework" not in dropped_unused(original.replace(", dtypes", ""), only_ops)
    assert dropped_unused(original, "this is not python (") == "this is not python ("


def test_a_name_the_rewrite_numbered_for_a_gone_name_takes_that_name():
    """native.tidy.unnumbered: `optimizer_2` (added while the TF1 train op held `optimizer`)
    becomes `optimizer` once `optimizer` is gone; a name whose base is still there, two numbered
    names of one base, the user's own `layer_2`, a builtin base stay."""
    from tfmigrate.native.tidy import unnumbered

    original = "optimizer = opt.minimize(loss)\nlayer_2 = 1\nsess.run(optimizer)\nb = 1\n"
    rewritten = ("optimizer_2 = SGD(learning_rate=0.1)\nlayer_2 = 1\ndef step():\n    optimizer_2.apply()\n"
                 "compute_b_2 = compute_b = 0\nx_2 = x_3 = 0\niter_2 = 0\nf(learning_rate=optimizer_2)\n")
    assert unnumbered(original, rewritten) == (
        "optimizer = SGD(learning_rate=0.1)\nlayer_2 = 1\ndef step():\n    optimizer.apply()\n"
        "compute_b_2 = compute_b = 0\nx_2 = x_3 = 0\niter_2 = 0\nf(learning_rate=optimizer)\n")
    assert unnumbered(original, "optimizer_2 = 1\noptimizer = 2\n") == "optimizer_2 = 1\noptimizer = 2\n"
    by_keyword = "def f(optimizer_2):\n    pass\nf(optimizer_2=1)\n"  # a parameter passed by keyword stays
    assert unnumbered(original, by_keyword) == by_keyword


@pytest.mark.parametrize("name, construct", [
    ("bad_class_batch_norm_eval_training", "a run that computes `tf.layers.batch_normalization` in training mode "
                                           "without its update ops"),
    ("bad_class_batch_norm_no_updates", "a training op that does not run the UPDATE_OPS"),
    ("bad_class_batch_norm_made_twice", "a run of the training op of `net` without those of the other objects of "
                                        "`Net`"),
    ("bad_class_batch_norm_trains_one_object", "a run of the training op of `nets[1]` without those of the other "
                                               "objects of `NN`"),
    ("bad_class_batch_norm_objects_in_comprehension", "an object of `NN`, which makes "
                                                      "`tf.layers.batch_normalization`, made other than by"),
    ("bad_class_joint_run_feed_drawn", "a `sess.run` over more than one object with a feed other than a dict "
                                       "literal of names and literals"),
    ("bad_class_joint_run_feed_reassigned", "a `sess.run` over more than one object whose feed reads a name it "
                                            "assigns"),
    ("bad_class_batch_norm_made_after_updates", "`tf.layers.batch_normalization` made after the program read "
                                                "UPDATE_OPS"),
    ("bad_class_method_binds_module_placeholder", "the method `Net.add_layer` binds `tf_x`, the name of a "
                                                  "module-level placeholder"),
])
def test_a_class_batch_norm_that_keras_would_update_otherwise_is_refused(name, construct):
    """native.class_updates: each run where the tracked layer would update its moving statistics
    other than TF1 did is refused, naming why."""
    outcome = rewrite((FIXTURES / "TFM216" / f"{name}.py").read_text(encoding="utf-8"))
    assert outcome.code is None
    assert construct in str(outcome.blocker)


def test_a_scope_list_trains_the_model_objects_whose_tf1_names_it_selects():
    """`minimize(var_list=tf.get_collection(TRAINABLE_VARIABLES, scope=...))` of model functions
    (native.collection_lists, Emitter._under_scope): a function wholly under that scope trains its
    object's variables, one under other literal scopes none, one under several scopes those its
    variables' TF1 names select."""
    source = ("import tensorflow as tf\nx = tf.placeholder(tf.float32, [None, 2])\n"
              "def g(z):\n    with tf.variable_scope('G'):\n        return tf.layers.dense(z, 2)\n"
              "def d(v):\n    with tf.variable_scope('D'):\n        h = tf.layers.dense(v, 2)\n"
              "    with tf.variable_scope('E'):\n        return tf.layers.dense(h, 1)\n"
              "loss = tf.reduce_sum(d(g(x)))\nd_vars = tf.get_collection(tf.GraphKeys.TRAINABLE_VARIABLES, scope='D')\n"
              "step = tf.train.GradientDescentOptimizer(0.1).minimize(loss, var_list=d_vars)\n"
              "with tf.Session() as s:\n    s.run(tf.global_variables_initializer())\n"
              "    s.run(step, {x: [[1.0, 2.0]]})\n")
    outcome = rewrite(source)
    assert outcome.blocker is None, str(outcome.blocker)
    assert "variables = [*[v for v in d_model.trainable_variables if v.name.startswith('D')]]" in outcome.code
    assert "d_vars" not in outcome.code and "get_collection" not in outcome.code
    whole = rewrite(source.replace("scope='D'", "scope='G'"))
    assert "variables = [*g_model.trainable_variables]\n" in whole.code


def test_lists_filtered_from_trainable_variables_are_scope_lists():
    """The DCGAN shape: `t_vars = tf.trainable_variables()`, then `[v for v in t_vars if
    v.name.startswith("G")]` is `get_collection`'s scope list (native.collection_lists), and a
    function whose variables are all under that scope (beside a `return`) trains its object's."""
    source = ("import tensorflow as tf\nx = tf.placeholder(tf.float32, [None, 2])\n"
              "def g(z):\n    with tf.variable_scope('G'):\n        h = tf.layers.dense(z, 2)\n    return h\n"
              "def d(v):\n    with tf.variable_scope('D'):\n        return tf.layers.dense(v, 1)\n"
              "loss = tf.reduce_sum(d(g(x)))\nd_loss = -loss\nt_vars = tf.trainable_variables()\n"
              "g_vars = [v for v in t_vars if v.name.startswith('G')]\n"
              "d_vars = [var for var in t_vars if var.name.startswith('D')]\n"
              "g_step = tf.train.GradientDescentOptimizer(0.1).minimize(loss, var_list=g_vars)\n"
              "d_step = tf.train.GradientDescentOptimizer(0.1).minimize(d_loss, var_list=d_vars)\n"
              "with tf.Session() as s:\n    s.run(tf.global_variables_initializer())\n"
              "    s.run([g_step, d_step], {x: [[1.0, 2.0]]})\n")
    outcome = rewrite(source)
    assert outcome.blocker is None, str(outcome.blocker)
    assert "variables = [*g_model.trainable_variables]\n" in outcome.code
    assert "variables = [*d_model.trainable_variables]\n" in outcome.code
    assert "t_vars" not in outcome.code and "trainable_variables()" not in outcome.code
    # a list read elsewhere too, or a filter other than a name's start: left as it was (refused)
    for changed in (source + "print(len(t_vars))\n", source.replace("v.name.startswith('G')", "'G' in v.name")):
        assert rewrite(changed).code is None


def test_variable_lists_local_to_a_function_are_inlined_there():
    """native.collection_lists in `def main(_)`: `t_vars`/`d_vars` local to the function are read as
    `get_collection`'s scope list, each line left empty (the function keeps its lines); a list
    that Python reads too stays a list (TF1's same list), and a function declaring globals is left
    as written."""
    import libcst as cst

    from tfmigrate.native.collection_lists import inlined

    source = ("import tensorflow as tf\n\n\ndef main(_):\n    loss = build()\n    t_vars = tf.trainable_variables()\n"
              "    d_vars = [v for v in t_vars if v.name.startswith('D/')]\n"
              "    step = tf.train.AdamOptimizer(0.1).minimize(loss, var_list=d_vars)\n    return step\n")
    def listed(text):
        return inlined(cst.parse_module(text), text)

    out = listed(source).code
    assert "minimize(loss, var_list=tf.get_collection(tf.GraphKeys.TRAINABLE_VARIABLES, scope=\"D/\"))" in out
    assert "t_vars" not in out and "d_vars" not in out
    assert out.count("\n") == source.count("\n")
    printed = listed(source.replace("    return step", "    print(len(d_vars))\n    return step")).code
    assert "    d_vars = tf.get_collection(" in printed and "var_list=d_vars" in printed  # (the same list in TF1)
    assert listed(source.replace("    loss = build()", "    global t_vars\n    loss = build()")) is None


def test_gradients_clipped_by_global_norm_are_a_minimize_with_clipped_tape_gradients():
    """native.clipped_steps: `tvars`/`tf.gradients`/`clip_by_global_norm`/`apply_gradients` (also
    with the gradients on a line of their own) is read as `minimize`, lines kept, and the step
    clips the tape's gradients; a list used elsewhere, or a norm computed in the graph, is not."""
    import libcst as cst
    from tfmigrate.native.clipped_steps import clipped

    source = ("import tensorflow as tf\nx = tf.placeholder(tf.float32, [None, 2])\nw = tf.Variable(tf.zeros([2, 1]))\n"
              "loss = tf.reduce_mean(tf.square(tf.matmul(x, w) - 1.0))\ntvars = tf.trainable_variables()\n"
              "raw = tf.gradients(loss, tvars)\ngrads, _ = tf.clip_by_global_norm(raw, 0.5)\n"
              "train_op = tf.train.GradientDescentOptimizer(0.1).apply_gradients(zip(grads, tvars))\n"
              "with tf.Session() as sess:\n    sess.run(tf.global_variables_initializer())\n"
              "    print(sess.run([train_op, loss], {x: [[1.0, 2.0]]})[1])\n")
    found = clipped(cst.parse_module(source), source)
    assert found is not None and list(found.norms) == ["train_op"]
    assert found.module.code.splitlines()[7] == "train_op = tf.train.GradientDescentOptimizer(0.1).minimize(loss)"
    assert len(found.module.code.splitlines()) == len(source.splitlines())
    outcome = rewrite(source)
    assert outcome.blocker is None, str(outcome.blocker)
    assert "    gradients, _ = tf.clip_by_global_norm(gradients, 0.5)\n" in outcome.code
    listed = source.replace("with tf.Session", "print(len(tvars))\nwith tf.Session")
    assert clipped(cst.parse_module(listed), listed) is None
    assert "variable lists" in str(rewrite(listed).blocker)
    fed = source.replace("x = tf.placeholder(tf.float32, [None, 2])\n",
                         "x = tf.placeholder(tf.float32, [None, 2])\nnorm = tf.placeholder(tf.float32, [])\n")
    fed = fed.replace("clip_by_global_norm(raw, 0.5)", "clip_by_global_norm(raw, norm)")
    assert "a norm or bounds computed in the graph" in str(rewrite(fed).blocker)


def test_the_global_norm_fetched_with_its_clipped_step_is_given_back_by_the_step():
    """`grads, gnorm = tf.clip_by_global_norm(...)` with `gnorm` fetched in the step's run: the eager
    step returns the norm it clipped by (exec_clip_norm_fetched_from_builder_dict runs it); fetched
    without the step, or read by graph code, it exists only inside the step: refused."""
    source = ("import tensorflow as tf\nx = tf.placeholder(tf.float32, [None, 2])\nw = tf.Variable(tf.zeros([2, 1]))\n"
              "loss = tf.reduce_mean(tf.square(tf.matmul(x, w) - 1.0))\ntvars = tf.trainable_variables()\n"
              "grads, gnorm = tf.clip_by_global_norm(tf.gradients(loss, tvars), 0.5)\n"
              "train_op = tf.train.GradientDescentOptimizer(0.1).apply_gradients(zip(grads, tvars))\n"
              "with tf.Session() as sess:\n    sess.run(tf.global_variables_initializer())\n"
              "    l, g, _ = sess.run([loss, gnorm, train_op], {x: [[1.0, 2.0]]})\n    print(l, g)\n")
    outcome = rewrite(source)
    assert outcome.blocker is None, str(outcome.blocker)
    assert "    gradients, gnorm = tf.clip_by_global_norm(gradients, 0.5)\n" in outcome.code
    assert "    return [loss, gnorm]\n" in outcome.code
    alone = source.replace("    print(l, g)\n", "    print(l, g, sess.run(gnorm, {x: [[1.0, 2.0]]}))\n")
    assert "fetched without its training op `train_op`" in str(rewrite(alone).blocker)
    summary = source.replace("with tf.Session", "s = tf.summary.scalar('gnorm', gnorm)\nwith tf.Session")
    assert "the global norm of clipped gradients, read by graph code" in str(rewrite(summary).blocker)


def test_a_builder_returning_its_tensors_in_a_dict_is_read_by_their_names():
    """`model = build(...)` of `return {"x": x, "loss": loss}`, read only as `model["loss"]`: written
    where it is called, each read is the tensor's name (no dict of tensors); the dict passed on
    (`train(sess, model)`) or read by a key it lacks is kept as it was."""
    import libcst as cst
    from tfmigrate.native.inline import inline

    source = ("import tensorflow as tf\n\n\ndef build(n):\n    x = tf.placeholder(tf.float32, [None, n])\n"
              "    w = tf.Variable(tf.ones([n, 1]))\n    return {'x': x, 'y': tf.matmul(x, w), 'n': n}\n\n\n"
              "model = build(2)\nwith tf.Session() as sess:\n    sess.run(tf.global_variables_initializer())\n"
              "    print(sess.run(model['y'], {model['x']: [[1.0, 2.0]]}), model['n'])\n")
    written = inline(cst.parse_module(source), "build").module.code
    assert "model" not in written, written
    assert "y = tf.matmul(x, w)\n" in written and "sess.run(y, {x: [[1.0, 2.0]]}), n)" in written
    caller = source.replace("'n': n}", "'n': tf}").replace("model['n']", "model['n'].__name__")
    held = inline(cst.parse_module(caller), "build").module.code  # a name of the caller's: its value at the call
    assert "n_2 = tf\n" in held and "n_2.__name__" in held, held
    outcome = rewrite(source.replace(", 'n': n}", "}").replace(", model['n'])", ")"))
    assert outcome.blocker is None, str(outcome.blocker)
    passed = source.replace(", 'n': n}", "}").replace(", model['n'])", ", len(model))")
    assert "model = {" in inline(cst.parse_module(passed), "build").module.code
    missing = source.replace(", 'n': n}", "}").replace("model['n']", "model['z']")
    assert "model = {" in inline(cst.parse_module(missing), "build").module.code


def test_the_optimizers_halves_with_a_clip_between_them_are_a_clipped_minimize():
    """native.clipped_steps: `compute_gradients`, then a global-norm clip of the zipped gradients or
    a `clip_by_value` of each, then `apply_gradients`, three lines in a row at module level or in
    `main`, are `minimize` with the step clipping the tape's gradients; a train op's name given twice
    in the module (its clip is found by name) is left alone."""
    import libcst as cst
    from tfmigrate.native.clipped_steps import clipped

    values = ("import tensorflow as tf\nx = tf.placeholder(tf.float32, [None, 2])\nw = tf.Variable(tf.zeros([2, 1]))\n"
              "loss = tf.reduce_mean(tf.square(tf.matmul(x, w) - 1.0))\nopt = tf.train.GradientDescentOptimizer(0.1)\n"
              "gvs = opt.compute_gradients(loss)\ncapped = [(tf.clip_by_value(g, -1.0, 1.0), v) for g, v in gvs]\n"
              "train_op = opt.apply_gradients(capped)\n"
              "with tf.Session() as sess:\n    sess.run(tf.global_variables_initializer())\n"
              "    print(sess.run([train_op, loss], {x: [[1.0, 2.0]]})[1])\n")
    found = clipped(cst.parse_module(values), values)
    assert found is not None and list(found.values) == ["train_op"] and not found.norms
    assert found.module.code.splitlines()[7] == "train_op = opt.minimize(loss)"
    assert len(found.module.code.splitlines()) == len(values.splitlines())
    outcome = rewrite(values)
    assert outcome.blocker is None, str(outcome.blocker)
    assert "    gradients = [None if g is None else tf.clip_by_value(g, -1.0, 1.0) for g in gradients]\n" in outcome.code
    main = ("import tensorflow as tf\n\n\ndef main(_):\n    x = tf.placeholder(tf.float32, [None, 2])\n"
            "    w = tf.Variable(tf.zeros([2, 1]))\n    loss = tf.reduce_mean(tf.square(tf.matmul(x, w) - 1.0))\n"
            "    opt = tf.train.AdamOptimizer(0.1)\n    grads, tvars = zip(*opt.compute_gradients(loss))\n"
            "    grads, _ = tf.clip_by_global_norm(grads, 5.0)\n    step = opt.apply_gradients(zip(grads, tvars))\n"
            "    with tf.Session() as sess:\n        sess.run(tf.global_variables_initializer())\n"
            "        print(sess.run([step, loss], {x: [[1.0, 2.0]]})[1])\n\n\n"
            "if __name__ == '__main__':\n    tf.app.run()\n")
    found = clipped(cst.parse_module(main), main)
    assert found is not None and list(found.norms) == ["step"]
    outcome = rewrite(main)
    assert outcome.blocker is None, str(outcome.blocker)
    assert "        gradients, _ = tf.clip_by_global_norm(gradients, 5.0)\n" in outcome.code
    twice = main.replace("if __name__", "def other():\n    step = 1\n\n\nif __name__")
    assert clipped(cst.parse_module(twice), twice) is None
    used = values.replace("with tf.Session", "print(gvs)\nwith tf.Session")
    assert clipped(cst.parse_module(used), used) is None


def test_nested_layer_calls_each_become_their_layer_object():
    """`tf.layers.dense(tf.layers.dense(x, 6), 1)`: the inner call inside the outer one's new call is
    its own layer object too (it was left a new `Dense(6)` made at each call, and the trace failed)."""
    source = ("import tensorflow as tf\nx = tf.placeholder(tf.float32, [None, 3])\n"
              "y = tf.layers.dense(tf.layers.dense(x, 6, tf.nn.tanh), 1)\n"
              "with tf.Session() as sess:\n    sess.run(tf.global_variables_initializer())\n"
              "    print(sess.run(y, {x: [[1.0, 2.0, 3.0]]}))\n")
    outcome = rewrite(source)
    assert outcome.blocker is None, str(outcome.blocker)
    assert "y = y_layer(y_layer_2(x))" in outcome.code and "Dense(6, tf.nn.tanh)(" not in outcome.code


def test_control_flow_in_model_functions_and_classes_is_checked_for_its_structure():
    """A model function or a graph class keeps `tf.cond` of lambdas returning tensors; a branch
    returning a one-element list (TF1 unpacked it) or making variables is refused."""
    function = ("import tensorflow as tf\n\n\ndef net(x):\n    h = tf.layers.dense(x, 2)\n"
                "    return tf.cond(tf.reduce_sum(h) > 0.0, lambda: h, lambda: -h)\n\n\n"
                "x = tf.placeholder(tf.float32, [None, 2])\ny = net(x)\nwith tf.Session() as sess:\n"
                "    sess.run(tf.global_variables_initializer())\n    print(sess.run(y, {x: [[1.0, 2.0]]}))\n")
    assert rewrite(function).blocker is None, str(rewrite(function).blocker)
    listed = function.replace("lambda: h, lambda: -h", "lambda: [h], lambda: [-h]")
    assert "one-element lists" in str(rewrite(listed).blocker)
    made = function.replace("lambda: h, lambda: -h", "lambda: tf.layers.dense(h, 2), lambda: -h")
    assert "makes variables" in str(rewrite(made).blocker)


def test_a_tensors_eval_under_its_scopes_one_session_is_that_sessions_run():
    """native.session_evals: `t.eval(feed)` / `tf.global_variables_initializer().run()` in a scope
    that makes one Session are that Session's `run`, on the same line; two Sessions, `session=`, a
    string argument (pandas' `df.eval("a + b")`) or another default (`as_default()`) are left."""
    import libcst as cst
    from tfmigrate.native.session_evals import as_session_runs

    source = ("import tensorflow as tf\n\n\ndef main():\n    sess = tf.InteractiveSession()\n"
              "    tf.global_variables_initializer().run()\n    print(net.out.eval(feed_dict={net.x: 1}), y.eval())\n"
              "    print(df.eval('a + b'), z.eval(session=other))\n")
    written = as_session_runs(cst.parse_module(source), source).code
    assert "    sess.run(tf.global_variables_initializer())\n" in written
    assert "print(sess.run(net.out, feed_dict={net.x: 1}), sess.run(y))" in written
    assert "df.eval('a + b'), z.eval(session=other)" in written
    assert len(written.splitlines()) == len(source.splitlines())
    for other in ("    s2 = tf.Session()\n", "    g.as_default()\n"):
        changed = source.replace("    tf.global", other + "    tf.global")
        assert as_session_runs(cst.parse_module(changed), changed) is None, other
    evaluated = source.replace(".eval(", ".evaluate(").replace("    tf.global_variables_initializer().run()\n", "")
    assert as_session_runs(cst.parse_module(evaluated), evaluated) is None


def test_a_graph_class_trains_the_variables_of_a_scope_its_lists_name():
    """A class's `minimize(var_list=...)` of `[v for v in tf.trainable_variables() if
    v.name.startswith("critic")]` kept as `self.c_vars` (native.collection_lists, in methods too)
    trains the class's variables under that scope (exec_class_gan_scope_lists_eval runs it); a
    list read otherwise (`len(gan.c_vars)`) or any other `var_list` keeps the compat route."""
    source = ("import tensorflow as tf\n\n\nclass Net(object):\n    def __init__(self):\n"
              "        self.x = tf.placeholder(tf.float32, [None, 2])\n"
              "        with tf.variable_scope('critic'):\n            self.y = tf.layers.dense(self.x, 1)\n"
              "        with tf.variable_scope('other'):\n            self.loss = tf.reduce_mean(tf.layers.dense(self.y, 1))\n"
              "        all_vars = tf.trainable_variables()\n"
              "        self.c_vars = [v for v in all_vars if v.name.startswith('critic')]\n"
              "        self.step = tf.train.GradientDescentOptimizer(0.1).minimize(self.loss, var_list=self.c_vars)\n\n\n"
              "net = Net()\nwith tf.Session() as sess:\n    sess.run(tf.global_variables_initializer())\n"
              "    print(sess.run([net.step, net.loss], {net.x: [[1.0, 2.0]]})[1])\n")
    outcome = rewrite(source)
    assert outcome.blocker is None, str(outcome.blocker)
    assert "variables = [v for v in self.trainable_variables if v.name.startswith('critic')]" in outcome.code
    read = source.replace("    print(sess.run", "    print(len(net.c_vars))\n    print(sess.run")
    assert rewrite(read).code is None
    listed = source.replace("var_list=self.c_vars", "var_list=self.c_vars[:1]")
    assert rewrite(listed).code is None


def test_a_model_functions_scope_named_by_its_own_values_is_kept_for_one_call():
    """`with tf.variable_scope("fc%d" % i)` in a model function's loop is kept as written
    (exec_scope_named_in_a_loop runs it); called twice (whether TF1 shared the variables is not
    read) or named from the module's values, it keeps the compat route."""
    source = (MODEL + "def mlp(h, sizes):\n    for i, n in enumerate(sizes):\n"
              "        with tf.variable_scope('fc%d' % i):\n            h = tf.layers.dense(h, n)\n    return h\n\n\n"
              "a = mlp(x, [3, 1])\nb = a\n" + RUN)
    outcome = rewrite(source)
    assert outcome.blocker is None, str(outcome.blocker)
    assert "with tf.compat.v1.variable_scope('fc%d' % i):" in outcome.code
    twice = source.replace("b = a\n", "b = mlp(x, [2, 1])\n")
    assert "with a `variable_scope` named by an expression" in str(rewrite(twice).blocker)
    module_named = source.replace("'fc%d' % i", "PREFIX + str(i)").replace("def mlp", "PREFIX = 'fc'\n\n\ndef mlp")
    assert "whose `variable_scope` name reads the module" in str(rewrite(module_named).blocker)


def test_a_saver_of_listed_variables_saves_them_under_the_names_it_gives():
    """`tf.train.Saver(var_list={"poly/w": w})` / `tf.train.Saver([w, b])` of module-level variables:
    the eager name-based Saver of those variables, under the dict's names or TF1's own names; a
    list of anything else keeps the compat route."""
    source = ("import tensorflow as tf\nx = tf.placeholder(tf.float32, [None, 1])\n"
              "with tf.variable_scope('poly'):\n    w = tf.get_variable('w', [1, 1])\n"
              "b = tf.Variable(tf.zeros([1]), name='b')\ny = tf.matmul(x, w) + b\n"
              "saver = tf.train.Saver(var_list={'model/w': w}, max_to_keep=2)\n"
              "with tf.Session() as sess:\n    sess.run(tf.global_variables_initializer())\n"
              "    print(sess.run(y, {x: [[1.0]]}))\n    saver.save(sess, 'ckpt')\n")
    outcome = rewrite(source)
    assert outcome.blocker is None, str(outcome.blocker)
    assert "tf.compat.v1.train.Saver(var_list={\"model/w\": w}, max_to_keep=2)" in outcome.code, outcome.code
    listed = rewrite(source.replace("var_list={'model/w': w}", "[w, b]"))
    assert listed.blocker is None, str(listed.blocker)
    assert "Saver(var_list={\"poly/w\": w, \"b\": b}, max_to_keep=2)" in listed.code, listed.code
    other = rewrite(source.replace("var_list={'model/w': w}", "var_list=[y]"))
    assert "`tf.train.Saver(var_list=[y])`" in str(other.blocker)


def test_a_saver_a_class_makes_in_init_after_its_step_saves_its_variables_by_tf1_name():
    """`self.saver = tf.train.Saver()` at the end of `__init__` (after `minimize`), used by methods as
    `self.saver.save(self.sess, path)`: the eager `__init__` traces the step and makes a name-based
    Saver, the methods give it None (exec_class_saver_in_init restores across programs); made before
    the `minimize` (TF1 saved no optimizer state) or given a `var_list`, it keeps the compat route."""
    source = ("import tensorflow as tf\n\n\nclass Net(object):\n    def __init__(self):\n"
              "        self.x = tf.placeholder(tf.float32, [None, 2])\n        self.loss = tf.reduce_mean(tf.layers.dense(self.x, 1))\n"
              "        self.step = tf.train.AdamOptimizer(0.1).minimize(self.loss)\n        self.saver = tf.train.Saver()\n"
              "        self.sess = tf.Session()\n        self.sess.run(tf.global_variables_initializer())\n\n"
              "    def fit(self, x):\n        return self.sess.run([self.step, self.loss], {self.x: x})[1]\n\n"
              "    def save(self, path):\n        self.saver.save(self.sess, path)\n\n\n"
              "net = Net()\nprint(net.fit([[1.0, 2.0]]))\nnet.save('m')\n")
    outcome = rewrite(source)
    assert outcome.blocker is None, str(outcome.blocker)
    assert "        self.saver = tf.compat.v1.train.Saver(var_list=with_tf1_optimizer_state(" in outcome.code, outcome.code
    assert "        self.saver.save(None, path)\n" in outcome.code
    early = source.replace("        self.step = tf.train.AdamOptimizer(0.1).minimize(self.loss)\n        self.saver = tf.train.Saver()\n",
                           "        self.saver = tf.train.Saver()\n        self.step = tf.train.AdamOptimizer(0.1).minimize(self.loss)\n")
    assert "before the class's `minimize`" in str(rewrite(early).blocker)
    listed = source.replace("tf.train.Saver()", "tf.train.Saver([self.w])")
    assert "given a `var_list`" in str(rewrite(listed).blocker)


def test_a_draw_with_its_own_seed_names_what_kept_the_seeds_from_being_written_out():
    """Own seeds are kept where native.op_seeds writes TF1's seeds out; where it cannot (here a
    Keras layer, whose draws it does not count), the finding says why, beside the draw that stopped."""
    source = ("import tensorflow as tf\ntf.set_random_seed(1)\nx = tf.placeholder(tf.float32, [None, 2])\n"
              "h = tf.nn.dropout(tf.keras.layers.Dense(2)(x), 0.5, seed=4)\n"
              "with tf.Session() as sess:\n    sess.run(tf.global_variables_initializer())\n"
              "    print(sess.run(h, {x: [[1.0, 2.0]]}))\n")
    construct = str(rewrite(source, unsafe=True).blocker)
    assert "`tf.nn.dropout(seed=...)`" in construct, construct
    assert "not written out here: `tf.keras.layers.Dense`, which may draw" in construct, construct


def test_the_legacy_keras_switch_goes_below_the_modules_own_import_os():
    """A module that imports `os` first (only the standard library before it) gets the switch right
    below that import, not a second `import os` above it; one that imports a third-party module
    first keeps it above every import (that module might load TensorFlow)."""
    body = ("import tensorflow as tf\n\n\ndef net(x):\n    with tf.variable_scope('net'):\n"
            "        return tf.layers.dense(x, 2)\n\n\nx = tf.placeholder(tf.float32, [None, 3])\ny = net(x)\n"
            "with tf.Session() as sess:\n    sess.run(tf.global_variables_initializer())\n"
            "    print(sess.run(y, {x: [[1.0, 2.0, 3.0]]}).shape)\n")
    own = rewrite("import sys\nimport os\nimport shutil\n" + body).code
    assert own.startswith('import sys\nimport os\nos.environ.setdefault("TF_USE_LEGACY_KERAS", "1")\nimport shutil\n'), own
    assert own.count("import os") == 1
    # code between `import os` and TensorFlow's import block: the switch goes above that block
    between = rewrite("import os\nx = 1\nimport numpy as np\n" + body).code
    assert between.startswith('import os\nx = 1\nos.environ.setdefault("TF_USE_LEGACY_KERAS", "1")\nimport numpy'), between
    other = rewrite("import numpy as np\nimport os\n" + body).code
    assert other.startswith('import os\nos.environ.setdefault("TF_USE_LEGACY_KERAS", "1")\nimport numpy as np\nimport os\n'), other


def test_a_feed_dict_that_only_passes_values_on_is_written_where_it_is_read():
    from tfmigrate.native.tidy import feeds_passed_on

    text = ("for step in range(3):\n    # the batch\n    feed = {'x': xs[step], 'y': ys}\n"
            "    loss = train_step(feed['x'], feed['y']).numpy()\n"
            "def learn(self, s):\n    fd = {\"s\": s[None, :], \"t\": self.t}\n    return self.step(**fd)\n")
    out = feeds_passed_on(text)
    assert "    # the batch\n    loss = train_step(xs[step], ys).numpy()\n" in out
    assert "    return self.step(s=s[None, :], t=self.t)\n" in out
    # a value that calls (`next(it)`: read once, where the dict was), a dict read again, or a key it
    # lacks (TF1's KeyError) keeps the feed dict; a spread beside a keyword it has keeps `fd`
    assert "feed = {'x': next(it), 'y': ys}" in feeds_passed_on(text.replace("xs[step]", "next(it)"))
    assert "feed = {'x': xs[step], 'y': ys}" in feeds_passed_on(text + "print(feed)\n")
    assert "feed = {'x': xs[step], 'y': ys}" in feeds_passed_on(text.replace("feed['y'])", "feed['z'])"))
    spread = feeds_passed_on(text.replace("**fd)", "**fd, s=1)"))
    assert "fd = {" in spread and "feed = {" not in spread


def test_an_evaluation_only_rewrite_with_an_rnn_stays_eager(tmp_path):
    """The rewrite of a script that only evaluates an RNN has `tf.function`s and no `GradientTape`:
    it is TF2 code, not graph code for the compat route to switch v2 behaviour off in (it did:
    `tf.compat.v1` in front of `tf.keras.initializers.GlorotUniform()` failed with AttributeError).
    A `get_variable` without an initializer gets TensorFlow's Glorot initializer, which draws from
    the program's seed (Keras 3's `GlorotUniform()` drew other numbers at each run)."""
    source = ("import numpy as np\nimport tensorflow as tf\n\nx = tf.placeholder(tf.float32, [None, 3, 2])\n"
              "cell = tf.nn.rnn_cell.GRUCell(4)\nout, _ = tf.nn.dynamic_rnn(cell, x, dtype=tf.float32)\n"
              "w = tf.get_variable('w', [4, 1])\ny = tf.matmul(out[:, -1], w)\n"
              "with tf.Session() as sess:\n    sess.run(tf.global_variables_initializer())\n"
              "    print(sess.run(y, {x: np.ones((2, 3, 2), np.float32)}).shape)\n")
    result = fix_source(source.encode("utf-8"), "evaluate.py", ALL, unsafe=True, native=True)
    fixed = result.fixed.decode("utf-8")
    assert "disable_v2_behavior" not in fixed and "Session" not in fixed, fixed
    assert "tf.compat.v1.glorot_uniform_initializer()([4, 1], dtype=tf.float32)" in fixed, fixed
    (tmp_path / "evaluate.py").write_text(fixed)
    run = run_python(["evaluate.py"], cwd=tmp_path)
    assert run.returncode == 0 and run.stdout.strip().endswith("(2, 1)"), run.stderr[-2000:]


def test_dtype_names_are_whole_names_not_prefixes_of_ops():
    """`tf.bool` is a dtype (a Python object), `tf.boolean_mask` an op: a prefix read the op as a
    dtype, and its statement as an object made once (a masked loss then "depended on no variable")."""
    from tfmigrate.native.script import is_object_path

    assert all(is_object_path(p) for p in ("bool", "float32", "int64", "uint8", "string", "complex64", "dtypes.int32"))
    assert not any(is_object_path(p) for p in ("boolean_mask", "complex", "strings.split", "floor", "invert_permutation"))


def test_inlined_function_keeps_a_discarded_underscore():
    """`def main(_)` calling a function with `out, _ = ...`: the discard stays `_` (renamed, two
    bindings of it read as a clipped step's global norm fetched by the program)."""
    import libcst as cst

    from tfmigrate.native.inline import inline

    source = ("def build(x):\n    a, _ = f(x)\n    b, _ = g(a)\n    return b\n\n\n"
              "def main(_):\n    y = build(1)\n    print(y)\n")
    text = inline(cst.parse_module(source), "build").module.code
    assert "a, _ = f(x)" in text and "y, _ = g(a)" in text and "__" not in text
    read = source.replace("    print(y)\n", "    print(y, _)\n")  # (main reads its `_`: kept apart)
    assert "a, _ = f(x)" not in inline(cst.parse_module(read), "build").module.code


_SETUP_GRAPH = ("import numpy as np\nimport tensorflow as tf\n\n\nclass T(tf.test.TestCase):\n\n"
                "    def setUp(self):\n        super(T, self).setUp()\n"
                "        self.x = tf.placeholder(tf.float32, [None, 2], name='x')\n"
                "        self.w = tf.placeholder(tf.float32, [2])\n"
                "        self.y = tf.reduce_sum(self.x * self.w, axis=1)\n"
                "        self.grad = tf.gradients(self.y, self.w)[0]\n\n"
                "    def _feed(self, n):\n        return {self.x: np.ones([n, 2]), self.w: [1.0, 2.0]}\n\n"
                "    def testShape(self):\n        self.assertEqual([None], self.y.get_shape().as_list())\n\n"
                "    def testIt(self):\n")


def _setup_graph_test(*lines: str, head: str = _SETUP_GRAPH) -> str:
    return _test_file(*lines, head=head)


def test_a_graph_setup_builds_on_placeholders_becomes_a_traced_function_of_the_class():
    """native.setup_graphs: `setUp`'s placeholders become the parameters of a `tf.function`
    (named by them, so the tests' feeds stay dicts of them), its builds the function's body; each
    run of its tensors calls it with the run's feed; static reads come from its trace."""
    outcome = rewrite(_setup_graph_test(
        "with self.test_session() as sess:", "    for n in (1, 3):", "        feed = self._feed(n)",
        "        self.assertAllClose(sess.run(self.y, feed_dict=feed), 3.0 * np.ones(n))",
        "    g = sess.run(self.grad, {self.x: [[1.0, 2.0]], self.w: [0.0, 0.0]})",
        "    self.assertAllClose(self.y.eval(self._feed(2)), [3.0, 3.0])"))
    assert outcome.code is not None, outcome.blocker
    assert ("        super(T, self).setUp()\n        self.x = \"x\"\n        self.w = \"w\"\n\n"
            "        @tf.function(autograph=False, input_signature=[\n"
            "            tf.TensorSpec([None, 2], tf.float32),\n            tf.TensorSpec([2], tf.float32),\n"
            "        ])\n        def graph(x, w):\n            y = tf.reduce_sum(x * w, axis=1)\n"
            "            grad = tf.gradients(y, w)[0]\n            return {\"y\": y, \"grad\": grad}\n\n"
            "        self.graph = graph\n        static = graph.get_concrete_function().structured_outputs\n"
            "        self.y = static[\"y\"]\n") in outcome.code
    assert ("        for n in (1, 3):\n            feed = self._feed(n)\n            outputs = self.graph(**feed)\n"
            "            self.assertAllClose(self.evaluate(outputs[\"y\"]), 3.0 * np.ones(n))\n"
            "        outputs = self.graph(x=[[1.0, 2.0]], w=[0.0, 0.0])\n"
            "        g = self.evaluate(outputs[\"grad\"])\n"
            "        outputs = self.graph(**self._feed(2))\n"
            "        self.assertAllClose(self.evaluate(outputs[\"y\"]), [3.0, 3.0])\n") in outcome.code
    assert "placeholder" not in outcome.code and "sess" not in outcome.code


@pytest.mark.parametrize("source, what", [
    # a test builds on the graph's tensor
    (_setup_graph_test("z = self.y * 2.0", "with self.test_session() as sess:", "    sess.run(z, self._feed(1))"),
     "a tensor of the graph read other than by a run"),
    # a placeholder read other than as a feed's key
    (_setup_graph_test("with self.test_session() as sess:", "    sess.run(self.y, self._feed(1))",
                      "    print(self.x.shape)"), "a placeholder read other than as a feed's key"),
    # a run feeding only some placeholders, a run with no feed
    (_setup_graph_test("with self.test_session() as sess:", "    sess.run(self.y, {self.x: [[1.0, 2.0]]})"),
     "a feed other than a dict of every placeholder once"),
    (_setup_graph_test("with self.test_session() as sess:", "    sess.run(self.y)"),
     "a feed other than a dict of the placeholders"),
    # a feed assigned twice, or changed by a method of it
    (_setup_graph_test("feed = self._feed(1)", "feed = self._feed(2)", "with self.test_session() as sess:",
                      "    sess.run(self.y, feed)"), "a feed assigned more than once"),
    (_setup_graph_test("feed = self._feed(1)", "feed.update({self.x: [[0.0, 0.0]]})",
                      "with self.test_session() as sess:", "    sess.run(self.y, feed)"),
     "a feed changed by a method of it"),
    # a test changes what the graph read
    (_setup_graph_test("with self.test_session() as sess:", "    sess.run(self.y, self._feed(1))",
                      head=_SETUP_GRAPH.replace("self.w, axis=1)", "self.w * self.k, axis=1)").replace(
                          "super(T, self).setUp()\n", "super(T, self).setUp()\n        self.k = 2.0\n").replace(
                          "    def testShape(self):\n", "    def testK(self):\n        self.k = 3.0\n\n"
                          "    def testShape(self):\n")), "a test changing what the graph reads"),
    # setUp changes what the graph read after building it (the trace would see the new value)
    (_setup_graph_test("with self.test_session() as sess:", "    sess.run(self.y, self._feed(1))",
                       head=_SETUP_GRAPH.replace("self.w, axis=1)", "self.w * self.k, axis=1)").replace(
                           "super(T, self).setUp()\n", "super(T, self).setUp()\n        self.k = 2.0\n").replace(
                           "[0]\n\n    def _feed", "[0]\n        self.k = 3.0\n\n    def _feed")),
     "`setUp` changing what the graph reads"),
    # the graph makes a variable; a build calls a helper of the class
    (_setup_graph_test("with self.test_session() as sess:", "    sess.run(self.y, self._feed(1))",
                      head=_SETUP_GRAPH.replace("tf.gradients(self.y, self.w)[0]", "tf.Variable(self.w)")),
     "a variable or a session made from them"),
    (_setup_graph_test("with self.test_session() as sess:", "    sess.run(self.y, self._feed(1))",
                      head=_SETUP_GRAPH.replace("tf.reduce_sum(self.x * self.w, axis=1)", "self._sum(self.x * self.w)")),
     "a helper method building on them"),
    # the class shares its setUp with a subclass
    (_setup_graph_test("with self.test_session() as sess:", "    sess.run(self.y, self._feed(1))")
    + "\n\nclass U(T):\n\n    def testMore(self):\n        pass\n", "a `setUp` shared with another test class"),
])
def test_a_graph_setup_that_a_traced_function_would_change_keeps_the_compat_route(source, what):
    outcome = rewrite(source)
    assert outcome.code is None, outcome.code
    assert "the class `T`: placeholders `setUp` makes for its tests to feed, with " + what in outcome.blocker.construct, \
        outcome.blocker.construct


_SETUP_PLACEHOLDERS = ("import numpy as np\nimport tensorflow as tf\n\n\nclass T(tf.test.TestCase):\n\n"
                       "    def setUp(self):\n        super(T, self).setUp()\n        n = 2\n"
                       "        self.x_ph = tf.placeholder(tf.float32, [None, n])\n"
                       "        self.x = np.ones([3, n], np.float32)\n\n"
                       "    def testIt(self):\n")


def test_placeholders_setup_makes_for_the_tests_to_build_on_become_each_tests_own():
    """native.setup_graphs: placeholders `setUp` makes and only the tests build on: `setUp` keeps
    their spec, each test makes its own from it, then a constant of what a single run feeds it
    or a traced check's parameter; `init = tf.global_variables_initializer()` run by name goes."""
    outcome = rewrite(_test_file(
        "y = tf.reduce_sum(self.x_ph, axis=1)", "init = tf.global_variables_initializer()",
        "with self.test_session() as sess:", "    sess.run(init)",
        "    self.assertAllClose(sess.run(y, {self.x_ph: self.x}), [2.0, 2.0, 2.0])",
        head=_SETUP_PLACEHOLDERS) + "\n    def testShape(self):\n        with self.assertRaises(ValueError):\n"
        "            tf.matmul(self.x_ph, tf.ones([3, 3]))\n")
    assert outcome.code is not None, outcome.blocker
    assert "        self.x_ph = tf.TensorSpec([None, n], tf.float32)\n" in outcome.code
    assert ("    def testIt(self):\n        x_ph = tf.constant(self.x, dtype=self.x_ph.dtype)\n"
            "        y = tf.reduce_sum(x_ph, axis=1)\n        self.assertAllClose(self.evaluate(y), [2.0, 2.0, 2.0])\n"
            ) in outcome.code
    assert ("            tf.function(lambda x_ph: tf.matmul(x_ph, tf.ones([3, 3])), autograph=False)"
            ".get_concrete_function(\n                self.x_ph)\n") in outcome.code, outcome.code
    assert "placeholder" not in outcome.code and "init" not in outcome.code


@pytest.mark.parametrize("source, what", [
    (_test_file("y = self._double()", "with self.test_session() as sess:", "    sess.run(y, {self.x_ph: self.x})",
                head=_SETUP_PLACEHOLDERS.replace("    def testIt(self):\n", "    def _double(self):\n"
                                                 "        return 2.0 * self.x_ph\n\n    def testIt(self):\n")),
     "a helper method reading them"),
    (_test_file("self.x_ph = tf.constant(self.x)", "with self.test_session() as sess:", "    sess.run(self.x_ph)",
                head=_SETUP_PLACEHOLDERS), "a test assigning one"),
])
def test_placeholders_setup_makes_that_a_test_could_not_own_keep_the_compat_route(source, what):
    outcome = rewrite(source)
    assert outcome.code is None, outcome.code
    assert what in outcome.blocker.construct, outcome.blocker.construct


@pytest.mark.parametrize("lines, construct", [
    (("with tf.Graph().as_default() as g:", "    x = tf.constant(1.0)", "    g.finalize()",
      "    with self.test_session(graph=g) as sess:", "        sess.run(x)"),
     "the graph `g` used other than given to the test session"),
    # (`g = tf.Graph()` then `with g.as_default():` alone reads as the first spelling: native.new_graphs)
    (("g = tf.Graph()", "with g.as_default():", "    x = tf.constant(1.0)", "    g.finalize()",
      "    with self.test_session(graph=g) as sess:", "        sess.run(x)"), "`self.test_session(...)` given a graph"),
])
def test_a_graph_of_a_tests_own_used_otherwise_keeps_the_compat_route(lines, construct):
    """test_files._new_graph: `with tf.Graph().as_default() as g:` is opened only where `g` is just
    given to the test session inside."""
    outcome = rewrite(_test_file(*lines))
    assert outcome.code is None, outcome.code
    assert construct in outcome.blocker.construct, outcome.blocker.construct


@pytest.mark.parametrize("source, construct", [
    # a random tensor run twice (TF1 drew anew), or in a loop
    (_test_file("x = tf.random_uniform([3])", "with self.test_session() as sess:", "    a = sess.run(x)",
                "    b = sess.run(x * 2.0)"), "random tensors run more than once"),
    (_test_file("x = tf.random_uniform([3])", "with self.test_session() as sess:", "    for _ in range(2):",
                "        sess.run(x)"), "random tensors run more than once"),
    # a file that sets a graph seed: an unseeded draw is then TF1's own sequence, not eager TF2's
    (_test_file("tf.set_random_seed(1)", "x = tf.random_uniform([3])", "with self.test_session() as sess:",
                "    sess.run(x)"), "`tf.random_uniform`, which does not run the same eagerly"),
])
def test_an_unseeded_draw_a_test_could_see_change_keeps_the_compat_route(source, construct):
    """test_files.unseeded_draw: a draw without a seed stays in an eager test (with
    `--unsafe-fixes`) only where a draw of its distribution is what the test checks: no graph seed
    in the file, each random tensor run once."""
    outcome = rewrite(source, unsafe=True)
    assert outcome.code is None, outcome.code
    assert construct in outcome.blocker.construct, outcome.blocker.construct


def test_an_unseeded_draw_stays_in_an_eager_test_only_with_unsafe_fixes_and_is_noted():
    source = _test_file("x = tf.random_normal([1000])", "with self.test_session() as sess:",
                        "    self.assertLess(abs(sess.run(tf.reduce_mean(x))), 0.2)")
    safe = rewrite(source)
    assert safe.code is None and "`tf.random_normal` without a seed" in safe.blocker.construct, safe
    assert "--unsafe-fixes --native` rewrites it" in safe.blocker.construct
    unsafe = rewrite(source, unsafe=True)
    assert unsafe.code is not None, unsafe.blocker
    assert ("        # tfmigrate: drawn without a seed: eager TF2 draws other numbers than TF1's test graph did "
            "(same distribution)\n        x = tf.random_normal([1000])\n"
            "        self.assertLess(abs(self.evaluate(tf.reduce_mean(x))), 0.2)\n") in unsafe.code


def test_tensorflow_probability_is_called_from_an_eager_test_like_tensorflow():
    """TensorFlow Probability builds its ops alike eagerly (test_files.PLAIN_MODULES): a test that
    calls it is not held as if it called a module of the project."""
    source = TEST_HEAD.replace("import tensorflow as tf\n", "import tensorflow as tf\nimport tensorflow_probability as tfp\n") \
        + "        d = tfp.distributions.Normal(0.0, 1.0)\n        with self.test_session() as sess:\n" \
        "            self.assertAllClose(sess.run(d.mean()), 0.0)\n"
    outcome = rewrite(source)
    assert outcome.code is not None, outcome.blocker
    assert "self.assertAllClose(self.evaluate(d.mean()), 0.0)" in outcome.code


def test_a_library_routed_on_an_earlier_pass_is_named_by_its_own_tf1_code():
    """TFM216 of a library held by its importer names the library's own construct, not the
    `disable_v2_behavior()` TFM200 gave it on an earlier fix pass."""
    from tfmigrate.native.script import LIBRARY_MODULE
    from tfmigrate.rules.tfm216_not_native import _construct

    routed = "import tensorflow.compat.v1 as tf\ntf.disable_v2_behavior()\n\n\ndef f(x):\n"
    held = _construct(LIBRARY_MODULE, "ops_test.py", routed + "    return x * tf.get_variable('w', [3])\n")
    assert "it uses `.get_variable` itself" in held, held
    plain = _construct(LIBRARY_MODULE, "ops_test.py", routed + "    return x * 2.0\n")
    assert "itself" not in plain and "follow the imports" in plain, plain


_FIXED_FEED = '''import numpy as np
import tensorflow as tf


class SumTest(tf.test.TestCase):

    def setUp(self):
        super(SumTest, self).setUp()
        self.rows, self.weights = np.arange(6.0).reshape(2, 3), np.array([1.0, 2.0, 3.0])
        self.rows_ph = tf.placeholder(tf.float32, [None, None])
        self.weights_ph = tf.placeholder(tf.float32, [None])
        self.feed = {self.rows_ph: self.rows, self.weights_ph: self.weights}

    def testWeightedSum(self):
        total = tf.reduce_sum(self.rows_ph * self.weights_ph, axis=1)
        with self.test_session() as sess:
            out = sess.run(total, self.feed)
        self.assertAllClose([8.0, 26.0], out)

    def testMean(self):
        mean = tf.reduce_mean(self.rows_ph)
        with self.test_session():
            self.assertAllClose(2.5, mean.eval(feed_dict=self.feed))


if __name__ == "__main__":
    tf.test.main()
'''


@pytest.mark.parametrize("change, eager", [
    (("", ""), True),
    # a static shape read: TF1's placeholder had unknown dimensions, a constant has none
    (("        self.assertAllClose([8.0, 26.0], out)\n",
      "        self.assertAllClose([8.0, 26.0], out)\n        self.assertEqual(total.get_shape().as_list(), [None])\n"), False),
    # another feed of a placeholder: not the one fixed value
    (("            out = sess.run(total, self.feed)\n",
      "            out = sess.run(total, {self.rows_ph: self.rows, self.weights_ph: self.weights})\n"), False),
    # the feed given to something else than a run
    (("            out = sess.run(total, self.feed)\n",
      "            out = sess.run(total, dict(self.feed))\n"), False),
    # a value bound again after setUp: TF1 fed the new one
    (("        mean = tf.reduce_mean(self.rows_ph)\n", "        self.rows = self.rows * 2\n        mean = tf.reduce_mean(self.rows_ph)\n"),
     False),
    # a value bound after the placeholder is made
    (("        self.feed = {", "        self.weights = self.weights + 1\n        self.feed = {"), False),
], ids=["fixed", "static-shape", "other-feed", "feed-passed", "value-rebound", "value-after"])
def test_placeholders_set_up_with_one_fixed_feed_become_its_values(tmp_path, change, eager):
    """`setUp` makes placeholders and one feed of values it bound before them, and every run feeds
    that feed: each placeholder is its value as a constant, the runs go eager (native.setup_feeds;
    gen54 p07's `HawkesOpsTest`). Anything else done with them keeps the class as it was."""
    source = _FIXED_FEED.replace(*change)
    assert source != _FIXED_FEED or change == ("", "")
    code = rewrite(source, unsafe=True).code
    if not eager:
        assert code is None or "tf.constant(self.rows" not in code, code
        return
    assert "self.rows_ph = tf.constant(self.rows, dtype=tf.float32)" in code and "feed" not in code, code
    assert "placeholder" not in code and "test_session" not in code, code
    pytest.importorskip("tensorflow")
    (tmp_path / "sum_test.py").write_text(code)
    ran = run_python(["sum_test.py"], cwd=tmp_path, env=dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3"))
    assert ran.returncode == 0 and "OK" in ran.stderr, ran.stderr[-3000:]


def test_all_trainable_variables_as_var_list_are_minimizes_default():
    """`var_list=tf.trainable_variables()` (or a name holding it, read only there: native.collection_lists)
    is what `minimize` trains by default, TF1's list in TF1's order: the step trains every object's."""
    source = ("import tensorflow as tf\nx = tf.placeholder(tf.float32, [None, 2])\n"
              "def net(z):\n    with tf.variable_scope('net'):\n        return tf.layers.dense(z, 1)\n"
              "loss = tf.reduce_sum(net(x))\ntrainable = tf.trainable_variables()\n"
              "step = tf.train.GradientDescentOptimizer(0.1).minimize(loss, var_list=trainable)\n"
              "with tf.Session() as s:\n    s.run(tf.global_variables_initializer())\n"
              "    s.run(step, {x: [[1.0, 2.0]]})\n")
    direct = source.replace("trainable = tf.trainable_variables()\n", "").replace(
        "var_list=trainable", "var_list=tf.trainable_variables()")
    for text in (source, direct):
        outcome = rewrite(text)
        assert outcome.blocker is None, str(outcome.blocker)
        assert "variables = [*net_model.trainable_variables]\n" in outcome.code
        assert "trainable_variables()" not in outcome.code
    assert rewrite(source + "print(len(trainable))\n").code is None  # (a list Python reads too)


def test_a_graph_reset_a_test_method_starts_with_is_dropped_and_one_between_builds_is_kept():
    """`setUp`'s `tf.reset_default_graph()` (after `super().setUp()`): eagerly no graph to reset.
    A reset between two builds parts what the test made: it stays (and holds the method)."""
    import libcst as cst

    from tfmigrate.facts.names import ImportTable
    from tfmigrate.native.test_files import _graph_reset_dropped

    source = ("import tensorflow as tf\n\n\ndef setUp(self):\n    super(T, self).setUp()\n    tf.reset_default_graph()\n"
              "    self.x = 1\n\n\ndef test(self):\n    a = tf.ones([1])\n    tf.reset_default_graph()\n    b = a\n")
    module = cst.parse_module(source)
    api = ImportTable(module, source).api
    setup, test = [s for s in module.body if isinstance(s, cst.FunctionDef)]
    assert cst.Module(body=[_graph_reset_dropped(setup, api)]).code.lstrip() == (
        "def setUp(self):\n    super(T, self).setUp()\n    self.x = 1\n")
    assert _graph_reset_dropped(test, api) is test


def test_functions_that_build_in_a_new_graph_at_each_call_are_found_in_both_spellings():
    """native.entry_functions.own_graphs: `with tf.Graph().as_default():`, or `graph = tf.Graph()`
    then `with graph.as_default():`, at the top of the body; not a graph made elsewhere."""
    import libcst as cst

    from tfmigrate.native.entry_functions import own_graphs

    source = ("import tensorflow as tf\n\n\ndef a():\n    with tf.Graph().as_default():\n        pass\n\n\n"
              "def b(config):\n    graph = tf.Graph()\n    with graph.as_default():\n        pass\n\n\n"
              "def c(graph):\n    with graph.as_default():\n        pass\n\n\n"
              "def d():\n    with tf.get_default_graph().as_default():\n        pass\n")
    assert own_graphs(cst.parse_module(source), source) == ("a", "b")


def test_a_graph_classs_tf_module_members_are_renamed_where_every_use_is_its_own():
    """native.class_members: `self.variables` of a class that becomes a `tf.Module` (whose
    `variables` is its own) is `self.variables_`, with the reads of the objects the module makes of
    it; another object's `.variables` leaves the module as it was (the class route names the clash)."""
    import libcst as cst

    from tfmigrate.native.class_members import renamed

    source = ("import tensorflow as tf\n\nclass Agent(object):\n    def __init__(self):\n"
              "        self.x = tf.placeholder(tf.float32, [None, 2])\n"
              "        self.variables = tf.trainable_variables()\n\n    def count(self):\n"
              "        return len(self.variables)\n\nagent = Agent()\nprint(len(agent.variables))\n")
    code = renamed(cst.parse_module(source)).code
    assert code == source.replace(".variables", ".variables_"), code
    other = source + "model = make()\nprint(model.variables)\n"
    assert renamed(cst.parse_module(other)) is None
    assert renamed(cst.parse_module(source.replace("agent = Agent()\n", "agent = Agent()\nagent = None\n"))) is None
