"""The program-level decision: a module of TF1 graph code (or one it imports) moves to the compat
route as a whole, what is left is reported as migration debt apart from breakage, the exit code
can ignore debt, and `fix` says once what the fixed code needs."""
import json
import os
import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from fixtures_lib import same_printed
from tf_programs import run_python
from tfmigrate.frontends.cli import app
from tfmigrate.project.graph_imports import graph_importers

runner = CliRunner()

ENTRY = b"""import tensorflow as tf
import utils

x = tf.placeholder(tf.float32, [None, 2])
h = tf.layers.dense(x, 3)
with tf.Session() as sess:
    sess.run(tf.global_variables_initializer())
    print(sess.run(utils.double(h), feed_dict={x: [[1.0, 2.0]]}).shape)
"""
# No graph construct of its own: graph code only because the entry imports it.
UTILS = b"""import tensorflow as tf


def double(t):
    return tf.data.Dataset if False else t * 2.0
"""
EAGER = b"""import tensorflow as tf

print(float(tf.reduce_sum(tf.ones([2]))))
"""


def run(*args):
    return runner.invoke(app, list(args), catch_exceptions=False)


@pytest.fixture
def project(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "train.py").write_bytes(ENTRY)
    (tmp_path / "utils.py").write_bytes(UTILS)
    (tmp_path / "eager.py").write_bytes(EAGER)
    return tmp_path


def test_a_module_imported_by_graph_code_is_graph_code(project):
    assert graph_importers(["train.py", "utils.py", "eager.py"]) == {"utils.py": "train.py"}
    data = json.loads(run("check", "--format", "json", "--select", "TFM200", "--no-cache").stdout)
    assert sorted(d["path"] for d in data) == ["train.py", "utils.py"]
    utils = next(d for d in data if d["path"] == "utils.py")
    assert "imported by the graph module train.py" in utils["message"]
    # Checked alone, the files of its project still say so (what pre-commit hands over: issue 20 item 10).
    alone = json.loads(run("check", "--format", "json", "--select", "TFM200", "--no-cache", "utils.py").stdout)
    assert [(d["path"], "imported by the graph module train.py" in d["message"]) for d in alone] == [("utils.py", True)]


def test_fix_routes_whole_modules_and_leaves_debt_not_breakage(project):
    result = run("fix", "--no-cache", ".")
    assert "The fixed code needs: tf-keras" in result.stdout
    entry = (project / "train.py").read_text()
    assert entry.startswith('import os\nos.environ.setdefault("TF_USE_LEGACY_KERAS", "1")\n'
                            "import tensorflow.compat.v1 as tf\ntf.disable_v2_behavior()\n")
    assert "tf.placeholder(" in entry and "tf.layers.dense(" in entry  # the rest is untouched
    assert (project / "utils.py").read_text().startswith("import tensorflow.compat.v1 as tf\ntf.disable_v2_behavior()\n")
    assert (project / "eager.py").read_bytes() == EAGER

    data = json.loads(run("check", "--format", "json", "--no-cache").stdout)
    assert data and {d["kind"] for d in data} == {"debt"}
    summary = run("check", "--no-cache").stdout
    assert f"0 break under TensorFlow 2.21, {len(data)} migration debt" in summary
    assert run("check", "--no-cache").exit_code == 1
    assert run("check", "--no-cache", "--fail-on", "breakage").exit_code == 0


def test_fail_on_breakage_still_fails_on_breakage(project):
    assert run("check", "--no-cache", "--fail-on", "breakage", "train.py").exit_code == 1
    assert run("check", "--no-cache", "--fail-on", "nonsense").exit_code == 2


def test_second_fix_changes_nothing(project):
    run("fix", "--no-cache", ".")
    before = {p.name: p.read_bytes() for p in project.glob("*.py")}
    result = run("fix", "--no-cache", ".")
    assert {p.name: p.read_bytes() for p in project.glob("*.py")} == before
    assert "Fixed" not in result.stdout


COMPAT_LINE = "import tensorflow.compat.v1 as tf; tf.disable_v2_behavior()"


@pytest.mark.parametrize("case", sorted((Path(__file__).parent / "fixtures" / "TFM200").glob("exec_*.py"))
                         + [p for p in sorted((Path(__file__).parent / "fixtures" / "TFM216").glob("exec_*.py"))
                            if not p.name.startswith("exec_estimator_")],
                         ids=lambda p: f"{p.parent.name}/{p.name}")
