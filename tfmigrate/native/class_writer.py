"""The writing half of the class route (native.classes): a graph class as a `tf.Module` with a
tracked `build_graph` and a `tf.function` method per run, the module's runs as calls of them.
"""
from __future__ import annotations

from typing import Dict, List, Optional, Set, Tuple

import libcst as cst

from tfmigrate.facts.graph_words import LEGACY_KERAS_SET, RNN_RUNNERS
from tfmigrate.fixers.compat_route import legacy_keras_switch
import tfmigrate.native.class_bases as class_bases
from tfmigrate.native.class_facts import GraphClass, RunMethod, instance_of, is_docstring, ordered
from tfmigrate.native.classes import ClassScript
from tfmigrate.native.checkpoints import OPTIMIZER_STATE
from tfmigrate.native.emit import WRITE_SUMMARIES
from tfmigrate.native.model_mapping import MAKES_VARIABLES, SCOPES, deferred_initial_value
from tfmigrate.native.script import Blocked
from tfmigrate.native.syntax import bind, calls_in, code, name_nodes

TO_NUMPY = '''

def to_numpy(fetched):
    """What `sess.run` returned: numpy values, in the structure of the fetches."""
    return tf.nest.map_structure(lambda value: None if value is None else value.numpy(), fetched)
'''


