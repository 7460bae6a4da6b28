"""A classified TF1 script (native.script) written out as eager TF2.

    x = tf.placeholder(tf.float32, [None, 1])          (gone: `x` is a parameter)
    h = tf.layers.dense(x, 10, tf.nn.relu)             h_layer = tf.keras.layers.Dense(10, tf.nn.relu)
    loss = tf.reduce_mean(tf.square(h - y))            @tf.function(input_signature=[...])
    train_op = opt.minimize(loss)              ->      def train_step(x, y):
    sess = tf.Session()                                    with tf.GradientTape() as tape:
    sess.run(tf.global_variables_initializer())               h = h_layer(x)
    _, l = sess.run([train_op, loss], {x: a, y: b})            loss = ...
                                                           variables = [*h_layer.trainable_variables]
                                                           gradients = tape.gradient(loss, variables)
                                                           opt.apply_gradients(zip(gradients, variables))
                                                           return None, loss
                                                       _, l = to_numpy(train_step(a, b))

One `tf.function` per distinct evaluation (fetches, feeds, and the graph statements they need, in
program order), defined just before the module-level statement that first evaluates it. State
(variables, Keras layers, optimizers) stays at module level, created once.
"""
from __future__ import annotations

import dataclasses
import sys
from typing import Dict, List, Optional, Sequence, Set, Tuple

import libcst as cst
import libcst.matchers as matchers

from tfmigrate.facts.graph_words import LEGACY_KERAS_SET, RNN_RUNNERS
from tfmigrate.facts.names import dotted
from tfmigrate.facts.program import LEGACY_KERAS_LINE
from tfmigrate.fixers import layers as layer_specs
from tfmigrate.fixers.arguments import joined, keyword
from tfmigrate.fixers.compat_route import legacy_keras_switch
import tfmigrate.native.batch_norm as batch_norm
import tfmigrate.native.checkpoints as checkpoints
import tfmigrate.native.imported_models as imported_models
import tfmigrate.native.model_mapping as model_mapping
from tfmigrate.native.optimizers import OPTIMIZERS, keras_optimizer
from tfmigrate.native.script import STEP_MAKERS, Blocked, Kind, RunSite, Script, Statement
from tfmigrate.native.syntax import found_in, assignments_in, bind, calls_in, code, name_nodes, names_read, returns_structure
from tfmigrate.native.tf2_spellings import NativeCalls

# The kernels of TF1's layers that `get_variable` initialized by default (Glorot uniform).
KERNELS = ("kernel_initializer", "depthwise_initializer", "pointwise_initializer")

TO_NUMPY = '''
def to_numpy(fetched):
    """What `sess.run` returned: numpy values, in the structure of the fetches."""
    return tf.nest.map_structure(lambda value: None if value is None else value.numpy(), fetched)
'''

WRITE_SUMMARIES = '''
def write_summaries(writer, summaries, step):
    """What `FileWriter.add_summary` wrote: each summary value the run returned, at `step`."""
    with writer.as_default():
        for key, value in summaries.items():
            kind, name = key.split(":", 1)
            getattr(tf.summary, kind)(name, value, step=step)
'''

_GET_VARIABLE = ("name", "shape", "dtype", "initializer", "regularizer", "trainable", "collections",
                 "caching_device", "partitioner", "validate_shape", "use_resource", "custom_getter",
                 "constraint", "synchronization", "aggregation")


class Function:
    def __init__(self, name: str, text: str):
        self.name = name
        self.text = text


