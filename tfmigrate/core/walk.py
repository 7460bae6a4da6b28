"""The walk every rule shares: one pre/post-order pass over the tree per file, dispatching each
node to the visit_/leave_ methods of the references step and the enabled rules.
"""
from __future__ import annotations

from collections import defaultdict
from typing import Dict, Sequence

import libcst as cst

from tfmigrate.facts.context import FileContext
from tfmigrate.facts.nodes import NODE_TYPES, child_fields, is_node_type
from tfmigrate.rules.base import Rule

_REVERSED: Dict[type, tuple] = {}
_LEAVE = object()  # marks, on the walk's stack, that the node below it is being left


class Walk:
    """One pre/post-order walk of the tree that dispatches each node to every rule's visit_ and
    leave_ methods. It reads dataclass fields directly: libcst's own visitor rebuilds every node
    and costs as much as the parse."""

    def __init__(self, ctx: FileContext, rules: Sequence[Rule]):
        self.ctx = ctx
        self.failed: Dict[Rule, BaseException] = {}
        visits, leaves = defaultdict(list), defaultdict(list)
        for rule in rules:
            for attr in rule.handlers():
                table = visits if attr.startswith("visit_") else leaves
                table[getattr(cst, attr[6:])].append((rule, getattr(rule, attr)))
        self.visits, self.leaves = dict(visits), dict(leaves)

    def _run(self, handlers, node) -> None:
        for rule, method in handlers:
            if rule in self.failed:
                continue
            try:
                method(node)
            except Exception as error:  # one broken rule must not stop the others
                self.failed[rule] = error

    def walk(self, root: cst.CSTNode) -> None:
        visits, leaves, ancestors = self.visits, self.leaves, self.ctx.stack
        is_node, reversed_fields = NODE_TYPES, _REVERSED
        todo = [root]
        while todo:
            node = todo.pop()
            if node is _LEAVE:
                node = todo.pop()
                ancestors.pop()
                handlers = leaves.get(type(node))
                if handlers:
                    self._run(handlers, node)
                continue
            kind = type(node)
            handlers = visits.get(kind)
            if handlers:
                self._run(handlers, node)
            ancestors.append(node)
            todo.append(node)
            todo.append(_LEAVE)
            fields = reversed_fields.get(kind)
            if fields is None:
                fields = reversed_fields[kind] = tuple(reversed(child_fields(kind)))
            for name in fields:  # pushed last-first, so popped in source order
                value = getattr(node, name)
                value_kind = type(value)
                if value_kind is list or value_kind is tuple:
                    for item in reversed(value):
                        flag = is_node.get(type(item))
                        if flag is None:
                            flag = is_node_type(type(item))
                        if flag:
                            todo.append(item)
                else:
                    flag = is_node.get(value_kind)
                    if flag is None:
                        flag = is_node_type(value_kind)
                    if flag:
                        todo.append(value)
