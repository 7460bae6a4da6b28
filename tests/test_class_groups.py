"""Issue 21, across files, all or nothing: a library module's graph class is rewritten together
with the programs that use it (project.class_groups, native.groups), or the whole group keeps
the compat route and TFM216 names the file and the construct that held it.

Fixtures: tests/fixtures/class_groups/<case>/ folders (a library `models.py` and its programs);
the program files carry the `# fixed:` line both routes print. Snapshots of what `fix --native`
writes: tests/fixtures/class_groups/expected/<case>/ (TFMIGRATE_UPDATE_SNAPSHOTS=1 refreshes them).
"""
import importlib.util
import json
import os
import re
from pathlib import Path

import libcst as cst
import pytest

from project_fixtures import copy_project, fix_project, fixed_line, last_line, runner

from tfmigrate.frontends.cli import app
from tfmigrate.native.feed_builds import feed_uses
from tfmigrate.project.class_groups import class_groups
from tfmigrate.project.graph_imports import read_source

FIXTURES = Path(__file__).parent / "fixtures" / "class_groups"
COMPAT_LINE = "import tensorflow.compat.v1 as tf; tf.disable_v2_behavior()"
GRAPH = ("Session(", "placeholder(", "feed_dict", "disable_v2")


def _copy(case: str, where: Path) -> Path:
    return copy_project(FIXTURES / case, where)


def test_the_group_is_the_library_and_every_module_importing_it():
    files = sorted(str(p) for p in (FIXTURES / "held").glob("*.py"))
    groups = class_groups(files, read_source)
    library = str(FIXTURES / "held" / "models.py")
    assert set(groups) == set(files)
    assert all(group[1] == library for group in groups.values())
    assert [user[0] for user in groups[library][3]] == [str(FIXTURES / "held" / f) for f in ("probe.py", "train.py")]
    # Without a program that opens a Session, a library is no group.
    assert class_groups([library], read_source) == {}


def test_fix_native_rewrites_the_library_with_its_program(tmp_path, monkeypatch):
    root = _copy("together", tmp_path / "native")
    fix_project(root, monkeypatch, "--native", "--unsafe-fixes")
    for name in ("models.py", "train.py"):
        text = (root / name).read_text()
        assert not any(marker in text for marker in GRAPH), (name, text)
        expected = FIXTURES / "expected" / "together" / name
        if os.environ.get("TFMIGRATE_UPDATE_SNAPSHOTS"):
            expected.parent.mkdir(parents=True, exist_ok=True)
            expected.write_text(text)
        assert text == expected.read_text(), name
    assert "class Classifier(tf.Module):" in (root / "models.py").read_text()
    before = {name: (root / name).read_text() for name in ("models.py", "train.py")}
    fix_project(root, monkeypatch, "--native", "--unsafe-fixes")  # a second run changes nothing
    assert {name: (root / name).read_text() for name in before} == before


def test_the_migrated_group_prints_the_compat_routes_numbers(tmp_path, monkeypatch):
    pytest.importorskip("tensorflow")
    compat = _copy("together", tmp_path / "compat")
    for path in compat.glob("*.py"):
        path.write_text(re.sub(r"^import tensorflow as tf$", COMPAT_LINE, path.read_text(), flags=re.MULTILINE))
    native = _copy("together", tmp_path / "native")
    fix_project(native, monkeypatch, "--native", "--unsafe-fixes")
    expected = fixed_line(FIXTURES / "together" / "train.py")
    assert last_line(compat, "train.py", compat=True) == expected
    assert last_line(native, "train.py") == expected