class Emitter:
    def __init__(self, script: Script):
        self.script = script
        self.tf = script.tf
        self.functions: Dict[tuple, Function] = {}
        self.order = {id(s): i for i, s in enumerate(script.statements)}
        self._last = None  # the node of the last statement written (blank lines after a def)
        self.summaries_written = False
        self.optimizer_state_written = False  # checkpoints.OPTIMIZER_STATE
        # A feed built ahead in a variable named `feed_dict` is now a dict of arguments: renamed.
        self.renamed = {"feed_dict": script.fresh("feed")} if "feed_dict" in script.feed_dicts else {}
        self.helper_written = False
        self.unbuilt: List[Statement] = []  # graph statements making layers not yet built

    # -- module ---------------------------------------------------------------------------------
    def module(self) -> str:
        self.prepare()
        out = self._statements(self.script.body)
        head = self.script.module.header
        return "".join(code(line) for line in head) + joined_pieces(out)  # (an empty Module's code adds a newline)

    def prepare(self) -> None:
        """What the whole module's writing shares (native.entry_functions writes it in parts)."""
        self.legacy_keras_at, self.legacy_keras_after_os = self._legacy_keras_at() if not self._keras3 else (None, False)
        self.model_class_written = False
        given = {h: p for h, p in self.script.helper_placeholders.items() if p}
        self.pass_placeholders = _PassPlaceholders(given, self.script.builders) if given else None
        self.store_after = self._store_anchor()

    def _store_anchor(self) -> Optional[int]:
        """The top-level import the store of the project's model functions goes after (the last
        of the module's first imports; native.imported_models), None where there is no store."""
        if self.script.imported_store is None:
            return None
        anchor = None
        for statement in self.script.body:
            node = statement.node
            if isinstance(node, cst.SimpleStatementLine) and isinstance(node.body[0], (cst.Import, cst.ImportFrom)):
                anchor = id(node)
            elif not (isinstance(node, cst.SimpleStatementLine) and isinstance(node.body[0], cst.Expr)
                      and isinstance(node.body[0].value, cst.SimpleString)):
                break
        if anchor is None:
            raise Blocked(1, "the project's model functions, imported other than at the top of the module")
        return anchor

    def _store(self) -> List[str]:
        """The store the project's model functions run through, and its one object."""
        script = self.script
        return ["\n\n" + imported_models.store_text(self.tf) + "\n\n",
                f"{script.imported_store} = {imported_models.STORE_CLASS}("
                + ("" if script.imported_first_seed is None else str(script.imported_first_seed)) + ")\n"]

    def statements(self, statements: Sequence[Statement]) -> str:
        """The statements' eager code (after `prepare`)."""
        return joined_pieces(self._statements(statements))

    def _statements(self, statements: Sequence[Statement]) -> List[str]:
        out: List[str] = []
        for statement in statements:
            if statement.kind is Kind.BLOCK:
                node = statement.node
                header = code(node.with_changes(body=cst.IndentedBlock([cst.SimpleStatementLine([cst.Pass()])])))
                header = header[:header.rindex("pass")].rstrip(" ")  # the `if ...:` line, its comments
                indent = node.body.indent if node.body.indent is not None else "    "
                inner = "".join(self._statements(statement.children)).lstrip("\n") or "pass\n"
                out.append(header + "".join(indent + line if line.strip() else line
                                            for line in inner.splitlines(True)))
            else:
                lines = self._statement(statement)
                if id(statement.node) == self.store_after:
                    lines = lines + self._store()
                if lines and self.legacy_keras_at is not None:
                    lines = self._legacy_keras_lines(statement, lines)
                if lines and out and out[-1].rstrip().endswith(("\n", "")) and statement.kind is not Kind.HELPER \
                        and isinstance(self._last, (cst.FunctionDef, cst.ClassDef)) and not lines[0].startswith("\n"):
                    lines[0] = "\n\n" + lines[0]  # two blank lines after a function, as it had
                out += lines
                if lines:
                    self._last = statement.node
        return out

    def _legacy_keras_at(self) -> Tuple[Optional[int], bool]:
        """The module's first import (after `__future__`) when TensorFlow's comes in that block: the
        legacy Keras switch goes above the imports, as TF 2.21 serves `tf.compat.v1.nn.rnn_cell` from
        tf-keras only when it is set before TensorFlow loads (None: the module sets it already)."""
        if LEGACY_KERAS_SET.search(self.script.source):
            return None, False
        first, after_os = None, False
        standard = True  # only the standard library imported so far in the block: nothing loaded TensorFlow
        for statement in self.script.body:
            node = statement.node
            if not (isinstance(node, cst.SimpleStatementLine) and isinstance(node.body[0], (cst.Import, cst.ImportFrom))):
                first, after_os, standard = None, False, True  # code between: right above TensorFlow's import
                continue
            small = node.body[0]
            modules = [dotted(a.name) for a in small.names] if isinstance(small, cst.Import) else [
                dotted(small.module) if small.module is not None else ""]
            if modules == ["__future__"]:
                continue
            if standard and len(node.body) == 1 and isinstance(small, cst.Import) and modules == ["os"] \
                    and small.names[0].asname is None:
                first, after_os = id(node), True  # (below the module's own `import os`, not a second one)
            first = first or id(node)
            standard = standard and all((m or "").split(".")[0] in sys.stdlib_module_names for m in modules)
            if any(m == "tensorflow" or (m or "").startswith("tensorflow.") for m in modules):
                return first, after_os
        return None, False

    def _legacy_keras_lines(self, statement: Statement, lines: List[str]) -> List[str]:
        """`lines` (the statement's code) with the legacy Keras switch above, or below the
        module's `import os` where it is that statement."""
        if self.legacy_keras_at != id(statement.node):
            return lines
        if self.legacy_keras_after_os:
            return lines + [LEGACY_KERAS_LINE + "\n"]
        return [legacy_keras_switch(self.script.module, statement.node)] + lines

    def _configures_session(self, statement: Statement) -> bool:
        node = statement.node
        if not isinstance(node, cst.SimpleStatementLine) or not isinstance(node.body[0], cst.Assign):
            return False
        target = node.body[0].targets[0].target
        while isinstance(target, cst.Attribute):
            target = target.value
        return isinstance(target, cst.Name) and target.value in self.script.dead_configs

    def _statement(self, statement: Statement) -> List[str]:
        kind = statement.kind
        if kind in (Kind.OBJECT, Kind.PYTHON) and self._configures_session(statement):
            return []  # a Session's ConfigProto, set up: no Session in eager TF2
        if kind in (Kind.PLACEHOLDER, Kind.SESSION, Kind.INIT, Kind.DROP):
            return []
        if kind is Kind.VARIABLE:
            return self._build_layers_made_before() + [self._variable(statement)]
        if kind is Kind.OBJECT and self.script.tf_call(statement.node.body[0].value, *OPTIMIZERS):
            return [self._optimizer_line(statement.node, statement.node.body[0].value, statement.targets[0])]
        if kind is Kind.OBJECT and statement.summaries == []:  # `merge_all()` of no summary: None
            return [f"{statement.targets[0]} = None\n"]
        if kind is Kind.HELPER and isinstance(statement.node, cst.FunctionDef) \
                and statement.node.name.value in self.script.builders:
            return self._model_function(self.script.builders[statement.node.name.value])
        if kind is Kind.HELPER and isinstance(statement.node, cst.FunctionDef) \
                and self.script.helper_placeholders.get(statement.node.name.value):
            return [code(_given(statement.node, self.script.helper_placeholders[statement.node.name.value]))]
        if kind is Kind.OBJECT and set(statement.targets) & self.script.cells or kind is Kind.HELPER and isinstance(
                statement.node, cst.FunctionDef) and statement.node.name.value in self.script.cell_factories:
            return [code(statement.node.visit(NativeCalls(self.script)))]
        if kind in (Kind.OBJECT, Kind.HELPER):
            return [code(statement.node)]
        if kind is Kind.EAGER:
            return [self._eager(statement)]
        if kind is Kind.IMPORT_V1:
            small = statement.node.body[0]
            new = small.with_changes(names=[small.names[0].with_changes(name=cst.Name("tensorflow"))])
            return [code(statement.node.with_changes(body=[new]))]
        if kind is Kind.DATASET:
            return [] if statement.fed_dataset is not None else [code(statement.node)]
        if kind is Kind.ITERATOR and statement.fed_dataset is not None:
            return [self._dataset_function(statement)]  # the iterator: made where it is initialized
        if kind is Kind.ITERATOR:
            if statement.dataset is None:  # `Iterator.from_structure`: set where it is initialized
                return []
            return [f"{statement.targets[0]} = iter({code(statement.dataset)})\n"]
        if kind is Kind.NEXT and statement.dataset is not None:  # its iterator, unnamed in TF1
            return [f"{statement.iterator} = iter({code(statement.dataset)})\n"]
        if kind in (Kind.NEXT, Kind.ITERATOR_INIT):
            return []
        if kind is Kind.WRITER:
            return [self._writer(statement)]
        if kind is Kind.SAVER:
            self.unbuilt = []
            built = [self._build_variables(statement.reads, statement.deps, statement)] if statement.reads else []
            return built + [self._saver(statement)]
        if kind is Kind.GRAPH and statement.schedule is not None:
            return [self._schedule(statement)]
        if kind is Kind.GRAPH:
            dtype = self.script.layer_dtype(statement) if statement.layers else None
            out = [self._layer_line(layer, dtype) for layer in statement.layers if not layer.reused]
            if out and statement.targets:
                self.unbuilt.append(statement)
            if statement.metric is not None:  # TF1's two local variables of the running mean
                out += [f"{name} = {self.tf}.Variable(0.0, trainable=False)\n"
                        for name in (statement.metric.total, statement.metric.count)]
            return out
        if kind is Kind.TRAIN:
            if statement.optimizer_name:
                optimizer = self._keras_optimizer(statement.optimizer, statement.optimizer_name)
                return [f"{statement.optimizer_name} = {optimizer}\n"]
            return []
        out: List[str] = []
        replacements = {}
        assigned = {id(a.value): a for a in assignments_in(statement.node)} if statement.sites else {}
        sliced = {id(n.value): n for n in found_in(statement.node, "visit_Subscript")} if statement.sites else {}
        for site in statement.sites:
            site, target = self._unpacked(assigned.get(id(site.call)), site)
            subscript, site = self._sliced(sliced.get(id(site.call)), site)
            call, definition = self._site(site)
            replacements[id(site.call)] = call
            if subscript is not None:
                replacements[id(subscript)] = call
            if target is not None:
                replacements[id(target[0])] = target[1]
            if definition:
                out.append(definition)
        tf = self.tf
        for call_id, logdir in self.script.writers.items():
            replacements[call_id] = cst.parse_expression(f"{tf}.summary.create_file_writer({code(logdir)})")
        for call_id, call in self.script.add_summaries.items():
            writer = code(call.func.value)
            replacements[call_id] = cst.parse_expression(
                f"write_summaries({writer}, {code(call.args[0].value)}, {code(call.args[1].value)})")
            if not self.summaries_written and any(id(c) == call_id for c in calls_in(statement.node)):
                out.append("\n" + WRITE_SUMMARIES + "\n\n")  # (before the first statement that writes)
                self.summaries_written = True
        for site in statement.shapes:
            expression, definition = self._shape(site)
            replacements[id(site.call)] = expression
            if definition:
                out.append(definition)
        for site in statement.values:
            expression, definition = self._value(site)
            replacements[id(site.call)] = expression
            if definition:
                out.append(definition)
        if statement.values:
            names = ", ".join(f"`{n}`" for n in dict.fromkeys(s.fetched[0] for s in statement.values))
            out.append(f"# tfmigrate: {names} computed here, eagerly: printed, a value (`tf.Tensor(...)`), "
                       "no longer TF1's `Tensor(\"name:0\", ...)`\n")
        for call_id, call in self.script.saver_calls.items():  # no session: the eager saver's
            replacements[call_id] = call.with_changes(args=[call.args[0].with_changes(value=cst.Name("None")),
                                                            *call.args[1:]])
        for call_id, (iterator, dataset) in self.script.restarts.items():
            replacements[call_id] = cst.parse_statement(f"{iterator} = iter({code(dataset)})\n").body[0]
        for call_id, call in self.script.session_args.items():  # `evaluate(sess, X)` -> `evaluate(X)`
            replacements[call_id] = call
        node = statement.node
        if isinstance(node, cst.FunctionDef) and self.script.run_helpers.get(node.name.value) is not None:
            replacements[id(node.params)] = self.script.run_helpers[node.name.value]  # (its Session: none eagerly)
        for key in self.script.feed_set_keys:  # `feed[x] = a` -> `feed["x"] = a`
            replacements[id(key)] = cst.SimpleString(repr(key.value))
        for literal in self.script.feed_literals:
            replacements[id(literal)] = literal.with_changes(elements=[
                e.with_changes(key=cst.SimpleString(repr(e.key.value))) for e in literal.elements])
        node = statement.node
        if replacements:
            node = node.visit(_Replace(replacements))
        if self.renamed:
            node = node.visit(_Rename(self.renamed))
        out.append(code(node))
        return out

    def _model_function(self, builder: model_mapping.Builder) -> List[str]:
        """The TF1 model function kept, made tracked (model_mapping), and the objects its calls
        go through, right after it."""
        out = []
        if not self.model_class_written:
            scoped = any(model_mapping.object_scopes(b) for b in self.script.builders.values())
            text = model_mapping.TF1MODEL_SCOPED if scoped else model_mapping.TF1MODEL
            out.append("\n\n" + text.format(tf=self.tf))
            if self.script.regularizations:
                from tfmigrate.native.tf2_spellings import REGULARIZATION_LOSSES

                out.append(REGULARIZATION_LOSSES)
            self.model_class_written = True
        try:
            node = builder.node.visit(model_mapping.ToTracked(self.script, builder))
        except model_mapping.Refused as why:
            raise Blocked(self.script.line_of(builder.node), str(why))
        out.append(code(_given(node, builder.module_placeholders)))
        objects = list(dict.fromkeys(builder.objects.values()))
        if builder.seeded and len(objects) > 1:
            raise Blocked(self.script.line_of(builder.node), (
                f"`{builder.name}`, a model function drawing a variable's initial value with `tf.{builder.seeded}(seed=...)`, "
                f"made as {len(objects)} objects (TF1 started each op's sequence again and drew the same numbers; "
                "eagerly, ops of one kind and seed continue one sequence)"))
        if objects:
            scopes = model_mapping.object_scopes(builder)
            out.append("\n\n" + "".join(f"{name} = TF1Model({builder.name}, scope=\"{scopes[name]}\")\n"
                                          if name in scopes else f"{name} = TF1Model({builder.name})\n"
                                          for name in objects))
        return out

    def _dataset_function(self, iterator: Statement) -> str:
        """The dataset TF1 built from placeholders, as a function of the values they are fed."""
        fed = iterator.fed_dataset
        names = ", ".join(f"`{n}`" for n in fed.placeholders)
        body = "".join(code(s.node.with_changes(leading_lines=[])) for s in fed.statements)
        lines = "".join("    " + line if line.strip() else line for line in body.splitlines(True))
        return (f"\n\ndef {fed.function}({', '.join(fed.placeholders)}):\n"
                f'    """The dataset TF1 built from {names}, fed when its iterator was initialized: of these values."""\n'
                f"{lines}    return {code(iterator.dataset)}\n\n\n")

    def _schedule(self, statement: Statement) -> str:
        """`lr = tf.train.exponential_decay(...)` as its eager form, a function of the step variable
        (`tf.compat.v1.train.exponential_decay` returns one when executing eagerly), made once."""
        line = statement.node
        assign = line.body[0]
        call = assign.value
        new = call.with_changes(func=cst.parse_expression(f"{self.tf}.compat.v1.{self.script.tf_call(call)}"))
        new = new.visit(NativeCalls(self.script))
        return code(line.with_changes(body=[assign.with_changes(
            targets=[cst.AssignTarget(cst.Name(statement.schedule))], value=new)]))

    def _optimizer_line(self, line: cst.SimpleStatementLine, call: cst.Call, name: str) -> str:
        new = cst.parse_expression(self._keras_optimizer(call, name))
        return code(line.with_changes(body=[line.body[0].with_changes(value=new)]))

    def _keras_optimizer(self, call: cst.Call, name: str) -> str:
        """The Keras optimizer with TF1's update rule, or TF1's own where a Saver saves its state
        (checkpoints: TF1's slot names, which the Keras one has not)."""
        path = self.script.tf_call(call)
        if name in self.script.tf1_optimizers:  # (its learning rate: a schedule's eager function)
            call = call.visit(_Rename({n: s.schedule for n, s in self.script.schedules.items()}))
            return code(call.with_changes(func=cst.parse_expression(f"{self.tf}.compat.v1.{path}")))
        return keras_optimizer(call, path, self.tf)

    def _eager(self, statement: Statement) -> str:
        call = statement.node.body[0].value
        if self.script.tf_call(call) == "set_random_seed":
            new = call.with_changes(func=cst.parse_expression(f"{self.tf}.random.set_seed"))
            return code(statement.node.with_changes(body=[statement.node.body[0].with_changes(value=new)]))
        return code(statement.node)

    def _writer(self, statement: Statement) -> str:
        assign = statement.node.body[0]
        logdir = assign.value.args[0].value
        new = cst.parse_expression(f"{self.tf}.summary.create_file_writer({code(logdir)})")
        return code(statement.node.with_changes(body=[assign.with_changes(value=new)]))

    def _saver(self, statement: Statement) -> str:
        """TF1's Saver as a name-based saver of the same variables under the same names: it
        restores what the TF1 program saved, and what it saves, the TF1 program restores."""
        assign = statement.node.body[0]
        call = assign.value
        names = cst.parse_expression(statement.saved.var_list(
            self._keras3, lambda builder, call_id: self.script.builders[builder].objects[call_id]))
        kept = [a for i, a in enumerate(call.args)  # (a `var_list` of its own: written anew, by TF1 name)
                if not (a.keyword is not None and a.keyword.value == "var_list" or a.keyword is None and i == 0)]
        new = call.with_changes(func=cst.parse_expression(f"{self.tf}.compat.v1.train.Saver"), args=joined(
            call, [keyword("var_list", names), *kept]))
        helper = ""
        if statement.saved.optimizers and not self.optimizer_state_written:
            helper, self.optimizer_state_written = checkpoints.OPTIMIZER_STATE, True
        return helper + code(statement.node.with_changes(body=[assign.with_changes(value=new)]))

    @property
    def _keras3(self) -> bool:
        """Whether layers are Keras 3's (else tf-keras's, for RNN cells and model functions, and
        where the module draws TF1's numbers: tf-keras's `Dense` is the class TF1's `tf.layers.dense`
        ran, where Keras 3's sums its bias gradient in another order and the last digits drift;
        501_dropout's unregularised net, 500 Adam steps: loss 0.1622 against TF1's 0.1594)."""
        return not (self.script.cells or self.script.builders or self.script.pinned)

    def _layer_line(self, layer, dtype: Optional[cst.BaseExpression] = None) -> str:
        """The Keras layer, with TF1's kernel initializer and, where TF1's took another dtype from
        its data than float32, that dtype."""
        mapped = layer.mapped
        ref = cst.parse_expression(f"{self.tf}.keras.layers.{layer.mapped.spec.cls}")
        extra = self._tf1_initializers(mapped) + ([keyword("dtype", dtype)] if dtype is not None else [])
        mapped = layer_specs.Mapped(mapped.spec, mapped.inputs, mapped.ctor_args + extra, mapped.call_args, mapped.name)
        ctor = layer_specs.constructor(ref, mapped, layer.call, multiline=False)
        return f"{layer.name} = {code(ctor)}\n"

    def _tf1_initializers(self, mapped) -> List[cst.Arg]:
        """TF1's layers drew their kernels from `get_variable`'s default, Glorot uniform by a
        random op of the graph; Keras's own Glorot draws from Keras's seeds instead, outside
        `DeterministicRandomTestTool`, so the proof of equal numbers needs TF1's initializer."""
        given = {a.keyword.value for a in mapped.ctor_args if a.keyword is not None}
        given |= set(mapped.spec.keras_order[:sum(a.keyword is None for a in mapped.ctor_args)])
        return [keyword(name, cst.parse_expression(f"{self.tf}.compat.v1.glorot_uniform_initializer()"))
                for name in KERNELS if name in mapped.spec.params and name not in given]

    def _variable(self, statement: Statement) -> str:
        line = statement.node
        assign = line.body[0]
        call = assign.value
        if self.script.runs_anew and self.script.tf_call(call, *STEP_MAKERS):
            # (eagerly `get_or_create_global_step()` finds the step an earlier run made: TF1's new
            # graph made a new one)
            tf = self.tf
            return f"{code(assign.targets[0].target)} = {tf}.Variable(0, dtype={tf}.int64, trainable=False, " \
                   'name="global_step")\n'
        if self.script.tf_call(call) != "get_variable":
            return code(line)
        try:
            bound = bind(call, _GET_VARIABLE)
        except ValueError as why:
            raise Blocked(statement.line, f"`get_variable`: {why}")
        allowed = {"name", "shape", "dtype", "initializer", "trainable"}
        extra = sorted(set(bound) - allowed)
        if extra:
            raise Blocked(statement.line, f"`get_variable({extra[0]}=...)`")
        tf = self.tf
        dtype = code(bound["dtype"]) if "dtype" in bound else f"{tf}.float32"
        init = bound.get("initializer")
        shape = bound.get("shape")
        if init is None:
            if shape is None:
                raise Blocked(statement.line, "`get_variable` without a shape or an initializer")
            # (TF1's default; TensorFlow's own initializer draws from the program's seed, where
            # Keras 3's GlorotUniform() draws other numbers at each run whatever the seed)
            value = f"{tf}.compat.v1.glorot_uniform_initializer()({code(shape)}, dtype={dtype})"
        elif self._is_initializer(init):
            if shape is None:
                raise Blocked(statement.line, "`get_variable` with an initializer and no shape")
            filled = self.script.tf_call(init, "zeros_initializer", "ones_initializer")
            if filled and not init.args:  # `tf.zeros([H])`, as a TF2 engineer writes it
                value = f"{tf}.{filled.split('_')[0]}({code(shape)}, dtype={dtype})"
            else:
                path = self.script.tf_call(init)
                if self.script.pinned and path is not None and path.startswith(("random_", "truncated_")):
                    # (TF1's op seed: TF2's `tf.random_uniform_initializer(seed=n)` draws statelessly, others)
                    init = init.with_changes(func=cst.parse_expression(f"{tf}.compat.v1.{path}"))
                value = f"{code(init)}({code(shape)}, dtype={dtype})"
        else:
            if shape is not None:
                raise Blocked(statement.line, "`get_variable` with a value and a shape")
            value = code(init)
            if "dtype" in bound:
                value = f"{tf}.cast({value}, {dtype})"
        args = [value]
        if "name" in bound:
            args.append(f"name={code(bound['name'])}")
        if "trainable" in bound:
            args.append(f"trainable={code(bound['trainable'])}")
        target = code(assign.targets[0].target)
        comments = "".join(code(empty) for empty in line.leading_lines)
        return f"{comments}{target} = {tf}.Variable({', '.join(args)})\n"

    def _is_initializer(self, node) -> bool:
        if isinstance(node, cst.Name):
            return self.script.kinds.get(node.value) is Kind.OBJECT
        path = self.script.tf_call(node)
        return bool(path) and (path.endswith("_initializer") or path.startswith("keras.initializers"))

    # -- run sites ------------------------------------------------------------------------------
    def _site(self, site: RunSite) -> Tuple[cst.BaseExpression, Optional[str]]:
        defs = site.defs
        read = self._variables_read(site)
        if read is not None:
            return cst.parse_expression(read), None
        body, ordered_params = self._closure(site)
        args = []
        given: Dict[str, str] = {}
        for param in ordered_params:
            name = param.targets[0]
            if param.kind is Kind.NEXT:
                fed = [n for n in param.targets if n in site.feeds]
                if len(fed) == len(param.targets):
                    args += [code(site.feeds[n]) for n in param.targets]
                elif fed:
                    raise Blocked(site.line, f"a feed of `{fed[0]}` without the rest of its `get_next()`")
                else:
                    star = "*" if len(param.targets) > 1 else ""
                    args.append(f"{star}{param.iterator}.get_next()")
            elif name in site.feeds and param.sparse:  # what TF1 took: a SparseTensorValue or a tuple
                args.append(f"{self.tf}.SparseTensor(*{code(site.feeds[name])})")
            elif name in site.feeds:
                args.append(code(site.feeds[name]))
            elif param.default is not None:
                args.append(code(param.default))
            else:
                raise Blocked(site.line, f"the placeholder `{name}` is not fed")
            given[name] = args[-1]
        batch_norm.check_run(self.script, site, body, given.get, Blocked)
        function, definition_text = self._cached_function(site, body, ordered_params)
        if definition_text is not None:
            if not self.helper_written and self._multi(site) and site.outer is None:
                definition_text = "\n" + TO_NUMPY + definition_text
                self.helper_written = True
        call = f"{function.name}({', '.join(args)})"
        trains = [n for n in site.fetched if defs[n].kind is Kind.TRAIN or self._is_op(defs[n])]
        if isinstance(site.call.func, cst.Attribute) and site.call.func.attr.value == "run" \
                and not (isinstance(site.call.func.value, cst.Name) and site.call.func.value.value in self.script.sessions):
            trains = [site.fetched[0]]  # `op.run()` returns None
        if site.outer is not None:
            return self._outer(site, call), definition_text
        if self._multi(site):  # the first function of a multi-fetch wrote `to_numpy` above it
            call = f"to_numpy({call})"
        elif not (isinstance(site.fetches, cst.Name) and site.fetches.value in trains):
            call = f"{call}.numpy()"
        return cst.parse_expression(call), definition_text

    def _outer(self, site: RunSite, call: str) -> cst.BaseExpression:
        """The fetched expression of tensors and Python values, computed eagerly on the tensors
        the run's function returned (`call`): each computed once, as in TF1's run."""
        names = site.fetched
        read = [node for node in name_nodes(site.outer) if node.value == names[0]]
        if len(names) == 1 and len(read) == 1:
            inner = site.outer.visit(_Replace({id(read[0]): cst.parse_expression(call)}))
            return cst.parse_expression(f"({code(inner)}).numpy()")
        star = "*" if len(names) > 1 else ""
        return cst.parse_expression(f"(lambda {', '.join(names)}: {code(site.outer)})({star}{call}).numpy()")

    def _unpacked(self, assign: Optional[cst.Assign], site: RunSite):
        """`_, l = sess.run([train_op, loss], feed)` (`assign`, the assignment of the run's result,
        if any): the train op's None is not returned at all, `l = train_step(...)` with the function
        returning `loss` (and the new assignment target)."""
        fetches = site.fetches
        if not isinstance(fetches, (cst.List, cst.Tuple)) or assign is None or len(assign.targets) != 1:
            return site, None
        target = assign.targets[0].target
        if not isinstance(target, (cst.List, cst.Tuple)) or len(target.elements) != len(fetches.elements) or any(
                isinstance(e, (cst.StarredElement,)) for e in (*target.elements, *fetches.elements)):
            return site, None

        def dropped(name, fetch) -> bool:
            return isinstance(name, cst.Name) and name.value == "_" and isinstance(fetch, cst.Name) and (
                site.defs[fetch.value].kind is Kind.TRAIN or self._is_op(site.defs[fetch.value]))

        kept = [(t.value, f.value) for t, f in zip(target.elements, fetches.elements) if not dropped(t.value, f.value)]
        if len(kept) in (0, len(fetches.elements)):
            return site, None
        if len(kept) == 1:
            new_target, new_fetches = kept[0]
        else:
            new_target = target.with_changes(elements=[cst.Element(t) for t, _ in kept])
            new_fetches = fetches.with_changes(elements=[cst.Element(f) for _, f in kept])
        return dataclasses.replace(site, fetches=new_fetches), (assign.targets[0], assign.targets[0].with_changes(
            target=new_target))

    def _sliced(self, subscript: Optional[cst.Subscript], site: RunSite):
        """`sess.run([out, loss, train_d, train_g], feed)[:2]` (`subscript`, the run's result
        subscripted, if it is): the train ops' Nones cut off by the slice are not returned at
        all, and the slice goes. (None, site) when it is not that."""
        fetches = site.fetches
        if subscript is None or not isinstance(fetches, (cst.List, cst.Tuple)) or len(subscript.slice) != 1:
            return None, site
        piece = subscript.slice[0].slice
        if not isinstance(piece, cst.Slice) or piece.lower is not None or piece.step is not None \
                or not isinstance(piece.upper, cst.Integer):
            return None, site
        kept = int(piece.upper.value)
        elements = fetches.elements
        if not 0 < kept < len(elements) or any(isinstance(e, cst.StarredElement) for e in elements):
            return None, site

        def op(element) -> bool:
            value = element.value
            return isinstance(value, cst.Name) and value.value in site.defs and (
                site.defs[value.value].kind is Kind.TRAIN or self._is_op(site.defs[value.value]))

        if not all(op(e) for e in elements[kept:]) or any(op(e) for e in elements[:kept]):
            return None, site
        new = fetches.with_changes(elements=[e.with_changes(comma=cst.MaybeSentinel.DEFAULT) for e in elements[:kept]])
        return subscript, dataclasses.replace(site, fetches=new)

    def _closure(self, site: RunSite) -> Tuple[List[Statement], List[Statement]]:
        """The graph statements a run needs (program order) and the inputs it takes."""
        defs = site.defs
        included: Dict[int, Statement] = {}
        params: Dict[int, Statement] = {}
        todo = []
        for name in site.fetched:
            if name not in defs:
                raise Blocked(site.line, f"`{name}` is fetched before it is defined")
            todo.append(defs[name])
        fed = {id(defs[name]) for name in site.feeds if name in defs and defs[name].kind is Kind.GRAPH}
        optional = {id(defs[name]) for name in site.optional}
        while todo:
            definition = todo.pop()
            if definition.kind in (Kind.PLACEHOLDER, Kind.NEXT) or id(definition) in fed:
                params[id(definition)] = definition  # fed: its value is an argument
                if id(definition) in optional and id(definition) not in included:
                    included[id(definition)] = definition  # ... computed when it is None
                    todo += list(definition.deps.values())
            elif definition.fed_only:
                raise Blocked(site.line, f"`{definition.targets[0]}`, a placeholder expression, is not fed")
            elif definition.kind in (Kind.GRAPH, Kind.TRAIN) and id(definition) not in included:
                included[id(definition)] = definition
                todo += list(definition.deps.values())
        body = sorted(included.values(), key=lambda s: self.order[id(s)])
        return body, sorted(params.values(), key=lambda s: self.order[id(s)])

    def _cached_function(self, site: RunSite, body, params) -> Tuple[Function, Optional[str]]:
        """The `tf.function` of this evaluation, and its text when it is new (written here)."""
        key = (tuple(id(s) for s in body), code(site.fetches), tuple(id(p) for p in params))
        function = self.functions.get(key)
        if function is not None:
            return function, None
        function = self.functions[key] = self._function(site, body, params, site.defs)
        return function, function.text

    def _traced(self, site: RunSite, why: str) -> Tuple[List[Statement], List[Statement]]:
        """The closure of a function that is traced, not called (`get_concrete_function()` with
        its input signature): only placeholders of a tensor dtype may be its inputs."""
        body, params = self._closure(site)
        if any(p.kind is not Kind.PLACEHOLDER or p.sparse or code(p.dtype).endswith("bool") for p in params):
            raise Blocked(site.line, why)
        return body, params

    def _shape(self, site: RunSite) -> Tuple[cst.BaseExpression, Optional[str]]:
        """The static shape TF1 gave a tensor: a placeholder's declared one, else that of the
        output of a trace of the function computing it (no value is computed)."""
        definition = site.defs[site.fetched[0]]
        tf = self.tf
        if definition.kind is Kind.PLACEHOLDER:
            shape = code(definition.shape) if definition.shape is not None else "None"
            return cst.parse_expression(f"{tf}.TensorShape({shape})"), None
        body, params = self._traced(site, f"the shape of `{site.fetched[0]}` read by Python, a tensor computed "
                                          "from a dataset or a boolean flag")
        function, text = self._cached_function(site, body, params)
        return cst.parse_expression(f"{function.name}.get_concrete_function().structured_outputs.shape"), text

    def _value(self, site: RunSite) -> Tuple[cst.BaseExpression, Optional[str]]:
        """A tensor Python read while TF1 built the graph (`print(c)`, TF1's description of it):
        computed eagerly there, when it needs no fed value and draws no random number (computing
        it would move the random sequence TF1's runs drew from)."""
        name = site.fetched[0]
        body, params = self._closure(site)
        if params:
            raise Blocked(site.line, f"the tensor `{name}` used by Python code while the graph is built "
                                     f"(it needs `{params[0].targets[0]}`, given only when the graph runs)")
        batch_norm.check_run(self.script, site, body, lambda _name: None, Blocked)
        drawn = [path for statement in body for path in self._random_calls(statement.node)]
        changes = [what for statement in body for what in self._state_changes(statement.node)]
        if drawn or changes or any(s.kind is Kind.TRAIN for s in body):
            why = (f"computing it draws random numbers (`tf.{drawn[0]}`)" if drawn else
                   f"computing it changes state (`{changes[0]}`)" if changes else "it trains")
            raise Blocked(site.line, f"the tensor `{name}` used by Python code while the graph is built ({why})")
        function, text = self._cached_function(site, body, params)
        return cst.parse_expression(f"{function.name}()"), text

    def _random_calls(self, node: cst.CSTNode) -> List[str]:
        paths = [self.script.tf_call(call) or "" for call in calls_in(node)]
        return [p for p in paths if any(word in p for word in ("random", "dropout", "multinomial", "truncated_normal",
                                                               "categorical", "shuffle"))]

    def _state_changes(self, node: cst.CSTNode) -> List[str]:
        """Calls that change a variable's value when run (`v.assign_add(1)`, `tf.assign(v, x)`)."""
        found = []
        for call in calls_in(node):
            path = self.script.tf_call(call) or ""
            method = call.func.attr.value if isinstance(call.func, cst.Attribute) else ""
            if "assign" in path or "scatter" in path or method.startswith(("assign", "scatter")):
                found.append(code(call.func))
        return found

    def _build_layers_made_before(self) -> List[str]:
        """A variable that TF1 made after layers: the layers' variables are made first, as TF1's
        graph made them (Keras makes them at the first call, later), so their random initial
        values come in TF1's order. Not where the layers take a dataset or a boolean flag."""
        statements, self.unbuilt = self.unbuilt, []
        if not statements:
            return []
        deps = {s.targets[0]: s for s in statements}
        try:
            return [self._build_variables(set(deps), deps, statements[-1])]
        except Blocked:
            return []

    def _build_variables(self, names: Set[str], deps: Dict[str, Statement], at: Statement) -> str:
        """A Saver over layers needs their variables now, as TF1's graph had them: a function of
        the layers' graph statements, traced once (`get_concrete_function`), makes them, in the
        order and with the initial values their first call would have (and a TF1 optimizer's
        training step in it, the optimizer's slots and accumulators)."""
        names = sorted(names, key=lambda n: self.order[id(deps[n])])
        fetches = cst.Tuple([cst.Element(cst.Name(n)) for n in names])
        site = RunSite(at.node, at.line, fetches, names, {}, deps)
        body, params = self._traced(site, "a `tf.train.Saver` over layers fed by a dataset or a boolean flag")
        function = self._function(site, body, params, deps, name=self.script.fresh("build_variables"))
        made = "the layers and the optimizers make" if any(deps[n].kind is Kind.TRAIN for n in names) \
            else "the layers make"
        return f"{function.text}{function.name}.get_concrete_function()  # {made} their variables\n"

    def _variables_read(self, site: RunSite) -> Optional[str]:
        """`sess.run([w, b])` of variables (or learning-rate schedules) only, fed nothing:
        `[w.numpy(), b.numpy()]`, no function."""
        def value(node) -> Optional[str]:
            if isinstance(node, cst.Name):
                definition = site.defs.get(node.value)
                if definition is not None and definition.schedule is not None:
                    return f"{definition.schedule}().numpy()"  # a learning rate: the schedule at the step
                ok = definition is not None and definition.kind is Kind.VARIABLE and not definition.container
                return f"{node.value}.numpy()" if ok else None
            if isinstance(node, (cst.List, cst.Tuple)) and node.elements:
                items = [value(e.value) if not isinstance(e, cst.StarredElement) else None for e in node.elements]
                if None in items:
                    return None
                if isinstance(node, cst.List):
                    return "[" + ", ".join(items) + "]"
                return "(" + ", ".join(items) + ("," if len(items) == 1 else "") + ")"
            return None

        if site.feeds or any(n in site.defs and (site.defs[n].kind is Kind.TRAIN or self._is_op(site.defs[n]))
                             for n in site.fetched):
            return None  # (`_, step = sess.run([train_op, global_step])`: the step runs, then the variable is read)
        return value(site.fetches)

    def _multi(self, site: RunSite) -> bool:
        return isinstance(site.fetches, (cst.List, cst.Tuple, cst.Dict)) or any(
            site.defs[name].summaries is not None for name in site.fetched) or self._helper_structure(site)

    def _helper_structure(self, site: RunSite) -> bool:
        """`sess.run(images)` of `images = convolve(...)`, a helper returning a list of tensors, or of
        `clip_ops = [v.assign(...) for v in c_vars]` (`sess.run` returned a list of arrays)."""
        node = site.defs[site.fetched[0]].node if isinstance(site.fetches, cst.Name) and site.fetched else None
        value = node.body[0].value if isinstance(node, cst.SimpleStatementLine) and isinstance(node.body[0], cst.Assign) else None
        if isinstance(value, (cst.List, cst.Tuple, cst.ListComp, cst.Dict, cst.DictComp)):
            return True
        return isinstance(value, cst.Call) and isinstance(value.func, cst.Name) and any(
            isinstance(d, cst.FunctionDef) and d.name.value == value.func.value and returns_structure(d)
            for d in self.script.module.body)

    def _evaluate_name(self, site: RunSite) -> str:
        """`evaluate` for a run of several fetches; where the program has an `evaluate` of its own
        (the helper that runs it), `compute_accuracy_loss` of the tensors it fetches."""
        names = [e.value.value for e in site.fetches.elements if isinstance(e.value, cst.Name)] \
            if isinstance(site.fetches, (cst.List, cst.Tuple)) else []
        if "evaluate" not in self.script.taken or not names or len(names) != len(site.fetches.elements):
            return "evaluate"
        return "compute_" + "_".join(names[:3])

    def _function(self, site: RunSite, body: Sequence[Statement], params: Sequence[Statement], defs,
                  name: Optional[str] = None) -> Function:
        tf = self.tf
        trains = [s for s in body if s.kind is Kind.TRAIN]
        graph = [s for s in body if s.kind is Kind.GRAPH]
        if name is None:
            name = self.script.fresh("train_step" if trains else f"compute_{site.fetched[0]}"
                                     if isinstance(site.fetches, cst.Name) else self._evaluate_name(site))
        lines: List[str] = []
        indent = "    "
        inner = indent * 2 if trains else indent
        if trains:
            persistent = ", persistent=True" if len(trains) > 1 else ""
            lines.append(f"{indent}with {tf}.GradientTape({persistent.lstrip(', ')}) as tape:\n")
        optional = {id(site.defs[name]) for name in site.optional}
        for statement in graph:
            if id(statement) in optional:  # a tensor fed in some runs only: TF1's value otherwise
                lines.append(f"{inner}if {statement.targets[0]} is None:\n")
                lines.append(self._graph_line(statement, inner + indent))
            else:
                lines.append(self._graph_line(statement, inner))
        for train in trains:
            variables = self._variables(train, defs)
            optimizer = train.optimizer_name or code(train.optimizer)
            lines.append(f"{indent}variables = {variables}\n")
            lines.append(f"{indent}gradients = tape.gradient({train.loss}, variables)\n")
            if train.clip_norm is not None:  # (the norm given back where the run fetches it)
                norm = train.norm_name if train.norm_name in site.fetched else "_"
                lines.append(f"{indent}gradients, {norm} = {tf}.clip_by_global_norm(gradients, "
                             f"{code(train.clip_norm)})\n")
            if train.clip_values is not None:
                low, high = (code(bound) for bound in train.clip_values)
                lines.append(f"{indent}gradients = [None if g is None else {tf}.clip_by_value(g, {low}, {high}) "
                             "for g in gradients]\n")
            if optimizer in self.script.tf1_optimizers and self._keras3 and "trainable_variables" in variables:
                # TF1's optimizer updates a Keras 3 weight through its `tf.Variable`
                lines.append(f"{indent}{optimizer}.apply_gradients(zip(gradients, [v.value if isinstance(v, "
                             f"{tf}.keras.Variable) else v for v in variables]))\n")
            else:
                lines.append(f"{indent}{optimizer}.apply_gradients(zip(gradients, variables))\n")
            if train.global_step is not None:
                lines.append(f"{indent}{code(train.global_step)}.assign_add(1)\n")
        returned = self._returned(site.fetches, defs)
        if returned != "None" or not lines:  # a run of the train op alone returns nothing to return
            lines.append(f"{indent}return {returned}\n")
        names = [n for p in params for n in (p.targets if p.kind is Kind.NEXT else p.targets[:1])]
        dtypes = [code(p.dtype) if p.default is None else f"{tf}.{p.dtype}" for p in params if p.kind is Kind.PLACEHOLDER]
        specs = [f"{tf}.TensorSpec({code(p.shape) if p.shape is not None else 'None'}, {dtype})"
                 for p, dtype in zip(params, dtypes)]
        flags = [dtype.endswith(".bool") for dtype in dtypes]
        if len(dtypes) < len(params) or any(flags) or any(p.sparse for p in params):
            # A fed tensor, a dataset's element or a sparse tensor keeps its own dtype, and a boolean flag
            # (`training=`) stays a Python value (Keras layers branch on it in Python, so each
            # value gets its own trace): no signature, the placeholders take their dtypes here,
            # as TF1 converted what was fed.
            placeholders = [p for p in params if p.kind is Kind.PLACEHOLDER]
            lines[:0] = [f"{indent}{p.targets[0]} = {tf}.cast({p.targets[0]}, {dtype})\n"
                         for p, dtype, flag in zip(placeholders, dtypes, flags)
                         if not flag and not dtype.endswith(".string")]
            decorator = f"@{tf}.function\n"
        elif specs:
            decorator = f"@{tf}.function(input_signature=[{', '.join(specs)}])\n"
        else:
            decorator = f"@{tf}.function\n"
        return Function(name, f"\n\n{decorator}def {name}({', '.join(names)}):\n{''.join(lines)}\n\n")

    def _graph_line(self, statement: Statement, indent: str) -> str:
        if statement.summaries is not None and not statement.targets:
            return ""  # (what `merge_all` returns evaluates it)
        if not isinstance(statement.node, cst.SimpleStatementLine):  # an `if` building tensors
            text = code(statement.node.visit(NativeCalls(self.script)))
            return "".join(indent + line if line.strip() else line for line in text.splitlines(True))
        scope = self.script.scope_initializers.get(id(statement.node))
        if scope is not None:  # TF1's seed of the cell's kernel, drawn where the cell first runs
            line = "".join(indent + "    " + line for line in self._small_line(statement).splitlines(True))
            return f"{indent}with {code(scope.visit(NativeCalls(self.script)))}:\n{line}"
        if self._seeded_rnn_run(statement):  # TF1's default initializer, drawn from the graph seed
            tf = self.tf
            line = "".join(indent + "    " + line for line in self._small_line(statement).splitlines(True))
            return (f"{indent}with {tf}.compat.v1.variable_scope({tf}.compat.v1.get_variable_scope(), "
                    f"initializer={tf}.compat.v1.glorot_uniform_initializer()):\n{line}")
        return "".join(indent + line for line in self._small_line(statement).splitlines(True))

    def _seeded_rnn_run(self, statement: Statement) -> bool:
        """An RNN run (`dynamic_rnn` & co) in a module that sets a graph seed: its cell's kernels,
        drawn at the first run, take TF1's default initializer from the seed. Legacy Keras' own
        default, drawn inside a `tf.function`, ignores it (measured: a GRUCell's kernels changed at
        each run of the program). A pinned module's cells have TF1's seeds already (op_seeds)."""
        if self.script.pinned or not self.script.graph_seeded():
            return False
        return any(self.script.tf_call(call, *RNN_RUNNERS) for call in calls_in(statement.node))

    def _small_line(self, statement: Statement) -> str:
        node = statement.node.body[0]
        if statement.summaries is not None:
            if not statement.targets:
                return ""  # `tf.summary.scalar(...)` alone: what `merge_all` returns evaluates it
            entries = ", ".join(self._summary_entry(kind, name, tensor) for kind, name, tensor in statement.summaries)
            return f"{statement.targets[0]} = {{{entries}}}\n"
        if statement.metric is not None:
            return self._metric_lines(statement)
        if statement.schedule is not None:  # the rate at the step variable's current value
            return f"{statement.targets[0]} = {statement.schedule}()\n"
        if statement.tracked:  # (first: a layer call in its arguments keeps its identity)
            objects = {id(call): self.script.builders[name].objects[id(call)] for name, call in statement.tracked}
            built = {id(call) for name, call in statement.tracked if self.script.builders[name].node is None}
            node = node.visit(_ThroughObjects(objects, built))
        if self.pass_placeholders is not None:
            node = node.visit(self.pass_placeholders)
        if statement.layers:
            calls = {}
            for layer in statement.layers:
                calls[id(layer.call)] = layer_specs.layer_call(cst.Name(layer.name), layer.mapped, layer.call)
            node = node.visit(_Replace(calls))
        node = node.visit(NativeCalls(self.script, wide=bool(self.script.data_dtypes(statement))))
        return code(node).strip() + "\n"

    def _summary_entry(self, kind: str, name: Optional[str], tensor) -> str:
        """An entry of the dict a run of `merge_all` returns: `"scalar:loss": loss`, or a histogram of
        each trainable variable made before `tensor`, the loop that asked for them, tagged as TF1
        tagged it: the name of its summary op, the variable's made unique (`w_1` for `w:0`)."""
        if name is None:
            made = self._made_under("", tensor.line, before=tensor)
            return f'**{{"{kind}:" + v.name.replace(":0", "_1"): v for v in {made}}}'
        return f"{(kind + ':' + name)!r}: {code(tensor.visit(NativeCalls(self.script)))}"

    def _variables(self, train: Statement, defs) -> str:
        if train.var_list is not None:
            return code(train.var_list)
        if train.var_scope is not None:  # the trainable variables made under that variable scope
            return self._made_under(train.var_scope, train.line)
        return self._loss_variables(train)

    def _made_under(self, var_scope: str, line: int, before: Optional[Statement] = None) -> str:
        """The trainable variables made under the variable scope `var_scope` ("": all), before the
        statement `before` when given, as a list expression."""
        made = []
        for statement in self.script.statements:
            if statement is before:
                break
            for layer in statement.layers:
                if not layer.reused and (layer.scope + "/").startswith(var_scope) \
                        and f"*{layer.name}.trainable_variables" not in made:
                    made.append(f"*{layer.name}.trainable_variables")
            if statement.kind is Kind.VARIABLE and statement.trainable and (statement.scope + "/").startswith(var_scope):
                made += _variables_made(statement)
            for name, call in statement.tracked:  # a model function's object: its variables by TF1 name
                listed = self._under_scope(self.script.builders[name], call, var_scope)
                if listed is not None and listed not in made:
                    made.append(listed)
        if not made:
            raise Blocked(line, f"no layer made under the variable scope `{var_scope}`")
        return "[" + ", ".join(made) + "]"

    def _loss_variables(self, train: Statement) -> str:
        """The trainable variables the loss of `minimize` depends on, in the order TF1 made them."""
        seen: Dict[int, Statement] = {}
        found: List[Tuple[int, str]] = []
        todo = [train.deps[train.loss]]
        while todo:
            definition = todo.pop()
            if id(definition) in seen:
                continue
            seen[id(definition)] = definition
            if definition.kind is Kind.VARIABLE and definition.trainable:
                found.append((self._position(definition), _variables_made(definition)[0]))
            elif definition.kind is Kind.GRAPH:
                for i, (name, call) in enumerate(definition.tracked):  # a model function's object
                    model = self.script.builders[name].objects[id(call)]
                    found.append((self.order[id(definition)] + i / 1000, f"*{model}.trainable_variables"))
                cells = sorted(names_read(definition.node) & self.script.cells)
                for i, cell in enumerate(cells):  # an RNN cell's variables, made where it first runs
                    found.append((self.order[id(definition)] + i / 1000, f"*{cell}.trainable_variables"))
                for i, layer in enumerate(definition.layers):
                    found.append((self.order[id(definition)] + i / 100, f"*{layer.name}.trainable_variables"))
                todo += list(definition.deps.values())
        if not found:
            raise Blocked(train.line, f"`minimize({train.loss})` of a loss that depends on no variable")
        names = [name for _, name in sorted(found)]
        return "[" + ", ".join(name for i, name in enumerate(names) if name not in names[:i]) + "]"

    @staticmethod
    def _under_scope(builder, call, scope: str) -> Optional[str]:
        """The variables a model function's object made under the variable scope `scope` (TF1's
        `get_collection(..., scope=)`: names that start with it): all of them when its whole body
        runs under one literal scope that does, none when every literal scope of a scoped function
        does not, else those its variables' TF1 names select."""
        model = builder.objects[id(call)]
        if builder.node is None:  # (the store of the project's model functions: by the names TF1 gave)
            return f"*[v for v in {model}.trainable_variables if v.name.startswith({scope!r})]"
        outer = builder.site_scopes.get(id(call), ("", ""))[0]
        full = [f"{outer}/{s}" if outer else s for s in builder.literal_scopes]
        body = [s for s in builder.node.body.body
                if not matchers.matches(s, matchers.SimpleStatementLine(body=[matchers.Expr(value=matchers.SimpleString())]))]
        withs = [s for s in body if isinstance(s, cst.With)]
        # (one `with` block, and beside it no call: `return out`)
        if builder.computed_scopes:  # (scopes named by expressions: by the names TF1 gave)
            return f"*[v for v in {model}.trainable_variables if v.name.startswith({scope!r})]"
        one_scope = len(full) == 1 and len(withs) == 1 and not any(
            matchers.findall(s, matchers.Call()) for s in body if s is not withs[0])
        if one_scope and (full[0] + "/").startswith(scope):
            return f"*{model}.trainable_variables"
        if builder.scoped and full and not any((s + "/").startswith(scope) or scope.startswith(s) for s in full):
            return None
        return f"*[v for v in {model}.trainable_variables if v.name.startswith({scope!r})]"

    def _metric_lines(self, statement: Statement) -> str:
        """TF1's accuracy: predictions cast to the labels' dtype, the mean of their equality."""
        tf, m, target = self.tf, statement.metric, statement.targets[0]
        labels = code(m.labels.visit(NativeCalls(self.script)))
        predictions = code(m.predictions.visit(NativeCalls(self.script)))
        mean = f"{target} = {tf}.math.divide_no_nan({m.total}, {m.count})\n"
        if not m.update:
            return mean
        return (f"{target}_labels = {tf}.convert_to_tensor({labels})\n"
                f"{target}_correct = {tf}.cast({tf}.equal({tf}.cast({predictions}, {target}_labels.dtype), "
                f"{target}_labels), {tf}.float32)\n"
                f"{m.total}.assign_add({tf}.reduce_sum({target}_correct))\n"
                f"{m.count}.assign_add({tf}.cast({tf}.size({target}_correct), {tf}.float32))\n" + mean)

    def _is_op(self, statement: Statement) -> bool:
        """`tf.group(...)`: an Operation, which `sess.run` returns as None."""
        node = statement.node.body[0] if isinstance(statement.node, cst.SimpleStatementLine) else None
        return statement.kind is Kind.GRAPH and isinstance(node, cst.Assign) \
            and self.script.tf_call(node.value, "group") is not None

    def _position(self, statement: Statement) -> float:
        """Program order of a statement (one of several variables of a line: after the line)."""
        if id(statement) in self.order:
            return self.order[id(statement)]
        line = statement.top
        return self.order[id(line)] + (1 + line.targets.index(statement.targets[0])) / 1000

    def _returned(self, fetches, defs) -> str:
        if isinstance(fetches, cst.Name):
            definition = defs[fetches.value]
            if definition.kind is Kind.TRAIN and definition.norm_name == fetches.value:
                return fetches.value  # the global norm the step clipped by
            if definition.kind is Kind.TRAIN or self._is_op(definition):
                return "None"
            if definition.kind is Kind.VARIABLE:
                return f"{self.tf}.identity({fetches.value})"
            return fetches.value
        if isinstance(fetches, (cst.List, cst.Tuple)):
            items = [self._returned(e.value, defs) for e in fetches.elements]
            if isinstance(fetches, cst.List):
                return "[" + ", ".join(items) + "]"
            return "(" + ", ".join(items) + ("," if len(items) == 1 else "") + ")"
        if isinstance(fetches, cst.Dict):
            return "{" + ", ".join(f"{code(e.key)}: {self._returned(e.value, defs)}" for e in fetches.elements) + "}"
        return code(fetches.visit(NativeCalls(self.script)))  # an expression of graph tensors


