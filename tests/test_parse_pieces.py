"""A large file is parsed a run of top-level statements at a time (core.source.parse_in_pieces):
the module must be the one libcst's whole parse gives, node for node, or the file is parsed whole."""
from pathlib import Path

import libcst as cst
import pytest

from tfmigrate.core import source

ROOT = Path(__file__).resolve().parent.parent
FIELDS = ("encoding", "default_indent", "default_newline", "has_trailing_newline")

CASES = {
    "comments and blank lines between statements": (
        "# header\n\nimport tensorflow as tf\n\n\ndef f():\n    pass\n    # indented after\n\n# col0\n\n"
        "@tf.function\n@other(\n    1)\ndef g(x):\n    return x\n\n\nclass A:\n    y = 1\n# trailing\n"
    ),
    "two-space indentation, first pieces without a block": (
        "import os\nimport sys\nX = 1\n\nif X:\n  Y = 2\nelse:\n  Y = 3\n\n\ndef f():\n  return 1\n"
    ),
    "one-line compound statements and semicolons": (
        "a = 1; b = 2\nif a: pass\nfor i in x: print(i)\ntry: pass\nexcept E: pass\nwhile 0: break\n"
        "def h(): return 1\nclass B: pass\n"
    ),
    "a declared utf-8 encoding and non-ASCII text": "# -*- coding: utf-8 -*-\nS = 'é'\n\n\ndef f():\n    return 'ü'\n",
    "no trailing newline": "import x\n\ndef f():\n    return 1",
    "trailing blank lines and comments": "import x\n\ndef f():\n    return 1\n\n\n# end\n\n",
    "a comment indented less than the block (no cut there)": (
        "import x\n\ndef f():\n    pass\n  # c\n\ny = 1\n\n\nz = 2\n"
    ),
    "tabs": "import x\n\nif x:\n\ty = 1\n\n\ndef f():\n\treturn 2\n",
    "statements continued over lines": "x = (1,\n     2)\ny = \\\n    3\nz = '''a\nb'''\n\n\ndef f():\n    pass\n",
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_pieces_give_the_whole_parse(name):
    data = CASES[name].encode("utf-8")
    whole = cst.parse_module(data)
    pieces = source.parse_in_pieces(data, piece_bytes=1)  # cut wherever it may
    assert pieces is not None
    assert pieces.deep_equals(whole)
    assert pieces.code == whole.code
    assert [getattr(pieces, f) for f in FIELDS] == [getattr(whole, f) for f in FIELDS]


@pytest.mark.parametrize("data", [
    b"import x\r\n\r\ndef f():\r\n    pass\r\n",  # CRLF
    b"# -*- coding: latin-1 -*-\nx = '\xe9'\n\ny = 1\n",  # another encoding
    b"\xef\xbb\xbfimport x\n\ny = 1\n",  # byte order mark
    b"print 'python 2'\n\nx = 1\n",  # CPython refuses it: the whole parse reports it
    b"def f():\n    pass\n",  # one statement: nothing to cut
    b"def f():\n    pass\n  # a comment indented less than the block\ny = 1\n",  # no clean cut
    b"x = 1\n    # an indented comment\ny = 2\n",  # no clean cut
])
def test_files_it_cannot_vouch_for_are_parsed_whole(data):
    assert source.parse_in_pieces(data, piece_bytes=1) is None


def test_the_project_fixtures_and_examples_give_the_whole_parse():
    seen = 0
    for path in sorted([*(ROOT / "tests" / "fixtures").rglob("*.py"), *(ROOT / "examples").rglob("*.py")]):
        data = path.read_bytes()
        pieces = source.parse_in_pieces(data, piece_bytes=1)
        if pieces is None:
            continue
        seen += 1
        assert pieces.deep_equals(cst.parse_module(data)), path
    assert seen > 20


def test_a_large_file_is_parsed_in_pieces_by_parse(monkeypatch):
    block = "\n\ndef model_{i}(x):\n    h = tf.reduce_sum(x, axis=1, keep_dims=True)\n    return h\n"
    data = ("import tensorflow as tf\n" + "".join(block.format(i=i) for i in range(3000))).encode()
    assert len(data) > source.PIECES_FROM
    calls = []
    original = source.parse_in_pieces
    monkeypatch.setattr(source, "parse_in_pieces", lambda d: calls.append(len(d)) or original(d))
    module = source.parse(data)
    assert calls == [len(data)]
    assert module.deep_equals(cst.parse_module(data))


LITERALS = {
    "rows of a table over lines, a trailing comma": "import tensorflow as tf\nDATA = [\n" + "".join(
        f"    [{i}.5, -{i}, 'r{i}'],\n" for i in range(40)) + "]\nx = tf.constant(DATA)\n",
    "one line, no trailing comma": "DATA = [" + ", ".join(str(i) for i in range(200)) + "]\n",
    "comments and blank lines between elements": "X = [\n    1,  # one\n\n    # two\n    2 ,\n    3\n    ,4\n  ]  # end\n",
    "a dict over lines": "VOCAB = {\n" + "".join(f"    'w{i}': {i},\n" for i in range(60)) + "}\n",
    "a set, an annotation, an expression statement": "S: set = {1, 2, 3, 4}\n[5, 6, 7, 8]\n",
    "nested literals and strings with commas": "T = [[1, [2, 3]], {'a, b': (4, 5)}, 'x, y', 'z' 'w', -6, f'{7}']\n",
    "after comments, before code": "# header\n\nN = [1, 2, 3]\n\n\n# between\nM = 4\n",
}


@pytest.mark.parametrize("name", sorted(LITERALS))
@pytest.mark.parametrize("piece_bytes", [1, 16, 10**6])
def test_a_large_literal_parsed_a_run_of_elements_at_a_time_gives_the_whole_parse(name, piece_bytes):
    data = LITERALS[name].encode("utf-8")
    pieces = source.parse_in_pieces(data, piece_bytes=piece_bytes)
    if piece_bytes == 10**6:  # nothing is large
        assert pieces is None
        return
    assert pieces is not None and pieces.deep_equals(cst.parse_module(data)) and pieces.code == LITERALS[name]


@pytest.mark.parametrize("data", [
    b"X = [(1), 2, 3]\n",  # a parenthesized element: the span CPython gives leaves its parentheses out
    b"X = {**a, 'b': 1}\n",  # `**`: in no element's span
    b"X = [1, 2]; Y = 3\n",  # two statements on the line
])
def test_a_literal_it_cannot_vouch_for_is_parsed_whole(data):
    from tfmigrate.core import literals

    pieces = source.parse_in_pieces(data, piece_bytes=1)
    assert pieces is None or pieces.deep_equals(cst.parse_module(data))
    tree = __import__("ast").parse(data).body[0]
    found = literals.element_spans(tree, lambda line, column: column)
    assert found is None or literals.parse_literal(data, *found, run_bytes=1) is None