def test_one_user_that_cannot_go_eager_holds_the_whole_group(tmp_path, monkeypatch):
    """`probe.py` cannot go eager: the group (the library and both programs) keeps the library TF1
    code, and `probe.py` the compat route; `train.py` goes eager on its own, the library's class
    taken in (native.library_builders), calling nothing the group would have rewritten."""
    native = _copy("held", tmp_path / "native")
    fix_project(native, monkeypatch, "--native", "--unsafe-fixes")
    compat = _copy("held", tmp_path / "compat")
    fix_project(compat, monkeypatch)
    assert (native / "probe.py").read_text() == (compat / "probe.py").read_text()  # never worse: as `fix` writes it
    train = (native / "train.py").read_text()
    assert not any(marker in train for marker in GRAPH) and "class Classifier(tf.Module):" in train, train
    # the library too, but for the programs' switch: with --native they turn v2 behaviour off
    # themselves (its compat route leaves that to them: facts.eager_functions.library_only)
    assert (native / "models.py").read_text() == (compat / "models.py").read_text().replace(
        "tf.disable_v2_behavior()\n", "", 1)
    if importlib.util.find_spec("tensorflow") is not None:
        for name in ("train.py", "probe.py"):
            assert last_line(native, name) == fixed_line(FIXTURES / "held" / name)
    check = _copy("held", tmp_path / "check")
    monkeypatch.chdir(check)
    result = runner.invoke(app, ["check", "--no-cache", "--native", "--unsafe-fixes", "--select", "TFM216",
                                 "--format", "json", "."], catch_exceptions=False)
    found = {Path(d["path"]).name: d["message"] for d in json.loads(result.stdout)}
    assert set(found) == {"models.py", "probe.py"}
    assert "`tf.get_default_graph` at module level" in found["probe.py"]
    assert "probe.py` holds the group on the compat route at its line 13" in found["models.py"], found["models.py"]
    assert "`tf.get_default_graph` at module level" in found["models.py"]


def test_the_held_group_runs_as_fix_writes_it(tmp_path, monkeypatch):
    pytest.importorskip("tensorflow")
    native = _copy("held", tmp_path / "native")
    fix_project(native, monkeypatch, "--native", "--unsafe-fixes")
    for program in ("train.py", "probe.py"):
        assert last_line(native, program) == fixed_line(FIXTURES / "held" / program)


def test_a_class_whose_layers_make_variables_in_another_module_keeps_the_program_on_the_route(tmp_path, monkeypatch):
    """`helper.Net` makes no variable itself; its base class and layers come from `layers`, which
    does (gen52's `model.SmallCNN` of `layers.Conv2D`): the program was rewritten eager while both
    modules took the compat route, and the first call crashed. Never worse: the program as `fix`
    writes it (its helpers take the route without switching v2 off, as for any graph program)."""
    native = _copy("layers_elsewhere", tmp_path / "native")
    fix_project(native, monkeypatch, "--native", "--unsafe-fixes")
    compat = _copy("layers_elsewhere", tmp_path / "compat")
    fix_project(compat, monkeypatch)
    assert (native / "main.py").read_text() == (compat / "main.py").read_text()
    assert "Session" in (native / "main.py").read_text()
    monkeypatch.chdir(native)
    result = runner.invoke(app, ["check", "--no-cache", "--native", "--unsafe-fixes", "--select", "TFM216",
                                 "--format", "json", "main.py"], catch_exceptions=False)
    message = " ".join(d["message"] for d in json.loads(result.stdout))
    assert "`helper.Net`, graph code of `helper` taken into this script to run eagerly, stops at its line 6 " \
           "there: the class `Net` that builds the graph has bases or decorators" in message, message
    pytest.importorskip("tensorflow")
    assert last_line(native, "main.py") == fixed_line(FIXTURES / "layers_elsewhere" / "main.py")


def test_a_feed_dict_passed_by_its_own_keyword_does_not_escape():
    module = cst.parse_module("feed_dict = {x: 1}\nsess.run(y, feed_dict=feed_dict)\nmodel.feed_dict = 2\n")
    assign = module.body[0].body[0]
    run = module.body[1].body[0].value
    uses = feed_uses(module, "feed_dict", {id(assign.targets[0].target)}, {id(run.args[1].value)})
    assert uses.escape is None


def test_a_library_whose_tensorflow_arrives_by_star_import_is_a_library():
    from tfmigrate.project.star_imports import star_aliases

    files = sorted(str(p) for p in (FIXTURES / "star").glob("*.py"))
    library = str(FIXTURES / "star" / "models.py")
    assert class_groups(files, read_source) == {}  # without the star fact: no `import tensorflow` of its own
    groups = class_groups(files, read_source, star_aliases(files, read=read_source))
    assert set(groups) == {library, str(FIXTURES / "star" / "train.py")}
    assert groups[library][1] == library


