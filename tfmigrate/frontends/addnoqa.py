"""`tfmigrate check --add-noqa[=REASON]`: silence today's findings where they are, as Ruff's
`--add-noqa` does. Each line with a finding gets `# noqa: CODE[, CODE] [REASON]` at its end, or
its codes merged into the noqa comment already there; every other byte of the file is kept (the
edits are pure insertions: line endings, the BOM, the declared encoding and trailing whitespace
stay as they were).

The comment goes on the line tfmigrate's noqa matching reads (tfmigrate/core/noqa.py): the finding's
first line. A finding whose first line cannot end with a comment (it ends inside a multi-line
string, or with a backslash continuation), a file that does not parse (TFM001), and the findings
no noqa silences (TFM000, TFM002) are left and reported; so is any insertion that the noqa
matcher would not read back, or that would stop the file from compiling.
"""
from __future__ import annotations

import io
import re
import tokenize
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Dict, List, Optional, Sequence, Tuple

from tfmigrate import api
from tfmigrate.findings import Finding

UNSILENCEABLE = api.UNSILENCEABLE
_LINE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+$")
_LINE_BYTES = re.compile(rb"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+$")


@dataclass
class Result:
    data: Optional[bytes]  # the new bytes, or None when nothing changed
    added: int = 0  # lines given a noqa directive (or more codes in theirs)
    left: List[Finding] = field(default_factory=list)  # findings still reported


def _commentable(text: str) -> set:
    """Lines (1-based) whose end is outside any string and not continued by a backslash: the
    lines the tokenizer ends with NEWLINE or NL."""
    lines = set()
    if text.startswith("\ufeff"):  # a BOM is no character of the code
        text = text[1:]
    try:
        for token in tokenize.generate_tokens(io.StringIO(text).readline):
            if token.type in (tokenize.NEWLINE, tokenize.NL):
                lines.add(token.start[0])
    except (tokenize.TokenError, SyntaxError, IndentationError):
        pass  # the lines read so far still count
    return lines


def _comment(codes: Sequence[str], reason: Optional[str]) -> str:
    text = f"# noqa: {', '.join(codes)}"
    return f"{text} {reason.strip()}" if reason and reason.strip() else text


def plan(text: str, findings: Sequence[Finding], reason: Optional[str] = None,
         tokenized: Optional[str] = None) -> Tuple[Dict[int, Tuple[int, str]], List[Finding]]:
    """The insertions that silence `findings` in `text`: {line: (column, text to insert)} (line
    1-based, column in characters of that line), and the findings left. `tokenized`: the text to
    read the token structure from, when it differs from `text` only inside lines (a notebook cell
    with its magics masked)."""
    lines = _LINE.findall(text)
    commentable = _commentable(tokenized if tokenized is not None else text)
    existing = api.noqa_directives(text)
    wanted: Dict[int, List[str]] = defaultdict(list)
    left: List[Finding] = []
    for f in findings:
        if f.rule in UNSILENCEABLE or not 1 <= f.line <= len(lines) or f.line not in commentable:
            left.append(f)
        elif f.rule not in wanted[f.line]:
            wanted[f.line].append(f.rule)
    insertions: Dict[int, Tuple[int, str]] = {}
    for number, codes in wanted.items():
        codes = sorted(codes)
        line = lines[number - 1]
        directive = existing.get(number)
        if directive is not None and directive.codes is not None:
            at = api.noqa_codes_end(line, directive)
            new = [c for c in codes if c not in directive.codes]
            if at is None or not new:
                continue
            insertions[number] = (at, ", " + ", ".join(new))
            continue
        body = line.rstrip("\r\n")
        end = len(body.rstrip(" \t\f"))
        insertions[number] = (end, ("  " if end else "") + _comment(codes, reason))
    # Read back: every line must now carry a directive the noqa matcher finds, with its codes.
    new_text = apply_text(lines, insertions)
    back = api.noqa_directives(new_text)
    for number in list(insertions):
        directive = back.get(number)
        if directive is None or (directive.codes is not None and not set(wanted[number]) <= set(directive.codes)):
            del insertions[number]
    done = {n for n in wanted if n in insertions or _already(existing.get(n), wanted[n])}
    left += [f for f in findings if f.rule not in UNSILENCEABLE and f.line in wanted and f.line not in done]
    left.sort(key=lambda f: (f.line, f.column, f.rule))
    return insertions, left


