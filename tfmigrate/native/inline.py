"""A function called once, written where it is called (issue 21), for the native rewrite.

Real TF1 programs build parts of their graph in plain functions called once at module level
(`train_op = training(loss, 0.1)`, `loss = cifar_loss(logits, labels)`): the script route reads
module-level graph statements, so such a body is written at its call site, its parameters bound to
the argument expressions (a parameter given a name reads that name), its locals renamed where they
would clash with the caller's names (`syntax.fresh_name`). native.queues inlines its pipeline and
reader functions the same way (without renaming: a clash leaves the module as it was).

The inlining is exact or refused (`Refused`, saying why): one call, as a statement of its own
(`a, b = f(...)` or `f(...)`), no `*args` / `**kwargs`, `global` / `nonlocal`, `yield` or `return`
before the end, no default argument evaluated at `def` other than a literal, the name used only by
that call (not recursive, not passed as a value).
"""
from __future__ import annotations

import difflib
from dataclasses import dataclass
from typing import Dict, List, Optional, Set, Tuple

import libcst as cst

from tfmigrate.native.syntax import (bind, calls_in, code, found_in, fresh_name, name_nodes, names_assigned, names_in,
                                     names_read)


class Refused(Exception):
    """Why the function is not written where it is called."""


class CalledAgain(Refused):
    """A function called at more than one place (or at none): `inline_each` writes each call."""


@dataclass
class Inlined:
    module: cst.Module
    targets: Set[str]  # the names the call site assigns
    scope: str         # the function whose body held the call, "" for the module


