"""TF1 functional layers (`tf.layers.dense`, ...) as Keras 3 layer objects.

Under Keras 3 every `tf.layers` function raises AttributeError, so a call must become a layer
object built once and called. The table holds each function's TF1 signature (TF 1.15, after
`inputs`; read from TensorFlow's own legacy_tf_layers) and the positional order of the Keras 3.15
class (read with `inspect.signature`): a positional TF1 argument stays positional only while both
orders agree, so `conv2d_transpose(x, 8, 3, 1, "same", "channels_first")` cannot slip
`data_format` into Keras's `output_padding`. Pure functions over libcst nodes, no TensorFlow.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Dict, List, Optional, Tuple, Union

import libcst as cst

from tfmigrate.fixers.arguments import join

_INIT = ("kernel_initializer", "bias_initializer", "kernel_regularizer", "bias_regularizer",
         "activity_regularizer", "kernel_constraint", "bias_constraint")
_TAIL = ("trainable", "name", "reuse")
_DENSE = ("units", "activation", "use_bias", *_INIT, *_TAIL)
_CONV_HEAD = ("filters", "kernel_size", "strides", "padding", "data_format")
_CONV = (*_CONV_HEAD, "dilation_rate", "activation", "use_bias", *_INIT, *_TAIL)
_CONV_T = (*_CONV_HEAD, "activation", "use_bias", *_INIT, *_TAIL)
_SEP = (*_CONV_HEAD, "dilation_rate", "depth_multiplier", "activation", "use_bias",
        "depthwise_initializer", "pointwise_initializer", "bias_initializer",
        "depthwise_regularizer", "pointwise_regularizer", "bias_regularizer",
        "activity_regularizer", "depthwise_constraint", "pointwise_constraint",
        "bias_constraint", *_TAIL)
_POOL = ("pool_size", "strides", "padding", "data_format", "name")
_BN = ("axis", "momentum", "epsilon", "center", "scale", "beta_initializer",
       "gamma_initializer", "moving_mean_initializer", "moving_variance_initializer",
       "beta_regularizer", "gamma_regularizer", "beta_constraint", "gamma_constraint",
       "training", "trainable", "name", "reuse", "renorm", "renorm_clipping",
       "renorm_momentum", "fused", "virtual_batch_size", "adjustment")


@dataclass(frozen=True)
class Spec:
    cls: str                        # Keras 3 class in keras.layers
    params: Tuple[str, ...]         # TF1 parameters after `inputs`, in order
    keras_order: Tuple[str, ...]    # Keras positional order, as far as it matches TF1
    required: Tuple[str, ...] = ()  # TF1 parameters without a default
    default_training: bool = False  # TF1 defaulted `training=False`; Keras would inherit it


def _spec(cls, params, keras_len, required=(), training=False) -> Spec:
    return Spec(cls, params, params[:keras_len], required, training)


SPECS: Dict[str, Spec] = {
    "dense": _spec("Dense", _DENSE, 10, ("units",)),
    "conv1d": _spec("Conv1D", _CONV, 6, ("filters", "kernel_size")),
    "conv2d": _spec("Conv2D", _CONV, 6, ("filters", "kernel_size")),
    "conv3d": _spec("Conv3D", _CONV, 6, ("filters", "kernel_size")),
    # Keras puts output_padding after padding (2D) / data_format (3D): keep 4 / 5 positional.
    "conv2d_transpose": _spec("Conv2DTranspose", _CONV_T, 4, ("filters", "kernel_size")),
    "conv3d_transpose": _spec("Conv3DTranspose", _CONV_T, 5, ("filters", "kernel_size")),
    "separable_conv1d": _spec("SeparableConv1D", _SEP, 19, ("filters", "kernel_size")),
    "separable_conv2d": _spec("SeparableConv2D", _SEP, 19, ("filters", "kernel_size")),
    "batch_normalization": _spec("BatchNormalization", _BN, 13, training=True),
    "dropout": _spec("Dropout", ("rate", "noise_shape", "seed", "training", "name"), 3,
                     training=True),
    "flatten": _spec("Flatten", ("name", "data_format"), 0),
    **{
        f"{kind}_pooling{n}d": _spec(f"{cls}Pooling{n}D", _POOL, 5, ("pool_size", "strides"))
        for kind, cls in (("max", "Max"), ("average", "Average"))
        for n in (1, 2, 3)
    },
}

# Arguments that go to the layer call rather than the constructor.
_CALL_ARGS = ("training",)
# Arguments that may be dropped when they hold this literal (they mean "the default").
_DROP_IF = {"reuse": ("None", "False"), "virtual_batch_size": ("None",), "adjustment": ("None",)}
# Arguments Keras 3 lacks whose value never changes the result: fused is an implementation choice.
_DROP_ALWAYS = ("fused",)
_NO_EQUIVALENT = {
    "reuse": "`reuse=` has no Keras equivalent (share one layer object instead)",
    "virtual_batch_size": "`virtual_batch_size=` has no Keras 3 equivalent",
    "adjustment": "`adjustment=` has no Keras 3 equivalent",
}


@dataclass
class Mapped:
    """A TF1 call split into the Keras constructor arguments and the layer call's arguments."""

    spec: Spec
    inputs: cst.BaseExpression
    ctor_args: List[cst.Arg]
    call_args: List[cst.Arg]
    name: Optional[str] = None  # the literal `name=` string, when there is one
    caveats: List[str] = field(default_factory=list)  # why the fix may change behaviour
    caveats_safe: List[str] = field(default_factory=list)  # notes that change nothing


