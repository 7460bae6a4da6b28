"""How the program calls a graph class's methods besides `__init__` (issue 21), in the two shapes
real TF1 code uses most:

- the graph built by methods called once right after the object is made
  (`model = ConvNet(); model.build()`, `build` calling `self.inference()`, `self.loss()`, ...):
  TF1 built that graph once, before any run, as if `__init__` had; their bodies are read as the
  end of `__init__` (`built_after`, `inlined`), and the calls go;
- a method that opens its own Session (`def train(self): with tf.Session() as sess: ...`), run
  once by the program: read as the program's code, as native.entry_functions reads a function run
  once by `main` (`runs_once`). Run twice, TF1 began each Session from the initial values.
"""
from __future__ import annotations

from typing import Dict, List, Optional, Set, Tuple

import libcst as cst

from tfmigrate.native.class_facts import attrs_of, is_docstring, root_name, self_attr, subtree
from tfmigrate.native.model_mapping import local_names
from tfmigrate.native.script import Blocked
from tfmigrate.native.syntax import calls_in, name_nodes, names_assigned, names_read

_LOOPS = (cst.For, cst.While, cst.CompFor, cst.Lambda)


def method_call(statement, receiver: str) -> str:
    """`<receiver>.m()` as a statement of its own, without arguments: `m` ('' when it is not that)."""
    if not (isinstance(statement, cst.SimpleStatementLine) and len(statement.body) == 1
            and isinstance(statement.body[0], cst.Expr) and isinstance(statement.body[0].value, cst.Call)):
        return ""
    call = statement.body[0].value
    func = call.func
    if call.args or not (isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name)
                         and func.value.value == receiver):
        return ""
    return func.attr.value


def built_after(module: cst.Module, name: str, builders: Set[str], line_of) -> Tuple[List[str], Set[int]]:
    """The methods of the class `name` that build the graph (`builders`) called on each of its
    objects right after it is made (`model = Net(); model.build()`), in order, and the ids of those
    call statements. Every object must be built the same way, each method once."""
    sequences: List[Tuple[str, ...]] = []
    lines: List[int] = []
    statements: Set[int] = set()
    blocks = [module.body] + [n.body for n in subtree(module) if isinstance(n, cst.IndentedBlock)]
    for block in blocks:
        for index, statement in enumerate(block):
            small = statement.body[0] if isinstance(statement, cst.SimpleStatementLine) and len(statement.body) == 1 \
                else None
            if not (isinstance(small, cst.Assign) and len(small.targets) == 1 and isinstance(small.value, cst.Call)
                    and isinstance(small.value.func, cst.Name) and small.value.func.value == name
                    and isinstance(small.targets[0].target, cst.Name)):
                continue
            receiver = small.targets[0].target.value
            sequence: List[str] = []
            for after in block[index + 1:]:
                called = method_call(after, receiver)
                if called not in builders:
                    break
                if called in sequence:
                    raise Blocked(line_of(after), f"`{receiver}.{called}()` called twice (TF1 built its graph "
                                                  "again, with new variables)")
                sequence.append(called)
                statements.add(id(after))
            sequences.append(tuple(sequence))
            lines.append(line_of(statement))
    if len(set(sequences)) > 1:
        at = lines[next(i for i, s in enumerate(sequences) if s != sequences[0])]
        raise Blocked(at, f"objects of `{name}` built by different methods after they were made")
    return (list(sequences[0]) if sequences else []), statements


def builder_call(statement, builders: Set[str]) -> Optional[Tuple[str, cst.Call, Optional[cst.BaseAssignTargetExpression]]]:
    """`self.m(...)` or `<target> = self.m(...)` as a statement of its own, `m` one of `builders`:
    (m, the call, the target or None)."""
    small = statement.body[0] if isinstance(statement, cst.SimpleStatementLine) and len(statement.body) == 1 else None
    target = None
    if isinstance(small, cst.Assign) and len(small.targets) == 1:
        value, target = small.value, small.targets[0].target
    elif isinstance(small, cst.Expr):
        value = small.value
    else:
        return None
    if not (isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute)
            and isinstance(value.func.value, cst.Name) and value.func.value.value == "self"
            and value.func.attr.value in builders):
        return None
    return value.func.attr.value, value, target