def inline(module: cst.Module, name: str, rename: bool = True) -> Inlined:
    """The module with the top-level function `name` written where it is called (`rename`: a
    local of the function that a name of the caller's scope clashes with gets a fresh name; else
    that refuses)."""
    definition = next((s for s in module.body if isinstance(s, cst.FunctionDef) and s.name.value == name), None)
    if definition is None or not isinstance(definition.body, cst.IndentedBlock):
        raise Refused("not a function defined at module level")
    if definition.decorators:
        raise Refused("a decorated function")
    if name in names_read(definition.body) - names_assigned(definition.body):  # (a local of that name is its own)
        raise Refused("a recursive function")
    rest = [s for s in module.body if s is not definition]
    calls = [c for s in rest for c in calls_in(s) if isinstance(c.func, cst.Name) and c.func.value == name]
    uses = [n for s in rest for n in name_nodes(s) if n.value == name]
    if len(uses) > len(calls):
        raise Refused("a function also used as a value (passed or stored, not only called)")
    if len(calls) != 1:
        raise CalledAgain(f"a function called {len(calls)} times (each call built its own graph state)")
    try:
        site, assigned = _site(module, calls[0])
    except Refused:
        hoisted = _hoisted(module, definition, calls[0])
        if hoisted is None:
            raise
        return inline(hoisted, name, rename)
    params = definition.params
    if params.star_arg not in (None, cst.MaybeSentinel.DEFAULT) or params.star_kwarg:
        raise Refused("a function with `*args` or `**kwargs`")
    if params.kwonly_params or params.posonly_params:
        raise Refused("a function with keyword-only or positional-only parameters")
    body = list(definition.body.body)
    if body and isinstance(only_statement(body[0]), cst.Expr) and isinstance(only_statement(body[0]).value, cst.SimpleString):
        body = body[1:]  # the docstring
    last = only_statement(body[-1]) if body else None
    returned = None
    if isinstance(last, cst.Return):
        body, returned = body[:-1], last.value
    if assigned is not None and returned is None:
        raise Refused("a function whose value is assigned but that returns none at its end")
    inner = cst.Module(body=body)
    for node in nodes_in(inner):
        if isinstance(node, (cst.Return, cst.Yield)):
            raise Refused("a function with a `return` before its end" if isinstance(node, cst.Return)
                          else "a generator function (`yield`)")
        if isinstance(node, (cst.Global, cst.Nonlocal)):
            raise Refused(f"a function with `{'global' if isinstance(node, cst.Global) else 'nonlocal'}`")
    call = assigned[2] if assigned is not None else only_statement(site).value
    targets, target_node = (assigned[0], assigned[1]) if assigned is not None else ([], None)
    try:
        given = bind(call, [p.name.value for p in params.params])
    except ValueError as why:
        raise Refused(f"a call whose arguments are not bound by name ({why})")
    if set(given) - {p.name.value for p in params.params}:
        raise Refused("a call with a keyword the function does not take")
    assigned_inside = names_assigned(inner)
    # the call's own targets given back in their place by the `return` (`image, label = f(...)` of
    # `return image, label`): the function's names of them are the caller's anyway
    same = returned is not None and (code(returned) == ", ".join(targets) or (isinstance(returned, cst.Tuple) and [
        code(e.value) for e in returned.elements] == targets))
    # a parameter given a name that the function does not assign reads that name (no binding),
    # with `rename`; without it, only the caller's name of the same name (`images = f(images)`)
    # (not a name a nested `def`, lambda or comprehension binds for itself: it would read its own)
    nested = _nested_bound(inner)
    substituted = {p.name.value: given[p.name.value].value for p in params.params
                   if isinstance(given.get(p.name.value), cst.Name) and given[p.name.value].value not in nested and (
                       (p.name.value not in assigned_inside and (rename or given[p.name.value].value == p.name.value))
                       or (given[p.name.value].value == p.name.value and same and p.name.value in targets))}
    local = ({p.name.value for p in params.params} - set(substituted)) | assigned_inside
    scope = scope_of(module, site)
    others = list(scope.body.body) if isinstance(scope, cst.FunctionDef) else \
        [s for s in module.body if s is not definition]
    seen = set().union(*(scope_names(s) for s in others)) - {name}
    if isinstance(scope, cst.FunctionDef):  # a name the function reads from the module must stay the module's
        caller_locals = names_assigned(scope.body) | {p.name.value for p in scope.params.params}
        free = names_read(definition.body) - local - set(substituted)
        shadowed = sorted(_module_reads(definition, free & caller_locals))
        if shadowed:
            raise Refused(f"a function that reads the module's `{shadowed[0]}`, which `{scope.name.value}` binds")
    given_back = {} if same or not rename else _given_back(returned, targets, local, inner, call)
    same = same or bool(given_back)
    clash = (local & seen) - (set(targets) if same else set()) - set(given_back)
    if "_" in clash and _only_bound(inner, "_") and all(_only_bound(s, "_") for s in others):
        clash.discard("_")  # a discard on both sides (`def main(_)`, `out, _ = ...`): it stays `_`
    if clash and not rename:
        raise Refused(f"a function whose local `{sorted(clash)[0]}` clashes with a name where it is called")
    if not rename and (local - set(substituted)) & names_read(call):
        raise Refused("a call whose arguments read a name the function binds")
    taken = seen | local | set(names_of_module(module))
    renamed = {old: fresh_name(taken, old) for old in sorted(clash)}
    names = {**renamed, **substituted, **given_back}
    bound = []
    for param in params.params:
        if param.name.value in substituted:
            continue
        value = given.get(param.name.value)
        if value is None:
            value = param.default
            if value is None:
                raise Refused(f"a call that does not give `{param.name.value}`")
            if not _same_at_call(module, definition, value):
                raise Refused(f"a default argument `{param.name.value}={code(value)}` that is not a literal "
                              "(evaluated once, at `def`)")
        bound.append(stmt(f"{names.get(param.name.value, param.name.value)} = {code(value)}"))
    body = [_renamed(s, names) for s in body]
    keyed = _keyed_reads(module, definition, returned, targets, target_node, names, taken, local)
    if keyed is not None:
        result, reads = keyed
    elif given_back:
        result = _rest_given_back(returned, targets, given_back, names)
    elif same:
        result = []
    elif target_node is not None:
        result = _one_by_one(target_node, _renamed(returned, names)) or [
            stmt(f"{code(target_node)} = {code(_renamed(returned, names))}")]
    elif returned is not None:
        result = [cst.SimpleStatementLine([cst.Expr(_renamed(returned, names))])]
    else:
        result = []
    new = [*bound, *body, *result]
    if not new:
        raise Refused("a function with nothing to write")
    if scope is module:  # a nested `def parse_record` now at module level: two blank lines before it
        new = [s.with_changes(leading_lines=[cst.EmptyLine()] * 2 + [l for l in s.leading_lines if l.comment])
               if isinstance(s, cst.FunctionDef) or (i and isinstance(new[i - 1], cst.FunctionDef)) else s
               for i, s in enumerate(new)]  # (and two after it)
    new[0] = new[0].with_changes(leading_lines=[*site.leading_lines, *new[0].leading_lines])
    module = module.visit(Replace({id(site): new, id(definition): [], **(reads if keyed is not None else {})}))
    return Inlined(module, set(targets), scope.name.value if isinstance(scope, cst.FunctionDef) else "")


