"""The program-level decision: a module of TF1 graph code (or one it imports) moves to the compat
route as a whole, what is left is reported as migration debt apart from breakage, the exit code
can ignore debt, and `fix` says once what the fixed code needs."""
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

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
    # Checked alone, nothing says utils.py is graph code.
    assert json.loads(run("check", "--format", "json", "--select", "TFM200", "--no-cache", "utils.py").stdout) == []


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
                         + sorted((Path(__file__).parent / "fixtures" / "TFM216").glob("exec_*.py")),
                         ids=lambda p: f"{p.parent.name}/{p.name}")
def test_route_prints_the_reference_numbers(case, tmp_path):
    """The `fixed:` line of each TFM200 executable test is what the official compat route prints
    (every `import tensorflow as tf` swapped, tf-keras on), as ../shared/tf1-programs makes its
    references: TFM200's fix keeps TF1's numbers, not merely some numbers. The same for each
    TFM216 executable test: the eager TF2 that `fix --native` writes prints the graph original's
    numbers on the same data."""
    pytest.importorskip("tensorflow")
    source = case.read_text(encoding="utf-8")
    program = tmp_path / case.name
    program.write_text(re.sub(r"^import tensorflow as tf$", COMPAT_LINE, source, flags=re.MULTILINE), encoding="utf-8")
    env = dict(os.environ, TF_USE_LEGACY_KERAS="1", TF_CPP_MIN_LOG_LEVEL="3", PYTHONWARNINGS="ignore")
    run = subprocess.run([sys.executable, str(program)], capture_output=True, text=True, env=env, timeout=300, cwd=tmp_path)
    assert run.returncode == 0, run.stderr[-2000:]
    expected = re.search(r"^# fixed: (.*)$", source, re.MULTILINE).group(1).strip()
    assert run.stdout.strip().splitlines()[-1] == expected


def test_graph_importers_cache_follows_edits(project):
    cache = str(project / ".tfmigrate_cache")
    files = ["train.py", "utils.py", "eager.py"]
    assert graph_importers(files, cache_dir=cache) == {"utils.py": "train.py"}
    assert (project / ".tfmigrate_cache" / "graph_imports.json").is_file()
    assert graph_importers(files, cache_dir=cache) == {"utils.py": "train.py"}  # from the cache
    (project / "train.py").write_bytes(EAGER + b"import utils\n")  # no graph code any more
    os.utime(project / "train.py", ns=(1, 1))
    assert graph_importers(files, cache_dir=cache) == {}
