"""Functions that build a graph and run it in a Session of their own, run by the module's entry
point: `def main(_): ... with tf.Session() as sess: ...` run by `tf.app.run()` or
`if __name__ == "__main__": main()`, `save()` then `reset_default_graph()` then `reload()`, or
`train(args)` called by `main()` (a function run more than once, or from other functions, may not
share graph state between its calls: no `reuse`, Saver or collections).

That is how real TF1 scripts are written. Each such body is read as the script it is (the
module's other top-level statements come first; they may build graph state only beside a single
function run once, whose state then stays at module level, as TF1 built it), rewritten by
native.script / native.emit, and written back inside its function: the function, its name, its
parameters and its call stay; state and `tf.function`s are made inside it, once per call, as TF1
built its graph once per call.
"""
from __future__ import annotations

import re
from typing import Dict, List, Optional, Tuple

import libcst as cst

from tfmigrate.facts.names import ImportTable, dotted
from tfmigrate.native.emit import Emitter, joined_pieces
from tfmigrate.native.script import SESSIONS, Blocked, Kind, Script
from tfmigrate.native.syntax import calls_in, code, names_in

# What the module's other top-level statements may be beside such functions (no graph of their own).
BESIDE = (Kind.PYTHON, Kind.OBJECT, Kind.HELPER, Kind.EAGER, Kind.IMPORT_V1, Kind.DROP)


def rewrite(module: cst.Module, source: str, line_of, stateful: Tuple[str, ...], clip=None, pinned: bool = False,
            keras3: bool = False, listed: Tuple[str, ...] = (), fresh: Tuple[str, ...] = ()) -> Optional[str]:
    """The module with each entry function's body as eager TF2, None when it has no entry
    function (Blocked: what stops the rewrite of one). `clip`: its training steps' gradient clips
    (native.clipped_steps); `pinned`, `keras3`, `listed`: as native.script.Script takes them;
    `fresh`: the functions that build a new graph at each call (`own_graphs`)."""
    names = ImportTable(module, source)
    functions = _entry_functions(module, names, line_of, fresh)
    if not functions:
        return None
    mains = [node for node in module.body if _is_main_block(node)]  # kept as written
    others = [node for node in module.body if not any(node is f for f in functions + mains)]
    bodies: Dict[int, str] = {}
    beside: Optional[Tuple[object, Dict[int, List]]] = None
    after_reset = _fresh_graphs(module, functions, names)
    for function in functions:
        docstring, body = _split_docstring(function)
        _no_multiline_strings(body, line_of)
        script = Script(module.with_changes(body=[*others, *body]), source, line_of, stateful, pinned=pinned,
                        keras3=keras3, norm_names=clip.norm_names if clip is not None else None,
                        listed=listed).analyse()
        if clip is not None:
            script.clip_steps(clip.norms, clip.values)
        script.runs_anew = function.name.value in fresh and not called_once(module, function, names)
        if script.runs_anew and re.search(r"\bget_global_step\s*\(", code(function)):
            raise Blocked(line_of(function), f"`get_global_step()` in `{function.name.value}`, run more than once in "
                                             "new graphs: eagerly it would find the step an earlier run made")
        tops = {id(node): [] for node in others}
        inside = []
        for statement in script.body:
            if id(statement.top) in tops:
                if statement.kind not in BESIDE and not (len(functions) == 1 and called_once(module, function, names)):
                    raise Blocked(statement.line, f"graph code at module level beside `{function.name.value}`, "
                                                  "a function that runs its own Session more than once (or beside "
                                                  "other such functions): each run began from the graph's initial "
                                                  "values")
                tops[id(statement.top)].append(statement)
            else:
                inside.append(statement)
        if not (after_reset.get(id(function), True) or function.name.value in fresh) and any(s.kind is Kind.SAVER for s in script.statements):
            raise Blocked(line_of(function), f"a `tf.train.Saver` in `{function.name.value}`, whose graph goes on from "
                                             "the one an earlier function built (no `reset_default_graph()` between "
                                             "their calls): TF1's variable names went on counting")
        if script.builders and len(functions) > 1:
            raise Blocked(line_of(function), "TF1 model functions shared by several functions that run their "
                                             "own Sessions (each made new variables in TF1)")
        emitter = Emitter(script)
        emitter.prepare()
        bodies[id(function)] = _indented(function, docstring, emitter.statements(inside))
        if beside is None or script.cells or script.builders:  # (the legacy Keras switch goes with them)
            beside = (emitter, tops)
    emitter, tops = beside
    pieces = []
    for node in module.body:
        if id(node) in bodies:
            pieces.append(bodies[id(node)])
        elif any(node is m for m in mains):
            pieces.append(code(node))
        else:
            pieces.append(emitter.statements(tops[id(node)]))
    return "".join(code(line) for line in module.header) + joined_pieces(pieces)