def test_route_prints_the_reference_numbers(case, tmp_path):
    """The `fixed:` line of each TFM200 executable test is what the official compat route prints
    (every `import tensorflow as tf` swapped, tf-keras on), as ../shared/tf1-programs makes its
    references: TFM200's fix keeps TF1's numbers, not merely some numbers. The same for each
    TFM216 executable test: the eager TF2 that `fix --native` writes prints the graph original's
    numbers on the same data. Estimator programs have no compat route (TF 2.21 has no
    `tf.estimator`): their references come from TF 2.15 (scripts/estimator_reference.py)."""
    pytest.importorskip("tensorflow")
    source = case.read_text(encoding="utf-8")
    differs = re.search(r"^# compat-route: (.*)$", source, re.MULTILINE)
    if differs:  # a seeded random initializer: TF1 derived each op's seed from its place in the graph
        pytest.skip(f"the compat route prints other numbers: {differs.group(1)}")
    if re.search(r"^from tensorflow\.contrib\b", source, re.MULTILINE):  # (exec_rnn_contrib_alias: its core twin's)
        pytest.skip("the official compat route cannot import `tensorflow.contrib`")
    program = tmp_path / case.name
    program.write_text(re.sub(r"^import tensorflow as tf$", COMPAT_LINE, source, flags=re.MULTILINE), encoding="utf-8")
    env = dict(os.environ, TF_USE_LEGACY_KERAS="1", TF_CPP_MIN_LOG_LEVEL="3", PYTHONWARNINGS="ignore")
    run = run_python([str(program)], env=env, timeout=300, cwd=tmp_path)
    assert run.returncode == 0, run.stderr[-2000:]
    expected = re.search(r"^# fixed: (.*)$", source, re.MULTILINE).group(1).strip()
    assert same_printed(run.stdout.strip().splitlines()[-1], expected), (run.stdout.strip().splitlines()[-1], expected)


def test_graph_importers_cache_follows_edits(project):
    cache = str(project / ".tfmigrate_cache")
    files = ["train.py", "utils.py", "eager.py"]
    assert graph_importers(files, cache_dir=cache) == {"utils.py": "train.py"}
    assert (project / ".tfmigrate_cache" / "graph_imports.json").is_file()
    assert graph_importers(files, cache_dir=cache) == {"utils.py": "train.py"}  # from the cache
    (project / "train.py").write_bytes(EAGER + b"import utils\n")  # no graph code any more
    os.utime(project / "train.py", ns=(1, 1))
    assert graph_importers(files, cache_dir=cache) == {}


# --- one fixed point across files (issue 20 item 10) --------------------------------------------
# main.py is graph code; helper.py is graph code because main.py imports it, and once routed (its
# `disable_v2_behavior()`) it makes util.py graph code too: the fact a run gathered from the bytes
# before fixing changed with the fix. util.py alone reads as eager TF1 (its `tf.layers.dense` would
# become a Keras layer there), so fixing it first, or gathering the facts once, gave another tree.
CHAIN = {
    "main.py": """import numpy as np
import tensorflow as tf

import helper

x = tf.placeholder(tf.float32, [None, 3])
y = helper.block(x)
with tf.Session() as sess:
    sess.run(tf.global_variables_initializer())
    print(round(float(sess.run(y, {x: np.ones((2, 3))})), 4))
""",
    "helper.py": """import tensorflow as tf

import util


def block(x):
    return util.squash(x * 2.0)
""",
    "util.py": """import tensorflow as tf


def squash(t):
    h = tf.layers.dense(t, 2, kernel_initializer=tf.constant_initializer(0.5))
    return tf.reduce_sum(tf.log(h + 1.0)) + tf.reduce_sum(tf.random_normal([3], seed=1))
""",
}


@pytest.fixture
def chain(tmp_path, monkeypatch):
    def tree(name):
        root = tmp_path / name
        root.mkdir()
        for file, text in CHAIN.items():
            (root / file).write_text(text)
        return root

    monkeypatch.chdir(tmp_path)
    return tree


def _fix_in(root, monkeypatch, *args):
    monkeypatch.chdir(root)
    result = run("fix", "--no-cache", "--unsafe-fixes", *args)
    assert result.exit_code in (0, 1), result.stdout
    return {file: (root / file).read_text() for file in CHAIN}


