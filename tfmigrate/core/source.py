"""The TFM001 gate: what the engine decides about a file's bytes before any rule runs. Bytes
Python refuses that libcst would take (a UTF-16 file, a NUL byte), code nested deeper than CPython
or libcst's native parser takes (it would overflow its stack and kill the process), and code libcst
accepts but CPython refuses are each reported with the clearest message on offer, never checked,
fixed or written as if valid.
"""
from __future__ import annotations

import codecs
import re
from typing import Dict, Optional

import libcst as cst

from tfmigrate.catalogue import PARSE_ERROR, make_finding
from tfmigrate.core.literals import element_spans, parse_literal
from tfmigrate.core.positions import python_ast
from tfmigrate.findings import Finding


def might_use_tensorflow(data: bytes, shims=None) -> bool:
    """Cheap scan: a file with no 'tensorflow' or 'keras' anywhere (nor a configured re-export
    of them) cannot have a finding."""
    return b"tensorflow" in data or b"keras" in data or (shims is not None and shims.mentioned_in(data))


_BOMS = ((codecs.BOM_UTF32_LE, "UTF-32"), (codecs.BOM_UTF32_BE, "UTF-32"),
         (codecs.BOM_UTF16_LE, "UTF-16"), (codecs.BOM_UTF16_BE, "UTF-16"))


def unreadable_source(data: bytes, path: str, shims=None) -> Optional[Finding]:
    """TFM001 for bytes Python refuses before parsing, which libcst reads (or a byte scan skips)
    as if fine: a UTF-16/32 file (its `tensorflow` is not the bytes the scan looks for) and a NUL
    byte (libcst takes one in a comment). Such a file is never checked, fixed or written."""
    for bom, name in _BOMS:
        if data.startswith(bom):
            if not might_use_tensorflow(data.decode(name.replace("-", "").lower(), "replace").encode("utf-8"), shims):
                return None
            return make_finding(PARSE_ERROR, path, (
                f"Cannot parse this file: it is encoded as {name} (it starts with a {name} byte order mark), "
                "which Python does not read as source code. Save it as UTF-8 to have it checked."
            ), (1, 0), (1, 0))
    nul = data.find(b"\x00")
    if nul < 0 or not might_use_tensorflow(data, shims):
        return None
    line = data.count(b"\n", 0, nul) + 1
    column = nul - (data.rfind(b"\n", 0, nul) + 1)
    return make_finding(PARSE_ERROR, path, (
        f"Cannot parse this file: it contains a NUL byte (line {line}), which Python refuses in source code. "
        "Remove it (or, for a binary file named .py, rename it) to have it checked."
    ), (line, column), (line, column + 1))


_PY2_EXCEPT = re.compile(r"^[ \t]*except[ \t]+[\w.]+[ \t]*,[ \t]*\w+[ \t]*:", re.MULTILINE)


class TooDeep(SyntaxError):
    """Code nested deeper than CPython (or libcst's parser) takes: reported as TFM001 before
    libcst parses it (libcst's native parser would overflow its stack and kill the process)."""


# What CPython says when code is nested too deeply for it (3.11-3.13 wordings).
_TOO_DEEP = ("too many nested parentheses", "too many levels of indentation",
             "too many statically nested blocks", "too complex", "stack overflow")
BOOL_CHAIN_LIMIT = 100_000  # `and`/`or` operands in one expression: libcst nests them, CPython does not
_BOOL_WORD = re.compile(rb"\b(?:and|or)\b")


def cpython_verdict(data: bytes, path: str) -> Optional[SyntaxError]:
    """CPython's compiler on the file, before libcst parses it. Code nested too deeply for
    CPython (`RecursionError` at the recursion limit `python file.py` compiles under, a parser
    stack overflow, too many nested parentheses) raises TooDeep. Another SyntaxError is returned
    for `cpython_refuses` to judge once libcst has parsed the file: Python 2's `except X, e:`,
    and what the compiler (not the parser) rejects, in every Python 3: `return` or `yield`
    outside a function, `break` outside a loop, `nonlocal` at module level. Syntax newer than
    this Python (PEP 695 on 3.11) is libcst's to judge; notebooks may `await` at the top level."""
    import ast
    import warnings

    from tfmigrate.core.deep import cpython_limit

    flags = ast.PyCF_ALLOW_TOP_LEVEL_AWAIT if path.endswith(".ipynb") else 0
    with warnings.catch_warnings():  # invalid escapes and the like are not tfmigrate's to report
        warnings.simplefilter("ignore")
        try:
            with cpython_limit():
                compile(data, path, "exec", flags=flags, dont_inherit=True)
        except (RecursionError, MemoryError) as error:
            detail = str(error) or "the parser's stack overflowed"
            raise TooDeep(f"it is nested too deeply for Python ({type(error).__name__}: {detail})") from None
        except SyntaxError as error:
            if any(words in (error.msg or "") for words in _TOO_DEEP):
                deep = TooDeep(f"it is nested too deeply for Python ({error.msg})")
                deep.lineno, deep.offset = error.lineno, error.offset
                raise deep from None
            return error
    _check_bool_chains(data)
    return None


