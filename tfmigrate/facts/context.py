"""The file being checked, as every rule and fact sees it, and the one way to ask about it.

`FileContext` holds what the engine knows before any analysis: the path, the parsed module, its
text, its imports (`names`), the run's settings that change what a rule says (`imported_by`,
`native`), and the walk's position (`stack`, read through `statements` and `enclosing`).
Everything else is a fact, asked as `ctx.fact(Kind)`: a class built from the context once per
file and shared by whoever asks. A fact kind declares the facts it asks for (`needs`); a rule
declares the facts it reads (`Rule.reads`), so a rule's file says all it reads.

Facts keep the context they were built from (to answer lazily), so the context and its facts
point at each other: the engine clears `__dict__` once the file is done, so each file's tree is
freed by reference counting, not left for the garbage collector.
"""
from __future__ import annotations

from typing import Any, Dict, List, Type, TypeVar

import libcst as cst

from tfmigrate.facts.names import ImportTable
from tfmigrate.facts.nodes import exact_kinds

_BLOCKS = (cst.Module, cst.IndentedBlock)
T = TypeVar("T")


class FileContext:
    def __init__(self, path: str, module: cst.Module, source: str, shims=None, imported_by=None,
                 native: bool = False, keras3: bool = False, unsafe: bool = False):
        self.path = path
        self.imported_by = imported_by  # a checked TF1 graph module that imports this one
        self.native = native  # `fix --native`: TF1 graph scripts are rewritten as eager TF2
        self.keras3 = keras3  # `--keras3`: and their tracked TF1 layers as Keras layers where equal
        self.unsafe = unsafe  # a fix that applies unsafe fixes (`--unsafe-fixes`)
        self.module = module
        self.source = source
        self.names = ImportTable(module, source, shims)
        # Ancestors of the node being visited (outermost first), kept by the engine's walk.
        self.stack: List[cst.CSTNode] = []
        self._facts: Dict[type, Any] = {}

    def fact(self, kind: Type[T]) -> T:
        """The per-file fact `kind(self)`, computed once and shared by every rule and fact that
        asks: `ctx.fact(ProgramMode)`."""
        try:
            return self._facts[kind]
        except KeyError:
            found = self._facts[kind] = kind(self)
            return found

    def statements(self, node: cst.CSTNode) -> List[cst.CSTNode]:
        """The statements around `node` in the current walk, outermost first: each an element
        of the module's or an indented block's body (where positions can start)."""
        path = self.stack + [node]
        return [path[i] for i in range(1, len(path)) if type(path[i - 1]) in _BLOCKS]

    def enclosing(self, kind):
        """Innermost ancestor of type `kind` (a node class or a tuple of them) in the current
        walk, or None."""
        kinds = exact_kinds(kind)
        if kinds is None:
            return next((node for node in reversed(self.stack) if isinstance(node, kind)), None)
        for node in reversed(self.stack):
            if type(node) in kinds:
                return node
        return None