class ClassWriter:
    """Writes an analysed ClassScript."""

    def __init__(self, script: ClassScript):
        self.script = script

    def written(self) -> str:
        script = self.script

        class _Rewrite(cst.CSTTransformer):
            def leave_Call(self, original: cst.Call, updated: cst.Call):
                if id(original) in script.writers:
                    return cst.parse_expression(script.writers[id(original)])
                if id(original) in script.element_feeds:  # `feed.update({self.state[i]: s})`
                    holder = f'{code(original.func.value)}.setdefault("{script.element_feeds[id(original)]}", {{}})'
                    return updated.with_changes(func=updated.func.with_changes(value=cst.parse_expression(holder)))
                if id(original) in script.state_reads:
                    return updated.with_changes(func=updated.func.with_changes(attr=cst.Name("numpy")))
                site = script.sites.get(id(original))
                if site is None:
                    return updated
                cls, method, fetches, args = site
                if method is None:
                    text = code(fetches)
                    return cst.parse_expression(f"to_numpy({text})" if isinstance(fetches, (cst.List, cst.Tuple, cst.Dict))
                                                else f"{text}.numpy()")
                instance = code(instance_of(fetches))
                if args and args[0][0] == "**":  # a feed built ahead, its keys the parameters' names
                    call = f"{instance}.{method.name}(**{args[0][1]})"
                    return cst.parse_expression(f"to_numpy({call})" if isinstance(fetches, (cst.List, cst.Tuple, cst.Dict))
                                                else f"{call}.numpy()" if code(method.fetches) != "None" else call)
                values, given, skipped = dict(args), [], False
                for placeholder in ordered(cls.placeholders):  # by position until one is left out
                    if placeholder.param not in values:
                        skipped = True
                    else:
                        value = values[placeholder.param]
                        given.append(f"{placeholder.param}={value}" if skipped else value)
                given = ", ".join(given)
                call = f"{instance}.{method.name}({given})"
                if isinstance(fetches, (cst.List, cst.Tuple, cst.Dict)):
                    call = f"to_numpy({call})"
                elif code(method.fetches) != "None":  # (a train op alone returns nothing)
                    call = f"{call}.numpy()"
                return cst.parse_expression(call)

            def leave_Assign(self, original: cst.Assign, updated: cst.Assign):
                target = script.targets.get(id(original))
                if target is None:
                    return updated
                return updated.with_changes(targets=[updated.targets[0].with_changes(target=target)])

            def leave_DictElement(self, original: cst.DictElement, updated: cst.DictElement):
                param = script.key_params.get(id(original.key))
                if param is not None and isinstance(original.key, cst.Subscript):  # `{self.state[i]: s}` -> `{i: s}`
                    return updated.with_changes(key=original.key.slice[0].slice.value)
                return updated if param is None else updated.with_changes(key=cst.SimpleString(f'"{param}"'))

            def leave_Index(self, original: cst.Index, updated: cst.Index):  # `feed[model.x] = a`
                param = script.key_params.get(id(original.value))
                if param is None or isinstance(original.value, cst.Subscript):
                    return updated
                return updated.with_changes(value=cst.SimpleString(f'"{param}"'))

            def leave_Subscript(self, original: cst.Subscript, updated: cst.Subscript):
                param = script.element_feeds.get(id(original))  # `feed[self.state[i]] = s`
                if param is None:
                    return updated
                index = original.slice[0].slice.value.slice
                return cst.Subscript(cst.parse_expression(f'{code(original.value)}.setdefault("{param}", {{}})'), index)

            def leave_Arg(self, original: cst.Arg, updated: cst.Arg):
                if id(original) in script.saver_sessions:  # `saver.save(None, path)`: the eager saver's
                    return updated.with_changes(value=cst.Name("None"))
                return cst.RemoveFromParent() if id(original) in script.session_args else updated

            def leave_FunctionDef(self, original: cst.FunctionDef, updated: cst.FunctionDef):
                if id(original) not in script.session_defs:
                    return updated
                index = script.session_defs[id(original)]
                params = [p for i, p in enumerate(updated.params.params) if i != index]
                if params:  # (the last one keeps no comma)
                    params[-1] = params[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)
                return updated.with_changes(params=updated.params.with_changes(params=params))

            def leave_SimpleStatementLine(self, original, updated):
                if id(original) in script.joint_runs:  # a run over several objects: one per object
                    return cst.FlattenSentinel([s.visit(self) for s in script.joint_runs[id(original)]])
                if id(original) in script.savers:
                    made = list(cst.parse_module(script.savers[id(original)]).body)
                    made[0] = made[0].with_changes(leading_lines=updated.leading_lines)
                    return cst.FlattenSentinel(made)
                small = original.body[0] if len(original.body) == 1 else None
                if isinstance(small, cst.Expr) and id(small.value) in script.restarts:
                    return cst.parse_statement(script.restarts[id(small.value)] + "\n").with_changes(
                        leading_lines=updated.leading_lines)
                writer = script.graph_writers.get(id(original))
                if writer is not None:  # TF1's graph: none eagerly; the log directory stays
                    logdir = code(bind(writer.value, ("logdir", "graph"))["logdir"])
                    line = cst.parse_statement(f"{code(writer.targets[0].target)} = "
                                               f"{script.tf}.summary.create_file_writer({logdir})\n")
                    comment = cst.EmptyLine(comment=cst.Comment(
                        "# tfmigrate: TF1's FileWriter wrote the session's graph here; eager code has none"))
                    return line.with_changes(leading_lines=[*updated.leading_lines, comment])
                return cst.RemoveFromParent() if id(original) in script.removed else updated

            def leave_With(self, original: cst.With, updated: cst.With):
                if id(original) not in script.unwrapped:  # the Session's `with` goes, its body stays
                    return updated
                inner = list(updated.body.body)
                if inner:
                    inner[0] = inner[0].with_changes(leading_lines=[*updated.leading_lines, *inner[0].leading_lines])
                return cst.FlattenSentinel(inner) if inner else cst.RemoveFromParent()

            def leave_IndentedBlock(self, original, updated: cst.IndentedBlock):
                return updated if updated.body else updated.with_changes(body=[cst.SimpleStatementLine([cst.Pass()])])

        body: List[cst.BaseStatement] = []
        helper_written = not self.script.to_numpy
        summaries_written = False
        state_written = False
        names_written = False
        legacy = not LEGACY_KERAS_SET.search(self.script.source)  # track_tf1_style_variables is tf-keras's
        for node in self.script.module.body:
            if legacy and self._imports_tensorflow(node):
                body.extend(cst.parse_module(legacy_keras_switch(cst.Module(body=body), None)).body)
                legacy = False
            if id(node) in self.script.removed:
                continue
            if isinstance(node, cst.ClassDef) and node.name.value in self.script.classes:
                written = [self._class(self.script.classes[node.name.value], _Rewrite())]
                if self.script.classes[node.name.value].loop_variables and not names_written:
                    body.extend(cst.parse_module(UNIQUE_NAME).body)
                    names_written = True
                if self.script.optimizer_state and not state_written:
                    body.extend(cst.parse_module(OPTIMIZER_STATE).body)
                    state_written = True
            else:
                result = node.visit(_Rewrite())
                written = [] if isinstance(result, cst.RemovalSentinel) else list(result.nodes) \
                    if isinstance(result, cst.FlattenSentinel) else [result]
            if not helper_written and any(id(c) in self.script.sites or id(c) in self.script.joint_calls
                                          for c in calls_in(node)):
                helper = cst.parse_module(TO_NUMPY).body[0]
                body.append(helper.with_changes(leading_lines=[_BLANK, _BLANK]))
                helper_written = True
                if written and len(written[0].leading_lines) < 2:
                    written[0] = written[0].with_changes(leading_lines=[_BLANK, _BLANK, *written[0].leading_lines])
            if not summaries_written and any(self.script.writers.get(id(c), "").startswith("write_summaries(")
                                             for c in calls_in(node)):
                helper = cst.parse_module(WRITE_SUMMARIES).body[0]
                body.append(helper.with_changes(leading_lines=[_BLANK, _BLANK]))
                summaries_written = True
                if written and len(written[0].leading_lines) < 2:
                    written[0] = written[0].with_changes(leading_lines=[_BLANK, _BLANK, *written[0].leading_lines])
            body.extend(written)
        return self.script.module.with_changes(body=body).visit(_CompatV1(self.script)).code

    @staticmethod
    def _imports_tensorflow(node) -> bool:
        if not isinstance(node, cst.SimpleStatementLine):
            return False
        for small in node.body:
            if isinstance(small, cst.Import) and any(code(a.name).split(".")[0] == "tensorflow" for a in small.names):
                return True
            if isinstance(small, cst.ImportFrom) and small.module is not None \
                    and code(small.module).split(".")[0] == "tensorflow":
                return True
        return False

    def _class(self, cls: GraphClass, rewriter: cst.CSTTransformer) -> cst.ClassDef:
        tf = self.script.tf
        members: List[cst.BaseStatement] = []
        for statement in cls.node.body.body:
            if statement is cls.init:
                members.append(self._init(cls))
                members.append(self._build(cls))
            elif isinstance(statement, cst.FunctionDef) and statement.name.value in cls.inlined:
                continue  # (its body is part of build_graph, its call gone)
            elif isinstance(statement, cst.FunctionDef) and (statement.name.value in cls.session_methods
                                                             or statement.name.value in cls.runners
                                                             or statement.name.value in cls.feed_methods):
                members.append(statement.visit(rewriter))
            elif isinstance(statement, cst.FunctionDef) and statement.name.value in cls.graph_methods:
                members.append(_module_inputs(statement.visit(_AsGetVariable(cls.variables)), cls.method_inputs)
                               .visit(_Overrides.of(cls)).visit(_Frozen(cls.frozen)))
            elif isinstance(statement, cst.FunctionDef):  # (`self.sess.close()` of a held Session: gone)
                members.append(statement.visit(_Dropped(self.script.removed, self.script.saver_sessions)))
            else:
                members.append(statement)
        for method in cls.methods.values():
            members.append(self._run_method(cls, method))
        return cls.node.with_changes(
            bases=[cst.Arg(cst.parse_expression(f"{tf}.Module"))], lpar=cst.LeftParen(), rpar=cst.RightParen(),
            body=cls.node.body.with_changes(body=members))

    def _init(self, cls: GraphClass) -> cst.FunctionDef:
        statements: List[cst.BaseStatement] = []
        python = list(cls.python)
        if python and is_docstring(python[0]):
            statements.append(python.pop(0))
        statements.append(cst.parse_statement("super().__init__()\n"))
        order = list(cls.order)
        trains = {id(t.node): t for t in cls.trains.values()}
        for statement in order:
            if statement in python:
                statements.append(statement)
            elif id(statement) in trains:
                train = trains[id(statement)]
                statements.append(cst.parse_statement(f"self.{train.attr}_optimizer = {train.optimizer}\n"))
                if train.clip_norm is not None:  # (read as `__init__` reads it, where the optimizer is made)
                    statements.append(cst.parse_statement(f"self.{train.attr}_clip_norm = {code(train.clip_norm)}\n"))
        for local, attr in cls.captured.items():  # what the graph reads of `__init__`'s names
            statements.append(cst.parse_statement(f"self.{attr} = {local}\n"))
        for attr, copy in cls.frozen.items():  # what the graph read of Python attributes changed later
            statements.append(cst.parse_statement(f"self.{copy} = self.{attr}\n"))
        if cls.init_saver_code:  # `self.saver = tf.train.Saver()`: its variables made first (native.class_savers)
            statements += list(cst.parse_module(cls.init_saver_code).body)
        init = cls.init.with_changes(body=cls.init.body.with_changes(body=statements))
        session = cls.held_session
        if session is not None and session.param is not None:  # (the Session it was given: gone)
            params = [p for p in init.params.params if p.name.value != session.param]
            params[-1] = params[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)
            init = init.with_changes(params=init.params.with_changes(params=params))
        return init

    def _build(self, cls: GraphClass) -> cst.FunctionDef:
        tf = self.script.tf
        params = _params(cls)
        guarded: List[Tuple[Tuple[str, ...], cst.BaseStatement]] = [
            ((), cst.parse_statement(f"{local} = self.{attr}\n")) for local, attr in cls.captured.items()]
        for p in cls.placeholders:
            value = p.param if p.dtype is None else f"{tf}.cast({p.param}, {p.dtype})"
            if p.fed_tensor:  # (it replaces the tensor where the graph makes it)
                guarded.append(((), cst.parse_statement(f"self.{p.fed_tensor} = {p.param}\n")))
            elif p.own or p.dtype is not None:
                target = f"self.{p.attr}" if p.own else p.param
                guarded.append(((p.param,) if p.optional else (), cst.parse_statement(f"{target} = {value}\n")))
            if not p.own and p.attr in cls.method_inputs:  # (the graph methods read it there)
                guarded.append(((p.param,) if p.optional else (),
                                cst.parse_statement(f"self.{cls.method_inputs[p.attr]} = {p.param}\n")))
        if cls.loop_variables:  # (the names the loops' variables took in this build)
            guarded.insert(0, ((), cst.parse_statement("tf1_variable_names = set()\n")))
        skipped = {p.param: self.script.computed_from(cls, p)[1] for p in cls.placeholders if p.optional}
        made_once = _AsGetVariable(cls.variables)
        frozen = _Frozen(cls.frozen)
        fed = _Overrides.of(cls)
        for i, statement in enumerate(cls.graph):
            guard = tuple(sorted(param for param, ids in skipped.items() if id(statement) in ids))
            statement = _scopes_guarded(statement, skipped).visit(made_once).visit(fed).visit(frozen)
            guarded.append((guard, statement.with_changes(leading_lines=[]) if i == 0 and not guarded else statement))
        text = (f"@{tf}.compat.v1.keras.utils.track_tf1_style_variables\n"
                f"def {cls.build}({params}):\n"
                f'    """The graph of TF1\'s `__init__`, built at each call; its variables are made once, by TF1 name."""\n'
                f"    default = {tf}.compat.v1.glorot_uniform_initializer()\n"
                f"    with {tf}.compat.v1.variable_scope({tf}.compat.v1.get_variable_scope(), initializer=default):\n"
                f"        pass\n")
        function = cst.parse_statement(text)
        with_node = function.body.body[-1]
        new_with = with_node.with_changes(body=with_node.body.with_changes(body=fed.overridden(_grouped(guarded))))
        body = list(function.body.body[:-1]) + [new_with]
        return function.with_changes(body=function.body.with_changes(body=body), leading_lines=[_BLANK])

    def _run_method(self, cls: GraphClass, method: RunMethod) -> cst.FunctionDef:
        tf = self.script.tf
        placeholders = ordered(cls.placeholders)
        params = _params(cls)
        call = f"self.{cls.build}({', '.join(p.param for p in placeholders)})"
        returned = code(method.fetches)
        if method.train is None:
            body = f"    {call}\n    return {returned}\n"
        else:
            train = method.train
            objective = f"self.{train.loss}"
            if train.negated:  # (`minimize(-self.exp_v)`: the negation taped too)
                objective = f"negated_{train.loss}"
            norm = f"self.{train.norm_attr}" if train.norm_attr else "_"
            body = (f"    with {tf}.GradientTape() as tape:\n"
                    f"        {call}\n"
                    + (f"        {objective} = -self.{train.loss}\n" if train.negated else "")
                    + (f"    variables = [v for v in self.trainable_variables if v.name.startswith({train.var_scope!r})]\n"
                       if train.var_scope else "    variables = self.trainable_variables\n")
                    + f"    gradients = tape.gradient({objective}, variables)\n"
                    + (f"    gradients, {norm} = {tf}.clip_by_global_norm("
                       f"gradients, self.{train.attr}_clip_norm)\n" if train.clip_norm is not None else "")
                    + f"    self.{train.attr}_optimizer.apply_gradients(zip(gradients, variables)"
                    + (f", global_step=self.{train.global_step}" if train.global_step else "") + ")\n"
                    + (f"    return {returned}\n" if returned != "None" else ""))
        function = cst.parse_statement(f"@{tf}.function\ndef {method.name}({params}):\n{body}")
        return function.with_changes(leading_lines=[_BLANK])



