"""One large literal statement (`DATA = [...]`, a generated table, a vocabulary dict) parsed a
run of its elements at a time: libcst's native parser holds about 700 bytes of working memory per
byte it parses at once, and such a statement cannot be cut between top-level statements
(core.source.parse_in_pieces), so a 0.8 MB literal peaked above half a gigabyte.

The tree is the one a whole parse gives, node for node: libcst gives the whitespace around a
token to the same node whatever lies beyond the next token, so the statement is parsed with one
stand-in element in place of all of them (the brackets, the last comma and the whitespace around
them as in the file), the elements a run at a time inside brackets of their own, and each comma
between two runs between two stand-ins. Anything that does not fit (a parenthesized element,
`**` in a dict, another kind of statement) gives None: the caller parses it whole.
"""
from __future__ import annotations

import ast
from typing import List, Optional, Sequence, Tuple

import libcst as cst

# ast literal -> (its libcst node, brackets, a stand-in element)
_KINDS = {ast.List: (cst.List, "[]", "0"), ast.Set: (cst.Set, "{}", "0"), ast.Dict: (cst.Dict, "{}", "0:0")}


def element_spans(stmt: ast.stmt, offset) -> Optional[Tuple[type, List[Tuple[int, int]]]]:
    """The kind and the (start, end) byte offsets of the elements of the literal `stmt` assigns
    or is (`offset(line, column)`: a byte offset); None for any other statement."""
    value = stmt.value if isinstance(stmt, (ast.Assign, ast.AnnAssign, ast.Expr)) else None
    if type(value) not in _KINDS:
        return None
    if isinstance(value, ast.Dict):
        if any(key is None for key in value.keys):  # `**other`: its `**` is in no span
            return None
        pairs = zip(value.keys, value.values)
    else:
        pairs = ((element, element) for element in value.elts)
    spans = [(offset(first.lineno, first.col_offset), offset(last.end_lineno, last.end_col_offset))
             for first, last in pairs]
    return (type(value), spans) if len(spans) > 1 else None


def parse_literal(text: bytes, kind: type, spans: Sequence[Tuple[int, int]], run_bytes: int) -> Optional[cst.Module]:
    """The module of `text` (one statement, maybe after comments and blank lines), whose literal's
    elements lie at `spans` (byte offsets in `text`), parsed `run_bytes` of elements at a time."""
    node_type, brackets, stand_in = _KINDS[kind]
    try:
        module = cst.parse_module(text[:spans[0][0]] + stand_in.encode() + text[spans[-1][1]:])
        line = module.body[0] if len(module.body) == 1 else None
        if not isinstance(line, cst.SimpleStatementLine) or len(line.body) != 1:
            return None
        small = line.body[0]
        literal = getattr(small, "value", None)
        if type(literal) is not node_type or len(literal.elements) != 1:
            return None
        elements = []
        start = 0
        while start < len(spans):
            end = start
            while end + 1 < len(spans) and spans[end + 1][1] - spans[start][0] <= run_bytes:
                end += 1
            run = _expression(brackets[0] + text[spans[start][0]:spans[end][1]].decode("utf-8") + brackets[1],
                              node_type)
            if run is None or len(run.elements) != end - start + 1:
                return None
            elements.extend(run.elements)
            if end + 1 < len(spans):  # the comma between this run and the next, between two stand-ins
                between = _expression(brackets[0] + stand_in + text[spans[end][1]:spans[end + 1][0]].decode("utf-8")
                                      + stand_in + brackets[1], node_type)
                if between is None or len(between.elements) != 2:
                    return None
                elements[-1] = elements[-1].with_changes(comma=between.elements[0].comma)
            start = end + 1
        elements[-1] = elements[-1].with_changes(comma=literal.elements[0].comma)
    except (cst.ParserSyntaxError, SyntaxError, UnicodeDecodeError, ValueError):
        return None
    whole = small.with_changes(value=literal.with_changes(elements=tuple(elements)))
    return module.with_changes(body=(line.with_changes(body=(whole,)),))


def _expression(source: str, node_type: type):
    node = cst.parse_expression(source)
    return node if type(node) is node_type else None
