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
module level, its names used nowhere else (but the norm, where fetched with the step: the eager
step gives it back); anything else is left as it was (and refused).

The optimizer's own halves, three statements in a row at module level or in a function's body
(`main`), are the same `minimize` with the clip between them:

    grads, tvars = zip(*optimizer.compute_gradients(loss))
    grads, _ = tf.clip_by_global_norm(grads, 5.0)
    train_op = optimizer.apply_gradients(zip(grads, tvars))

    gvs = optimizer.compute_gradients(loss)
    capped = [(tf.clip_by_value(g, -1.0, 1.0), v) for g, v in gvs]
    train_op = optimizer.apply_gradients(capped)

(`compute_gradients` lists `minimize`'s variables; a variable without a gradient is skipped by both.)
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Dict, List, Optional, Sequence, Tuple

import libcst as cst
import libcst.matchers as m

from tfmigrate.facts.names import ImportTable
from tfmigrate.native.syntax import names_in


@dataclass
class Clipped:
    module: cst.Module
    norms: Dict[str, cst.BaseExpression]  # the train op's name -> the clip norm expression
    # the train op's name -> the bounds each gradient is clipped to (`clip_by_value`)
    values: Dict[str, Tuple[cst.BaseExpression, cst.BaseExpression]] = field(default_factory=dict)
    # the train op's name -> the name given the global norm, where the program reads it (fetched with it)
    norm_names: Dict[str, str] = field(default_factory=dict)


def clipped(module: cst.Module, source: str) -> Optional[Clipped]:
    """`module` with each clipped training step written as `minimize`, or None if it has none."""
    if "apply_gradients" not in source or "clip_by_" not in source:
        return None
    names = ImportTable(module, source)
    drop: List[int] = []
    steps: Dict[int, cst.BaseStatement] = {}
    norms: Dict[str, cst.BaseExpression] = {}
    norm_names: Dict[str, str] = {}
    for scope in [module] + [s for s in module.body if isinstance(s, cst.FunctionDef)]:
        _trainable_lists(scope.body if isinstance(scope, cst.Module) else scope.body.body, names, scope,
                         steps, drop, norms, norm_names)
    values: Dict[str, Tuple[cst.BaseExpression, cst.BaseExpression]] = {}
    for scope in [module] + [s for s in module.body if isinstance(s, cst.FunctionDef)]:
        _optimizer_halves(scope.body if isinstance(scope, cst.Module) else scope.body.body, names, scope,
                          steps, drop, norms, values, norm_names)
    if not steps:
        return None
    assigned = [t.target.value for t in m.findall(module, m.AssignTarget(target=m.Name()))]
    bound = [name for node in m.findall(module, m.AssignTarget()) for name in names_in(node.target)]
    if any(assigned.count(train) > 1 for train in [*norms, *values]) \
            or any(bound.count(norm) > 1 for norm in norm_names.values()):
        return None  # (a train op's clip is found by its name: one name, one step)
    return Clipped(_rewritten(module, steps, drop), norms, values, norm_names)


def _trainable_lists(body: Sequence[cst.BaseStatement], names: ImportTable, scope: cst.CSTNode,
                     steps, drop, norms, norm_names) -> None:
    """`tvars = tf.trainable_variables()`, the clip of `tf.gradients(loss, tvars)` and
    `apply_gradients(zip(grads, tvars))` in `body` (the module's, or a function's such as `main`)."""
    counts: Dict[str, int] = {}
    for name in names_in(scope):
        counts[name] = counts.get(name, 0) + 1
    assigns = {}  # a name assigned once in the body -> its statement
    for statement in body:
        for target in _targets(statement):
            assigns[target] = None if target in assigns else statement

    def value(statement) -> Optional[cst.BaseExpression]:
        return statement.body[0].value if statement is not None else None

    def tf_call(node, path: str) -> bool:
        return isinstance(node, cst.Call) and names.api(node.func) == path

    for statement in body:
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
                and targets.elements[0].value.value == grads):
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
        steps[id(statement)] = _as_minimize(statement, loss, step)
        drop += [id(listed), id(made)] + ([id(extra)] if extra is not None else [])
        norms[train] = clip.args[1].value
        _norm_named(targets.elements[1].value.value, counts, train, norm_names)


