"""The pure helpers of scripts/run_programs.py's native mode (issue 13) and of its weights hook
(scripts/weights_hook/): what counts as a TF1 construct left, a seeded program, a "not rewritten"
reason, the comparison with the reference run. No TensorFlow, no program runs."""
import importlib.util
import sys
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parent.parent


def _load(name, path):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


rp = _load("run_programs", ROOT / "scripts" / "run_programs.py")
hook = _load("tfm_weights_hook", ROOT / "scripts" / "weights_hook" / "tfm_weights_hook.py")


def program(**kw):
    base = dict(id="p", expected_seconds=10, stable_output="yes", reference_last_line="Loss=0.0100",
                reference_metric_line="-", needs_tf_keras=False)
    base.update(kw)
    return rp.Program(**base)


def test_tf1_constructs_in_code_only():
    source = (
        "import tensorflow.compat.v1 as tf  # compat route\n"
        "tf.disable_v2_behavior()\n"
        "# a placeholder in a comment, feed_dict too, Session()\n"
        "doc = 'placeholder feed_dict Session()'\n"
        "x = tf.placeholder_with_default(1.0, [])\n"
        "sess = tf.InteractiveSession()\n"
        "sess.run(x, feed_dict={})\n"
        "session_count = 0\n"
        "from tensorflow.compat import v1\n"
        "tf.compat.v1.disable_eager_execution()\n"
        "cell = tf.compat.v1.nn.rnn_cell.LSTMCell(4)  # runs eagerly: not a TF1 construct\n"
        "with self.test_session() as s: pass\n"
    )
    assert rp.tf1_constructs(source) == [
        (2, "disable_v2_behavior"), (5, "placeholder"), (6, "Session("), (7, "feed_dict"),
        (10, "disable_eager_execution"), (12, "test_session")]


def test_tf1_constructs_native_code_has_none():
    source = (
        "import tensorflow as tf\nimport keras\n"
        "dense = keras.layers.Dense(1)\n"
        "@tf.function\ndef step(x):\n    with tf.GradientTape() as tape:\n        y = dense(x)\n    return y\n"
        "class Session: pass\n"
    )
    assert rp.tf1_constructs(source) == []


def test_tf1_constructs_untokenizable_source_is_searched_as_text():
    assert rp.tf1_constructs("x = (\n  tf.placeholder(  # feed_dict\n") == [(2, "placeholder")]


@pytest.mark.parametrize("source, seeded", [
    ("tf.set_random_seed(1)\n", True),
    ("tf.compat.v1.set_random_seed(1)\n", True),
    ("tf.random.set_seed(1)\n", True),
    ("np.random.seed(1)\n", False),
    ("# tf.set_random_seed(1)\nx = 1\n", False),
    ("keras.utils.set_random_seed(1)\n", True),
])
def test_is_seeded(source, seeded):
    assert rp.is_seeded(source) is seeded


def test_not_rewritten_reasons_takes_the_construct_of_tfm216():
    stopped = ("`fix --native` cannot rewrite this module as eager TF2; it stopped at line {}: {}. It rewrites "
               "placeholders, ...; the module keeps TensorFlow's compat route (TFM200).")
    findings = [
        {"rule": "TFM202", "path": "a.py", "message": "Placeholder. Not rewritten: because."},
        {"rule": "TFM216", "path": "w/a.py", "message": stopped.format(3, "`tf.train.Saver`")},
        {"rule": "TFM216", "path": "w/b.py", "message": stopped.format(9, "the class `Net`, which builds graph code")},
        {"rule": "TFM216", "path": "w/a.py", "message": stopped.format(3, "`tf.train.Saver`")},
        {"rule": "TFM200", "message": "No reason here."},
    ]
    assert rp.not_rewritten_reasons(findings) == [
        "a.py:3: `tf.train.Saver`",
        "b.py:9: the class `Net`, which builds graph code",
    ]


