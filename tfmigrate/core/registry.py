"""Every rule, found by walking `tfmigrate.rules` (no central list to edit), keyed by code."""
from __future__ import annotations

import importlib
import pkgutil
from typing import Dict, Optional, Type

from tfmigrate.rules.base import Rule

_REGISTRY: Optional[Dict[str, Type[Rule]]] = None


def all_rules() -> Dict[str, Type[Rule]]:
    """Every Rule subclass defined in a module of `tfmigrate.rules`, keyed by code."""
    global _REGISTRY
    if _REGISTRY is None:
        import tfmigrate.rules as package

        registry: Dict[str, Type[Rule]] = {}
        for info in pkgutil.iter_modules(package.__path__):
            module = importlib.import_module(f"{package.__name__}.{info.name}")
            for value in vars(module).values():
                if (
                    isinstance(value, type)
                    and issubclass(value, Rule)
                    and value is not Rule
                    and value.code
                    and value.__module__ == module.__name__
                ):
                    if value.code in registry:
                        raise RuntimeError(f"two rules claim {value.code}")
                    registry[value.code] = value
        _REGISTRY = dict(sorted(registry.items()))
    return _REGISTRY
