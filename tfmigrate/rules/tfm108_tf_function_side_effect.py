"""TFM108: Python side effects inside a traced function run once, while it is traced.

Measured under TF 2.21: a `tf.function` called 3 times that does `print("count", counter)` prints
once, and prints the symbolic `<tf.Variable ...>` instead of the value; `tf.print` prints on every
call, with the value. Appending to a list defined outside the function, or assigning a `global`
/ `nonlocal` name, likewise happens once, with symbolic tensors.

`print(...)` -> `tf.print(..., output_stream=sys.stdout)` (tf.print writes to stderr by default).
Safe when every argument is a literal or a tensor by evidence; unsafe otherwise, because tf.print
formats other Python objects differently (a NumPy array prints as `array([1, 2])`, an object by
`repr`). No fix when an argument is formatted in Python (an f-string, `%`, `.format`): it would be
frozen at trace time. A print of literals only (`print("tracing")`) is often meant to run once,
and a print of static facts only (`x.shape`, `x.dtype`) is right at trace time: not reported.
"""
from __future__ import annotations

from typing import Dict, List, Set, Tuple

import libcst as cst

from tfmigrate.findings import AddImport, Fix, Replace
from tfmigrate.facts.names import dotted
from tfmigrate.facts.functions import local_names
from tfmigrate.rules.base import Rule
from tfmigrate.facts.traced import FUNCTIONS, TracedFunctions

_LITERALS = (cst.SimpleString, cst.ConcatenatedString, cst.Integer, cst.Float)
_STATIC_ATTRS = frozenset({"shape", "dtype", "name", "get_shape", "ndim", "device"})
_MUTATORS = frozenset({"append", "extend", "insert"})


def _is_literal(expr) -> bool:
    return isinstance(expr, _LITERALS) or (isinstance(expr, cst.Name) and expr.value in ("None", "True", "False"))


def _is_static(expr) -> bool:
    """`x.shape`, `x.get_shape()`, `x.shape[0]`, `len(x.shape)`: known while tracing."""
    if isinstance(expr, cst.Subscript):
        return _is_static(expr.value)
    if isinstance(expr, cst.Call):
        if isinstance(expr.func, cst.Name) and expr.func.value == "len" and len(expr.args) == 1:
            return _is_static(expr.args[0].value)
        return _is_static(expr.func) and not expr.args
    return isinstance(expr, cst.Attribute) and expr.attr.value in _STATIC_ATTRS


def _formatted(expr) -> bool:
    """Formatted in Python: an f-string, `"..." % x`, `"...".format(x)`, `str(x)`."""
    if isinstance(expr, cst.FormattedString):
        return True
    if isinstance(expr, cst.ConcatenatedString):
        return _formatted(expr.left) or _formatted(expr.right)
    if isinstance(expr, cst.BinaryOperation) and isinstance(expr.operator, (cst.Modulo, cst.Add)):
        return True
    if isinstance(expr, cst.Call):
        func = expr.func
        return (isinstance(func, cst.Attribute) and func.attr.value == "format") or (
            isinstance(func, cst.Name) and func.value in ("str", "repr", "format"))
    return False


def _module_imports_sys(module: cst.Module) -> bool:
    """`import sys` at the top level of the module."""
    for stmt in module.body:
        for small in stmt.body if isinstance(stmt, cst.SimpleStatementLine) else ():
            if isinstance(small, cst.Import) and any(
                dotted(a.name) == "sys" and a.asname is None for a in small.names
            ):
                return True
    return False


