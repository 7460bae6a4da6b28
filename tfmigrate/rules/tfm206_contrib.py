"""TFM206: `tf.contrib.*`, absent from TensorFlow 2 and from `tf.compat.v1`.

The whole dotted name is resolved (see tfmigrate.facts.references), so the finding names the replacement for
the module people used: `contrib.layers` initializers/regularizers (fixed, TF2-native),
`contrib.eager` (tfe: fixed where TF2 has the same function), `contrib.slim` (the tf-slim
package: an unsafe fix of the import), TensorFlow's own contrib renames from the table
(`contrib.data` -> `tf.data.experimental`, `contrib.framework.nest` -> `tf.nest`, ...), and
guidance for the rest. `contrib.rnn` belongs to TFM214, `contrib.tpu.TPUEstimator` to TFM213.
"""
from __future__ import annotations

from typing import Optional, Tuple

import libcst as cst

from tfmigrate.facts import api_table
from tfmigrate.findings import Fix, Replace
from tfmigrate.fixers import contrib_homes
from tfmigrate.fixers.api_rename import generic_fix
from tfmigrate.fixers.arguments import joined
from tfmigrate.facts.references import GoneRef, TF1Ref
from tfmigrate.fixers.imports import NameCounts, remove_import_fix
from tfmigrate.rules._gone_api import GoneApiRule, spelled_gone
from tfmigrate.facts.program import ProgramMode

# Module -> what to use instead (one sentence, no trailing period).
MODULES = {
    "layers": "use Keras layers, initializers and regularizers (`tf.keras.layers`, `tf.keras.initializers`, `tf.keras.regularizers`)",
    "slim": "install the tf-slim package and `import tf_slim as slim` (it runs graph-mode code under TF 2.21)",
    "framework": "use `tf.nest` for nest, the tf-slim package for `arg_scope`/`add_arg_scope`, and `tf.compat.v1` for graph helpers",
    "eager": "eager execution is the TF2 default: use `tf.Variable`, `tf.GradientTape`, `tf.function`, `tf.train.Checkpoint`",
    "learn": "train with Keras `model.fit` or a custom `tf.GradientTape` loop; load data with `tf.keras.datasets` or `tf.data`",
    "seq2seq": "no TF2 equivalent ships with TensorFlow (`sequence_loss` with literal flags is fixed to its formula; tensorflow-addons' port is archived and does not support Keras 3): use Keras layers such as `tf.keras.layers.Attention` or vendor the code",
    "data": "use `tf.data.experimental` or the `tf.data.Dataset` methods",
    "summary": "use the TF2 `tf.summary` API (`tf.summary.create_file_writer`, `tf.summary.scalar`, ...)",
    "distributions": "use TensorFlow Probability (`tfp.distributions`)",
    "bayesflow": "use TensorFlow Probability",
    "opt": "use `tf.keras.optimizers` (e.g. `AdamW`); optimizers without a Keras counterpart must be vendored",
    "metrics": "use `tf.keras.metrics` (or `tf.compat.v1.metrics` in graph-mode code)",
    "losses": "use `tf.keras.losses` (or `tf.compat.v1.losses` in graph-mode code)",
    "training": "`HParams` has no TF 2.21 class (`from tensorflow.contrib.training import HParams` is fixed by a local one where the file calls no method it lacks, such as `to_proto`); use `tf.train.checkpoints_iterator`, and `tf.data` for input queues",
    "tpu": "use `tf.distribute.TPUStrategy` (or `tf.compat.v1.tpu` for the graph-mode ops)",
    "distribute": "use `tf.distribute`",
    "cluster_resolver": "use `tf.distribute.cluster_resolver`",
    "mixed_precision": "use `tf.keras.mixed_precision`",
    "image": "use `tf.image`; transforms such as rotate are `tf.keras.layers.RandomRotation` or must be vendored",
    "cudnn_rnn": "use `tf.keras.layers.LSTM`/`GRU`, which use cuDNN when they can",
    "compiler": "use `tf.function(jit_compile=True)` for XLA",
    "tfprof": "use `tf.profiler.experimental`",
    "memory_stats": "use `tf.config.experimental.get_memory_info`",
    "nccl": "use `tf.distribute` (NCCL all-reduce is `tf.distribute.NcclAllReduce`)",
    "lite": "use `tf.lite`",
    "quantize": "use the TensorFlow Model Optimization Toolkit",
    "predictor": "use `tf.saved_model.load`",
    "keras": "use `tf.keras`",
    "checkpoint": "use `tf.train.Checkpoint`",
    "util": "use `tf.get_static_value` and `tf.make_ndarray`",
    "tensor_forest": "use TensorFlow Decision Forests",
    "graph_editor": "no TF2 equivalent: rewrite the graph construction or vendor the code",
    "crf": "no TF2 equivalent ships with TensorFlow: vendor the code",
    "stateless": "use `tf.random.stateless_*`",
    "nn": "use `tf.nn` (most functions moved there) or vendor the code",
}