_BLANK = cst.EmptyLine(indent=False)


class _AsGetVariable(cst.CSTTransformer):
    """`tf.Variable(init, name="W")` in the graph of `__init__` as `get_variable("W", initializer=lambda:
    init)`, found again by name at each call of the tracked build."""

    def __init__(self, variables):
        self.variables = variables

    def leave_Call(self, original: cst.Call, updated: cst.Call):
        new = self.variables.get(id(original))
        return updated if new is None else cst.parse_expression(new)


class _Frozen(cst.CSTTransformer):
    """`self.training` read by the graph as `self.training_built`: the value TF1's graph was built with."""

    def __init__(self, frozen):
        self.frozen = frozen  # attribute -> its copy made at the end of `__init__`

    def leave_Attribute(self, original: cst.Attribute, updated: cst.Attribute):
        if isinstance(original.value, cst.Name) and original.value.value == "self" and original.attr.value in self.frozen:
            return updated.with_changes(attr=cst.Name(self.frozen[original.attr.value]))
        return updated


class _Overrides(cst.CSTTransformer):
    """After each statement that makes a tensor a run may feed (`self.init_state = cell.zero_state(...)`):
    `if self.init_state_fed is not None: self.init_state = self.init_state_fed`, as TF1 replaced a fed
    tensor for everything computed from it."""

    def __init__(self, fed, elements=frozenset()):
        self.fed = fed  # attribute -> the attribute holding what it was fed
        self.elements = elements  # attributes fed element by element: `{index: value}`

    @classmethod
    def of(cls, graph: GraphClass) -> "_Overrides":
        fed = [p for p in graph.placeholders if p.fed_tensor]
        return cls({p.attr: p.fed_tensor for p in fed}, {p.attr for p in fed if p.elements})

    def overridden(self, statements: List[cst.BaseStatement]) -> List[cst.BaseStatement]:
        out: List[cst.BaseStatement] = []
        for statement in statements:
            out.append(statement)
            if not (self.fed and isinstance(statement, cst.SimpleStatementLine)):
                continue
            for small in statement.body:
                targets = [t.target for t in small.targets] if isinstance(small, cst.Assign) else []
                targets = [e.value for t in targets for e in (t.elements if isinstance(t, (cst.Tuple, cst.List)) else [])] \
                    + targets
                for target in targets:
                    if isinstance(target, cst.Attribute) and isinstance(target.value, cst.Name) \
                            and target.value.value == "self" and target.attr.value in self.fed:
                        attr, given = target.attr.value, self.fed[target.attr.value]
                        value = (f"tuple(self.{given}.get(i, t) for i, t in enumerate(self.{attr}))"
                                 if attr in self.elements else f"self.{given}")
                        out.append(cst.parse_statement(f"if self.{given} is not None:\n    self.{attr} = {value}\n"))
        return out

    def leave_IndentedBlock(self, original, updated: cst.IndentedBlock):
        return updated.with_changes(body=self.overridden(list(updated.body)))