def _check_bool_chains(data: bytes) -> None:
    """TooDeep for an expression of more than BOOL_CHAIN_LIMIT `and`/`or` operands: CPython
    keeps them in one list, libcst nests them one per operand (its parser's stack would
    overflow). A cheap count first; the exact chains only when the words are that many."""
    if data.count(b"and") + data.count(b"or") <= BOOL_CHAIN_LIMIT:  # at least as many as the words
        return
    if len(_BOOL_WORD.findall(data)) <= BOOL_CHAIN_LIMIT:
        return
    import ast

    tree = python_ast(data)
    chains: Dict[int, int] = {}
    for node in reversed([n for n in ast.walk(tree) if isinstance(n, ast.BoolOp)]):  # inner ones first
        chains[id(node)] = len(node.values) - 1 + max((chains.get(id(v), 0) for v in node.values), default=0)
        if chains[id(node)] > BOOL_CHAIN_LIMIT:
            deep = TooDeep(
                f"an expression of {chains[id(node)] + 1:,} `and`/`or` operands is more than tfmigrate's "
                f"parser takes ({BOOL_CHAIN_LIMIT:,})"
            )
            deep.lineno, deep.offset = node.lineno, node.col_offset + 1
            raise deep


def cpython_refuses(refusal: Optional[SyntaxError], data: bytes, source: str) -> None:
    """Raise CPython's SyntaxError (from `cpython_verdict`) for code libcst accepts but Python
    refuses. Such a file is reported (TFM001), never fixed and written as if valid."""
    if refusal is not None and (_PY2_EXCEPT.search(source) or _parses(data)):
        raise refusal


def _parses(data: bytes) -> bool:
    """Whether CPython's parser (not its compiler) reads the file."""
    try:
        python_ast(data)
        return True
    except SyntaxError:
        return False


_CODING = re.compile(rb"^[ \t\f]*#.*?coding[:=][ \t]*([-\w.]+)")


def _declared_encoding(data: bytes) -> Optional[str]:
    """The encoding a PEP 263 declaration on line 1 or 2 names, or None."""
    for line in data.split(b"\n", 2)[:2]:
        match = _CODING.match(line)
        if match:
            return match.group(1).decode("ascii", "replace")
    return None


def _parses_as_latin1(data: bytes) -> bool:
    """Whether the source parses once read as Latin-1 (every byte is a character there)."""
    try:
        python_ast(data.decode("latin-1"))
    except Exception:  # noqa: BLE001 - any refusal: more is wrong than the encoding
        return False
    return True


