"""Node positions on demand: libcst's PositionProvider, run one statement at a time.

libcst computes positions by generating the code of the whole module, which costs about as much
as parsing it. A report needs the positions of a handful of nodes, so only the statements that
hold them are generated, each starting at the line and indentation CPython's parser (`ast`, in C,
about a tenth of libcst's parse) gives for it. The positions are libcst's own: the same codegen
state, started at that line. If the two parsers ever disagree about where a statement starts, or
a node is outside every statement (a comment in the module header), the whole module is
generated the usual way.

Most statements are placed without CPython's parser (`_Lines`): a statement of a block begins a
line at the block's indentation, so the lines at that indentation that begin with code, read in
order, are the block's statements (and their decorators and `else:`-like clauses), one for one,
when their count is exactly what the libcst block holds. A statement so placed is accepted only
if the code generated for it is the source's own text at that line; anything else (a line of a
string or a bracket that happens to start at that indentation, a tab or CR layout, a BOM) is
placed through `ast` as before.
"""
from __future__ import annotations

import ast
import bisect
import re
import warnings
from typing import Dict, Iterator, List, Optional, Sequence, Tuple

import libcst as cst
from libcst.metadata import CodeRange, MetadataWrapper, PositionProvider
from libcst.metadata.position_provider import PositionProvidingCodegenState

from tfmigrate.facts.program import STRINGS_AND_COMMENTS

_COMPOUND_AST = {
    cst.FunctionDef: (ast.FunctionDef, ast.AsyncFunctionDef),
    cst.ClassDef: (ast.ClassDef,),
    cst.If: (ast.If,),
    cst.For: (ast.For, ast.AsyncFor),
    cst.While: (ast.While,),
    cst.With: (ast.With, ast.AsyncWith),
    cst.Try: (ast.Try,),
    cst.TryStar: (getattr(ast, "TryStar", ast.Try),),
    cst.Match: (getattr(ast, "Match", ast.If),),
}


class _Found(Exception):
    """Raised inside codegen once every wanted node has its position."""


class _TargetedState(PositionProvidingCodegenState):
    """Codegen state that stops as soon as the wanted nodes are positioned. The nodes still open
    at that moment got a cut-short range on the way out; they are forgotten afterwards."""

    def before_codegen(self, node: cst.CSTNode) -> None:
        super().before_codegen(node)
        self.provider.open.append(node)

    def after_codegen(self, node: cst.CSTNode) -> None:
        super().after_codegen(node)
        self.provider.open.pop()
        wanted = self.provider.wanted
        if node in wanted:
            wanted.discard(node)
            if not wanted:
                raise _Found


