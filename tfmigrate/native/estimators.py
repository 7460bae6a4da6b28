"""Estimator programs as eager TF2 (issue 22, item 3): TF 2.21 has no `tf.estimator`, so a program
built on `tf.estimator.Estimator(model_fn)` cannot run at all until it is rewritten.

A `model_fn` is TF1 graph-building code, so it takes the model-mapping route (native.model_mapping):
it runs inside `TF1Model`, whose call is decorated with `track_tf1_style_variables`, and its
variables are made once with their TF1 names, whatever the mode. What only a graph could do leaves
the function:

    optimizer = tf.train.AdamOptimizer(params["rate"])       ->  def model_fn_optimizer(params):
    train_op = optimizer.minimize(loss, global_step=...)            return tf.keras.optimizers.Adam(...)
    acc = tf.metrics.accuracy(labels, classes)                ->  acc = accuracy_values(labels, classes)
    return tf.estimator.EstimatorSpec(mode, loss=loss, ...)   ->  return dict(loss=loss, ...)
    mode == tf.estimator.ModeKeys.PREDICT                     ->  mode == "infer"   (TF1's values)

(functions it calls that make variables are spelled for tracked code too and run inside the same
call), and `tf.estimator.Estimator(model_fn, params=p)` becomes `EagerEstimator(model_fn,
model_fn_optimizer, params=p)`, a class written into the module whose `train` / `evaluate` /
`predict` keep the Estimator's call sites and meaning: GradientTape steps with the train_op's
optimizer and a `global_step`, `steps` / `max_steps` / an exhausted input; each eval metric a
streaming mean over the whole eval set (TF1's `total / count`, in float32, as `tf.keras.metrics.Mean`
keeps it) and the loss the mean of the batch losses; one prediction per example.
`numpy_input_fn(x, y, batch_size, num_epochs, shuffle=False)` becomes
`from_tensor_slices((x, y)).repeat(num_epochs).batch(batch_size)`, the order TF1's queue gave
(measured under TF 2.15 with tensorflow-estimator), and an input_fn that returns
`ds.make_one_shot_iterator().get_next()` returns `ds` (the Estimator read the same elements).

Anything else that touches `tf.estimator` stops the rewrite with a Blocker that says what to do:
premade Estimators, `train_and_evaluate`, hooks, exports, a RunConfig beyond checkpoint and log
settings, shuffled numpy input (TF1 drew another order than `Dataset.shuffle` would).
"""
from __future__ import annotations

from typing import Dict, List, Optional, Set, Tuple

import libcst as cst

from tfmigrate.facts.names import ImportTable, dotted
from tfmigrate.facts.nodes import all_fields, is_node_type
from tfmigrate.fixers.compat_route import legacy_keras_switch
from tfmigrate.fixers.contrib_homes import ESTIMATOR_MODE_KEYS
import tfmigrate.native.model_mapping as model_mapping
from tfmigrate.native.optimizers import OPTIMIZERS, keras_optimizer
from tfmigrate.native.script import Blocked
from tfmigrate.native.syntax import bind, code, names_assigned, names_read

_ESTIMATOR_PARAMS = ("model_fn", "model_dir", "config", "params", "warm_start_from")
_SPEC_PARAMS = ("mode", "predictions", "loss", "train_op", "eval_metric_ops", "export_outputs",
                "training_chief_hooks", "training_hooks", "scaffold", "evaluation_hooks", "prediction_hooks")
_MINIMIZE_PARAMS = ("loss", "global_step", "var_list", "gate_gradients", "aggregation_method",
                    "colocate_gradients_with_ops", "name", "grad_loss")
_NUMPY_INPUT_PARAMS = ("x", "y", "batch_size", "num_epochs", "shuffle", "queue_capacity", "num_threads")
_MODEL_FN_ARGS = ("features", "labels", "mode", "params")
# RunConfig settings that only decide where and how often checkpoints and logs are written: the eager
# estimator keeps its state in memory and writes neither, so they are dropped.
_RUN_CONFIG_DROPPED = {"model_dir", "save_summary_steps", "save_checkpoints_steps", "save_checkpoints_secs",
                       "keep_checkpoint_max", "keep_checkpoint_every_n_hours", "log_step_count_steps"}
# The Estimator methods kept, and the arguments each may take (hooks and checkpoints are refused).
_METHODS = {
    "train": ("input_fn", "steps", "max_steps"),
    "evaluate": ("input_fn", "steps", "name"),
    "predict": ("input_fn", "predict_keys", "yield_single_examples"),
}
_METHOD_PARAMS = {
    "train": ("input_fn", "hooks", "steps", "max_steps", "saving_listeners"),
    "evaluate": ("input_fn", "steps", "hooks", "checkpoint_path", "name"),
    "predict": ("input_fn", "predict_keys", "hooks", "checkpoint_path", "yield_single_examples"),
}
_GLOBAL_STEP = ("train.get_global_step", "train.get_or_create_global_step")
_PREMADE_HOW = ("a premade Estimator (`tf.estimator.{leaf}`), which has no model_fn to rewrite: write the model "
                "as Keras layers (`tf.keras.Sequential` of `Dense` layers for the DNN and linear ones, "
                "feature columns as preprocessing layers) and train it with `model.fit`")

