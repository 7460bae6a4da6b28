"""The compat route for a module of TF1 graph code, as edits: what TensorFlow's migration guide
does by hand, and what the tf1-programs reference runs.

    import tensorflow as tf                 import tensorflow.compat.v1 as tf
                                     ->     tf.disable_v2_behavior()

plus, where the module uses `tf.layers` / `tf.nn.rnn_cell` / `tf.keras` in graph code,
`os.environ.setdefault("TF_USE_LEGACY_KERAS", "1")` before the import (TF 2.21 serves those
only from TensorFlow's legacy Keras, the tf-keras package). Names the module spells through
`tf` that exist only in TF2 (`tf.random.set_seed`) are kept as `tf.compat.v2.<name>`.
"""
from __future__ import annotations

from typing import List, Optional, Sequence, Tuple

import libcst as cst

from tfmigrate.names import dotted

from tfmigrate.findings import Replace
from tfmigrate.program import LEGACY_KERAS_LINE


def compat_route_edits(ctx, v2_only: Sequence[Tuple[cst.CSTNode, str]] = ()):
    """(edits, description, unsafe reason or "") for the module of `ctx`, or None when there is
    no top-level TensorFlow import to anchor the route on. `v2_only`: (node, path) of references
    through a plain `tensorflow` alias that `tf.compat.v1` does not have."""
    program = ctx.program
    plain = program.plain_imports()
    first = _first_tf_import(ctx)
    if first is None:
        return None
    edits: List[Replace] = []
    done: List[str] = []
    switch_alias = None
    if plain and not program.v2_disabled:
        stmts = {}
        for stmt, alias in plain:
            stmts.setdefault(id(stmt), (stmt, []))[1].append(alias)
        for stmt, aliases in stmts.values():
            edits.append((stmt, _swap_aliases(stmt, aliases)))
        stmt, alias = plain[0]
        switch_alias = alias.asname.name.value if alias.asname is not None else "tensorflow"
        done.append(f"import `tensorflow.compat.v1 as {switch_alias}` and call `{switch_alias}.disable_v2_behavior()` "
                    "(TensorFlow's compat route: the program runs as TF1 did, with TF1's numbers)")
    elif not program.v2_disabled:
        v1_alias = next((local for local, target in sorted(ctx.names.aliases.items())
                         if target == "tensorflow.compat.v1"), None)
        if v1_alias is None:
            return None
        switch_alias = v1_alias
        done.append(f"call `{v1_alias}.disable_v2_behavior()` after the import (TensorFlow's compat route)")
    legacy = program.needs_legacy_keras and not program.legacy_keras_set
    if legacy:
        done.append("set `TF_USE_LEGACY_KERAS=1` before TensorFlow loads: `tf.layers` and `tf.nn.rnn_cell` then "
                    "run from TensorFlow's legacy Keras, which needs the tf-keras package (`pip install tf-keras`)")
    if not done:
        return None
    anchor = plain[0][0] if switch_alias is not None and plain and not program.v2_disabled else first
    new_by_stmt = {id(stmt): new for stmt, new in edits}
    before, after = [], []
    if legacy:
        if not _os_imported_before(ctx.module, anchor):
            before.append(cst.parse_statement("import os\n"))
        before.append(cst.parse_statement(LEGACY_KERAS_LINE + "\n"))
    if switch_alias is not None:
        after.append(cst.parse_statement(f"{switch_alias}.disable_v2_behavior()\n"))
    replaced = new_by_stmt.pop(id(anchor), anchor)
    if before:  # comments and blank lines above the import stay above the whole block
        before[0] = before[0].with_changes(leading_lines=replaced.leading_lines)
        replaced = replaced.with_changes(leading_lines=[])
    result = [Replace(anchor, cst.FlattenSentinel([*before, replaced, *after]))]
    result.extend(Replace(stmt, new) for stmt, new in edits if id(stmt) in new_by_stmt)
    if switch_alias is not None and plain and not program.v2_disabled:
        for node, path in v2_only:
            result.append(Replace(node, _v2_spelling(node, path)))
        if v2_only:
            done.append(f"keep {len(v2_only)} TF2-only name{'s' if len(v2_only) != 1 else ''} as `tf.compat.v2.*`")
    description = "; ".join(d[0].upper() + d[1:] if i == 0 else d for i, d in enumerate(done))
    return tuple(result), description, ""


def _first_tf_import(ctx) -> Optional[cst.SimpleStatementLine]:
    for stmt in ctx.module.body:
        if type(stmt) is not cst.SimpleStatementLine:
            continue
        for small in stmt.body:
            if type(small) is cst.Import and any(
                (dotted(a.name) or "").startswith("tensorflow") for a in small.names
            ):
                return stmt
            if type(small) is cst.ImportFrom and small.module is not None and not small.relative and (
                dotted(small.module) or ""
            ).startswith("tensorflow"):
                return stmt
    return None


def _swap_aliases(stmt: cst.SimpleStatementLine, aliases) -> cst.SimpleStatementLine:
    """`import tensorflow as tf` -> `import tensorflow.compat.v1 as tf` (`import tensorflow`
    binds `tensorflow` to compat.v1 through `as tensorflow`)."""
    wanted = {id(a) for a in aliases}
    body = []
    for small in stmt.body:
        if type(small) is cst.Import:
            names = []
            for alias in small.names:
                if id(alias) in wanted:
                    asname = alias.asname or cst.AsName(
                        name=cst.Name("tensorflow"),
                        whitespace_before_as=cst.SimpleWhitespace(" "),
                        whitespace_after_as=cst.SimpleWhitespace(" "),
                    )
                    alias = alias.with_changes(name=cst.parse_expression("tensorflow.compat.v1"), asname=asname)
                names.append(alias)
            small = small.with_changes(names=names)
        body.append(small)
    return stmt.with_changes(body=body)


def _os_imported_before(module: cst.Module, anchor) -> bool:
    for stmt in module.body:
        if stmt is anchor:
            return False
        if type(stmt) is cst.SimpleStatementLine:
            for small in stmt.body:
                if type(small) is cst.Import and any(
                    type(a.name) is cst.Name and a.name.value == "os" and a.asname is None for a in small.names
                ):
                    return True
    return False


def _v2_spelling(node: cst.CSTNode, path: str) -> cst.BaseExpression:
    head = node
    while isinstance(head, cst.Attribute):
        head = head.value
    return cst.parse_expression(f"{head.value}.compat.v2.{path}")
