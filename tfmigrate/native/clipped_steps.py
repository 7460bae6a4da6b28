"""The RNN tutorials' training step: gradients clipped by their global norm, then applied.

    tvars = tf.trainable_variables()
    grads, _ = tf.clip_by_global_norm(tf.gradients(loss, tvars), max_grad_norm)
    train_op = optimizer.apply_gradients(zip(grads, tvars), global_step=step)

is `optimizer.minimize(loss, global_step=step)` with the gradients clipped between its two halves:
`tf.trainable_variables()` is minimize's own default list, and a global norm does not depend on the
order of the gradients. Before the rewrite the three statements are written as that `minimize`
(the other two become blank lines, so every line keeps its number and a Blocker names the line as
written), and the clip norm is kept for its target: the eager training step clips the tape's
gradients with `tf.clip_by_global_norm` before applying them (native.emit). Only this shape at
module level, its names used nowhere else; anything else is left as it was (and refused).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Dict, List, Optional

import libcst as cst

from tfmigrate.facts.names import ImportTable
from tfmigrate.native.syntax import names_in


@dataclass
class Clipped:
    module: cst.Module
    norms: Dict[str, cst.BaseExpression]  # the train op's name -> the clip norm expression


def clipped(module: cst.Module, source: str) -> Optional[Clipped]:
    """`module` with each clipped training step written as `minimize`, or None if it has none."""
    if "apply_gradients" not in source or "clip_by_global_norm" not in source:
        return None
    names = ImportTable(module, source)
    counts: Dict[str, int] = {}
    for name in names_in(module):
        counts[name] = counts.get(name, 0) + 1
    assigns = {}  # a name assigned once at module level -> its statement
    for statement in module.body:
        for target in _targets(statement):
            assigns[target] = None if target in assigns else statement

    def value(statement) -> Optional[cst.BaseExpression]:
        return statement.body[0].value if statement is not None else None

    def tf_call(node, path: str) -> bool:
        return isinstance(node, cst.Call) and names.api(node.func) == path

    drop: List[int] = []
    steps: Dict[int, cst.BaseStatement] = {}
    norms: Dict[str, cst.BaseExpression] = {}
    for statement in module.body:
        train = _single_assign(statement)
        call = value(statement) if train is not None else None
        if not (isinstance(call, cst.Call) and isinstance(call.func, cst.Attribute)
                and call.func.attr.value == "apply_gradients" and call.args and call.args[0].keyword is None):
            continue
        step = [a for a in call.args[1:] if a.keyword is None or a.keyword.value == "global_step"]
        if len(step) != len(call.args) - 1 or len(step) > 1:
            continue
        pairs = call.args[0].value
        if not (isinstance(pairs, cst.Call) and isinstance(pairs.func, cst.Name) and pairs.func.value == "zip"
                and len(pairs.args) == 2 and all(isinstance(a.value, cst.Name) and a.keyword is None
                                                 for a in pairs.args)):
            continue
        grads, tvars = pairs.args[0].value.value, pairs.args[1].value.value
        listed = assigns.get(tvars)
        if not (listed is not None and _single_assign(listed) == tvars and tf_call(value(listed), "trainable_variables")
                and not value(listed).args and counts.get(tvars) == 3):
            continue
        made = assigns.get(grads)
        clip = value(made)
        if made is None or not tf_call(clip, "clip_by_global_norm") or len(clip.args) != 2 \
                or any(a.keyword is not None for a in clip.args) or counts.get(grads) != 2:
            continue
        targets = made.body[0].targets[0].target
        if not (isinstance(targets, (cst.Tuple, cst.List)) and len(targets.elements) == 2
                and all(isinstance(e.value, cst.Name) for e in targets.elements)
                and targets.elements[0].value.value == grads
                and (targets.elements[1].value.value == "_" or counts.get(targets.elements[1].value.value) == 1)):
            continue
        computed, extra = clip.args[0].value, None
        if isinstance(computed, cst.Name):  # `raw = tf.gradients(loss, tvars)` on a line of its own
            extra = assigns.get(computed.value)
            if extra is None or counts.get(computed.value) != 2 or _single_assign(extra) != computed.value:
                continue
            computed = value(extra)
        if not (tf_call(computed, "gradients") and len(computed.args) == 2 and all(a.keyword is None for a in computed.args)
                and isinstance(computed.args[0].value, cst.Name) and isinstance(computed.args[1].value, cst.Name)
                and computed.args[1].value.value == tvars):
            continue
        loss = computed.args[0].value
        args = [cst.Arg(loss)] + ([cst.Arg(step[0].value, keyword=cst.Name("global_step"),
                                           equal=cst.AssignEqual(cst.SimpleWhitespace(""), cst.SimpleWhitespace("")))]
                                  if step else [])
        minimize = call.with_changes(func=call.func.with_changes(attr=cst.Name("minimize")), args=args)
        steps[id(statement)] = statement.with_changes(body=[statement.body[0].with_changes(value=minimize)])
        drop += [id(listed), id(made)] + ([id(extra)] if extra is not None else [])
        norms[train] = clip.args[1].value
    if not steps:
        return None
    body, blank = [], []
    for statement in module.body:
        if id(statement) in drop:
            blank += [*statement.leading_lines, cst.EmptyLine()]  # the line stays, empty
            continue
        statement = steps.get(id(statement), statement)
        if blank:
            statement = statement.with_changes(leading_lines=[*blank, *statement.leading_lines])
            blank = []
        body.append(statement)
    return Clipped(module.with_changes(body=body), norms)


def _single_assign(statement) -> Optional[str]:
    """`name = value` as a statement of its own: the name."""
    if isinstance(statement, cst.SimpleStatementLine) and len(statement.body) == 1 \
            and isinstance(statement.body[0], cst.Assign) and len(statement.body[0].targets) == 1 \
            and isinstance(statement.body[0].targets[0].target, cst.Name):
        return statement.body[0].targets[0].target.value
    return None


def _targets(statement) -> List[str]:
    if not (isinstance(statement, cst.SimpleStatementLine) and len(statement.body) == 1
            and isinstance(statement.body[0], cst.Assign) and len(statement.body[0].targets) == 1):
        return []
    return names_in(statement.body[0].targets[0].target)