class Positions:
    """A read-only mapping node -> CodeRange that fills itself as nodes are looked up."""

    def __init__(self, module: cst.Module, data: bytes, source: str = ""):
        self._module = module
        self._data = data
        self.source = source  # the decoded text, for fixes that keep unchanged statements' text
        self._hints: Dict[int, Sequence[cst.CSTNode]] = {}  # id(node) -> statements around it
        self._provider = PositionProvider()
        self._provider.wanted, self._provider.open = set(), []
        self._computed: Dict[cst.CSTNode, CodeRange] = self._provider._computed
        self._index = {id(stmt): i for i, stmt in enumerate(module.body)}
        self._tree: Optional[ast.Module] = None
        self._ast: Dict[int, ast.stmt] = {}  # id(cst statement) -> its ast statement
        self._indents: Dict[int, str] = {}  # id(statement in a paired block) -> block's indent
        self._done: set = set()  # ids of statements generated in full
        self._whole = False
        self._lines: Optional[_Lines] = None  # the source's lines, for placing without `ast`

    def __getitem__(self, node: cst.CSTNode) -> CodeRange:
        found = self._computed.get(node)
        if found is None:
            self._find(node)
            found = self._computed[node]
        return found

    def prepare(self, wanted: Sequence[Tuple[Sequence[cst.CSTNode], cst.CSTNode]]) -> None:
        """Position these nodes, each given with its chain of enclosing statements (outermost
        first, each an element of a block's body, as the tree walk saw them)."""
        for chain, node in wanted:
            if self._whole:
                return
            if node in self._computed:
                continue
            if self._generate_by_lines(chain, node):
                continue
            place = self._place(chain)
            if place is None:
                continue  # found on demand
            self._generate(*place, wanted={node})

    def hint(self, node: cst.CSTNode, chain: Sequence[cst.CSTNode]) -> None:
        """Where to look for `node` if it is asked for (a fix's edit, near its finding)."""
        self._hints[id(node)] = chain

    @property
    def cpython_parses(self) -> bool:
        """Whether CPython's parser accepts this module (asked here if placing the statements
        did not need it)."""
        return self._top_level()

    def statement_lines(self) -> Optional[List[int]]:
        """The line where each top-level statement's code begins (its leading comment and
        blank lines included), or None when CPython's parser cannot say."""
        if self._whole or not self._top_level():
            return None
        return [_first_line(stmt, self._ast[id(stmt)]) for stmt in self._module.body]

    # -- where a statement's code starts --------------------------------------------------

    def _place(self, chain: Sequence[cst.CSTNode]):
        """(statement, line, indents, ast node) for the innermost statement of the chain that
        can be placed, or None."""
        if not chain or id(chain[0]) not in self._index or not self._top_level():
            return None
        indents: List[str] = []
        place = None
        for depth, stmt in enumerate(chain):
            tree = self._ast.get(id(stmt))
            if tree is None:
                break
            place = (stmt, tree, list(indents))
            if depth + 1 == len(chain):
                break
            block = self._match_block(stmt, tree, chain[depth + 1])
            if block is None:
                break
            indents.append(block)
        if place is None:
            return None
        stmt, tree, indents = place
        return stmt, _first_line(stmt, tree), indents, tree

    def _top_level(self) -> bool:
        if self._tree is not None:
            return True
        try:
            tree = python_ast(self._data)
        except (SyntaxError, ValueError, MemoryError, RecursionError):
            return False
        if not self._pair(self._module.body, tree.body):
            return False
        self._tree = tree
        return True

    def _pair(self, statements: Sequence[cst.CSTNode], nodes: Sequence[ast.stmt]) -> bool:
        """Record which ast statement each libcst statement of a block is (a line of `a; b`
        is several ast statements). False if the blocks do not line up."""
        k = 0
        for stmt in statements:
            if k >= len(nodes):
                return False
            self._ast[id(stmt)] = nodes[k]
            k += len(stmt.body) if type(stmt) is cst.SimpleStatementLine else 1
        return k == len(nodes)

    def _match_block(self, stmt: cst.CSTNode, tree: ast.stmt, inner: cst.CSTNode) -> Optional[str]:
        """Pair the block of `stmt` that holds `inner`; return that block's indentation
        (remembered: every finding in a function asks for the same block)."""
        known = self._indents.get(id(inner))
        if known is not None:
            return known
        for block, nodes in _blocks(stmt, tree):
            if isinstance(block, cst.IndentedBlock) and any(s is inner for s in block.body):
                if not self._pair(block.body, nodes):
                    return None
                indent = self._module.default_indent if block.indent is None else block.indent
                for sibling in block.body:
                    self._indents[id(sibling)] = indent
                return indent
        return None

    # -- placing by the source's lines (no `ast`) ------------------------------------------

    def _generate_by_lines(self, chain: Sequence[cst.CSTNode], node: cst.CSTNode) -> bool:
        """Position `node` from the innermost statement of its chain placed by `_Lines`; False
        (nothing recorded) when the statement cannot be placed that way or its generated code
        is not the source's text at that line."""
        if not chain or self._whole:
            return False
        lines = self._lines
        if lines is None:
            if self._data is None:
                return False
            lines = self._lines = _Lines(self._module, self.source or self._data.decode(self._module.encoding, "replace"))
        place = lines.place(chain)
        if place is None:
            return False
        stmt, line, indents = place
        if id(stmt) in self._done:
            return False
        provider = PositionProvider()  # recorded here, kept only once the text is checked
        provider.wanted, provider.open = {node}, []
        state = _TargetedState(
            default_indent=self._module.default_indent,
            default_newline=self._module.default_newline,
            provider=provider,
        )
        state.line = line
        state.indent_tokens = list(indents)
        whole = False
        try:
            stmt._codegen(state)
            whole = True
        except Exception:  # _Found, or a KeyError from a range hoisted off a node cut short
            if provider.wanted:  # not found: an error as _generate would meet it, left to that path
                return False
        if not lines.holds("".join(state.tokens), line):
            return False
        computed = provider._computed
        if not whole:
            for open_node in provider.open:  # cut short: the rest of the statement comes on demand
                computed.pop(open_node, None)
        else:
            self._done.add(id(stmt))
        for key, value in computed.items():
            self._computed.setdefault(key, value)
        return True

    # -- generating ----------------------------------------------------------------------

    def _generate(self, stmt, line: int, indents: List[str], tree: ast.stmt, wanted=()) -> None:
        if id(stmt) in self._done:
            return
        state = _TargetedState(
            default_indent=self._module.default_indent,
            default_newline=self._module.default_newline,
            provider=self._provider,
        )
        state.line = line
        state.indent_tokens = indents
        provider = self._provider
        provider.wanted, provider.open = set(wanted), []
        try:
            stmt._codegen(state)
            self._done.add(id(stmt))
        except Exception:  # _Found, or a KeyError from a range hoisted off a node cut short
            if wanted and not provider.wanted:
                for node in provider.open:  # the rest of the statement comes on demand
                    self._computed.pop(node, None)
            else:
                raise
        finally:
            provider.wanted, provider.open = set(), []
        own = self._computed.get(stmt)
        if own is not None and (own.start.line, own.start.column) != (tree.lineno, tree.col_offset):
            self._generate_whole()  # the parsers disagree: trust only the full generation

    def _find(self, node: cst.CSTNode) -> None:
        """Position a node nobody prepared: from the statements around its finding outwards,
        else its top-level statement if it is one, else every top-level statement in turn until
        it shows up, else the whole module."""
        chain = self._hints.get(id(node))
        if chain and not self._whole:  # near its finding: the innermost statement first, then out
            for depth in range(len(chain), 0, -1):
                if not self._generate_by_lines(chain[:depth], node):
                    place = self._place(chain[:depth])
                    if place is not None:
                        self._generate(*place, wanted={node})
                if self._whole or node in self._computed:
                    return
        if not self._whole:  # the same order as below, placed by the source's lines while they serve
            index = self._index.get(id(node))
            order = ([] if index is None else [index]) + [i for i in range(len(self._module.body)) if i != index]
            for i in order:
                stmt = self._module.body[i]
                if id(stmt) in self._done:
                    continue
                if not self._generate_by_lines([stmt], node):
                    break
                if node in self._computed:
                    return
        if not self._whole and self._top_level():
            index = self._index.get(id(node))
            order = ([] if index is None else [index]) + [i for i in range(len(self._module.body)) if i != index]
            for i in order:
                stmt = self._module.body[i]
                tree = self._ast[id(stmt)]
                self._generate(stmt, _first_line(stmt, tree), [], tree)
                if self._whole or node in self._computed:
                    return
        self._generate_whole()

    def _generate_whole(self) -> None:
        if self._whole:
            return
        self._whole = True
        self._computed.clear()
        wrapper = MetadataWrapper(self._module, unsafe_skip_copy=True)
        self._computed.update(full_positions(wrapper))


