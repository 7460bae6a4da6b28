"""Issue 14 item 8: `fix` never writes over what it should not. An edit saved while it runs, a
read-only file, a hard-linked file, a file whose owner or group would change: each is left as it
is, with a message naming the file and why, and the findings of the file as it is on disk."""
import json
import os
import stat

import pytest
from typer.testing import CliRunner

from tfmigrate.frontends.cli import app

cli = CliRunner()
GOOD = b"import tensorflow as tf\nds = tf.data.Dataset.range(3)\nds = ds.repeat(False)\n"
FIXED = b"import tensorflow as tf\nds = tf.data.Dataset.range(3)\nds = ds\n"


@pytest.fixture
def tree(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "a.py").write_bytes(GOOD)
    (tmp_path / "other.py").write_bytes(GOOD)
    return tmp_path


def fix():
    result = cli.invoke(app, ["fix", "--no-cache", "--jobs", "1", "--format", "json", "."], catch_exceptions=False)
    findings = json.loads(result.stdout)
    return result.exit_code, [(f["path"], f["rule"], f["message"]) for f in findings]


def no_temporaries(root):
    return not [f for _, _, fs in os.walk(root) for f in fs if f.endswith(".tfmigrate")]


def test_an_edit_saved_while_fix_runs_is_not_overwritten(tree, monkeypatch):
    from tfmigrate.core import engine

    real = engine.fix_source
    edited = GOOD + b"x = 1  # saved in the editor meanwhile\n"

    def fix_source(data, path, *args, **kwargs):
        result = real(data, path, *args, **kwargs)
        if path == "a.py":
            (tree / "a.py").write_bytes(edited)
        return result

    monkeypatch.setattr(engine, "fix_source", fix_source)
    code, findings = fix()
    assert (tree / "a.py").read_bytes() == edited
    assert (tree / "other.py").read_bytes() == FIXED
    assert code == 1
    assert findings[0] == ("a.py", "TFM001", (
        "Not written: the file changed on disk while tfmigrate was fixing it (an edit saved meanwhile?); "
        "run `tfmigrate fix` again. The file was left as it was (1 fix not applied)."))
    assert findings[1][:2] == ("a.py", "TFM105")  # as the file is on disk
    assert no_temporaries(tree)


def test_a_read_only_file_is_not_rewritten(tree):
    os.chmod(tree / "a.py", 0o444)
    code, findings = fix()
    assert (tree / "a.py").read_bytes() == GOOD
    assert stat.S_IMODE(os.stat(tree / "a.py").st_mode) == 0o444
    assert (tree / "other.py").read_bytes() == FIXED
    assert findings[0] == ("a.py", "TFM001", (
        "Not written: the file is read-only (mode 0444); make it writable to have it fixed. The file was left "
        "as it was (1 fix not applied)."))
    assert [f[:2] for f in findings[1:]] == [("a.py", "TFM105")]
    assert no_temporaries(tree)


def test_a_hard_linked_file_is_not_split_from_its_links(tree):
    os.link(tree / "a.py", tree / "linked_name.txt")
    code, findings = fix()
    assert (tree / "a.py").read_bytes() == GOOD
    assert os.stat(tree / "a.py").st_ino == os.stat(tree / "linked_name.txt").st_ino
    assert findings[0][:2] == ("a.py", "TFM001")
    assert findings[0][2].startswith("Not written: the file has 2 hard links, and replacing it would leave the "
                                     "other names with the old code")
    assert (tree / "other.py").read_bytes() == FIXED


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0, reason="chown needs root")
def test_owner_and_group_are_kept_when_running_as_root(tree):
    os.chown(tree / "a.py", 4321, 8765)
    code, findings = fix()
    assert code == 0, findings
    assert (tree / "a.py").read_bytes() == FIXED
    info = os.stat(tree / "a.py")
    assert (info.st_uid, info.st_gid) == (4321, 8765)


@pytest.mark.skipif(not hasattr(os, "geteuid"), reason="POSIX owners")
def test_a_file_of_another_user_is_not_taken_over(tree, monkeypatch):
    """Replacing a file in a folder one may write gives the new file to whoever runs `fix`."""
    owner = os.stat(tree / "a.py").st_uid
    monkeypatch.setattr(os, "geteuid", lambda: owner + 1)  # as if someone else ran it
    monkeypatch.setattr(os, "access", lambda path, mode, **kw: True)
    code, findings = fix()
    assert (tree / "a.py").read_bytes() == GOOD
    assert findings[0] == ("a.py", "TFM001", (
        f"Not written: the file belongs to another user (uid {owner}) and would become yours. The file was left "
        "as it was (1 fix not applied)."))