def test_legacy_constructs_keep_a_program_off_level_3():
    source = (
        "import os\n"
        "os.environ['TF_USE_LEGACY_KERAS'] = '1'\n"
        "import tensorflow as tf  # not tf.compat.v1 in a comment\n"
        "doc = 'tf.compat.v1 in a string is not code'\n"
        "@tf.compat.v1.keras.utils.track_tf1_style_variables\n"
        "def call(x):\n    return tf.compat.v1.layers.dense(x, 1)\n"
        "import tf_keras\n"
        "compatible = 1\n"
    )
    assert rp.legacy_constructs(source) == [
        (2, "TF_USE_LEGACY_KERAS"), (5, "compat"), (5, "track_tf1_style_variables"), (7, "compat"), (8, "tf_keras")]
    assert rp.legacy_constructs("import tensorflow as tf\nimport keras\nd = keras.layers.Dense(1)\n") == []
    assert rp.legacy_constructs("x = tf.compat.v1.layers.dense(\n  # tf_keras\n") == [(1, "compat")]  # untokenizable


def test_keras3_cell_says_whether_the_native_program_is_pure_tf2(tmp_path):
    (tmp_path / "a.py").write_text("import tensorflow as tf\nx = tf.compat.v1.get_variable('x', [])\n")
    (tmp_path / "b.py").write_text("import tensorflow as tf\ny = tf.compat.v1.layers.dense\nimport tf_keras\n")
    assert rp.first_of_each([tmp_path / "a.py", tmp_path / "b.py"], rp.legacy_constructs) == [
        "a.py:2 compat", "b.py:3 tf_keras"]
    res = rp.RunResult("p", "keras3", status="same", native=True, native_verdict="same", pure_tf2=False)
    assert res.cell() == "native, same, TF1 kept"
    res.pure_tf2 = True
    assert res.cell() == "native, same, pure TF2"
    assert rp.RunResult("p", "native", status="same", native=True, native_verdict="same").cell() == "native, same"


def test_no_native_flag_is_recognised():
    typer_box = "╭─ Error ─╮\n│ No such option: --native                │\n╰─────╯"
    assert rp.NO_NATIVE_FLAG_RE.search(typer_box)
    assert rp.NO_NATIVE_FLAG_RE.search("error: unrecognized arguments: --native")
    assert not rp.NO_NATIVE_FLAG_RE.search("No such option: --frobnicate")


def test_loss_ratio_and_2x():
    assert rp.loss_ratio("step 900 loss 0.30", "step 900 loss 0.20") == pytest.approx(1.5)
    assert rp.loss_ratio(None, "loss 0.2") is None
    assert rp.loss_ratio("loss 0.2", "loss 0.0") is None
    assert rp.within_2x(1.99) and rp.within_2x(0.5) and not rp.within_2x(2.01) and not rp.within_2x(None)


def test_a_program_measured_as_varying_is_judged_by_its_spread_even_when_seeded():
    seeded = "import tensorflow as tf\ntf.set_random_seed(1)\nw = tf.Variable(tf.random_normal([2]))\n"
    assert rp.judged_as_seeded("yes", []) and rp.judged_as_seeded("last-line-only", [])
    assert not rp.judged_as_seeded("no", [seeded])
    assert rp.judged_as_seeded("", [seeded]) and not rp.judged_as_seeded("", ["print(1)\n"])


def test_compare_native_seeded_same_close_diff():
    p = program()
    ref = "a\nLoss=0.0100\n"
    assert rp.compare_native("a\nLoss=0.0100\n", ref, p, seeded=True)["verdict"] == "same"
    assert rp.compare_native("a\nLoss=0.0100\n", ref, p, seeded=True)["lines_same"] == "2/2"
    p2 = program(reference_last_line="v 1.000000")
    assert rp.compare_native("v 1.0005", "v 1.000000\n", p2, seeded=True)["verdict"] == "close"
    assert rp.compare_native("v 1.1", "v 1.000000\n", p2, seeded=True)["verdict"] == "diff"


