"""Issue 22: a training script that builds its model by calling its library's model functions
goes eager through one tracked store (native.imported_models); the library stays TF1 code on the
compat route, and under a graph seed the store draws the library's initial weights with TF1's op
seeds, so the eager program prints the compat route's numbers.

Fixtures: tests/fixtures/imported_models/<case>/ (a library and `train.py`, whose `# fixed:` line
both routes print). Snapshots of what `fix --native --unsafe-fixes` writes:
tests/fixtures/imported_models/expected/<case>/ (TFMIGRATE_UPDATE_SNAPSHOTS=1 refreshes them).
"""
import json
import os
import subprocess
import sys
from pathlib import Path

import libcst as cst
import pytest

from project_fixtures import copy_project, fix_project, fixed_line, last_line, runner

from tfmigrate.facts.eager_functions import untracked_functions
from tfmigrate.frontends.cli import app
from tfmigrate.native.imported_models import Refused, check_calls, imported
from tfmigrate.project.graph_imports import eager_imports, read_source, stateful_imports

FIXTURES = Path(__file__).parent / "fixtures" / "imported_models"
GRAPH = ("Session(", "placeholder(", "feed_dict", "disable_v2")


def _copy(case: str, where: Path) -> Path:
    return copy_project(FIXTURES / case, where)


def test_a_script_is_told_what_it_may_call_of_its_library():
    files = sorted(str(p) for p in (FIXTURES / "seeded").glob("*.py"))
    stateful = stateful_imports(files, read_source)
    listed = eager_imports(files, read_source, stateful)[str(FIXTURES / "seeded" / "train.py")]
    assert set(listed) == {"lib.dense:model", "lib.model:model", "lib.mse", "lib.dense:draws=init",
                           "lib.model:draws=init"}
    module = cst.parse_module((FIXTURES / "seeded" / "train.py").read_text())
    found = imported(module, listed)
    assert found.models == {"lib.dense", "lib.model"} and found.pure == {"lib.mse"}
    assert found.allowed("lib.model") and found.allowed("lib.mse") and not found.allowed("lib.other")


def test_functions_making_untracked_state_are_named_with_their_callers():
    source = (b"import tensorflow as tf\nK = 0\n\ndef counter(x):\n    global K\n    K += 1\n    return x\n\n"
              b"def layer(x):\n    return counter(x)\n\ndef weights(x):\n    return tf.Variable(x)\n\n"
              b"def cell(n):\n    return tf.nn.rnn_cell.LSTMCell(n)\n\n"
              b"def tracked(x):\n    with tf.variable_scope('s'):\n        return tf.layers.dense(x, 2)\n")
    assert untracked_functions(source) == {"counter", "layer", "weights", "cell"}


def test_a_second_call_must_reuse_or_name_its_own_scope():
    calls = [cst.parse_expression(text) for text in ("lib.model(x)", "lib.model(y, reuse=True)",
                                                     "lib.model(z, reuse=tf.AUTO_REUSE)")]
    check_calls({"lib.model": calls}, frozenset())
    named = [cst.parse_expression(f"lib.dense(x, scope={s!r})") for s in ("a", "b")]
    check_calls({"lib.dense": named}, frozenset())
    with pytest.raises(Refused, match="called again without `reuse=True`"):
        check_calls({"lib.model": [calls[0], cst.parse_expression("lib.model(y)")]}, frozenset())
    with pytest.raises(Refused):
        check_calls({"lib.dense": [named[0], cst.parse_expression("lib.dense(x, scope='a')")]}, frozenset())
    # a function whose variables are all made under AUTO_REUSE shares them when called again
    check_calls({"lib.model": [calls[0], cst.parse_expression("lib.model(y)")]}, frozenset({"lib.model"}))


@pytest.mark.parametrize("case", ["seeded", "by_name", "own_seeds", "builder", "builder_by_name", "builder_class"])
def test_fix_native_routes_the_librarys_model_functions_through_the_store(case, tmp_path, monkeypatch):
    root = _copy(case, tmp_path / "native")
    fix_project(root, monkeypatch, "--native", "--unsafe-fixes")
    train = (root / "train.py").read_text()
    assert not any(marker in train for marker in GRAPH), train
    if case == "builder_class":  # the library's class taken in, made a tracked module (native.classes)
        assert "class Regressor(tf.Module):" in train and "import nets\n" in train, train
    else:
        assert "class TF1Imports(tf.Module):" in train and "tf1_imports(" in train
    library = next(p for p in sorted(root.glob("*.py")) if p.name != "train.py" and not p.name.endswith("_test.py"))
    text = library.read_text()
    assert "import tensorflow.compat.v1 as tf\n" in text and "disable_v2" not in text, text  # TF1 code kept
    assert "keras.layers" not in text, text
    for path in (root / "train.py", library):
        expected = FIXTURES / "expected" / case / path.name
        if os.environ.get("TFMIGRATE_UPDATE_SNAPSHOTS"):
            expected.parent.mkdir(parents=True, exist_ok=True)
            expected.write_text(path.read_text())
        assert path.read_text() == expected.read_text(), path.name
    before = {p.name: p.read_text() for p in root.glob("*.py")}
    fix_project(root, monkeypatch, "--native", "--unsafe-fixes")  # a second run changes nothing
    assert {p.name: p.read_text() for p in root.glob("*.py")} == before


