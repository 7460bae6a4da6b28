"""Download the TF1 packages pinned in ../shared/corpus.txt into .corpus/ (git-ignored) and unpack
them. Third-party code is never committed; this script fetches it on demand.

Usage: python scripts/fetch_corpus.py [--corpus-file PATH] [--dest DIR]
Prints one line per package: name, files, lines.
"""
import argparse
import fcntl
import subprocess
import sys
import tarfile
import tempfile
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_LIST = ROOT.parent / "shared" / "corpus.txt"


def pins(corpus_file: Path):
    for line in corpus_file.read_text().splitlines():
        spec = line.split("#", 1)[0].strip()
        if spec:
            yield spec


def unpack(archive: Path, dest: Path) -> None:
    dest.mkdir(parents=True, exist_ok=True)
    if archive.suffix in (".whl", ".zip"):
        with zipfile.ZipFile(archive) as z:
            z.extractall(dest)
    else:
        with tarfile.open(archive) as t:
            t.extractall(dest, filter="data") if hasattr(tarfile, "data_filter") else t.extractall(dest)


def fetch(spec: str, dest_root: Path) -> Path:
    name = spec.replace("==", "-")
    dest = dest_root / name
    if dest.exists() and any(dest.rglob("*.py")):
        return dest
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run(
            [sys.executable, "-m", "pip", "download", "-q", "--no-deps", "--no-build-isolation", "-d", tmp, spec],
            check=True,
        )
        archives = list(Path(tmp).iterdir())
        if len(archives) != 1:
            raise RuntimeError(f"{spec}: expected one archive, got {archives}")
        unpack(archives[0], dest)
    return dest


def main(argv=None) -> list:
    parser = argparse.ArgumentParser()
    parser.add_argument("--corpus-file", type=Path, default=DEFAULT_LIST)
    parser.add_argument("--dest", type=Path, default=ROOT / ".corpus")
    args = parser.parse_args(argv)
    args.dest.mkdir(parents=True, exist_ok=True)
    with open(args.dest / ".lock", "w") as lock:  # test workers may fetch at the same time
        fcntl.flock(lock, fcntl.LOCK_EX)
        return _fetch_all(args)


def _fetch_all(args) -> list:
    folders = []
    for spec in pins(args.corpus_file):
        folder = fetch(spec, args.dest)
        files = list(folder.rglob("*.py"))
        lines = sum(len(f.read_bytes().splitlines()) for f in files)
        print(f"{spec:28} {len(files):5} files {lines:8} lines  {folder}")
        folders.append(folder)
    return folders


if __name__ == "__main__":
    main()
