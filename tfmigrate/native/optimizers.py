"""The TF1 optimizers a native rewrite keeps, each as the Keras optimizer with the same update rule.

One table for both halves of the rewrite: native.script accepts an optimizer only if it has a
Keras spelling here, native.emit writes that spelling.
"""
from __future__ import annotations

from typing import Optional

import libcst as cst

from tfmigrate.native.syntax import bind, code

# TF1 optimizer -> (Keras 3 class, TF1 parameters, {TF1 name: Keras name}, Keras arguments TF1's
# defaults need). Same update rule at constant hyperparameters: SGD; Momentum (Keras keeps
# v = m*v - lr*g, TF1 a = m*a + g; v = -lr*a); Adam (TF1's epsilon 1e-8, Keras's default 1e-7).
_KERAS = {
    "train.GradientDescentOptimizer": ("SGD", ("learning_rate", "use_locking", "name"),
                                       {"learning_rate": "learning_rate"}, {}),
    "train.MomentumOptimizer": ("SGD", ("learning_rate", "momentum", "use_locking", "name", "use_nesterov"),
                                {"learning_rate": "learning_rate", "momentum": "momentum",
                                 "use_nesterov": "nesterov"}, {}),
    "train.AdamOptimizer": ("Adam", ("learning_rate", "beta1", "beta2", "epsilon", "use_locking", "name"),
                            {"learning_rate": "learning_rate", "beta1": "beta_1", "beta2": "beta_2",
                             "epsilon": "epsilon"}, {"learning_rate": "0.001", "epsilon": "1e-08"}),
}
# TF1 optimizers whose Keras namesake updates otherwise (RMSProp: TF1's mean square starts at ones
# and its epsilon sits inside the root, Keras's starts at zeros; Adagrad: Keras adds an epsilon;
# Adadelta, Ftrl, the proximal ones: other defaults or none): the rewrite keeps TF1's own,
# `tf.compat.v1.train.<Name>`, which applies the same kernels eagerly and in a `tf.function`.
KEPT_TF1 = ("train.RMSPropOptimizer", "train.AdagradOptimizer", "train.AdadeltaOptimizer", "train.FtrlOptimizer",
            "train.ProximalAdagradOptimizer", "train.ProximalGradientDescentOptimizer")
OPTIMIZERS = tuple(_KERAS) + KEPT_TF1  # the TF1 optimizers a script may use


def learning_rate_of(call: cst.Call, path: Optional[str]) -> Optional[cst.BaseExpression]:
    """The learning rate given to the TF1 optimizer `call` (of the TF1 API `path`), or None."""
    if path in KEPT_TF1:  # (each takes it first)
        positional = [a.value for a in call.args if a.keyword is None and not a.star]
        given = [a.value for a in call.args if a.keyword is not None and a.keyword.value == "learning_rate"]
        return given[0] if given else positional[0] if positional and not call.args[0].star else None
    if path not in _KERAS:
        return None
    try:
        return bind(call, _KERAS[path][1]).get("learning_rate")
    except ValueError:
        return None


def keras_optimizer(call: cst.Call, path: Optional[str], tf: str) -> Optional[str]:
    """`tf.keras.optimizers.X(...)` for `call` (of the TF1 API `path`) with TF1's hyperparameters,
    spelled with the alias `tf`, or None when the call passes something without a Keras equivalent."""
    if path not in _KERAS:
        return None
    cls, params, renames, defaults = _KERAS[path]
    try:
        bound = bind(call, params)
    except ValueError:
        return None
    if "use_locking" in bound and code(bound["use_locking"]) != "False":
        return None
    if "learning_rate" not in bound and "learning_rate" not in defaults:
        return None
    args = {renames[k]: code(v) for k, v in bound.items() if k in renames}
    for key, value in defaults.items():
        args.setdefault(renames[key], value)
    ordered = [f"{k}={args[k]}" for k in ("learning_rate", "beta_1", "beta_2", "epsilon", "momentum", "nesterov")
               if k in args]
    return f"{tf}.keras.optimizers.{cls}({', '.join(ordered)})"