@pytest.mark.parametrize("case", ["seeded", "by_name", "own_seeds", "builder", "builder_by_name", "builder_class"])
def test_the_eager_script_prints_the_compat_routes_numbers(case, tmp_path, monkeypatch):
    pytest.importorskip("tensorflow")
    compat = _copy(case, tmp_path / "compat")
    fix_project(compat, monkeypatch)
    native = _copy(case, tmp_path / "native")
    fix_project(native, monkeypatch, "--native", "--unsafe-fixes")
    expected = fixed_line(FIXTURES / case / "train.py")
    assert last_line(compat, "train.py") == expected
    assert last_line(native, "train.py") == expected
    for test in native.glob("*_test.py"):  # (the library kept TF1 code for its tests, on the compat route)
        run = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", test.name], cwd=native,
                             capture_output=True, text=True, timeout=300)
        assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-2000:]


def test_calls_whose_variables_are_not_read_keep_the_compat_route(tmp_path, monkeypatch):
    native = _copy("held", tmp_path / "native")
    fix_project(native, monkeypatch, "--native", "--unsafe-fixes")
    compat = _copy("held", tmp_path / "compat")
    fix_project(compat, monkeypatch)
    assert (native / "train.py").read_text() == (compat / "train.py").read_text()  # never worse than `fix`
    monkeypatch.chdir(_copy("held", tmp_path / "check"))
    result = runner.invoke(app, ["check", "--no-cache", "--native", "--unsafe-fixes", "--select", "TFM216",
                                 "--format", "json", "."], catch_exceptions=False)
    found = {Path(d["path"]).name: d["message"] for d in json.loads(result.stdout)}
    assert "`lib.dense` called again without `reuse=True`" in found["train.py"], found
    if pytest.importorskip("tensorflow"):
        assert last_line(native, "train.py") == fixed_line(FIXTURES / "held" / "train.py")


def test_untracked_state_is_followed_into_the_modules_a_library_imports(tmp_path):
    (tmp_path / "ops.py").write_text("import tensorflow as tf\n\n\ndef cell(n):\n    return tf.nn.rnn_cell.LSTMCell(n)\n\n\n"
                                     "def dense(x, n):\n    return tf.matmul(x, tf.get_variable('w', [2, n]))\n")
    (tmp_path / "model.py").write_text("import tensorflow as tf\nimport ops\n\n\ndef hparams():\n    return dict(units=3)\n\n\n"
                                       "def encoder(x):\n    return tf.nn.dynamic_rnn(ops.cell(3), x, dtype=tf.float32)\n\n\n"
                                       "def head(x):\n    with tf.variable_scope('head'):\n        return ops.dense(x, 3)\n")
    (tmp_path / "train.py").write_text("import tensorflow as tf\nimport model\nx = tf.placeholder(tf.float32)\n"
                                       "y = model.head(x)\nwith tf.Session() as s:\n    pass\n")
    files = [str(tmp_path / name) for name in ("ops.py", "model.py", "train.py")]
    listed = set(eager_imports(files, read_source, stateful_imports(files, read_source))[files[2]])
    assert "model.encoder:untracked" in listed and "model.hparams" in listed and "model.head:model" in listed
    assert "model.hparams:untracked" not in listed and "model.head:untracked" not in listed