def test_fix_native_rewrites_a_star_importing_library_and_keeps_its_helper_eager(tmp_path, monkeypatch):
    root = _copy("star", tmp_path / "native")
    helper = (root / "ops.py").read_text()
    fix_project(root, monkeypatch, "--native", "--unsafe-fixes")
    assert (root / "ops.py").read_text() == helper  # imported by eager code only: no compat route
    for name in ("models.py", "train.py"):
        text = (root / name).read_text()
        assert not any(marker in text for marker in GRAPH), (name, text)
        expected = FIXTURES / "expected" / "star" / name
        if os.environ.get("TFMIGRATE_UPDATE_SNAPSHOTS"):
            expected.parent.mkdir(parents=True, exist_ok=True)
            expected.write_text(text)
        assert text == expected.read_text(), name
    before = {name: (root / name).read_text() for name in ("ops.py", "models.py", "train.py")}
    fix_project(root, monkeypatch, "--native", "--unsafe-fixes")  # a second run changes nothing
    assert {name: (root / name).read_text() for name in before} == before


def test_the_star_importing_group_prints_the_compat_routes_numbers(tmp_path, monkeypatch):
    pytest.importorskip("tensorflow")
    compat = _copy("star", tmp_path / "compat")
    for path in compat.glob("*.py"):
        path.write_text(re.sub(r"^import tensorflow as tf$", COMPAT_LINE, path.read_text(), flags=re.MULTILINE))
    native = _copy("star", tmp_path / "native")
    fix_project(native, monkeypatch, "--native", "--unsafe-fixes")
    expected = fixed_line(FIXTURES / "star" / "train.py")
    assert last_line(compat, "train.py", compat=True) == expected
    assert last_line(native, "train.py") == expected


def test_a_held_star_importing_library_is_reported_at_its_star_import(tmp_path, monkeypatch):
    native = _copy("star_held", tmp_path / "native")
    fix_project(native, monkeypatch, "--native", "--unsafe-fixes")
    compat = _copy("star_held", tmp_path / "compat")
    fix_project(compat, monkeypatch)
    for name in ("models.py", "train.py"):  # never worse: the group as `fix` writes it
        assert (native / name).read_text() == (compat / name).read_text(), name
    # the helper takes the route without `disable_v2_behavior()` under --native (fixers.compat_route)
    assert "import tensorflow.compat.v1 as tf\n" in (native / "layers.py").read_text()
    check = _copy("star_held", tmp_path / "check")
    monkeypatch.chdir(check)
    result = runner.invoke(app, ["check", "--no-cache", "--native", "--unsafe-fixes", "--select", "TFM216",
                                 "--format", "json", "."], catch_exceptions=False)
    found = {Path(d["path"]).name: d for d in json.loads(result.stdout)}
    assert set(found) == {"layers.py", "models.py", "train.py"}
    assert found["models.py"]["line"] == 3  # `from layers import *`: where its `tf` comes from
    assert "its classes use `layers`, a checked module that makes variables" in found["models.py"]["message"]
    assert "`./models.py` holds the group on the compat route" in found["train.py"]["message"]
    if pytest.importorskip("tensorflow"):
        assert last_line(native, "train.py") == fixed_line(FIXTURES / "star_held" / "train.py")


def _qualified(where: Path) -> Path:
    """The `together` group as most TF1 repositories spell it (gen55 p03's `mil.py` and its
    programs): `from __future__` imports in both files, the library imported as a module
    (`import models`, then `models.Classifier`)."""
    root = _copy("together", where)
    future = "from __future__ import absolute_import\nfrom __future__ import division\nfrom __future__ import print_function\n"
    library = (root / "models.py").read_text()
    docstring_end = library.index('"""', 3) + 4
    (root / "models.py").write_text(library[:docstring_end] + future + library[docstring_end:])
    program = (root / "train.py").read_text().replace("import numpy as np\n", "from __future__ import print_function\n\n"
                                                                            "import numpy as np\n", 1)
    program = program.replace("from models import Classifier\n", "import models\n", 1)
    (root / "train.py").write_text(program.replace("= Classifier(", "= models.Classifier(", 1))
    return root