class _Rename(cst.CSTTransformer):
    def __init__(self, names: Dict[str, str]):
        self.names = names

    def leave_Name(self, original: cst.Name, updated: cst.Name):
        new = self.names.get(updated.value)
        return updated.with_changes(value=new) if new else updated

    def leave_Arg(self, original: cst.Arg, updated: cst.Arg):
        if original.keyword is not None and original.keyword.value in self.names:
            return updated.with_changes(keyword=original.keyword)  # a keyword is not the variable
        return updated


def _variables_made(statement: Statement) -> List[str]:
    """The variables a module-level VARIABLE statement makes, as list elements: its names, or its
    container spread (`*weights.values()` of a dict, `*layers` of a list)."""
    name = statement.targets[0]
    spread = {"dict": f"*{name}.values()", "list": f"*{name}"}
    return [spread[statement.container]] if statement.container in spread else list(statement.targets)


def joined_pieces(pieces: Sequence[str]) -> str:
    """The module's pieces end to end, with at most two blank lines where two meet (a function
    written before a statement that already had blank lines above it: PEP 8's two, not four)."""
    text = ""
    for piece in pieces:
        if not piece:
            continue
        trailing = len(text) - len(text.rstrip("\n"))
        leading = len(piece) - len(piece.lstrip("\n"))
        if text and trailing + leading > 3 and piece.strip():
            piece = piece[min(leading, trailing + leading - 3):]
            trailing = len(text) - len(text.rstrip("\n"))
            if trailing > 3:
                text = text[:len(text) - (trailing - 3)]
        text += piece
    return text