def inline_each(module: cst.Module, name: str) -> Inlined:
    """`inline`, also for a function called at a few places (`opt_d = optimizer(loss_d, d_params,
    0.002)` and `opt_g = optimizer(loss_g, ...)`): each call is written where it is, as TF1 built the
    body's graph state again at each call (its locals renamed apart: `batch`, `batch_2`, ...)."""
    try:
        return inline(module, name)
    except CalledAgain:
        definition = next(s for s in module.body if isinstance(s, cst.FunctionDef) and s.name.value == name)
        calls = [c for s in module.body if s is not definition for c in calls_in(s)
                 if isinstance(c.func, cst.Name) and c.func.value == name]
        if not 1 < len(calls) <= _MOST_CALLS:
            raise
    taken = names_of_module(module)
    copies = {id(call.func): fresh_name(taken, f"{name}_{n}") for n, call in enumerate(calls, 1)}
    module = module.visit(Replace({**{key: cst.Name(copy) for key, copy in copies.items()},
                                   id(definition): [definition.with_changes(name=cst.Name(copy))
                                                    for copy in copies.values()]}))
    targets: Set[str] = set()
    for copy in copies.values():
        done = inline(module, copy)
        module, targets = done.module, targets | done.targets
    return Inlined(module, targets, done.scope)


def _one_by_one(target: cst.BaseExpression, value: cst.BaseExpression) -> Optional[List[cst.BaseStatement]]:
    """`a, b = x, y` as `a = x` and `b = y` (the script route reads each name's own graph), where
    that is the same: names, as many as the values, none read by a later value; else None."""
    if not (isinstance(target, (cst.Tuple, cst.List)) and isinstance(value, (cst.Tuple, cst.List))
            and len(target.elements) == len(value.elements) > 1
            and all(isinstance(e, cst.Element) and isinstance(e.value, cst.Name) for e in target.elements)
            and all(isinstance(e, cst.Element) for e in value.elements)):
        return None
    names = [e.value.value for e in target.elements]
    if len(set(names)) < len(names) or any(names_read(e.value) & set(names[:k])
                                           for k, e in enumerate(value.elements)):
        return None
    return [stmt(f"{name} = {code(e.value)}") for name, e in zip(names, value.elements)]


def _only_bound(node: cst.CSTNode, name: str) -> bool:
    """Whether `name` occurs in `node` only as a target (`x, _ = ...`, `for _ in ...`), never read."""
    targets = [*(a.target for a in found_in(node, "visit_AssignTarget")),
               *(f.target for f in found_in(node, "visit_For")), *(c.target for c in found_in(node, "visit_CompFor"))]
    return names_in(node).count(name) == sum(names_in(t).count(name) for t in targets)


_MOST_CALLS = 8  # (a helper called more often is a library, not one program's builder)