def _entry_functions(module: cst.Module, names: ImportTable, line_of, fresh: Tuple[str, ...]) -> List[cst.FunctionDef]:
    """Top-level functions that open a Session, each called once from the module's top level, or
    run from its entry point otherwise (`main()` calls `train(args)`; `run(a)` then `run(b)`):
    those build their graph anew at each call, so they may not share variables between calls."""
    found = []
    reached = _run_from_entry_point(module, names)
    for node in module.body:
        if isinstance(node, cst.FunctionDef) and any(names.api(c.func) in SESSIONS for c in calls_in(node)):
            if not called_once(module, node, names):
                if node.name.value not in reached:
                    raise Blocked(line_of(node), f"`{node.name.value}`, a function that runs its own Session, "
                                                 "not run from the module's entry point (a library function)")
                shared = SHARES_BETWEEN_CALLS.search(code(node))
                if shared and node.name.value not in fresh:
                    raise Blocked(line_of(node), f"`{node.name.value}`, a function that runs its own Session, run "
                                                 f"more than once or from other functions, with `{shared.group(0)}` "
                                                 "(TF1's later calls found the earlier calls' variables or names)")
            found.append(node)
    return found


# What makes one call of a function see the graph state of the calls before it, in TF1's default graph.
SHARES_BETWEEN_CALLS = re.compile(r"\b(?:reuse|AUTO_REUSE|reuse_variables|Saver|get_collection|global_variables|"
                                  r"trainable_variables|get_default_graph|global_step)\b")


def own_graphs(module: cst.Module, source: str) -> Tuple[str, ...]:
    """The top-level functions that build their graph in a new one at each call: a top-level
    `with tf.Graph().as_default():` of the body (TF1's later calls saw nothing of the earlier
    ones). Read before native.graph_blocks reads such blocks away."""
    if "as_default" not in source:
        return ()  # (most modules: no import table built a second time)
    names = ImportTable(module, source)
    found = []
    for function in module.body:
        if not isinstance(function, cst.FunctionDef):
            continue
        made = set()  # (`graph = tf.Graph()` then `with graph.as_default():`)
        for statement in function.body.body:
            small = statement.body[0] if isinstance(statement, cst.SimpleStatementLine) else None
            if isinstance(small, cst.Assign) and len(small.targets) == 1 and isinstance(small.targets[0].target, cst.Name) \
                    and isinstance(small.value, cst.Call) and names.api(small.value.func) == "Graph":
                made.add(small.targets[0].target.value)
            if isinstance(statement, cst.With) and len(statement.items) == 1 \
                    and _new_graph(statement.items[0].item, names, made):
                found.append(function.name.value)
                break
    return tuple(found)


def _new_graph(item, names: ImportTable, made) -> bool:
    """`tf.Graph().as_default()`, or `graph.as_default()` of a `graph = tf.Graph()` made just before."""
    if not (isinstance(item, cst.Call) and isinstance(item.func, cst.Attribute) and item.func.attr.value == "as_default"):
        return False
    owner = item.func.value
    return (isinstance(owner, cst.Call) and names.api(owner.func) == "Graph") or (
        isinstance(owner, cst.Name) and owner.value in made)


def _run_from_entry_point(module: cst.Module, names: ImportTable) -> set:
    """The module's functions that its entry point runs (the `if __name__ == "__main__":` block,
    `tf.app.run()`, a top-level call), directly or through its other functions."""
    functions = {node.name.value: node for node in module.body if isinstance(node, cst.FunctionDef)}
    todo = []
    for node in module.body:
        if isinstance(node, cst.FunctionDef):
            continue
        for statement in _top_statements(node):
            run = _entry_call(statement, names)
            todo += [run[0]] if run else []
            todo += [c.func.value for c in calls_in(statement) if isinstance(c.func, cst.Name)]
    reached = set()
    while todo:
        name = todo.pop()
        if name in functions and name not in reached:
            reached.add(name)
            todo += [c.func.value for c in calls_in(functions[name]) if isinstance(c.func, cst.Name)]
    return reached