def _given(node: cst.FunctionDef, placeholders) -> cst.FunctionDef:
    """The function with keyword-only parameters for the placeholders it read from the module
    (`def net(x, *, keep_prob)`): in eager TF2 they are the `tf.function`'s arguments, passed on."""
    if not placeholders:
        return node
    params = node.params
    new = [cst.Param(cst.Name(p)) for p in sorted(placeholders)]
    star = params.star_arg if isinstance(params.star_arg, (cst.Param, cst.ParamStar)) else cst.ParamStar()
    return node.with_changes(params=params.with_changes(star_arg=star, kwonly_params=[*params.kwonly_params, *new]))


class _PassPlaceholders(cst.CSTTransformer):
    """`net(x)` -> `net(x, keep_prob=keep_prob)`: a helper's placeholders, given where it is called
    (a model function's call through its object too)."""

    def __init__(self, given, builders):
        self.given = given
        self.objects = {obj: b.name for b in builders.values() for obj in b.objects.values()}

    def leave_Call(self, original: cst.Call, updated: cst.Call):
        if not isinstance(updated.func, cst.Name):
            return updated
        name = self.objects.get(updated.func.value, updated.func.value)
        if name not in self.given:
            return updated
        extra = [keyword(p, cst.Name(p)) for p in sorted(self.given[name])]
        return updated.with_changes(args=joined(updated, [*updated.args, *extra]))