def _given_back(returned, targets: List[str], local: Set[str], inner: cst.Module, call: cst.Call) -> Dict[str, str]:
    """{local: target} where the function returns its locals to the call's targets (`train_op =
    training(...)` of `train_step = opt.minimize(...); return train_step`): each local is named as
    its target, so no alias `train_op = train_step` is left (the script route reads an alias of an
    op as graph code). Only where no target is read or bound by the body or the call."""
    values = [e.value for e in returned.elements] if isinstance(returned, cst.Tuple) else [returned]
    if len(values) != len(targets) or len(set(targets)) != len(targets) or "_" in targets:
        return {}
    locals_given = [v.value for v in values if isinstance(v, cst.Name) and v.value in local]
    if not locals_given or len(set(locals_given)) != len(locals_given):
        return {}
    given = {v.value: t for v, t in zip(values, targets) if isinstance(v, cst.Name) and v.value in local}
    kept = {t for v, t in given.items() if v == t}  # (the function's `lr` returned as the caller's `lr`)
    others = [v for v in values if not (isinstance(v, cst.Name) and v.value in given)]
    if set(targets) & (names_read(inner) | names_assigned(inner) | names_read(call)) - kept \
            or set(targets) & set().union(*(names_read(v) for v in others)):
        return {}
    return given


def _keyed_reads(module: cst.Module, definition: cst.FunctionDef, returned, targets: List[str], target_node,
                 names: Dict[str, str], taken: Set[str], local: Set[str]):
    """`model = build_model(...)` of `return {"x": x, "loss": loss, ...}`, the dict read only as
    `model["loss"]` (literal keys it has): no dict, each read the name of the function's local it
    holds (a value that is not a name is first given one, after its key; a local's name is the
    caller's alone, renamed where it clashed). (statements, {id(read): name}) or None."""
    keys = _literal_keys(returned)
    if keys is None or not (isinstance(target_node, cst.Name) and len(targets) == 1):
        return None
    model = targets[0]
    reads = [n for n in nodes_in_all(module) if isinstance(n, cst.Subscript) and isinstance(n.value, cst.Name)
             and n.value.value == model]
    uses = [n for s in module.body if s is not definition for n in name_nodes(s) if n.value == model]
    if len(uses) != len(reads) + 1 or not reads:  # (and its one binding, the call's target)
        return None
    for read in reads:
        index = read.slice[0].slice if len(read.slice) == 1 else None
        if not (isinstance(index, cst.Index) and isinstance(index.value, cst.SimpleString)
                and index.value.evaluated_value in keys):
            return None
    statements, named = [], {}
    for key, value in keys.items():
        if isinstance(value, cst.Name) and value.value in local:
            named[key] = names.get(value.value, value.value)
        elif key.isidentifier():
            named[key] = fresh_name(taken, key)
            taken.add(named[key])
            statements.append(stmt(f"{named[key]} = {code(_renamed(value, names))}"))
        else:
            return None
    return statements, {id(read): cst.Name(named[read.slice[0].slice.value.evaluated_value]) for read in reads}


def _literal_keys(returned) -> Optional[Dict[str, cst.BaseExpression]]:
    """{key: value} of `{"loss": loss, ...}` or `dict(loss=loss, ...)`; None for another value."""
    keys: Dict[str, cst.BaseExpression] = {}
    if isinstance(returned, cst.Call) and isinstance(returned.func, cst.Name) and returned.func.value == "dict":
        for arg in returned.args:
            if arg.keyword is None or arg.star:
                return None
            keys[arg.keyword.value] = arg.value
        return keys or None
    if not isinstance(returned, cst.Dict):
        return None
    for element in returned.elements:
        if not (isinstance(element, cst.DictElement) and isinstance(element.key, cst.SimpleString)):
            return None
        keys[element.key.evaluated_value] = element.value
    return keys


def nodes_in_all(node) -> List[cst.CSTNode]:
    """Every node under `node`, nested functions included."""
    found: List[cst.CSTNode] = []
    node.visit(type("A", (cst.CSTVisitor,), {"on_visit": lambda self, each: found.append(each) or True})())
    return found


