"""Jupyter notebooks, checked and fixed cell by cell.

The code cells are joined into one virtual module, so that `import tensorflow as tf` in one cell
resolves `tf.data` in a later one, as the kernel does. IPython magics and shell escapes become
marker comments before parsing and are put back byte for byte after fixing; a comment line tags
where each cell starts, so a fix that shifts lines still lands in its own cell. A finding carries
its cell (`Finding.cell`, counting every cell as Jupyter shows them), its line within that cell,
and where that span sits in the .ipynb file's JSON text (`Finding.file_range`, for annotations on
the file). Only the changed cells' "source" values are rewritten in the notebook's text.
"""
from __future__ import annotations

import bisect
import json
import re
from dataclasses import dataclass, field, replace
from typing import Dict, List, Optional, Sequence, Tuple

from tfmigrate.workspace import nbsplice
from tfmigrate.findings import Finding

# Cell magics whose body is Python: checked with the magic line masked. Any other is skipped.
PYTHON_CELL_MAGICS = frozenset({"time", "timeit", "capture", "prun", "debug"})
# At the start of a logical line: %magic, !shell, ?help, /autocall, ;quote, ,quote, `obj?`,
# and `x = !cmd` / `x = %magic`. None of these can start a line of valid Python.
_MAGIC = re.compile(r"[%!?/;,]|[\w.]+\?\??[ \t]*$|[\w.]+(?:[ \t]*,[ \t]*[\w.]+)*[ \t]*=[ \t]*[%!]")


@dataclass
class NotebookResult:
    fixed: Optional[bytes]
    findings: List[Finding] = field(default_factory=list)
    applied: int = 0
    fixed_rules: list = field(default_factory=list)  # the rule of each fix applied (--show-fixes)


@dataclass
class _Cell:
    index: int  # among all cells, 0-based
    source: str
    text: str = ""  # the source with magics masked
    magics: List[str] = field(default_factory=list)  # original lines, by marker number


class _NotNotebook(ValueError):
    pass


@dataclass
class _Notebook:
    text: str  # the JSON text, BOM removed
    bom: str
    cells: list  # the parsed "cells" list
    code: List[_Cell]
    tag: str  # marker prefix that occurs nowhere in the notebook

    def virtual(self, cells: Sequence[_Cell]) -> bytes:
        parts = []
        for position, cell in enumerate(cells):
            if position:
                parts.append(f"#{self.tag} cell {cell.index}\n")
            parts.append(cell.text)
            if cell.text and not cell.text.endswith("\n"):
                parts.append("\n")
        return "".join(parts).encode("utf-8")


def load_notebook(data: bytes) -> _Notebook:
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as error:
        raise _NotNotebook(f"not UTF-8 ({error.reason} at byte {error.start})")
    bom = "\ufeff" if text.startswith("\ufeff") else ""
    text = text[len(bom):]
    try:
        nb = json.loads(text)
    except ValueError as error:
        raise _NotNotebook(f"not JSON ({error})")
    if not isinstance(nb, dict) or not isinstance(nb.get("cells"), list):
        old = isinstance(nb, dict) and "worksheets" in nb
        raise _NotNotebook("nbformat 3 and older are not supported" if old else 'no "cells" list')
    code = []
    for index, cell in enumerate(nb["cells"]):
        if not isinstance(cell, dict):
            raise _NotNotebook(f"cell {index + 1} is not an object")
        if cell.get("cell_type") != "code":
            continue
        source = cell.get("source", "")
        if isinstance(source, list) and all(isinstance(line, str) for line in source):
            source = "".join(source)
        if not isinstance(source, str):
            raise _NotNotebook(f'cell {index + 1} has a "source" that is not text')
        code.append(_Cell(index, source))
    tag, n = "tfmigrate-nb", 0
    while tag in text:
        n += 1
        tag = f"tfmigrate-nb{n}"
    return _Notebook(text, bom, nb["cells"], code, tag)


def _scan(line: str, depth: int, quote: Optional[str]) -> Tuple[int, Optional[str], bool]:
    """Bracket depth, open triple-quoted string and backslash continuation after `line`, so that
    only lines starting a logical line are taken for magics."""
    i, n = 0, len(line)
    while i < n:
        ch = line[i]
        if quote:
            if ch == "\\":
                i += 2
                continue
            if line.startswith(quote, i):
                i += len(quote)
                quote = None
                continue
        elif ch == "#":
            return depth, None, False
        elif ch in "\"'":
            quote = line[i : i + 3] if line[i : i + 3] in ('"""', "'''") else ch
            i += len(quote)
            continue
        elif ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth = max(depth - 1, 0)
        i += 1
    continued = line.endswith("\\")
    if quote is not None and len(quote) == 1 and not continued:
        quote = None  # an unterminated one-quote string ends with its line
    return depth, quote, continued


