"""`tf.test.compute_gradient_error` in a test, eagerly (issue 22 item 2).

TF1's check differentiates the graph from `x` to `y`: the theoretical Jacobian from its gradients,
the numerical one by central differences of step `delta` (1e-3) at `x_init_value` (else `x`'s own
value), and returns the largest difference. TF2's `tf.test.compute_gradient(f, [x], delta=...)`
computes the same two Jacobians of a function (measured under TF 2.21: the same error, to the last
bit, for float32 at delta 1e-3; pass TF1's delta, TF2's default differs). So the statements that
build `y` from `x` become a function of `x`, and the check a call of HELPER on it:

    x = tf.constant(x_np)                            x = tf.constant(x_np)
    y = ops.normalized(x)                            y = ops.normalized(x)
    err = tf.test.compute_gradient_error(       ->   def y_of(x):
        x, [3, 4], y, [3, 4],                            y = ops.normalized(x)
        x_init_value=x_np, delta=1e-3)                   return y
                                                     err = gradient_error(y_of, x_np, delta=1e-3)

Refused (test_files then names the check): `x` or `y` other than a name, several `x`s,
`init_targets` or `extra_feed_dict`, `x` a placeholder, `y` not built from `x` by `a = ...`
statements of the test written once (not in a loop, a branch or a nested function).
Known gap: the check runs eagerly only; in a process where another module turned v2 behaviour off
(a test run that imports a test module left on the compat route), TF2's check finds no session.
"""
from __future__ import annotations

from typing import Dict, List, Optional, Set, Tuple

import libcst as cst
import libcst.matchers as m

from tfmigrate.native.syntax import NotALine, bind, calls_in, code, fresh_name, holds, line_around, names_read

CHECK = "test.compute_gradient_error"
PARAMS = ("x", "x_shape", "y", "y_shape", "x_init_value", "delta", "init_targets", "extra_feed_dict")
HELPER_NAME = "gradient_error"
HELPER = '''def gradient_error(f, x, delta=1e-3):
    """TF1's `tf.test.compute_gradient_error` of `y = f(x)` at `x`, eagerly: the largest difference
    of its theoretical and numerical Jacobians (`tf.test.compute_gradient`, TF1's step `delta`)."""
    theoretical, numerical = {tf}.test.compute_gradient(f, [x], delta=delta)
    return abs(theoretical[0] - numerical[0]).max()
'''
_UNDER = m.For() | m.While() | m.If() | m.Try() | m.FunctionDef() | m.Lambda()


class Refused(Exception):
    def __init__(self, node: cst.CSTNode, what: str):
        super().__init__(what)
        self.node, self.what = node, what


def checked(function: cst.FunctionDef, api, tf: str) -> Optional[cst.FunctionDef]:
    """`function` with each gradient check as a function of its `x` and a HELPER call, or None
    when it has none. `api(node)`: the TensorFlow API a node names."""
    checks = [c for c in calls_in(function) if api(c.func) == CHECK]
    if not checks:
        return None
    taken = {n.value for n in m.findall(function, m.Name())}
    inserted: Dict[int, cst.FunctionDef] = {}
    replaced: Dict[int, cst.BaseExpression] = {}
    for check in checks:
        definition, call = _check(function, check, api, taken)
        try:
            line = line_around(function, check)
        except NotALine:
            raise Refused(check, f"`{code(check.func)}` other than in a statement of the test")
        if id(line) in inserted:
            raise Refused(check, f"two `{code(check.func)}` in one statement")
        inserted[id(line)] = definition
        replaced[id(check)] = call
    return function.visit(_Written(inserted, replaced))


