"""A model class's clipped training step, read as `minimize` with the clip between its halves.

In `__init__` (with the build methods it runs joined into it), the RNN tutorials' step

    tvars = tf.trainable_variables()
    grads, self.grad_norm = tf.clip_by_global_norm(tf.gradients(self.loss, tvars), c.max_grad_norm)
    optimizer = tf.train.AdamOptimizer(c.learning_rate)
    self.train_op = optimizer.apply_gradients(zip(grads, tvars), global_step=self.global_step)

or the optimizer's own halves (`grads, tvars = zip(*optimizer.compute_gradients(self.loss))`, the
clip, `apply_gradients`) is `self.train_op = optimizer.minimize(self.loss, global_step=...)` with the
gradients clipped by their global norm between its halves: `tf.trainable_variables()` is minimize's
own default list (the class's variables, as for its other `minimize`s), a variable without a gradient
is skipped by both, and a global norm does not depend on the order of the gradients. The eager step
clips the tape's gradients by the same norm (native.class_writer), and gives the norm back as
`self.<norm>` where a run fetches it with that step (native.class_runs checks every other read away).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Dict, List, Optional

import libcst as cst

from tfmigrate.native.class_facts import attrs_of, self_attr
from tfmigrate.native.syntax import code, names_assigned, names_read


@dataclass
class Clip:
    norm: cst.BaseExpression  # the clip norm, as `__init__` reads it
    norm_attr: Optional[str]  # `self.<norm_attr>` the clip's second value is kept in, where it is


def as_minimize(script, statements: List[cst.BaseStatement]) -> Dict[int, Clip]:
    """Each clipped step of `statements` (the body of `__init__`) replaced, in place, by its
    `minimize` (the other statements of the step go); the clip of each new statement, by id."""
    clips: Dict[int, Clip] = {}
    for apply in list(statements):
        found = _step(script, statements, apply)
        if found is None:
            continue
        minimize, gone, clip = found
        statements[statements.index(apply)] = minimize
        for statement in gone:
            statements.remove(statement)
        clips[id(minimize)] = clip
    return clips


def _step(script, statements, apply):
    """(the `minimize` statement, the statements it replaces, its Clip) of `apply`, or None."""
    assign = _assign(apply)
    if assign is None or self_attr(assign.targets[0].target) is None:
        return None
    call = assign.value
    if not (isinstance(call, cst.Call) and isinstance(call.func, cst.Attribute) and call.func.attr.value == "apply_gradients"
            and call.args and call.args[0].keyword is None and not any(a.star for a in call.args)):
        return None
    rest = call.args[1:]
    if len(rest) > 1 or rest and rest[0].keyword is not None and rest[0].keyword.value != "global_step":
        return None
    pairs = call.args[0].value
    if not (isinstance(pairs, cst.Call) and isinstance(pairs.func, cst.Name) and pairs.func.value == "zip"
            and len(pairs.args) == 2 and all(isinstance(a.value, cst.Name) and a.keyword is None for a in pairs.args)):
        return None
    grads, tvars = pairs.args[0].value.value, pairs.args[1].value.value
    before = statements[:statements.index(apply)]
    clipped = _assigned(before, grads)
    if clipped is None:
        return None
    before = before[:before.index(clipped)]  # (what the clip reads: `grads, _ = clip(grads, ...)` rebinds it)
    clip_call, target = _assign(clipped).value, _assign(clipped).targets[0].target
    if not (isinstance(clip_call, cst.Call) and script.tf_call(clip_call) == "clip_by_global_norm"
            and len(clip_call.args) == 2 and all(a.keyword is None for a in clip_call.args)
            and isinstance(target, cst.Tuple) and len(target.elements) == 2
            and isinstance(target.elements[0].value, cst.Name) and target.elements[0].value.value == grads):
        return None
    second = target.elements[1].value
    norm_attr = self_attr(second)
    if norm_attr is None and not (isinstance(second, cst.Name) and second.value == "_"):
        return None
    raw = clip_call.args[0].value
    gone = [clipped]
    listed = _assigned(before, tvars)
    if listed is not None and script.tf_call(_assign(listed).value) == "trainable_variables" \
            and not _assign(listed).value.args:  # `tvars = tf.trainable_variables()`
        gone.append(listed)
        computed = raw
        if isinstance(raw, cst.Name):  # `raw = tf.gradients(loss, tvars)` on a line of its own
            made = _assigned(before, raw.value)
            if made is None:
                return None
            gone.append(made)
            computed = _assign(made).value
        if not (isinstance(computed, cst.Call) and script.tf_call(computed) == "gradients" and len(computed.args) == 2
                and all(a.keyword is None for a in computed.args) and isinstance(computed.args[1].value, cst.Name)
                and computed.args[1].value.value == tvars):
            return None
        loss = computed.args[0].value
    else:  # `grads, tvars = zip(*optimizer.compute_gradients(self.loss))`
        halves = _assigned(before, tvars) if isinstance(raw, cst.Name) else None
        target = _assign(halves).targets[0].target if halves is not None else None
        if not (isinstance(target, cst.Tuple) and _bound(target) == [raw.value, tvars]):
            return None
        value = _assign(halves).value if halves is not None else None
        if not (isinstance(value, cst.Call) and isinstance(value.func, cst.Name) and value.func.value == "zip"
                and len(value.args) == 1 and value.args[0].star == "*"):
            return None
        computed = value.args[0].value
        if not (isinstance(computed, cst.Call) and isinstance(computed.func, cst.Attribute)
                and computed.func.attr.value == "compute_gradients" and len(computed.args) == 1
                and computed.args[0].keyword is None
                and code(computed.func.value) == code(call.func.value) and _plain(call.func.value)):
            return None
        gone.append(halves)
        loss = computed.args[0].value
    if self_attr(loss) is None:
        return None
    used = [name for s in statements if not any(s is g for g in gone) and s is not apply for name in names_read(s)]
    if any(name in used for name in {grads, tvars, code(raw)}):
        return None  # (the step's lists are read otherwise)
    if norm_attr is not None and any(norm_attr in attrs_of(s)[0] for s in statements if s is not clipped):
        return None  # (the norm read by the graph: the eager step computes it after the build)
    args = [cst.Arg(loss)] + ([cst.Arg(rest[0].value, keyword=cst.Name("global_step"), equal=cst.AssignEqual(
        cst.SimpleWhitespace(""), cst.SimpleWhitespace("")))] if rest else [])
    minimize = call.with_changes(func=call.func.with_changes(attr=cst.Name("minimize")), args=args)
    statement = apply.with_changes(body=[assign.with_changes(value=minimize)])
    return statement, gone, Clip(clip_call.args[1].value, norm_attr)


def _assign(statement) -> Optional[cst.Assign]:
    if isinstance(statement, cst.SimpleStatementLine) and len(statement.body) == 1 \
            and isinstance(statement.body[0], cst.Assign) and len(statement.body[0].targets) == 1:
        return statement.body[0]
    return None


def _assigned(statements, name: str):
    """The last statement of `statements` that binds `name` (alone or in a tuple), or None (also
    where another kind of statement may bind it)."""
    found = [s for s in statements if name in names_assigned(s)]
    return found[-1] if found and _assign(found[-1]) is not None else None


def _bound(target) -> List[str]:
    if isinstance(target, cst.Name):
        return [target.value]
    if isinstance(target, (cst.Tuple, cst.List)):
        return [e.value.value for e in target.elements if isinstance(e.value, cst.Name)]
    return []


def _plain(node) -> bool:
    """A name or `self.<attr>`: one optimizer, read twice."""
    return isinstance(node, cst.Name) or self_attr(node) is not None

