"""`d_vars = tf.get_collection(TRAINABLE_VARIABLES, scope="D")` (or `tf.trainable_variables()`) read
only as `minimize(var_list=d_vars)`.

The DCGAN shape, `t_vars = tf.trainable_variables()` then `d_vars = [v for v in t_vars if
v.name.startswith("D")]`, is the same list (`get_collection`'s scope matches the start of each
name), so it is first read as that call.

The GAN tutorials' shape: each optimizer trains the variables of one scope, listed once at module
level. The rewrite already knows the call written inside `minimize` (Script._collection_scope: the
step trains the layers made under that scope), so the list is written where it is used and its
assignment dropped, the module keeping its line numbers (blockers name the lines the user wrote).
"""
from __future__ import annotations

import re
from typing import Dict, List, Optional, Sequence

import libcst as cst
import libcst.matchers as m

# `self.d_vars` in a method: a list the class keeps, read as `var_list=self.d_vars`
_SELF_ATTRIBUTE = m.Attribute(value=m.Name("self"), attr=m.Name())
_LIST_TARGET = m.Name() | _SELF_ATTRIBUTE
_TRAINABLE = m.Call(func=m.Attribute(attr=m.Name("get_collection")),
                    args=[m.Arg(value=m.Attribute(attr=m.Name("TRAINABLE_VARIABLES"))), m.ZeroOrMore()]) \
    | m.Call(func=m.Attribute(attr=m.Name("trainable_variables")), args=[])  # (all of them: `minimize`'s default)


def inlined(module: cst.Module, source: str) -> Optional[cst.Module]:
    """`module` (whose text is `source`) with each such list written into the `var_list=` that
    reads it, at module level, in each top-level function (`def main(_)`: a name local to it) and
    in each method of a class (also `self.d_vars`, an attribute the module reads nowhere else), or
    None if none."""
    if "TRAINABLE_VARIABLES" not in source and "trainable_variables" not in source:
        return None  # (what both shapes must spell: every module the native route reads comes here)
    changed = _inlined_in(module)
    module = changed or module
    body, functions = [], False
    for statement in module.body:
        local = _inlined_in(statement) if isinstance(statement, cst.FunctionDef) and not m.findall(
            statement, m.Global() | m.Nonlocal()) else None
        if isinstance(statement, cst.ClassDef) and isinstance(statement.body, cst.IndentedBlock):
            methods = [_inlined_in(s, module) if isinstance(s, cst.FunctionDef) and not m.findall(
                s, m.Global() | m.Nonlocal()) else None for s in statement.body.body]
            if any(methods):
                local = statement.with_changes(body=statement.body.with_changes(body=[
                    new or s for new, s in zip(methods, statement.body.body)]))
        functions = functions or local is not None
        body.append(local or statement)
    if functions:
        return module.with_changes(body=body)
    return changed


def _key(target: cst.BaseExpression) -> str:
    """`d_vars`, or `self.d_vars`."""
    return target.value if isinstance(target, cst.Name) else f"self.{target.attr.value}"


def _uses(owner, module: Optional[cst.Module]) -> List[str]:
    """Each name, and each `self.<attribute>` (any `.attribute` of the module, where a class keeps
    it: another object's `model.d_vars` may read it), as often as it occurs."""
    found = [n.value for n in m.findall(owner, m.Name())]
    if module is not None:
        found += [f"self.{a.attr.value}" for a in m.findall(module, m.Attribute())]
    return found


def _statements(owner) -> Sequence[cst.CSTNode]:
    return owner.body if isinstance(owner, cst.Module) else owner.body.body


def _with_statements(owner, statements):
    if isinstance(owner, cst.Module):
        return owner.with_changes(body=statements)
    return owner.with_changes(body=owner.body.with_changes(body=statements))


def _inlined_in(owner, module: Optional[cst.Module] = None):
    """`owner` (the module, or a function; a method of `module`'s classes) with its lists inlined,
    or None if it has none."""
    filtered = _filtered_lists(owner, module)
    owner = filtered if filtered is not None else owner
    lists: Dict[str, cst.Call] = {}
    for statement in _statements(owner):
        if m.matches(statement, m.SimpleStatementLine(body=[m.Assign(targets=[m.AssignTarget(target=_LIST_TARGET)],
                                                                     value=_TRAINABLE)])):
            name = _key(statement.body[0].targets[0].target)
            if name.startswith("self.") and module is None:
                continue
            lists[name] = None if name in lists else statement.body[0].value  # assigned twice: left alone
    lists = {name: call for name, call in lists.items() if call is not None}
    if not lists:
        return filtered
    names = _uses(owner, module)
    used = [_key(a.value) for a in m.findall(owner, m.Arg(keyword=m.Name("var_list"), value=_LIST_TARGET))]
    lists = {name: call for name, call in lists.items() if names.count(name) == 1 + used.count(name) > 1}
    if not lists:
        return filtered
    owner = owner.visit(_Inline(lists))
    return _with_statements(owner, _without(_statements(owner), lists))


