"""A graph class that holds its Session (issue 21), the shape of many research and RL programs:

    class Actor(object):                                class Actor(tf.Module):
        def __init__(self, sess, n_features):               def __init__(self, n_features):
            self.sess = sess                     ->              ...
            ... (the graph)                                  def learn(self, s, a):
        def learn(self, s, a):                                   return self.train_step(s, a).numpy()
            return self.sess.run(self.train_op, ...)
    actor = Actor(sess, 4)                               actor = Actor(4)

or `self.sess = tf.Session()` / `tf.InteractiveSession()` made in `__init__`, initialised there
(`self.sess.run(tf.global_variables_initializer())`) and closed by the program (`vae.sess.close()`).
The attribute is used only by `run` (each such call a run over the object, read as the program's
runs in a method given a Session are), `close`, a Saver's `save` / `restore` (given None eagerly),
and where it is set; those lines go, and a
Session given to `__init__` leaves its parameter list and its callers' arguments. Anything else
(`self.sess.graph`, the Session passed on, a Session with a graph of its own) keeps the module
on the compat route.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Dict, List, Optional, Set

import libcst as cst

from tfmigrate.native.class_facts import self_attr, subtree
from tfmigrate.native.script import INITIALIZERS, SESSIONS, Blocked
from tfmigrate.native.syntax import names_read


@dataclass
class HeldSession:
    attr: str                    # `self.<attr>`
    param: Optional[str] = None  # the parameter of `__init__` that gave it (None: made there)
    index: int = -1              # that parameter's position after `self`


def held(script, cls_node: cst.ClassDef, init: cst.FunctionDef, body: List[cst.BaseStatement]) -> Optional[HeldSession]:
    """The Session the class keeps on itself, set by one statement of `__init__`'s `body` (None: none)."""
    params = [p.name.value for p in init.params.params[1:]]
    found: List[HeldSession] = []
    for statement in body:
        small = statement.body[0] if isinstance(statement, cst.SimpleStatementLine) and len(statement.body) == 1 \
            else None
        if not (isinstance(small, cst.Assign) and len(small.targets) == 1):
            continue
        attr = self_attr(small.targets[0].target)
        if attr is None:
            continue
        if script.tf_call(small.value) in SESSIONS:
            if small.value.args:
                raise Blocked(script.line_of(statement), f"`self.{attr}`, a Session of `{cls_node.name.value}` made "
                                                         "with arguments (a graph or a target of its own)")
            found.append(HeldSession(attr))
        elif isinstance(small.value, cst.Name) and small.value.value in params and _runs_on(cls_node.body, attr):
            found.append(HeldSession(attr, small.value.value, params.index(small.value.value)))
    if not found:
        return None
    if len(found) > 1:
        raise Blocked(script.line_of(init), f"two Sessions kept by `{cls_node.name.value}`")
    return found[0]


def _runs_on(node, attr: str) -> bool:
    """Whether `node` calls `self.<attr>.run(...)`."""
    return any(_held_run(n, {attr}) for n in subtree(node))


def saver_session(call: cst.Call, attr: str) -> Optional[cst.Arg]:
    """The held Session's argument of `<saver>.save(self.<attr>, ...)` / `.restore(self.<attr>, ...)`."""
    if isinstance(call.func, cst.Attribute) and call.func.attr.value in ("save", "restore") and call.args \
            and call.args[0].keyword is None and self_attr(call.args[0].value) == attr:
        return call.args[0]
    return None


def _held_run(node, attrs, objects: bool = False) -> bool:
    """`self.<attr>.run(...)`, `attr` one of `attrs` (`objects`: or `<name>.<attr>.run(...)`, the
    program running an object's Session, `RL.sess.run(RL.probs, ...)`)."""
    if not (isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and node.func.attr.value == "run"):
        return False
    held = node.func.value
    return self_attr(held) in attrs or objects and isinstance(held, cst.Attribute) and held.attr.value in attrs \
        and isinstance(held.value, cst.Name) and held.value.value != "self"


def settled(script, cls_node: cst.ClassDef, session: HeldSession, body: List[cst.BaseStatement]) -> List[cst.BaseStatement]:
    """`__init__`'s statements less those that set, initialise or name the held Session (gone with
    it); every other use of it checked (runs are read where they are)."""
    attr = session.attr
    gone: Set[int] = set()
    initializers: Set[str] = set()
    for statement in body:
        small = statement.body[0] if isinstance(statement, cst.SimpleStatementLine) and len(statement.body) == 1 \
            else None
        if isinstance(small, cst.Assign) and len(small.targets) == 1 and self_attr(small.targets[0].target) == attr:
            gone.add(id(statement))
        elif isinstance(small, cst.Assign) and len(small.targets) == 1 and _initializer_key(small.targets[0].target) \
                and script.tf_call(small.value) in INITIALIZERS:
            initializers.add(_initializer_key(small.targets[0].target))
            gone.add(id(statement))
        elif isinstance(small, cst.Expr) and isinstance(small.value, cst.Call) and _method_of(small.value, attr) == "run":
            given = small.value.args[0].value if len(small.value.args) == 1 else None
            if not (script.tf_call(given) in INITIALIZERS or _initializer_key(given) in initializers):
                raise Blocked(script.line_of(statement), f"`self.{attr}.run(...)` in `__init__` other than of the "
                                                         "variables' initializer")
            gone.add(id(statement))
    kept = [_writer_kept(script, s, attr) for s in body if id(s) not in gone]
    others = [s for s in cls_node.body.body if not (isinstance(s, cst.FunctionDef) and s.name.value == "__init__")]
    for statement in kept + others:
        read = names_read(statement) | {f"self.{a}" for a in (self_attr(n) for n in subtree(statement)) if a}
        if read & initializers:
            raise Blocked(script.line_of(statement), "the variables' initializer used other than by the held Session")
    if session.param is not None and any(session.param in names_read(s) for s in kept):
        raise Blocked(script.line_of(cls_node), f"`{session.param}`, the Session given to "
                                                f"`{cls_node.name.value}.__init__`, used other than as `self.{attr}`")
    return kept