def inlined(cls: cst.ClassDef, first: list, builders: Set[str], line_of, copies: Optional[Dict[int, int]] = None,
            caller: Optional[cst.FunctionDef] = None, needed=None) -> Tuple[List[cst.BaseStatement], List[str]]:
    """The statements the methods `first` run (a name, or a statement of `caller` that calls one) (their docstrings dropped, each `self.m(...)` of
    another builder replaced by its body: its parameters read as the call's arguments, a last
    `return <value>` as `<target> = <value>`), and the methods whose bodies these are, in order.
    `copies`: the line of each statement written anew (id -> line). `needed(m)`: whether a call of
    `m` with arguments or a value is joined too (else it stays a call of the graph method)."""
    methods: Dict[str, cst.FunctionDef] = {s.name.value: s for s in cls.body.body if isinstance(s, cst.FunctionDef)}
    calls = _self_calls(cls)
    done: List[str] = []
    out: List[cst.BaseStatement] = []

    def expand(name: str, call: Optional[cst.Call] = None, target=None, caller: Optional[cst.FunctionDef] = None) -> None:
        method = methods[name]
        if name in done:
            raise Blocked(line_of(method), f"the method `{name}` that builds the graph run twice by the methods "
                                           "called after the object was made")
        params = method.params
        if method.decorators or params.kwonly_params or isinstance(params.star_arg, cst.Param) \
                or params.star_kwarg is not None or not params.params or params.params[0].name.value != "self" \
                or call is None and len(params.params) != 1:
            raise Blocked(line_of(method), f"the method `{name}`, called after the object was made, with parameters "
                                           "or decorators")
        body = list(method.body.body)
        if body and is_docstring(body[0]):
            body.pop(0)
        returned = None
        if body and isinstance(body[-1], cst.SimpleStatementLine) and len(body[-1].body) == 1 \
                and isinstance(body[-1].body[0], cst.Return) and call is not None:
            returned = body.pop().body[0].value
        if any(isinstance(n, (cst.Return, cst.Yield, cst.Global, cst.Nonlocal)) for n in subtree(cst.IndentedBlock(body))):
            raise Blocked(line_of(method), f"`return` or `yield` in `{name}` other than its last statement, in a "
                                           "method that builds the graph in `__init__`")
        if caller is not None:
            clash = local_names(method) & local_names(caller) - {"self"} - _substituted(method)
            if clash:
                raise Blocked(line_of(method), f"`{sorted(clash)[0]}`, a local name of both `{name}` and "
                                               f"`{caller.name.value}`, which this route joins into one method")
        done.append(name)
        if call is not None:
            body = _bound(method, call, body, line_of, copies)
            if returned is not None:
                returned = _renamed(returned, _arguments(method, call, line_of))
        for statement in body:
            found = builder_call(statement, builders)
            plain_call = found is not None and not found[1].args and found[2] is None
            if found is not None and found[0] != name and (plain_call or needed is not None and needed(found[0])
                                                           or calls[found[0]] == 1
                                                           and _joinable(methods[found[0]], method)):
                called, inner, inner_target = found
                expand(called, None if plain_call else inner, inner_target, method)
            else:
                out.append(statement)
        if returned is not None and target is not None:
            written = cst.SimpleStatementLine([cst.Assign([cst.AssignTarget(target)], returned)])
            out.append(written)
        elif returned is not None:
            written = cst.SimpleStatementLine([cst.Expr(returned)])
            out.append(written)
        elif target is not None:
            raise Blocked(line_of(method), f"the value of `{name}`, which returns nothing, assigned")
        if returned is not None and copies is not None:
            copies.update((id(n), line_of(method.body.body[-1])) for n in subtree(written))

    for name in first:
        if isinstance(name, str):
            expand(name)
            continue
        called, call, target = builder_call(name, builders)
        expand(called, None if not call.args and target is None else call, target, caller)
    return out, done


_SIMPLE = (cst.Name, cst.Integer, cst.Float, cst.SimpleString)