def _rest_given_back(returned, targets: List[str], given_back: Dict[str, str], names: Dict[str, str]) -> List:
    """`train_op = optimizer.apply_gradients(...)` of `return optimizer.apply_gradients(...), lr`
    where `lr` is given back by name: each returned value that is not a local, assigned to its
    target (in order; no value reads a target, `_given_back`)."""
    values = [e.value for e in returned.elements] if isinstance(returned, cst.Tuple) else [returned]
    return [stmt(f"{target} = {code(_renamed(value, names))}") for value, target in zip(values, targets)
            if not (isinstance(value, cst.Name) and value.value in given_back)]


def _site(module: cst.Module, call: cst.Call):
    """The statement of the call, and `(targets, target node, call)` when it assigns its value."""
    sites = []

    class _Sites(cst.CSTVisitor):
        def visit_SimpleStatementLine(self, line) -> None:
            assigned = assignment(line)
            one = only_statement(line)
            value = assigned[2] if assigned is not None else (one.value if isinstance(one, cst.Expr) else None)
            if value is call:
                sites.append((line, assigned))

    module.visit(_Sites())
    if len(sites) != 1:
        raise Refused("a function called inside an expression (only `x = f(...)` or `f(...)` as a statement "
                      "is written where it is called)")
    return sites[0]


def _nested_bound(node: cst.CSTNode) -> Set[str]:
    """The names the nested `def`s, lambdas and comprehensions of `node` bind for themselves."""
    found: Set[str] = set()

    class _Bound(cst.CSTVisitor):
        def visit_FunctionDef(self, function: cst.FunctionDef) -> None:
            found.update(p.name.value for p in function.params.params)
            found.update(names_assigned(function.body))

        def visit_Lambda(self, lam: cst.Lambda) -> None:
            found.update(p.name.value for p in lam.params.params)

        def visit_CompFor(self, comp: cst.CompFor) -> None:
            found.update(n.value for n in name_nodes(comp.target))

    node.visit(_Bound())
    return found


def _module_reads(definition: cst.FunctionDef, names: Set[str]) -> Set[str]:
    """Those of `names` that the function reads from its module: not the ones a nested `def`, a
    lambda or a comprehension binds for itself (`def body(i, x)` of a `while_loop`)."""
    if not names:
        return names
    from libcst.metadata import GlobalScope, MetadataWrapper, ScopeProvider

    wrapper = MetadataWrapper(cst.Module([definition]))
    found = set()
    for scope in {s for s in wrapper.resolve(ScopeProvider).values() if s is not None}:
        for access in scope.accesses:
            if isinstance(access.node, cst.Name) and access.node.value in names and (
                    not access.referents or any(isinstance(r.scope, GlobalScope) for r in access.referents)):
                found.add(access.node.value)
    return found


_CONDITIONAL = (cst.Lambda, cst.IfExp, cst.BooleanOperation, cst.ListComp, cst.SetComp, cst.DictComp,
                cst.GeneratorExp)