def _mask(cell: _Cell, tag: str, statement: bool) -> None:
    """Replace magic lines by `#<tag> magic K` (or `pass  #...`, where a comment would leave a
    block empty), keeping their indentation."""
    out, cell.magics = [], []
    depth, quote, continued = 0, None, False
    for line in re.findall(r"[^\n]*\n|[^\n]+", cell.source):
        body = line.rstrip("\r\n")
        stripped = body.lstrip(" \t")
        if not (depth or quote or continued) and stripped and _MAGIC.match(stripped):
            indent = body[: len(body) - len(stripped)]
            out.append(f"{indent}{'pass  ' if statement else ''}#{tag} magic {len(cell.magics)}{line[len(body):]}")
            cell.magics.append(stripped)
            continue
        out.append(line)
        depth, quote, continued = _scan(body, depth, quote)
    cell.text = "".join(out)


def _restore(text: str, cell: _Cell, tag: str) -> Optional[str]:
    """Put the magics back; None if a fix lost or duplicated one."""
    marker = re.compile(rf"^([ \t]*)(?:pass  )?#{re.escape(tag)} magic (\d+)[ \t]*(?=\r?\n|\Z)", re.M)
    seen: List[int] = []

    def back(match) -> str:
        seen.append(int(match.group(2)))
        return match.group(1) + cell.magics[int(match.group(2))]

    restored = marker.sub(back, text)
    return restored if sorted(seen) == list(range(len(cell.magics))) else None


def python_cells(nb: _Notebook) -> List[_Cell]:
    """Code cells that hold Python: a cell magic other than PYTHON_CELL_MAGICS is skipped."""
    from tfmigrate.core.positions import python_ast

    cells = []
    for cell in nb.code:
        first = cell.source.lstrip("\r\n \t").split("\n", 1)[0]
        if first.startswith("%%") and first[2:].split(" ", 1)[0].strip() not in PYTHON_CELL_MAGICS:
            continue
        _mask(cell, nb.tag, statement=False)
        try:
            python_ast(cell.text)
        except (SyntaxError, ValueError):
            _mask(cell, nb.tag, statement=True)
            try:
                python_ast(cell.text)
            except (SyntaxError, ValueError):
                _mask(cell, nb.tag, statement=False)  # report the error against the plain mask
        cells.append(cell)
    return cells


class _Locator:
    """Where a cell's characters sit in the notebook's JSON text: a position (line, column) in
    a cell becomes the (line, column) of the .ipynb file, escapes and all (`"source"` a list of
    lines, one per JSON line as nbformat writes it, or one string, or compact one-line JSON)."""

    def __init__(self, text: str):
        self.text = text
        self.starts = [0] + [m.end() for m in re.finditer(r"\n", text)]
        try:
            self.spans = nbsplice.source_spans(text)
        except ValueError:
            self.spans = {}
        self.offsets: Dict[int, Optional[Tuple[str, List[int]]]] = {}

    def _cell(self, index: int) -> Optional[Tuple[str, List[int]]]:
        """(the cell's source, the JSON text offset of each of its characters and one past)."""
        if index not in self.offsets:
            self.offsets[index] = None
            span = self.spans.get(index)
            if span is not None:
                literals = span.items if self.text[span.start] == "[" else [(span.start, span.end)]
                source, offsets = [], []
                for start, end in literals:
                    value, raw = self._decode(start, end)
                    if value is None:
                        return None
                    source.append(value)
                    offsets.extend(raw)
                end = literals[-1][1] - 1 if literals else span.start + 1
                self.offsets[index] = ("".join(source), offsets + [end])
        return self.offsets[index]

    def _decode(self, start: int, end: int) -> Tuple[Optional[str], List[int]]:
        """A JSON string literal text[start:end] and the offset where each character's spelling
        starts (a \\u escape pair is one character, as json reads it)."""
        text, raw, i = self.text, [], start + 1
        while i < end - 1:
            raw.append(i)
            if text[i] != "\\":
                i += 1
            elif text[i + 1] != "u":
                i += 2
            elif (0xD800 <= int(text[i + 2 : i + 6], 16) < 0xDC00 and text[i + 6 : i + 8] == "\\u"
                  and 0xDC00 <= int(text[i + 8 : i + 12], 16) < 0xE000):
                i += 12
            else:
                i += 6
        try:
            value = json.loads(text[start:end])
        except ValueError:
            return None, []
        return (value, raw) if isinstance(value, str) and len(value) == len(raw) else (None, [])

    def position(self, index: int, line: int, column: int) -> Optional[Tuple[int, int]]:
        """The file's (line, column), both from 1, of cell `index`'s (line, column), from 1."""
        cell = self._cell(index)
        if cell is None:
            return None
        source, offsets = cell
        lines = re.findall(r"[^\n]*\n|[^\n]+", source) or [""]
        line = min(max(line, 1), len(lines))
        at = sum(len(text) for text in lines[: line - 1]) + min(max(column, 1) - 1, len(lines[line - 1]))
        offset = offsets[min(at, len(offsets) - 1)]
        row = bisect.bisect_right(self.starts, offset)
        return row, offset - self.starts[row - 1] + 1

    def range(self, index: int, finding: Finding) -> Optional[Tuple[int, int, int, int]]:
        start = self.position(index, finding.line, finding.column)
        end = self.position(index, finding.end_line, finding.end_column)
        if start is None or end is None:
            return None
        return start + max(start, end)


