"""Positions computed one statement at a time (tfmigrate.core.positions) equal libcst's whole-module
PositionProvider for every node, however they are asked for: prepared with the statements the
walk saw, looked up cold, or both, in any order."""
import random
from pathlib import Path

import libcst as cst
import pytest
from libcst.metadata import MetadataWrapper

from tfmigrate.facts.nodes import child_fields
from tfmigrate.core.positions import Positions, full_positions

ROOT = Path(__file__).resolve().parent.parent

TRICKY = {
    "decorators and comments": (
        "# header comment\n\n\n@dec  # c\n\n# between\n@other(1,\n       2)\ndef f(a,\n      b):\n"
        "    # lead\n    return a  # t\n\n\n# before class\nclass A(B):\n    @property\n"
        "    def x(self): return 1\n\n    def y(self):\n        if self:\n            pass\n"
    ),
    "elif else try finally": (
        "if a:\n    x = 1\nelif b:\n    # c\n    y = tf.placeholder(tf.float32)\nelif c:\n    pass\n"
        "else:\n    z = 3\ntry:\n    q()\nexcept (A, B) as e:\n    r(e)\nexcept C:\n    pass\n"
        "else:\n    s()\nfinally:\n    t()\nfor i in x:\n    u(i)\nelse:\n    v()\n"
        "while w:\n    break\nelse:\n    pass\n"
    ),
    "semicolons and one-line suites": "a = 1; b = tf.Session(); c = 3\nif x: y = 1; z = 2\nclass K: pass\n",
    "async and with": (
        "async def f():\n    async with a as b, c:\n        async for i in b:\n"
        "            await g(i)\n    with tf.variable_scope('s'):\n        w = 1\n"
    ),
    "match": (
        "match command.split():\n    case [action]:\n        go(action)\n"
        "    case [action, obj] if obj:\n        # comment\n        take(obj)\n    case _:\n        pass\n"
    ),
    "tabs crlf and form feed": "if a:\r\n\tb = 1\r\n\tif c:\r\n\t\td = tf.layers.dense(x, 2)\r\n\x0c\r\ne = 5\r\n",
    "continuations and strings": (
        'x = """a\nb\nc"""\ny = f(1,\n      2) + \\\n    3\n'
        "def g():\n    s = ('a'\n         'b')\n    return s\n"
    ),
    "nested classes and lambdas": (
        "class A:\n    class B:\n        def c(self):\n            return lambda q: [i for i in q]\n"
        "    d = 1\n"
    ),
    "no final newline": "import tensorflow as tf\nx = tf.Session()",
    "bom and cookie": "\ufeff# -*- coding: utf-8 -*-\nimport tensorflow as tf\nx = 'é'\n",
    # Lines that begin at a block's indentation without beginning a statement (placing by the
    # source's lines must not be misled by them: the positions still equal the whole module's).
    "continuation at column 0": "x = [\n1, 2]\ny = tf.Session()\nz = 1 + \\\n2\nw = tf.placeholder(tf.float32)\n",
    "docstrings with text at the block's indentation": (
        '"""Module.\n\nText at column 0.\n"""\nimport tensorflow as tf\n\n\ndef f(x):\n    """Doc.\n\n'
        '    Args:\n      x: a tensor.\n    """\n    return tf.layers.dense(x, 2)\n'
    ),
    "closing brackets and decorators over lines": (
        "def f():\n    x = foo(\n        a,\n    )\n    return tf.Session()\n"
        "@d\n@e(\n1)\ndef g():\n    return tf.placeholder(tf.int32)\n"
    ),
    "code text inside a string": (
        "s = '''\ndef g():\n    return tf.Session()\n'''\ndef g():\n    return tf.Session()\n"
    ),
    "blocks of one statement indented apart": (
        "if a:\n    b = 1\nelse:\n  c = tf.Session()\ntry:\n\tpass\nexcept E:\n\td = tf.Session()\n"
    ),
}


