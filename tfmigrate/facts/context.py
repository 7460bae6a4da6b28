"""What a rule may ask about the file it is looking at, computed once per file and shared."""
from __future__ import annotations

from functools import cached_property
from typing import Any, Callable, Dict, List, TypeVar

import libcst as cst

from tfmigrate.facts.names import ImportTable
from tfmigrate.facts.nodes import exact_kinds

_BLOCKS = (cst.Module, cst.IndentedBlock)
T = TypeVar("T")


class FileContext:
    def __init__(self, path: str, module: cst.Module, source: str, shims=None, imported_by=None):
        self.path = path
        self.imported_by = imported_by  # a checked TF1 graph module that imports this one
        self.module = module
        self.source = source
        self.names = ImportTable(module, source, shims)
        # Ancestors of the node being visited (outermost first), kept by the engine's walk.
        self.stack: List[cst.CSTNode] = []
        self._facts: Dict[Callable[..., Any], Any] = {}
        self._searched: Dict[Any, bool] = {}

    @cached_property
    def references(self):
        """The references to TensorFlow API in this file, resolved once during the engine's
        walk and handed to the rules that own them (tfmigrate.facts.references)."""
        from tfmigrate.facts.references import References

        return References(self)

    @cached_property
    def keras_classes(self):
        """Which classes of this module are Keras Models or Layers (shared by TFM101/TFM102)."""
        from tfmigrate.facts.keras_classes import KerasClasses

        return KerasClasses(self.module, self.names)

    @cached_property
    def program(self):
        """How this module will run under TF 2.21: TF1 graph code or not, on the compat route
        or not (shared by the engine and every rule)."""
        from tfmigrate.facts.program import ProgramMode

        return ProgramMode(self)

    @cached_property
    def datasets(self):
        from tfmigrate.facts.datasets import DatasetNames

        return DatasetNames(self.module, self.names)

    def fact(self, compute: Callable[["FileContext"], T]) -> T:
        """The per-file fact `compute(self)` (a class or a function of the context), computed
        once and shared by every rule that asks: `ctx.fact(NameCounts)`."""
        try:
            return self._facts[compute]
        except KeyError:
            found = self._facts[compute] = compute(self)
            return found

    def search(self, pattern) -> bool:
        """Whether the compiled regex `pattern` matches anywhere in the source. Remembered per
        file: rules ask once per finding, and each search reads the whole file."""
        found = self._searched.get(pattern)
        if found is None:
            found = self._searched[pattern] = pattern.search(self.source) is not None
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