def test_one_fix_reaches_the_fixed_point_whatever_files_it_is_given(chain, monkeypatch):
    whole = _fix_in(chain("whole"), monkeypatch, ".")
    assert all(text.startswith("import tensorflow.compat.v1 as tf\ntf.disable_v2_behavior()\n")
               or "import tensorflow.compat.v1 as tf\ntf.disable_v2_behavior()\n" in text for text in whole.values())
    assert _fix_in(Path("."), monkeypatch, ".") == whole  # a second run changes nothing
    for first in ("util.py", "helper.py", "main.py"):
        root = chain(f"first-{first}")
        _fix_in(root, monkeypatch, first)  # pre-commit hands over file names
        assert _fix_in(root, monkeypatch, ".") == whole, first
        assert _fix_in(root, monkeypatch, ".") == whole, first


def test_fix_gathers_the_facts_again_until_they_settle(chain, monkeypatch):
    """Without the up-front closure of graph importers, the facts a run gathered again after
    writing its fixes put util.py on the route in the same run: a second run changes nothing."""
    from tfmigrate.project import graph_imports

    gather = graph_imports.graph_importers
    monkeypatch.setattr(graph_imports, "graph_importers", lambda *a, **k: gather(*a, **{**k, "transitive": False}))
    root = chain("loop")
    once = _fix_in(root, monkeypatch, ".")
    assert "import tensorflow.compat.v1 as tf\ntf.disable_v2_behavior()\n" in once["util.py"]
    assert _fix_in(root, monkeypatch, ".") == once


def test_the_fixed_chain_prints_the_compat_routes_numbers(chain, monkeypatch, tmp_path):
    pytest.importorskip("tensorflow")
    root = chain("run")
    compat = chain("compat")
    for file in CHAIN:
        path = compat / file
        path.write_text(path.read_text().replace("import tensorflow as tf", COMPAT_LINE))
    _fix_in(root, monkeypatch, ".")
    env = {key: value for key, value in os.environ.items() if key != "TF_USE_LEGACY_KERAS"}
    env.update(TF_CPP_MIN_LOG_LEVEL="3", PYTHONWARNINGS="ignore")
    lines = [run_python(["main.py"], timeout=300, cwd=where,
                            env=dict(env, TF_USE_LEGACY_KERAS="1") if where == compat else env)
             for where in (compat, root)]
    assert lines[0].returncode == 0 and lines[1].returncode == 0, lines[1].stderr[-2000:]
    assert lines[1].stdout.strip().splitlines()[-1] == lines[0].stdout.strip().splitlines()[-1]


# A library of graph code whose program keeps the compat route under `--native` (gen55 p04's
# `input_pipeline.py`): `fix --native` routes it without a `disable_v2_behavior()` of its own.
PLACEHOLDER_LIBRARY = b"""import tensorflow as tf


def inputs(dim):
    return tf.placeholder(tf.float32, [None, dim], name="x")
"""
PLACEHOLDER_PROGRAM = b"""import tensorflow as tf

import lib

x = lib.inputs(2)
y = tf.reduce_sum(x * 2.0)
with tf.Session() as sess:
    print(sess.run(y, feed_dict={x: [[1.0, 2.0]]}))
"""


def test_a_library_left_to_its_programs_under_native_is_debt_not_breakage(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "lib.py").write_bytes(PLACEHOLDER_LIBRARY)
    (tmp_path / "train.py").write_bytes(PLACEHOLDER_PROGRAM)
    run("fix", "--no-cache", "--native", "--unsafe-fixes", ".")
    library = (tmp_path / "lib.py").read_text()
    assert library.startswith("import tensorflow.compat.v1 as tf\n") and "disable_v2_behavior" not in library
    # (the program takes `lib.inputs` in and runs eagerly: native.library_builders; the library is
    # left to its other callers as it is, debt)
    program = (tmp_path / "train.py").read_text()
    assert "disable_v2_behavior()" not in program and "# tfmigrate: `lib.inputs` (lib.py line 4)" in program, program
    assert run_python(["train.py"], cwd=tmp_path).stdout.strip().splitlines()[-1] == "6.0"
    data = json.loads(run("check", "--format", "json", "--no-cache", "--native").stdout)
    assert {(d["rule"], d["kind"]) for d in data if d["path"] == "lib.py"} == {("TFM202", "debt"), ("TFM216", "debt")}
    assert "0 break under TensorFlow 2.21" in run("check", "--no-cache", "--native").stdout
