"""A train op made outside the model class whose graph it trains: moved into the class's `__init__`.

Tutorial code often builds the model in a class and its training step beside it
(`net = Net()`, then `train_op = tf.train.AdamOptimizer(1e-3).minimize(net.loss)`, perhaps with a
`global_step = tf.Variable(0, trainable=False)`), the TextCNN and siamese-network shape. The class
route rewrites a class whose `__init__` ends with its `minimize`; when nothing between the
instance and the `minimize` builds graph state, TF1 trained the same variables either way, so the
module means the same with both statements at the end of `__init__` (`self.train_op`,
`self.global_step`) and `net.train_op` / `net.global_step` read where the names were.
"""
from __future__ import annotations

import re
from typing import Dict, List, Optional, Sequence

import libcst as cst

from tfmigrate.facts.names import ImportTable
from tfmigrate.native.syntax import bind, bound_names, calls_in, code, found_in, names_in

# `.minimize(net.loss` (or `loss=net.loss`): the loss an attribute of an object
_TRAINS_AN_ATTRIBUTE = re.compile(r"\.minimize\(\s*(?:loss\s*=\s*)?\w+\.\w+\s*[,)]")


def moved(source: str) -> Optional[str]:
    """`source` with one such train op (and its global step) moved into the class, or None."""
    if not _TRAINS_AN_ATTRIBUTE.search(source):
        return None  # (most modules stop here: no `minimize(net.loss)`)
    try:
        module = cst.parse_module(source)
    except Exception:  # noqa: BLE001 - the caller reports unparsable files itself
        return None
    names = ImportTable(module, source)
    tf = {alias for alias, full in names.aliases.items() if full in ("tensorflow", "tensorflow.compat.v1")}
    classes = {s.name.value: s for s in module.body if isinstance(s, cst.ClassDef) and _init(s) is not None}
    if not classes:
        return None
    module_names = [n.value for n in bound_names(module)]
    params = {p.name.value for p in found_in(module, "visit_Param")}
    bodies = [module.body] + [s.body.body for s in module.body if isinstance(s, cst.FunctionDef)]
    for body in bodies:
        found = _train_outside(body, classes, tf, module, module_names, params)
        if found is not None:
            return _moved(module, classes[found.cls], found).code
    return None


class _Found:
    def __init__(self, cls: str, instance: str, train: cst.SimpleStatementLine, step: Optional[cst.SimpleStatementLine]):
        self.cls, self.instance, self.train, self.step = cls, instance, train, step


def _train_outside(body: Sequence[cst.BaseStatement], classes: Dict[str, cst.ClassDef], tf, module, module_names,
                   params) -> Optional[_Found]:
    """In `body`: `inst = Cls(...)`, then statements that build nothing (an unread global step
    variable allowed), then `train = <optimizer>.minimize(inst.loss[, global_step=step])`."""
    for index, statement in enumerate(body):
        small = _assign(statement)
        if small is None or not isinstance(small.value, cst.Call) or not isinstance(small.value.func, cst.Name) \
                or small.value.func.value not in classes:
            continue
        cls, instance = small.value.func.value, small.targets[0].target.value
        if [c for c in calls_in(module) if isinstance(c.func, cst.Name) and c.func.value == cls] != [small.value] \
                or module_names.count(instance) != 1:
            return None  # (one instance: the class's graph is built once)
        step = None
        for later in body[index + 1:]:
            assign = _assign(later)
            call = assign.value if assign is not None else None
            if isinstance(call, cst.Call) and isinstance(call.func, cst.Attribute) and call.func.attr.value == "minimize":
                return _checked(cls, instance, later, step, classes[cls], tf, module_names, params)
            if step is None and assign is not None and _step_variable(call, tf):
                step = later
                continue
            if set(names_in(later)) & (tf | {instance}):
                return None  # (graph code between: the train op may train more than the class's variables)
        return None
    return None


