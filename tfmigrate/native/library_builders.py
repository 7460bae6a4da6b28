"""A library's graph-building functions taken into the script that calls them (issue 22).

    import realnvp                               import realnvp
                                                 def build_graph(hparams):   # realnvp.py:84
    def main():                                      x = tf.placeholder(...)
        ops = realnvp.build_graph(HPARAMS)   ->      z, log_det = realnvp.flow_forward(x, ...)
        sess.run(ops["train_op"], ...)               ...
                                                 def main():
                                                     ops = build_graph(HPARAMS)

A function that makes placeholders, a train op or a summary cannot be called eagerly through the
model-mapping store (native.imported_models), but it is the script's graph, only written in another
file. Written into the script as a function of its own, the script's route reads it as it reads the
script's own graph functions (written where they are called, native.inline). What it reads of its
library is read through the library's module (`realnvp.flow_forward`: its model functions then go
through the store); the modules both import (TensorFlow, numpy) by the script's own names. The
library is left as it is: its other callers (its tests) keep calling the TF1 function.

Taken only where exact: every name of the function known (a parameter, a local, a builtin, a name
its library defines or imports from `facts.library_builders._SHARED_MODULES`), the script's names
for those modules the library's (`tensorflow.compat.v1` and `tensorflow` alike: a TF1 script's `tf`
is TF1's API), the function only called (not passed as a value). Graph functions it calls of its
library are taken in with it. Facts (text, imports, names) come from
facts.library_builders, gathered by project.graph_imports.eager_imports.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Dict, List, Optional, Set, Tuple

import libcst as cst
from libcst.metadata import MetadataWrapper, PositionProvider, ScopeProvider

from tfmigrate.facts.library_builders import BUILDS_ENTRY, parse_entry
from tfmigrate.facts.names import dotted
from tfmigrate.native.class_facts import is_docstring
from tfmigrate.native.imported_models import local_spellings, top_level_imports
from tfmigrate.native.syntax import calls_in, fresh_name, name_counts


@dataclass
class _Taken:
    """One function taken in: its spelling in the script, its library module and line, its name here."""
    spelling: str
    module: str
    line: int
    local: str
    definition: Optional[cst.CSTNode] = None  # (a FunctionDef, or a ClassDef)


@dataclass
class TakenIn:
    """The script with its library builders written in; `spans`: (first line, last line, the
    function as the script spelled it, its module, its line there) of each, in `code`."""
    code: str
    spans: List[Tuple[int, int, str, str, int]]
    functions: List[str]  # the local names of those that are functions (a class is not written in place)

    def inlined(self) -> str:
        """`code` with each builder written where it is called (native.inline), where that is exact."""
        from tfmigrate.native.inline import Refused, inline_each

        module = cst.parse_module(self.code)
        for name in self.functions:
            try:
                module = inline_each(module, name).module
            except Refused:
                continue
        return module.code

    def line_in_code(self, text: str, line: int) -> int:
        """The line of `code` that line `line` of `text` (`code` rewritten: `inlined`) came from: a
        line of a builder's body by its content (written in place, it moved and is indented
        otherwise), else as a diff matches them."""
        lines = self.code.splitlines()
        wanted = text.splitlines()[line - 1].strip() if 0 < line <= len(text.splitlines()) else None
        for first, last, *_ in self.spans:
            for at in range(first, last + 1):
                if wanted and lines[at - 1].strip() == wanted:
                    return at
        from tfmigrate.native.inline import original_line

        return original_line(self.code, text, line)

    def call_line(self, source: str, spelling: str) -> int:
        """The line of `source` calling `spelling`, or else the first calling a builder it takes in
        (one taken in with another is called in its body)."""
        found = [re.search(rf"(?<![\w.]){re.escape(s)}\s*\(", source) for s in [spelling] + [s[2] for s in self.spans]]
        at = next((f for f in found if f is not None), None)
        return source.count("\n", 0, at.start()) + 1 if at else 1

    def where(self, line: int) -> Optional[Tuple[str, str, int]]:
        """(spelling, module, library line) of a line of `code` inside a taken function, else None."""
        for first, last, spelling, module, at in self.spans:
            if first <= line <= last:
                return spelling, module, at + line - first
        return None


def without_builders(entries: tuple) -> tuple:
    return tuple(e for e in entries if BUILDS_ENTRY not in e)


def taken_in(source: str, entries: tuple) -> Optional[TakenIn]:
    """`source` with the builders it calls from its project's modules (`entries`: eager_imports'
    for this script) written in, or None where it calls none or one cannot be taken exactly."""
    builds = dict(found for e in entries if BUILDS_ENTRY in e and (found := parse_entry(e)) is not None)
    if not builds:
        return None
    try:
        module = cst.parse_module(source)
    except Exception:  # noqa: BLE001 - the caller reports unparsable files itself
        return None
    outside = top_level_imports(module)
    calls = {}  # spelling in the script -> the builder's spec
    for spec in builds:
        for spelling in local_spellings(outside, spec):
            calls[spelling] = spec
    called = [c for c in calls_in(module) if dotted(c.func) in calls]
    if not called:
        return None
    specs = _closure({calls[dotted(c.func)] for c in called}, builds)
    # (a builder imported by name is only called: its import goes, and its name is free)
    taken_names = _names_used(module) - {spelling for spelling, spec in calls.items() if "." not in spelling
                                         and spec in specs}
    aliases: Dict[str, str] = {}  # library module -> the script's name for it
    added: List[str] = []  # import statements the script needs
    for library in sorted({spec.rpartition(".")[0] for spec in specs}):
        alias = next((local for local, full in outside.items() if full == library), None)
        if alias is None:
            statement, alias = _import_of(library, taken_names)
            added.append(statement)
        aliases[library] = alias
    taken: Dict[str, _Taken] = {}
    for spec in sorted(specs):
        library, _, name = spec.rpartition(".")
        taken[spec] = _Taken(next((s for s, p in calls.items() if p == spec), spec), library, builds[spec]["line"],
                             fresh_name(taken_names, name))
    for spec, one in taken.items():
        definition = _rewritten(builds[spec], one, taken, aliases, outside, added, taken_names)
        if definition is None:
            return None
        one.definition = definition
    if not _only_called(module, calls, called):
        return None
    return _written(module, called, calls, taken, added)


def _names_used(module: cst.Module) -> Set[str]:
    """Every name the module binds or reads, at any depth (a module name an import only reads, as
    `nets` of `from nets import build`, is not one)."""
    found: Set[str] = set()

    class _Names(cst.CSTVisitor):
        def visit_Attribute(self, node: cst.Attribute) -> bool:
            node.value.visit(self)
            return False

        def visit_Import(self, node: cst.Import) -> bool:
            found.update(a.evaluated_alias or dotted(a.name).split(".")[0] for a in node.names)
            return False

        def visit_ImportFrom(self, node: cst.ImportFrom) -> bool:
            if not isinstance(node.names, cst.ImportStar):
                found.update(a.evaluated_alias or a.evaluated_name for a in node.names)
            return False

        def visit_Name(self, node: cst.Name) -> None:
            found.add(node.value)

    module.visit(_Names())
    return found


def _closure(specs: Set[str], builds: Dict[str, dict]) -> Set[str]:
    """`specs` and the builders of their modules that they read, in turn."""
    todo, found = list(specs), set(specs)
    while todo:
        spec = todo.pop()
        library = spec.rpartition(".")[0]
        body = cst.parse_module(builds[spec]["text"])
        for name in name_counts(body):
            other = f"{library}.{name}"
            if other in builds and other not in found:
                found.add(other)
                todo.append(other)
    return found


def _import_of(library: str, taken_names: Set[str]) -> Tuple[str, str]:
    """The statement importing the module `library` (as native.imported_models spells it: `pkg.lib`,
    `.lib`) under a name of its own (`gat` unless the script binds it: `gat_2`), and that name."""
    dots = len(library) - len(library.lstrip("."))
    parent, _, name = library[dots:].rpartition(".")
    alias = fresh_name(taken_names, name)
    named = f" as {alias}" if alias != name else ""
    if not dots and not parent:
        return f"import {name}{named}", alias
    return f"from {'.' * dots}{parent} import {name}{named}", alias


def _rewritten(payload: dict, one: _Taken, taken: Dict[str, _Taken], aliases: Dict[str, str],
               outside: Dict[str, str], added: List[str], taken_names: Set[str]) -> Optional[cst.CSTNode]:
    """The builder's definition as the script writes it: its name the local one, each name it reads
    of its library as the script reads it; None where a name is not known or would mean another thing."""
    try:
        wrapper = MetadataWrapper(cst.parse_module(payload["text"]))
    except Exception:  # noqa: BLE001
        return None
    definition = next((s for s in wrapper.module.body if isinstance(s, (cst.FunctionDef, cst.ClassDef))), None)
    if definition is None or definition.decorators:
        return None
    scopes = wrapper.resolve(ScopeProvider)
    replaced: Dict[cst.Name, cst.BaseExpression] = {}
    imports, defined, literals = payload["imports"], set(payload["defined"]), payload.get("literals", {})
    functions = [definition] if isinstance(definition, cst.FunctionDef) else [
        s for s in definition.body.body if isinstance(s, cst.FunctionDef)]
    defaults = {id(n) for f in functions for p in f.params.params if p.default is not None for n in _all_names(p.default)}
    for scope in {s for s in scopes.values() if s is not None}:
        for access in scope.accesses:
            node = access.node
            if not isinstance(node, cst.Name) or access.referents:
                if isinstance(node, cst.Name) and any(type(r.scope).__name__ == "GlobalScope" for r in access.referents):
                    replaced[node] = cst.Name(one.local)  # (itself: `super(Net, self)`, a recursive call)
                continue
            name = node.value
            other = taken.get(f"{one.module}.{name}")
            if other is not None:
                replaced[node] = cst.Name(other.local)
            elif name in imports:
                expression = _shared_name(name, imports[name], outside, added, taken_names)
                if expression is None:
                    return None
                if expression is not node.value:
                    replaced[node] = expression
            elif name in literals and id(node) in defaults:  # (read at `def`: the value it had there)
                replaced[node] = cst.parse_expression(literals[name])
            elif name in defined:
                replaced[node] = cst.Attribute(cst.Name(aliases[one.module]), cst.Name(name))
            else:
                return None  # (a name the library gets otherwise: a star import, a conditional one)

    class _Names(cst.CSTTransformer):
        def leave_Name(self, original: cst.Name, updated: cst.Name) -> cst.BaseExpression:
            return replaced.get(original, updated)

        def leave_FunctionDef(self, original: cst.FunctionDef, updated: cst.FunctionDef) -> cst.FunctionDef:
            if original is definition:
                return updated.with_changes(name=cst.Name(one.local))
            return updated

        def leave_ClassDef(self, original: cst.ClassDef, updated: cst.ClassDef) -> cst.ClassDef:
            if original is definition:
                return updated.with_changes(name=cst.Name(one.local))
            return updated

    written = wrapper.module.visit(_Names())
    return next(s for s in written.body if isinstance(s, (cst.FunctionDef, cst.ClassDef)))


def _all_names(node: cst.CSTNode) -> List[cst.Name]:
    found: List[cst.Name] = []

    class _Names(cst.CSTVisitor):
        def visit_Name(self, name: cst.Name) -> None:
            found.append(name)

    node.visit(_Names())
    return found


def _shared_name(name: str, full: str, outside: Dict[str, str], added: List[str], taken_names: Set[str]):
    """How the script reads the library's import `name` of `full`: the same name where it imports the
    same thing (or nothing by that name: the import is added); `tf.compat.v1` where the library's
    `tf` is TF1's and the script's TensorFlow; None where the script's name means another thing."""
    mine = outside.get(name)
    if mine == full:
        return name
    if mine is None and name not in taken_names:
        module, _, last = full.rpartition(".")
        statement = (f"import {full}" if name == full else f"import {full} as {name}") if not module else (
            f"from {module} import {last}" + (f" as {name}" if name != last else ""))
        if "." in full and name == full.split(".")[0] and not module:
            statement = f"import {full}"
        added.append(statement)
        taken_names.add(name)
        return name
    if {mine, full} == {"tensorflow", "tensorflow.compat.v1"}:
        return name  # (the script's TensorFlow is TF1's: its graph code spells TF1's API `tf.X` as the library's)
    return None


