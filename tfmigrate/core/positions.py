"""Node positions on demand: libcst's PositionProvider, run one statement at a time.

libcst computes positions by generating the code of the whole module, which costs about as much
as parsing it. A report needs the positions of a handful of nodes, so only the statements that
hold them are generated, each starting at the line and indentation CPython's parser (`ast`, in C,
about a tenth of libcst's parse) gives for it. The positions are libcst's own: the same codegen
state, started at that line. If the two parsers ever disagree about where a statement starts, or
a node is outside every statement (a comment in the module header), the whole module is
generated the usual way.
"""
from __future__ import annotations

import ast
import warnings
from typing import Dict, Iterator, List, Optional, Sequence, Tuple

import libcst as cst
from libcst.metadata import CodeRange, MetadataWrapper, PositionProvider
from libcst.metadata.position_provider import PositionProvidingCodegenState

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
            place = self._place(chain)
            if place is None:
                continue  # found on demand
            self._generate(*place, wanted={node})

    def hint(self, node: cst.CSTNode, chain: Sequence[cst.CSTNode]) -> None:
        """Where to look for `node` if it is asked for (a fix's edit, near its finding)."""
        self._hints[id(node)] = chain

    @property
    def cpython_parses(self) -> bool:
        """Whether CPython's parser accepts this module (it is asked only when positions are)."""
        return self._tree is not None

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
                place = self._place(chain[:depth])
                if place is not None:
                    self._generate(*place, wanted={node})
                if self._whole or node in self._computed:
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
