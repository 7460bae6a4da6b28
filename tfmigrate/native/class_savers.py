"""A `tf.train.Saver()` made in a method of a graph class (issue 21), as native.checkpoints writes
one at module level: a name-based saver of the same variables under TF1's names.

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

from typing import Optional

import libcst as cst

from tfmigrate.fixers.arguments import keyword
import tfmigrate.native.checkpoints as checkpoints
from tfmigrate.native.class_facts import GraphClass
from tfmigrate.native.script import Blocked
from tfmigrate.native.syntax import code


def saver_statement(script, node) -> Optional[str]:
    """The code of `<name> = tf.train.Saver(<options>)` in a method of a graph class, or None (not
    one). Blocked where the variables it saved cannot all be made first."""
    small = node.body[0] if isinstance(node, cst.SimpleStatementLine) and len(node.body) == 1 else None
    if not (isinstance(small, cst.Assign) and len(small.targets) == 1 and isinstance(small.targets[0].target, cst.Name)
            and script.tf_call(small.value) == "train.Saver"):
        return None
    at = script.line_of(node)
    cls: Optional[GraphClass] = script.current_class
    if cls is None:
        raise Blocked(at, "a `tf.train.Saver` at module level beside the classes that build the graph (this route "
                          "saves one made in a method of the class)")
    if any(a.keyword is None or a.keyword.value not in checkpoints.SAVER_OPTIONS for a in small.value.args):
        raise Blocked(at, "a `tf.train.Saver` of a graph class given a `var_list`")
    if any(p.default_code is None and not p.iterator for p in cls.placeholders) or not cls.initializers:
        raise Blocked(at, "a `tf.train.Saver` of a graph class not fed by a `tf.data` iterator (its variables are "
                          "made from the spec of the iterator's dataset)")
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
    spec = f"self.{next(iter(cls.initializers))}.element_spec"
    args = ", ".join(spec if p.iterator else p.default_code for p in cls.placeholders if p.default_code is None
                     or p.iterator)
    variables = '{v.name.split(":")[0]: v for v in self.variables}'
    var_list = f"with_tf1_optimizer_state({variables}{state})" if state else variables
    call = small.value.with_changes(func=cst.parse_expression(f"{script.tf}.compat.v1.train.Saver"), args=[
        keyword("var_list", cst.parse_expression(var_list)), *small.value.args])
    script.optimizer_state |= bool(state)
    return (f"self.{steps.pop()}.get_concrete_function({args})  # the layers and the optimizer make their variables\n"
            + code(node.with_changes(body=[small.with_changes(value=call)], leading_lines=[])))


def session_of_saver(script, call: cst.Call) -> Optional[cst.Arg]:
    """The Session argument of `<saver>.save(sess, ...)` / `.restore(sess, ...)` (None: not one)."""
    if isinstance(call.func, cst.Attribute) and call.func.attr.value in ("save", "restore") and call.args \
            and call.args[0].keyword is None and isinstance(call.args[0].value, cst.Name) \
            and call.args[0].value.value in script.sessions:
        return call.args[0]
    return None
