"""scripts/behaviour_snapshot.py, the proof a refactor changed nothing: the same tree gives the
same snapshot, and a tree that tfmigrate treats differently gives another."""
import filecmp
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SCRIPT = ROOT / "scripts" / "behaviour_snapshot.py"


def snapshot(out: Path, root: Path) -> Path:
    subprocess.run([sys.executable, str(SCRIPT), str(out), str(root)], check=True, capture_output=True)
    return out


def differing(a: Path, b: Path):
    compared = filecmp.dircmp(a, b)
    return compared.diff_files + compared.left_only + compared.right_only


def test_same_tree_same_snapshot_and_a_change_shows(tmp_path):
    tree = tmp_path / "examples"
    shutil.copytree(ROOT / "examples", tree)
    first = snapshot(tmp_path / "first", tree)
    assert sorted(p.name for p in first.iterdir())[:2] == ["check_examples.err", "check_examples.json"]
    assert b'"rule"' in (first / "check_examples.json").read_bytes()
    assert differing(first, snapshot(tmp_path / "second", tree)) == []
    with open(next(tree.glob("*.py")), "a") as source:
        source.write("\nrepeated = tf.data.Dataset.range(3).repeat(True)\n")
    changed = differing(first, snapshot(tmp_path / "third", tree))
    assert "check_examples.json" in changed and "tree_safe_examples.sha" in changed
