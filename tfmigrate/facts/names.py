"""Which local names mean TensorFlow: a light, per-module import table.

libcst's QualifiedNameProvider costs 6-12x the parse (FACTS.md), so tfmigrate resolves names with
its own table: every import anywhere in the module (statements only, no expression walk), keyed by
the local name it binds. `api()` turns an expression into a path relative to TensorFlow with the
`compat.v1` / `compat.v2` prefix removed, so rules match one spelling for all of them:

    import tensorflow.compat.v1 as tf      tf.layers.dense        -> "layers.dense"
    from tensorflow.keras import layers    layers.Dense           -> "keras.layers.Dense"
    import keras                           keras.Variable         -> "keras.Variable"
"""
from __future__ import annotations

import re
from typing import Dict, Iterator, List, Optional, Set

import libcst as cst

from tfmigrate.findings import AddImport
from tfmigrate.facts.project_imports import ProjectImports

_TF_ROOTS = ("tensorflow", "keras", "tf_keras")
_ATTRIBUTE, _NAME = cst.Attribute, cst.Name
_COMPAT = ("tensorflow.compat.v1.", "tensorflow.compat.v2.")


def dotted(node: cst.CSTNode) -> Optional[str]:
    """`a.b.c` for a Name/Attribute chain, else None."""
    parts = []
    while type(node) is _ATTRIBUTE:  # not isinstance: libcst's ABC makes that slow, and hot here
        parts.append(node.attr.value)
        node = node.value
    if type(node) is not _NAME:
        return None
    parts.append(node.value)
    return ".".join(reversed(parts))


def _module_name(node: cst.CSTNode) -> str:
    return dotted(node) or ""


def normalize(full: str) -> Optional[str]:
    """Full dotted path -> TensorFlow API path without compat prefixes; None if not TF/Keras."""
    for prefix in _COMPAT:
        if full.startswith(prefix):
            return full[len(prefix):]
        if full == prefix[:-1]:
            return ""
    if full.startswith("tensorflow.python.keras."):
        return "keras." + full[len("tensorflow.python.keras."):]
    if full == "tensorflow":
        return ""
    if full.startswith("tensorflow."):
        return full[len("tensorflow."):]
    if full == "keras" or full.startswith("keras."):
        return full
    if full == "tf_keras" or full.startswith("tf_keras."):
        return "keras" + full[len("tf_keras"):]
    return None


def statements_of(body) -> Iterator[cst.CSTNode]:
    """Every statement, recursing into compound statements but never into expressions."""
    stack = list(reversed(body))
    while stack:
        stmt = stack.pop()
        yield stmt
        if type(stmt) is cst.SimpleStatementLine:
            continue
        children = []
        for attr in ("body", "orelse", "finalbody", "handlers", "cases"):
            child = getattr(stmt, attr, None)
            if child is None:
                continue
            if isinstance(child, (list, tuple)):
                children.extend(child)
            else:
                children.append(child)
        for child in reversed(children):
            kind = type(child)
            if kind is cst.IndentedBlock or kind is cst.SimpleStatementSuite:
                stack.extend(reversed(child.body))
            elif isinstance(child, cst.CSTNode):
                stack.append(child)


def _fails_under_tf2(target: Optional[str]) -> bool:
    """Whether importing this TensorFlow path fails under TF 2.21 (contrib, a name that exists
    nowhere), so an `except` fallback's binding is the one that runs."""
    if target is None:
        return False
    path = normalize(target)
    if not path:
        return False
    from tfmigrate.facts import api_table

    return api_table.gone(path) is not None or api_table.unresolved(path, target.startswith("tensorflow.compat.v1")) is not None


def _fallback_imports(module: cst.Module) -> Set[cst.CSTNode]:
    """Import statements inside `except` blocks (fallbacks for an older library)."""
    found: Set[cst.CSTNode] = set()
    for stmt in statements_of(module.body):
        if type(stmt) in (cst.ExceptHandler, cst.ExceptStarHandler):
            for inner in statements_of(stmt.body.body):
                if type(inner) is cst.SimpleStatementLine:
                    found.update(s for s in inner.body if type(s) in (cst.Import, cst.ImportFrom))
    return found