def _self_calls(cls: cst.ClassDef) -> Dict[str, int]:
    """Method name -> how many `self.<name>(...)` calls the class makes (a method called twice, as a
    tower of shared weights is, stays a method: joined, its body would be written twice)."""
    counts: Dict[str, int] = {}
    for node in subtree(cls):
        if isinstance(node, cst.Call) and self_attr(node.func) is not None:
            counts[node.func.attr.value] = counts.get(node.func.attr.value, 0) + 1
    return counts


def _joinable(method: cst.FunctionDef, caller: cst.FunctionDef) -> bool:
    """Whether `method`, called with arguments by `caller`, joins it without a clash of local names
    and with no `return` but its last statement (else the call stays, as a graph method's)."""
    params = method.params
    if method.decorators or params.kwonly_params or isinstance(params.star_arg, cst.Param) or params.star_kwarg:
        return False
    body = list(method.body.body)
    if body and isinstance(body[-1], cst.SimpleStatementLine) and len(body[-1].body) == 1 \
            and isinstance(body[-1].body[0], cst.Return):
        body.pop()
    if any(isinstance(n, (cst.Return, cst.Yield, cst.Global, cst.Nonlocal)) for n in subtree(cst.IndentedBlock(body))):
        return False
    return not local_names(method) & local_names(caller) - {"self"} - _substituted(method)


def _arguments(method: cst.FunctionDef, call: cst.Call, line_of) -> Dict[str, cst.BaseExpression]:
    """The value of each parameter of `method` (after `self`) at `call`: its argument or default."""
    names = [p.name.value for p in method.params.params[1:]]
    values: Dict[str, cst.BaseExpression] = {}
    for index, arg in enumerate(call.args):
        if arg.star:
            raise Blocked(line_of(call), f"`*args` in a call of `{method.name.value}`")
        key = arg.keyword.value if arg.keyword is not None else (names[index] if index < len(names) else None)
        if key not in names or key in values:
            raise Blocked(line_of(call), f"a call of `{method.name.value}` whose arguments do not match its parameters")
        values[key] = arg.value
    for param in method.params.params[1:]:
        if param.name.value not in values:
            if param.default is None:
                raise Blocked(line_of(call), f"a call of `{method.name.value}` without its `{param.name.value}`")
            values[param.name.value] = param.default
    return values


def _substituted(method: cst.FunctionDef) -> Set[str]:
    """The parameters of `method` written as their arguments where it is joined (not assigned)."""
    nested = any(isinstance(n, (cst.FunctionDef, cst.Lambda, cst.ClassDef, cst.CompFor)) for n in subtree(method.body))
    if nested:
        return set()
    return {p.name.value for p in method.params.params[1:]} - names_assigned(method.body)


def _simple(value: cst.BaseExpression) -> bool:
    """A value that may be written wherever its parameter was read: a name, `self.<attr>`, a literal."""
    return isinstance(value, _SIMPLE) or isinstance(value, cst.Attribute) and isinstance(value.value, cst.Name) \
        and value.value.value == "self"


def _renamed(node, values: Dict[str, cst.BaseExpression]):
    """`node` with each read of a parameter in `values` written as its value."""
    targets = {id(n): values[n.value] for n in name_nodes(node) if n.value in values}
    if not targets:
        return node

    class _Rename(cst.CSTTransformer):
        def leave_Name(self, original: cst.Name, updated: cst.Name):
            return targets.get(id(original), updated)

    return node.visit(_Rename())


def _bound(method: cst.FunctionDef, call: cst.Call, body: List[cst.BaseStatement], line_of,
           copies: Optional[Dict[int, int]]) -> List[cst.BaseStatement]:
    """The body of `method` for `call`: each parameter read as its argument where that is a plain
    value and the body does not assign it, else first assigned (`param = <argument>`)."""
    values = _arguments(method, call, line_of)
    substituted = _substituted(method)
    renamed = {k: v for k, v in values.items() if k in substituted and _simple(v)}
    out: List[cst.BaseStatement] = []
    for key, value in values.items():
        if key not in renamed:
            out.append(cst.SimpleStatementLine([cst.Assign([cst.AssignTarget(cst.Name(key))], value)]))
            if copies is not None:
                copies[id(out[-1])] = line_of(call)
    for statement in body:
        new = _renamed(statement, renamed)
        if new is not statement and copies is not None:
            copies.update((id(n), line_of(statement)) for n in subtree(new))
        out.append(new)
    return out