# One batch of each TF1 streaming metric handled: the values (and weights) its running mean adds.
# TF1 squeezed a trailing dimension of 1 off whichever of labels / predictions had one rank more.
_SQUEEZED = '''def squeezed(labels, predictions):
    """Labels and predictions of the same rank, as TF1's metrics made them (a last dimension of 1 dropped)."""
    difference = predictions.shape.rank - labels.shape.rank
    if difference == 1 and predictions.shape[-1] == 1:
        predictions = {tf}.squeeze(predictions, [-1])
    elif difference == -1 and labels.shape[-1] == 1:
        labels = {tf}.squeeze(labels, [-1])
    return labels, predictions
'''
_METRICS = {
    "metrics.accuracy": ("accuracy_values", ("labels", "predictions", "weights"), '''\
def accuracy_values(labels, predictions, weights=None):
    """One batch of TF1's `tf.metrics.accuracy`: 1.0 where the prediction is the label (in the label's dtype)."""
    labels, predictions = squeezed(labels, predictions)
    return {tf}.cast({tf}.equal({tf}.cast(predictions, labels.dtype), labels), {tf}.float32), weights
'''),
    "metrics.mean": ("mean_values", ("values", "weights"), '''\
def mean_values(values, weights=None):
    """One batch of TF1's `tf.metrics.mean`: the values themselves."""
    return {tf}.cast(values, {tf}.float32), weights
'''),
    "metrics.mean_squared_error": ("squared_error_values", ("labels", "predictions", "weights"), '''\
def squared_error_values(labels, predictions, weights=None):
    """One batch of TF1's `tf.metrics.mean_squared_error`: the squared differences."""
    labels, predictions = squeezed(labels, predictions)
    return {tf}.math.squared_difference(labels, predictions), weights
'''),
    "metrics.mean_absolute_error": ("absolute_error_values", ("labels", "predictions", "weights"), '''\
def absolute_error_values(labels, predictions, weights=None):
    """One batch of TF1's `tf.metrics.mean_absolute_error`: the absolute differences."""
    labels, predictions = squeezed(labels, predictions)
    return {tf}.abs(predictions - labels), weights
'''),
}

_ESTIMATOR_CLASS = '''class EagerEstimator:
    """`tf.estimator.Estimator(model_fn)` as eager TF2 (TF 2.21 has no `tf.estimator`), with the same
    `train`, `evaluate` and `predict`. The model_fn's TF1 code runs on TensorFlow's model-mapping route
    (`TF1Model`: its variables made once, with their TF1 names, in every mode); `train` takes
    GradientTape steps with the optimizer of its train_op and counts `global_step`; `evaluate` keeps
    each eval metric as TF1's streaming metric did (a float32 mean over the whole eval set) and the
    loss as the mean of the batch losses; `predict` yields one prediction per example. The state lives
    in this object: no checkpoint is written to, or resumed from, a model_dir."""

    def __init__(self, model_fn, optimizer_fn, params=None):
        self.model = TF1Model(model_fn)
        self.params = {{}} if params is None else params  # (the Estimator's default)
        self.optimizer = optimizer_fn(params)
        self.global_step = {tf}.Variable(0, dtype={tf}.int64, trainable=False, name="global_step")

    def _model_fn(self, features, labels, mode):
        return self.model({arguments})

    @staticmethod
    def _batches(input_fn):
        """(features, labels) of each batch, as the Estimator read them: a dataset's elements, a pair or
        the features alone; tensors that are not a dataset are the same batch at every step."""
        data = input_fn()
        if not isinstance(data, {tf}.data.Dataset):
            data = {tf}.data.Dataset.from_tensors(data).repeat()
        for element in data:
            yield tuple(element) if isinstance(element, (tuple, list)) else (element, None)

    @{tf}.function
    def _train_step(self, features, labels):
        with {tf}.GradientTape() as tape:
            loss = self._model_fn(features, labels, "train")["loss"]
        variables = self.model.trainable_variables
        gradients = tape.gradient(loss, variables)
        self.optimizer.apply_gradients([(g, v) for g, v in zip(gradients, variables) if g is not None])
        self.global_step.assign_add(1)
        return loss

    def train(self, input_fn, steps=None, max_steps=None):
        """Steps until `steps` were taken, `global_step` reaches `max_steps` or the input ends."""
        taken = 0
        if steps == 0 or (max_steps is not None and self.global_step.numpy() >= max_steps):
            return self
        for features, labels in self._batches(input_fn):
            self._train_step(features, labels)
            taken += 1
            if taken == steps or (max_steps is not None and self.global_step.numpy() >= max_steps):
                break
        return self

    @{tf}.function
    def _eval_step(self, features, labels):
        spec = self._model_fn(features, labels, "eval")
        return spec["loss"], spec.get("eval_metric_ops") or {{}}

    def evaluate(self, input_fn, steps=None, name=None):
        """The eval metrics, `loss` and `global_step` over the whole input (or its first `steps` batches)."""
        loss, metrics, taken = {tf}.keras.metrics.Mean(), {{}}, 0
        for features, labels in self._batches(input_fn):
            batch_loss, batch_metrics = self._eval_step(features, labels)
            loss.update_state(batch_loss)
            for key, (values, weights) in batch_metrics.items():
                metrics.setdefault(key, {tf}.keras.metrics.Mean()).update_state(values, weights)
            taken += 1
            if taken == steps:
                break
        results = {{key: metric.result().numpy() for key, metric in metrics.items()}}
        results.update(loss=loss.result().numpy(), global_step=self.global_step.numpy())
        return results

    @{tf}.function
    def _predict_step(self, features):
        return self._model_fn(features, None, "infer")["predictions"]

    def predict(self, input_fn, predict_keys=None, yield_single_examples=True):
        """The predictions of each example (of each batch with `yield_single_examples=False`), as numpy."""
        for features, _ in self._batches(input_fn):
            predictions = {tf}.nest.map_structure(lambda t: t.numpy(), self._predict_step(features))
            if isinstance(predictions, dict) and predict_keys is not None:
                predictions = {{key: predictions[key] for key in predict_keys}}
            if not yield_single_examples:
                yield predictions
            elif isinstance(predictions, dict):
                for i in range(len(next(iter(predictions.values())))):
                    yield {{key: value[i] for key, value in predictions.items()}}
            else:
                yield from predictions
'''


class _Adapter:
    """What native.model_mapping asks of a script, for a module whose only graph code is its model_fn."""

    def __init__(self, names: ImportTable, tf: str):
        self.names = names
        self.tf = tf
        self.builders: Dict[str, model_mapping.Builder] = {}
        self.sessions: Set[str] = set()

    def tf_call(self, node, *paths):
        if isinstance(node, cst.Call):
            path = self.names.api(node.func)
            if path is not None and (not paths or path in paths):
                return path
        return None

    def graph_names(self) -> Set[str]:
        return set()

    def variable_names(self) -> Set[str]:
        return set()

    def placeholder_names(self) -> Set[str]:
        return set()


