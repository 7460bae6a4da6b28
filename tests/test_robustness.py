"""Safe on anything: every input class gets a clear per-file message, the run goes on, and the
exit code is the documented one (1 when something was reported, 0 when not)."""
import json
import os
import stat

import pytest
from typer.testing import CliRunner

from tfmigrate.workspace import runner as runner_module
from tfmigrate.frontends.cli import app

cli = CliRunner()
GOOD = b"import tensorflow as tf\nds = tf.data.Dataset.range(3).repeat(False)\n"


def check(*args):
    result = cli.invoke(app, ["check", "--format", "json", "--no-cache", "--jobs", "1", *args], catch_exceptions=False)
    return result.exit_code, json.loads(result.stdout or "[]")


@pytest.fixture
def tree(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "good.py").write_bytes(GOOD)
    return tmp_path


PY2 = {
    "print_statement.py": (b"import tensorflow as tf\nprint 'loss', 1\n", "Missing parentheses in call to 'print'"),
    "except_comma.py": (b"import tensorflow as tf\ntry:\n    pass\nexcept ValueError, e:\n    pass\n", "multiple exception types must be parenthesized"),
    "backticks.py": (b"import tensorflow as tf\nx = `1`\n", "invalid syntax"),
    "async_name.py": (b"import tensorflow as tf\nasync = 1\n", "invalid syntax"),
    "syntax_error.py": (b"import tensorflow as tf\ndef f(:\n    pass\n", "invalid syntax"),
    "null_bytes.py": (b"import tensorflow as tf\nx = 1\x00\n", "it contains a NUL byte (line 2)"),
    # Accepted by libcst, refused by CPython: each carries a fixable finding that must not be written.
    "nul_in_comment.py": (GOOD + b"# \x00\n", "it contains a NUL byte (line 3)"),
    "return_outside.py": (GOOD + b"return ds\n", "'return' outside function"),
    "yield_outside.py": (GOOD + b"yield ds\n", "'yield' outside function"),
    "break_outside.py": (GOOD + b"break\n", "'break' outside loop"),
    "nonlocal_module.py": (b"nonlocal x\n" + GOOD, "nonlocal declaration not allowed at module level"),
    "utf16.py": (GOOD.decode().encode("utf-16"), "it is encoded as UTF-16"),
    "utf16_be.py": (b"\xfe\xff" + GOOD.decode().encode("utf-16-be"), "it is encoded as UTF-16"),
    "utf32.py": (GOOD.decode().encode("utf-32"), "it is encoded as UTF-32"),
    "binary.py": (bytes(range(256)) * 4 + b"tensorflow", "Cannot parse this file"),
    "bad_utf8.py": (b"import tensorflow as tf\nx = '\xff\xfe'\n", "Cannot parse this file"),
    "bad_cookie.py": (b"# -*- coding: no-such-codec -*-\nimport tensorflow\n", "Cannot parse this file"),
    # Only the encoding is wrong (a Latin-1 comment, none declared): say so, and how to declare it.
    "latin1_undeclared.py": (b"import tensorflow as tf\n# caf\xe9\n", "byte 0xe9 on line 2 is not UTF-8, and the "
                             "file declares no encoding (Python 3 reads undeclared source as UTF-8). If it is "
                             "Latin-1, declare it on the first or second line with `# -*- coding: latin-1 -*-`"),
    "utf8_declared_bad.py": (b"# coding: utf-8\nimport tensorflow\n# caf\xe9\n", "Save it in the encoding it declares"),
}


@pytest.mark.parametrize("name", sorted(PY2))
def test_unparseable_files_are_reported_and_the_run_goes_on(tree, name):
    data, words = PY2[name]
    (tree / name).write_bytes(data)
    code, findings = check()
    assert code == 1
    by_path = {f["path"]: f for f in findings}
    assert by_path["good.py"]["rule"] == "TFM105"
    assert by_path[name]["rule"] == "TFM001"
    assert words in by_path[name]["message"], by_path[name]["message"]
    before = (tree / name).read_bytes()
    cli.invoke(app, ["fix", "--unsafe-fixes", "--no-cache"])
    assert (tree / name).read_bytes() == before  # never touched, never truncated
    assert (tree / "good.py").read_bytes() == b"import tensorflow as tf\nds = tf.data.Dataset.range(3)\n"


def test_empty_comment_only_and_huge_generated_files(tree):
    (tree / "empty.py").write_bytes(b"")
    (tree / "comment.py").write_bytes(b"# import tensorflow as tf\n")
    blob = b"A" * (5 * 1024 * 1024)
    (tree / "generated_pb2.py").write_bytes(b"import tensorflow as tf\nDESCRIPTOR = b'" + blob + b"'\nds = tf.data.Dataset.range(1).repeat(False)\n")
    code, findings = check()
    assert code == 1
    assert sorted((f["path"], f["rule"]) for f in findings) == [("generated_pb2.py", "TFM105"), ("good.py", "TFM105")]