def test_a_model_function_of_python_values_is_graph_state():
    """`emb, w = lib.embedding(VOCAB, 8, reuse=True)` reads no tensor, yet makes (or finds) variables:
    a graph statement through the store, not Python code run once."""
    from tfmigrate.native import rewrite

    source = ("import tensorflow as tf\nimport lib\nx = tf.placeholder(tf.int32, [None])\n"
              "loss = lib.loss(x, 10, 8)\nstep = tf.train.GradientDescentOptimizer(0.1).minimize(loss)\n"
              "emb, w = lib.embedding(10, 8, reuse=True)\nnorm = tf.reduce_sum(emb)\n"
              "with tf.Session() as s:\n    s.run(tf.global_variables_initializer())\n"
              "    s.run(step, {x: [1, 2]})\n    print(s.run(norm))\n")
    outcome = rewrite(source, ("lib",), ("lib.loss:model", "lib.embedding:model"))
    assert outcome.blocker is None, str(outcome.blocker)
    assert "emb, w = tf1_imports(lib.embedding, 10, 8, reuse=True)" in outcome.code
    assert "loss = tf1_imports(lib.loss, x, 10, 8)" in outcome.code


def test_the_library_says_it_stays_tf1_code_for_the_eager_script(tmp_path, monkeypatch):
    root = _copy("by_name", tmp_path / "native")
    fix_project(root, monkeypatch, "--native", "--unsafe-fixes")
    result = runner.invoke(app, ["check", "--no-cache", "--native", "--unsafe-fixes", "--select", "TFM216",
                                 "--format", "json", "."], catch_exceptions=False)
    found = {Path(d["path"]).name: d["message"] for d in json.loads(result.stdout)}
    assert set(found) == {"nets.py"}, found  # (train.py is eager TF2)
    assert "a library of TF1 model code that `train.py`, rewritten as eager TF2, calls through its tracked store" \
        in found["nets.py"], found


def test_a_seeded_script_keeps_the_route_where_its_librarys_draws_cannot_be_tf1s():
    """A library function that draws at each run (a sampled loss, dropout) under the script's graph
    seed: its op seeds cannot be written out, so eager TF2 would print other numbers. The script
    keeps the compat route (never worse than `fix`); unseeded, it goes eager."""
    from tfmigrate.native import rewrite

    source = ("import tensorflow as tf\nimport lib\ntf.set_random_seed(1)\nx = tf.placeholder(tf.int32, [None])\n"
              "loss = lib.loss(x)\nstep = tf.train.GradientDescentOptimizer(0.1).minimize(loss)\n"
              "with tf.Session() as s:\n    s.run(tf.global_variables_initializer())\n"
              "    print(s.run([step, loss], {x: [1, 2]})[1])\n")
    listed = ("lib.loss:model", "lib.loss:draws=run")
    outcome = rewrite(source, ("lib",), listed, unsafe=True)
    assert outcome.code is None and "`lib.loss`, a function of the project that draws under the graph seed" \
        in str(outcome.blocker), outcome.blocker
    unseeded = rewrite(source.replace("tf.set_random_seed(1)\n", ""), ("lib",), listed, unsafe=True)
    assert unseeded.blocker is None and "tf1_imports(lib.loss, x)" in unseeded.code


def test_the_call_a_second_model_function_repeats_is_the_line_named(tmp_path, monkeypatch):
    """The store refused `lib.dense` called again; the first function the script calls (`lib.embed`)
    has one call: the blocker names the repeated call's line (it once read the first function's
    second call, which does not exist: an IndexError, reported as an internal failure)."""
    (tmp_path / "lib.py").write_text(
        "import tensorflow as tf\n\n\ndef embed(x):\n    with tf.variable_scope('embed'):\n"
        "        return x * tf.get_variable('w', [])\n\n\ndef dense(x):\n    with tf.variable_scope('dense'):\n"
        "        return x * tf.get_variable('v', [])\n")
    (tmp_path / "train.py").write_text(
        "import tensorflow as tf\nimport lib\n\nx = tf.placeholder(tf.float32, [None, 1])\ne = lib.embed(x)\n"
        "a = lib.dense(e)\nb = lib.dense(e)\nwith tf.Session() as sess:\n"
        "    sess.run(tf.global_variables_initializer())\n    print(sess.run(a + b, {x: [[1.0]]}))\n")
    monkeypatch.chdir(tmp_path)
    result = runner.invoke(app, ["check", "--no-cache", "--native", "--unsafe-fixes", "--select", "TFM216",
                                 "--format", "json", "."], catch_exceptions=False)
    found = {Path(d["path"]).name: d["message"] for d in json.loads(result.stdout)}
    assert "internal" not in found["train.py"], found
    assert "stopped at line 7: `lib.dense` called again without `reuse=True`" in found["train.py"], found


def _listed(root: Path) -> tuple:
    files = sorted(str(p) for p in root.glob("*.py"))
    return eager_imports(files, read_source, stateful_imports(files, read_source))[str(root / "train.py")]