class ImportTable:
    """Local name -> full dotted path, for names bound by imports of TensorFlow or Keras (or of
    a project's re-export of them, `ProjectImports`)."""

    def __init__(self, module: cst.Module, source: str = "", shims: Optional[ProjectImports] = None):
        self.aliases: Dict[str, str] = {}
        self.bound: Set[str] = set()
        self._source = source
        self._shims = shims if shims is not None and shims.aliases else None
        self._star = dict(shims.star) if shims is not None and shims.star else None
        # What importing those star-imported modules does to the program ("v2_off", ...).
        self.star_program = shims.star_program if shims is not None else ()
        self.legacy_keras_for = shims.legacy_keras_for if shims is not None else None
        self.stateful_imports = shims.stateful if shims is not None else ()  # (fix --native)
        self.eager_imports = shims.eager if shims is not None else ()  # (fix --native, test files)
        self.tf1_user = shims.tf1_user if shims is not None else None  # (fix --native: TF1 code imports it)
        self.class_group = shims.group if shims is not None else ()  # (fix --native, native.groups)
        fallbacks = _fallback_imports(module) if "except" in source or not source else set()
        for stmt in statements_of(module.body):
            small = stmt.body if type(stmt) is cst.SimpleStatementLine else [stmt]
            for s in small:
                kind = type(s)
                if kind is not cst.Import and kind is not cst.ImportFrom:
                    continue
                self._fallback = s in fallbacks
                if kind is cst.Import:
                    self._add_import(s)
                else:
                    self._add_import_from(s)
        self._fallback = False

    _fallback = False  # binding from an import in an `except` block

    def tensorflow_aliases(self) -> List[str]:
        """The local names TensorFlow (or its compat.v1 module) is imported as, sorted."""
        return sorted(local for local, target in self.aliases.items()
                      if target in ("tensorflow", "tensorflow.compat.v1"))

    def _bind(self, local: str, target: str) -> None:
        if self._fallback and local in self.bound and not _fails_under_tf2(self.aliases.get(local)):
            return  # `try: from new import x / except ImportError: from old import x`: the try's runs
        self.bound.add(local)
        if target.split(".")[0] in _TF_ROOTS:
            self.aliases[local] = target
        else:
            self.aliases.pop(local, None)

    def _add_import(self, node: cst.Import) -> None:
        for alias in node.names:
            full = _module_name(alias.name)
            if alias.asname is not None:
                shim = self._shims.target(full) if self._shims else None
                self._bind(alias.asname.name.value, shim or full)
            else:
                head = full.split(".")[0]
                self._bind(head, head)

    def _add_import_from(self, node: cst.ImportFrom) -> None:
        if isinstance(node.names, cst.ImportStar):
            if self._star is not None:  # `from ops import *` of a checked module that imports tf
                written = "." * len(node.relative) + (_module_name(node.module) if node.module else "")
                for local, target in self._star.get(written, ()):
                    self._bind(local, target)
            return
        if node.relative or node.module is None:
            if self._shims is not None:
                self._add_shim_import(node)
            return
        base = _module_name(node.module)
        for alias in node.names:
            name = _module_name(alias.name)
            local = alias.asname.name.value if alias.asname is not None else name
            shim = self._shims.target(f"{base}.{name}") if self._shims else None
            self._bind(local, shim or f"{base}.{name}")

    def _add_shim_import(self, node: cst.ImportFrom) -> None:
        """`from ..compat import tfv1 as tf`: a relative import of a configured re-export."""
        base = self._shims.absolute(len(node.relative), _module_name(node.module) if node.module else None)
        if base is None:
            return
        for alias in node.names:
            name = _module_name(alias.name)
            local = alias.asname.name.value if alias.asname is not None else name
            target = self._shims.target(f"{base}.{name}")
            if target is not None:
                self._bind(local, target)

    @property
    def has_tensorflow(self) -> bool:
        return bool(self.aliases)

    def full_name(self, node: cst.CSTNode) -> Optional[str]:
        """The full dotted path an expression names, if its head is a TF/Keras import."""
        name = dotted(node)
        if name is None:
            return None
        head, _, rest = name.partition(".")
        target = self.aliases.get(head)
        if target is None:
            return None
        return f"{target}.{rest}" if rest else target

    def api(self, node: cst.CSTNode) -> Optional[str]:
        """TensorFlow API path of an expression ("layers.dense"), or None if not TensorFlow."""
        full = self.full_name(node)
        return None if full is None else normalize(full)

    def is_v1_alias(self, local: str) -> bool:
        return self.aliases.get(local) == "tensorflow.compat.v1"

    def spelling(self, api: str) -> "Spelling":
        """How to spell a TF2 API path in this module, and the import that makes it valid.

        Any alias of `tensorflow` or `tensorflow.compat.v1` works for the paths fixes emit
        (`keras.*`, `shape`), measured under TF 2.21; `import keras` serves `keras.*` paths.
        """
        for local, target in sorted(self.aliases.items()):
            if target == "tensorflow":
                return Spelling(f"{local}.{api}", None)
        for local, target in sorted(self.aliases.items()):
            if target == "tensorflow.compat.v1":
                return Spelling(f"{local}.{api}", None)
        if api.startswith("keras."):
            for local, target in sorted(self.aliases.items()):
                if target in ("keras", "tensorflow.keras"):
                    return Spelling(f"{local}.{api[len('keras.'):]}", None)
        local = self.free_name("tf")
        stmt = "import tensorflow" if local == "tensorflow" else f"import tensorflow as {local}"
        return Spelling(f"{local}.{api}", stmt)

    def free_name(self, preferred: str) -> str:
        for candidate in (preferred, preferred + "2", "tensorflow"):
            if candidate not in self.bound and not re.search(
                rf"\b{re.escape(candidate)}\b", self._source
            ):
                return candidate
        return "tensorflow"


class Spelling:
    """A spelled API path plus the import statement it needs (None when already imported)."""

    __slots__ = ("code", "import_statement")

    def __init__(self, code: str, import_statement: Optional[str]):
        self.code = code
        self.import_statement = import_statement

    def expression(self) -> cst.BaseExpression:
        return cst.parse_expression(self.code)

    def import_edits(self) -> tuple:
        """The edit that adds the import this spelling needs: none, or one AddImport."""
        return (AddImport(self.import_statement),) if self.import_statement else ()

    def __repr__(self) -> str:
        return f"Spelling({self.code!r}, {self.import_statement!r})"