class TfFunctionSideEffect(Rule):
    code = "TFM108"
    reads = (TracedFunctions,)

    def __init__(self, ctx):
        super().__init__(ctx)
        self._prints: List[Tuple[cst.Call, cst.CSTNode]] = []
        self._appends: List[Tuple[cst.Call, str, cst.CSTNode]] = []
        self._globals: List[Tuple[cst.CSTNode, str, cst.CSTNode]] = []
        self._declared: Dict[int, Set[str]] = {}

    def visit_Call(self, node: cst.Call) -> None:
        fn = self.ctx.enclosing(FUNCTIONS)
        if fn is None:
            return
        func = node.func
        if isinstance(func, cst.Name) and func.value == "print" and "print" not in self.ctx.names.bound:
            self._prints.append((node, fn))
        elif isinstance(func, cst.Attribute) and func.attr.value in _MUTATORS:
            owner = dotted(func.value)
            if owner and (owner.count(".") == 0 or (owner.startswith("self.") and owner.count(".") == 1)):
                self._appends.append((node, owner, fn))

    def visit_Global(self, node) -> None:
        fn = self.ctx.enclosing(cst.FunctionDef)
        if fn is not None:
            self._declared.setdefault(id(fn), set()).update(n.name.value for n in node.names)

    visit_Nonlocal = visit_Global

    def _store(self, target) -> None:
        fn = self.ctx.enclosing(cst.FunctionDef)
        if fn is not None and isinstance(target, cst.Name):
            self._globals.append((target, target.value, fn))

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        self._store(node.target)

    def visit_Assign(self, node: cst.Assign) -> None:
        for target in node.targets:
            self._store(target.target)

    def leave_Module(self, node: cst.Module) -> None:
        for call, fn in self._prints:
            kind = self.ctx.fact(TracedFunctions).kind(fn)
            if kind is not None:
                self._print(call, fn, kind)
        locals_of: Dict[int, Set[str]] = {}
        for call, owner, fn in self._appends:
            kind = self.ctx.fact(TracedFunctions).kind(fn)
            if kind is None or not isinstance(fn, cst.FunctionDef):
                continue
            if id(fn) not in locals_of:
                locals_of[id(fn)] = local_names(fn)
            head = owner.split(".")[0]
            if head == "self" and "." not in owner or head != "self" and head in locals_of[id(fn)]:
                continue  # `self.append(...)`, or a list the function made itself
            method = call.func.attr.value
            self.report(
                call.func,
                f"`{owner}.{method}(...)` changes a list from outside {kind}, so it runs once, "
                "while the function is traced, and stores symbolic tensors. Collect values in a "
                "`tf.TensorArray` (or return them) instead.",
            )
        for target, name, fn in self._globals:
            kind = self.ctx.fact(TracedFunctions).kind(fn)
            if kind is None or name not in self._declared.get(id(fn), ()):
                continue
            self.report(
                target,
                f"Assigning the global `{name}` inside {kind} happens once, while it is traced, "
                "not on every call. Keep the state in a `tf.Variable` and update it with `assign`.",
            )

    def _print(self, call: cst.Call, fn, kind: str) -> None:
        values = [a.value for a in call.args if a.keyword is None and not a.star]
        if all(_is_literal(v) or _is_static(v) for v in values):
            return  # a trace-time message, or static facts: printing once is right
        wrong = (f"`print` inside {kind} runs once, while it is traced, and shows symbolic tensors, "
                 "not values.")
        fix = self._fix(call, fn, values)
        if isinstance(fix, str):
            return self.report(call.func, f"{wrong} Use `tf.print`, which runs on every call; no automatic fix because {fix}.")
        self.report(call.func, f"{wrong} Use `tf.print(..., output_stream=sys.stdout)`, which prints on every call.", fix)

    def _fix(self, call: cst.Call, fn, values) -> "Fix | str":
        for arg in call.args:
            if arg.star:
                return f"`{arg.star}` hides the arguments"
            if arg.keyword is not None and arg.keyword.value not in ("sep", "end"):
                return f"`tf.print` has no `{arg.keyword.value}=`"
        for value in values:
            if _formatted(value):
                return "the text is formatted in Python, once, at trace time; pass the tensors to `tf.print` as separate arguments"
        ref = self.ctx.names.spelling("print")
        edits = []
        edits.extend(ref.import_edits())
        if not _module_imports_sys(self.ctx.module):
            if "sys" in self.ctx.names.bound or "sys" in local_names_or_empty(fn):
                return "`sys` is taken by another name here"
            edits.append(AddImport("import sys"))
        args = list(call.args)
        last = args[-1]
        args[-1] = last.with_changes(comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" ")))
        args.append(cst.Arg(
            cst.parse_expression("sys.stdout"),
            keyword=cst.Name("output_stream"),
            equal=cst.AssignEqual(cst.SimpleWhitespace(""), cst.SimpleWhitespace("")),
            comma=last.comma,
        ))
        edits.insert(0, Replace(call, call.with_changes(func=ref.expression(), args=args)))
        unsure = [v for v in values if not (_is_literal(v) or _is_static(v) or self.ctx.fact(TracedFunctions).tensor(v, fn))]
        if unsure:
            what = self.ctx.module.code_for_node(unsure[0])
            return Fix("unsafe", f"Replace with `{ref.code}(..., output_stream=sys.stdout)` (`{what}` may not be "
                       "a tensor: tf.print formats NumPy arrays and other objects differently)", tuple(edits))
        return Fix("safe", f"Replace with `{ref.code}(..., output_stream=sys.stdout)`", tuple(edits))


def local_names_or_empty(fn) -> Set[str]:
    return local_names(fn) if isinstance(fn, cst.FunctionDef) else set()