def uses_estimator(module: cst.Module, source: str) -> bool:
    """The module spells some `tf.estimator` API (what the rewrite is about)."""
    if "estimator" not in source:
        return False
    names = ImportTable(module, source)
    return any(not _mode_key(path) for _, path in _estimator_refs(module, names))


def _mode_key(path: str) -> bool:
    """`tf.estimator.ModeKeys.X`: a string constant (TFM213 writes its value), no Estimator program."""
    return path.startswith("estimator.ModeKeys")


def _estimator_refs(module: cst.Module, names: ImportTable) -> List[Tuple[cst.CSTNode, str]]:
    """(outermost node, API path) of each `tf.estimator...` reference, in source order."""
    found: List[Tuple[cst.CSTNode, str]] = []

    class _Refs(cst.CSTVisitor):
        def visit_Attribute(self, node: cst.Attribute) -> Optional[bool]:
            path = names.api(node)
            if path is not None and (path == "estimator" or path.startswith("estimator.")):
                found.append((node, path))
                return False
            return None

        def visit_Name(self, node: cst.Name) -> None:
            path = names.api(node)
            if path is not None and (path == "estimator" or path.startswith("estimator.")):
                found.append((node, path))

        def visit_Import(self, node) -> bool:
            return False

        def visit_ImportFrom(self, node) -> bool:
            return False

    module.visit(_Refs())
    return found


def rewrite(module: cst.Module, source: str, line_of) -> Optional[str]:
    """The module with its Estimator as eager TF2; None when it uses no `tf.estimator`; Blocked
    with what stops it."""
    if "estimator" not in source:
        return None
    names = ImportTable(module, source)
    refs = _estimator_refs(module, names)
    if all(_mode_key(path) for _, path in refs):
        return None
    return _Rewrite(module, source, line_of, names, refs).text()