def _in_cell(finding: Finding, index: int, line: int, end_line: int) -> Finding:
    """`finding` (on cell `index`'s text, or on the virtual module) given in cell `index`."""
    message = finding.message.replace("Cannot parse this file", "Cannot parse this cell")
    return replace(finding, line=line, end_line=end_line, message=message, cell=index + 1)


def _located(findings: List[Finding], text: str) -> List[Finding]:
    """Each cell's finding with where it sits in `text`, the notebook's JSON as written, sorted."""
    if any(f.cell is not None for f in findings):  # a notebook without findings costs no second reading
        where = _Locator(text)
        findings = [f if f.cell is None else replace(f, file_range=where.range(f.cell - 1, f)) for f in findings]
    return sorted(findings, key=lambda f: (f.cell or 0, f.line, f.column, f.rule))


def _map(findings: Sequence[Finding], virtual: bytes, tag: str, first: int) -> List[Finding]:
    """Findings on the virtual module, moved to their cells (cell starts read from the markers)."""
    starts = [(1, first)]
    marker = re.compile(rf"[ \t]*#{re.escape(tag)} cell (\d+)[ \t]*\r?$")
    for number, line in enumerate(virtual.decode("utf-8", "replace").split("\n"), 1):
        match = marker.match(line)
        if match:
            starts.append((number + 1, int(match.group(1))))
    mapped = []
    for f in findings:
        start, index = next((s, i) for s, i in reversed(starts) if s <= f.line or s == 1)
        end = max(f.end_line - start + 1, f.line - start + 1)
        mapped.append(_in_cell(f, index, max(f.line - start + 1, 1), end))
    return mapped


def _split(virtual: bytes, cells: Sequence[_Cell], tag: str) -> Optional[Dict[int, str]]:
    """The fixed virtual module cut back into cells; None if a cell marker was lost or moved."""
    marker = re.compile(rf"[ \t]*#{re.escape(tag)} cell (\d+)[ \t]*\r?\n?$")
    chunks: List[List[str]] = [[]]
    order = [cells[0].index]
    for line in re.findall(r"[^\n]*\n|[^\n]+", virtual.decode("utf-8")):
        match = marker.match(line)
        if match:
            chunks.append([])
            order.append(int(match.group(1)))
        else:
            chunks[-1].append(line)
    if order != [c.index for c in cells]:
        return None
    texts = {}
    for cell, chunk in zip(cells, chunks):
        text = "".join(chunk)
        if cell.text and not cell.text.endswith("\n") and text.endswith("\n"):
            text = text[:-1]  # the newline the join added
        texts[cell.index] = text
    return texts


def _invalid(shown: str, reason: str) -> List[Finding]:
    """TFM001 for a notebook that cannot be read, whatever the selection: it was not checked."""
    from tfmigrate.catalogue import PARSE_ERROR, make_finding

    message = f"Cannot check this notebook: not a valid notebook: {reason}."
    return [make_finding(PARSE_ERROR, shown, message, (1, 0), (1, 0))]


