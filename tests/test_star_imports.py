"""`tf` reaching a module through `from ops import *` of a checked module (issue 12 item 16):
the star import binds the TensorFlow names ops.py binds at its top level, so the TF1 constructs
of the importer are found; a module that takes the compat route on import puts its importers on
the route too. Gathered up front from the bytes (tfmigrate/project/star_imports.py)."""
import ast
import json
import shutil
from pathlib import Path

import libcst as cst
import pytest
from typer.testing import CliRunner

from fixtures_lib import FIXTURES, expected_lines, format_findings
from tfmigrate.project import star_imports
from tfmigrate.catalogue import catalogue
from tfmigrate.frontends.cli import app
from tfmigrate.core.engine import check_source
from tfmigrate.project.graph_imports import graph_importers
from tfmigrate.facts.names import ImportTable
from tfmigrate.facts.project_imports import ProjectImports
from tfmigrate.project.star_imports import StarFact, star_aliases

runner = CliRunner()
PROJECT = FIXTURES / "star_imports"
FILES = ["model.py", "ops.py", "utils.py", "pkg/__init__.py", "pkg/common.py", "pkg/train.py"]


def run(*args):
    return runner.invoke(app, list(args), catch_exceptions=False)


def _write(root: Path, files: dict) -> None:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


# --- the fact -----------------------------------------------------------------------------------

def test_the_fixture_project_fact(monkeypatch):
    monkeypatch.chdir(PROJECT)
    assert star_aliases(FILES) == {
        "model.py": StarFact((("ops", (("layers", "tensorflow.keras.layers"), ("tf", "tensorflow"))),)),
        "ops.py": StarFact((("utils", (("layers", "tensorflow.keras.layers"),)),)),
        "pkg/train.py": StarFact(((".common", (("tf", "tensorflow.compat.v1"),)),), ("v2_off",)),
    }


@pytest.mark.parametrize("helper, expected", [
    ("import tensorflow as tf\n", {"tf": "tensorflow"}),
    ("import tensorflow.compat.v1 as tf\n", {"tf": "tensorflow.compat.v1"}),
    ("from tensorflow.compat import v1 as tf\n", {"tf": "tensorflow.compat.v1"}),
    ("import tensorflow\n", {"tensorflow": "tensorflow"}),
    ("from tensorflow import keras\nimport keras as K\n", {"keras": "tensorflow.keras", "K": "keras"}),
    ("import tensorflow as _tf\n", {}),  # private names stay behind
    ("import tensorflow as tf\nimport numpy as np\n__all__ = ['np']\n", {}),  # __all__ decides
    ("import tensorflow as tf\n__all__ = ['tf']\n__all__ += ['x']\n", {"tf": "tensorflow"}),
    ("import tensorflow as tf\ntf = None\n", {}),  # rebound
    ("def f():\n    import tensorflow as tf\n", {}),  # not at the top level
    ("try:\n    import tensorflow.compat.v1 as tf\nexcept ImportError:\n    import tensorflow as tf\n",
     {"tf": "tensorflow.compat.v1"}),  # the try's binding runs
    ("if True:\n    import tensorflow as tf\n", {"tf": "tensorflow"}),
    ("print 'python 2'\nimport tensorflow as tf\n", {}),  # does not parse: nothing known
])
def test_what_a_star_import_brings(tmp_path, monkeypatch, helper, expected):
    monkeypatch.chdir(tmp_path)
    _write(tmp_path, {"helper.py": helper, "main.py": "from helper import *\n"})
    fact = star_aliases(["main.py", "helper.py"]).get("main.py")
    assert (dict(fact.modules[0][1]) if fact else {}) == expected


