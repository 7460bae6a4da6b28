"""A library's graph-building functions, as a script that calls them may take them in (issue 22).

TF1 programs often build their whole graph in a library function and run it from the script:

    realnvp.py:  def build_graph(hparams):              train.py:  ops = realnvp.build_graph(HPARAMS)
                     x = tf.placeholder(...)                       sess.run(ops["train_op"], {ops["x"]: b})
                     ...
                     return {"x": x, "train_op": train_op}

Placeholders and a train op made in the library cannot be called eagerly as they are, but written
into the script they are the script's own graph code, which `fix --native` reads (native.
library_builders). For that the script's rewrite needs the function's text and what its names
are in the library: gathered here, from the bytes, for project.graph_imports.eager_imports, which
lists each such function for the scripts importing its module (`realnvp.build_graph:builds={...}`).
"""
from __future__ import annotations

import ast
import json
from typing import Dict, Iterable, Optional

# How eager_imports lists, for a script, a graph-building function of a module it imports, followed
# by the JSON of `payload`.
BUILDS_ENTRY = ":builds="
# Modules whose names a borrowed function may use as the script spells them (a third-party or
# project module is read through the library instead: `realnvp.helper`).
_SHARED_MODULES = ("tensorflow", "numpy", "math", "collections", "functools", "itertools", "six", "absl")


def payloads(data: bytes, names: Iterable[str]) -> Dict[str, str]:
    """name -> the JSON payload of each top-level function or class of `names` in the module `data`: its
    line, its text, the literal constants of its library (`BN_DECAY = 0.99`: read by
    a default argument at `def`), the library's imports it may read (local name -> the module or name it
    binds, as native.imported_models spells imports: `np` -> `numpy`, `layers` -> `a.layers`) and
    the names the library defines (read through the library's module by the script)."""
    wanted = set(names)
    if not wanted:
        return {}
    try:
        tree = ast.parse(data)
    except (SyntaxError, ValueError):
        return {}
    lines = data.decode("utf-8", "replace").splitlines(keepends=True)
    imports = _shared_imports(tree)
    defined = sorted(_top_level_names(tree) - set(imports))
    literals = _literal_constants(tree, data.decode("utf-8", "replace"))
    found = {}
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)) and node.name in wanted and not node.decorator_list:
            found[node.name] = json.dumps({"line": node.lineno, "text": "".join(lines[node.lineno - 1:node.end_lineno]),
                                           "imports": imports, "defined": defined, "literals": literals},
                                          sort_keys=True)
    return found


def entry(module: str, name: str, payload: str) -> str:
    return f"{module}.{name}{BUILDS_ENTRY}{payload}"


def parse_entry(text: str) -> Optional[tuple]:
    """(spelling `lib.build_graph`, payload dict) of an eager_imports entry, None for other entries."""
    spec, marker, payload = text.partition(BUILDS_ENTRY)
    if not marker:
        return None
    return spec, json.loads(payload)


def _shared_imports(tree: ast.Module) -> Dict[str, str]:
    """Local name -> what it names, for the top-level imports of `_SHARED_MODULES` (absolute)."""
    found = {}
    for node in tree.body:
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] in _SHARED_MODULES:
                    found[alias.asname or alias.name.split(".")[0]] = alias.name if alias.asname else alias.name.split(".")[0]
        elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
            if node.module.split(".")[0] in _SHARED_MODULES:
                for alias in node.names:
                    if alias.name != "*":
                        found[alias.asname or alias.name] = f"{node.module}.{alias.name}"
    return found


def _literal_constants(tree: ast.Module, text: str) -> Dict[str, str]:
    """Name -> its literal, for the module's names its top level binds once, to a literal
    (`BN_DECAY = 0.99`): a default argument `decay=BN_DECAY`, read at `def`, is that literal."""
    counts: Dict[str, int] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            counts[node.id] = counts.get(node.id, 0) + 1
        elif isinstance(node, ast.Global):
            for name in node.names:
                counts[name] = counts.get(name, 0) + 2
    found = {}
    for node in tree.body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name) \
                and counts.get(node.targets[0].id) == 1 and _literal(node.value):
            found[node.targets[0].id] = ast.get_source_segment(text, node.value)
    return found


def _literal(node: ast.expr) -> bool:
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        node = node.operand
    if isinstance(node, (ast.Tuple, ast.List)):
        return all(_literal(e) for e in node.elts)
    return isinstance(node, ast.Constant)


def _top_level_names(tree: ast.Module) -> set:
    """The names the module's top level binds (functions, classes, assignments, imports)."""
    found = set()
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            found.add(node.name)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            found.update((a.asname or a.name.split(".")[0]) for a in node.names if a.name != "*")
        elif isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in targets:
                found.update(n.id for n in ast.walk(target) if isinstance(n, ast.Name))
    return found