def called_once(module: cst.Module, function: cst.FunctionDef, names: ImportTable) -> bool:
    """Run by exactly one top-level statement (`_entry_call`), and named nowhere else."""
    name = function.name.value
    runs = [run for node in module.body if node is not function
            for run in map(lambda s: _entry_call(s, names), _top_statements(node)) if run and run[0] == name]
    refs = sum(1 for node in module.body if node is not function for n in names_in(node) if n == name)
    return len(runs) == 1 and refs == sum(spelled for _, spelled in runs)


def _entry_call(statement, names: ImportTable) -> Optional[Tuple[str, bool]]:
    """(the function a top-level statement runs, whether it spells its name): `f(...)`,
    `tf.app.run(main=f)` / absl's `app.run(f)`, or `tf.app.run()`, which runs `main`."""
    if not (isinstance(statement, cst.SimpleStatementLine) and isinstance(statement.body[0], cst.Expr)
            and isinstance(statement.body[0].value, cst.Call)):
        return None
    call = statement.body[0].value
    if isinstance(call.func, cst.Name):
        return call.func.value, True  # (`main(args)` too)
    if (names.api(call.func) or dotted(call.func) or "").endswith("app.run"):
        given = [a.value for a in call.args if a.keyword is None or a.keyword.value == "main"]
        if not given:
            return "main", False
        if isinstance(given[0], cst.Name):
            return given[0].value, True
    return None


def _fresh_graphs(module: cst.Module, functions, names: ImportTable) -> Dict[int, bool]:
    """For each entry function, whether its graph was TF1's first or came after a module-level
    `reset_default_graph()` (else its variables' names went on from the earlier graph's)."""
    by_name = {f.name.value: f for f in functions}
    fresh: Dict[int, bool] = {}
    reset = True  # (the first graph is fresh)
    for node in module.body:
        for statement in _top_statements(node):
            if isinstance(statement, cst.FunctionDef):
                continue
            if any((names.api(c.func) or dotted(c.func) or "").endswith("reset_default_graph")
                   for c in calls_in(statement)):
                reset = True
            run = _entry_call(statement, names)
            if run is not None and run[0] in by_name:
                fresh[id(by_name[run[0]])] = reset
                reset = False
    return fresh


def _is_main_block(node) -> bool:
    return isinstance(node, cst.If) and "__name__" in code(node.test) and node.orelse is None


def _top_statements(node) -> List[cst.CSTNode]:
    """The node, or the body of a top-level `if __name__ == "__main__":`."""
    return list(node.body.body) if _is_main_block(node) else [node]


def _split_docstring(function: cst.FunctionDef):
    body = list(function.body.body)
    first = body[0] if body else None
    if isinstance(first, cst.SimpleStatementLine) and isinstance(first.body[0], cst.Expr) and isinstance(
            first.body[0].value, (cst.SimpleString, cst.ConcatenatedString)):
        return first, body[1:]
    return None, body


def _no_multiline_strings(body, line_of) -> None:
    """The body is written back one indentation deeper: a string spanning lines would change."""
    class _Strings(cst.CSTVisitor):
        def visit_SimpleString(self, node: cst.SimpleString) -> None:
            if "\n" in node.value:
                raise Blocked(line_of(node), "a string spanning lines inside a function that runs its own Session")

        def visit_FormattedString(self, node: cst.FormattedString) -> None:
            if "\n" in code(node):
                raise Blocked(line_of(node), "a string spanning lines inside a function that runs its own Session")

    for statement in body:
        statement.visit(_Strings())


def _indented(function: cst.FunctionDef, docstring, text: str) -> str:
    header = code(function.with_changes(body=function.body.with_changes(  # (its comments stay)
        body=[cst.SimpleStatementLine([cst.Pass()])], footer=[])))
    header = header[:header.rindex("pass")].rstrip(" ")
    indent = function.body.indent if function.body.indent is not None else "    "
    lines = indent + code(docstring) if docstring is not None else ""  # (its own lines stay as written)
    inner = re.sub(r"\n{3,}", "\n\n", text.lstrip("\n")) or "pass\n"  # one blank line inside a function
    return header + lines + "".join(indent + line if line.strip() else line for line in inner.splitlines(True))