# contrib.layers functions with a TF2-native replacement of the same meaning, measured under
# TF 2.21: (target, how the arguments map). See _layers_fix.
LAYERS_HINTS = {
    "xavier_initializer": "`tf.compat.v1.glorot_uniform_initializer()` (one Keras 3 `GlorotUniform()` object returns the same values on every call), or `tf_slim.xavier_initializer`",
    "xavier_initializer_conv2d": "`tf.compat.v1.glorot_uniform_initializer()`, or `tf_slim.xavier_initializer_conv2d`",
    "l2_regularizer": "`tf.keras.regularizers.L2(scale / 2)` (TF1 computed scale * sum(w**2) / 2)",
    "l1_regularizer": "`tf.keras.regularizers.L1(scale)`",
    "variance_scaling_initializer": "`tf.keras.initializers.VarianceScaling` (mode and distribution are spelled differently)",
    "fully_connected": "a `tf.keras.layers.Dense` layer created once",
    "conv2d": "a `tf.keras.layers.Conv2D` layer created once",
    "layer_norm": "a `tf.keras.layers.LayerNormalization` layer created once",
    "batch_norm": "a `tf.keras.layers.BatchNormalization` layer created once",
    "flatten": "`tf.keras.layers.Flatten()` or `tf.reshape`",
    "dropout": "a `tf.keras.layers.Dropout` layer",
    "embed_sequence": "a `tf.keras.layers.Embedding` layer created once",
    # (tf-slim's copy fails under TF 2.21: `ops.IndexedSlices` / `ops.Tensor` are gone from TensorFlow)
    "optimize_loss": "the optimizer's own steps: `opt.compute_gradients(loss)`, the clipping, "
                     "`opt.apply_gradients(..., global_step=...)` (tf-slim's `optimize_loss` fails under TF 2.21)",
}

# contrib.layers names the tf-slim package keeps at its top level, as the same code (tf-slim is
# contrib.layers and contrib.slim moved out of TensorFlow; measured under TF 2.21 in graph mode).
SLIM_LAYERS = frozenset({
    "apply_regularization", "avg_pool2d", "batch_norm", "bias_add", "conv2d", "conv2d_transpose",
    "convolution2d", "convolution2d_transpose", "dropout", "flatten", "fully_connected",
    "l1_l2_regularizer", "l1_regularizer", "l2_regularizer", "layer_norm", "max_pool2d",
    "one_hot_encoding", "repeat", "separable_conv2d", "stack", "sum_regularizer",
    "variance_scaling_initializer", "xavier_initializer", "xavier_initializer_conv2d",
})

# tfe (contrib.eager) names TF2 keeps with the same meaning: target, safe?
EAGER = {
    "Variable": ("Variable", True),
    "GradientTape": ("GradientTape", True),
    "Checkpoint": ("train.Checkpoint", True),
    "py_func": ("py_function", True),
    "executing_eagerly": ("executing_eagerly", True),
    "defun": ("function", False),  # tf.function adds AutoGraph: may change Python control flow
}
EAGER_HINTS = {
    "enable_eager_execution": "eager execution is on by default in TF2: delete the call",
    "Iterator": "iterate the dataset directly (`for x in dataset` or `iter(dataset)`)",
    "gradients_function": "use `tf.GradientTape`",
    "value_and_gradients_function": "use `tf.GradientTape`",
    "implicit_gradients": "use `tf.GradientTape`",
    "implicit_value_and_gradients": "use `tf.GradientTape`",
    "Saver": "use `tf.train.Checkpoint`",
    "Network": "subclass `tf.keras.Model`",
    "num_gpus": "use `len(tf.config.list_physical_devices('GPU'))`",
    "metrics": "use `tf.keras.metrics`",
}


