"""Rewrites of a single call that keep the bytes around it: drop a method, drop its arguments."""
import libcst as cst


def drop_method_call(call: cst.Call) -> cst.BaseExpression:
    """`x.f(...)` -> `x`, keeping any parentheses that wrapped the whole call."""
    receiver = call.func.value
    if call.lpar:
        receiver = receiver.with_changes(
            lpar=[*call.lpar, *receiver.lpar], rpar=[*receiver.rpar, *call.rpar]
        )
    return receiver


def without_arguments(call: cst.Call) -> cst.Call:
    """`x.f(a)` -> `x.f()`."""
    return call.with_changes(args=[], whitespace_before_args=cst.SimpleWhitespace(""))