def check_uses(script, module: cst.Module, cls_node: cst.ClassDef, session: HeldSession) -> Set[int]:
    """Every `<object>.<attr>` of the module is a `run` in a method, a `close()` statement (the ids
    of those statements: they go) or the line that set it; Blocked otherwise."""
    attr = session.attr
    closes: Set[int] = set()
    allowed: Set[int] = set()
    for node in subtree(module):
        small = node.body[0] if isinstance(node, cst.SimpleStatementLine) and len(node.body) == 1 else None
        if isinstance(small, cst.Expr) and isinstance(small.value, cst.Call) and not small.value.args \
                and _method_of(small.value, attr) == "close":
            closes.add(id(node))
            allowed.add(id(small.value.func.value))
        elif _held_run(node, {attr}, objects=True):
            allowed.add(id(node.func.value))
        elif isinstance(node, cst.Call) and _graph_writer(script, node, attr):
            allowed.add(id(_writer_graph(node).value))
        elif isinstance(node, cst.Call) and saver_session(node, attr) is not None:
            allowed.add(id(saver_session(node, attr).value))  # `saver.save(self.sess, path)`: None eagerly
            script.saver_sessions.add(id(saver_session(node, attr)))
        elif isinstance(small, cst.Assign) and len(small.targets) == 1 and self_attr(small.targets[0].target) == attr:
            allowed.add(id(small.targets[0].target))
    for node in subtree(module):
        if isinstance(node, cst.Attribute) and node.attr.value == attr and id(node) not in allowed:
            raise Blocked(script.line_of(node), f"`{cst.Module([]).code_for_node(node)}`, the Session "
                                                f"`{cls_node.name.value}` keeps, used other than by `run` and `close`")
    return closes


def _writer_graph(call: cst.Call) -> Optional[cst.BaseExpression]:
    """The graph argument of `tf.summary.FileWriter(logdir, graph)`."""
    args = [a for a in call.args if a.keyword is None or a.keyword.value == "graph"]
    return args[1].value if len(args) == 2 else None


def _graph_writer(script, call: cst.Call, attr: str) -> bool:
    """`tf.summary.FileWriter(logdir, self.<attr>.graph)`: TF1's writer of the held Session's graph
    (for TensorBoard, Morvan's RL classes under `if output_graph:`)."""
    if script.tf_call(call) not in ("summary.FileWriter", "compat.v1.summary.FileWriter") or len(call.args) != 2:
        return False
    graph = _writer_graph(call)
    return isinstance(graph, cst.Attribute) and graph.attr.value == "graph" and isinstance(graph.value, cst.Attribute) \
        and graph.value.attr.value == attr


def _writer_kept(script, statement, attr: str):
    """`statement` with each writer of the held Session's graph as an eager summary writer of its
    directory (eager code has no graph to write), marked Python (`script.python_statements`)."""
    found = [c for c in subtree(statement) if isinstance(c, cst.Call) and _graph_writer(script, c, attr)]
    if not found:
        return statement
    logdir = next(a.value for a in found[0].args if a.keyword is None)
    targets = {id(c) for c in found}

    class _Writer(cst.CSTTransformer):
        def leave_Call(self, original: cst.Call, updated: cst.Call):
            if id(original) not in targets:
                return updated
            return cst.parse_expression(f"{script.tf}.summary.create_file_writer({cst.Module([]).code_for_node(logdir)})")

    new = statement.visit(_Writer())
    script.python_statements.add(id(new))
    return new


def _initializer_key(node) -> Optional[str]:
    """`init` of a name, `self.init` of an attribute of the object, where an initializer is kept."""
    if isinstance(node, cst.Name):
        return node.value
    attr = self_attr(node)
    return f"self.{attr}" if attr is not None else None


def _method_of(call: cst.Call, attr: str) -> Optional[str]:
    """`m` of `<x>.<attr>.m(...)`."""
    func = call.func
    if isinstance(func, cst.Attribute) and isinstance(func.value, cst.Attribute) and func.value.attr.value == attr:
        return func.attr.value
    return None


def runs_held(method: cst.FunctionDef, session: Optional[HeldSession]) -> bool:
    """Whether the method runs the held Session (`self.sess.run(...)`): a method of the program."""
    return session is not None and _runs_on(method.body, session.attr)


def is_held_run(script, call: cst.Call) -> bool:
    """`self.<attr>.run(...)`, `attr` the Session a graph class holds (the class being read, once
    runs are read)."""
    classes = [script.current_class] if script.current_class is not None else script.classes.values()
    return _held_run(call, {c.held_session.attr for c in classes if c.held_session is not None},
                     objects=script.current_class is None)


def constructor_sessions(script) -> Dict[str, tuple]:
    """Class name -> (index, name) of the Session its `__init__` is given, for its callers' arguments."""
    return {name: (cls.held_session.index, cls.held_session.param) for name, cls in script.classes.items()
            if cls.held_session is not None and cls.held_session.param is not None}
