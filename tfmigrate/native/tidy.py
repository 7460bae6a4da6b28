"""What the native rewrite leaves untidy, tidied once it is written.

TensorFlow imports left unused: `from tensorflow.python.framework import ops` is there for `ops.reset_default_graph()`, which an
eager program does not need: the rewrite drops the call, and the import would stay behind, unused
and private. An import goes only when the original module used its name and the rewrite uses it
nowhere; only TensorFlow's submodules (never `import tensorflow as tf` itself), whose import does nothing the program sees (TensorFlow is
imported anyway). A user's import, or one with a comment above it, is never touched.

Names numbered for a name that is gone: the rewrite names what it adds with `fresh_name`, which
avoids every name of the original module, also those the rewrite removes (`optimizer =
tf.train.AdamOptimizer(lr).minimize(loss)` gave `optimizer_2` for the Keras optimizer). A name it
added as `base_2`, the only one of that base, becomes `base` when `base` is nowhere in the result.
"""
from __future__ import annotations

import builtins
import keyword
import re
import tokenize
from typing import Dict, List

import libcst as cst

from tfmigrate.facts.names import dotted
from tfmigrate.facts.tokens import code_tokens
from tfmigrate.fixers.imports import count_name
from tfmigrate.native.syntax import found_in

_NUMBERED = re.compile(r"(\w+?)_(\d+)$")


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


def unnumbered(original: str, rewritten: str) -> str:
    """`rewritten` with each added `base_N` named `base`, where `base` is free (module docstring)."""
    before, after = code_tokens(original), code_tokens(rewritten)
    if before is None or after is None:
        return rewritten
    old = {s for kind, s in before if kind == tokenize.NAME}
    new = {s for kind, s in after if kind == tokenize.NAME}
    by_base: Dict[str, List[str]] = {}
    for name in new - old:
        match = _NUMBERED.match(name)
        if match:
            by_base.setdefault(match.group(1), []).append(name)
    renames = {names[0]: base for base, names in by_base.items()
               if len(names) == 1 and base not in new and not keyword.iskeyword(base) and not hasattr(builtins, base)}
    if not renames:
        return rewritten
    module = cst.parse_module(rewritten)
    for arg in found_in(module, "visit_Arg"):  # a parameter passed by keyword: its name is the callee's too
        if arg.keyword is not None:
            renames.pop(arg.keyword.value, None)
    return module.visit(_Renamed(renames)).code if renames else rewritten


class _Renamed(cst.CSTTransformer):
    """Names renamed (the rewrite's own names: no user code spells them, as attributes or
    otherwise, and none is passed by keyword)."""

    def __init__(self, names: Dict[str, str]):
        self.names = names

    def leave_Name(self, original: cst.Name, updated: cst.Name) -> cst.Name:
        return updated.with_changes(value=self.names.get(updated.value, updated.value))
