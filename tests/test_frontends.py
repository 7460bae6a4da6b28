"""The three front ends give the same findings on the same tree: `tfmigrate check`, flake8 (the
plugin) and the LSP server all go through tfmigrate.api, so each file gets the same configuration
(`native = true` here), the same cross-file facts (a module that gets `tf` through `from ops import
*`; a helper imported by a graph module) and the same room for deeply nested code (a chain of 300
method calls, past Python's default recursion limit in libcst's code generation)."""
import json
import os
import shutil
import subprocess
import sys

import pytest

from test_server import apply, start

HEAD = "import tensorflow as tf\n\n"
TREE = {
    "pyproject.toml": "[tool.tfmigrate]\nnative = true\n",
    # a re-export of TensorFlow, and a graph script that gets `tf` only through it
    "ops.py": "import tensorflow as tf\n",
    "model.py": ("from ops import *\n\nx = tf.placeholder(tf.float32, [None, 3])\ny = tf.reduce_sum(x)\n"
                 "with tf.Session() as sess:\n    print(sess.run(y, feed_dict={x: [[1.0, 2.0, 3.0]]}))\n"),
    # a graph script `fix --native` cannot rewrite (its Saver), and the helper it imports
    "train.py": (HEAD + "import utils\n\nx = tf.placeholder(tf.float32, [None, 3])\nsaver = tf.train.Saver()\n"
                 "with tf.Session() as sess:\n    sess.run(utils.total(x), feed_dict={x: [[1.0, 2.0, 3.0]]})\n"),
    "utils.py": HEAD + "\ndef total(x):\n    return tf.reduce_sum(x)\n",
    # a graph script `fix --native` rewrites as eager TF2
    "script.py": (HEAD + "x = tf.placeholder(tf.float32, [None, 3])\ny = tf.reduce_sum(x * 2.0)\n"
                  "with tf.Session() as sess:\n    print(sess.run(y, feed_dict={x: [[1.0, 2.0, 3.0]]}))\n"),
    "deep.py": HEAD + "ds = tf.data.Dataset.range(3)\ny = ds.repeat(False)" + ".map(f)" * 300 + "\n",
}
DEBT = " (migration debt: runs through tf.compat.v1)"


@pytest.fixture(scope="module")
def tree(tmp_path_factory):
    root = tmp_path_factory.mktemp("frontends")
    for name, text in TREE.items():
        (root / name).write_text(text, encoding="utf-8")
    return root


@pytest.fixture(scope="module")
def cli(tree):
    result = subprocess.run([sys.executable, "-m", "tfmigrate", "check", "--no-cache", "--format", "json", "."],
                            cwd=tree, capture_output=True, text=True)
    assert result.returncode == 1, result.stderr
    return [(f["path"], f["line"], f["column"], f["rule"], f["message"]) for f in json.loads(result.stdout)]


def test_the_tree_needs_every_fact(cli):
    """The command line's findings depend on each fact, so a front end without one differs."""
    found = {(path, rule) for path, _, _, rule, _ in cli}
    assert ("model.py", "TFM202") in found  # `tf` only through `from ops import *`
    assert ("utils.py", "TFM200") in found  # graph code because train.py imports it
    assert ("train.py", "TFM216") in found  # native = true
    assert ("deep.py", "TFM105") in found  # checked, not an internal error


def test_flake8_gives_the_cli_findings(tree, cli):
    # pyflakes (flake8's own F) would die on deep.py at the default recursion limit; tfmigrate does not.
    run = "import sys; sys.setrecursionlimit(20000); from flake8.main.cli import main; sys.exit(main())"
    result = subprocess.run([sys.executable, "-c", run, "--select", "TFM", "."], cwd=tree, capture_output=True,
                            text=True)
    assert result.returncode == 1, result.stderr
    found = []
    for line in result.stdout.splitlines():
        where, message = line.split(" ", 1)[0], line.split(" ", 2)[2]
        path, row, column, _ = where.split(":")
        found.append((os.path.normpath(path), int(row), int(column), line.split(" ")[1], message))
    assert [f[:4] for f in found] == [f[:4] for f in cli]
    for (*_, message), (*_, expected) in zip(found, cli):
        assert message.startswith(" ".join(expected.split()))


def test_the_server_gives_the_cli_findings(tree, cli):
    client, _ = start(tree)
    try:
        found = []
        for name in sorted(n for n in TREE if n.endswith(".py")):
            uri = (tree / name).as_uri()
            client.notify("textDocument/didOpen", {"textDocument": {
                "uri": uri, "languageId": "python", "version": 1, "text": TREE[name]}})
            for d in client.diagnostics(uri, 1):
                message = d["message"][:-len(DEBT)] if d["data"]["kind"] == "debt" else d["message"]
                at = d["range"]["start"]
                found.append((name, at["line"] + 1, at["character"] + 1, d["code"], message))
    finally:
        client.close()
    assert sorted(found) == sorted(cli)


def test_the_servers_fix_all_is_what_fix_writes_with_native(tree, tmp_path):
    """With `native = true`, fix all in the editor rewrites a TF1 graph script as eager TF2, as
    `tfmigrate fix` does, though no finding offers a fix (before: no fix all was offered)."""
    uri = (tree / "script.py").as_uri()
    client, _ = start(tree)
    try:
        client.notify("textDocument/didOpen", {"textDocument": {
            "uri": uri, "languageId": "python", "version": 1, "text": TREE["script.py"]}})
        diagnostics = client.diagnostics(uri, 1)
        actions = client.request("textDocument/codeAction", {
            "textDocument": {"uri": uri}, "range": diagnostics[0]["range"], "context": {"diagnostics": diagnostics}})
    finally:
        client.close()
    fix_all = next((a for a in actions if a["kind"] == "source.fixAll.tfmigrate"), None)
    assert fix_all is not None, [(a["kind"], a["title"]) for a in actions]
    edited = apply(TREE["script.py"], fix_all["edit"]["changes"][uri])
    copy = tmp_path / "copy"
    shutil.copytree(tree, copy)
    subprocess.run([sys.executable, "-m", "tfmigrate", "fix", "--no-cache", "--exit-zero", "script.py"], cwd=copy,
                   capture_output=True, check=True)
    assert edited == (copy / "script.py").read_text(encoding="utf-8")
    assert "placeholder" not in edited and "Session" not in edited and "tf.function" in edited


def test_what_no_noqa_silences_is_the_engines():
    from tfmigrate import api

    assert api.UNSILENCEABLE == {"TFM000", "TFM001", "TFM002"}


def test_the_api_imports_no_parser():
    """A cached run imports tfmigrate.api: it must not pay for libcst (issue 23)."""
    code = "import sys, tfmigrate.api, tfmigrate.frontends.flake8_plugin; print('libcst' in sys.modules)"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.stdout.strip() == "False", result.stderr
