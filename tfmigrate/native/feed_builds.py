"""A feed dict built ahead of its run and extended before it: `feed = {x: a}`, then
`feed.update({y: b})` or `feed[y] = b` (under an `if`, in a loop), then `sess.run(..., feed)`.
Its keys become the run function's parameter names, so every use of the name must be one of
those three: a dict that escapes (returned, passed on, read by Python) would hold strings where
TF1 held tensors. Shared by the class route (native.class_runs) and module scripts (native.script).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import List, Optional, Set

import libcst as cst


@dataclass
class FeedUses:
    updates: List[cst.Call] = field(default_factory=list)      # `feed.update({...})` (its one argument a dict)
    sets: List[cst.Subscript] = field(default_factory=list)    # `feed[key] = value`: the targets
    escape: Optional[cst.CSTNode] = None                            # the first other use


def feed_uses(node: cst.CSTNode, name: str, targets: Set[int], runs: Set[int]) -> FeedUses:
    """How `node` uses the dict bound to `name`: `targets` are the ids of its assigned names,
    `runs` those of the names given to `sess.run` as its feed."""
    found = FeedUses()

    class _Uses(cst.CSTVisitor):
        def visit_Call(self, call: cst.Call) -> Optional[bool]:
            func = call.func
            if isinstance(func, cst.Attribute) and _named(func.value, name) and func.attr.value == "update":
                if len(call.args) == 1 and call.args[0].keyword is None and not call.args[0].star \
                        and isinstance(call.args[0].value, cst.Dict):
                    found.updates.append(call)
                    call.args[0].value.visit(self)
                    return False
            return None

        def visit_AssignTarget(self, target: cst.AssignTarget) -> Optional[bool]:
            sub = target.target
            if isinstance(sub, cst.Subscript) and _named(sub.value, name) and len(sub.slice) == 1 \
                    and isinstance(sub.slice[0].slice, cst.Index):
                found.sets.append(sub)
                sub.slice[0].slice.value.visit(self)
                return False
            return None

        def visit_Arg(self, arg: cst.Arg) -> Optional[bool]:
            arg.value.visit(self)  # not its keyword: `feed_dict=feed_dict` uses the name once
            return False

        def visit_Attribute(self, attr: cst.Attribute) -> Optional[bool]:
            attr.value.visit(self)  # not the attribute's name (`model.feed_dict`)
            return False

        def visit_Name(self, ref: cst.Name) -> None:
            if ref.value == name and id(ref) not in targets and id(ref) not in runs and found.escape is None:
                found.escape = ref

    node.visit(_Uses())
    return found


def update_dict(call: cst.Call) -> cst.Dict:
    return call.args[0].value


def set_key(target: cst.Subscript) -> cst.BaseExpression:
    return target.slice[0].slice.value


def escape_reason(name: str) -> str:
    return (f"the feed dict `{name}` used other than as `{name} = {{...}}`, `{name}.update({{...}})`, "
            f"`{name}[placeholder] = value` and the feed of `sess.run` (returned, passed on, or read by Python): "
            "its keys are tensors that eager code does not have; pass the values to the run directly")


def _named(node, name: str) -> bool:
    return isinstance(node, cst.Name) and node.value == name