class _Lines:
    """Where statements begin, read from the source's lines (see the module's docstring)."""

    def __init__(self, module: cst.Module, source: str):
        self.module = module
        # libcst counts lines at \n, \r\n and \r; only \n is read here (a CR layout goes through ast)
        self.ok = "\r" not in source and not source.startswith("\ufeff")
        self.source = source
        self.starts = [0] + [m.end() for m in re.finditer("\n", source)] if self.ok else []
        self._blocks: Dict[Tuple[int, str], Optional[Dict[int, int]]] = {}  # (id, indent) -> {id(stmt): line}
        self._top: Optional[Dict[int, int]] = None
        self._ranges: Dict[int, int] = {}  # id(stmt) -> the line its next sibling's code begins on
        self._strings: Optional[List[Tuple[int, int]]] = None

    def _long_strings(self) -> List[Tuple[int, int]]:
        """(start, end) offsets of the triple-quoted strings, in order (comments and one-line
        strings read past, so that their quotes start nothing)."""
        if self._strings is None:
            self._strings = [m.span() for m in STRINGS_AND_COMMENTS.finditer(self.source) if m.group(1)]
        return self._strings

    def holds(self, text: str, line: int) -> bool:
        """Whether `text` is the source's own text from the start of `line`."""
        return 0 < line <= len(self.starts) and self.source.startswith(text, self.starts[line - 1])

    def place(self, chain: Sequence[cst.CSTNode]):
        """(innermost statement of the chain placed, its first line, the indents of its block)
        or None."""
        if not self.ok:
            return None
        if self._top is None:
            body = self.module.body
            self._top = self._block_lines(body, "", 1, len(self.starts) + 1) or {}
        lines = self._top
        line = lines.get(id(chain[0]))
        if line is None:
            return None
        indents: List[str] = []
        stmt = chain[0]
        for depth in range(1, len(chain)):
            inner = chain[depth]
            found = self._inner(stmt, lines, indents, inner)
            if found is None:
                break
            block_indent, lines = found
            inner_line = lines.get(id(inner))
            if inner_line is None:
                break
            indents = indents + [block_indent]
            stmt, line = inner, inner_line
        return stmt, _leading(stmt, line), indents

    def _inner(self, stmt, lines: Dict[int, int], indents: List[str], inner):
        """(the indent of the block of `stmt` that holds `inner`, that block's statement lines)."""
        blocks = list(_cst_blocks(stmt))
        if not blocks or not all(isinstance(b, cst.IndentedBlock) for b in blocks):
            return None
        relative = {self.module.default_indent if b.indent is None else b.indent for b in blocks}
        if len(relative) != 1:
            return None
        block_indent = relative.pop()
        key = (id(stmt), block_indent)
        if key not in self._blocks:
            start = lines[id(stmt)]
            end = self._ranges.get(id(stmt))
            statements = [s for b in blocks for s in b.body]
            found = None if end is None else self._block_lines(statements, "".join(indents) + block_indent, start + 1, end)
            self._blocks[key] = found
        found = self._blocks[key]
        if found is None or id(inner) not in found:
            return None
        return block_indent, found

    def _block_lines(self, statements, indent: str, start: int, end: int) -> Optional[Dict[int, int]]:
        """id(statement) -> the line its own code begins on (its first decorator's), for the
        statements of the blocks between lines `start` and `end` (exclusive), all at `indent`;
        None unless the lines there that begin with code are exactly as many as they need."""
        if start > end:
            return None
        # A line at `indent` whose first character may begin a statement (not a closing bracket),
        # and not inside a triple-quoted string (a docstring's own lines).
        pattern = re.compile("^" + re.escape(indent) + r"[^\s#)\]}]", re.MULTILINE)
        begin = self.starts[start - 1] if start <= len(self.starts) else len(self.source)
        stop = self.starts[end - 1] if end <= len(self.starts) else len(self.source)
        strings = self._long_strings()
        heads = []
        line, position = start, begin
        for m in pattern.finditer(self.source, begin, stop):
            at = m.start()
            line += self.source.count("\n", position, at)
            position = at
            i = bisect.bisect_right(strings, (at, float("inf"))) - 1
            if i < 0 or not strings[i][0] < at < strings[i][1]:
                heads.append(line)
        needed = []
        for stmt in statements:
            count = _line_heads(stmt)
            if count is None:
                return None
            needed.append(count)
        if sum(needed) != len(heads):
            return None
        found: Dict[int, int] = {}
        k = 0
        for stmt, count in zip(statements, needed):
            found[id(stmt)] = heads[k]
            k += count
        for stmt, after in zip(statements, statements[1:]):
            self._ranges[id(stmt)] = found[id(after)]
        if statements:
            self._ranges[id(statements[-1])] = end
        return found


