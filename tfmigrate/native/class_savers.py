"""A `tf.train.Saver()` made in a method of a graph class, or as `self.saver` at the end of its
`__init__` (issue 21), as native.checkpoints writes one at module level: a name-based saver of the
same variables under TF1's names.

    saver = tf.train.Saver()                 ->  self.train_step.get_concrete_function(<its inputs' spec>)
                                                 saver = tf.compat.v1.train.Saver(var_list=with_tf1_optimizer_state(
                                                     {v.name.split(":")[0]: v for v in self.variables},
                                                     (self.opt_optimizer, ("beta1_power", "beta2_power"))))
    saver.save(sess, path, step)             ->  saver.save(None, path, step)
    saver.restore(sess, path)                ->  saver.restore(None, path)

TF1's Saver, made after the graph, saved every variable and the optimizer's state. This route
makes them at the first run; tracing the training step once (no update runs) makes them all
first, with the initial values they would have had, so the Saver sees each, and a restore before
the first run restores into them.
"""
from __future__ import annotations

from typing import Optional, Set

import libcst as cst

from tfmigrate.fixers.arguments import keyword
import tfmigrate.native.checkpoints as checkpoints
from tfmigrate.native.class_sessions import saver_session
from tfmigrate.native.class_facts import GraphClass, Placeholder, self_attr, subtree
from tfmigrate.native.model_mapping import local_names
from tfmigrate.native.script import Blocked
from tfmigrate.native.syntax import bind, code, names_assigned, names_read


def saver_statement(script, node) -> bool:
    """Whether `node` is `<name> = tf.train.Saver(<options>)` in a method of a graph class: its code
    is written by `saver_code` once all runs are read (the training run may come after it)."""
    small = node.body[0] if isinstance(node, cst.SimpleStatementLine) and len(node.body) == 1 else None
    if not (isinstance(small, cst.Assign) and len(small.targets) == 1 and isinstance(small.targets[0].target, cst.Name)
            and script.tf_call(small.value) == "train.Saver"):
        return False
    at = script.line_of(node)
    cls: Optional[GraphClass] = script.current_class
    if cls is None:
        raise Blocked(at, "a `tf.train.Saver` at module level beside the classes that build the graph (this route "
                          "saves one made in a method of the class)")
    if any(a.keyword is None or a.keyword.value not in checkpoints.SAVER_OPTIONS for a in small.value.args):
        raise Blocked(at, "a `tf.train.Saver` of a graph class given a `var_list`")
    script.pending_savers.append((cls, node))
    return True


def init_saver(script, cls: GraphClass, statement, target: Optional[str], value) -> bool:
    """Whether `statement` of `__init__` is `self.<target> = tf.train.Saver(<options>)`, made after the
    graph and its `minimize` (`cls.init_saver`; written at the end of the eager `__init__`, its
    training step traced first, by `saver_code`)."""
    if target is None or script.tf_call(value) != "train.Saver":
        return False
    at = script.line_of(statement)
    if any(a.keyword is None or a.keyword.value not in checkpoints.SAVER_OPTIONS for a in value.args):
        raise Blocked(at, "a `tf.train.Saver` of a graph class given a `var_list`")
    if cls.init_saver is not None or not cls.trains:
        raise Blocked(at, f"`self.{target} = tf.train.Saver()` in `__init__` " + (
            "twice" if cls.init_saver is not None else "before the class's `minimize`"))
    cls.init_saver = statement
    return True


def saver_code(script, cls: GraphClass, node: cst.SimpleStatementLine) -> str:
    """The code of a Saver `saver_statement` found: the training step traced once on the spec of its
    inputs, then a Saver of the variables by TF1 name. Blocked where they cannot all be made first."""
    small = node.body[0]
    at = script.line_of(node)
    inputs = [p for p in cls.placeholders if p.iterator or p.dtype is not None]  # also those some run leaves unfed:
    specs = [f"{p.param}={_iterator_spec(cls, p, at) if p.iterator else _placeholder_spec(script, cls, p, at)}"
             for p in inputs]  # traced without them, the graph would skip what they feed (the loss, with labels)
    trains = [m for m in cls.methods.values() if m.train is not None]
    steps = {m.name for m in trains}
    if len(cls.trains) != 1 or len(steps) != 1:
        raise Blocked(at, "a `tf.train.Saver` of a graph class without exactly one train op run")
    train = next(iter(cls.trains.values()))
    optimizer = script.tf_call(cst.parse_expression(train.optimizer))
    state = ""
    if optimizer in checkpoints.ACCUMULATORS:
        own = checkpoints.ACCUMULATORS[optimizer]
        state = f", (self.{train.attr}_optimizer, {tuple(own)!r})".replace("'", '"')
    elif optimizer not in checkpoints.STATELESS_OPTIMIZERS:
        raise Blocked(at, f"a `tf.train.Saver` of a graph class trained by `{train.optimizer}` (its state's TF1 "
                          "names are not known here)")
    args = ", ".join(specs)
    variables = '{v.name.split(":")[0]: v for v in self.variables}'
    var_list = f"with_tf1_optimizer_state({variables}{state})" if state else variables
    call = small.value.with_changes(func=cst.parse_expression(f"{script.tf}.compat.v1.train.Saver"), args=[
        keyword("var_list", cst.parse_expression(var_list)), *small.value.args])
    script.optimizer_state |= bool(state)
    return (f"self.{steps.pop()}.get_concrete_function({args})  # the layers and the optimizer make their variables\n"
            + code(node.with_changes(body=[small.with_changes(value=call)], leading_lines=[])))


