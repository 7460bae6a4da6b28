"""The shipped TF1 API table (tfmigrate/data/tf1_api.json) is current and every fact in it holds.

(a) regenerating it from the installed TensorFlow gives the same bytes (a stale table fails);
(b) every replacement target resolves under `tf`, every `v1_available: true` path under
    `tf.compat.v1` (getattr chains, as user code would spell them);
(c) spot checks of the facts rules rely on (FACTS.md), through the TensorFlow-free loader.
"""
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tf_programs import run_python

from tfmigrate.facts import api_table

ROOT = Path(__file__).resolve().parent.parent
SCRIPT = ROOT / "scripts" / "gen_api_table.py"
ENV = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3", CUDA_VISIBLE_DEVICES="", PYTHONWARNINGS="ignore")


def _resolve(root, path):
    obj = root
    for part in path.split("."):
        obj = getattr(obj, part)
    return obj


@pytest.fixture(scope="module")
def regenerated(tmp_path_factory):
    pytest.importorskip("tensorflow", reason="regenerating the table needs tensorflow-cpu 2.21")
    out = tmp_path_factory.mktemp("api") / "tf1_api.json"
    result = subprocess.run(
        [sys.executable, str(SCRIPT), "--out", str(out)],
        capture_output=True, text=True, env=ENV, timeout=600, cwd=ROOT,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    return out, result.stdout


@pytest.fixture(scope="module")
def tf():
    return pytest.importorskip("tensorflow", reason="checking targets needs tensorflow-cpu 2.21")


# ----------------------------------------------------------------------------- (a) current
def test_regenerated_table_is_byte_identical(regenerated):
    out, _ = regenerated
    assert out.read_bytes() == api_table.DATA.read_bytes(), (
        "tfmigrate/data/tf1_api.json is stale: run .venv/bin/python scripts/gen_api_table.py"
    )


def test_regenerated_namespaces_are_byte_identical(regenerated):
    out, _ = regenerated
    fresh = out.parent / api_table.NAMESPACES.name
    assert fresh.read_bytes() == api_table.NAMESPACES.read_bytes(), (
        "tfmigrate/data/tf_namespaces.json is stale: run .venv/bin/python scripts/gen_api_table.py"
    )


def test_script_reports_dropped_targets(regenerated):
    _, stdout = regenerated
    dropped = api_table.header()["counts"]["tf_table_targets_dropped"]
    assert dropped == len(api_table.table()["dropped_targets"]) > 0
    printed = {line.split()[0]: line.split()[1] for line in stdout.splitlines()
               if line.startswith("  ") and len(line.split()) == 2}
    assert printed["tf_table_targets_dropped"] == str(dropped)


def test_table_is_small_and_versioned():
    assert api_table.DATA.stat().st_size < 2_000_000
    assert api_table.NAMESPACES.stat().st_size < 2_000_000
    assert api_table.namespaces()["header"]["tensorflow"] == api_table.header()["tensorflow"]
    h = api_table.header()
    assert h["tensorflow"].startswith("2.21.") and h["keras"].startswith("3.")


# ----------------------------------------------------------------------------- (b) resolves
def test_every_replacement_target_resolves(tf):
    t = api_table.table()
    targets = {}
    for section in ("removed", "contrib"):
        for path, entry in t[section].items():
            if "replacement" in entry:
                targets[f"{section}:{path}"] = entry["replacement"]["target"]
    assert targets
    failures = {}
    for where, target in sorted(targets.items()):
        try:
            _resolve(tf, target)
        except Exception as exc:  # noqa: BLE001 - any failure to resolve is the finding
            failures[where] = f"{target}: {type(exc).__name__}: {exc}"
    assert not failures, failures


def test_every_available_v1_path_resolves(tf):
    failures = {}
    for path, entry in api_table.table()["removed"].items():
        if entry["v1_available"]:
            try:
                _resolve(tf.compat.v1, path)
            except Exception as exc:  # noqa: BLE001
                failures[path] = f"{type(exc).__name__}: {exc}"
            try:
                _resolve(tf, path)
            except Exception:  # noqa: BLE001 - removed from tf is the point
                pass
            else:
                failures[path] = "resolves under tf: not removed"
    assert not failures, failures


def test_argument_renames_exist_on_target(tf):
    import inspect

    for path, entry in api_table.table()["removed"].items():
        rep = entry.get("replacement", {})
        if not rep.get("args"):
            continue
        obj = _resolve(tf, rep["target"])
        params = inspect.signature(obj.__init__ if inspect.isclass(obj) else obj).parameters
        for old, new in rep["args"].items():
            assert new in params, f"{path}: {old} -> {new} not a keyword of tf.{rep['target']}"


def test_changed_defaults_are_pinnable_keywords_of_the_target(tf):
    """A fix writes `key=<TF1 default>` into the rewritten call: the key must be a keyword of
    the target, and the value never None (TF1's "the function's default": `dim=None`,
    `keep_dims=None`) nor of another type than the target's (`method=0` for tf.image.resize)."""
    import inspect

    for path, entry in api_table.table()["removed"].items():
        changed = entry.get("replacement", {}).get("defaults_changed", {})
        if not changed:
            continue
        obj = _resolve(tf, entry["replacement"]["target"])
        params = inspect.signature(obj.__init__ if inspect.isclass(obj) else obj).parameters
        for key, (old, new) in changed.items():
            assert key in params, f"{path}: pins {key}=, not a keyword of the target"
            assert old is not None, f"{path}: pins {key}=None"
            assert type(old) in (int, float) and type(new) in (int, float) or type(old) is type(new), (path, key)


def test_disproven_rewrites_fall_back_to_compat_v1(tf):
    """The generator ran resize_images against tf.image.resize: other pixel values (half-pixel
    centres), so the replacement offered is TF1's own function through compat.v1."""
    import numpy as np

    assert "differs" in api_table.removed("image.resize_images")["replacement"]
    rep = api_table.replacement("image.resize_images")
    assert rep["target"] == "compat.v1.image.resize_images" and rep["native"] is False
    assert "half-pixel" in rep["differs"]
    ramp = tf.reshape(tf.range(16, dtype=tf.float32), [1, 4, 4, 1])
    tf1 = tf.compat.v1.image.resize_images(ramp, [2, 2]).numpy()
    assert np.abs(tf1 - tf.image.resize(ramp, [2, 2]).numpy()).max() == 2.5
    with pytest.raises(ValueError):
        tf.image.resize(ramp, [2, 2], method=0)  # TF1's ResizeMethod.BILINEAR: never pinned
    assert api_table.removed("log")["replacement"]["proof"] == "same object"


# ----------------------------------------------------------------------------- (c) spot checks
@pytest.mark.parametrize(
    "path", ["Session", "placeholder", "get_variable", "GraphKeys", "app", "app.flags", "flags",
             "train.Saver", "train.AdamOptimizer"],
)
def test_tf1_only_symbols_are_removed_and_still_in_compat_v1(path):
    entry = api_table.removed(path)
    assert entry is not None, path
    assert entry["v1_available"] is True


def test_adam_optimizer_goes_to_keras_adam():
    rep = api_table.replacement("train.AdamOptimizer")
    assert rep["target"] == "keras.optimizers.Adam" and rep["native"] is True
    assert rep["args"] == {"beta1": "beta_1", "beta2": "beta_2"}  # learning_rate keeps its name
    assert "learning_rate" not in rep.get("args_removed", [])
    assert rep["defaults_changed"]["epsilon"] == [1e-08, 1e-07]


def test_layers_are_not_available_under_keras3():
    for path in ("layers.dense", "layers.Dense", "nn.rnn_cell.LSTMCell", "layers"):
        entry = api_table.removed(path)
        assert entry is not None and entry["v1_available"] is False, path
        assert "Keras 3" in entry["error"] or "__internal__" in entry["error"], entry
    assert api_table.replacement("layers.Dense")["target"] == "keras.layers.Dense"
    rep = api_table.replacement("layers.dense")
    assert rep["target"] == "keras.layers.Dense" and rep["drop_in"] is False


def test_compat_v1_fallback_only_where_it_works():
    assert api_table.replacement("Session") == {
        "target": "compat.v1.Session", "native": False, "source": "compat.v1"}
    assert api_table.replacement("nn.rnn_cell.RNNCell") is None


def test_estimator_and_contrib_are_gone():
    assert api_table.removed("estimator") is None
    assert api_table.removed("estimator.Estimator") is None
    assert api_table.gone("estimator.Estimator")["in_compat_v1"] is False
    assert api_table.removed("contrib") is None
    assert api_table.gone("contrib.layers.xavier_initializer") is not None


def test_changed_signature_is_separate_from_removed():
    dropout = api_table.changed_signature("nn.dropout")
    assert dropout is not None and api_table.removed("nn.dropout") is None
    assert "keep_prob" in dropout["v1_params"] and "keep_prob" not in dropout["v2_params"]
    assert api_table.changed_signature("reduce_sum")["args"]["keep_dims"] == "keepdims"
    assert api_table.changed_signature("Session") is None


def test_diverged_notes_hold_under_tf221(tf):
    """What the `diverged` notes claim, measured: TF1's where picks rows, TF2's broadcasts (and
    fails or silently differs); TF2's initializers and asserts reject TF1's `dtype=` / `data=`,
    and TF2's random initializers draw other numbers for the same seed;
    TF2's initializers still work with compat.v1 `get_variable` (so no-argument uses are fine)."""
    assert api_table.diverged("where")["when"] == ["x", "y"]
    assert api_table.diverged("zeros_initializer")["when"] == "args"
    assert api_table.diverged("nn.dropout") is None and api_table.diverged("Session") is None
    c, x, y = tf.constant([True, False, True]), tf.ones([3, 3]), tf.zeros([3, 3])
    assert tf.compat.v1.where(c, x, y).numpy()[:, 0].tolist() == [1.0, 0.0, 1.0]  # rows
    assert tf.where(c, x, y).numpy()[0].tolist() == [1.0, 0.0, 1.0]  # last axis
    with pytest.raises(Exception):
        tf.where(tf.constant([True, False]), tf.ones([2, 3]), tf.zeros([2, 3]))
    with pytest.raises(TypeError):
        tf.zeros_initializer(dtype=tf.float32)
    with pytest.raises(TypeError):
        tf.debugging.assert_equal(1, 1, data=[1])
    assert api_table.diverged("random_normal_initializer")["when"] == ["seed", "dtype", "-stddev"]
    assert api_table.diverged("random_uniform_initializer")["when"] == ["seed", "dtype", "-minval", "-maxval"]
    for name in ("random_normal", "glorot_uniform", "truncated_normal"):  # same seed, other numbers
        v1_values = getattr(tf.compat.v1.initializers, name)(seed=3)([3, 3]).numpy()
        v2_values = getattr(tf.initializers, name)(seed=3)([3, 3]).numpy()
        assert (v1_values != v2_values).any(), name
    # and other defaults: TF1's normal has stddev 1.0, TF2's 0.05; TF1's uniform [0, 1), TF2's [-0.05, 0.05]
    v1_normal = tf.compat.v1.random_normal_initializer()([2000]).numpy()
    v2_normal = tf.random_normal_initializer()([2000]).numpy()
    assert 0.9 < v1_normal.std() < 1.1 and 0.04 < v2_normal.std() < 0.06
    v1_uniform = tf.compat.v1.random_uniform_initializer()([2000]).numpy()
    v2_uniform = tf.random_uniform_initializer()([2000]).numpy()
    assert v1_uniform.min() >= 0.0 and v1_uniform.max() > 0.9
    assert v2_uniform.min() < 0.0 and v2_uniform.max() <= 0.05
    graph = tf.Graph()
    with graph.as_default():
        var = tf.compat.v1.get_variable("v", [2], initializer=tf.zeros_initializer())
        with tf.compat.v1.Session() as sess:
            sess.run(tf.compat.v1.global_variables_initializer())
            assert sess.run(var).tolist() == [0.0, 0.0]


def test_loader_does_not_import_tensorflow():
    code = ("import sys; from tfmigrate.facts import api_table; api_table.removed('Session'); "
            "print('tensorflow' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT)
    assert out.stdout.strip() == "False", out.stderr


# ----------------------------------------------------------------------------- namespaces
MISSING = {  # (path, spelled through compat.v1) -> the prefix that does not exist
    ("python.ops.control_flow_ops.cond", False): "python.ops.control_flow_ops.cond",
    ("python.framework.ops.IndexedSlices.values", False): "python.framework.ops.IndexedSlices",
    ("python.training.training_ops.apply_adam", False): "python.training.training_ops",
    ("summary.historgram", False): "summary.historgram",
    ("get_shape", True): "get_shape",
    ("merge_summary", False): "merge_summary",
    ("keras.backend.learning_phase", False): "keras.backend.learning_phase",  # Keras 3 dropped it
    ("keras.backend.set_learning_phase", True): "keras.backend.set_learning_phase",
    ("keras.wrappers.scikit_learn.KerasClassifier", False): "keras.wrappers.scikit_learn",
}
PRESENT = [("shape", False), ("float32.as_numpy_dtype", False), ("Tensor.shape", False),
           ("keras.layers.Dense.build", False), ("keras.layers.Dense", True), ("layers.dense", True), ("nn.moments", True),
           ("python.ops.array_ops.shape", False), ("python.framework.ops._default_graph_stack", False),
           ("python.keras.layers", False), ("python.distribute.anything", False)]


@pytest.mark.parametrize("path,v1", sorted(MISSING))
def test_unresolved_names_the_missing_prefix(path, v1):
    assert api_table.unresolved(path, v1) == MISSING[(path, v1)]


@pytest.mark.parametrize("path,v1", PRESENT)
def test_unresolved_never_judges_what_exists_or_is_not_walked(path, v1):
    assert api_table.unresolved(path, v1) is None


def test_missing_prefixes_really_fail(tf):
    import importlib

    for (path, v1), missing in MISSING.items():
        if missing.startswith("python."):
            module, _, leaf = missing.rpartition(".")
            mod = importlib.import_module(f"tensorflow.{module}")
            assert not hasattr(mod, leaf), missing
            with pytest.raises(ImportError):
                importlib.import_module(f"tensorflow.{missing}")
        else:
            with pytest.raises(AttributeError):
                _resolve(tf.compat.v1 if v1 else tf, missing)


def test_every_listed_public_name_resolves(tf):
    import importlib.util

    failures = []
    for section, root in (("tf", tf), ("v1", tf.compat.v1)):
        for module, text in api_table.namespaces()[section].items():
            base = _resolve(root, module) if module else root
            for name in text.split():
                try:
                    getattr(base, name)
                except Exception as exc:  # noqa: BLE001 - lazy loaders may raise on access
                    if type(exc).__name__ != "AttributeError":
                        continue  # exists but raises (Keras 3 lazy loaders): not judged anyway
                    if section == "tf" and not module and importlib.util.find_spec(f"tensorflow.{name}"):
                        continue  # a subpackage (tensorflow.core) that `import` reaches
                    failures.append(f"{section}:{module}.{name}: {exc}")
    assert not failures, failures[:20]


def test_private_modules_listed_import(tf):
    import importlib

    private = api_table.namespaces()["python"]
    for module in ("python.ops.array_ops", "python.framework.ops", "python.training.training_util",
                   "python.util.nest", "python.pywrap_tensorflow"):
        assert module in private
        mod = importlib.import_module(f"tensorflow.{module}")
        for name in private[module].split():
            assert hasattr(mod, name) or importlib.util.find_spec(f"tensorflow.{module}.{name}"), (module, name)


@pytest.mark.parametrize("fixture", ["TFM207/bad_compat_v1_spelled.py", "TFM211/bad_compat_v2.py"])
def test_compat_spellings_reported_as_debt_run_under_tf221(tf, fixture, tmp_path):
    """`tf.flags` / `tf.app.run` through `import tensorflow.compat.v1 as tf`, and
    `tf.enable_v2_behavior()` through `import tensorflow.compat.v2 as tf`, run under TF 2.21:
    their findings must not call them removed."""
    from tfmigrate.core.engine import check_source

    source = ROOT / "tests" / "fixtures" / fixture
    run = run_python([str(source)], env=ENV, timeout=120, cwd=tmp_path)
    assert run.returncode == 0, run.stderr[-2000:]
    code = fixture.split("/")[0]
    findings = check_source(source.read_bytes(), source.name, [code])
    assert findings and all(f.kind == "debt" and "removed" not in f.message for f in findings), findings
    assert api_table.compat_v2_only("enable_v2_behavior") is not None


def test_table_driven_rewrites_are_run_by_the_generator():
    """scripts/gen_api_table.py runs the rewrites it can under TF 2.21 (TF1's form through
    tf.compat.v1 against the rewritten call) and records what running proved or disproved; the
    byte-identical regeneration above keeps that current."""
    counts = api_table.header()["counts"]
    assert counts["replacements_same_object"] + counts["replacements_proven_by_running"] > 250
    removed = api_table.table()["removed"]
    assert removed["train.AdamOptimizer"]["replacement"]["proof"] == "ran three training steps"
    assert "differs" in removed["train.RMSPropOptimizer"]["replacement"]  # TF1 starts ms at 1.0
    assert api_table.replacement("train.RMSPropOptimizer")["target"] == "compat.v1.train.RMSPropOptimizer"
    assert removed["to_float"]["replacement"]["proof"] == "ran a sample call"  # tf.cast(x, tf.float32)
    assert removed["reduce_join"]["replacement"]["proof"] == "ran a sample call"
    changed = api_table.table()["changed"]
    assert changed["reduce_sum"]["renames_proven"] == ["keep_dims", "reduction_indices"]
    assert changed["space_to_batch"]["arg_values"] == {"block_size": "[{0}, {0}]"}  # block_shape=[n, n]
    assert "block_size" in changed["batch_to_space"]["renames_proven"]  # TF2's takes a scalar there