def _cst_blocks(stmt) -> Iterator[cst.BaseSuite]:
    """The blocks of a compound statement, in source order (as `_blocks` pairs them with ast)."""
    kind = type(stmt)
    if kind in (cst.FunctionDef, cst.ClassDef, cst.With):
        yield stmt.body
    elif kind is cst.If:
        yield stmt.body
        orelse = stmt.orelse
        if type(orelse) is cst.If:
            yield from _cst_blocks(orelse)
        elif orelse is not None:
            yield orelse.body
    elif kind in (cst.For, cst.While):
        yield stmt.body
        if stmt.orelse is not None:
            yield stmt.orelse.body
    elif kind in (cst.Try, cst.TryStar):
        yield stmt.body
        for handler in stmt.handlers:
            yield handler.body
        if stmt.orelse is not None:
            yield stmt.orelse.body
        if stmt.finalbody is not None:
            yield stmt.finalbody.body


def _line_heads(stmt) -> Optional[int]:
    """How many lines at its block's indentation begin with code for this statement: its own,
    its decorators', its clauses' (`elif`, `else:`, `except`, `finally:`); None for a kind not
    counted here."""
    kind = type(stmt)
    if kind is cst.SimpleStatementLine or kind is cst.With:
        return 1
    if kind is cst.FunctionDef or kind is cst.ClassDef:
        return 1 + len(stmt.decorators)
    if kind is cst.If:
        count = 1
        orelse = stmt.orelse
        while type(orelse) is cst.If:
            count += 1
            orelse = orelse.orelse
        return count + (orelse is not None)
    if kind is cst.For or kind is cst.While:
        return 1 + (stmt.orelse is not None)
    if kind is cst.Try or kind is cst.TryStar:
        return 1 + len(stmt.handlers) + (stmt.orelse is not None) + (stmt.finalbody is not None)
    return None


