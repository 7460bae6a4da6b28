"""Which functions of a library module an eager test may call, one by one.

A TF1 library often mixes pure tensor functions (`padding_bias(lengths, max_len)`) with model
functions that make variables (`output_projection(inputs, vocab, scope=None, reuse=None)` under
`variable_scope` with `get_variable`). Judged as a whole (facts.eager_calls), one model function
kept every test of the module on the compat route. Judged per function:
- "pure": nothing in it (nor in the module's functions it calls) runs otherwise eagerly: an eager
  test calls it as it is;
- "model": it only makes variables the TF1 way (`get_variable`, `variable_scope`, initializers):
  an eager test calls it through TensorFlow's model-mapping route (native.test_models), where each
  variable is made once with its TF1 name and found again by name;
- "graph": anything else of facts.eager_calls.NOT_EAGER (a placeholder, `tf.gradients`, `.assign`,
  `.name`): the test keeps the compat route.
A class is judged whole (its methods are called outside any variable store): "pure" or "graph".
Read from the bytes with `ast` (project.graph_imports gathers it for every checked file up front).
"""
from __future__ import annotations

import ast
import re
from typing import Dict, Optional

from tfmigrate.facts.eager_calls import NOT_EAGER, code_only

PURE, MODEL, GRAPH = "pure", "model", "graph"
# How project.graph_imports.eager_imports lists a model function among what a test may call
# (`ops.output_projection:model`; a pure one is listed as `ops.padding_bias`, a whole module as `ops`).
MODEL_ENTRY = ":model"
# What a model function may do beyond a pure one: make variables by name, under scopes.
_MAKES_VARIABLES = re.compile(rb"^\.(?:get_variable|variable_scope|\w*initializer)\s*\($")
_RANK = {PURE: 0, MODEL: 1, GRAPH: 2}


def function_kinds(data: bytes) -> Optional[Dict[str, str]]:
    """Top-level function or class name -> PURE, MODEL or GRAPH (a name the top level assigns:
    PURE); None when the module's own
    top-level code (outside its functions and classes) runs otherwise eagerly, or it does not parse."""
    try:
        tree = ast.parse(data)
    except (SyntaxError, ValueError):
        return None
    lines = data.splitlines(keepends=True)
    defined = [node for node in tree.body if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))]
    spans = {}
    for node in defined:
        first = min([node.lineno] + [d.lineno for d in node.decorator_list])
        spans[node.name] = (first - 1, node.end_lineno)
    taken = {k for start, end in spans.values() for k in range(start, end)}
    rest = b"".join(line for k, line in enumerate(lines) if k not in taken)
    if NOT_EAGER.search(code_only(rest)):
        return None
    own: Dict[str, str] = {}
    for node in defined:
        start, end = spans[node.name]
        own[node.name] = _kind(b"".join(lines[start:end]), isinstance(node, ast.ClassDef))
    calls = {node.name: {n.id for n in ast.walk(node) if isinstance(n, ast.Name) and n.id in spans
                         and n.id != node.name} for node in defined}
    classes = {node.name for node in defined if isinstance(node, ast.ClassDef)}
    kinds = dict(own)
    changed = True
    while changed:  # (what a function calls of its module counts as its own)
        changed = False
        for name, called in calls.items():
            worst = max([kinds[name]] + [kinds[c] for c in called], key=_RANK.__getitem__)
            if name in classes and worst == MODEL:
                worst = GRAPH
            if worst != kinds[name]:
                kinds[name], changed = worst, True
    for node in tree.body:  # (constants and namedtuples of the clean top level: `DiagGaussian = ...`)
        targets = node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(node, ast.AnnAssign) else []
        for target in targets:
            if isinstance(target, ast.Name) and target.id not in kinds:
                kinds[target.id] = PURE
    return kinds


def _kind(text: bytes, is_class: bool) -> str:
    found = [hit.group(0) for hit in NOT_EAGER.finditer(code_only(text))]
    if not found:
        return PURE
    if is_class or not all(_MAKES_VARIABLES.match(hit) for hit in found):
        return GRAPH
    return MODEL