def session_of_saver(script, call: cst.Call) -> Optional[cst.Arg]:
    """The Session argument of `<saver>.save(sess, ...)` / `.restore(sess, ...)`, or of the Session a
    class holds (`self.saver.save(self.sess, ...)`) (None: not one)."""
    if isinstance(call.func, cst.Attribute) and call.func.attr.value in ("save", "restore") and call.args \
            and call.args[0].keyword is None and isinstance(call.args[0].value, cst.Name) \
            and call.args[0].value.value in script.sessions:
        return call.args[0]
    held = script.current_class.held_session if script.current_class is not None else None
    return saver_session(call, held.attr) if held is not None else None


def _iterator_spec(cls: GraphClass, placeholder: Placeholder, at: int) -> str:
    """The element spec of the dataset the iterator is started on (made in `__init__`)."""
    started = [attr for attr, iterator in cls.initializers.items() if iterator == placeholder.iterator]
    if not started:
        raise Blocked(at, "a `tf.train.Saver` of a graph class whose iterator is not started by "
                          "`make_initializer(<dataset>)` (its variables are made from the spec of the dataset)")
    return f"self.{started[0]}.element_spec"


def _placeholder_spec(script, cls: GraphClass, placeholder: Placeholder, at: int) -> str:
    """`tf.TensorSpec(<shape>, <dtype>)` of `self.<p> = tf.placeholder(<dtype>, <shape>)`, read from
    that call (evaluated in the Saver's method: its names must be the module's, not `__init__`'s)."""
    assigns = [n for statement in cls.body for n in subtree(statement) if isinstance(n, cst.Assign)]
    calls = [a.value for a in assigns if len(a.targets) == 1 and self_attr(a.targets[0].target) == placeholder.attr
             and script.tf_call(a.value) == "placeholder"] if placeholder.own else []
    if len(calls) != 1 or placeholder.dtype is None:
        raise Blocked(at, f"a `tf.train.Saver` of a graph class fed by `{placeholder.attr}`, not a "
                          "`self.<x> = tf.placeholder(<dtype>, <shape>)` of its `__init__` (the variables are "
                          "made before the restore from the placeholders' shapes)")
    bound = bind(calls[0], ("dtype", "shape", "name"))
    shape = bound.get("shape")
    if not _seen_from_methods(script, cls, bound["dtype"]) or shape is not None and not (
            _seen_from_methods(script, cls, shape) and _shape_literal(shape)):
        raise Blocked(at, f"a `tf.train.Saver` of a graph class fed by `self.{placeholder.attr}`, a placeholder whose "
                          "shape or dtype is written with names of `__init__` (the variables are made before the "
                          "restore, in the Saver's method, from the placeholders' shapes; write `[None, 28]` or "
                          "a module-level constant)")
    return f"{script.tf}.TensorSpec({'None' if shape is None else code(shape)}, {code(bound['dtype'])})"


def _seen_from_methods(script, cls: GraphClass, node) -> bool:
    """Whether every name in `node` is bound at module level (an import, a constant) and not again
    in `__init__`: it means the same in the Saver's method."""
    module: Set[str] = set()
    for statement in script.module.body:
        if isinstance(statement, cst.SimpleStatementLine):
            for small in statement.body:
                if isinstance(small, (cst.Import, cst.ImportFrom)) and not isinstance(small.names, cst.ImportStar):
                    module |= {(a.asname.name.value if a.asname else code(a.name).split(".")[0]) for a in small.names}
            module |= names_assigned(statement)
    assigned = set().union(*(names_assigned(s) for s in cls.body))
    init = local_names(cls.init) | assigned
    if cls.init_saver is not None:  # (the Saver's code ends `__init__`: its parameters, never rebound, too)
        params = {p.name.value for p in cls.init.params.params} - assigned
        return all(name in module - init or name in params for name in names_read(node) - {"None"})
    return all(name in module and name not in init for name in names_read(node) - {"None"})


def _shape_literal(shape) -> bool:
    """`[None, 3]`, `(2, N)`, `None`: a list or tuple of sizes (no `*` and no expression)."""
    if isinstance(shape, cst.Name):
        return True
    return isinstance(shape, (cst.List, cst.Tuple)) and all(
        not isinstance(e, cst.StarredElement) and isinstance(e.value, (cst.Integer, cst.Name)) for e in shape.elements)
