"""`d_vars = tf.get_collection(TRAINABLE_VARIABLES, scope="D")` read only as `minimize(var_list=d_vars)`.

The GAN tutorials' shape: each optimizer trains the variables of one scope, listed once at module
level. The rewrite already knows the call written inside `minimize` (Script._collection_scope: the
step trains the layers made under that scope), so the list is written where it is used and its
assignment dropped, the module keeping its line numbers (blockers name the lines the user wrote).
"""
from __future__ import annotations

from typing import Dict, Optional

import libcst as cst
import libcst.matchers as m

_TRAINABLE = m.Call(func=m.Attribute(attr=m.Name("get_collection")),
                    args=[m.Arg(value=m.Attribute(attr=m.Name("TRAINABLE_VARIABLES"))), m.ZeroOrMore()])


def inlined(module: cst.Module) -> Optional[cst.Module]:
    """`module` with each such list written into the `var_list=` that reads it, or None if none."""
    lists: Dict[str, cst.Call] = {}
    for statement in module.body:
        if m.matches(statement, m.SimpleStatementLine(body=[m.Assign(targets=[m.AssignTarget(target=m.Name())],
                                                                     value=_TRAINABLE)])):
            name = statement.body[0].targets[0].target.value
            lists[name] = None if name in lists else statement.body[0].value  # assigned twice: left alone
    lists = {name: call for name, call in lists.items() if call is not None}
    if not lists:
        return None
    names = [n.value for n in m.findall(module, m.Name())]
    used = [a.value.value for a in m.findall(module, m.Arg(keyword=m.Name("var_list"), value=m.Name()))]
    lists = {name: call for name, call in lists.items() if names.count(name) == 1 + used.count(name) > 1}
    if not lists:
        return None
    return module.visit(_Inline(lists))


class _Inline(cst.CSTTransformer):
    def __init__(self, lists: Dict[str, cst.Call]):
        self.lists = lists

    def leave_Arg(self, original: cst.Arg, updated: cst.Arg) -> cst.Arg:
        if m.matches(updated, m.Arg(keyword=m.Name("var_list"), value=m.Name())) and updated.value.value in self.lists:
            return updated.with_changes(value=self.lists[updated.value.value])
        return updated

    def leave_Module(self, original: cst.Module, updated: cst.Module) -> cst.Module:
        body, blank = [], []
        for statement in updated.body:
            if m.matches(statement, m.SimpleStatementLine(body=[m.Assign(targets=[m.AssignTarget(target=m.Name())])])) \
                    and statement.body[0].targets[0].target.value in self.lists:
                blank += [*statement.leading_lines, cst.EmptyLine()]  # the line stays, empty
                continue
            if blank and hasattr(statement, "leading_lines"):
                statement = statement.with_changes(leading_lines=[*blank, *statement.leading_lines])
                blank = []
            body.append(statement)
        return updated.with_changes(body=body)
