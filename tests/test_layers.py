"""The package's layers, as CONTRIBUTING.md draws them, kept by reading every import.

Dependencies point one way, from the front ends down to the data every part speaks:

    frontends -> api -> workspace -> project -> core -> rules -> native -> fixers -> facts -> base

A module imports only from its own layer or a lower one (wherever the import stands: at the top,
inside a function, or under TYPE_CHECKING), front ends never reach core/ or project/ except
through `tfmigrate.api`, no two modules import each other even through others, and no module
uses another module's private (underscored) names.
"""
from __future__ import annotations

import ast
from pathlib import Path
from typing import Dict, List, Set, Tuple

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "tfmigrate"
# Lowest first. "base" is what every layer speaks: findings, the rule catalogue, atomic writes,
# what a run looked at on disk (observed).
LAYERS = ["base", "facts", "fixers", "native", "rules", "core", "project", "workspace", "api", "frontends"]
BASE = {"tfmigrate", "tfmigrate.findings", "tfmigrate.catalogue", "tfmigrate.atomic", "tfmigrate.observed"}
# Reached by front ends only through tfmigrate.api.
BEHIND_API = ("core", "project")


def module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def layer(module: str) -> str:
    if module in BASE:
        return "base"
    parts = module.split(".")
    if module == "tfmigrate.__main__":
        return "frontends"
    if module == "tfmigrate.api":
        return "api"
    assert len(parts) >= 2 and parts[1] in LAYERS, f"{module} is in no layer: put it in one of {LAYERS}"
    return parts[1]


MODULES: Dict[str, Path] = {module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


def imports(path: Path) -> List[Tuple[str, int, List[str]]]:
    """(imported tfmigrate module, line, names taken from it) for every import in the file."""
    found = []
    tree = ast.parse(path.read_text(encoding="utf-8"))
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] == "tfmigrate":
                    found.append((alias.name, node.lineno, []))
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            if node.module.split(".")[0] != "tfmigrate":
                continue
            names = [alias.name for alias in node.names]
            submodules = [n for n in names if f"{node.module}.{n}" in MODULES]
            for name in submodules:
                found.append((f"{node.module}.{name}", node.lineno, []))
            found.append((node.module, node.lineno, [n for n in names if n not in submodules]))
        elif isinstance(node, ast.ImportFrom) and node.level:
            raise AssertionError(f"{path}:{node.lineno}: relative import; spell the module out")
    return found


def graph() -> Dict[str, Set[str]]:
    edges: Dict[str, Set[str]] = {}
    for module, path in MODULES.items():
        edges[module] = {target for target, _, _ in imports(path) if target in MODULES and target != module}
    return edges


def test_every_module_is_in_a_layer():
    for module in MODULES:
        layer(module)


def test_imports_point_down():
    wrong = []
    for module, path in MODULES.items():
        here = LAYERS.index(layer(module))
        for target, line, _ in imports(path):
            if target not in MODULES or target == "tfmigrate":
                continue
            there = layer(target)
            if LAYERS.index(there) > here:
                wrong.append(f"{path.relative_to(PACKAGE.parent)}:{line}: {layer(module)} imports {target} ({there})")
    assert not wrong, "imports that point up a layer:\n" + "\n".join(wrong)


def test_front_ends_go_through_the_api():
    wrong = []
    for module, path in MODULES.items():
        if layer(module) != "frontends":
            continue
        for target, line, _ in imports(path):
            if target in MODULES and layer(target) in BEHIND_API:
                wrong.append(f"{path.relative_to(PACKAGE.parent)}:{line}: imports {target}")
    assert not wrong, "front ends reaching past tfmigrate.api:\n" + "\n".join(wrong)


def test_no_import_cycles():
    edges = graph()
    cycles, state, stack = [], {}, []

    def visit(module: str) -> None:
        state[module] = "open"
        stack.append(module)
        for target in sorted(edges[module]):
            if state.get(target) == "open":
                cycles.append(" -> ".join(stack[stack.index(target):] + [target]))
            elif target not in state:
                visit(target)
        stack.pop()
        state[module] = "done"

    for module in sorted(edges):
        if module not in state:
            visit(module)
    assert not cycles, "import cycles:\n" + "\n".join(cycles)


def test_no_private_name_crosses_a_module():
    wrong = []
    for module, path in MODULES.items():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        aliases = {}
        for target, line, names in imports(path):
            for name in names:
                if name.startswith("_") and not name.startswith("__"):
                    wrong.append(f"{path.relative_to(PACKAGE.parent)}:{line}: takes {target}.{name}")
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("tfmigrate"):
                for alias in node.names:
                    if f"{node.module}.{alias.name}" in MODULES:
                        aliases[alias.asname or alias.name] = f"{node.module}.{alias.name}"
            elif isinstance(node, ast.Import):
                for alias in node.names:
                    if alias.name in MODULES and alias.asname:
                        aliases[alias.asname] = alias.name
        for node in ast.walk(tree):
            if (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in aliases
                    and node.attr.startswith("_") and not node.attr.startswith("__")):
                wrong.append(f"{path.relative_to(PACKAGE.parent)}:{node.lineno}: uses {aliases[node.value.id]}.{node.attr}")
    assert not wrong, "private names used outside their module:\n" + "\n".join(wrong)


@pytest.mark.parametrize("folder", [p for p in sorted(PACKAGE.iterdir()) if p.is_dir() and p.name != "__pycache__"
                                    and any(p.glob("*.py"))])
def test_every_folder_says_what_it_holds(folder):
    init = folder / "__init__.py"
    assert init.exists() and ast.get_docstring(ast.parse(init.read_text())), f"{folder.name}/__init__.py needs a docstring"
