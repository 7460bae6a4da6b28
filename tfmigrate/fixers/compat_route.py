"""The compat route for a module of TF1 graph code, as edits: what TensorFlow's migration guide
does by hand, and what the tf1-programs reference runs.

    import tensorflow as tf                 import tensorflow.compat.v1 as tf
                                     ->     tf.disable_v2_behavior()

plus, where the module uses `tf.layers` / `tf.nn.rnn_cell` / `tf.keras` in graph code,
`os.environ.setdefault("TF_USE_LEGACY_KERAS", "1")` before its first TensorFlow import (TF 2.21
serves those only from TensorFlow's legacy Keras, the tf-keras package). Names the module spells
through `tf` that exist only in TF2 (`tf.random.set_seed`) are kept as `tf.compat.v2.<name>`.
"""
from __future__ import annotations

from typing import Dict, List, Optional, Sequence, Tuple

import libcst as cst

from tfmigrate.findings import Replace
from tfmigrate.facts.names import dotted
from tfmigrate.facts.program import LEGACY_KERAS_LINE, ProgramMode


# With --native a helper that a rewritten script imports stays eager TF2 (workspace.plan: rewritten scripts are left out of the graph importers),
# so a graph module on the route may get TF2 datasets from it, which have no `output_types`:
# `tf.data.get_output_types(ds)` (tf.compat.v1) reads both kinds (measured: stanford-07).
DATASET_ATTRIBUTES = {"output_types": "get_output_types", "output_shapes": "get_output_shapes",
                      "output_classes": "get_output_classes"}


def compat_route_edits(ctx, v2_only: Sequence[Tuple[cst.CSTNode, str]] = (), dataset_attributes=()):
    """(edits, description) for the module of `ctx`, or None when there is nothing to do or no
    top-level TensorFlow import to anchor the route on. `v2_only`: (node, path) of references
    through a plain `tensorflow` alias that `tf.compat.v1` does not have. `dataset_attributes`:
    `x.output_types` / `output_shapes` / `output_classes` nodes (with --native only)."""
    program = ctx.fact(ProgramMode)
    imports = program.tf_imports()
    if not imports:
        return None
    plain = [(stmt, alias) for stmt, alias, local in imports
             if local is not None and (dotted(alias.name) or "") == "tensorflow"]
    v1 = [(stmt, local) for stmt, alias, local in imports if local is not None and (dotted(alias.name) or "") != "tensorflow"]
    done: List[str] = []
    swapped: Dict[int, cst.SimpleStatementLine] = {}
    switch: Optional[Tuple[cst.SimpleStatementLine, str]] = None  # where disable_v2_behavior() goes
    if not program.v2_disabled:
        if plain:
            by_stmt: Dict[int, list] = {}
            for stmt, alias in plain:
                by_stmt.setdefault(id(stmt), [stmt, []])[1].append(alias)
            for stmt, aliases in by_stmt.values():
                swapped[id(stmt)] = _swap_aliases(stmt, aliases)
            local = _local(plain[0][1])
            switch = (plain[0][0], local)
            done.append(f"import `tensorflow.compat.v1 as {local}` and call `{local}.disable_v2_behavior()` "
                        "(TensorFlow's compat route: the program runs as TF1 did, with TF1's numbers)")
        elif v1:
            switch = v1[0]
            done.append(f"call `{switch[1]}.disable_v2_behavior()` after the import (TensorFlow's compat route)")
        else:
            return None
    if switch is not None and program.switch_left_to_programs:
        switch = None
        if program.graph_by_import:
            # With --native, a script importing this helper may be rewritten as eager TF2; the
            # importers that keep the route turn v2 behaviour off themselves.
            why = " (no `disable_v2_behavior()` here: with `--native` a script that imports this module may run eagerly)"
        else:
            # A library of graph programs: they turn v2 behaviour off where they start, and an eager
            # test may call its model and pure functions.
            why = (" (no `disable_v2_behavior()` here: with `--native` the programs that run this library's graph "
                   "code turn v2 behaviour off themselves, and an eager test may call its other functions)")
        done[-1] = done[-1].split(" and call")[0] + why
    legacy = program.needs_legacy_keras and not program.legacy_keras_set
    if legacy:
        done.append("set `TF_USE_LEGACY_KERAS=1` before TensorFlow loads: `tf.layers` and `tf.nn.rnn_cell` then "
                    "run from TensorFlow's legacy Keras, which needs the tf-keras package (`pip install tf-keras`)")
    if not done:
        return None
    before: Dict[int, list] = {}
    after: Dict[int, list] = {}
    if legacy:
        first = imports[0][0]
        before[id(first)] = list(cst.parse_module(legacy_keras_switch(ctx.module, first)).body)
    if switch is not None:
        after[id(switch[0])] = [cst.parse_statement(f"{switch[1]}.disable_v2_behavior()\n")]
    edits = []
    for stmt in dict.fromkeys(stmt for stmt, _, _ in imports):
        key = id(stmt)
        if key not in swapped and key not in before and key not in after:
            continue
        new = swapped.get(key, stmt)
        head = before.get(key, [])
        if head:  # comments and blank lines above the import stay above the whole block
            head[0] = head[0].with_changes(leading_lines=new.leading_lines)
            new = new.with_changes(leading_lines=[])
        edits.append(Replace(stmt, cst.FlattenSentinel([*head, new, *after.get(key, [])])))
    if plain and not program.v2_disabled:
        edits.extend(Replace(node, _v2_spelling(node, path)) for node, path in v2_only)
        if v2_only:
            done.append(f"keep {len(v2_only)} TF2-only name{'s' * (len(v2_only) != 1)} as `tf.compat.v2.*`")
    if dataset_attributes and switch is not None:
        local = switch[1]
        for node in dataset_attributes:
            function = DATASET_ATTRIBUTES[node.attr.value]
            edits.append(Replace(node, cst.Call(func=cst.parse_expression(f"{local}.data.{function}"),
                                                args=[cst.Arg(node.value)])))
        done.append(f"read datasets' `output_types`/`output_shapes` with `{local}.data.get_output_*(...)`, which "
                    "also reads a TF2 dataset (a helper that `--native` keeps eager may make it)")
    description = "; ".join(d[0].upper() + d[1:] if i == 0 else d for i, d in enumerate(done))
    return tuple(edits), description


def _local(alias: cst.ImportAlias) -> str:
    return alias.asname.name.value if alias.asname is not None else "tensorflow"


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


def legacy_keras_switch(module: cst.Module, anchor) -> str:
    """The lines that switch TensorFlow's legacy Keras on, to go just before `anchor` (the first
    TensorFlow import: TensorFlow reads the variable once): `import os` unless the module has it."""
    return ("" if os_imported_before(module, anchor) else "import os\n") + LEGACY_KERAS_LINE + "\n"


def os_imported_before(module: cst.Module, anchor) -> bool:
    """A plain `import os` among the module's statements before `anchor`."""
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