def test_a_librarys_graph_builders_are_listed_with_their_text_for_its_scripts():
    """`lib.build_graph` makes placeholders and a train op: no store call runs it eagerly, so the
    script is given its text (and what its names are in the library) to take it in."""
    from tfmigrate.facts.library_builders import parse_entry

    listed = _listed(FIXTURES / "builder")
    builds = dict(parse_entry(e) for e in listed if parse_entry(e) is not None)
    assert set(builds) == {"lib.build_graph"}, listed
    payload = builds["lib.build_graph"]
    assert payload["text"].startswith("def build_graph(learning_rate):") and payload["line"] == 17
    assert payload["imports"] == {"np": "numpy", "tf": "tensorflow"}
    assert {"HIDDEN", "model", "mse"} <= set(payload["defined"]) and payload["literals"] == {"HIDDEN": "8"}
    assert "lib.model:model" in listed and "lib.mse" in listed
    # a function making the train op and the global step is graph code, not a pure function
    assert "nets._optimize" not in _listed(FIXTURES / "builder_by_name")


def _taken(source: str, library: str, module: str = "lib"):
    from tfmigrate.facts.library_builders import entry, payloads
    from tfmigrate.native.library_builders import taken_in

    found = payloads(library.encode(), ["build"])
    return taken_in(source, tuple(entry(module, name, payload) for name, payload in found.items()))


_LIBRARY = ("import numpy as np\nimport tensorflow as tf\nfrom helpers import *\nSIZE = 3\n\n\n"
            "def build(n=SIZE):\n    x = tf.placeholder(tf.float32, [None, n])\n    return x, np.float32(SIZE)\n")


def test_a_builder_is_written_into_the_script_with_its_names_read_through_the_library():
    taken = _taken("import tensorflow as tf\nimport lib\nx, s = lib.build()\nwith tf.Session() as sess:\n"
                   "    print(sess.run(x * s, {x: [[1.0, 2.0, 3.0]]}))\n", _LIBRARY)
    assert "def build(n=3):\n    x = tf.placeholder(tf.float32, [None, n])\n    return x, np.float32(lib.SIZE)" \
        in taken.code, taken.code  # (the default read at `def`: the literal the library bound)
    assert "import numpy as np\n" in taken.code and "x, s = build()" in taken.code
    assert taken.where(taken.code.splitlines().index("    x = tf.placeholder(tf.float32, [None, n])") + 1) == (
        "lib.build", "lib", 8)


def test_a_builder_is_not_taken_where_its_names_would_mean_another_thing():
    call = "import tensorflow as tf\nimport lib\nx, s = lib.build()\n"
    assert _taken(call, _LIBRARY.replace("np.float32(SIZE)", "helper(SIZE)")) is None  # (from a star import)
    assert _taken("np = 3\n" + call, _LIBRARY) is None  # the script's `np` is not numpy
    assert _taken(call + "f = lib.build\n", _LIBRARY) is None  # passed as a value: the library's TF1 function
    looped = _taken(call, _LIBRARY.replace("return x, np.float32(SIZE)", "return build(n) if n < 0 else x"))
    assert "return build(n) if n < 0 else x" in looped.code  # (itself: the local function)
    named = _taken("import tensorflow as tf\nfrom lib import build\nlib = 2\nx, s = build()\n", _LIBRARY)
    assert "import lib as lib_2\n" in named.code and "np.float32(lib_2.SIZE)" in named.code, named.code
    assert "from lib import build" not in named.code and "x, s = build()" in named.code


def test_a_script_taking_a_builder_in_names_the_librarys_line_that_holds_it(tmp_path, monkeypatch):
    (tmp_path / "lib.py").write_text(
        "import tensorflow as tf\n\n\ndef build():\n    x = tf.placeholder(tf.float32, [None, 1])\n"
        "    y = tf.py_func(lambda a: a, [x], tf.float32)\n    return x, y\n")
    (tmp_path / "train.py").write_text(
        "import tensorflow as tf\nimport lib\n\nx, y = lib.build()\nwith tf.Session() as sess:\n"
        "    print(sess.run(y, {x: [[1.0]]}))\n")
    monkeypatch.chdir(tmp_path)
    result = runner.invoke(app, ["check", "--no-cache", "--native", "--select", "TFM216", "--format", "json", "."],
                           catch_exceptions=False)
    found = {Path(d["path"]).name: d["message"] for d in json.loads(result.stdout)}
    assert "stopped at line 4: `lib.build`, graph code of `lib` taken into this script to run eagerly, stops at " \
           "its line 6 there: `tf.py_func`" in found["train.py"], found