class _Rewrite:
    def __init__(self, module, source, line_of, names: ImportTable, refs):
        self.module = module
        self.source = source
        self.line_of = line_of
        self.names = names
        self.refs = refs
        aliases = names.tensorflow_aliases()
        if not aliases:
            raise Blocked(line_of(refs[0][0]), "`tf.estimator` imported other than through `import tensorflow as tf`")
        self.tf = aliases[0]
        self.estimator_imports = self._estimator_imports()
        self.parents: Dict[int, cst.CSTNode] = {}
        self._index_parents()
        self.functions = {node.name.value: node for node in module.body if isinstance(node, cst.FunctionDef)}
        self.replace: Dict[int, str] = {}  # id(node) -> its new code, outside the model_fn
        self.helpers: List[str] = []  # metric helpers the model_fn needs, in order
        self.helper_functions: Dict[int, cst.FunctionDef] = {}  # id(function it calls) -> spelled for tracked code
        self.dropped: Set[int] = set(self.estimator_imports)  # statements that go (`from tensorflow import estimator`)

    def _estimator_imports(self) -> Set[int]:
        """The top-level statements that import `tensorflow.estimator` alone (they fail under TF 2.21 and
        go with the Estimator); Blocked for one that imports it beside other names."""
        found: Set[int] = set()
        for stmt in self.module.body:
            if not isinstance(stmt, cst.SimpleStatementLine):
                continue
            for small in stmt.body:
                if isinstance(small, cst.ImportFrom) and not isinstance(small.names, cst.ImportStar):
                    base = dotted(small.module) if small.module is not None else ""
                    targets = [f"{base}.{dotted(alias.name)}" for alias in small.names]
                elif isinstance(small, cst.Import):
                    targets = [dotted(alias.name) for alias in small.names]
                else:
                    continue
                gone = [t for t in targets if _estimator_module(t)]
                if gone and (len(gone) != len(targets) or len(stmt.body) != 1):
                    raise Blocked(self.line_of(stmt), f"`{gone[0]}` imported beside other names: import it alone")
                if gone:
                    found.add(id(stmt))
        return found

    # -- the parts ----------------------------------------------------------------------------
    def _index_parents(self) -> None:
        """Every node's parent, read from the nodes' fields (formatting ones too: what
        `node.children` holds); libcst's visitor rebuilds every node, ten times the cost."""
        parents = self.parents
        todo: List[cst.CSTNode] = [self.module]
        while todo:
            node = todo.pop()
            for name in all_fields(type(node)):
                value = getattr(node, name)
                kind = type(value)
                if kind is list or kind is tuple:
                    for item in value:
                        if is_node_type(type(item)):
                            parents[id(item)] = node
                            todo.append(item)
                elif is_node_type(kind):
                    parents[id(value)] = node
                    todo.append(value)

    def parent(self, node: cst.CSTNode) -> Optional[cst.CSTNode]:
        return self.parents.get(id(node))

    def _call_of(self, ref: cst.CSTNode) -> Optional[cst.Call]:
        """The call whose function `ref` is."""
        up = self.parent(ref)
        return up if isinstance(up, cst.Call) and up.func is ref else None

    def text(self) -> str:
        estimators: List[Tuple[cst.Call, str]] = []  # (the Estimator call, the name it is kept in)
        numpy_inputs: List[cst.Call] = []
        configs: List[cst.Call] = []
        mode_keys: List[Tuple[cst.CSTNode, str]] = []
        specs: List[cst.Call] = []
        for node, path in self.refs:
            line = self.line_of(node)
            leaf = path.split(".")[-1]
            call = self._call_of(node)
            if path == "estimator.Estimator" and call is not None:
                estimators.append((call, self._kept_in(call, line)))
            elif path == "estimator.EstimatorSpec" and call is not None:
                specs.append(call)
            elif path.startswith("estimator.ModeKeys.") and leaf in ESTIMATOR_MODE_KEYS:
                mode_keys.append((node, ESTIMATOR_MODE_KEYS[leaf]))
            elif path == "estimator.inputs.numpy_input_fn" and call is not None:
                numpy_inputs.append(call)
            elif path == "estimator.RunConfig" and call is not None:
                configs.append(call)
            elif path == "estimator.train_and_evaluate":
                raise Blocked(line, "`tf.estimator.train_and_evaluate` (it evaluates while training, from the "
                                    "checkpoints of its TrainSpec / EvalSpec, and its RunConfig may distribute it): "
                                    "call `estimator.train(...)` then `estimator.evaluate(...)` instead")
            elif leaf.endswith(("Classifier", "Regressor", "Estimator")) and not leaf.startswith("Estimator"):
                raise Blocked(line, _PREMADE_HOW.format(leaf=path.split(".", 1)[1]))
            elif path.startswith("estimator.inputs."):
                raise Blocked(line, f"`tf.{path}`: build the input as a `tf.data.Dataset` "
                                    "(`tf.data.Dataset.from_tensor_slices`)")
            elif path.startswith("estimator.export"):
                raise Blocked(line, f"`tf.{path}` (serving exports): export the eager model with "
                                    "`tf.saved_model.save`")
            else:
                raise Blocked(line, f"`tf.{path}`, which `fix --native` does not rewrite (it rewrites "
                                    "`tf.estimator.Estimator` with a model_fn, `EstimatorSpec`, `ModeKeys`, "
                                    "`numpy_input_fn` and a RunConfig of checkpoint settings)")
        if not estimators:
            raise Blocked(self.line_of(self.refs[0][0]), "`tf.estimator` in a module that makes no "
                                                        "`tf.estimator.Estimator(model_fn)`: `fix --native` rewrites "
                                                        "a program whose model_fn and Estimator are in one file")
        model_fns = {self._model_fn_of(call) for call, _ in estimators}
        if len(model_fns) > 1:
            raise Blocked(self.line_of(estimators[1][0]), "Estimators of several model_fns in one module")
        model_fn = self.functions[model_fns.pop()]
        for call in specs:
            if not self._inside(call, model_fn):
                raise Blocked(self.line_of(call), "an `EstimatorSpec` outside the model_fn")
        for call, _ in estimators:
            self.replace[id(call)] = self._estimator(call, model_fn, configs)
        for config in configs:
            if not any(self._inside(config, call) for call, _ in estimators):
                raise Blocked(self.line_of(config), "a `RunConfig` kept apart from its Estimator: pass it as "
                                                    "`config=tf.estimator.RunConfig(...)`")
        kept = {name for _, name in estimators}
        self._uses_of(kept, model_fn)
        for call in numpy_inputs:
            self.replace[id(call)] = self._numpy_input(call)
        for node, value in mode_keys:
            if not self._inside(node, model_fn):
                self.replace[id(node)] = f'"{value}"'
        new_fn, optimizer = self._model_fn(model_fn, specs, mode_keys)
        return self._module(model_fn, new_fn, optimizer)

    def _inside(self, node: cst.CSTNode, outer: cst.CSTNode) -> bool:
        while node is not None:
            if node is outer:
                return True
            node = self.parent(node)
        return False

    def _kept_in(self, call: cst.Call, line: int) -> str:
        up = self.parent(call)
        if isinstance(up, cst.Assign) and len(up.targets) == 1 and isinstance(up.targets[0].target, cst.Name):
            return up.targets[0].target.value
        raise Blocked(line, "an Estimator that is not kept in a name (`estimator = tf.estimator.Estimator(...)`)")

    def _model_fn_of(self, call: cst.Call) -> str:
        line = self.line_of(call)
        bound = _bound(call, _ESTIMATOR_PARAMS, "an Estimator", line)
        model_fn = bound.get("model_fn")
        if not isinstance(model_fn, cst.Name) or model_fn.value not in self.functions:
            raise Blocked(line, "an Estimator whose model_fn is not a function defined at the module's top level")
        node = self.functions[model_fn.value]
        p = node.params
        if p.star_arg is not cst.MaybeSentinel.DEFAULT or p.star_kwarg is not None or p.posonly_params \
                or p.kwonly_params:
            raise Blocked(self.line_of(node), f"`{model_fn.value}`, a model_fn with `*args`, `**kwargs` or "
                                              "keyword-only parameters")
        args = [param.name.value for param in p.params]
        if "config" in args:
            raise Blocked(self.line_of(node), f"`{model_fn.value}`, a model_fn that reads the Estimator's `config`")
        if "features" not in args or set(args) - set(_MODEL_FN_ARGS):
            raise Blocked(self.line_of(node), f"`{model_fn.value}`, a model_fn whose parameters are not the "
                                              "Estimator's (`features`, `labels`, `mode`, `params`)")
        if "warm_start_from" in bound:
            raise Blocked(line, "an Estimator with `warm_start_from` (it restores another model's checkpoint)")
        return model_fn.value

    def _estimator(self, call: cst.Call, model_fn: cst.FunctionDef, configs: List[cst.Call]) -> str:
        bound = bind(call, _ESTIMATOR_PARAMS)
        config = bound.get("config")
        if config is not None:
            if not (isinstance(config, cst.Call) and any(config is c for c in configs)):
                raise Blocked(self.line_of(call), "an Estimator whose `config` is not a `tf.estimator.RunConfig(...)` "
                                                  "written in the call")
            try:
                settings = bind(config, ())
            except ValueError:
                settings = {"a positional argument": None}
            extra = sorted(set(settings) - _RUN_CONFIG_DROPPED)
            if extra:
                how = ("distribute the eager training loop with a `tf.distribute` strategy" if any(
                    "distribute" in key or key == "device_fn" for key in extra) else
                       "set it on the eager program itself (`tf.random.set_seed`, `tf.config`)")
                raise Blocked(self.line_of(config), f"a `RunConfig` with `{extra[0]}`, which the eager estimator "
                                                    f"has no place for: {how}")
        name = model_fn.name.value
        args = [name, f"{name}_optimizer"]
        if "params" in bound:
            args.append(f"params={code(bound['params'])}")
        return f"EagerEstimator({', '.join(args)})"

    def _uses_of(self, kept: Set[str], model_fn: cst.FunctionDef) -> None:
        """Every use of an Estimator is `train` / `evaluate` / `predict` with what they keep."""
        class _Uses(cst.CSTVisitor):
            def __init__(self, outer):
                self.outer = outer

            def visit_Name(self, node: cst.Name) -> None:
                if node.value not in kept:
                    return
                outer = self.outer
                up = outer.parent(node)
                if isinstance(up, cst.AssignTarget) or (isinstance(up, cst.Attribute) and up.attr is node):
                    return  # (`tf.estimator.X`: an attribute's name)
                line = outer.line_of(node)
                method = up.attr.value if isinstance(up, cst.Attribute) and up.value is node else None
                call = outer.parent(up) if method else None
                if method not in _METHODS or not (isinstance(call, cst.Call) and call.func is up):
                    what = f"`{node.value}.{method}`" if method else f"the Estimator `{node.value}` passed on"
                    how = ("export the eager model with `tf.saved_model.save`" if method and "export" in method else
                           "use its `train`, `evaluate` and `predict` only")
                    raise Blocked(line, f"{what}: an Estimator used other than by `train`, `evaluate` or `predict` "
                                        f"({how})")
                bound = _bound(call, _METHOD_PARAMS[method], f"`{node.value}.{method}(...)`", line)
                for key, value in bound.items():
                    if key not in _METHODS[method] and code(value) != "None":
                        what = "hooks" if "hooks" in key or key == "saving_listeners" else key
                        raise Blocked(line, f"`{node.value}.{method}(..., {key}=...)`: the eager estimator has no "
                                            f"{what}: " + ("run that code in the loop instead" if what == "hooks" else
                                                           "it keeps its variables in memory, not in checkpoints"))
                outer._input_fn(bound.get("input_fn"), line)

        self.module.visit(_Uses(self))

    def _input_fn(self, value: Optional[cst.BaseExpression], line: int) -> None:
        """An input_fn the eager estimator can call: a function of no parameters that returns a
        dataset (or tensors), never iterator tensors or placeholders."""
        if value is None:
            raise Blocked(line, "an Estimator method called without an `input_fn`")
        if isinstance(value, cst.Name) and value.value in self.functions:
            node = self.functions[value.value]
            if node.params.params or node.params.star_arg is not cst.MaybeSentinel.DEFAULT:
                raise Blocked(self.line_of(node), f"`{value.value}`, an input_fn that takes parameters "
                                                  "(the Estimator passed `params` / `mode` / `config`)")
            body = node
        elif isinstance(value, cst.Lambda):
            if value.params.params:
                raise Blocked(line, "an input_fn lambda that takes parameters")
            body = value
        else:
            return  # a name bound to numpy_input_fn(...) or another callable: what it returns is checked at run time
        if isinstance(body, cst.FunctionDef):
            for ret in _returns(body):
                dataset = self._iterated(ret.value)
                if dataset is not None:
                    self.replace[id(ret.value)] = code(dataset)
        text = code(body.visit(_Replace(self.replace)))
        for word in ("make_one_shot_iterator", "make_initializable_iterator", "get_next", "placeholder"):
            if word in text:
                raise Blocked(self.line_of(body), f"an input_fn that returns iterator tensors or placeholders "
                                                  f"(`{word}`): return the `tf.data.Dataset` itself")

    def _iterated(self, value) -> Optional[cst.BaseExpression]:
        """`ds` of `return ds.make_one_shot_iterator().get_next()` (or `tf.data.make_one_shot_iterator(ds)`):
        the Estimator read the dataset's elements either way, so the input_fn returns the dataset."""
        if not (isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute)
                and value.func.attr.value == "get_next" and not value.args):
            return None
        inner = value.func.value
        if not isinstance(inner, cst.Call):
            return None
        if isinstance(inner.func, cst.Attribute) and inner.func.attr.value == "make_one_shot_iterator" \
                and not inner.args and self.names.api(inner.func) is None:
            return inner.func.value
        if self.names.api(inner.func) == "data.make_one_shot_iterator" and len(inner.args) == 1 \
                and inner.args[0].keyword is None:
            return inner.args[0].value
        return None

    def _numpy_input(self, call: cst.Call) -> str:
        line = self.line_of(call)
        bound = _bound(call, _NUMPY_INPUT_PARAMS, "a `numpy_input_fn`", line)
        if "x" not in bound:
            raise Blocked(line, "a `numpy_input_fn` without `x`")
        shuffle = code(bound["shuffle"]) if "shuffle" in bound else None
        if shuffle != "False":
            raise Blocked(line, f"`numpy_input_fn(..., shuffle={shuffle})`: TF1 drew another order of examples than "
                                "`Dataset.shuffle` would, so the trained numbers would differ; pass `shuffle=False` "
                                "to have it rewritten, then add `.shuffle(buffer_size)` to the dataset if you want "
                                "it shuffled")
        threads = code(bound["num_threads"]) if "num_threads" in bound else "1"
        if threads != "1":
            raise Blocked(line, f"`numpy_input_fn(..., num_threads={threads})` (several threads filled TF1's queue "
                                "in no fixed order)")
        data = code(bound["x"]) if "y" not in bound else f"({code(bound['x'])}, {code(bound['y'])})"
        text = f"{self.tf}.data.Dataset.from_tensor_slices({data})"
        epochs = code(bound["num_epochs"]) if "num_epochs" in bound else "1"
        if epochs == "None":
            text += ".repeat()"
        elif epochs != "1":
            text += f".repeat({epochs})"
        text += f".batch({code(bound['batch_size']) if 'batch_size' in bound else '128'})"
        return f"lambda: {text}"

    # -- the model_fn ---------------------------------------------------------------------------
    def _model_fn(self, node: cst.FunctionDef, specs: List[cst.Call], mode_keys) -> Tuple[cst.FunctionDef, str]:
        """The model_fn without its train_op, metrics and EstimatorSpec, spelled for tracked code, and
        the Keras optimizer its train_op used."""
        name = node.name.value
        minimizes = [call for call in _calls(node) if isinstance(call.func, cst.Attribute)
                     and call.func.attr.value == "minimize"]
        if len(minimizes) != 1:
            raise Blocked(self.line_of(node), f"`{name}`, a model_fn whose train_op is not one "
                                              "`optimizer.minimize(loss, global_step=...)`")
        minimize = minimizes[0]
        line = self.line_of(minimize)
        bound = _bound(minimize, _MINIMIZE_PARAMS, "a `minimize`", line)
        extra = sorted(key for key in set(bound) - {"loss", "global_step", "name"} if code(bound[key]) != "None")
        if extra:
            raise Blocked(line, f"`minimize(..., {extra[0]}=...)`, which the eager training step does not keep")
        step = bound.get("global_step")
        removed: Set[int] = set()  # statements dropped from the function
        if isinstance(step, cst.Name):  # `global_step = tf.train.get_global_step()` read by `minimize` only
            step = self._assigned_once(node, step.value, removed, "global step")
        if not (isinstance(step, cst.Call) and self.names.api(step.func) in _GLOBAL_STEP):
            raise Blocked(line, "a `minimize` that does not count `tf.train.get_global_step()` "
                                "(the Estimator's steps and `max_steps` count it)")
        receiver = minimize.func.value
        if isinstance(receiver, cst.Call):
            optimizer_call = receiver
        elif isinstance(receiver, cst.Name):
            optimizer_call = self._assigned_once(node, receiver.value, removed, "optimizer")
        else:
            optimizer_call = None
        path = self.names.api(optimizer_call.func) if isinstance(optimizer_call, cst.Call) else None
        optimizer = keras_optimizer(optimizer_call, path, self.tf) if path in OPTIMIZERS else None
        if optimizer is None:
            raise Blocked(line, "a train_op whose optimizer is not a `tf.train` optimizer with a Keras equivalent "
                                "(GradientDescent, Momentum, Adam) made in the model_fn")
        takes_params = any(param.name.value == "params" for param in node.params.params)
        local = model_mapping.local_names(node) - {"params"} | ({"params"} if not takes_params else set())
        used = sorted(names_read(optimizer_call) & local)
        if used:
            what = ("the module's `params`, which the model_fn does not take" if used[0] == "params" else
                    f"`{used[0]}`, a value of the model_fn")
            raise Blocked(line, f"an optimizer made from {what} (it is made once, from the Estimator's `params` "
                                "and module-level values only)")
        train_op = None
        up = self.parent(minimize)
        if isinstance(up, cst.Assign):
            targets = up.targets
            if len(targets) != 1 or not isinstance(targets[0].target, cst.Name):
                raise Blocked(line, "a train_op assigned to several names")
            train_op = targets[0].target.value
            removed.add(id(self._alone(self.parent(up))))
        elif not (isinstance(up, cst.Arg) and up.keyword is not None and up.keyword.value == "train_op"):
            raise Blocked(line, "a `minimize` that is neither assigned to the train_op nor passed as `train_op=`")
        helpers: Dict[str, str] = {}
        dicts: Dict[int, object] = {}
        for spec in specs:
            dicts[id(spec)] = self._spec(spec, minimize, bound["loss"] if "loss" in bound else None, train_op)
        metrics: Dict[int, str] = {}
        for call in _calls(node):
            path = self.names.api(call.func)
            if path is None or not path.startswith("metrics."):
                continue
            if path not in _METRICS:
                raise Blocked(self.line_of(call), f"`tf.{path}`, a TF1 metric `fix --native` does not rewrite "
                                                  f"(it rewrites {', '.join('`tf.' + m + '`' for m in _METRICS)})")
            helper, params, template = _METRICS[path]
            args = _bound(call, params + ("metrics_collections", "updates_collections", "name"), f"`tf.{path}`",
                          self.line_of(call))
            up = self.parent(call)
            if not (isinstance(up, cst.DictElement) or (isinstance(up, cst.Assign) and len(up.targets) == 1
                                                         and isinstance(up.targets[0].target, cst.Name))):
                raise Blocked(self.line_of(call), f"`tf.{path}` whose (value, update_op) pair is used other than "
                                                  "as an eval metric")
            if any(key in args and code(args[key]) != "None" for key in ("metrics_collections", "updates_collections")):
                raise Blocked(self.line_of(call), f"`tf.{path}` with graph collections")
            if "squeezed" not in helpers and "labels" in params:
                helpers["squeezed"] = _SQUEEZED.format(tf=self.tf)
            helpers[helper] = template.format(tf=self.tf)
            metrics[id(call)] = f"{helper}({', '.join(code(args[p]) for p in params if p in args)})"
        self.helpers = list(helpers.values())
        keys = {id(n): v for n, v in mode_keys}
        new = node.visit(_ModelFn(self, removed, dicts, metrics, keys))
        adapter = _Adapter(self.names, self.tf)
        self._model_helpers(node, adapter)
        self._model_code(node, adapter, removed | set(dicts) | set(metrics))  # what stops it, at its line
        found = self._model_code(new, adapter)
        if found is None:
            raise Blocked(self.line_of(node), f"`{name}`, a model_fn that makes no variable")
        try:
            new = new.with_changes(body=new.body.visit(model_mapping.ToTracked(adapter, found)))
        except model_mapping.Refused as why:
            raise Blocked(self.line_of(node), str(why))
        return new, optimizer

    def _model_code(self, node: cst.FunctionDef, adapter: _Adapter, skip: Set[int] = frozenset()
                    ) -> Optional[model_mapping.Builder]:
        """The function as TF1 model code run inside the model_fn's one `TF1Model` (None: it makes no
        variable); Blocked for what that route cannot run. Unlike a script's model functions, the
        model_fn is one call per mode, and TF1 built each mode in a graph of its own whose variables the
        checkpoint matched by name: making them once, by name, is what the Estimator did, whatever their
        scopes."""
        name = node.name.value
        makes, variables = False, []
        for call, path, loops in _tf_calls(node.body, adapter, skip):
            if path is None:
                makes |= isinstance(call.func, cst.Name) and call.func.value in adapter.builders
                continue
            makes |= path.startswith(model_mapping.MAKES_VARIABLES) or path in model_mapping.SCOPES
            for prefix, what in model_mapping.REFUSED.items():
                if path.startswith(prefix):
                    raise Blocked(self.line_of(call), f"`{name}`, model code using {what} (`tf.{path}`)")
            if path == "Variable":
                if loops:
                    raise Blocked(self.line_of(call), f"`{name}`, model code that makes a `tf.Variable` in a loop")
                variables.append(call)
        if _has_global(node):
            raise Blocked(self.line_of(node), f"`{name}`, model code with `global`")
        if not makes:
            return None
        return model_mapping.Builder(name, node, True, [], True, variables)

    def _model_helpers(self, model_fn: cst.FunctionDef, adapter: _Adapter) -> None:
        """Top-level functions that make variables (`def dense_block(x): return tf.layers.dense(...)`),
        spelled for tracked code too: called from the model_fn (or from one another) they run inside its
        `TF1Model` call. Called from anywhere else, they would make their variables again."""
        blocked: Dict[str, Blocked] = {}
        for _ in range(len(self.functions)):  # until no function is found to make variables through another
            before = len(adapter.builders)
            for node in self.module.body:
                if not isinstance(node, cst.FunctionDef) or node is model_fn or node.name.value in adapter.builders:
                    continue
                try:
                    found = self._model_code(node, adapter)
                except Blocked as why:
                    blocked[node.name.value] = why
                    continue
                if found is not None:
                    adapter.builders[node.name.value] = found
            if len(adapter.builders) == before:
                break
        for node in [model_fn] + [b.node for b in adapter.builders.values()]:
            for name in sorted(names_read(node) & set(blocked)):
                raise blocked[name]
        model = [model_fn] + [b.node for b in adapter.builders.values()]
        for name in adapter.builders:
            for use in _names(self.module):
                if use.value == name and not any(self._inside(use, m) for m in model) \
                        and not isinstance(self.parent(use), (cst.FunctionDef, cst.Attribute)):
                    raise Blocked(self.line_of(use), f"`{name}`, a function that makes variables, used outside the "
                                                     "model_fn (its variables would be made again)")
        for found in adapter.builders.values():
            try:
                body = found.node.body.visit(model_mapping.ToTracked(adapter, found))
            except model_mapping.Refused as why:
                raise Blocked(self.line_of(found.node), str(why))
            self.helper_functions[id(found.node)] = found.node.with_changes(body=body)

    def _assigned_once(self, node: cst.FunctionDef, name: str, removed: Set[int], what: str) -> Optional[cst.Call]:
        """The value of the one statement `name = <call>` of the function (marked removed), if its
        only other use is in the `minimize` call (`what`: the name's role, for the message)."""
        found = []
        for stmt in _statements(node.body):
            for small in getattr(stmt, "body", ()):
                if isinstance(small, cst.Assign) and name in names_assigned(small):
                    found.append((stmt, small))
        if len(found) != 1 or len(found[0][1].targets) != 1 or not isinstance(found[0][1].targets[0].target, cst.Name):
            raise Blocked(self.line_of(node), f"the {what} `{name}` of the model_fn, assigned other than once")
        reads = [n for n in _names(node) if n.value == name and not isinstance(self.parent(n), cst.AssignTarget)
                 and not (isinstance(self.parent(n), cst.Attribute) and self.parent(n).attr is n)]
        if len(reads) != 1:
            raise Blocked(self.line_of(reads[1] if len(reads) > 1 else node),
                          f"the {what} `{name}` used other than by `minimize`")
        removed.add(id(self._alone(found[0][0])))
        return found[0][1].value if isinstance(found[0][1].value, cst.Call) else None

    def _alone(self, line: cst.SimpleStatementLine) -> cst.SimpleStatementLine:
        """A statement line the rewrite drops, when nothing else is on it."""
        if len(line.body) != 1:
            raise Blocked(self.line_of(line), "a train_op, optimizer or global step made beside other statements "
                                              "on one line")
        return line

    def _spec(self, spec: cst.Call, minimize: cst.Call, minimized, train_op: Optional[str]):
        """What of `EstimatorSpec(...)` the eager estimator reads (checked here, written by `_spec_text`
        from the call with its metrics already replaced)."""
        line = self.line_of(spec)
        bound = _bound(spec, _SPEC_PARAMS, "an `EstimatorSpec`", line)
        for key in ("training_chief_hooks", "training_hooks", "scaffold", "evaluation_hooks", "prediction_hooks"):
            if key in bound and code(bound[key]) != "None":
                raise Blocked(line, f"`EstimatorSpec({key}=...)`: the eager estimator has no hooks or scaffold; "
                                    "run that code in the loop instead")
        given = bound.get("train_op")
        if given is not None and code(given) != "None":
            if not (given is minimize or (isinstance(given, cst.Name) and given.value == train_op)):
                raise Blocked(line, "an `EstimatorSpec` whose train_op is not the model_fn's `minimize`")
            loss = bound.get("loss")
            if minimized is None or loss is None or code(loss) != code(minimized):
                raise Blocked(line, "a train_op that minimizes another loss than the EstimatorSpec's `loss`")
        return _spec_text


    # -- the module -----------------------------------------------------------------------------
    def _module(self, model_fn: cst.FunctionDef, new_fn: cst.FunctionDef, optimizer: str) -> str:
        tf = self.tf
        name = model_fn.name.value
        args = [param.name.value for param in model_fn.params.params]
        passed = {"features": "features", "labels": "labels", "mode": "mode", "params": "self.params"}
        arguments = ", ".join(f"{arg}={passed[arg]}" for arg in args)
        generated = []
        if "class TF1Model(" not in self.source:
            generated.append(model_mapping.TF1MODEL.format(tf=tf))
        generated += self.helpers
        generated.append(_ESTIMATOR_CLASS.format(tf=tf, arguments=arguments))
        factory = (f"def {name}_optimizer(params):\n"
                   f'    """The optimizer of `{name}`\'s train_op, made once: the Keras optimizer with TF1\'s '
                   f'update rule."""\n    return {optimizer}\n')
        first_tf = self._first_tf_import()
        legacy = "TF_USE_LEGACY_KERAS" not in self.source
        if legacy and first_tf is None:
            raise Blocked(1, "TensorFlow imported other than by a top-level import statement (the legacy "
                             "Keras switch the model_fn needs must come before it)")
        taken = set()
        for stmt in self.module.body:
            taken |= names_assigned(stmt)
        written = [f"{name}_optimizer", "EagerEstimator", "TF1Model"] + [h[4:h.index("(")] for h in self.helpers]
        clash = [n for n in written if n in taken]
        if clash:
            raise Blocked(1, f"`{clash[0]}`, a name of the module that the rewrite would write again")
        pieces: List[str] = []
        replace = _Replace(self.replace)
        for stmt in self.module.body:
            if legacy and stmt is first_tf:
                pieces.append(legacy_keras_switch(self.module, stmt))
            if id(stmt) in self.dropped:
                continue
            if id(stmt) in self.helper_functions:
                stmt = self.helper_functions[id(stmt)]
            if stmt is model_fn:
                pieces.append("".join(code(line) for line in stmt.leading_lines) if pieces else "")
                pieces.append("\n\n".join(generated) + "\n\n")
                pieces.append(code(new_fn.with_changes(leading_lines=[])))
                pieces.append("\n\n" + factory)
                continue
            pieces.append(code(stmt.visit(replace)))
        return "".join(code(line) for line in self.module.header) + "".join(pieces)

    def _first_tf_import(self):
        """The first statement of the import block TensorFlow's import is in (the legacy Keras switch goes
        above it: TF 2.21 reads it when TensorFlow loads)."""
        first = None
        for stmt in self.module.body:
            small = stmt.body[0] if isinstance(stmt, cst.SimpleStatementLine) else None
            if not isinstance(small, (cst.Import, cst.ImportFrom)):
                first = None
                continue
            modules = [dotted(a.name) for a in small.names] if isinstance(small, cst.Import) else [
                dotted(small.module) if small.module is not None else ""]
            if modules == ["__future__"]:
                continue
            first = first or stmt
            if any(m == "tensorflow" or (m or "").startswith("tensorflow.") for m in modules):
                return first
        return None


