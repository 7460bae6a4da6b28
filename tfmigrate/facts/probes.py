"""Version probes: code that asks which TensorFlow it runs on before using a name.

    if "concat_v2" in dir(tf): ...          # the body runs only where the name exists
    if hasattr(tf, "select"): ...           # (and `not hasattr` guards the else branch)
    x = tf.unpack(y) if hasattr(tf, "unpack") else tf.unstack(y)
    try: tf.old_name(...)                   # fails with AttributeError under TF 2.21 ...
    except AttributeError: tf.new_name(...) # ... and this runs instead
    try: tf.new_name(...)                   # works under TF 2.21 ...
    except AttributeError: tf.old_name(...) # ... so this never runs

A reference such a probe protects runs only where it exists (or never under TF 2.21): it is
not removed API the program uses. Read from the walk's ancestor stack; no scope metadata.
"""
from __future__ import annotations

import re
from functools import lru_cache
from typing import Optional, Tuple

import libcst as cst

from tfmigrate.facts import api_table
from tfmigrate.facts.names import dotted

# What a failed access of a TF1 name raises: a handler naming one of these is a version probe.
_PROBES = frozenset({"AttributeError", "ImportError", "ModuleNotFoundError", "NameError"})
# Handlers that also catch it (a fallback that runs only when the `try` failed).
_CATCHES = _PROBES | {"Exception", "BaseException"}


def protected(ctx, node: cst.CSTNode, path: str, fails: bool) -> bool:
    """Whether `node`, a reference to API path `path` (normalized) inside the node being visited,
    is protected by a version probe. `fails`: accessing it raises under TF 2.21 (AttributeError:
    removed, missing or gone names), so a `try` that catches that runs its handler instead."""
    stack = ctx.stack + [node]
    for i in range(len(stack) - 2, -1, -1):
        node, child = stack[i], stack[i + 1]
        kind = type(node)
        if kind is cst.If or kind is cst.IfExp:
            branch = "body" if child is node.body else "orelse" if child is node.orelse else None
            if branch and _probes(ctx, node.test, path, branch == "body"):
                return True
        elif kind is cst.Try:
            if child is node.body and fails and any(_catches_handler(h, _PROBES) for h in node.handlers):
                ctx.fact(FailedTries).add(id(node))
                return True
            if isinstance(child, cst.ExceptHandler) and _catches_handler(child) \
                    and id(node) not in ctx.fact(FailedTries) and _mentions_tensorflow(ctx, node.body):
                return True  # the fallback of a `try` that works under TF 2.21: never runs
    return False


class FailedTries(set):
    """Per file: the `try` statements (by id) whose body names TF1 API that fails under TF 2.21,
    so their handlers run. Filled during the walk."""

    needs = ()

    def __init__(self, ctx):
        super().__init__()


def _catches_handler(handler: cst.ExceptHandler, names=_CATCHES) -> bool:
    """Whether the handler names one of `names` (a bare `except:` catches all of _CATCHES, but
    is no version probe: `try: saver.save() except: pass` hides breakage)."""
    if handler.type is None:
        return names is _CATCHES
    types = handler.type.elements if isinstance(handler.type, cst.Tuple) else [handler.type]
    for element in types:
        value = element.value if isinstance(element, cst.Element) else element
        if (dotted(value) or "").rsplit(".", 1)[-1] in names:
            return True
    return False


def _mentions_tensorflow(ctx, body: cst.CSTNode) -> bool:
    aliases = [local for local, target in ctx.names.aliases.items() if target and
               (target.startswith("tensorflow") or target.startswith("keras"))]
    if not aliases:
        return False
    text = ctx.module.code_for_node(body)
    return _alias_word(tuple(aliases)).search(text) is not None


@lru_cache(maxsize=256)
def _alias_word(aliases: Tuple[str, ...]) -> re.Pattern:
    return re.compile(r"\b(?:%s)\b" % "|".join(map(re.escape, aliases)))