def parse_error(path: str, error: Exception, data: bytes) -> Finding:
    """TFM001 with the clearest message on offer: CPython's own, else libcst's."""
    line, col, text = 1, 0, str(error).splitlines()[0] if str(error) else type(error).__name__
    if isinstance(error, TooDeep):
        line, col = error.lineno or 1, max((error.offset or 1) - 1, 0)
        return make_finding(PARSE_ERROR, path, (
            f"Cannot parse this file: {error.msg}, so it was not checked. Split the deepest expression "
            "(or block) into several statements to have it checked."
        ), (line, col), (line, col))
    if isinstance(error, SyntaxError) and error.lineno:
        line, col, text = error.lineno, max((error.offset or 1) - 1, 0), error.msg
    elif isinstance(error, UnicodeDecodeError):
        line = data.count(b"\n", 0, error.start) + 1
        col = error.start - (data.rfind(b"\n", 0, error.start) + 1)
        declared = _declared_encoding(data)
        if declared is None:
            byte = data[error.start]
            if _parses_as_latin1(data):  # the encoding is the only problem: say how to declare it
                message = (
                    f"Cannot parse this file: byte 0x{byte:02x} on line {line} is not UTF-8, and the file "
                    "declares no encoding (Python 3 reads undeclared source as UTF-8). If it is Latin-1, "
                    "declare it on the first or second line with `# -*- coding: latin-1 -*-` (or save "
                    "the file as UTF-8) to have it checked."
                )
                return make_finding(PARSE_ERROR, path, message, (line, col), (line, col))
            text = f"not UTF-8 text (byte 0x{byte:02x} on line {line}) and no encoding declared"
        else:
            text = f"not valid text in its declared encoding {declared} ({error.reason} at byte {error.start})"
    elif isinstance(error, cst.ParserSyntaxError):
        line, col, text = error.raw_line, error.raw_column, error.message
        where = re.search(r"error at (\d+):(\d+): ", text)
        if where:
            line, col = int(where.group(1)), max(int(where.group(2)) - 1, 0)  # the token's end; 0 at EOF
            text = text[where.end():]
        text = re.sub(r"^(parser|tokenizer) error: ", "", text)
        try:
            python_ast(data)
        except SyntaxError as py_error:  # CPython says "Missing parentheses in call to 'print'"
            if py_error.lineno:
                line, col, text = py_error.lineno, max((py_error.offset or 1) - 1, 0), py_error.msg
        except Exception:  # null bytes and the like: keep libcst's words
            pass
        else:  # valid Python that libcst cannot read (thousands of implicitly joined strings)
            return make_finding(PARSE_ERROR, path, (
                f"Cannot check this file: it is valid Python, but tfmigrate's parser (libcst) stops at line "
                f"{line} ({text.strip() or 'no reason given'}). Its parser gives up on very long expressions, "
                "such as thousands of implicitly joined strings; split that expression to have the file checked."
            ), (line, col), (line, col))
    if text.startswith("expected one of"):
        text = "invalid syntax"
    stop = "" if text.endswith((".", "?", "!")) else "."
    todo = ("Save it in the encoding it declares (or declare the one it is in)"
            if isinstance(error, UnicodeDecodeError) and _declared_encoding(data) else
            "Fix the syntax (Python 2 code must be ported to Python 3)")
    message = f"Cannot parse this file: {text}{stop} {todo} to have it checked."
    return make_finding(PARSE_ERROR, path, message, (line, col), (line, col))


def parse(data: bytes) -> cst.Module:
    """libcst's parse, without the validation every node's constructor runs (a fifth of the
    parse). The validation guards trees built by hand; the parser's own are valid by
    construction (libcst's authors say as much in `CSTNode.__post_init__`). A large file is
    parsed in pieces (`parse_in_pieces`): the same tree, at a fraction of the memory."""
    node = cst.CSTNode
    validate = node.__post_init__
    node.__post_init__ = _no_validation
    try:
        module = parse_in_pieces(data) if len(data) >= PIECES_FROM else None
        return module if module is not None else _parse_module(data)
    finally:
        node.__post_init__ = validate


# libcst's native parser holds about 700 bytes of working memory per byte of source while it
# parses (a 0.8 MB file peaks near 0.6 GB, ten times the tree it returns), so a file this large
# is parsed a piece of about PIECE_BYTES at a time.
PIECES_FROM = 192 * 1024
PIECE_BYTES = 48 * 1024