class _ThroughObjects(cst.CSTTransformer):
    """`generator(Z)` -> `generator_model(Z)`: a model function's call through its tracked object;
    `lib.model(x)` -> `tf1_imports(lib.model, x)`: an imported one's through the store (`built`:
    their ids), without the op seed native.op_seeds gave it (native.imported_models)."""

    def __init__(self, objects: Dict[int, str], built=frozenset()):
        self.objects, self.built = objects, built

    def leave_Call(self, original: cst.Call, updated: cst.Call):
        name = self.objects.get(id(original))
        if name and id(original) in self.built:
            args = [a for a in updated.args if a.keyword is None or a.keyword.value != imported_models.SEED_KEYWORD]
            if args:
                args[-1] = args[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)
            return updated.with_changes(func=cst.Name(name), args=[cst.Arg(updated.func), *args])
        return updated.with_changes(func=cst.Name(name)) if name else updated


_CONVERTED_LIST = matchers.Call(func=matchers.Name("to_numpy"), args=[matchers.Arg(value=matchers.Call(), keyword=None)])
_CONVERTED = matchers.Call(func=matchers.Attribute(value=matchers.Call(), attr=matchers.Name("numpy")), args=[])


def _unconverted(value: cst.BaseExpression) -> cst.BaseExpression:
    """`step()` for the `to_numpy(step())` or `step().numpy()` of a run whose result is discarded."""
    if matchers.matches(value, _CONVERTED_LIST):
        return value.args[0].value
    if matchers.matches(value, _CONVERTED):
        return value.func.value
    return value