def test_only_checked_modules_are_followed_and_two_levels_at_most(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    _write(tmp_path, {
        "a.py": "from b import *\n", "b.py": "from c import *\n", "c.py": "from d import *\nimport tensorflow as tf\n",
        "d.py": "import keras\n", "cycle1.py": "from cycle2 import *\nimport tensorflow as tf\n",
        "cycle2.py": "from cycle1 import *\n", "lone.py": "from outside import *\n",
    })
    fact = star_aliases(["a.py", "b.py", "c.py", "d.py", "cycle1.py", "cycle2.py", "lone.py"])
    assert fact["a.py"] == StarFact((("b", (("tf", "tensorflow"),)),))  # b, then c; not d
    assert fact["b.py"] == StarFact((("c", (("keras", "keras"), ("tf", "tensorflow"))),))
    assert fact["cycle2.py"] == StarFact((("cycle1", (("tf", "tensorflow"),)),))
    assert "lone.py" not in fact and "d.py" not in fact
    assert "c.py" not in star_aliases(["c.py"])  # d.py is not among the checked files


def test_absolute_star_import_inside_a_package(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    _write(tmp_path, {"proj/__init__.py": "", "proj/ops.py": "import tensorflow as tf\n",
                      "proj/nets/__init__.py": "", "proj/nets/model.py": "from proj.ops import *\n"})
    files = ["proj/__init__.py", "proj/ops.py", "proj/nets/__init__.py", "proj/nets/model.py"]
    assert star_aliases(files)["proj/nets/model.py"].modules == (("proj.ops", (("tf", "tensorflow"),)),)


def test_only_files_with_a_star_import_pay(tmp_path, monkeypatch):
    """Files without `import *` are searched, never parsed; the modules star-imported are parsed
    with `ast` (not libcst), once each."""
    monkeypatch.chdir(tmp_path)
    plain = {f"plain{i}.py": "import tensorflow as tf\nx = tf.placeholder(tf.float32)\n" for i in range(20)}
    _write(tmp_path, {**plain, "ops.py": "import tensorflow as tf\n", "m1.py": "from ops import *\n",
                      "m2.py": "from ops import *\n"})
    parsed = []
    real = ast.parse
    monkeypatch.setattr(ast, "parse", lambda data, *a, **k: parsed.append(data) or real(data, *a, **k))
    assert set(star_aliases(list(plain) + ["ops.py", "m1.py", "m2.py"])) == {"m1.py", "m2.py"}
    assert parsed == [b"import tensorflow as tf\n"]


def test_a_cached_run_parses_nothing(tmp_path, monkeypatch):
    """Scans are kept in the cache folder by content: a second run reads them back; an edited
    module is parsed again."""
    monkeypatch.chdir(tmp_path)
    _write(tmp_path, {"ops.py": "import tensorflow as tf\n", "model.py": "from ops import *\n"})
    parsed = []
    real = ast.parse
    monkeypatch.setattr(ast, "parse", lambda data, *a, **k: parsed.append(data) or real(data, *a, **k))
    first = star_aliases(["ops.py", "model.py"], cache_dir="cache")
    assert parsed and (tmp_path / "cache" / ".gitignore").is_file()
    parsed.clear()
    assert star_aliases(["ops.py", "model.py"], cache_dir="cache") == first and parsed == []
    (tmp_path / "ops.py").write_text("import tensorflow.compat.v1 as tf\n")
    assert star_aliases(["ops.py", "model.py"], cache_dir="cache")["model.py"].modules == (
        ("ops", (("tf", "tensorflow.compat.v1"),)),)
    assert parsed == [b"import tensorflow.compat.v1 as tf\n"]


# --- the import table ---------------------------------------------------------------------------

def _table(source: str, star) -> ImportTable:
    return ImportTable(cst.parse_module(source), source, ProjectImports(star=star))


def test_the_import_table_binds_the_names_where_the_star_import_stands():
    star = (("ops", (("tf", "tensorflow"),)),)
    assert _table("from ops import *\n", star).aliases == {"tf": "tensorflow"}
    assert _table("from ops import *\nimport numpy as tf\n", star).aliases == {}  # rebound after
    assert _table("import tensorflow.compat.v1 as tf\nfrom ops import *\n", star).aliases == {"tf": "tensorflow"}
    assert _table("from other import *\n", star).aliases == {}
    assert _table("from .ops import *\n", ((".ops", (("tf", "tensorflow.compat.v1"),)),)).is_v1_alias("tf")


def test_a_file_without_tensorflow_bytes_is_checked_when_a_star_import_brings_tf():
    source = b"from ops import *\n\nx = tf.placeholder(tf.float32)\n"
    assert check_source(source, "model.py", ["TFM202"]) == []
    shims = ProjectImports(star=(("ops", (("tf", "tensorflow"),)),))
    assert [f.rule for f in check_source(source, "model.py", ["TFM202"], shims=shims)] == ["TFM202"]


# --- fixture level: every file of tests/fixtures/star_imports, as the CLI would check them ------

@pytest.mark.parametrize("name", [f for f in FILES if f.endswith(".py")])
def test_fixture_project_findings_are_the_marked_ones(name, monkeypatch):
    monkeypatch.chdir(PROJECT)
    star = star_aliases(FILES)
    importers = graph_importers(FILES, star=star)
    fact = star.get(name)
    shims = ProjectImports(star=fact.modules, star_program=fact.program) if fact else None
    data = (PROJECT / name).read_bytes()
    findings = check_source(data, name, list(catalogue()), shims=shims, imported_by=importers.get(name))
    expected = {(line, code) for code in catalogue() for line in expected_lines(data.decode(), code)}
    assert {(f.line, f.rule) for f in findings} == expected, format_findings(findings)
    if name == "pkg/train.py":  # the module it star-imports turns v2 behaviour off on import
        assert {f.kind for f in findings} == {"debt"}


# --- the CLI, on a two-file project -------------------------------------------------------------

OPS = """import tensorflow as tf


def linear(x, size, scope="linear"):
    with tf.variable_scope(scope):
        w = tf.get_variable("w", [x.shape[-1], size])
        return tf.matmul(x, w)
"""
MODEL = """from ops import *

x = tf.placeholder(tf.float32, [None, 4])
y = linear(x, 2)
with tf.Session() as sess:
    sess.run(tf.global_variables_initializer())
    print(sess.run(y, feed_dict={x: [[1.0, 2.0, 3.0, 4.0]]}).shape)
"""


@pytest.fixture
def project(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    _write(tmp_path, {"ops.py": OPS, "model.py": MODEL})
    return tmp_path


def _found(*args):
    return [(d["path"], d["line"], d["rule"], d["kind"]) for d in json.loads(run("check", "--format", "json", *args).stdout)]


def test_cli_finds_the_tf1_constructs_of_a_star_importer(project):
    found = _found("--no-cache", ".")
    assert [f for f in found if f[0] == "model.py"] == [
        ("model.py", 3, "TFM202", "breaks"), ("model.py", 5, "TFM201", "breaks"), ("model.py", 6, "TFM201", "breaks"),
        ("model.py", 6, "TFM203", "breaks"), ("model.py", 7, "TFM201", "breaks")]
    # ops.py has no graph-only construct of its own: graph code because model.py imports it
    assert ("ops.py", 1, "TFM200", "breaks") in found
    # Checked alone, the files of its project still tell where model.py's `tf` comes from (issue 20 item 10).
    assert _found("--no-cache", "model.py") == [f for f in found if f[0] == "model.py"]


def test_cli_fix_routes_the_helper_and_the_importer_follows(project):
    run("fix", "--no-cache", ".")
    assert (project / "ops.py").read_text().startswith("import tensorflow.compat.v1 as tf\ntf.disable_v2_behavior()\n")
    assert (project / "model.py").read_text() == MODEL  # its `tf` is ops.py's: nothing to rewrite
    found = _found("--no-cache", ".")
    assert found and {kind for _, _, _, kind in found} == {"debt"}
    assert run("check", "--no-cache", "--fail-on", "breakage", ".").exit_code == 0


def test_cli_cache_follows_the_star_imported_module(project):
    before = _found(".")
    assert ("model.py", 3, "TFM202", "breaks") in before
    assert _found(".") == before  # from the cache
    (project / "ops.py").write_text(OPS.replace("import tensorflow as tf", "import tensorflow.compat.v1 as tf\ntf.disable_v2_behavior()"))
    after = _found(".")
    assert ("model.py", 3, "TFM202", "debt") in after  # model.py unchanged, its star fact changed
    (project / "ops.py").write_text("import numpy as np\n")
    assert not [f for f in _found(".") if f[0] == "model.py"]


def test_cli_fixture_project(tmp_path, monkeypatch):
    shutil.copytree(PROJECT, tmp_path / "p")
    monkeypatch.chdir(tmp_path / "p")
    found = _found("--no-cache", ".")
    assert {(path, line, rule) for path, line, rule, _ in found} == {
        (name, line, code) for name in FILES for code in catalogue()
        for line in expected_lines((PROJECT / name).read_text(), code)}


# --- legacy Keras for a star importer (issue 20 item 9) -----------------------------------------

LAYERS_OPS = """import numpy as np
import tensorflow as tf


def linear(x, size, name):
    with tf.variable_scope(name):
        w = tf.get_variable("w", [x.shape[-1], size])
        return tf.matmul(x, w)
"""
LAYERS_MODEL = """{star}


def build(x):
    h = tf.nn.relu(linear(x, 4, "hidden"))
    return tf.layers.dense(h, 2, name="out")


def main():
    tf.set_random_seed(7)
    x = tf.placeholder(tf.float32, [None, 3])
    y = build(x)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        print(np.round(sess.run(y, {{x: np.linspace(-1.0, 1.0, 6).reshape(2, 3)}}), 4).tolist())


if __name__ == "__main__":
    main()
"""


def _run_program(cwd: Path, args, legacy: bool = False):
    import os
    import subprocess
    import sys

    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3", CUDA_VISIBLE_DEVICES="", PYTHONWARNINGS="ignore")
    env.pop("TF_USE_LEGACY_KERAS", None)
    if legacy:
        env["TF_USE_LEGACY_KERAS"] = "1"
    done = subprocess.run([sys.executable, *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=300)
    lines = done.stdout.strip().splitlines()
    return done.returncode, lines[-1] if lines else "", done.stderr[-2000:]


@pytest.mark.parametrize("layout", ["script", "package"])
def test_fix_turns_legacy_keras_on_in_the_star_imported_module(tmp_path, monkeypatch, layout):
    """model.py uses `tf.layers` through `from ops import *` (`from .ops import *`); the program's
    first TensorFlow import is ops.py's, so ops.py's compat route sets TF_USE_LEGACY_KERAS (it was
    routed without it: `dense is not available with Keras 3`). The fixed program prints the
    compat route's numbers (ops.py on compat.v1 by hand, TF_USE_LEGACY_KERAS=1 in the environment)."""
    pytest.importorskip("tensorflow", reason="needs tensorflow-cpu 2.21")
    folder = "" if layout == "script" else "pkg/"
    star = "from ops import *" if layout == "script" else "from .ops import *"
    files = {f"{folder}ops.py": LAYERS_OPS, f"{folder}model.py": LAYERS_MODEL.format(star=star)}
    if folder:
        files[f"{folder}__init__.py"] = ""
    args = ["model.py"] if layout == "script" else ["-m", "pkg.model"]
    compat = tmp_path / "compat"
    _write(compat, {**files, f"{folder}ops.py": LAYERS_OPS.replace(
        "import tensorflow as tf", "import tensorflow.compat.v1 as tf\ntf.disable_v2_behavior()")})
    code, reference, err = _run_program(compat / folder if layout == "script" else compat, args, legacy=True)
    assert code == 0 and reference.startswith("[["), err

    fixed = tmp_path / "fixed"
    _write(fixed, files)
    monkeypatch.chdir(fixed)
    run("fix", "--no-cache", ".")
    ops = (fixed / folder / "ops.py").read_text()
    assert 'os.environ.setdefault("TF_USE_LEGACY_KERAS", "1")' in ops, ops
    code, last, err = _run_program(fixed / folder if layout == "script" else fixed, args)
    assert (code, last) == (0, reference), err
    before = {name: (fixed / name).read_text() for name in files}
    run("fix", "--no-cache", ".")
    assert {name: (fixed / name).read_text() for name in files} == before  # a second run changes nothing


def test_legacy_keras_is_wanted_only_through_the_star_imported_alias(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    _write(tmp_path, {"ops.py": "import tensorflow as tf\n", "base.py": "import tensorflow as tf\n",
                      "model.py": "from ops import *\nx = tf.layers.dense(tf.placeholder(tf.float32), 2)\n",
                      "eager.py": "from base import *\nx = tf.nn.relu(tf.placeholder(tf.float32))\n",
                      "chain.py": "from mid import *\ny = tf.nn.rnn_cell.LSTMCell(3)\n",
                      "mid.py": "from base2 import *\n", "base2.py": "import tensorflow as tf\n"})
    files = sorted(str(p.relative_to(tmp_path)) for p in tmp_path.glob("*.py"))
    wanted = star_imports.legacy_keras_wanted(files, star_aliases(files))
    assert wanted == {"ops.py": "model.py", "mid.py": "chain.py", "base2.py": "chain.py"}
