"""The global step made inside another call, and found again by `tf.train.get_global_step()`: one name.

TF1 code often makes the step where a schedule reads it, `lr = tf.train.polynomial_decay(2.0,
tf.train.get_or_create_global_step(), 500, 0.01)`, then finds it where `minimize` counts it
(`global_step=tf.train.get_global_step()`) or where it is fetched (`sess.run(tf.train.get_global_step())`).
Each call returns the graph's one step variable, so the module means the same with
`global_step = tf.train.get_or_create_global_step()` on a line of its own before the first use and
the name at each: the shape the script route rewrites (its `global_step.assign_add(1)` after each step).
"""
from __future__ import annotations

import re
from typing import Optional, Tuple

import libcst as cst
from libcst.metadata import MetadataWrapper, ParentNodeProvider, PositionProvider

from tfmigrate.facts.names import ImportTable
from tfmigrate.native.script import STEP_MAKERS
from tfmigrate.native.syntax import bind, bound_names, code, names_in

NAME = "global_step"
_SCOPES = (cst.FunctionDef, cst.ClassDef, cst.Lambda)


def named(source: str) -> Optional[str]:
    """`source` with its global step made on a line of its own and read by name, or None where it
    has no such call, or where one name for them all is not certain (a step made twice, or in two
    functions, a `get_global_step()` before the step is made, a `"global_step"` of its own)."""
    if "get_global_step" not in source and not re.search(r"[(,=]\s*[\w.]*get_or_create_global_step\(", source):
        return None
    if re.search(r"""["']global_step["']""", source):
        return None  # a variable named so may be the one `get_or_create_global_step` finds
    try:
        wrapper = MetadataWrapper(cst.parse_module(source))
    except Exception:  # noqa: BLE001 - the caller reports unparsable files itself
        return None
    module = wrapper.module
    names = ImportTable(module, source)
    lines, parents = wrapper.resolve(PositionProvider), wrapper.resolve(ParentNodeProvider)
    calls = [n for n in lines if isinstance(n, cst.Call) and not n.args]
    makers = [c for c in calls if names.api(c.func) in STEP_MAKERS]  # (`compat.v1.` read alike)
    finders = [c for c in calls if names.api(c.func) == "train.get_global_step"]
    if len(makers) != 1:
        return None
    maker = makers[0]
    statement, bound = _statement_of(maker, parents)
    if statement is None or len({_scope(c, parents) for c in [maker, *finders]}) != 1:
        return None
    made_at = lines[statement].start.line
    if any(lines[c].start.line <= made_at for c in finders):
        return None  # (TF1's `get_global_step()` returned None before the step was made)
    if bound is not None:
        if not finders or [n.value for n in bound_names(module)].count(bound) != 1:
            return None
        return module.visit(_Named({id(c): bound for c in finders}, None)).code
    if NAME in names_in(module):  # (a keyword argument so named is not a name)
        return None
    made = cst.parse_statement(f"{NAME} = {code(maker)}\n")
    return module.visit(_Named({id(c): NAME for c in [maker, *finders]}, (statement, made))).code


def _statement_of(call: cst.Call, parents) -> Tuple[Optional[cst.SimpleStatementLine], Optional[str]]:
    """The line of `call`, and the name it is bound to where the line is `name = call`."""
    node = call
    while not isinstance(node, cst.SimpleStatementLine):
        node = parents.get(node)
        if node is None or isinstance(node, (cst.BaseCompoundStatement, *_SCOPES)):
            return None, None
    if len(node.body) != 1:
        return None, None
    small = node.body[0]
    if isinstance(small, cst.Assign) and small.value is call:  # (`self.global_step = ...`: not ours to name)
        target = small.targets[0].target if len(small.targets) == 1 else None
        return (node, target.value) if isinstance(target, cst.Name) else (None, None)
    return node, None


def _scope(node: cst.CSTNode, parents) -> Optional[int]:
    """The function, class or lambda `node` is in (None: module level)."""
    node = parents.get(node)
    while node is not None and not isinstance(node, _SCOPES):
        node = parents.get(node)
    return None if node is None else id(node)


class _Named(cst.CSTTransformer):
    """Each step call by its name, and the step's line before the line that made it inline."""

    def __init__(self, replaced, insert):
        super().__init__()
        self.replaced, self.insert = replaced, insert

    def leave_Call(self, original: cst.Call, updated: cst.Call) -> cst.BaseExpression:
        name = self.replaced.get(id(original))
        return updated if name is None else cst.Name(name)

    def leave_SimpleStatementLine(self, original, updated):
        if self.insert is None or original is not self.insert[0]:
            return updated
        made = self.insert[1].with_changes(leading_lines=updated.leading_lines)
        small = original.body[0]
        if isinstance(small, cst.Expr) and isinstance(small.value, cst.Call) and id(small.value) in self.replaced:
            return made  # (`tf.train.get_or_create_global_step()` alone: its line names it, nothing is left)
        return cst.FlattenSentinel([made, updated.with_changes(leading_lines=())])


class _StepReads(cst.CSTTransformer):
    """`tf.train.global_step(sess, step)` -> `int(sess.run(step))`."""

    def __init__(self, names: ImportTable):
        self.names, self.changed = names, False

    def leave_Call(self, original: cst.Call, updated: cst.Call) -> cst.BaseExpression:
        if self.names.api(original.func) != "train.global_step":
            return updated
        try:
            bound = bind(updated, ("sess", "global_step_tensor"))
        except ValueError:
            return updated
        if set(bound) != {"sess", "global_step_tensor"} or not isinstance(bound["sess"], cst.Name):
            return updated
        self.changed = True
        run = cst.Call(func=cst.Attribute(value=bound["sess"], attr=cst.Name("run")),
                       args=[cst.Arg(bound["global_step_tensor"])])
        return cst.Call(func=cst.Name("int"), args=[cst.Arg(run)])


def read_by_run(source: str) -> Optional[str]:
    """`source` with each `tf.train.global_step(sess, step)` written as what TF1 did, `int(sess.run(step))`
    (the value of the step, read by the Session: a run the script route rewrites), on the same lines;
    None where it has none."""
    if "global_step(" not in source:
        return None
    try:
        module = cst.parse_module(source)
    except Exception:  # noqa: BLE001 - the caller reports unparsable files itself
        return None
    reads = _StepReads(ImportTable(module, source))
    changed = module.visit(reads)
    return changed.code if reads.changed else None