class Contrib(GoneApiRule):
    code = "TFM206"
    reads = (NameCounts, ProgramMode)
    CLAIMS = ("contrib",)

    def describe(self, ref: TF1Ref) -> Tuple[str, Optional[Fix]]:
        parts = ref.path.split(".")
        module = parts[1] if len(parts) > 1 else None
        name = spelled_gone(ref)
        gone = f"`{name}` was removed with `tf.contrib` (not in `tf.compat.v1` either)"
        if isinstance(ref, GoneRef) and ref.statement is not None:
            return self._import(ref, module, gone)
        if isinstance(ref, GoneRef) and ref.via_alias:
            # a use of an imported contrib module: short, the import line carries the guidance
            fix = self._usage_fix(ref, module, parts)
            hint = f"{fix.description[0].lower()}{fix.description[1:]}." if fix is not None else f"{self._hint(ref.path, module)}."
            return f"`{name}` comes from `tf.{'.'.join(parts[:2])}`, removed in TensorFlow 2: {hint}", fix
        fix = self._usage_fix(ref, module, parts)
        if fix is not None:
            return f"{gone}. {fix.description}.", fix
        hint = self._hint(ref.path, module)
        if module is None:
            return f"{gone}: replace it with a TF2 API or a maintained package. No automatic fix.", None
        return f"{gone}: {hint}. No automatic fix.", None

    # ------------------------------------------------------------------------------------
    def _hint(self, path: str, module: Optional[str]) -> str:
        parts = path.split(".")
        leaf = parts[2] if len(parts) > 2 else None
        replacement = api_table.replacement(path)
        if replacement is not None:
            return f"use `tf.{replacement['target']}`"
        if module == "layers" and leaf in LAYERS_HINTS:
            return f"use {LAYERS_HINTS[leaf]}"
        if module == "eager" and leaf in EAGER_HINTS:
            return EAGER_HINTS[leaf]
        if module == "eager" and leaf in EAGER:
            return f"use `tf.{EAGER[leaf][0]}`"
        return MODULES.get(module or "", "use a TF2 API or a maintained package instead")

    def _usage_fix(self, ref: TF1Ref, module: Optional[str], parts) -> Optional[Fix]:
        home = contrib_homes.usage_fix(self.ctx, ref)
        if home is not None:
            return home
        if ref.section == "contrib":  # TensorFlow's own rename, still resolving
            table_ref = TF1Ref(node=ref.node, path=ref.path, section="removed", entry=ref.entry, spelled_v1=False, call=ref.call)
            return _native_rename(self.ctx, table_ref)
        if parts == ["contrib", "layers"]:
            return self._layers_alias_fix(ref)
        if len(parts) != 3:
            return None
        leaf = parts[2]
        if module == "layers" and self.ctx.fact(ProgramMode).graph and leaf in SLIM_LAYERS:
            return contrib_homes.slim_fix(self.ctx, ref, leaf)
        if module == "layers":  # in eager code, tf-slim's stateless functions where TF2 has no spelling
            fix = _layers_fix(self.ctx, ref, leaf)
            if fix is None and leaf in contrib_homes.SLIM_STATELESS:
                return contrib_homes.slim_fix(self.ctx, ref, leaf)
            return fix
        if module == "eager" and leaf in EAGER:
            target, safe = EAGER[leaf]
            return _rename(self.ctx, ref.node, target, "safe" if safe else "unsafe")
        return None

    def _layers_alias_fix(self, ref: TF1Ref) -> Optional[Fix]:
        """`layers = tf.contrib.layers` at module level, every use of `layers` a name tf-slim keeps at
        its top level (`layers.fully_connected`): `layers = tf_slim`, in graph code (as `slim_fix`)."""
        if not self.ctx.fact(ProgramMode).graph:
            return None
        target = next((s.body[0].targets[0].target for s in self.ctx.module.body
                       if isinstance(s, cst.SimpleStatementLine) and len(s.body) == 1
                       and isinstance(s.body[0], cst.Assign) and s.body[0].value is ref.node
                       and len(s.body[0].targets) == 1 and isinstance(s.body[0].targets[0].target, cst.Name)), None)
        if target is None:
            return None
        alias = target.value
        uses: list = []

        class _Uses(cst.CSTVisitor):
            def visit_Attribute(self, node: cst.Attribute) -> Optional[bool]:
                if isinstance(node.value, cst.Name) and node.value.value == alias:
                    uses.append(node.attr.value)
                    return False
                return None

            def visit_Name(self, node: cst.Name) -> None:
                if node.value == alias and node is not target:
                    uses.append(None)  # (the alias used whole, or assigned again)

        self.ctx.module.visit(_Uses())
        if not uses or not all(use in SLIM_LAYERS for use in uses):
            return None
        module, imports = contrib_homes.slim_module(self.ctx)
        return Fix("safe", f"Replace with `{module}`, which keeps every name used through `{alias}` (the "
                           "same functions in the tf-slim package: `pip install tf-slim`)", (Replace(ref.node, cst.Name(module)),) + imports,
                   requires=("tf-slim",))

    def _import(self, ref: GoneRef, module: Optional[str], gone: str) -> Tuple[str, Optional[Fix]]:
        what = f"Importing `{spelled_gone(ref)}` fails under TensorFlow 2 (ModuleNotFoundError): `tf.contrib` was removed"
        hint = self._hint(ref.path, module)
        fix = remove_import_fix(self.ctx, ref, "Remove the import, no longer used (TF2-native)")
        if fix is not None:
            return f"{what}, and nothing here uses `{ref.local}` any more. Remove the import.", fix
        if module == "slim" and ref.path == "contrib.slim":
            return f"{what}: {hint}.", _slim_import_fix(ref)
        fix = contrib_homes.hparams_import_fix(self.ctx, ref) or contrib_homes.slim_module_import_fix(ref)
        if fix is not None:
            return f"{what}. {fix.description}.", fix
        return f"{what}: {hint}. No automatic fix.", None