def _filtered_lists(owner, module: Optional[cst.Module] = None):
    """`owner` (module or function) with `[v for v in t_vars if v.name.startswith("S")]` of `t_vars =
    tf.trainable_variables()` (assigned once, read only by such lists) written as
    `tf.get_collection(TRAINABLE_VARIABLES, scope="S")`, and the `t_vars` line left empty; None if
    there is none."""
    alls: Dict[str, cst.BaseExpression] = {}  # t_vars -> the module `tf` its call was spelled with
    for statement in _statements(owner):
        if m.matches(statement, m.SimpleStatementLine(body=[m.Assign(
                targets=[m.AssignTarget(target=m.Name())], value=m.Call(func=m.Attribute(
                    attr=m.Name("trainable_variables")), args=[]))])):
            assign = statement.body[0]
            name = assign.targets[0].target.value
            alls[name] = None if name in alls else assign.value.func.value
    if not any(alls.values()):
        return None  # (before the names are counted: every module and method comes here)
    names = [n.value for n in m.findall(owner, m.Name())]
    filters: Dict[int, cst.Call] = {}
    for name, tf in alls.items():
        if tf is None:
            continue
        found = {}
        for statement in _statements(owner):
            assign = statement.body[0] if m.matches(statement, m.SimpleStatementLine(body=[m.Assign(
                targets=[m.AssignTarget(target=m.Name() if module is None else _LIST_TARGET)])])) else None
            prefix = _prefix_filter(assign.value, name) if assign is not None else None
            if prefix is not None:
                found[id(assign.value)] = cst.parse_expression(
                    f'{cst.Module([]).code_for_node(tf)}.get_collection('
                    f'{cst.Module([]).code_for_node(tf)}.GraphKeys.TRAINABLE_VARIABLES, scope="{prefix}")')
        # (`name` appears once in its assignment, once as each list's iterable)
        if found and names.count(name) == 1 + len(found):
            filters.update(found)
            alls[name] = tf
        else:
            alls[name] = None
    if not filters:
        return None
    owner = owner.visit(_Filtered(filters))
    return _with_statements(owner, _without(_statements(owner), {name for name, tf in alls.items() if tf is not None}))


def _prefix_filter(node: cst.BaseExpression, source: str) -> Optional[str]:
    """S of `[v for v in <source> if v.name.startswith("S")]` (S a plain scope name), else None."""
    if not m.matches(node, m.ListComp(elt=m.Name(), for_in=m.CompFor(
            target=m.Name(), iter=m.Name(source), ifs=[m.CompIf(test=m.Call(func=m.Attribute(
                value=m.Attribute(value=m.Name(), attr=m.Name("name")), attr=m.Name("startswith")),
                args=[m.Arg(value=m.SimpleString(), keyword=None)]))], inner_for_in=None))):
        return None
    variable = node.for_in.target.value
    test = node.for_in.ifs[0].test
    if node.elt.value != variable or test.func.value.value.value != variable:
        return None
    prefix = test.args[0].value.evaluated_value
    return prefix if isinstance(prefix, str) and re.fullmatch(r"[A-Za-z0-9_/]+", prefix) else None


class _Filtered(cst.CSTTransformer):
    def __init__(self, filters: Dict[int, cst.Call]):
        self.filters = filters

    def leave_Assign(self, original: cst.Assign, updated: cst.Assign) -> cst.Assign:
        call = self.filters.get(id(original.value))
        return updated if call is None else updated.with_changes(value=call)


def _without(statements, names) -> List[cst.CSTNode]:
    """`statements` without the assignments to `names`, each line left empty (the module keeps
    its line numbers)."""
    body, blank = [], []
    for statement in statements:
        if m.matches(statement, m.SimpleStatementLine(body=[m.Assign(targets=[m.AssignTarget(target=_LIST_TARGET)])])) \
                and _key(statement.body[0].targets[0].target) in names:
            blank += [*statement.leading_lines, cst.EmptyLine()]  # the line stays, empty
            continue
        if blank and hasattr(statement, "leading_lines"):
            statement = statement.with_changes(leading_lines=[*blank, *statement.leading_lines])
            blank = []
        body.append(statement)
    return body


class _Inline(cst.CSTTransformer):
    def __init__(self, lists: Dict[str, cst.Call]):
        self.lists = lists

    def leave_Arg(self, original: cst.Arg, updated: cst.Arg) -> cst.Arg:
        if m.matches(updated, m.Arg(keyword=m.Name("var_list"), value=_LIST_TARGET)) \
                and _key(updated.value) in self.lists:
            return updated.with_changes(value=self.lists[_key(updated.value)])
        return updated
