"""TFM213: `tf.estimator` (and `tf.compat.v1.estimator`, `tf.contrib.tpu.TPUEstimator`), removed in
TensorFlow 2.16. The replacement is Keras `model.fit` or a custom loop: guidance, no fix, but
for the `ModeKeys` constants (their string values)."""
from __future__ import annotations

from typing import Optional, Tuple

from tfmigrate.findings import Fix
from tfmigrate.fixers import contrib_homes
from tfmigrate.facts.references import GoneRef, TF1Ref
from tfmigrate.rules._gone_api import GoneApiRule, spelled_gone

FIT = "train a Keras model with `model.fit` (or a custom `tf.GradientTape` loop)"
HINTS = {
    "Estimator": f"{FIT}; the model_fn becomes the model, the input_fn a `tf.data.Dataset`",
    "EstimatorSpec": f"{FIT}; return the loss/metrics from the model instead",
    "RunConfig": f"{FIT}; checkpoints go to `tf.keras.callbacks.ModelCheckpoint`, distribution to `tf.distribute`",
    "TrainSpec": "pass the training data to `model.fit`",
    "EvalSpec": "pass `validation_data=` to `model.fit`",
    "train_and_evaluate": "call `model.fit(train, validation_data=eval)`",
    "ModeKeys": "pass a `training` flag to the model's `call` instead of a mode key",
    "inputs": "build a `tf.data.Dataset` (e.g. `tf.data.Dataset.from_tensor_slices`)",
    "export": "export with `model.export(path)` or `tf.saved_model.save`",
    "LinearClassifier": "use a Keras model (TensorFlow Decision Forests or a Dense layer for linear models)",
    "DNNClassifier": "use a Keras model of `Dense` layers",
    "DNNRegressor": "use a Keras model of `Dense` layers",
    "LinearRegressor": "use a Keras model with one `Dense` layer",
    "TPUEstimator": "use a Keras model under `tf.distribute.TPUStrategy`",
    "TPUEstimatorSpec": "use a Keras model under `tf.distribute.TPUStrategy`",
    "TPUConfig": "use `tf.distribute.TPUStrategy` with a `tf.distribute.cluster_resolver.TPUClusterResolver`",
}


class Estimator(GoneApiRule):
    code = "TFM213"
    CLAIMS = (
        "estimator",
        "contrib.tpu.TPUEstimator",
        "contrib.tpu.TPUEstimatorSpec",
        "contrib.tpu.RunConfig",
        "contrib.tpu.TPUConfig",
    )

    def describe(self, ref: TF1Ref) -> Tuple[str, Optional[Fix]]:
        parts = ref.path.split(".")
        if parts[0] == "contrib":
            where = "was removed with `tf.contrib`"
            leaf = parts[2] if len(parts) > 2 else parts[-1]
        else:
            where = "was removed in TensorFlow 2.16 (also from `tf.compat.v1`)"
            leaf = parts[1] if len(parts) > 1 else ""
        hint = HINTS.get(leaf, FIT)
        name = spelled_gone(ref)
        if isinstance(ref, GoneRef) and ref.statement is not None:
            return f"Importing `{name}` fails under TensorFlow 2: it {where}. Instead, {FIT}. No automatic fix.", None
        fix = contrib_homes.usage_fix(self.ctx, ref)
        if fix is not None:
            return f"`{name}` {where}. {fix.description}.", fix
        return f"`{name}` {where}: {hint}. No automatic fix{self._native_note(ref)}.", None

    def _native_note(self, ref: TF1Ref) -> str:
        """Where `fix --native` would rewrite the whole program (tfmigrate.native.estimators), the
        Estimator's finding says so: plain `fix` leaves it, as TF 2.21 cannot run it either way."""
        if ref.path != "estimator.Estimator" or self.ctx.native:
            return ""
        from tfmigrate.native import rewrite

        if rewrite(self.ctx.source).code is None:
            return ""
        return NATIVE_NOTE


NATIVE_NOTE = " here, but `tfmigrate fix --native` rewrites this program as eager TF2 (the model_fn as the model, a " \
              "`tf.data` input and a GradientTape loop)"
