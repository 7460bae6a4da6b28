"""TensorFlow imports the native rewrite left unused.

`from tensorflow.python.framework import ops` is there for `ops.reset_default_graph()`, which an
eager program does not need: the rewrite drops the call, and the import would stay behind, unused
and private. An import goes only when the original module used its name and the rewrite uses it
nowhere; only TensorFlow's submodules (never `import tensorflow as tf` itself), whose import does nothing the program sees (TensorFlow is
imported anyway). A user's import, or one with a comment above it, is never touched.
"""
from __future__ import annotations

from typing import List

import libcst as cst

from tfmigrate.facts.names import dotted
from tfmigrate.fixers.imports import count_name


def dropped_unused(original: str, rewritten: str) -> str:
    """`rewritten` without its top-level TensorFlow imports whose names the rewrite stopped using."""
    try:
        module = cst.parse_module(rewritten)
    except Exception:  # noqa: BLE001 - the caller checks that the rewrite parses
        return rewritten
    body: List[cst.CSTNode] = []
    changed = False
    for statement in module.body:
        kept = _without_unused(statement, original, rewritten)
        changed |= kept is not statement
        if kept is not None:
            body.append(kept)
    return module.with_changes(body=body).code if changed else rewritten


def _without_unused(statement, original: str, rewritten: str):
    """The statement, less the aliases it binds that `original` read and `rewritten` does not;
    None when none is left."""
    if not isinstance(statement, cst.SimpleStatementLine) or len(statement.body) != 1 \
            or any(line.comment is not None for line in statement.leading_lines):
        return statement
    node = statement.body[0]
    if isinstance(node, cst.ImportFrom):
        if node.relative or node.module is None or isinstance(node.names, cst.ImportStar):
            return statement
        module = dotted(node.module)
    elif isinstance(node, cst.Import):
        module = None  # each alias names its own module
    else:
        return statement
    own = statement.with_changes(leading_lines=()).body[0]
    text = cst.Module([]).code_for_node(own)
    kept = []
    for alias in node.names:
        name = dotted(alias.name) or ""
        source = module if module is not None else name
        local = alias.asname.name.value if alias.asname is not None else name.split(".")[0]
        private = (source or "").startswith("tensorflow.")  # not `import tensorflow as tf` itself
        if not private or not _unused(local, text, original, rewritten):
            kept.append(alias)
    if len(kept) == len(node.names):
        return statement
    if not kept:
        return None
    kept[-1] = kept[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)
    return statement.with_changes(body=[node.with_changes(names=kept)])


def _unused(local: str, own: str, original: str, rewritten: str) -> bool:
    """`local` was read in `original` beyond its import and is read nowhere in `rewritten`."""
    mine = count_name(own, local)
    before, after = count_name(original, local), count_name(rewritten, local)
    return min(mine, before, after) >= 0 and before > mine and after == mine
