"""`fix --native` on Estimator programs (tfmigrate.native.estimators, issue 22 item 3): what stops
the rewrite is named with what to do; plain `fix` leaves TFM213 unfixed but says when `--native`
would rewrite the program. The rewritten programs' numbers: the exec_estimator_* fixtures of
tests/fixtures/TFM216 (tests/test_exec.py; their references came from TF 2.15 with Estimator)."""
import pytest

from fixtures_lib import FIXTURES
from tfmigrate.catalogue import catalogue
from tfmigrate.core.engine import check_source, fix_source
from tfmigrate.frontends.report import estimator_line
from tfmigrate.native import rewrite

HEAD = "import tensorflow as tf\n\n\n"
MODEL = HEAD + '''def model_fn(features, labels, mode):
    logits = tf.layers.dense(features, 2)
    loss = tf.losses.sparse_softmax_cross_entropy(labels, logits)
    train_op = tf.train.GradientDescentOptimizer(0.1).minimize(loss, global_step=tf.train.get_global_step())
    return tf.estimator.EstimatorSpec(mode, loss=loss, train_op=train_op, eval_metric_ops=METRICS)


def input_fn():
    return tf.data.Dataset.from_tensor_slices((tf.zeros([4, 3]), tf.zeros([4], tf.int32))).batch(2)


'''
ALL = list(catalogue())
RUN = "estimator = tf.estimator.Estimator(model_fn)\nestimator.train(input_fn, steps=2)\n"


def _model(metrics="None", run=RUN, **replace):
    source = MODEL.replace("METRICS", metrics) + run
    for old, new in replace.items():
        source = source.replace(old, new)
    return source


@pytest.mark.parametrize("source, construct", [
    (_model(run="e = tf.estimator.LinearRegressor([])\n"), "a premade Estimator (`tf.estimator.LinearRegressor`)"),
    (_model("{'auc': tf.metrics.auc(labels, logits)}"), "`tf.metrics.auc`, a TF1 metric"),
    (_model("{'acc': tf.metrics.accuracy(labels, logits, metrics_collections=['m'])}"), "with graph collections"),
    (_model(run=RUN + "print(estimator.get_variable_value('dense/kernel'))\n"), "`estimator.get_variable_value`"),
    (_model(run=RUN + "print(estimator.model_dir)\n"), "`estimator.model_dir`"),
    (_model(run="estimator = tf.estimator.Estimator(model_fn, config=tf.estimator.RunConfig(tf_random_seed=1))\n"),
     "a `RunConfig` with `tf_random_seed`"),
    (_model(run="estimator = tf.estimator.Estimator(model_fn, warm_start_from='/tmp/m')\n"), "`warm_start_from`"),
    (_model(run="estimator = tf.estimator.Estimator(model_fn)\nestimator.evaluate(input_fn, checkpoint_path='c')\n"),
     "`estimator.evaluate(..., checkpoint_path=...)`"),
    (_model(run="tf.estimator.Estimator(model_fn).train(input_fn)\n"), "an Estimator that is not kept in a name"),
    (_model(run="e = tf.estimator.Estimator(model_fn)\ne.train(lambda: tf.data.Dataset.range(2).make_one_shot_iterator()"
                ".get_next())\n"), "an input_fn that returns iterator tensors"),
    (_model(run=RUN.replace("input_fn, steps", "lambda p: input_fn(), steps")), "an input_fn lambda that takes parameters"),
    (_model(**{"(features, labels, mode)": "(features, labels, mode, config)"}), "reads the Estimator's `config`"),
    (_model(**{"tf.train.GradientDescentOptimizer(0.1)": "tf.train.RMSPropOptimizer(0.1)"}),
     "whose optimizer is not a `tf.train` optimizer with a Keras equivalent"),
    (_model(**{"global_step=tf.train.get_global_step()": "var_list=None"}), "does not count `tf.train.get_global_step()`"),
    (_model(**{"minimize(loss,": "minimize(loss * 2.0,"}), "minimizes another loss than the EstimatorSpec's"),
    (_model(**{"logits = tf.layers.dense(features, 2)": "logits = tf.layers.dense(features, 2)\n"
                                                         "    tf.summary.scalar('m', tf.reduce_mean(logits))"}),
     "model code using TF1 summaries"),
    (_model(**{"    loss =": "    rate = tf.constant(0.1)\n    loss =",
               "GradientDescentOptimizer(0.1)": "GradientDescentOptimizer(rate)"}), "an optimizer made from `rate`"),
    (_model(run="estimator = tf.estimator.Estimator(model_fn)\n"
                "tf.estimator.train_and_evaluate(estimator, None, None)\n"), "`tf.estimator.train_and_evaluate`"),
    (_model(run=RUN + "f = tf.estimator.inputs.numpy_input_fn({'x': []}, shuffle=False, num_threads=2)\n"),
     "`numpy_input_fn(..., num_threads=2)`"),
    (_model(run=RUN + "f = tf.estimator.inputs.pandas_input_fn(frame)\n"), "`tf.estimator.inputs.pandas_input_fn`"),
    (_model(run=RUN + "EagerEstimator = None\n"), "`EagerEstimator`, a name of the module that the rewrite would write"),
    (_model().replace(HEAD, "try:\n    import tensorflow as tf\nexcept ImportError:\n    tf = None\n"),
     "TensorFlow imported other than by a top-level import statement"),
])
def test_what_stops_an_estimator_rewrite_is_named(source, construct):
    outcome = rewrite(source)
    assert outcome.code is None, outcome.code
    assert construct in str(outcome.blocker), str(outcome.blocker)