def parse_in_pieces(data: bytes, piece_bytes: int = PIECE_BYTES) -> Optional[cst.Module]:
    """The module libcst's `parse_module(data)` gives, parsed a run of top-level statements at a
    time, or None when the file is not one this can vouch for (the caller then parses it whole).
    Pieces are cut only before a top-level statement (CPython's parser says where each starts
    and ends) whose preceding lines, back to the end of the previous statement, are all empty
    or comments at column 0: in a whole parse libcst gives every such line to the statement's
    `leading_lines`, and a piece's parse gives them to its module header, so they are moved
    there. Only UTF-8 files with no encoding declaration (or one declaring UTF-8), no byte order
    mark and LF line ends, whose pieces agree on the indentation, are cut; anything else (or a
    piece libcst refuses) is parsed whole, so errors read as they always did. A statement over
    `piece_bytes` that is one literal (`DATA = [...]`) is a piece of its own, parsed a run of its
    elements at a time (core.literals)."""
    declared = _declared_encoding(data)
    if b"\r" in data or data.startswith(codecs.BOM_UTF8) or declared is not None and _codec(declared) != "utf-8":
        return None
    try:
        data.decode("utf-8")
        tree = python_ast(data)
    except Exception:  # noqa: BLE001 - the whole parse reports it
        return None
    lines = data.split(b"\n")
    offsets = [0]  # byte offset where each line (1-based: offsets[n - 1]) starts
    for line in lines:
        offsets.append(offsets[-1] + len(line) + 1)
    spans = [(min([s.lineno] + [d.lineno for d in getattr(s, "decorator_list", ())]), s.end_lineno) for s in tree.body]
    # first line -> a statement over piece_bytes that is one literal: its elements' spans (core.literals)
    literals = {first: found for (first, end), stmt in zip(spans, tree.body)
                if offsets[end] - offsets[first - 1] > piece_bytes
                and (found := element_spans(stmt, lambda line, column: offsets[line - 1] + column)) is not None}
    del tree
    cuts = [1]  # first line of each piece
    for (before, end), (first, _) in zip(spans, spans[1:]):
        if end >= first or offsets[end] - offsets[cuts[-1] - 1] < piece_bytes and first not in literals \
                and before not in literals:  # a literal is a piece of its own
            continue
        if all(not line or line.startswith(b"#") for line in lines[end:first - 1]):
            cuts.append(end + 1)
    if len(cuts) == 1 and not literals:
        return None
    cuts.append(len(lines) + 1)
    try:
        pieces = [_parse_piece(data, offsets[a - 1], offsets[b - 1] if b <= len(lines) else len(data),
                               [s for s in spans if a <= s[0] < b], literals, piece_bytes)
                  for a, b in zip(cuts, cuts[1:])]
    except Exception:  # noqa: BLE001 - the whole parse reports it
        return None
    if any(piece is None for piece in pieces):
        return None
    first, last = pieces[0], pieces[-1]
    # A piece without an indented block detects libcst's default indentation, which none of its
    # nodes records: the others must agree (the file's is the first block's).
    indents = {p.default_indent for p in pieces if any(_has_block(s) for s in p.body)}
    # (A declared `utf-8` is the first piece's encoding, spelled as declared; the others read UTF-8.)
    if len(indents) > 1 or any(p.default_newline != first.default_newline or p.encoding != "utf-8" for p in pieces[1:]) \
            or any(p.footer or not p.body for p in pieces[:-1]):
        return None
    indent = indents.pop() if indents else first.default_indent
    body = list(first.body)
    for piece in pieces[1:]:
        lead = piece.body[0]
        if piece.header:
            lead = lead.with_changes(leading_lines=(*piece.header, *lead.leading_lines))
        body.append(lead)
        body.extend(piece.body[1:])
    return cst.Module(body=tuple(body), header=first.header, footer=last.footer, encoding=first.encoding,
                      default_indent=indent, default_newline=first.default_newline,
                      has_trailing_newline=last.has_trailing_newline)


def _parse_piece(data: bytes, start: int, end: int, spans, literals: dict, piece_bytes: int) -> Optional[cst.Module]:
    """The module of data[start:end]: one literal statement a run of its elements at a time
    (core.literals; None if it cannot vouch for it), anything else at once."""
    if len(spans) == 1 and spans[0][0] in literals:
        kind, elements = literals[spans[0][0]]
        return parse_literal(data[start:end], kind, [(a - start, b - start) for a, b in elements], piece_bytes)
    return cst.parse_module(data[start:end])


def _parse_module(data: bytes) -> cst.Module:
    """`cst.parse_module`, where libcst misreads a file whose lines end in a lone CR (old Mac
    style, which CPython compiles): it looks for the PEP 263 declaration on lines split at LF
    only, so the whole file is its "first line" and a declared Latin-1 file is refused; and it
    drops the file's last CR, which `fix` would then lose."""
    try:
        module = cst.parse_module(data)
    except SyntaxError:
        encoding = _cr_only_declared_encoding(data)
        if encoding is None:
            raise
        module = cst.parse_module(data.decode(encoding), cst.PartialParserConfig(encoding=encoding))
    if not module.has_trailing_newline and data.endswith(b"\r") and b"\n" not in data:
        module = module.with_changes(has_trailing_newline=True)
    return module


def _codec(name: str) -> Optional[str]:
    try:
        return codecs.lookup(name).name
    except LookupError:
        return None


def _has_block(stmt: cst.CSTNode) -> bool:
    """Whether a top-level statement holds an indented block (every deeper block is inside one)."""
    todo = [stmt]
    while todo:
        node = todo.pop()
        if isinstance(getattr(node, "body", None), cst.IndentedBlock):
            return True
        todo.extend(part for part in (getattr(node, "orelse", None), getattr(node, "finalbody", None)) if part is not None)
        todo.extend(getattr(node, "handlers", ()))
        todo.extend(getattr(node, "cases", ()))
    return False


def _cr_only_declared_encoding(data: bytes) -> Optional[str]:
    """The encoding declared on line 1 or 2 of a file whose lines end in a lone CR, or None."""
    if b"\n" in data or b"\r" not in data:
        return None
    for line in data.split(b"\r", 2)[:2]:
        match = _CODING.match(line)
        if match:
            try:
                return codecs.lookup(match.group(1).decode("ascii")).name
            except (LookupError, UnicodeDecodeError):
                return None
    return None


def _no_validation(self) -> None:
    pass
