"""A program's own graph collections, named by a string (`tf.add_to_collection("losses", t)`).

TensorFlow's CIFAR-10 tutorial, and the programs written after it, add each variable's weight decay
to a collection of their own while the model is built, then sum it into the loss:

    tf.add_to_collection("losses", weight_decay)          (in the model function, per variable)
    tf.add_to_collection("losses", cross_entropy)
    total = tf.add_n(tf.get_collection("losses"))

A collection belongs to a graph. Eagerly each `tf.function` traces a graph of its own
(`FuncGraph`, whose collections start empty and die with the trace; measured under TF 2.21), so the
same calls, run in the function in the program's order, hold what TF1's graph held when the sum
was built: the terms added before it. native.script makes the statement that reads a collection
depend on every statement before it that adds to it (directly, or through a model function that
does), so each function computing the sum also makes those terms first. Collections TensorFlow
fills itself (`tf.GraphKeys.*`) are not this: they are read elsewhere (native.batch_norm, the
regularization losses) or refused.
"""
from __future__ import annotations

from typing import Callable, Optional, Set

import libcst as cst

from tfmigrate.native.syntax import calls_in

ADD, READ = "add_to_collection", "get_collection"


def key(call: cst.Call) -> Optional[str]:
    """The collection a call names by a string literal (its first argument, or `name=` / `key=`)."""
    for i, arg in enumerate(call.args):
        if arg.keyword is None and i == 0 or arg.keyword is not None and arg.keyword.value in ("name", "key"):
            return arg.value.evaluated_value if isinstance(arg.value, cst.SimpleString) else None
    return None


def read_key(call: cst.Call) -> Optional[str]:
    """`tf.get_collection("losses")`: "losses" (a scope given too filters it: not read here)."""
    return key(call) if len(call.args) == 1 else None


def keys_added(node: cst.CSTNode, tf_call: Callable[[cst.CSTNode], Optional[str]]) -> Set[str]:
    """The collections named by a string that the calls in `node` add to."""
    return _keys(node, tf_call, ADD, key)


def keys_read(node: cst.CSTNode, tf_call: Callable[[cst.CSTNode], Optional[str]]) -> Set[str]:
    """The collections named by a string that the calls in `node` read."""
    return _keys(node, tf_call, READ, read_key)


def _keys(node: cst.CSTNode, tf_call, path: str, named: Callable[[cst.Call], Optional[str]]) -> Set[str]:
    return {named(call) for call in calls_in(node) if tf_call(call) == path and named(call) is not None}