def _norm_named(name: str, counts: Dict[str, int], train: str, norm_names: Dict[str, str]) -> None:
    """The clip's second value (`grads, norm = tf.clip_by_global_norm(...)`), kept where it is read:
    the eager step gives back the norm it clipped by (native.emit), for the runs fetching it with
    the step (native.script checks every other read away)."""
    if name != "_" and counts.get(name, 0) > 1:
        norm_names[train] = name


def _rewritten(module: cst.Module, steps: Dict[int, cst.BaseStatement], drop: List[int]) -> cst.Module:
    """`module` with each step statement replaced and each dropped one left an empty line."""

    def body_of(statements):
        body, blank = [], []
        for statement in statements:
            if id(statement) in drop:
                blank += [*statement.leading_lines, cst.EmptyLine()]  # the line stays, empty
                continue
            statement = steps.get(id(statement), statement)
            if isinstance(statement, cst.FunctionDef) and isinstance(statement.body, cst.IndentedBlock):
                statement = statement.with_changes(body=statement.body.with_changes(body=body_of(statement.body.body)))
            if blank:
                statement = statement.with_changes(leading_lines=[*blank, *statement.leading_lines])
                blank = []
            body.append(statement)
        return body

    return module.with_changes(body=body_of(module.body))


def _optimizer_halves(body: Sequence[cst.BaseStatement], names: ImportTable, scope: cst.CSTNode,
                      steps, drop, norms, values, norm_names) -> None:
    """The two shapes of `compute_gradients`, clip, `apply_gradients` in a row (module docstring)."""
    counts: Dict[str, int] = {}
    for name in names_in(scope):
        counts[name] = counts.get(name, 0) + 1
    for first, clip, apply in zip(body, body[1:], body[2:]):
        if not all(isinstance(s, cst.SimpleStatementLine) and len(s.body) == 1 and isinstance(s.body[0], cst.Assign)
                   and len(s.body[0].targets) == 1 for s in (first, clip, apply)):
            continue
        train = _single_assign(apply)
        call = apply.body[0].value
        if train is None or not (isinstance(call, cst.Call) and isinstance(call.func, cst.Attribute)
                                 and isinstance(call.func.value, cst.Name) and call.func.attr.value == "apply_gradients"
                                 and call.args and call.args[0].keyword is None):
            continue
        step = [a for a in call.args[1:] if a.keyword is None or a.keyword.value == "global_step"]
        if len(step) != len(call.args) - 1 or len(step) > 1:
            continue
        optimizer = call.func.value.value
        computed = _computed(first, optimizer)
        if computed is None:
            continue
        loss, listed = computed
        pairs = call.args[0].value
        bound = clip.body[0].value
        target = clip.body[0].targets[0].target
        if isinstance(listed, tuple):  # `grads, tvars = zip(*...)`: clipped by their global norm
            raw, tvars = listed
            if not (_names(pairs, "zip", 2) and isinstance(bound, cst.Call) and names.api(bound.func) == "clip_by_global_norm"
                    and len(bound.args) == 2 and all(a.keyword is None for a in bound.args)
                    and isinstance(bound.args[0].value, cst.Name) and bound.args[0].value.value == raw
                    and isinstance(target, cst.Tuple) and len(target.elements) == 2
                    and all(isinstance(e.value, cst.Name) for e in target.elements)):
                continue
            grads, rest = target.elements[0].value.value, target.elements[1].value.value
            if not (pairs.args[0].value.value == grads and pairs.args[1].value.value == tvars
                    and counts.get(tvars) == 2 and rest not in (grads, raw, tvars)
                    and counts.get(grads) == (4 if grads == raw else 2) and (grads == raw or counts.get(raw) == 2)):
                continue
            norms[train] = bound.args[1].value
            _norm_named(rest, counts, train, norm_names)
        else:  # `capped = [(tf.clip_by_value(g, lo, hi), v) for g, v in gvs]`
            bounds = _clipped_values(bound, listed, names)
            if bounds is None or not isinstance(target, cst.Name) or not (
                    isinstance(pairs, cst.Name) and pairs.value == target.value) \
                    or counts.get(target.value) != 2 or counts.get(listed) != 2:
                continue
            values[train] = bounds
        steps[id(apply)] = _as_minimize(apply, loss, step)
        drop += [id(first), id(clip)]