def _prepare(data: bytes, shown: str, codes: Sequence[str]):
    """(notebook, cells that parse, TFM001 findings for cells that do not), or findings alone."""
    from tfmigrate.core import engine
    from tfmigrate.core.positions import python_ast

    if not engine.might_use_tensorflow(data):
        return None, [], []
    try:
        nb = load_notebook(data)
    except _NotNotebook as error:
        return None, [], _invalid(shown, str(error))
    cells = python_cells(nb)
    if not any(engine.might_use_tensorflow(c.text.encode("utf-8")) for c in cells):
        return None, [], []
    good, broken = [], []
    for cell in cells:
        try:
            python_ast(cell.text)
            good.append(cell)
            continue
        except (SyntaxError, ValueError):
            pass
        import libcst as cst  # libcst is the parser the engine uses: it decides

        try:
            cst.parse_module(cell.text)
            good.append(cell)
        except Exception as error:
            finding = engine.parse_error(shown, error, cell.text.encode("utf-8"))  # whatever the selection
            broken.append(_in_cell(finding, cell.index, finding.line, finding.end_line))
    return nb, good, broken


def check_notebook(data: bytes, shown: str, codes: Sequence[str], shims=None, native: bool = False,
                   ignore_noqa: bool = False, unsafe: bool = False) -> List[Finding]:
    """`native` (and with it `unsafe`) is taken and ignored: `fix --native` moves code across a module, so across cells;
    a notebook is never rewritten natively (and TFM216 does not speak for one)."""
    from tfmigrate.core import engine

    nb, cells, findings = _prepare(data, shown, codes)
    if cells:
        virtual = nb.virtual(cells)
        found = engine.check_source(virtual, shown, codes, shims=shims, ignore_noqa=ignore_noqa)
        findings += _map(found, virtual, nb.tag, cells[0].index)
    return _located(findings, nb.text) if nb is not None else findings


def fix_notebook(data: bytes, shown: str, codes: Sequence[str], unsafe: bool = False, shims=None,
                 native: bool = False, ignore_noqa: bool = False) -> NotebookResult:
    from tfmigrate.core import engine

    nb, cells, findings = _prepare(data, shown, codes)
    if not cells:
        return NotebookResult(None, _located(findings, nb.text) if nb is not None else findings)
    virtual = nb.virtual(cells)
    result = engine.fix_source(virtual, shown, codes, unsafe, shims=shims, ignore_noqa=ignore_noqa)
    final = result.fixed if result.fixed is not None else virtual
    findings += _map(result.findings, final, nb.tag, cells[0].index)
    if result.fixed is None:
        return NotebookResult(None, _located(findings, nb.text))
    texts = _split(result.fixed, cells, nb.tag)
    sources = {}
    for cell in cells:
        source = None if texts is None else _restore(texts[cell.index], cell, nb.tag)
        if source is None:
            return _refused(data, shown, codes, "a fix moved a cell boundary or an IPython magic", ignore_noqa)
        if source != cell.source:
            sources[cell.index] = source
    if not sources:
        return NotebookResult(None, _located(findings, nb.text))
    text = nbsplice.splice(nb.text, nb.cells, sources)
    expected = json.loads(nb.text)
    for index, source in sources.items():
        old = expected["cells"][index]["source"]
        expected["cells"][index]["source"] = nbsplice.split_lines(source) if isinstance(old, list) else source
    if json.dumps(json.loads(text), sort_keys=True) != json.dumps(expected, sort_keys=True):  # NaN-proof
        return _refused(data, shown, codes, "the rewritten JSON did not read back as expected", ignore_noqa)
    # The findings left are on the fixed cells: they point into the notebook as written.
    return NotebookResult((nb.bom + text).encode("utf-8"), _located(findings, text), result.applied,
                          list(result.fixed_rules))


def _refused(data: bytes, shown: str, codes: Sequence[str], why: str, ignore_noqa: bool = False) -> NotebookResult:
    from tfmigrate.catalogue import INTERNAL_ERROR, make_finding

    note = make_finding(
        INTERNAL_ERROR, shown,
        f"The fixes for this notebook were not applied: {why}. The findings stay; please report this with the notebook.",
        (1, 0), (1, 0),
    )
    return NotebookResult(None, check_notebook(data, shown, codes, ignore_noqa=ignore_noqa) + [note])
