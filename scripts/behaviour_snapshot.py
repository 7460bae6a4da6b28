"""Record what tfmigrate does to a set of trees, so a refactor can be proven to change nothing.

For each root: the findings of `check` and `check --native` (JSON), and for `fix`, `fix
--unsafe-fixes` and `fix --unsafe-fixes --native` (each on a scratch copy) the JSON report, the
summary on standard error and a checksum of every fixed file. Two snapshots of the same roots,
taken before and after a change, must be byte-identical (`diff -r BEFORE AFTER`).

Usage: python scripts/behaviour_snapshot.py OUT [ROOT ...]
       (default roots: tests/fixtures examples .corpus; .corpus from scripts/fetch_corpus.py)
The tfmigrate measured is the one `python -m tfmigrate` imports (set PYTHONPATH to measure
another checkout with the same interpreter).
"""
from __future__ import annotations

import hashlib
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_ROOTS = ["tests/fixtures", "examples", ".corpus"]
FIX_MODES = {"safe": [], "unsafe": ["--unsafe-fixes"], "native": ["--unsafe-fixes", "--native"]}
COMMON = ["--no-cache", "--select", "TFM", "--format", "json"]


def tfmigrate(args, cwd, out: Path, name: str) -> None:
    result = subprocess.run([sys.executable, "-m", "tfmigrate", *args], cwd=cwd, capture_output=True)
    (out / f"{name}.json").write_bytes(result.stdout)
    (out / f"{name}.err").write_bytes(result.stderr + f"exit {result.returncode}\n".encode())


def checksums(tree: Path) -> str:
    lines = []
    for path in sorted(p for p in tree.rglob("*") if p.suffix in (".py", ".ipynb") and p.is_file()):
        lines.append(f"{hashlib.sha1(path.read_bytes()).hexdigest()}  {path.relative_to(tree)}")
    return "\n".join(lines) + "\n"


def snapshot(root: Path, out: Path) -> None:
    name = root.name if root.is_absolute() else str(root).replace("/", "_")
    where = root if root.is_absolute() else ROOT / root
    if not where.exists():
        print(f"skipped {root}: not there", file=sys.stderr)
        return
    # Every run starts in a scratch folder: started from a checkout, `python -m` would import that
    # checkout's tfmigrate ahead of PYTHONPATH's.
    with tempfile.TemporaryDirectory() as scratch:
        shutil.copytree(where, Path(scratch) / "src", symlinks=True)
        for native in ([], ["--native"]):
            label = "checknative" if native else "check"
            tfmigrate(["check", "--no-respect-gitignore", *native, *COMMON, "src"], scratch, out, f"{label}_{name}")
    for mode, flags in FIX_MODES.items():
        with tempfile.TemporaryDirectory() as scratch:
            copy = Path(scratch) / "src"
            shutil.copytree(where, copy, symlinks=True)
            tfmigrate(["fix", "--no-respect-gitignore", *flags, *COMMON, "src"], scratch, out, f"fix_{mode}_{name}")
            (out / f"tree_{mode}_{name}.sha").write_text(checksums(copy))


def main(argv) -> int:
    if not argv:
        print(__doc__, file=sys.stderr)
        return 2
    out = Path(argv[0]).resolve()
    out.mkdir(parents=True, exist_ok=True)
    for root in argv[1:] or DEFAULT_ROOTS:
        snapshot(Path(root), out)
        print(f"{root}: recorded", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