def _literal(node) -> Optional[str]:
    if isinstance(node, cst.Name) and node.value in ("None", "True", "False"):
        return node.value
    return None


def _string(node) -> Optional[str]:
    if isinstance(node, cst.SimpleString) and not node.prefix.strip("rRuU"):
        value = node.evaluated_value
        return value if isinstance(value, str) else None
    return None


def _keyword(arg: cst.Arg, name: str) -> cst.Arg:
    if arg.keyword is not None:
        return arg
    no_space = cst.SimpleWhitespace("")
    return arg.with_changes(
        keyword=cst.Name(name), equal=cst.AssignEqual(whitespace_before=no_space, whitespace_after=no_space)
    )


def map_call(function: str, call: cst.Call) -> Union[Mapped, str]:
    """Bind `call` (of `tf.layers.<function>`) to the TF1 signature; a Mapped or why not."""
    spec = SPECS[function]
    params = ("inputs", *spec.params)
    bound: Dict[str, Tuple[int, cst.Arg]] = {}
    for index, arg in enumerate(call.args):
        if arg.star:
            code = cst.Module([]).code_for_node(arg.value)
            return f"`{arg.star}{code}` hides which arguments are passed"
        if arg.keyword is None:
            if index >= len(params):
                return "it has more positional arguments than the TF1 function takes"
            key = params[index]
        else:
            key = arg.keyword.value
            if key not in params:
                return f"`{key}=` is not an argument of the TF1 function"
        if key in bound:
            return f"`{key}` is given twice"
        bound[key] = (index, arg)
    if "inputs" not in bound:
        return "the call has no `inputs`"
    missing = [p for p in spec.required if p not in bound]
    if missing:
        return f"the call has no `{missing[0]}`"

    mapped = Mapped(spec, bound.pop("inputs")[1].value, [], [])
    for key in list(bound):
        value = bound[key][1].value
        if key in _DROP_ALWAYS or (key in _DROP_IF and _literal(value) in _DROP_IF[key]):
            del bound[key]
        elif key in _NO_EQUIVALENT:
            return _NO_EQUIVALENT[key]
    if "name" in bound:
        mapped.name = _string(bound["name"][1].value)
    if spec.cls == "BatchNormalization" and "trainable" in bound:
        if _literal(bound["trainable"][1].value) != "True":
            mapped.caveats.append(
                "a Keras BatchNormalization with trainable=False always uses its moving "
                "statistics, a TF1 one did not"
            )

    positional = True
    for key, (index, arg) in sorted(bound.items(), key=lambda item: item[1][0]):
        if key in _CALL_ARGS:
            mapped.call_args.append(_keyword(arg, key))
            continue
        slot = index - 1  # position among the constructor arguments (after `inputs`)
        if arg.keyword is not None or slot >= len(spec.keras_order) or spec.keras_order[slot] != key:
            positional = False
        mapped.ctor_args.append(arg if positional else _keyword(arg, key))
    if spec.cls == "Dropout" and "rate" not in bound:  # TF1 default; Keras requires it
        mapped.ctor_args.insert(0, cst.Arg(cst.Float("0.5")))
    if spec.default_training and "training" not in bound:  # keep TF1's inference-mode default
        mapped.call_args.append(_keyword(cst.Arg(cst.Name("False")), "training"))
        mapped.caveats_safe.append("`training=False`, TF1's default, is kept explicit")
    return mapped