def _spec_text(spec: cst.Call) -> str:
    """`EstimatorSpec(mode, loss=..., train_op=..., ...)` as `dict(loss=..., predictions=..., eval_metric_ops=...)`."""
    bound = bind(spec, _SPEC_PARAMS)
    kept = [f"{key}={code(bound[key])}" for key in ("loss", "predictions", "eval_metric_ops")
            if key in bound and code(bound[key]) != "None"]
    return f"dict({', '.join(kept)})"


class _Replace(cst.CSTTransformer):
    """Nodes outside the model_fn replaced by their new code (Estimator, numpy_input_fn, ModeKeys)."""

    def __init__(self, replace: Dict[int, str]):
        self.replace = replace

    def on_leave(self, original, updated):
        if id(original) in self.replace:
            return cst.parse_expression(self.replace[id(original)])
        return updated


class _ModelFn(cst.CSTTransformer):
    """The model_fn's body: optimizer and train_op statements dropped, metrics and EstimatorSpec
    replaced, ModeKeys written as TF1's strings."""

    def __init__(self, outer: _Rewrite, removed: Set[int], dicts: Dict[int, object], metrics: Dict[int, str],
                 keys: Dict[int, str]):
        self.removed = removed
        self.new = {**dicts, **metrics, **{k: f'"{v}"' for k, v in keys.items()}}

    def on_leave(self, original, updated):
        if id(original) in self.removed:
            return cst.RemoveFromParent()
        if id(original) in self.new:
            new = self.new[id(original)]
            return cst.parse_expression(new if isinstance(new, str) else new(updated))
        return updated