def _hoisted(module: cst.Module, definition: cst.FunctionDef, call: cst.Call) -> Optional[cst.Module]:
    """`loss = xent + weight_decay(1e-4)` as `weight_loss = weight_decay(1e-4)` then `loss = xent +
    weight_loss`, so that the call is a statement of its own (`_site`); None where that could
    change what runs first: the call in a lambda, a comprehension, a conditional expression or a
    `and` / `or`, or after another call of the statement that is not one it is an argument of
    (Python evaluates left to right; a call's own arguments and callee before it)."""
    lines = []

    class _Lines(cst.CSTVisitor):
        def visit_SimpleStatementLine(self, line) -> None:
            if any(c is call for c in calls_in(line)):
                lines.append(line)

    module.visit(_Lines())
    if len(lines) != 1 or len(lines[0].body) != 1:
        return None
    line, small = lines[0], lines[0].body[0]
    if isinstance(small, (cst.Assign, cst.AugAssign, cst.AnnAssign)):
        targets = [t.target for t in small.targets] if isinstance(small, cst.Assign) else [small.target]
        if any(calls_in(t) for t in targets) or small.value is None:
            return None
        value = small.value
    elif isinstance(small, (cst.Expr, cst.Return)) and small.value is not None:
        value = small.value
    else:
        return None
    ancestors: List[cst.CSTNode] = []
    order: List[cst.Call] = []
    path: List[cst.CSTNode] = []

    class _Order(cst.CSTVisitor):
        def on_visit(self, node) -> bool:
            if node is call:
                ancestors.extend(path)
            if isinstance(node, cst.Call):
                order.append(node)
            path.append(node)
            return True

        def on_leave(self, original) -> None:
            path.pop()

    value.visit(_Order())
    if not any(c is call for c in order) or any(isinstance(a, _CONDITIONAL) for a in ancestors):
        return None
    before = order[:next(k for k, c in enumerate(order) if c is call)]
    if any(not any(c is a for a in ancestors) for c in before):
        return None
    returned = only_statement(definition.body.body[-1]) if definition.body.body else None
    preferred = returned.value.value if isinstance(returned, cst.Return) and isinstance(returned.value, cst.Name) \
        else f"{definition.name.value}_value"
    taken = names_of_module(cst.Module([s for s in module.body if s is not definition]))  # (its own are its own)
    fresh = fresh_name(taken | {definition.name.value}, preferred)
    first = cst.SimpleStatementLine([cst.Assign([cst.AssignTarget(cst.Name(fresh))], call)],
                                    leading_lines=line.leading_lines)
    rest = line.with_changes(leading_lines=[]).visit(Replace({id(call): cst.Name(fresh)}))
    return module.visit(Replace({id(line): [first, rest]}))


def _same_at_call(module: cst.Module, definition: cst.FunctionDef, node) -> bool:
    """A default whose value at `def` is its value at the call: a literal, or a module name bound
    by one statement, before the `def`."""
    if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Minus):
        node = node.expression
    if isinstance(node, (cst.Integer, cst.Float, cst.SimpleString)):
        return True
    if isinstance(node, cst.Tuple):  # (immutable: `hidden_sizes=(64, 64)`)
        return all(isinstance(e, cst.Element) and _same_at_call(module, definition, e.value) for e in node.elements)
    if not isinstance(node, cst.Name):
        return False
    if node.value in ("True", "False", "None"):
        return True
    binders = [i for i, s in enumerate(module.body) if node.value in names_assigned(s)]
    return len(binders) == 1 and binders[0] < next(i for i, s in enumerate(module.body) if s is definition)


def _renamed(node, names: Dict[str, str]):
    """`node` with each name read or bound in it (not attributes, not keywords) renamed by `names`."""
    if not names:
        return node
    targets = {id(n) for n in name_nodes(node) if n.value in names}

    class _Rename(cst.CSTTransformer):
        def leave_Name(self, original, updated):
            return updated.with_changes(value=names[original.value]) if id(original) in targets else updated

    if isinstance(node, cst.BaseStatement):
        return cst.Module(body=[node]).visit(_Rename()).body[0]
    return node.visit(_Rename())


def original_line(original: str, changed: str, line: int) -> int:
    """The line of `original` that line `line` of `changed` came from."""
    old, new = original.splitlines(), changed.splitlines()
    for tag, a1, a2, b1, b2 in difflib.SequenceMatcher(None, old, new, autojunk=False).get_opcodes():
        if b1 < line <= b2 or (b1 == b2 == line - 1):
            return a1 + (line - b1 if tag == "equal" else 1)
    return line


# -- statement helpers shared with native.queues ---------------------------------------------------
def stmt(text: str) -> cst.BaseStatement:
    return cst.parse_statement(text)


def only_statement(statement) -> Optional[cst.BaseSmallStatement]:
    """The one small statement of a line (`x = f()`), or None."""
    if isinstance(statement, cst.SimpleStatementLine) and len(statement.body) == 1:
        return statement.body[0]
    return None