def _module_inputs(method: cst.FunctionDef, inputs: Dict[str, str]) -> cst.FunctionDef:
    """A graph method reading module-level placeholders (`training=tf_is_train`): each read as the
    copy build_graph keeps of what the run gave it (`self.tf_is_train_input`)."""
    reads = {id(n) for n in name_nodes(method.body) if n.value in inputs}

    class _Inputs(cst.CSTTransformer):
        def leave_Name(self, original: cst.Name, updated: cst.Name):
            return cst.parse_expression(f"self.{inputs[original.value]}") if id(original) in reads else updated

    return method.visit(_Inputs()) if reads else method


def _params(cls: GraphClass) -> str:
    """The parameters of build_graph and of the run methods: `self`, then the placeholders."""
    return ", ".join(["self"] + [p.param if p.default_code is None else f"{p.param}={p.default_code}"
                                 for p in ordered(cls.placeholders)])


def _scopes_guarded(statement: cst.BaseStatement, skipped: Dict[str, set]) -> cst.BaseStatement:
    """A scope block (`with tf.variable_scope(...)`) with each of its lines computed from an unfed-able
    placeholder under its `if` (native.classes.scoped_lines)."""
    if not isinstance(statement, cst.With):
        return statement
    inner = [(tuple(sorted(p for p, ids in skipped.items() if id(s) in ids)), _scopes_guarded(s, skipped))
             for s in statement.body.body]
    if not any(guard for guard, _ in inner) and all(a is b for (_, a), b in zip(inner, statement.body.body)):
        return statement
    return statement.with_changes(body=statement.body.with_changes(body=_grouped(inner)))