def test_a_library_imported_as_a_module_is_rewritten_with_its_program(tmp_path, monkeypatch):
    """`import models` then `models.Classifier(...)`, and `from __future__` imports in both files:
    the group is read with `models.Classifier` as the library's own `Classifier`, and written
    back qualified."""
    root = _qualified(tmp_path / "native")
    assert "import models\n" in (root / "train.py").read_text()
    assert "models.Classifier(" in (root / "train.py").read_text()
    assert "from __future__ import division" in (root / "models.py").read_text()
    fix_project(root, monkeypatch, "--native", "--unsafe-fixes")
    for name in ("models.py", "train.py"):
        text = (root / name).read_text()
        assert not any(marker in text for marker in GRAPH), (name, text)
    program = (root / "train.py").read_text()
    assert "\nimport models\n" in program and "model = models.Classifier(input_dim=3, classes=2)" in program
    assert "from models import" not in program and "Classifier(" not in program.replace("models.Classifier(", "")
    assert (root / "models.py").read_text().index("from __future__ import print_function") < \
        (root / "models.py").read_text().index("import tensorflow as tf")
    before = {name: (root / name).read_text() for name in ("models.py", "train.py")}
    fix_project(root, monkeypatch, "--native", "--unsafe-fixes")  # a second run changes nothing
    assert {name: (root / name).read_text() for name in before} == before
    pytest.importorskip("tensorflow")
    assert last_line(root, "train.py") == fixed_line(FIXTURES / "together" / "train.py")


@pytest.mark.parametrize("use, why", [
    ("print(models.__name__)", "it reads `models.__name__`, which the module `models` does not define"),
    ("library = models", "it uses the module `models` other than as `models.<name>`"),
    ("Classifier = None", "it reads `models.Classifier` and spells `Classifier` otherwise too"),
])
def test_a_module_import_the_group_cannot_read_back_holds_the_group(tmp_path, monkeypatch, use, why):
    """The program reads the library module in a way the group cannot write back: the group keeps
    the library TF1 code (its TFM216 says why), and the program goes eager on its own, the class
    taken in (native.library_builders), as the compat route prints."""
    native = _qualified(tmp_path / "native")
    program = (native / "train.py").read_text().replace("\nxs = ", f"\n{use}\nxs = ", 1)
    (native / "train.py").write_text(program)
    monkeypatch.chdir(native)
    result = runner.invoke(app, ["check", "--no-cache", "--native", "--unsafe-fixes", "--select", "TFM216",
                                 "--format", "json", "."], catch_exceptions=False)
    found = {Path(d["path"]).name: d["message"] for d in json.loads(result.stdout)}
    assert set(found) == {"models.py"} and why in found["models.py"], found
    fix_project(native, monkeypatch, "--native", "--unsafe-fixes")
    text = (native / "train.py").read_text()
    assert not any(marker in text for marker in GRAPH) and "(tf.Module):" in text, text
    assert "tf.disable_v2_behavior" not in (native / "models.py").read_text()
    pytest.importorskip("tensorflow")
    assert last_line(native, "train.py") == fixed_line(FIXTURES / "together" / "train.py")


def test_a_program_a_held_group_leaves_says_what_stops_it_on_its_own(tmp_path, monkeypatch):
    """The group (a library class using a module that makes variables) keeps the compat route, and
    the program, tried on its own with the class taken in, stops at its own `tf.py_func`: its
    TFM216 names both."""
    (tmp_path / "layers.py").write_text(
        "import tensorflow as tf\n\n\ndef dense(x, n, name):\n    with tf.variable_scope(name):\n"
        "        w = tf.get_variable('w', [int(x.shape[-1]), n])\n        return tf.matmul(x, w)\n")
    (tmp_path / "models.py").write_text(
        "import tensorflow as tf\n\nimport layers\n\n\nclass Net(object):\n    def __init__(self):\n"
        "        self.x = tf.placeholder(tf.float32, [None, 2])\n        self.y = layers.dense(self.x, 1, 'out')\n")
    (tmp_path / "train.py").write_text(
        "import tensorflow as tf\n\nimport models\n\nnet = models.Net()\n"
        "z = tf.py_func(lambda a: a, [net.y], tf.float32)\nwith tf.Session() as sess:\n"
        "    sess.run(tf.global_variables_initializer())\n    print(sess.run(z, {net.x: [[1.0, 2.0]]}).shape)\n")
    monkeypatch.chdir(tmp_path)
    result = runner.invoke(app, ["check", "--no-cache", "--native", "--unsafe-fixes", "--select", "TFM216",
                                 "--format", "json", "."], catch_exceptions=False)
    found = {Path(d["path"]).name: d["message"] for d in json.loads(result.stdout)}
    assert "`./models.py` holds the group on the compat route at its line 1: its classes use `layers`" \
        in found["train.py"], found
    assert "; on its own, it stops at its line 6: `tf.py_func` at module level" in found["train.py"], found