ENCODINGS = {
    "latin1.py": b"# -*- coding: latin-1 -*-\nimport tensorflow as tf\n# caf\xe9\nds = tf.data.Dataset.range(3).repeat(False)\n",
    "bom.py": b"\xef\xbb\xbfimport tensorflow as tf\nds = tf.data.Dataset.range(3).repeat(False)\n",
    "crlf.py": b"import tensorflow as tf\r\n\r\nds = tf.data.Dataset.range(3).repeat(False)\r\n",
    "mixed.py": b"import tensorflow as tf\r\nx = 1\nds = tf.data.Dataset.range(3).repeat(False)\r\ny = 2\n",
    "tabs.py": b"import tensorflow as tf\nif True:\n\tds = tf.data.Dataset.range(3).repeat(False)\n",
    "formfeed.py": b"import tensorflow as tf\n\x0c\nds = tf.data.Dataset.range(3).repeat(False)\n",
    "no_newline.py": b"import tensorflow as tf\nds = tf.data.Dataset.range(3).repeat(False)",
}


@pytest.mark.parametrize("name", sorted(ENCODINGS))
def test_fix_keeps_encoding_bom_and_line_endings(tree, name):
    data = ENCODINGS[name]
    (tree / name).write_bytes(data)
    code, findings = check(name)
    assert [f["rule"] for f in findings] == ["TFM105"]
    cli.invoke(app, ["fix", name, "--no-cache"])
    assert (tree / name).read_bytes() == data.replace(b".repeat(False)", b"")


def test_unreadable_file(tree, monkeypatch):
    (tree / "secret.py").write_bytes(GOOD)
    real_open = open

    def guarded(path, *args, **kwargs):
        if str(path).endswith("secret.py"):
            raise PermissionError(13, "Permission denied")
        return real_open(path, *args, **kwargs)

    monkeypatch.setattr("builtins.open", guarded)
    code, findings = check()
    by_path = {f["path"]: f for f in findings}
    assert by_path["secret.py"]["rule"] == "TFM001"
    assert "Cannot read this file: Permission denied" in by_path["secret.py"]["message"]
    assert by_path["good.py"]["rule"] == "TFM105"


def test_directory_named_like_a_file_symlinks_and_odd_names(tree):
    (tree / "x.py").mkdir()
    (tree / "x.py" / "inner.py").write_bytes(GOOD)
    (tree / "loop").mkdir()
    os.symlink("..", tree / "loop" / "up")  # a link loop: never followed
    outside = tree.parent / f"{tree.name}_outside"
    outside.mkdir()
    (outside / "far.py").write_bytes(GOOD)
    os.symlink(outside, tree / "link_to_dir")  # a link out of the tree: not followed
    os.symlink(tree / "good.py", tree / "alias.py")  # a file link: the same file, checked once
    (tree / "dir with space é").mkdir()
    (tree / "dir with space é" / "ünïcode.py").write_bytes(GOOD)
    os.mkfifo(tree / "pipe.py")  # never opened: it would block
    code, findings = check()
    paths = sorted(f["path"] for f in findings)
    assert paths == sorted(["alias.py", os.path.join("dir with space é", "ünïcode.py"), os.path.join("x.py", "inner.py")])
    cli.invoke(app, ["fix", "--no-cache"])
    assert os.path.islink(tree / "alias.py")  # written through the link, never replaced by a file
    assert (tree / "good.py").read_bytes() == b"import tensorflow as tf\nds = tf.data.Dataset.range(3)\n"


def test_a_file_deleted_during_the_run(tree, monkeypatch):
    (tree / "vanishing.py").write_bytes(GOOD)
    real = runner_module.process

    def process(task):
        if task.path.endswith("vanishing.py"):
            os.unlink(task.path)
        return real(task)

    monkeypatch.setattr(runner_module, "process", process)
    code, findings = check()
    by_path = {f["path"]: f for f in findings}
    assert "No such file or directory" in by_path["vanishing.py"]["message"]
    assert by_path["good.py"]["rule"] == "TFM105"


def test_a_file_deleted_between_reading_and_writing(tree, monkeypatch):
    from tfmigrate.core import engine

    real = engine.fix_source

    def fix_source(data, path, *args, **kwargs):
        result = real(data, path, *args, **kwargs)
        os.unlink(path)
        return result

    monkeypatch.setattr(engine, "fix_source", fix_source)
    result = cli.invoke(app, ["fix", "--no-cache", "--jobs", "1", "--format", "json"], catch_exceptions=False)
    findings = json.loads(result.stdout)
    assert "Cannot write the fixed file" in findings[0]["message"]
    assert not [p for p in os.listdir(tree) if p.endswith(".tfmigrate")]


def test_the_checked_code_is_never_imported_or_run(tree):
    marker = tree / "ran.txt"
    (tree / "evil.py").write_text(
        f"import tensorflow as tf\nopen({str(marker)!r}, 'w').write('ran')\nds = tf.data.Dataset.range(3).repeat(False)\n"
    )
    check()
    cli.invoke(app, ["fix", "--no-cache"])
    assert not marker.exists()


def test_fixed_files_keep_their_mode(tree):
    os.chmod(tree / "good.py", 0o750)
    cli.invoke(app, ["fix", "--no-cache"])
    assert stat.S_IMODE(os.stat(tree / "good.py").st_mode) == 0o750
