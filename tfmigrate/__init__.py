"""tfmigrate: a TF1-to-TF2 migration linter and fixer."""
import os as _os
import re as _re


def _version() -> str:
    """The version is written in one place: `version` in pyproject.toml's [project] table (each
    release is tagged `v<version>`, the `rev` pre-commit pins; CONTRIBUTING.md says how to cut
    one). Run from a checkout, it is read there; installed, from the name of the distribution's
    `tfmigrate-<version>.dist-info` folder beside the package (importlib.metadata would cost
    40-90 ms at every start)."""
    package = _os.path.dirname(_os.path.abspath(__file__))
    root = _os.path.dirname(package)
    try:
        with open(_os.path.join(root, "pyproject.toml"), encoding="utf-8") as handle:
            text = handle.read()
    except OSError:
        text = ""
    table = _re.search(r"(?ms)^\[project\][ \t]*$(.*?)(?=^\[|\Z)", text)
    if table and _re.search(r'(?m)^name\s*=\s*"tfmigrate"\s*$', table.group(1)):
        found = _re.search(r'(?m)^version\s*=\s*"([^"]+)"\s*$', table.group(1))
        if found:
            return found.group(1)
    try:
        installed = [name for name in _os.listdir(root) if name.startswith("tfmigrate-") and name.endswith(".dist-info")]
    except OSError:
        installed = []
    if len(installed) == 1:
        return installed[0][len("tfmigrate-"):-len(".dist-info")]
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("tfmigrate")
    except PackageNotFoundError:
        return "0+unknown"


__version__ = _version()
