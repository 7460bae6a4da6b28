"""`tf.layers.batch_normalization` in a script on the native route (issue 21).

TF1 updated a batch-norm layer's moving mean and variance only when its UPDATE_OPS ran, which a
program arranges around its training op:

    update_ops = tf.get_collection(tf.GraphKeys.UPDATE_OPS)
    with tf.control_dependencies(update_ops):
        train_op = optimizer.minimize(loss)

Eagerly the layer is Keras's `BatchNormalization`, which updates the moving statistics in every
call with `training=True`. The two agree exactly when every run that computes a layer in training
mode also runs the update ops (the training step) and no other run does: `check_run` proves that
for each `sess.run`, and refuses the rest (an evaluation in training mode, a training op without
the dependency).

Measured under TF 2.21 (2-D input, 30 Adam steps): the same loss to 6 digits, as without batch
norm (Adam's rounding). A bias just before the layer has a gradient that is zero in exact
arithmetic; its rounding noise differs between any two implementations and Adam scales it up to
steps of the learning rate's size, so such a model can differ in the 4th digit on any route.
TF1's fused kernel, which it used for 4-D input, kept the moving variance with Bessel's
correction (n / (n - 1) times the batch's), and Keras 3 keeps it without: a layer on 4-D input,
or on input of a rank tfmigrate cannot read, is refused.
"""
from __future__ import annotations

from typing import Optional

import libcst as cst

from tfmigrate.fixers import layers as layer_specs
from tfmigrate.native.syntax import bind, code

MADE_AFTER = ("`tf.layers.batch_normalization` made after the program read UPDATE_OPS (its updates are not in "
              "the collection the training op depends on)")
# TF1 arguments the layer takes (the rest is refused: regularizers, constraints, renorm, ...).
ARGUMENTS = ("axis", "momentum", "epsilon", "center", "scale", "beta_initializer", "gamma_initializer",
             "moving_mean_initializer", "moving_variance_initializer", "name")


def unsupported(mapped, rank: Optional[int]) -> Optional[str]:
    """Why a mapped `tf.layers.batch_normalization` call cannot be Keras's, or None."""
    if rank not in EXACT_RANKS:
        return ("`tf.layers.batch_normalization` of an input that is not known to be 2-D or 3-D (TF1's fused "
                "kernel kept the moving variance of 4-D input with Bessel's correction)")
    params = mapped.spec.keras_order
    for index, arg in enumerate(mapped.ctor_args):
        key = arg.keyword.value if arg.keyword is not None else params[index]
        if key not in ARGUMENTS:
            return f"`tf.layers.batch_normalization({key}=...)`"
        if key == "axis" and code(arg.value) not in ("-1", str(rank - 1)):
            return "`tf.layers.batch_normalization` over an axis other than the last"
    return None


# Layers whose output has the rank of their input (the activation functions too, in tf.nn).
SAME_RANK = ("layers.dense", "layers.dropout", "layers.batch_normalization", "identity", "nn.dropout", "nn.",
             "math.", "sigmoid", "tanh", "abs", "square", "sqrt", "exp", "cast")
RANK_OF = {"layers.conv1d": 3, "layers.conv2d": 4, "layers.conv3d": 5, "layers.max_pooling1d": 3,
           "layers.max_pooling2d": 4, "layers.average_pooling1d": 3, "layers.average_pooling2d": 4,
           "layers.conv2d_transpose": 4, "layers.flatten": 2, "layers.separable_conv2d": 4}
# Input ranks whose moving variance Keras 3 keeps as TF1 did (TF1's fused kernel took 4-D and 5-D).
EXACT_RANKS = (2, 3)


def is_update_collection(script, node) -> bool:
    """`tf.get_collection(tf.GraphKeys.UPDATE_OPS)` (no scope)."""
    if not script.tf_call(node, "get_collection"):
        return False
    try:
        bound = bind(node, ("key", "scope"))
    except ValueError:
        return False
    return set(bound) == {"key"} and script.api(bound["key"]) == "GraphKeys.UPDATE_OPS"


