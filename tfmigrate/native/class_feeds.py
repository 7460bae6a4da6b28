"""Feed dicts a graph class builds in a method of its own (issue 21), the course-assignment shape:

    def create_feed_dict(self, inputs_batch, labels_batch=None):
        feed = {self.input_placeholder: inputs_batch}
        if labels_batch is not None:
            feed[self.labels_placeholder] = labels_batch
        return feed

Its keys become the parameters' names (`{"input_placeholder": inputs_batch}`) and a run fed by
it calls `self.train_step(**self.create_feed_dict(x, y))`, so the values are taken where the
program took them. A key the method adds only sometimes is an optional parameter: None, and what
it feeds skipped, as TF1 computed only what the fetches needed (a run that needs it and is not
given it failed in TF1 too). Functions of native.classes.ClassScript's state.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Dict, List, Optional, Set

import libcst as cst

from tfmigrate.native.class_facts import GraphClass, attrs_of, plain, subtree
from tfmigrate.native.feed_builds import escape_reason, feed_uses, set_key, update_dict
from tfmigrate.native.script import Blocked
from tfmigrate.native.syntax import assignments_in, code


@dataclass
class FeedMethod:
    always: List[cst.BaseExpression]  # keys of every dict the method builds (`self.<placeholder>`)
    sometimes: Set[str]  # the placeholders (attributes) it adds only in some calls


def returned_name(method: cst.FunctionDef) -> Optional[cst.Name]:
    """The `<name>` of a method whose last statement is `return <name>` and which returns nowhere else."""
    body = method.body.body
    last = body[-1] if body else None
    if not (isinstance(last, cst.SimpleStatementLine) and len(last.body) == 1 and isinstance(last.body[0], cst.Return)
            and isinstance(last.body[0].value, cst.Name)):
        return None
    if sum(isinstance(n, (cst.Return, cst.Yield, cst.Lambda, cst.FunctionDef)) for n in subtree(method.body)) != 1:
        return None
    return last.body[0].value


def is_feed_method(script, cls: GraphClass, method: cst.FunctionDef) -> bool:
    """A method that only builds a dict keyed by the class's placeholders and returns it (checked
    in full by `analyse`): no TensorFlow, no other tensor of the graph read."""
    reads = attrs_of(method)[0]
    graph = cls.graph_attrs | set(cls.trains) | cls.graph_methods
    placeholders = {p.attr for p in cls.placeholders}
    return returned_name(method) is not None and not script.tensor_apis(method) \
        and bool(reads & placeholders) and not reads & graph - placeholders


def analyse(script) -> None:
    """Each feed method of a graph class: its keys as parameters (`script.key_params`), what it
    always and sometimes feeds (`script.feed_methods`), and the names bound to its calls that are
    only given to runs (`script.feed_aliases`)."""
    placeholders: Dict[str, Set[str]] = {}
    for cls in script.classes.values():
        for p in cls.placeholders:
            placeholders.setdefault(p.attr, set()).add(p.param)
    for cls in script.classes.values():
        for method in cls.node.body.body:
            if isinstance(method, cst.FunctionDef) and method.name.value in cls.feed_methods:
                script.feed_methods[method.name.value] = _feed_method(script, cls, method, placeholders)
    _aliases(script)


def _feed_method(script, cls: GraphClass, method: cst.FunctionDef, placeholders: Dict[str, Set[str]]) -> FeedMethod:
    returned = returned_name(method)
    name = returned.value
    at = script.line_of(method)
    assigns = [a for a in assignments_in(method) if len(a.targets) == 1 and isinstance(a.targets[0].target, cst.Name)
               and a.targets[0].target.value == name]
    if not assigns or not all(isinstance(a.value, cst.Dict) and a.value.elements for a in assigns):
        raise Blocked(at, f"`{cls.node.name.value}.{method.name.value}` returns a feed dict not built as "
                          f"`{name} = {{...}}`")
    uses = feed_uses(method.body, name, {id(a.targets[0].target) for a in assigns}, {id(returned)})
    if uses.escape is not None:
        raise Blocked(script.line_of(uses.escape), escape_reason(name))
    params: Dict[int, str] = {}
    keys: List[cst.BaseExpression] = []
    for assign in assigns:
        for element in assign.value.elements:
            key = element.key if isinstance(element, cst.DictElement) else None
            if key is None or not script._key_param(key, params, placeholders):
                raise Blocked(at, f"a key of the feed `{cls.node.name.value}.{method.name.value}` builds that is not "
                                  "a placeholder of the class")
            keys.append(key)
    for call in uses.updates:
        added = [e.key if isinstance(e, cst.DictElement) else None for e in update_dict(call).elements]
        script._extension(name, call, added, params, placeholders)
        keys += added
    for target in uses.sets:
        script._extension(name, target, [set_key(target)], params, placeholders)
        keys.append(set_key(target))
    for node in subtree(method.body):
        if isinstance(node, cst.Attribute) and isinstance(node.value, cst.Name) and node.value.value == "self" \
                and node.attr.value in placeholders and id(node) not in params:
            raise Blocked(script.line_of(node), f"`self.{node.attr.value}` read by `{method.name.value}` other than as "
                                                "a key of the feed it returns")
    script.key_params.update(params)
    every = set.intersection(*({code(e.key) for e in a.value.elements} for a in assigns))
    always = [k for k in (e.key for e in assigns[0].value.elements) if code(k) in every]
    return FeedMethod(always, {k.attr.value for k in keys if isinstance(k, cst.Attribute) and code(k) not in every})


def _aliases(script) -> None:
    """`feed = self.create_feed_dict(x, y)` where every binding of `feed` is a call of a feed method
    and every read of it the `feed_dict` of a run: the run is given `**feed`."""
    bound: Dict[str, List[cst.Call]] = {}
    other: Set[str] = set()
    for assign in assignments_in(script.module):
        for target in assign.targets:
            if isinstance(target.target, cst.Name):
                if feed_call(script, assign.value) is not None and len(assign.targets) == 1:
                    bound.setdefault(target.target.value, []).append(assign.value)
                else:
                    other.add(target.target.value)
    for name, calls in bound.items():
        if name in other or name in script.feed_names:
            continue
        methods = {(feed_call(script, c), code(c.func.value)) for c in calls}
        if len(methods) == 1:
            script.feed_aliases[name] = (calls[0].func.attr.value, calls[0].func.value)


def feed_call(script, node) -> Optional[str]:
    """The feed method `node` calls (`model.create_feed_dict(x)`), or None."""
    if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and plain(node.func.value) \
            and node.func.attr.value in script.feed_methods:
        return node.func.attr.value
    return None


def fed_by(script, feed) -> Optional[tuple]:
    """For a run's `feed_dict` built by a feed method: (the code given as `**`, the dict literal of
    what it always feeds, keyed on the object, the placeholders it feeds only sometimes)."""
    if isinstance(feed, cst.Name) and feed.value in script.feed_aliases:
        method, receiver = script.feed_aliases[feed.value]
    else:
        method = feed_call(script, feed)
        receiver = feed.func.value if method is not None else None
        if method is None:
            return None
    found = script.feed_methods[method]
    keys = [k.with_changes(value=receiver) for k in found.always]
    return code(feed), cst.Dict([cst.DictElement(k, cst.Name("None")) for k in keys]), found.sometimes