def _as_minimize(statement: cst.SimpleStatementLine, loss: cst.BaseExpression, step) -> cst.SimpleStatementLine:
    """`train_op = optimizer.apply_gradients(...[, global_step=s])` as `optimizer.minimize(loss[, global_step=s])`."""
    call = statement.body[0].value
    args = [cst.Arg(loss)] + ([cst.Arg(step[0].value, keyword=cst.Name("global_step"),
                                       equal=cst.AssignEqual(cst.SimpleWhitespace(""), cst.SimpleWhitespace("")))]
                              if step else [])
    minimize = call.with_changes(func=call.func.with_changes(attr=cst.Name("minimize")), args=args)
    return statement.with_changes(body=[statement.body[0].with_changes(value=minimize)])


def _computed(statement: cst.SimpleStatementLine, optimizer: str):
    """(loss, (grads, tvars)) of `grads, tvars = zip(*optimizer.compute_gradients(loss))`, or (loss,
    gvs) of `gvs = optimizer.compute_gradients(loss)`; None otherwise."""
    value, target = statement.body[0].value, statement.body[0].targets[0].target
    if isinstance(value, cst.Call) and isinstance(value.func, cst.Name) and value.func.value == "zip" \
            and len(value.args) == 1 and value.args[0].star == "*":
        value = value.args[0].value
        if not (isinstance(target, cst.Tuple) and len(target.elements) == 2
                and all(isinstance(e.value, cst.Name) for e in target.elements)):
            return None
        listed = (target.elements[0].value.value, target.elements[1].value.value)
    elif isinstance(target, cst.Name):
        listed = target.value
    else:
        return None
    if not (isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute)
            and isinstance(value.func.value, cst.Name) and value.func.value.value == optimizer
            and value.func.attr.value == "compute_gradients" and len(value.args) == 1
            and value.args[0].keyword is None and isinstance(value.args[0].value, cst.Name)):
        return None
    return value.args[0].value, listed


def _clipped_values(node: cst.BaseExpression, gvs: str, names: ImportTable):
    """(lo, hi) of `[(tf.clip_by_value(g, lo, hi), v) for g, v in gvs]` (with or without `if g is not
    None`: `minimize` skips a variable without a gradient too), else None."""
    if not (isinstance(node, cst.ListComp) and isinstance(node.elt, cst.Tuple) and len(node.elt.elements) == 2
            and node.for_in.inner_for_in is None and len(node.for_in.ifs) <= 1
            and isinstance(node.for_in.iter, cst.Name) and node.for_in.iter.value == gvs
            and isinstance(node.for_in.target, cst.Tuple) and len(node.for_in.target.elements) == 2
            and all(isinstance(e.value, cst.Name) for e in node.for_in.target.elements)):
        return None
    g, v = (e.value.value for e in node.for_in.target.elements)
    if node.for_in.ifs and not m.matches(node.for_in.ifs[0].test, m.Comparison(
            left=m.Name(g), comparisons=[m.ComparisonTarget(operator=m.IsNot(), comparator=m.Name("None"))])):
        return None
    clip, var = (e.value for e in node.elt.elements)
    if not (isinstance(var, cst.Name) and var.value == v and isinstance(clip, cst.Call)
            and names.api(clip.func) == "clip_by_value" and len(clip.args) == 3
            and all(a.keyword is None for a in clip.args)
            and isinstance(clip.args[0].value, cst.Name) and clip.args[0].value.value == g):
        return None
    return clip.args[1].value, clip.args[2].value


def _names(node, function: str, count: int) -> bool:
    """`function(a, b, ...)` of `count` plain names."""
    return isinstance(node, cst.Call) and isinstance(node.func, cst.Name) and node.func.value == function \
        and len(node.args) == count and all(isinstance(a.value, cst.Name) and a.keyword is None for a in node.args)


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