def constructor(cls_ref: cst.BaseExpression, mapped: Mapped, original: cst.Call,
                multiline: bool = True) -> cst.Call:
    """`tf.keras.layers.Dense(3, ...)`, keeping the original argument layout when `multiline`."""
    args = mapped.ctor_args
    if not multiline:
        args = [a.with_changes(comma=cst.MaybeSentinel.DEFAULT) for a in args]
        return cst.Call(func=cls_ref, args=join(args))
    last = original.args[-1].comma if original.args else cst.MaybeSentinel.DEFAULT
    if args and args[-1] is not original.args[-1]:
        last = cst.MaybeSentinel.DEFAULT
    return cst.Call(func=cls_ref, args=join(list(args), last),
                    whitespace_before_args=original.whitespace_before_args if args else cst.SimpleWhitespace(""))


def layer_call(layer: cst.BaseExpression, mapped: Mapped, original: cst.Call) -> cst.Call:
    """`layer(x)` or `layer(x, training=...)`, keeping parentheses that wrapped the old call."""
    args = [cst.Arg(mapped.inputs)] + [
        a.with_changes(comma=cst.MaybeSentinel.DEFAULT) for a in mapped.call_args
    ]
    return cst.Call(func=layer, args=join(args), lpar=original.lpar, rpar=original.rpar)


def self_attribute(self_name: str, attr: str) -> cst.Attribute:
    return cst.Attribute(value=cst.Name(self_name), attr=cst.Name(attr))


def assignment(target: cst.BaseExpression, value: cst.BaseExpression) -> cst.SimpleStatementLine:
    return cst.SimpleStatementLine([cst.Assign([cst.AssignTarget(target)], value)])


def new_init(self_name: str, body: List[cst.BaseStatement], blank_before: bool,
             blank_after: bool, forward_args: bool = False) -> cst.FunctionDef:
    """`def __init__(self, **kwargs): super().__init__(**kwargs)` followed by `body`;
    `*args` too when a base class's `__init__` takes positional arguments."""
    params = "*args, **kwargs" if forward_args else "**kwargs"
    init = cst.ensure_type(
        cst.parse_statement(f"def __init__({self_name}, {params}):\n    super().__init__({params})\n"),
        cst.FunctionDef,
    )
    block = init.body.with_changes(
        body=[*init.body.body, *body],
        footer=[cst.EmptyLine(indent=False)] if blank_after else [],
    )
    return init.with_changes(
        body=block, leading_lines=[cst.EmptyLine(indent=False)] if blank_before else []
    )


# Public attributes of a Keras 3.15 Model / Layer instance (dir() plus what __init__, compile and
# fit set): a layer stored under one of these names would shadow or break the model.
KERAS_ATTRIBUTES = frozenset("""
activity_regularizer add_loss add_metric add_variable add_weight autocast build
build_from_config built call call_signature_parameters compile compile_from_config compiled
compiled_loss compiled_metrics compute_dtype compute_loss compute_mask compute_metrics
compute_output_shape compute_output_spec count_params distribute_reduction_method
distribute_strategy dtype dtype_policy evaluate export fit from_config get_build_config
get_compile_config get_config get_layer get_metrics_result get_quantization_layer_structure
get_state_tree get_weights history input input_dtype input_spec jit_compile layers
load_own_variables load_weights loss losses make_predict_function make_test_function
make_train_function metrics metrics_names metrics_variables name non_trainable_variables
non_trainable_weights optimizer output path predict predict_function predict_on_batch
predict_step quantization_mode quantize quantized_build quantized_call rematerialized_call
reset_metrics run_eagerly save save_own_variables save_weights set_state_tree set_weights
stateless_call stateless_compute_loss steps_per_execution stop_training summary supports_jit
supports_masking symbolic_call test_function test_on_batch test_step to_json train_function
train_on_batch train_step trainable trainable_variables trainable_weights
unrolled_steps_per_execution variable_dtype variables weights
""".split())