def test_compare_native_unseeded_ratio_against_the_reference_run_here():
    p = program(stable_output="no", reference_last_line="done", reference_metric_line="Step 100 Loss = 0.5")
    got = rp.compare_native("Step 100 Loss = 0.9\ndone\n", "Step 100 Loss = 0.6\ndone\n", p, seeded=False)
    assert got["verdict"] == "within 2x" and got["ratio"] == pytest.approx(1.5)
    # the reference did not run here: the manifest's metric line
    got = rp.compare_native("Step 100 Loss = 1.5\n", None, p, seeded=False)
    assert got["verdict"] == "beyond 2x" and got["ratio"] == pytest.approx(3.0)
    assert rp.compare_native("nothing\n", None, p, seeded=False)["verdict"] == "no metric"


def test_compare_native_prints_nothing():
    p = program(reference_last_line=rp.NO_STDOUT)
    assert rp.compare_native("", "", p, seeded=True)["verdict"] == "ok"


def test_source_files_entry_helpers_and_local_imports(tmp_path):
    folder = tmp_path / "stanford" / "examples"
    folder.mkdir(parents=True)
    (folder / "03_logreg.py").write_text("import utils\nimport numpy\nfrom kernels import k\n")
    (folder / "utils.py").write_text("")
    (folder / "kernels.py").write_text("")
    (folder / "other_program.py").write_text("")
    p = program(repo_short="stanford", original_path="examples/03_logreg.py", helpers=("examples/utils.py",))
    assert [f.name for f in p.source_files(tmp_path)] == ["03_logreg.py", "utils.py", "kernels.py"]


def test_weights_env_puts_the_hook_first(monkeypatch):
    monkeypatch.setenv("PYTHONPATH", "/x")
    monkeypatch.setenv(rp.LOAD_ENV, "/stale.npz")
    env = rp.weights_env(dump=Path("/w.npz"))
    assert env["PYTHONPATH"].split(":")[0] == str(rp.HOOK_DIR) and env["PYTHONPATH"].endswith("/x")
    assert env[rp.DUMP_ENV] == "/w.npz" and rp.LOAD_ENV not in env
    assert (rp.HOOK_DIR / "sitecustomize.py").is_file()


def _fake_tf():
    class Sync:
        ON_READ = "on_read"

    class InitScope:
        def __enter__(self):
            return self

        def __exit__(self, *exc):
            return False

    return SimpleNamespace(VariableSynchronization=Sync, init_scope=InitScope,
                           as_dtype=lambda d: SimpleNamespace(as_numpy_dtype=np.dtype(d).type))


def test_creator_injects_trainable_variables_in_order_and_stops_at_a_mismatch(tmp_path):
    arrays = [np.ones((2, 3), np.float32), np.full((3,), 2.0, np.float32), np.zeros((4,), np.float32)]
    state = hook._LoadState(str(tmp_path / "w.npz"), arrays)
    creator = hook.make_creator(_fake_tf(), state)
    made = []
    def next_creator(**kwargs):
        made.append(kwargs)
        return kwargs

    creator(next_creator, initial_value=np.zeros((2, 3)), trainable=True, dtype="float64")
    creator(next_creator, initial_value=np.int64(0), trainable=False)  # a step counter: left alone
    creator(next_creator, initial_value=lambda: np.zeros((3,), np.float32), trainable=None)
    creator(next_creator, initial_value=np.zeros((5,)), trainable=True, name="w")  # 5 != 4: stop
    creator(next_creator, initial_value=np.zeros((4,)), trainable=True)
    assert made[0]["initial_value"].dtype == np.float64 and made[0]["initial_value"].sum() == 6
    assert made[1]["initial_value"] == 0
    assert made[2]["initial_value"].tolist() == [2.0, 2.0, 2.0]
    assert made[3]["initial_value"].tolist() == [0.0] * 5 and made[4]["initial_value"].tolist() == [0.0] * 4
    status = state.status()
    assert status["injected"] == 2 and status["of"] == 3
    assert status["mismatch"] == {"index": 2, "name": "w", "variable_shape": [5], "dumped_shape": [4]}
    assert status["not_injected_after_mismatch"] == 1
    assert (tmp_path / "w.npz.load.json").is_file()


def test_load_arrays_keeps_the_dump_order(tmp_path):
    path = tmp_path / "w.npz"
    np.savez(path, **{f"v{i:04d}": np.full((1,), i) for i in range(12)})
    assert [int(a[0]) for a in hook.load_arrays(str(path))] == list(range(12))