def _estimator_module(path: str) -> bool:
    """`tensorflow.estimator` or `tensorflow.compat.v1.estimator` (or a name inside)."""
    parts = path.split(".")
    if parts[:3] == ["tensorflow", "compat", "v1"]:
        parts = ["tensorflow"] + parts[3:]
    return parts[:2] == ["tensorflow", "estimator"] or parts[:1] == ["tensorflow_estimator"]


_LOOPS = (cst.For, cst.While, cst.ListComp, cst.GeneratorExp, cst.DictComp, cst.SetComp)


def _tf_calls(node: cst.CSTNode, adapter: _Adapter, skip: Set[int] = frozenset(), loops: int = 0
              ) -> List[Tuple[cst.Call, Optional[str], int]]:
    """(call, its TensorFlow API path or None, how many loops and comprehensions hold it) of every
    call under `node`, outermost first, but those under a node of `skip` (by id)."""
    found: List[Tuple[cst.Call, Optional[str], int]] = []
    for child in node.children:
        if id(child) in skip:
            continue
        if isinstance(child, cst.Call):
            found.append((child, adapter.tf_call(child), loops))
        found += _tf_calls(child, adapter, skip, loops + isinstance(child, _LOOPS))
    return found


def _bound(call: cst.Call, params, what: str, line: int) -> Dict[str, cst.BaseExpression]:
    """The call's arguments by parameter (Blocked when `*args` or too many hide them)."""
    try:
        return bind(call, params)
    except ValueError as error:
        raise Blocked(line, f"{what} whose arguments cannot be read ({error})")