def _leading(stmt, line: int) -> int:
    """The first line of a statement's generated code, from the line its own code (or its first
    decorator) begins on: its leading blank and comment lines come before."""
    decorators = getattr(stmt, "decorators", None)
    if decorators:
        line -= len(decorators[0].leading_lines)
    return line - len(stmt.leading_lines)


def _first_line(stmt, tree: ast.stmt) -> int:
    """The line where a statement's generated code begins: its leading blank and comment lines,
    and for a decorated definition its decorators, come before the line `ast` gives."""
    line = tree.lineno
    decorators = getattr(stmt, "decorators", None)
    if decorators and getattr(tree, "decorator_list", None):
        line = tree.decorator_list[0].lineno - len(decorators[0].leading_lines)
    return line - len(stmt.leading_lines)


def _blocks(stmt, tree) -> Iterator[Tuple[cst.CSTNode, List[ast.stmt]]]:
    """Each block of a compound statement with the ast statements it holds."""
    kinds = _COMPOUND_AST.get(type(stmt))
    if kinds is None or not isinstance(tree, kinds):
        return
    if isinstance(stmt, cst.Match):
        for case, tree_case in zip(stmt.cases, tree.cases):
            yield case.body, tree_case.body
        return
    yield stmt.body, tree.body
    if isinstance(stmt, (cst.Try, cst.TryStar)):
        for handler, tree_handler in zip(stmt.handlers, tree.handlers):
            yield handler.body, tree_handler.body
        if stmt.finalbody is not None:
            yield stmt.finalbody.body, tree.finalbody
    orelse = getattr(stmt, "orelse", None)
    if isinstance(orelse, cst.If) and len(tree.orelse) == 1:
        yield from _blocks(orelse, tree.orelse[0])  # elif
    elif orelse is not None:
        yield orelse.body, tree.orelse


def python_ast(source) -> ast.Module:
    """CPython's parse of the checked code, without the warnings it would print about that code
    (invalid escape sequences and the like are not tfmigrate's to report)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return ast.parse(source)


def full_positions(wrapper: MetadataWrapper) -> Dict[cst.CSTNode, CodeRange]:
    """PositionProvider's mapping for a whole module, run directly: through
    `MetadataWrapper.resolve` libcst (1.9) also runs an empty batched-visitor pass over the whole
    tree after it, which rebuilds every node and costs about as much as the positions."""
    if hasattr(PositionProvider, "_gen"):
        return PositionProvider()._gen(wrapper)
    return wrapper.resolve(PositionProvider)  # pragma: no cover - another libcst
