"""A graph class's attributes that `tf.Module` owns, renamed before the class becomes one (issue 22).

    class ReinforceAgent(object):                      class ReinforceAgent(object):
        def __init__(self, ...):                           def __init__(self, ...):
            self.variables = tf.trainable_variables()  ->      self.variables_ = tf.trainable_variables()
    agent = ReinforceAgent(...)                        agent = ReinforceAgent(...)
    print(len(agent.variables))                        print(len(agent.variables_))

native.classes makes a graph class a `tf.Module`, whose `name`, `variables`, `trainable_variables`
(...) are its own: a TF1 class keeping its own under those names would overwrite them. The
attribute is renamed (`variables_`) where every read and write of it is the class's own
(`self.variables` in its methods) or of an object the module makes of it (`agent = Class(...)`);
anything else named so (another object's `.variables`) leaves the module as it was, and the class
route then names the clash. Same lines: blockers still name the lines the user wrote.
"""
from __future__ import annotations

from typing import Dict, Optional, Set

import libcst as cst

from tfmigrate.native.class_facts import attrs_of
from tfmigrate.native.classes import MODULE_MEMBERS
from tfmigrate.native.syntax import names_in


def renamed(module: cst.Module) -> Optional[cst.Module]:
    """`module` with its classes' `tf.Module` members renamed where that is exact, or None."""
    owners = [(cls, attrs_of(cls)[1] & MODULE_MEMBERS) for cls in module.body
              if isinstance(cls, cst.ClassDef) and isinstance(cls.body, cst.IndentedBlock)]
    owners = [(cls, owned) for cls, owned in owners if owned]
    if not owners:
        return None
    taken = _attribute_names(module) | set(names_in(module))  # (a new name must be free everywhere)
    renames: Dict[int, str] = {}  # id(Attribute.attr Name) -> its new name
    for cls, owned in owners:
        instances = _instances(module, cls.name.value)
        for attr in sorted(owned):
            found = _accesses(module, cls, attr, instances)
            if found is not None and f"{attr}_" not in taken:
                renames.update({id(name): f"{attr}_" for name in found})
    if not renames:
        return None

    class _Rename(cst.CSTTransformer):
        def leave_Name(self, original: cst.Name, updated: cst.Name) -> cst.Name:
            new = renames.get(id(original))
            return updated.with_changes(value=new) if new is not None else updated

    return module.visit(_Rename())


def _targets(target: cst.BaseExpression):
    if isinstance(target, (cst.Tuple, cst.List)):
        for element in target.elements:
            yield from _targets(element.value)
    else:
        yield target


def _instances(module: cst.Module, name: str) -> Set[str]:
    """The names the module binds to an object of the class `name` (`agent = Name(...)`), and
    binds only so."""
    made: Set[str] = set()
    other: Set[str] = set()

    class _Bound(cst.CSTVisitor):
        def visit_Assign(self, node: cst.Assign) -> None:
            for target in node.targets:
                for each in _targets(target.target):
                    if not isinstance(each, cst.Name):
                        continue
                    constructed = len(node.targets) == 1 and isinstance(target.target, cst.Name) and isinstance(
                        node.value, cst.Call) and isinstance(node.value.func, cst.Name) and node.value.func.value == name
                    (made if constructed else other).add(each.value)

    module.visit(_Bound())
    return made - other


def _accesses(module: cst.Module, cls: cst.ClassDef, attr: str, instances: Set[str]):
    """The attribute names of every `.attr` of the module, when each is the class's `self.attr` or an
    instance's; None when one is anything else."""
    inside = {id(node) for node in _attributes(cls, attr)}
    found = []
    for node in _attributes(module, attr):
        owner = node.value.value if isinstance(node.value, cst.Name) else None
        if (id(node) in inside and owner == "self") or (id(node) not in inside and owner in instances):
            found.append(node.attr)
        else:
            return None
    return found


def _attributes(node: cst.CSTNode, attr: str):
    found = []

    class _Attributes(cst.CSTVisitor):
        def visit_Attribute(self, attribute: cst.Attribute) -> None:
            if attribute.attr.value == attr:
                found.append(attribute)

    node.visit(_Attributes())
    return found


def _attribute_names(module: cst.Module) -> Set[str]:
    names: Set[str] = set()

    class _Names(cst.CSTVisitor):
        def visit_Attribute(self, attribute: cst.Attribute) -> None:
            names.add(attribute.attr.value)

    module.visit(_Names())
    return names