@lru_cache(maxsize=256)
def _assignment(aliases: Tuple[str, ...]) -> re.Pattern:
    return re.compile(r"^[ \t]*((?:%s)(?:[ \t]*\.[ \t]*[A-Za-z_]\w*)+)[ \t]*(?::[^=\n]*)?(?:[-+*/|&]?=)(?!=)"
                      % "|".join(map(re.escape, aliases)), re.MULTILINE)


def _probes(ctx, test: cst.BaseExpression, path: str, positive: bool) -> bool:
    """Whether `test` being true (positive) or false (not positive) means `path` exists."""
    if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
        return _probes(ctx, test.expression, path, not positive)
    if isinstance(test, cst.BooleanOperation):
        # `a and b` true: both true; `a or b` false: both false.
        if isinstance(test.operator, cst.And) and positive or isinstance(test.operator, cst.Or) and not positive:
            return _probes(ctx, test.left, path, positive) or _probes(ctx, test.right, path, positive)
        return False
    probe = _probe(ctx, test)
    if probe is None:
        return False
    probed, exists_when_true = probe
    if positive != exists_when_true:
        return False
    return path == probed or path.startswith(probed + ".")


def _probe(ctx, test: cst.BaseExpression) -> Optional[Tuple[str, bool]]:
    """(probed path, whether the test is true when it exists) for `hasattr(m, "x")`,
    `getattr(m, "x", None)`, `"x" in dir(m)` and `"x" not in dir(m)`, `m` a TensorFlow module."""
    if isinstance(test, cst.Call) and dotted(test.func) in ("hasattr", "getattr") and len(test.args) >= 2:
        name = _string(test.args[1].value)
        module = ctx.names.api(test.args[0].value)
        if name and module is not None and _exists(module):
            return (f"{module}.{name}" if module else name), True
    if isinstance(test, cst.Comparison) and len(test.comparisons) == 1:
        target = test.comparisons[0]
        op = type(target.operator)
        call = target.comparator
        name = _string(test.left)
        if op in (cst.In, cst.NotIn) and name and isinstance(call, cst.Call) and dotted(call.func) == "dir" \
                and len(call.args) == 1:
            module = ctx.names.api(call.args[0].value)
            if module is not None and _exists(module):
                return (f"{module}.{name}" if module else name), op is cst.In
    return None


def _exists(module: str) -> bool:
    """Whether the probed object itself exists under TF 2.21 (else the probe raises too:
    `hasattr(tpu_config.InputPipelineConfig, ...)` with contrib's `tpu_config` gone)."""
    if not module:
        return True
    if api_table.gone(module) is not None or api_table.unresolved(module) is not None:
        return False
    parts = module.split(".")
    return not any(api_table.removed(".".join(parts[:i])) or api_table.contrib(".".join(parts[:i]))
                   for i in range(1, len(parts) + 1))


def _string(node) -> Optional[str]:
    if isinstance(node, cst.SimpleString):
        value = node.evaluated_value
        return value if isinstance(value, str) and value.isidentifier() else None
    return None


def self_assigned(ctx, path: str) -> bool:
    """Whether the module assigns `path`, or a prefix of it, on a TensorFlow module itself
    (`tf.model = tf.keras.Sequential()`, a shim `tf.placeholder = tf.compat.v1.placeholder`):
    then `tf.model.fit(...)` is the script's own attribute, not TensorFlow's API."""
    assigned = ctx.fact(AssignedPaths).paths
    return any(path == a or path.startswith(a + ".") for a in assigned)


class AssignedPaths:
    """Per file: the TensorFlow API paths the module assigns on a TensorFlow module itself."""

    needs = ()

    def __init__(self, ctx):
        self.paths = _assigned_paths(ctx)


def _assigned_paths(ctx) -> frozenset:
    aliases = [local for local, target in ctx.names.aliases.items()
               if target and (target.startswith("tensorflow") or target.startswith("keras"))]
    if not aliases:
        return frozenset()
    pattern = _assignment(tuple(aliases))
    out = set()
    for match in pattern.finditer(ctx.source):
        try:
            expression = cst.parse_expression(re.sub(r"\s+", "", match.group(1)))
        except Exception:  # noqa: BLE001 - not an expression after all
            continue
        path = ctx.names.api(expression)
        if path:
            out.add(path)
    return frozenset(out)
