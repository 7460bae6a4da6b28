"""Rewrite cells' "source" values inside a notebook's own JSON text, leaving every other byte
alone. Re-serializing is not enough: json.dumps reproduces only files nbformat wrote (indent 1,
sorted keys, raw UTF-8, final newline); other writers' indents, key order, \\u escapes, number
spellings or CRLF would all be rewritten.
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Callable, Dict, List, Tuple

_DECODER = json.JSONDecoder()
_SPACE = re.compile(r"[ \t\n\r]*")


@dataclass
class Span:
    """Where one value sits in the text; for a list, where each element sits too."""

    start: int
    end: int
    items: List[Tuple[int, int]] = field(default_factory=list)


def _ws(text: str, i: int) -> int:
    return _SPACE.match(text, i).end()


def _skip(text: str, i: int) -> int:
    return _DECODER.raw_decode(text, i)[1]


def _expect(text: str, i: int, char: str) -> None:
    if text[i : i + 1] != char:
        raise ValueError(f"expected {char!r} at offset {i}")


def _object(text: str, i: int, visit: Callable[[str, int], int]) -> int:
    """Walk the object at text[i]; visit(key, value_start) returns the value's end."""
    _expect(text, i, "{")
    i = _ws(text, i + 1)
    if text[i : i + 1] == "}":
        return i + 1
    while True:
        key, i = _DECODER.raw_decode(text, i)
        i = _ws(text, i)
        _expect(text, i, ":")
        i = _ws(text, visit(key, _ws(text, i + 1)))
        if text[i : i + 1] == "}":
            return i + 1
        _expect(text, i, ",")
        i = _ws(text, i + 1)


def _array(text: str, i: int, visit: Callable[[int, int], int]) -> int:
    _expect(text, i, "[")
    i = _ws(text, i + 1)
    if text[i : i + 1] == "]":
        return i + 1
    index = 0
    while True:
        i = _ws(text, visit(index, i))
        index += 1
        if text[i : i + 1] == "]":
            return i + 1
        _expect(text, i, ",")
        i = _ws(text, i + 1)


def source_spans(text: str) -> Dict[int, Span]:
    """Span of each cell's "source" value, by cell index (text must be valid JSON)."""
    spans: Dict[int, Span] = {}

    def in_source(start: int) -> Span:
        span = Span(start, start)
        if text[start] == "[":

            def item(_: int, i: int) -> int:
                end = _skip(text, i)
                span.items.append((i, end))
                return end

            span.end = _array(text, start, item)
        else:
            span.end = _skip(text, start)
        return span

    def in_cell(index: int, i: int) -> int:
        if text[i] != "{":
            return _skip(text, i)

        def member(key: str, j: int) -> int:
            if key != "source":
                return _skip(text, j)
            spans[index] = in_source(j)
            return spans[index].end

        return _object(text, i, member)

    def top(key: str, i: int) -> int:
        if key == "cells" and text[i] == "[":
            return _array(text, i, in_cell)
        return _skip(text, i)

    _object(text, _ws(text, 0), top)
    return spans


def split_lines(source: str) -> List[str]:
    """As nbformat stores a multi-line source: one string per line, line ends kept."""
    return source.splitlines(keepends=True)


def _layout(text: str, span: Span) -> Tuple[str, str, str]:
    """(after '[', between items, before ']') as this list or, if empty, the file lays lists out."""
    items = span.items
    if items:
        lead = text[span.start + 1 : items[0][0]]
        sep = text[items[0][1] : items[1][0]] if len(items) > 1 else "," + lead
        return lead, sep, text[items[-1][1] : span.end - 1]
    first = re.match(r"\s*\{(\r?\n)([ \t]*)", text)
    if not first:  # one-line JSON
        return "", ",", ""
    newline, unit = first.group(1), first.group(2)
    line_start = text.rfind("\n", 0, span.start) + 1
    indent = re.match(r"[ \t]*", text[line_start:]).group(0)
    return newline + indent + unit, "," + newline + indent + unit, newline + indent


def render(text: str, span: Span, old, new: str) -> str:
    """The new value in the old one's form (string or list of lines) and layout; lines that did
    not change keep their original spelling (escapes included)."""
    ascii_only = text.isascii()
    if isinstance(old, str):
        return json.dumps(new, ensure_ascii=ascii_only)
    spelled: Dict[str, str] = {}
    for (start, end), value in zip(span.items, old):
        spelled.setdefault(value, text[start:end])
    lines = split_lines(new)
    if not lines:
        return "[]"
    lead, sep, tail = _layout(text, span)
    return "[" + lead + sep.join(spelled.get(line) or json.dumps(line, ensure_ascii=ascii_only) for line in lines) + tail + "]"


def splice(text: str, cells: list, sources: Dict[int, str]) -> str:
    """`text` with the source of each cell index in `sources` replaced; `cells` is the parsed list."""
    spans = source_spans(text)
    out, last = [], 0
    for index in sorted(sources):
        span = spans[index]
        out.append(text[last : span.start])
        out.append(render(text, span, cells[index]["source"], sources[index]))
        last = span.end
    out.append(text[last:])
    return "".join(out)
