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
from typing import Dict, List, Optional

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


def feeds_passed_on(rewritten: str) -> str:
    """`rewritten` with each feed dict that only passes values to the next statement written into
    it: `feed = {"x": batch_x, "y": batch_y}` then `train_step(feed["x"], feed["y"])` (or
    `self.train_step(**feed)`) becomes `train_step(batch_x, batch_y)`, as a TF2 engineer writes it.
    Only a dict of string keys whose values read no call (reading them where the dict was read is
    the same), assigned on the line before its one reading statement, its name read nowhere else."""
    try:
        module = cst.parse_module(rewritten)
    except Exception:  # noqa: BLE001 - the caller checks that the rewrite parses
        return rewritten
    counts: Dict[str, int] = {}
    for name in found_in(module, "visit_Name"):
        counts[name.value] = counts.get(name.value, 0) + 1
    finder = _FeedPairs()
    module.visit(finder)
    pairs = [(assign, reader) for name, found in finder.pairs.items()
             if counts.get(name) == sum(1 + _reads(reader, name) for _, reader in found) for assign, reader in found]
    if not pairs:
        return rewritten
    return module.visit(_FeedsWrittenIn({id(a): r for a, r in pairs})).code


def _feed_dict(statement) -> Optional[tuple]:
    """(name, {key: value}) of `name = {"k": value, ...}` with pure values, else None."""
    if not (isinstance(statement, cst.SimpleStatementLine) and len(statement.body) == 1
            and isinstance(statement.body[0], cst.Assign) and len(statement.body[0].targets) == 1
            and isinstance(statement.body[0].targets[0].target, cst.Name) and isinstance(statement.body[0].value, cst.Dict)):
        return None
    values: Dict[str, cst.BaseExpression] = {}
    for element in statement.body[0].value.elements:
        if not (isinstance(element, cst.DictElement) and isinstance(element.key, cst.SimpleString)
                and isinstance(element.key.evaluated_value, str) and _pure(element.value)):
            return None
        values[element.key.evaluated_value] = element.value
    return (statement.body[0].targets[0].target.value, values) if values else None


def _pure(node) -> bool:
    """A value that reads no call: names, attributes, constants, subscripts and slices of them."""
    return not found_in(node, "visit_Call") and not found_in(node, "visit_Lambda") and not found_in(node, "visit_Await")


def _reads(statement, name: str) -> int:
    return sum(1 for n in found_in(statement, "visit_Name") if n.value == name)


class _FeedPairs(cst.CSTVisitor):
    """Each feed dict and the statement right after it that reads it only as `feed["k"]` (keys
    it has) or as one `**feed` of a call, by the dict's name."""

    def __init__(self):
        self.pairs: Dict[str, list] = {}

    def visit_Module(self, node) -> None:
        self._sequence(node.body)

    def visit_IndentedBlock(self, node) -> None:
        self._sequence(node.body)

    def _sequence(self, body) -> None:
        for statement, reader in zip(body, body[1:]):
            found = _feed_dict(statement)
            if found is None or not isinstance(reader, cst.SimpleStatementLine):
                continue
            name, values = found
            if _reads(reader, name) and _reads(reader, name) == _keyed(reader, name, values) + _spread(reader, name, values):
                self.pairs.setdefault(name, []).append((statement, reader))


def _keyed(reader, name: str, values: Dict[str, cst.BaseExpression]) -> int:
    """How many reads of `name` in `reader` are `name["k"]` of a key `values` has."""
    return sum(1 for s in found_in(reader, "visit_Subscript") if _key_read(s, name) in values)


def _key_read(subscript, name: str):
    if isinstance(subscript.value, cst.Name) and subscript.value.value == name and len(subscript.slice) == 1 \
            and isinstance(subscript.slice[0].slice, cst.Index) and isinstance(subscript.slice[0].slice.value, cst.SimpleString):
        return subscript.slice[0].slice.value.evaluated_value
    return None


def _spread(reader, name: str, values: Dict[str, cst.BaseExpression]) -> int:
    """1 for a call of `reader` given `**name` as its only `**`, whose other keywords the keys
    (identifiers) do not repeat; else 0."""
    for call in found_in(reader, "visit_Call"):
        spreads = [a for a in call.args if a.star == "**"]
        if len(spreads) == 1 and isinstance(spreads[0].value, cst.Name) and spreads[0].value.value == name:
            given = {a.keyword.value for a in call.args if a.keyword is not None}
            if all(k.isidentifier() and not keyword.iskeyword(k) and k not in given for k in values):
                return 1
    return 0


class _FeedsWrittenIn(cst.CSTTransformer):
    """Each paired dict's statement gone (its comments and blank lines kept above the reader), its
    reads written as the values."""

    def __init__(self, readers: Dict[int, cst.SimpleStatementLine]):
        self.readers = readers

    def _sequence(self, originals, body):
        out, carried, values, name = [], None, None, None
        for original, statement in zip(originals, body):
            if id(original) in self.readers:
                name, values = _feed_dict(statement)
                carried = statement.leading_lines
                continue
            if values is not None:
                statement = statement.visit(_WithValues(name, values)).with_changes(
                    leading_lines=[*carried, *statement.leading_lines])
                values = None
            out.append(statement)
        return out

    def leave_Module(self, original, updated):
        return updated.with_changes(body=self._sequence(original.body, updated.body))

    def leave_IndentedBlock(self, original, updated):
        return updated.with_changes(body=self._sequence(original.body, updated.body))


class _WithValues(cst.CSTTransformer):
    def __init__(self, name: str, values: Dict[str, cst.BaseExpression]):
        self.name, self.values = name, values

    def leave_Subscript(self, original, updated):
        key = _key_read(updated, self.name)
        return self.values[key] if key in self.values else updated

    def leave_Call(self, original, updated):
        args = []
        for arg in updated.args:
            if arg.star == "**" and isinstance(arg.value, cst.Name) and arg.value.value == self.name:
                args += [cst.Arg(value, keyword=cst.Name(key), equal=cst.AssignEqual(
                    cst.SimpleWhitespace(""), cst.SimpleWhitespace("")), comma=cst.Comma(
                        whitespace_after=cst.SimpleWhitespace(" "))) for key, value in self.values.items()]
            else:
                args.append(arg)
        if len(args) != len(updated.args) or any(a is not b for a, b in zip(args, updated.args)):
            args[-1] = args[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)
            return updated.with_changes(args=args)
        return updated
