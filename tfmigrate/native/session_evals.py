"""`t.eval(feed_dict=...)` under a function's one Session, read as that Session's `run` (and
`tf.global_variables_initializer().run()`).

    sess = tf.InteractiveSession()                 sess = tf.InteractiveSession()
    ...                                      ->    ...
    samples = gan.fake.eval(feed_dict=feed)        samples = sess.run(gan.fake, feed_dict=feed)

`Tensor.eval()` runs in the default Session: in a function (or at module level) that makes exactly
one Session, under one name, and never another default (`as_default()`), that is the one. The class
route reads `sess.run` of an object's tensors (native.class_runs), so the evaluation is written as
that run, on the same line. Anything else (a `session=` argument, a string argument as pandas'
`df.eval("a + b")`, a scope with two Sessions) is left as it was.
"""
from __future__ import annotations

from typing import Dict, List, Optional

import libcst as cst
import libcst.matchers as m

from tfmigrate.facts.names import ImportTable

_SESSIONS = ("Session", "InteractiveSession")
# `tf.global_variables_initializer().run()`: the op run in the default Session, as `t.eval()` is
_INITIALIZERS = ("global_variables_initializer", "initialize_all_variables", "local_variables_initializer",
                 "tables_initializer")


def as_session_runs(module: cst.Module, source: str) -> Optional[cst.Module]:
    """`module` with each such evaluation written as its Session's `run`, or None if it has none."""
    if ".eval(" not in source:
        return None
    names = ImportTable(module, source)
    scopes: List[cst.CSTNode] = [module] + [f for f in m.findall(module, m.FunctionDef())]
    runs: Dict[int, cst.Call] = {}
    for scope in scopes:
        session = _one_session(scope, names)
        if session is None:
            continue
        for call in _own_calls(scope):
            if not (isinstance(call.func, cst.Attribute) and (call.func.attr.value == "eval" or (
                    call.func.attr.value == "run" and isinstance(call.func.value, cst.Call)
                    and (names.api(call.func.value.func) or "").endswith(_INITIALIZERS)))):
                continue
            args = call.args
            if len(args) > 1 or any(a.star for a in args) or args and (
                    args[0].keyword is not None and args[0].keyword.value != "feed_dict"
                    or isinstance(args[0].value, (cst.SimpleString, cst.ConcatenatedString, cst.FormattedString))):
                continue
            feed = [cst.Arg(args[0].value, keyword=cst.Name("feed_dict"),
                            equal=cst.AssignEqual(cst.SimpleWhitespace(""), cst.SimpleWhitespace("")))] if args else []
            runs[id(call)] = cst.Call(func=cst.Attribute(cst.Name(session), cst.Name("run")),
                                      args=[cst.Arg(call.func.value, comma=cst.Comma(
                                          whitespace_after=cst.SimpleWhitespace(" ")) if feed else
                                          cst.MaybeSentinel.DEFAULT), *feed])
    if not runs:
        return None
    return module.visit(_Runs(runs))


def _one_session(scope: cst.CSTNode, names: ImportTable) -> Optional[str]:
    """The name of the scope's one Session (`sess = tf.InteractiveSession()`, `with tf.Session() as
    sess:`), when it makes exactly one and sets no other default."""
    made: List[str] = []
    named = set()  # the Session calls given a name
    for node in _own_nodes(scope):
        if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and node.func.attr.value == "as_default":
            return None
        if isinstance(node, cst.Assign) and isinstance(node.value, cst.Call) \
                and (names.api(node.value.func) or "") in _SESSIONS and len(node.targets) == 1 \
                and isinstance(node.targets[0].target, cst.Name):
            made.append(node.targets[0].target.value)
            named.add(id(node.value))
        elif isinstance(node, cst.WithItem) and isinstance(node.item, cst.Call) \
                and (names.api(node.item.func) or "") in _SESSIONS \
                and m.matches(node.asname, m.AsName(name=m.Name())):
            made.append(node.asname.name.value)
            named.add(id(node.item))
        elif isinstance(node, cst.Call) and (names.api(node.func) or "") in _SESSIONS and id(node) not in named:
            made.append("")
    return made[0] if len(made) == 1 and made[0] else None


def _own_nodes(scope: cst.CSTNode) -> List[cst.CSTNode]:
    """The nodes of `scope`, not inside a nested function or class (their scopes are their own)."""
    found: List[cst.CSTNode] = []

    class _Visit(cst.CSTVisitor):
        def on_visit(self, node) -> bool:
            if node is not scope and isinstance(node, (cst.FunctionDef, cst.ClassDef, cst.Lambda)):
                return False
            found.append(node)
            return True

    scope.visit(_Visit())
    return found


def _own_calls(scope: cst.CSTNode) -> List[cst.Call]:
    return [n for n in _own_nodes(scope) if isinstance(n, cst.Call)]


class _Runs(cst.CSTTransformer):
    def __init__(self, runs: Dict[int, cst.Call]):
        self.runs = runs

    def leave_Call(self, original: cst.Call, updated: cst.Call) -> cst.BaseExpression:
        run = self.runs.get(id(original))
        return updated if run is None else run.with_changes(lpar=updated.lpar, rpar=updated.rpar)