def check_locals(cls: cst.ClassDef, init: cst.FunctionDef, names: List[str], line_of) -> None:
    """The inlined methods and `__init__` become one body: a name local to one of them may not be a
    module-level name another reads."""
    methods = {s.name.value: s for s in cls.body.body if isinstance(s, cst.FunctionDef)}
    pieces = [init] + [methods[n] for n in names]
    for piece in pieces:
        free = names_read(piece.body) - local_names(piece)
        for other in pieces:
            clash = free & local_names(other) - {"self"} if other is not piece else set()
            if clash:
                raise Blocked(line_of(piece), f"`{sorted(clash)[0]}`, a local name of `{other.name.value}` and a "
                                              f"module-level name read by `{piece.name.value}`, which this route "
                                              "joins into one method")


def other_calls(module: cst.Module, cls: cst.ClassDef, names: Set[str], kept: Set[int], aliases: Set[str],
                line_of) -> None:
    """The methods read as part of `__init__` may be named nowhere else: not called twice, after a
    run, or by other methods (`self.loss` read where a method `loss` assigned it is the tensor)."""
    inside = {id(n) for m in cls.body.body if isinstance(m, cst.FunctionDef) and m.name.value in names
              for n in subtree(m.body)}
    allowed = {id(n) for s in subtree(module) if id(s) in kept for n in subtree(s)} | inside
    assigned = set().union(*(attrs_of(m)[1] for m in cls.body.body if isinstance(m, cst.FunctionDef)))
    called = {id(c.func) for c in calls_in(module)}
    for node in subtree(module):  # (`self.gstep.eval()` is no call of a method `eval`)
        if isinstance(node, cst.Attribute) and node.attr.value in names and id(node) not in allowed \
                and root_name(node) not in aliases and self_attr(node.value) not in assigned and (id(node) in called or node.attr.value not in assigned):
            raise Blocked(line_of(node), f"`{node.attr.value}`, a method that builds the graph, called other than once "
                                         f"right after the object of `{cls.name.value}` was made (TF1 built that graph "
                                         "again, or after a run)")


def runs_once(module: cst.Module, cls: cst.ClassDef, method: cst.FunctionDef, mains: Set[str], sessions: Set[int],
              aliases: Set[str], line_of) -> None:
    """A method that opens its own Session may be called once, by the program: one call, outside
    loops, at module level or in a function run once (`mains`). Blocked otherwise."""
    name = method.name.value
    parents: Dict[int, cst.CSTNode] = {}

    class _Parents(cst.CSTVisitor):
        def on_visit(self, node) -> bool:
            for child in node.children:
                parents[id(child)] = node
            return True

    module.visit(_Parents())
    calls = [n for n in subtree(module) if isinstance(n, cst.Attribute) and n.attr.value == name
             and root_name(n) not in aliases]  # (`tf.train.Saver` is no call of `train`)
    why = "called more than once (TF1 began each of its Sessions from the variables' initial values)"
    if len(calls) != 1:
        raise Blocked(line_of(method), f"`{cls.name.value}.{name}`, a method that opens its own Session, " +
                      (why if calls else "never called"))
    node = calls[0]
    call = parents.get(id(node))
    if not (isinstance(call, cst.Call) and call.func is node):
        raise Blocked(line_of(node), f"`{name}`, a method that opens its own Session, used other than by a call")
    while id(node) in parents:
        node = parents[id(node)]
        if isinstance(node, _LOOPS) or isinstance(node, cst.ClassDef) or isinstance(node, cst.FunctionDef) \
                and node.name.value not in mains:
            raise Blocked(line_of(call), f"`{cls.name.value}.{name}`, a method that opens its own Session, {why}")
    for loop in subtree(method.body):
        if isinstance(loop, _LOOPS) and any(id(c) in sessions for c in calls_in(loop)):
            raise Blocked(line_of(loop), f"a Session made in a loop of `{cls.name.value}.{name}`")
