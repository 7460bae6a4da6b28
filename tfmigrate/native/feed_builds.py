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

from tfmigrate.native.syntax import calls_in, names_in


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



def keys_added_before(top: cst.CSTNode, run: cst.Call, name: str) -> List[str]:
    """The keys `name.update({k: v})` and `name[k] = v` add on the lines just before `run`'s, in its
    block, after that block binds `name` anew (`fd = dict(base)`): fed at that run for certain. None
    found (a list of no keys) where the block does not bind `name` before the run."""
    found: List[List[str]] = []

    class _Blocks(cst.CSTVisitor):
        def visit_IndentedBlock(self, block: cst.IndentedBlock) -> None:
            self._body(block.body)

        def visit_Module(self, module: cst.Module) -> None:
            self._body(module.body)

        def _body(self, body) -> None:
            at = next((i for i, s in enumerate(body) if isinstance(s, cst.SimpleStatementLine)
                       and any(c is run for c in calls_in(s))), None)
            if at is None:
                return
            keys: List[str] = []
            for statement in reversed(body[:at]):
                small = statement.body[0] if isinstance(statement, cst.SimpleStatementLine) \
                    and len(statement.body) == 1 else None
                if isinstance(small, cst.Assign) and len(small.targets) == 1 and _named(small.targets[0].target, name):
                    found.append(keys)
                    return
                if isinstance(small, cst.Assign) and len(small.targets) == 1 \
                        and isinstance(small.targets[0].target, cst.Subscript) \
                        and _named(small.targets[0].target.value, name):
                    key = set_key(small.targets[0].target)
                    keys += [key.value] if isinstance(key, cst.Name) else []
                elif isinstance(small, cst.Expr) and isinstance(small.value, cst.Call) \
                        and isinstance(small.value.func, cst.Attribute) and _named(small.value.func.value, name) \
                        and small.value.func.attr.value == "update" and len(small.value.args) == 1 \
                        and isinstance(small.value.args[0].value, cst.Dict):
                    keys += [e.key.value for e in small.value.args[0].value.elements
                             if isinstance(e, cst.DictElement) and isinstance(e.key, cst.Name)]
                elif name in names_in(statement):
                    return  # (any other use of the dict: nothing certain)

    top.visit(_Blocks())
    return found[0] if found else []