def _check(function, check: cst.Call, api, taken: Set[str]) -> Tuple[cst.FunctionDef, cst.Call]:
    what = f"`{code(check.func)}`"
    try:
        bound = bind(check, PARAMS)
    except ValueError:
        raise Refused(check, f"{what} given `*args`")
    x, y = bound.get("x"), bound.get("y")
    if not isinstance(x, cst.Name) or not isinstance(y, cst.Name):
        raise Refused(check, f"{what} of other than one tensor `x` and one `y` given by name")
    if {"init_targets", "extra_feed_dict"} & set(bound) and not all(
            m.matches(bound[k], m.Name("None")) for k in ("init_targets", "extra_feed_dict") if k in bound):
        raise Refused(check, f"{what} given `init_targets` or `extra_feed_dict`")
    lines = [s for s in m.findall(function, m.SimpleStatementLine())]
    at = next(k for k, s in enumerate(lines) if holds(s, check))
    made = next((k for k in range(at - 1, -1, -1) if x.value in _targets(lines[k])), None)
    if made is None:
        raise Refused(check, f"{what} of `{x.value}`, which the test does not make")
    if any(api(c.func) in ("placeholder", "placeholder_with_default") for c in calls_in(lines[made])):
        raise Refused(check, f"{what} of a placeholder")
    from_x = {x.value}
    for k in range(made + 1, at):  # (what is computed from `x`; the rest the function reads as it is)
        if names_read(lines[k]) & from_x:
            from_x |= _targets(lines[k])
    built: List[cst.SimpleStatementLine] = []
    needed = {y.value}
    for k in range(at - 1, made, -1):  # (the statements `y` needs, back to `x`)
        targets = _targets(lines[k])
        if not targets & needed or not targets & from_x:
            continue
        if not _simple(lines[k]) or any(holds(under, lines[k]) for under in m.findall(function.body, _UNDER)):
            raise Refused(lines[k], f"{what} of `{y.value}`, built by other than `a = ...` statements written once")
        built.insert(0, lines[k])
        needed = (needed - targets) | names_read(lines[k])
    if not built or x.value not in needed:
        raise Refused(check, f"{what} of `{y.value}`, which is not built from `{x.value}` in the test")
    name = fresh_name(taken, f"{y.value}_of")
    body = [s.with_changes(leading_lines=[]) for s in built] + [cst.parse_statement(f"return {y.value}\n")]
    definition = cst.parse_statement(f"def {name}({x.value}):\n    pass\n")
    definition = definition.with_changes(body=definition.body.with_changes(body=body))
    point = bound.get("x_init_value")
    point = x if point is None or m.matches(point, m.Name("None")) else point
    call = cst.parse_expression(f"{HELPER_NAME}({name}, x, delta=1e-3)" if "delta" in bound else f"{HELPER_NAME}({name}, x)")
    args = [call.args[0], call.args[1].with_changes(value=point)] + [
        a.with_changes(value=bound["delta"]) for a in call.args[2:]]
    return definition, call.with_changes(args=args)


def _targets(line) -> Set[str]:
    return {t.target.value for small in line.body if isinstance(small, cst.Assign) for t in small.targets
            if isinstance(t.target, cst.Name)}


def _simple(line) -> bool:
    return len(line.body) == 1 and isinstance(line.body[0], cst.Assign) and all(
        isinstance(t.target, cst.Name) for t in line.body[0].targets)


class _Written(cst.CSTTransformer):
    def __init__(self, inserted, replaced):
        self.inserted, self.replaced = inserted, replaced

    def leave_Call(self, original, updated):
        return self.replaced.get(id(original), updated)

    def leave_IndentedBlock(self, original, updated):
        body = []
        for before, after in zip(original.body, updated.body):
            if id(before) in self.inserted:
                body.append(self.inserted[id(before)].with_changes(leading_lines=after.leading_lines))
                after = after.with_changes(leading_lines=[])
            body.append(after)
        return updated.with_changes(body=body)


def with_helper(module: cst.Module, tf: str) -> cst.Module:
    """`module` with HELPER defined before its first class (once)."""
    if any(isinstance(s, cst.FunctionDef) and s.name.value == HELPER_NAME for s in module.body):
        return module
    body = list(module.body)
    at = next((k for k, s in enumerate(body) if isinstance(s, cst.ClassDef)), len(body))
    helper = cst.parse_statement(HELPER.format(tf=tf)).with_changes(leading_lines=[cst.EmptyLine(), cst.EmptyLine()])
    if at < len(body):
        body[at] = body[at].with_changes(leading_lines=[cst.EmptyLine(), cst.EmptyLine()])
    return module.with_changes(body=[*body[:at], helper, *body[at:]])