def _checked(cls, instance, train, step, node: cst.ClassDef, tf, module_names, params) -> Optional[_Found]:
    call = _assign(train).value
    try:
        bound = bind(call, ("loss", "global_step", "var_list"))
    except ValueError:
        return None
    loss = bound.get("loss")
    if set(bound) - {"loss", "global_step"} or not (isinstance(loss, cst.Attribute) and isinstance(loss.value, cst.Name)
                                                  and loss.value.value == instance):
        return None
    if "global_step" in bound and not (step is not None and isinstance(bound["global_step"], cst.Name)
                                       and bound["global_step"].value == _target(step)):
        return None
    optimizer = call.func.value
    if not set(names_in(optimizer)) <= tf:
        return None  # (read in `__init__`: literals and TF calls only)
    targets = [_target(train)] + ([_target(step)] if step is not None else [])
    attributes = {n.attr.value for n in found_in(node, "visit_Attribute")}
    if any(t in attributes or module_names.count(t) != 1 or t in params for t in targets):
        return None
    return _Found(cls, instance, train, step)


def _moved(module: cst.Module, cls: cst.ClassDef, found: _Found) -> cst.Module:
    step = _target(found.step) if found.step is not None else None
    train = _target(found.train)
    added: List[cst.BaseStatement] = []
    if found.step is not None:
        added.append(cst.parse_statement(f"self.{step} = {code(_assign(found.step).value)}\n"))
    call = _assign(found.train).value
    args = [a.with_changes(value=cst.parse_expression(f"self.{a.value.attr.value}"))
            if isinstance(a.value, cst.Attribute) and code(a.value.value) == found.instance else
            a.with_changes(value=cst.parse_expression(f"self.{step}")) if step is not None and code(a.value) == step else a
            for a in call.args]
    added.append(cst.parse_statement(f"self.{train} = {code(call.with_changes(args=args))}\n"))
    renamed = {train: f"{found.instance}.{train}", **({step: f"{found.instance}.{step}"} if step else {})}
    return module.visit(_Move(cls, [found.train, found.step], added, renamed))


class _Move(cst.CSTTransformer):
    def __init__(self, cls, dropped, added, renamed):
        super().__init__()
        self.cls, self.dropped, self.added, self.renamed = cls, [d for d in dropped if d is not None], added, renamed

    def leave_FunctionDef(self, original, updated):
        if original is _init(self.cls):
            return updated.with_changes(body=updated.body.with_changes(body=[*updated.body.body, *self.added]))
        return updated

    def leave_SimpleStatementLine(self, original, updated):
        return cst.RemoveFromParent() if any(original is d for d in self.dropped) else updated

    def leave_Name(self, original, updated):
        new = self.renamed.get(original.value)
        return cst.parse_expression(new) if new is not None else updated

    def leave_Attribute(self, original, updated):
        return updated.with_changes(attr=original.attr)  # (`.train_op` of another object: not the name)

    def leave_Arg(self, original, updated):
        return updated.with_changes(keyword=original.keyword)  # (`global_step=`: a keyword, not the name)


def _init(cls: cst.ClassDef) -> Optional[cst.FunctionDef]:
    return next((s for s in cls.body.body if isinstance(s, cst.FunctionDef) and s.name.value == "__init__"), None)


def _assign(statement) -> Optional[cst.Assign]:
    """`name = value`, the one small statement of a line."""
    if isinstance(statement, cst.SimpleStatementLine) and len(statement.body) == 1 \
            and isinstance(statement.body[0], cst.Assign) and len(statement.body[0].targets) == 1 \
            and isinstance(statement.body[0].targets[0].target, cst.Name):
        return statement.body[0]
    return None


def _target(statement) -> str:
    return _assign(statement).targets[0].target.value


def _step_variable(call, tf) -> bool:
    """`tf.Variable(0, trainable=False, ...)`: the global step, made of literals."""
    return isinstance(call, cst.Call) and code(call.func) in {f"{alias}.Variable" for alias in tf} \
        and any(a.keyword is not None and a.keyword.value == "trainable" and code(a.value) == "False" for a in call.args) \
        and set(names_in(call)) <= tf | {"False"}