def test_a_helper_that_makes_variables_runs_inside_the_model_fn_only():
    helper = "def block(x):\n    return tf.layers.dense(x, 2)\n\n\n"
    source = _model(**{"def model_fn": helper + "def model_fn", "tf.layers.dense(features, 2)": "block(features)"})
    outcome = rewrite(source)
    assert outcome.blocker is None, str(outcome.blocker)
    assert "return tf.compat.v1.layers.dense(x, 2)" in outcome.code
    outcome = rewrite(source + "print(block(tf.zeros([1, 3])))\n")
    assert "`block`, a function that makes variables, used outside the model_fn" in str(outcome.blocker)


def test_a_global_step_kept_in_a_name_for_minimize_goes_with_it():
    source = _model(**{"    train_op =": "    step = tf.train.get_or_create_global_step()\n    train_op =",
                       "global_step=tf.train.get_global_step()": "step"})
    outcome = rewrite(source)
    assert outcome.blocker is None, str(outcome.blocker)
    assert "get_or_create_global_step" not in outcome.code and "    step = " not in outcome.code
    used = source.replace("    return tf.estimator", "    print(step)\n    return tf.estimator")
    assert "the global step `step` used other than by `minimize`" in str(rewrite(used).blocker)


def test_no_estimator_is_not_this_rewrite():
    assert rewrite(HEAD + "print(tf.constant(1.0))\n").code is None
    mode_keys = FIXTURES / "TFM213" / "exec_mode_keys.py"  # TFM213's own fix writes the strings
    findings = check_source(mode_keys.read_bytes(), mode_keys.name, ALL, native=True)
    assert not [f for f in findings if f.rule == "TFM216"]


def test_plain_fix_leaves_the_estimator_and_says_fix_native_rewrites_it():
    case = FIXTURES / "TFM216" / "exec_estimator_dense.py"
    result = fix_source(case.read_bytes(), case.name, ALL)
    fixed = result.fixed.decode("utf-8")
    assert "tf.estimator.Estimator(" in fixed and "EagerEstimator" not in fixed
    estimator = [f for f in result.findings if f.rule == "TFM213" and f.fix is None]
    assert estimator and any("`tfmigrate fix --native` rewrites this program" in f.message for f in estimator)
    assert estimator_line(result.findings).endswith("`tfmigrate fix --native` rewrites it as eager TF2.")
    refused = FIXTURES / "TFM216" / "bad_estimator_premade.py"
    findings = check_source(refused.read_bytes(), refused.name, ALL)
    assert not any("fix --native` rewrites" in f.message for f in findings)
    assert "fix --native" not in estimator_line(findings)


def test_the_rewrite_leaves_no_estimator_and_is_a_fixed_point():
    for case in sorted((FIXTURES / "TFM216").glob("exec_estimator_*.py")):
        result = fix_source(case.read_bytes(), case.name, ALL, unsafe=True, native=True)
        fixed = result.fixed.decode("utf-8")
        assert "EagerEstimator(" in fixed and "Session(" not in fixed and "placeholder" not in fixed, case.name
        assert not [f for f in result.findings if f.rule in ("TFM213", "TFM216", "TFM200")], case.name
        assert fix_source(result.fixed, case.name, ALL, unsafe=True, native=True).fixed is None, case.name