def _rename(ctx, node, target: str, applicability: str, args=None, call=None) -> Fix:
    reference = ctx.names.spelling(target)
    new = reference.expression()
    if call is not None:
        edits = [Replace(call, call.with_changes(func=new, args=args if args is not None else call.args))]
    else:
        edits = [Replace(node, new)]
    edits.extend(reference.import_edits())
    return Fix(applicability, f"Replace with `{reference.code}` (TF2-native)", tuple(edits))


def _native_rename(ctx, ref: TF1Ref) -> Optional[Fix]:
    replacement = api_table.replacement(ref.path)
    if replacement is None:
        return None
    fix = generic_fix(ref, ctx)
    if fix is None:
        return None
    kind = "TF2-native" if replacement.get("native") else "compat.v1 fallback"
    return Fix(fix.applicability, f"Replace with `tf.{replacement['target']}` ({kind})", fix.edits)


def _number(node) -> Optional[float]:
    if isinstance(node, (cst.Float, cst.Integer)):
        return float(node.evaluated_value)
    return None


def _layers_fix(ctx, ref: TF1Ref, leaf: str) -> Optional[Fix]:
    """contrib.layers initializers and regularizers, measured under TF 2.21 with
    tf.compat.v1.get_variable in graph and eager mode and as Keras layer arguments."""
    call = ref.call
    if call is None or any(a.star for a in call.args):
        return None
    args = {(a.keyword.value if a.keyword else i): a for i, a in enumerate(call.args)}
    if leaf in ("xavier_initializer", "xavier_initializer_conv2d"):
        # TF1 signature (uniform=True, seed=None, dtype=float32); Glorot uniform is the same law
        uniform = args.get(0) or args.get("uniform")
        if uniform is not None and not (isinstance(uniform.value, cst.Name) and uniform.value.value == "True"):
            return None
        if set(args) - {0, "uniform", "seed", "dtype"}:
            return None
        # `tf.compat.v1.glorot_uniform_initializer` is the same law and, like TF1's, draws new
        # values on every call; one unseeded Keras 3 initializer object returns the same values
        # each call, so weights sharing it would start identical.
        new_args = joined(call, [a for key, a in args.items() if key in ("seed", "dtype")])
        fix = _rename(ctx, ref.node, "compat.v1.glorot_uniform_initializer", "safe", new_args, call)
        return Fix(fix.applicability, fix.description.replace("(TF2-native)", "(TF1's initializer: new values on every call)"), fix.edits)
    if leaf in ("l2_regularizer", "l1_regularizer"):
        # TF1: l2 = scale * sum(w**2) / 2, l1 = scale * sum(|w|); Keras: L2(l) = l * sum(w**2)
        if set(args) - {0, "scale"} or len(args) != 1:
            return None
        arg = args.get(0) or args["scale"]
        value = arg.value
        if leaf == "l2_regularizer":
            number = _number(value)
            if number is not None:
                value = cst.parse_expression(repr(number / 2))
            else:
                value = cst.BinaryOperation(
                    left=value.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()]) if isinstance(value, (cst.BinaryOperation, cst.BooleanOperation, cst.IfExp, cst.Lambda)) else value,
                    operator=cst.Divide(),
                    right=cst.Integer("2"),
                )
        target = "keras.regularizers.L2" if leaf == "l2_regularizer" else "keras.regularizers.L1"
        return _rename(ctx, ref.node, target, "safe", [cst.Arg(value=value)], call)
    return None


def _slim_import_fix(ref: GoneRef) -> Optional[Fix]:
    """`import tensorflow.contrib.slim as slim` / `from tensorflow.contrib import slim` ->
    `import tf_slim as slim`: unsafe, it needs the tf-slim package installed (measured: tf-slim
    1.1.0 builds conv2d/fully_connected under TF 2.21 in graph mode)."""
    stmt, alias = ref.statement, ref.alias
    if stmt is None or alias is None or len(stmt.names) != 1:
        return None
    new = cst.parse_statement(f"import tf_slim as {ref.local}\n").body[0]
    return Fix("safe", "Import the tf-slim package instead, the same code moved out of TensorFlow (`pip install tf-slim`)",
               (Replace(stmt, new),), requires=("tf-slim",))
