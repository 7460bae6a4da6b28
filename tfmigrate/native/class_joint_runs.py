"""A `sess.run` over several objects of graph classes (issue 21), written as one run per object.

    sess.run([nets[0].train, nets[1].train], {tf_x: b_x})   ->   nets[0].train_step(b_x)
                                                                 nets[1].train_step(b_x)
    l0, l1 = sess.run([nets[0].loss, nets[1].loss], feed)   ->   l0 = nets[0].evaluate(...).numpy()
                                                                 l1 = nets[1].evaluate(...).numpy()

Each object builds its own graph from its own variables (native.class_runs refuses one reading
another's tensors), so what one object's part of the run computes does not depend on the other's:
TF1's single run and the runs one after another give the same values. The statement is split
only where that is plain: a list of `<object>.<tensor>` fetches, a feed dict literal whose values
are names or literals (evaluated once per object here), and names assigned that the feed does not read.
"""
from __future__ import annotations

from typing import Dict, List, Optional

import libcst as cst

from tfmigrate.native.class_facts import GraphClass, plain, subtree
from tfmigrate.native.script import Blocked
from tfmigrate.native.syntax import bind, calls_in, code, names_read


def instances_of(call: cst.Call) -> List[str]:
    """The objects a run's fetches name (`nets[0]`), in order of first use; [] when not a list of
    `<object>.<tensor>`."""
    try:
        fetches = bind(call, ("fetches", "feed_dict", "options", "run_metadata")).get("fetches")
    except ValueError:
        return []
    if not isinstance(fetches, (cst.List, cst.Tuple)):
        return []
    found: List[str] = []
    for element in fetches.elements:
        value = element.value
        if isinstance(element, cst.StarredElement) or not (isinstance(value, cst.Attribute) and plain(value.value)):
            return []
        if code(value.value) not in found:
            found.append(code(value.value))
    return found


def split(script, node: cst.CSTNode, call: cst.Call, instances: List[str]) -> None:
    """Read a run over `instances` in the statement `node` (or inside it) as one run per object,
    each through native.class_runs' `_site`; the statement is written as those runs."""
    at = script.line_of(call)
    line = next((s for s in subtree(node) if isinstance(s, cst.SimpleStatementLine) and len(s.body) == 1
                 and (isinstance(s.body[0], cst.Expr) and s.body[0].value is call
                      or isinstance(s.body[0], cst.Assign) and s.body[0].value is call
                      and len(s.body[0].targets) == 1)), None)
    if line is None:
        raise Blocked(at, "a `sess.run` over more than one object inside an expression")
    bound = bind(call, ("fetches", "feed_dict", "options", "run_metadata"))
    if set(bound) - {"fetches", "feed_dict"}:
        raise Blocked(at, "`sess.run` with options")
    fetches = [e.value for e in bound["fetches"].elements]
    feed = bound.get("feed_dict")
    if feed is not None and not (isinstance(feed, cst.Dict) and all(
            isinstance(e, cst.DictElement) and _evaluated_again_alike(e.value) for e in feed.elements)):
        raise Blocked(at, "a `sess.run` over more than one object with a feed other than a dict literal of names "
                          "and literals (each object's run reads it)")
    small = line.body[0]
    targets: Optional[List[cst.BaseExpression]] = None
    if isinstance(small, cst.Assign):
        target = small.targets[0].target
        if not (isinstance(target, (cst.Tuple, cst.List)) and len(target.elements) == len(fetches)
                and all(isinstance(e, cst.Element) and isinstance(e.value, cst.Name) for e in target.elements)):
            raise Blocked(at, "a `sess.run` over more than one object assigned other than to one name per fetch")
        targets = [e.value for e in target.elements]
        if feed is not None and {t.value for t in targets} & names_read(feed):
            raise Blocked(at, "a `sess.run` over more than one object whose feed reads a name it assigns")
    session = code(call.func.value)
    statements: List[cst.SimpleStatementLine] = []
    for instance in instances:
        mine = [i for i, f in enumerate(fetches) if code(f.value) == instance]
        keys = [e for e in (feed.elements if feed is not None else [])
                if not (isinstance(e.key, cst.Attribute) and plain(e.key.value) and code(e.key.value) != instance)]
        fetched = ", ".join(code(fetches[i]) for i in mine)
        fed = ", ".join(f"{code(e.key)}: {code(e.value)}" for e in keys)
        run = f"{session}.run([{fetched}], {{{fed}}})" if len(mine) > 1 else f"{session}.run({fetched}, {{{fed}}})"
        if targets is None:
            text = run
        else:
            names = [targets[i].value for i in mine]
            text = f"{', '.join(names)} = {run}" if len(mine) > 1 else f"{names[0]} = {run}"
        statement = cst.parse_statement(text + "\n")
        statements.append(statement)
    script.joint_trains = {code(f.value) for f in fetches if _is_train(script, f)}
    try:
        for statement in statements:
            small = statement.body[0]
            assign = small if isinstance(small, cst.Assign) else None
            script.copies.update((id(n), at) for n in subtree(statement))
            script._site(small.value, assign)
    finally:
        script.joint_trains = set()
    statements[0] = statements[0].with_changes(leading_lines=line.leading_lines)
    statements[-1] = statements[-1].with_changes(trailing_whitespace=line.trailing_whitespace)
    script.joint_runs[id(line)] = statements
    script.joint_calls.add(id(call))