class _Replace(cst.CSTTransformer):
    """Swap given nodes (by identity) for new ones."""

    def __init__(self, replacements: Dict[int, cst.CSTNode]):
        self.replacements = replacements

    def leave_Call(self, original: cst.Call, updated: cst.Call):
        new = self.replacements.get(id(original))
        if new is None or not isinstance(new, cst.BaseExpression):
            return updated if new is None else new
        # (a new call made of the original's parts, `layer(<the inner layer's call>)`: those swapped too)
        return new.visit(_Replace({key: value for key, value in self.replacements.items() if key != id(original)}))

    def leave_Attribute(self, original: cst.Attribute, updated: cst.Attribute):
        return self.replacements.get(id(original), updated)

    def leave_Name(self, original: cst.Name, updated: cst.Name):
        return self.replacements.get(id(original), updated)

    def leave_Subscript(self, original: cst.Subscript, updated: cst.Subscript):
        return self.replacements.get(id(original), updated)

    def leave_AssignTarget(self, original: cst.AssignTarget, updated: cst.AssignTarget):
        return self.replacements.get(id(original), updated)

    def leave_Parameters(self, original: cst.Parameters, updated: cst.Parameters):
        index = self.replacements.get(id(original))  # (a run helper's Session parameter: dropped)
        if not isinstance(index, int):
            return updated
        params = [p for i, p in enumerate(updated.params) if i != index]
        if params:
            params[-1] = params[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)
        return updated.with_changes(params=params)

    def leave_Expr(self, original: cst.Expr, updated: cst.Expr):
        new = self.replacements.get(id(original.value))
        if isinstance(new, cst.BaseSmallStatement):
            return new
        return updated.with_changes(value=_unconverted(updated.value)) if new is not None else updated

    def leave_Dict(self, original: cst.Dict, updated: cst.Dict):
        new = self.replacements.get(id(original))
        if new is None:
            return updated
        return updated.with_changes(elements=[e.with_changes(key=n.key) for e, n in zip(updated.elements, new.elements)])