def assignment(statement) -> Optional[Tuple[List[str], cst.BaseExpression, cst.BaseExpression]]:
    """(target names, target node, value) of `a = v` / `a, b = v` (`_` kept as a name)."""
    one = only_statement(statement)
    if not isinstance(one, cst.Assign) or len(one.targets) != 1:
        return None
    target = one.targets[0].target
    if isinstance(target, cst.Name):
        return [target.value], target, one.value
    if isinstance(target, (cst.Tuple, cst.List)) and all(isinstance(e.value, cst.Name) and not isinstance(
            e, cst.StarredElement) for e in target.elements):
        return [e.value.value for e in target.elements], target, one.value
    return None


def names_of(node) -> List[cst.Name]:
    """Every Name node under `node` (attribute names and keywords too)."""
    found: List[cst.Name] = []
    node.visit(type("N", (cst.CSTVisitor,), {"visit_Name": lambda self, n: found.append(n)})())
    return found


def names_of_module(module: cst.Module) -> Set[str]:
    return {n.value for n in names_of(module)}


def nodes_in(node) -> List[cst.CSTNode]:
    """Every node under `node`, not inside a nested `def` or lambda (their returns are their own)."""
    found: List[cst.CSTNode] = []

    class _All(cst.CSTVisitor):
        def on_visit(self, each) -> bool:
            found.append(each)
            return not isinstance(each, (cst.FunctionDef, cst.Lambda))

    node.visit(_All())
    return found


class Replace(cst.CSTTransformer):
    """Statements replaced by lists of statements (an empty list removes one)."""

    def __init__(self, replace: Dict[int, List[cst.BaseStatement]]):
        super().__init__()
        self.replace = replace

    def on_leave(self, original, updated):
        if id(original) in self.replace:
            new = self.replace[id(original)]
            if isinstance(new, cst.BaseExpression):  # (an expression read in its place)
                return new
            return cst.FlattenSentinel(new) if new else cst.RemoveFromParent()
        return updated


class _NoComprehensions(cst.CSTTransformer):
    def on_leave(self, original, updated):
        if isinstance(updated, (cst.ListComp, cst.SetComp, cst.DictComp, cst.GeneratorExp)):
            return cst.Name("None")  # (the names it reads from the scope kept below)
        return updated


def scope_names(statement) -> Set[str]:
    """The names `statement` reads or binds in its scope. A comprehension's `for _ in ...` binds a
    name of its own; a nested `def` (a pipeline's `parse_record`, written into the body) has its
    own parameters and locals: no inlined name clashes with those."""
    if isinstance(statement, cst.FunctionDef):
        params = {p.name.value for p in statement.params.params + statement.params.kwonly_params
                  + statement.params.posonly_params}
        return (names_read(statement) - params - names_assigned(statement.body)) | {statement.name.value}
    comprehensions = [n for n in nodes_in(statement) if isinstance(n, (cst.ListComp, cst.SetComp, cst.DictComp,
                                                                        cst.GeneratorExp))]
    own = set().union(*(names_assigned(c) for c in comprehensions)) if comprehensions else set()
    flat = statement.visit(_NoComprehensions())
    outer = set().union(*(names_read(c) for c in comprehensions)) - own if comprehensions else set()
    return names_read(flat) | names_assigned(flat) | outer


def scope_of(module: cst.Module, statement) -> cst.CSTNode:
    """The function whose body holds `statement`, or the module."""
    found = [module]

    class _Find(cst.CSTVisitor):
        def __init__(self):
            super().__init__()
            self.stack = [module]

        def visit_FunctionDef(self, node) -> None:
            self.stack.append(node)

        def leave_FunctionDef(self, node) -> None:
            self.stack.pop()

        def visit_SimpleStatementLine(self, node) -> None:
            if node is statement:
                found[0] = self.stack[-1]

    module.visit(_Find())
    return found[0]
