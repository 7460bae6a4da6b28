"""`tf.cond` and `tf.while_loop` in graph code rewritten as eager TF2: where TF2's return the same.

Inside a `tf.function` (or a tracked layer's call) TF2's control flow runs what TF1's graph ran, with
two differences in what comes back: TF1's `cond` unpacked a branch's one-element list
(`strict=False`) and TF2's does not, and TF1's `while_loop` returned one loop variable bare where
TF2's returns the structure it was given (measured on the compat route: `[x * 2.0]` as a branch
gave a tensor, `[t]` as loop variables a tensor). A call whose shape rules both out is rewritten
with the rest of the code; any other is refused.
"""
from __future__ import annotations

from typing import Optional

import libcst as cst

from tfmigrate.native.syntax import bind, calls_in

CONTROL_FLOW = ("cond", "while_loop")


def control_flow_differs(call: cst.Call, path: str) -> Optional[str]:
    """Why `tf.cond` / `tf.while_loop` may return another structure in TF2, or None. TF1's
    `cond` unpacked a branch's one-element list (`strict=False`), TF2's does not; TF1's
    `while_loop` returned one loop variable bare, TF2's in the structure given. Lambdas that return
    no one-element list, and two or more loop variables in a literal, return the same in both."""
    try:
        bound = bind(call, ("pred", "true_fn", "false_fn") if path == "cond" else ("cond", "body", "loop_vars"))
    except ValueError:
        return f"`tf.{path}` with arguments the rewrite does not read"
    if path == "cond":
        if set(bound) != {"pred", "true_fn", "false_fn"} or len(call.args) != 3:
            return "`tf.cond` other than `tf.cond(pred, lambda: ..., lambda: ...)`"
        for branch in (bound["true_fn"], bound["false_fn"]):
            if not isinstance(branch, cst.Lambda) or isinstance(branch.body, (cst.List, cst.Tuple)) \
                    and len(branch.body.elements) == 1:
                return "`tf.cond` whose branch is not a lambda returning a tensor (TF1 unpacked one-element lists)"
        return None
    loop_vars = bound.get("loop_vars")
    if not isinstance(loop_vars, (cst.List, cst.Tuple)) or len(loop_vars.elements) < 2 \
            or any(isinstance(element, cst.StarredElement) for element in loop_vars.elements) \
            or not isinstance(bound.get("cond"), cst.Lambda) or not isinstance(bound.get("body"), cst.Lambda) \
            or any(arg.keyword is not None and arg.keyword.value == "return_same_structure" for arg in call.args):
        return ("`tf.while_loop` other than with lambdas over a literal list of two or more loop variables "
                "(TF1 returned one loop variable bare)")
    return None


def tracked_control_flow_refused(call: cst.Call, path: Optional[str], tf_call, makes_variables: tuple) -> Optional[str]:
    """Why a `tf.cond` / `tf.while_loop` in tracked model code (a model function, a graph class's
    `build_graph`) is refused, or None: another structure in TF2, or a callable that makes variables
    (made inside a branch of a traced function). `tf_call`: a call's TF path; `makes_variables`:
    the paths that make them (model_mapping.MAKES_VARIABLES)."""
    if path not in CONTROL_FLOW:
        return None
    why = control_flow_differs(call, path)
    if why is None and any((tf_call(inner) or "").startswith(makes_variables) for inner in calls_in(call)):
        why = f"`tf.{path}` whose callable makes variables"
    return why