def _nodes_with_statements(module):
    """(statements around the node, node) for every node, as the engine's walk would see them."""
    out = []

    def visit(node, statements):
        for name in child_fields(type(node)):
            value = getattr(node, name)
            kids = value if type(value) in (list, tuple) else [value]
            for kid in kids:
                if not isinstance(kid, cst.CSTNode):
                    continue
                inner = statements + [kid] if isinstance(node, (cst.Module, cst.IndentedBlock)) else statements
                out.append((inner, kid))
                visit(kid, inner)

    visit(module, [])
    return out


def _sources():
    files = sorted((ROOT / "tests" / "fixtures").rglob("*.py")) + sorted((ROOT / "examples").rglob("*.py"))
    return [(name, text.encode("utf-8")) for name, text in TRICKY.items()] + [
        (str(p.relative_to(ROOT)), p.read_bytes()) for p in files
    ]


@pytest.mark.parametrize("name,data", _sources(), ids=lambda v: v if isinstance(v, str) else "")
def test_positions_match_the_whole_module_generation(name, data):
    try:
        module = cst.parse_module(data)
    except cst.ParserSyntaxError:
        pytest.skip("does not parse (a TFM001 fixture)")
    full = full_positions(MetadataWrapper(module, unsafe_skip_copy=True))
    pairs = _nodes_with_statements(module)
    rnd = random.Random(name)
    for order in range(3):
        lazy = Positions(module, data)
        sample = rnd.sample(pairs, min(25, len(pairs)))
        if order < 2:
            lazy.prepare(sample)
        lookups = pairs if order == 0 else list(reversed(pairs))
        for _, node in lookups:
            assert lazy[node] == full[node], (type(node).__name__, order)
        assert not lazy._whole, "fell back to the whole module without need"


def test_a_node_outside_every_statement_falls_back_to_the_whole_module():
    data = b"# only a comment\nimport tensorflow as tf\n"
    module = cst.parse_module(data)
    comment = module.header[0].comment
    lazy = Positions(module, data)
    assert lazy[comment] == full_positions(MetadataWrapper(module, unsafe_skip_copy=True))[comment]


def test_prepare_stops_at_the_wanted_node_and_the_rest_still_comes_right():
    data = b"with tf.variable_scope('a'):\n" + b"".join(b"    x%d = tf.get_variable('v%d')\n" % (i, i) for i in range(50))
    module = cst.parse_module(data)
    full = full_positions(MetadataWrapper(module, unsafe_skip_copy=True))
    with_stmt = module.body[0]
    call = with_stmt.items[0].item
    lazy = Positions(module, data)
    lazy.prepare([([with_stmt], call)])
    assert len(lazy._computed) < 20, "generated the whole block for a node in the header"
    assert with_stmt not in lazy._computed, "a cut-short range was kept"
    assert lazy[call] == full[call] and lazy[with_stmt] == full[with_stmt]
    last = with_stmt.body.body[-1]
    assert lazy[last] == full[last]


def test_statements_are_placed_from_the_source_lines_without_cpython_s_parser():
    data = (b"import tensorflow as tf\n\n\n@tf.function\ndef f(x):\n    if x:\n        y = tf.Session()\n"
            b"    else:\n        y = tf.placeholder(tf.float32)\n    return y\n")
    module = cst.parse_module(data)
    full = full_positions(MetadataWrapper(module, unsafe_skip_copy=True))
    pairs = _nodes_with_statements(module)
    lazy = Positions(module, data)
    lazy.prepare(pairs)
    for _, node in pairs:
        assert lazy[node] == full[node]
    assert lazy._tree is None, "CPython's parser was asked"
    assert lazy.cpython_parses and lazy._tree is not None  # asked when wanted


def test_misleading_lines_fall_back_to_cpython_s_parser():
    data = b"x = [\n1, 2]\ny = tf.Session()\n"
    module = cst.parse_module(data)
    call = module.body[1].body[0].value
    lazy = Positions(module, data)
    lazy.prepare([([module.body[1]], call)])
    assert lazy._tree is not None  # three lines begin at column 0 for two statements: ast placed it
    assert lazy[call] == full_positions(MetadataWrapper(module, unsafe_skip_copy=True))[call]