def _grouped(guarded: List[Tuple[Tuple[str, ...], cst.BaseStatement]]) -> List[cst.BaseStatement]:
    """The statements, each run of them computed from unfed-able placeholders under one
    `if <them> is not None:`."""
    out: List[cst.BaseStatement] = []
    index = 0
    while index < len(guarded):
        guard, statement = guarded[index]
        if not guard:
            out.append(statement)
            index += 1
            continue
        block = []
        while index < len(guarded) and guarded[index][0] == guard:
            block.append(guarded[index][1])
            index += 1
        test = " and ".join(f"{param} is not None" for param in guard)
        out.append(cst.If(test=cst.parse_expression(test), body=cst.IndentedBlock(
            body=[block[0].with_changes(leading_lines=[]), *block[1:]])))
    return out


UNIQUE_NAME = '''

def tf1_unique_name(taken, name):
    """The name TF1 gave a `tf.Variable` made in a loop (`conv-maxpool-3/W`; `W_1` where the graph
    had one by that name), taken for this build: the tracked build finds the variable by it."""
    unique, count = name, 0
    while unique in taken:
        count += 1
        unique = f"{name}_{count}"
    taken.add(unique)
    return unique
'''


class _Dropped(cst.CSTTransformer):
    """The statements whose ids are in `removed` taken out (a block left empty: `pass`), and the
    held Session given to a Saver (`self.saver.save(self.sess, path)`) given None (`sessions`)."""

    def __init__(self, removed: Set[int], sessions: Set[int] = frozenset()):
        self.removed, self.sessions = removed, sessions

    def leave_SimpleStatementLine(self, original, updated):
        return cst.RemoveFromParent() if id(original) in self.removed else updated

    def leave_Arg(self, original: cst.Arg, updated: cst.Arg):
        return updated.with_changes(value=cst.Name("None")) if id(original) in self.sessions else updated

    def leave_IndentedBlock(self, original, updated: cst.IndentedBlock):
        return updated if updated.body else updated.with_changes(body=[cst.SimpleStatementLine([cst.Pass()])])