def _only_called(module: cst.Module, calls: Dict[str, str], called: List[cst.Call]) -> bool:
    """Whether the script names its builders only to call them (a value passed on would still be the
    library's TF1 function)."""
    funcs = {id(c.func) for c in called}
    found = []

    class _Uses(cst.CSTVisitor):
        def visit_Attribute(self, node: cst.Attribute) -> bool:
            if dotted(node) in calls and id(node) not in funcs:
                found.append(node)
            return True

        def visit_Name(self, node: cst.Name) -> None:
            if node.value in calls and id(node) not in funcs:
                found.append(node)

        def visit_ImportFrom(self, node: cst.ImportFrom) -> bool:
            return False

    module.visit(_Uses())
    return not found


def _written(module: cst.Module, called: List[cst.Call], calls: Dict[str, str], taken: Dict[str, _Taken],
             added: List[str]) -> TakenIn:
    """The module with the calls naming the local functions, the imports added and the functions
    written after its last top-level import."""
    local = {spelling: taken[spec].local for spelling, spec in calls.items() if spec in taken}
    funcs = {id(c.func): c for c in called}

    class _Calls(cst.CSTTransformer):
        def leave_SimpleStatementLine(self, original, updated):
            """A statement calling a builder says where its graph code comes from."""
            here = [funcs[i] for i in funcs if any(c is funcs[i] for c in calls_in(original))]
            if not here:
                return updated
            one = taken[calls[dotted(here[0].func)]]
            where = "its class is written above" if isinstance(one.definition, cst.ClassDef) else "its body is written here"
            note = cst.EmptyLine(comment=cst.Comment(f"# tfmigrate: `{one.spelling}` ({_file(one)}): {where}, to run eagerly"))
            return updated.with_changes(leading_lines=[*updated.leading_lines, note])

        def leave_Call(self, original: cst.Call, updated: cst.Call) -> cst.Call:
            if id(original.func) in funcs:
                return updated.with_changes(func=cst.Name(local[dotted(original.func)]))
            return updated

        def leave_ImportFrom(self, original: cst.ImportFrom, updated: cst.ImportFrom):
            if isinstance(updated.names, cst.ImportStar):
                return updated
            kept = [a for a in updated.names if (a.evaluated_alias or a.evaluated_name) not in local]
            if not kept:
                return cst.RemoveFromParent()
            if len(kept) < len(updated.names):  # (`from lib import build, helper`: `helper` stays)
                return updated.with_changes(names=[*kept[:-1], kept[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)])
            return updated

    module = module.visit(_Calls())  # (the builders' names were only called: _only_called)
    body = list(module.body)
    last_import = max((k for k, s in enumerate(body) if isinstance(s, cst.SimpleStatementLine)
                       and any(isinstance(small, (cst.Import, cst.ImportFrom)) for small in s.body)), default=-1)
    at = last_import + 1
    if at == 0 and body and is_docstring(body[0]):
        at = 1
    pieces: List[cst.BaseStatement] = [cst.parse_statement(statement) for statement in added]
    ordered = sorted(taken.values(), key=lambda t: (t.module, t.line))
    pieces += [one.definition.with_changes(leading_lines=[cst.EmptyLine(), cst.EmptyLine(), cst.EmptyLine(
        comment=cst.Comment(f"# tfmigrate: from {_file(one)}, taken in to run eagerly (the library keeps it for its "
                            "other callers)"))]) for one in ordered]
    code = module.with_changes(body=body[:at] + pieces + body[at:]).code
    wrapper = MetadataWrapper(cst.parse_module(code), unsafe_skip_copy=True)
    positions = wrapper.resolve(PositionProvider)
    at_line = {s.name.value: positions[s] for s in wrapper.module.body if isinstance(s, (cst.FunctionDef, cst.ClassDef))}
    spans = [(at_line[one.local].start.line, at_line[one.local].end.line, one.spelling, one.module, one.line)
             for one in ordered]
    return TakenIn(code, spans, [one.local for one in ordered if isinstance(one.definition, cst.FunctionDef)])


def _file(one: _Taken) -> str:
    return f"{one.module.lstrip('.').replace('.', '/')}.py line {one.line}"
