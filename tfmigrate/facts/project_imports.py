"""A file's ways to TensorFlow through its project, beyond its own `import tensorflow`: the
project's configured re-exports (the `tensorflow-aliases` setting), the file's module name, and
what its star imports of checked modules bring in (star_imports). Kept apart from names.py so
that the runner builds them without importing libcst (a cached run never pays for it)."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Optional, Tuple

from tfmigrate.observed import note


@dataclass(frozen=True)
class ProjectImports:
    """A project's own re-exports of TensorFlow (the `tensorflow-aliases` setting), e.g.
    (("tensorpack.compat.tfv1", "tensorflow.compat.v1"),), and the dotted module name of the
    file being linted (to resolve `from ..compat import tfv1`), None outside a package.
    `star`, `star_program`: what the file's star imports of checked modules bring in, found up
    front (star_imports.StarFact): ((module as written, ((local, full TensorFlow path), ...)),
    ...), and what importing them does to the program ("v2_off", "legacy_keras")."""

    aliases: Tuple[Tuple[str, str], ...] = ()
    module: Optional[str] = None
    is_package: bool = False  # the file is a package's __init__.py
    star: Tuple[Tuple[str, Tuple[Tuple[str, str], ...]], ...] = ()
    star_program: Tuple[str, ...] = ()
    # A module that star-imports this one and uses `tf.layers` / `tf.nn.rnn_cell` / `tf.keras`
    # through it (star_imports.legacy_keras_wanted): this module's compat route turns legacy Keras on.
    legacy_keras_for: Optional[str] = None
    # The checked modules this file imports (as written) that make variables or graph state
    # (project.graph_imports.stateful_imports): `fix --native` does not call them eagerly.
    stateful: Tuple[str, ...] = ()
    # The checked modules it imports (as written) that an eager test may call
    # (project.graph_imports.eager_imports): `fix --native` makes a test file eager only then.
    eager: Tuple[str, ...] = ()
    # The library of graph classes and the programs importing it that this file belongs to
    # (project.class_groups.Group): `fix --native` rewrites them together or not at all.
    group: tuple = ()
    # A checked TF1 graph module that imports it, where `fix --native` may rewrite that one as eager
    # TF2 (workspace.plan.ProjectFacts.tf1_users): this one is TF1 code too (facts.program.written_for_tf1).
    tf1_user: Optional[str] = None

    def target(self, path: str) -> Optional[str]:
        return next((target for name, target in self.aliases if name == path), None)

    def absolute(self, level: int, module: Optional[str]) -> Optional[str]:
        """The absolute module a relative `from` import names, or None outside a package."""
        if self.module is None:
            return None
        parts = self.module.split(".")
        if not self.is_package:
            parts = parts[:-1]
        if level - 1 > len(parts) or (level - 1 == len(parts) and not module):
            return None
        parts = parts[: len(parts) - (level - 1)]
        return ".".join(parts + ([module] if module else []))

    def mentioned_in(self, data: bytes) -> bool:
        """Cheap scan: the file names one of the re-exports' last components, or gets
        TensorFlow names through a star import."""
        return bool(self.star) or any(path.rsplit(".", 1)[-1].encode() in data for path, _ in self.aliases)


def module_name(path: str) -> Tuple[Optional[str], bool]:
    """The dotted module name of a file from the packages (`__init__.py` folders) around it,
    and whether it is a package's `__init__.py`."""
    file = Path(path).resolve()
    is_package = file.name == "__init__.py"
    parts = [] if is_package else [file.stem]
    folder = file.parent
    while True:
        note("f", folder / "__init__.py")  # a warm run's answer depends on it (tfmigrate.observed)
        if not (folder / "__init__.py").is_file():
            break
        parts.insert(0, folder.name)
        folder = folder.parent
    return (".".join(parts) if parts else None), is_package