def _evaluated_again_alike(value) -> bool:
    """A feed value that each object's run may evaluate again: a name, `a.b`, `a[0]`, `a[:3]`, a literal."""
    if isinstance(value, cst.Subscript) and plain(value.value):
        return all(isinstance(e.slice, cst.Slice) and all(
            part is None or _evaluated_again_alike(part) for part in (e.slice.lower, e.slice.upper, e.slice.step))
            or isinstance(e.slice, cst.Index) and _evaluated_again_alike(e.slice.value) for e in value.slice)
    return plain(value) or isinstance(value, (cst.Integer, cst.Float, cst.SimpleString)) or (
        isinstance(value, cst.UnaryOperation) and isinstance(value.expression, (cst.Integer, cst.Float)))


def _is_train(script, fetch: cst.Attribute) -> bool:
    return any(fetch.attr.value in cls.trains for cls in script.classes.values())


def objects_of(script, cls: GraphClass) -> Dict[str, int]:
    """Each object of the class by the expression the program names it with (`net`, `nets[1]`):
    made at module level by `x = Cls(...)`, `xs = [Cls(...), Cls(...)]` or `a, b = Cls(), Cls()`,
    the names bound once and a list read only by constant index. Blocked when an object escapes that."""
    name = cls.node.name.value
    made = [c for c in calls_in(script.module) if isinstance(c.func, cst.Name) and c.func.value == name]
    found: Dict[str, int] = {}
    lists: Dict[str, int] = {}
    for node in script.module.body:
        small = node.body[0] if isinstance(node, cst.SimpleStatementLine) and len(node.body) == 1 else None
        if not (isinstance(small, cst.Assign) and len(small.targets) == 1):
            continue
        target, value = small.targets[0].target, small.value
        if isinstance(target, cst.Name) and _made(value, name):
            found[target.value] = id(value)
        elif isinstance(target, cst.Name) and isinstance(value, (cst.List, cst.Tuple)) \
                and value.elements and all(_made(e.value, name) for e in value.elements):
            lists[target.value] = len(value.elements)
            for index, element in enumerate(value.elements):
                found[f"{target.value}[{index}]"] = id(element.value)
        elif isinstance(target, (cst.Tuple, cst.List)) and isinstance(value, (cst.Tuple, cst.List)) \
                and len(target.elements) == len(value.elements) and all(
                isinstance(t.value, cst.Name) and _made(v.value, name) for t, v in zip(target.elements, value.elements)):
            for t, v in zip(target.elements, value.elements):
                found[t.value.value] = id(v.value)
    covered = set(found.values())
    at = script.line_of(cls.node)
    if any(id(c) not in covered for c in made):
        raise Blocked(at, f"an object of `{name}`, which makes `tf.layers.batch_normalization`, made other than by "
                          "`x = ...` or a list of them at module level (TF1's UPDATE_OPS held the layers of every "
                          "object made before)")
    bound = {n.split("[")[0] for n in found}
    if bound & script._changing_globals():
        raise Blocked(at, f"`{sorted(bound & script._changing_globals())[0]}`, an object of `{name}` (which makes "
                          "`tf.layers.batch_normalization`), bound more than once")
    for holder, size in lists.items():
        for use in subtree(script.module):
            if isinstance(use, cst.Name) and use.value == holder and not _indexed(script.module, use, size):
                raise Blocked(at, f"`{holder}`, the list of `{name}` objects, read other than by a constant index")
    return {n: i for i, n in enumerate(found)}


def _made(value, name: str) -> bool:
    return isinstance(value, cst.Call) and isinstance(value.func, cst.Name) and value.func.value == name


def _indexed(module: cst.Module, use: cst.Name, size: int) -> bool:
    """Whether `use` is the list in `xs[<int below size>]`, or the name its assignment binds."""
    for node in subtree(module):
        if isinstance(node, cst.Subscript) and node.value is use:
            return len(node.slice) == 1 and isinstance(node.slice[0].slice, cst.Index) \
                and isinstance(node.slice[0].slice.value, cst.Integer) and int(node.slice[0].slice.value.value) < size
        if isinstance(node, cst.AssignTarget) and node.target is use:
            return True
    return False