def updates_with(script, node: cst.With, collections) -> bool:
    """`with tf.control_dependencies(update_ops):` (or of the collection itself), without `as`."""
    if len(node.items) != 1 or node.items[0].asname is not None:
        return False
    call = node.items[0].item
    if not script.tf_call(call, "control_dependencies") or len(call.args) != 1 or call.args[0].keyword is not None:
        return False
    value = call.args[0].value
    return isinstance(value, cst.Name) and value.value in collections or is_update_collection(script, value)


def input_rank(script, node, depth: int = 0) -> Optional[int]:
    """The rank of a tensor expression where the script says it: a placeholder's literal shape,
    a layer that sets it, a reshape to a literal shape, or an op that keeps its input's rank."""
    if depth > 30:
        return None
    if isinstance(node, cst.Name):
        statement = script.defs.get(node.value)
        if statement is None or not isinstance(statement.node, cst.SimpleStatementLine):
            return None
        if statement.shape is not None:  # a placeholder
            shape = statement.shape
            return len(shape.elements) if isinstance(shape, (cst.List, cst.Tuple)) else None
        small = statement.node.body[0]
        return input_rank(script, small.value, depth + 1) if isinstance(small, cst.Assign) else None
    if isinstance(node, cst.BinaryOperation):
        return input_rank(script, node.left, depth + 1)
    if not isinstance(node, cst.Call) or not node.args:
        return None
    path = script.api(node.func)
    if path is None:
        return None
    if path in RANK_OF:
        return RANK_OF[path]
    if path == "reshape" and len(node.args) > 1 and isinstance(node.args[1].value, (cst.List, cst.Tuple)):
        return len(node.args[1].value.elements)
    if path in SAME_RANK or any(path.startswith(p) for p in SAME_RANK if p.endswith(".")):
        return input_rank(script, node.args[0].value, depth + 1)
    return None


def training_of(layer) -> Optional[cst.BaseExpression]:
    """The `training=` a mapped batch-norm call passes (None: TF1's default, inference)."""
    return next((a.value for a in layer.mapped.call_args if a.keyword is not None and a.keyword.value == "training"),
                None)


def check_run(script, site, body, args_of, blocked) -> None:
    """Refuse a run whose batch-norm layers Keras would update where TF1 did not, or the reverse.

    `body`: the graph statements the run computes; `args_of(name)`: the code of what the run
    gives the placeholder `name` (None when it is not a parameter of the run)."""
    training = [layer for statement in body for layer in statement.layers
                if layer.mapped.spec.cls == "BatchNormalization" and _may_train(training_of(layer), args_of)]
    training += [call for statement in body for name, call in statement.tracked
                 if _model_function_may_train(script.builders[name], call, args_of)]
    if not training:
        return
    trains = [s for s in body if s.loss is not None]
    if not trains:
        raise blocked(site.line, "a run that computes `tf.layers.batch_normalization` in training mode without "
                                 "its update ops (Keras would update the moving statistics in it; TF1 did not)")
    if not all(s.updates for s in trains):
        raise blocked(site.line, "a training op that does not run the UPDATE_OPS of its "
                                 "`tf.layers.batch_normalization` (`with tf.control_dependencies(update_ops):`): "
                                 "TF1 never updated the moving statistics, Keras would")


def _may_train(training, args_of) -> bool:
    if training is None:
        return False
    value = args_of(training.value) if isinstance(training, cst.Name) else None
    return (value if value is not None else code(training)) != "False"


def _model_function_may_train(builder, site: cst.Call, args_of) -> bool:
    """Whether a model function's batch norm runs in training mode at this call: its `training=`
    is a literal, a placeholder, or a parameter given one of those here."""
    if builder.node is None:
        return False  # (a model function of the project: made without batch norm, facts.eager_functions._UNTRACKED)
    params = [p.name.value for p in builder.node.params.params]
    for norm in builder.batch_norms:
        try:
            training = bind(norm, ("inputs",) + layer_specs.SPECS["batch_normalization"].params).get("training")
        except ValueError:
            return True
        if isinstance(training, cst.Name) and training.value in params:
            index = params.index(training.value)
            given = next((a.value for a in site.args if a.keyword is not None and a.keyword.value == training.value),
                         None)
            if given is None and index < len(site.args) and site.args[index].keyword is None:
                given = site.args[index].value
            if given is None:
                default = builder.node.params.params[index].default
                given = default if default is not None else cst.Name("True")
            training = given
        if _may_train(training, args_of):
            return True
    return False