def _already(directive, codes) -> bool:
    return directive is not None and (directive.codes is None or set(codes) <= set(directive.codes))


def apply_text(lines: List[str], insertions: Dict[int, Tuple[int, str]]) -> str:
    out = []
    for number, line in enumerate(lines, 1):
        if number in insertions:
            column, text = insertions[number]
            line = line[:column] + text + line[column:]
        out.append(line)
    return "".join(out)


def _encoding(data: bytes) -> str:
    encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
    return "utf-8" if encoding == "utf-8-sig" else encoding  # the BOM stays a character of line 1


def add_to_source(data: bytes, findings: Sequence[Finding], reason: Optional[str] = None) -> Result:
    """Python source bytes with the noqa comments inserted (bytes outside them kept)."""
    findings = list(findings)
    try:
        encoding = _encoding(data)
        text = data.decode(encoding)
    except (SyntaxError, LookupError, UnicodeDecodeError):
        return Result(None, 0, findings)
    insertions, left = plan(text, findings, reason)
    if not insertions:
        return Result(None, 0, left)
    lines = _LINE_BYTES.findall(data)
    text_lines = _LINE.findall(text)
    if len(lines) != len(text_lines):  # a line break that is not one in bytes: refuse, never guess
        return Result(None, 0, findings)
    try:
        for number, (column, insert) in insertions.items():
            offset = len(text_lines[number - 1][:column].encode(encoding))
            line = lines[number - 1]
            lines[number - 1] = line[:offset] + insert.encode(encoding) + line[offset:]
    except UnicodeEncodeError:
        raise OSError(0, f"the reason cannot be written in the file's encoding ({encoding})")
    new = b"".join(lines)
    if _compiles(data) and not _compiles(new):
        return Result(None, 0, findings)
    return Result(new, len(insertions), left)


def _compiles(data: bytes) -> bool:
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            compile(data, "<add-noqa>", "exec", 0x400, dont_inherit=True)  # ast.PyCF_ONLY_AST
            return True
        except (SyntaxError, ValueError):
            return False


def add_to_notebook(data: bytes, findings: Sequence[Finding], reason: Optional[str] = None) -> Result:
    """A notebook with the noqa comments in its code cells (a finding's `cell` says its cell,
    its line is the line in that cell). Only the `source` of those cells changes."""
    from tfmigrate.workspace import nbsplice
    from tfmigrate.workspace import notebooks

    findings = list(findings)
    try:
        nb = notebooks.load_notebook(data)
    except ValueError:
        return Result(None, 0, findings)
    cells = {cell.index: cell for cell in notebooks.python_cells(nb)}
    by_cell: Dict[int, List[Finding]] = defaultdict(list)
    left: List[Finding] = []
    for f in findings:
        if f.cell is not None and f.cell - 1 in cells:
            by_cell[f.cell - 1].append(f)
        else:
            left.append(f)
    sources: Dict[int, str] = {}
    added = 0
    for index, items in by_cell.items():
        cell = cells[index]
        if len(_LINE.findall(cell.source)) != len(_LINE.findall(cell.text)):
            left.extend(items)
            continue
        insertions, cell_left = plan(cell.source, items, reason, tokenized=cell.text)
        left.extend(cell_left)
        if insertions:
            sources[index] = apply_text(_LINE.findall(cell.source), insertions)
            added += len(insertions)
    if not sources:
        return Result(None, 0, left)
    text = nbsplice.splice(nb.text, nb.cells, sources)
    return Result((nb.bom + text).encode("utf-8"), added, left)


def add_to_file(path: str, findings: Sequence[Finding], reason: Optional[str] = None) -> Result:
    """Read `path`, insert the comments, write it atomically when something changed."""
    from tfmigrate.atomic import write_atomic

    with open(path, "rb") as handle:
        data = handle.read()
    adder = add_to_notebook if path.endswith(".ipynb") else add_to_source
    result = adder(data, findings, reason)
    if result.data is not None and result.data != data:
        write_atomic(path, result.data)
    return result