class _CompatV1(cst.CSTTransformer):
    """TF1 model code and TF1 optimizers spelled through `tf.compat.v1`, which runs them eagerly
    (tf-keras's legacy layers under `track_tf1_style_variables`; TF1's optimizers keep their update
    rule and slot names, where the Keras ones differ: Adam's epsilon, RMSProp's start)."""

    def __init__(self, script: ClassScript):
        self.script = script

    def leave_Call(self, original: cst.Call, updated: cst.Call):
        """`tf.placeholder_with_default(x, shape)` in a graph method: `x`, unless a run feeds the tensor
        (which then replaces it where it is made, `_Overrides`)."""
        if self.script.tf_call(original) != "placeholder_with_default":
            return deferred_initial_value(updated, self.script.tf_call(original), self.script.api)
        try:
            default = bind(updated, ("input", "shape", "name")).get("input")
        except ValueError:
            default = None
        if default is None:
            raise Blocked(self.script.line_of(original), "a `placeholder_with_default` whose arguments are not plain")
        return cst.parse_expression(f"{self.script.tf}.identity({code(default)})")

    def leave_Import(self, original: cst.Import, updated: cst.Import):
        """`import tensorflow.compat.v1 as tf`: TensorFlow's own namespace (what stays TF1 is spelled
        `tf.compat.v1.*` here, and by the fixes that follow)."""
        names = [n.with_changes(name=cst.parse_expression("tensorflow")) if code(n.name) == "tensorflow.compat.v1"
                 and n.asname is not None else n for n in updated.names]
        return updated.with_changes(names=names)

    def leave_Attribute(self, original: cst.Attribute, updated: cst.Attribute):
        path = self.script.api(original)
        if path is None or path.startswith("compat.") or path == "Variable":
            return updated
        if path.startswith(MAKES_VARIABLES + ("train.",)) or path in SCOPES or path in RNN_RUNNERS \
                or path.endswith("_initializer"):
            return cst.parse_expression(f"{self.script.tf}.compat.v1.{path}")
        return updated


def rewrite(module: cst.Module, source: str, line_of, pinned: bool = False) -> Optional[str]:
    """The module as eager TF2 when a class builds its graph (None: no class does; Blocked: what
    stops it). `pinned`: its random ops carry the seeds TF1's graph gave them (native.op_seeds)."""
    module, line_of = class_bases.merged(module, line_of)
    script = ClassScript(module, source, line_of, pinned)
    if not script.applies():
        return None
    return ClassWriter(script.analyse()).written()