def _returns(node: cst.FunctionDef) -> List[cst.Return]:
    """The function's own `return` statements (not those of functions inside it)."""
    found: List[cst.Return] = []

    class _Returns(cst.CSTVisitor):
        def visit_FunctionDef(self, inner) -> bool:
            return inner is node

        def visit_Lambda(self, _node) -> bool:
            return False

        def visit_Return(self, ret: cst.Return) -> None:
            if ret.value is not None:
                found.append(ret)

    node.visit(_Returns())
    return found


def _has_global(node: cst.CSTNode) -> bool:
    found = []
    node.visit(type("Globals", (cst.CSTVisitor,), {"visit_Global": lambda self, n: found.append(n),
                                                     "visit_Nonlocal": lambda self, n: found.append(n)})())
    return bool(found)


def _calls(node: cst.CSTNode) -> List[cst.Call]:
    found: List[cst.Call] = []
    node.visit(type("Calls", (cst.CSTVisitor,), {"visit_Call": lambda self, call: found.append(call)})())
    return found


def _names(node: cst.CSTNode) -> List[cst.Name]:
    found: List[cst.Name] = []
    node.visit(type("Names", (cst.CSTVisitor,), {"visit_Name": lambda self, name: found.append(name)})())
    return found


def _statements(block) -> List[cst.CSTNode]:
    """Every statement in a block, nested blocks included."""
    found: List[cst.CSTNode] = []

    class _Statements(cst.CSTVisitor):
        def visit_SimpleStatementLine(self, node) -> None:
            found.append(node)

    block.visit(_Statements())
    return found
