"""Notebooks: cells as one module, findings named by cell, magics kept, and a fix that rewrites only
the fixed cells' "source" bytes (outputs, metadata, layout and escapes untouched)."""
import json

import pytest
from typer.testing import CliRunner

from tfmigrate.catalogue import catalogue
from tfmigrate.frontends.cli import app
from tfmigrate.workspace.notebooks import check_notebook, fix_notebook

CODES = [c for c in catalogue() if c != "TFM002"]


def code(source, outputs=(), count=None, form="list"):
    if form == "list":
        source = source.splitlines(keepends=True)
    return {"cell_type": "code", "execution_count": count, "metadata": {}, "outputs": list(outputs), "source": source}


def markdown(text):
    return {"cell_type": "markdown", "metadata": {"tags": ["intro"]}, "source": text.splitlines(keepends=True)}


OUTPUT = {"name": "stdout", "output_type": "stream", "text": ["é ✓ 1\n", "<tf.Tensor ...>\n"]}
PNG = {"output_type": "display_data", "data": {"image/png": "iVBORw0KGgo=\n", "text/plain": ["<Figure>"]}, "metadata": {}}


def notebook(*cells, **dumps):
    nb = {
        "cells": list(cells),
        "metadata": {"kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"}},
        "nbformat": 4,
        "nbformat_minor": 5,
    }
    options = {"indent": 1, "sort_keys": True, "ensure_ascii": False, **dumps}  # as nbformat writes
    return (json.dumps(nb, **options) + "\n").encode("utf-8")


def brief(findings):
    return [(f.rule, f"cell {f.cell}", f.line, f.column) for f in findings]


BASIC = notebook(
    markdown("# Training\nwith ünïcode\n"),
    code("import tensorflow as tf\n", count=1),
    code("ds = tf.data.Dataset.range(3)\nprint(ds)\n", outputs=[OUTPUT, PNG], count=2),
    code("once = ds.shuffle(3).repeat(False)\nforever = ds.repeat(True)\n", count=3),
)


def test_findings_name_the_cell_and_the_line_in_it():
    findings = check_notebook(BASIC, "nb.ipynb", CODES)
    assert brief(findings) == [("TFM105", "cell 4", 1, 22), ("TFM105", "cell 4", 2, 14)]
    assert all(f.path == "nb.ipynb" for f in findings)
    assert findings[0].message.startswith("`repeat(False)`")


def test_fix_rewrites_only_the_fixed_cell_source():
    result = fix_notebook(BASIC, "nb.ipynb", CODES, unsafe=False)
    assert result.applied == 1
    old = b'"once = ds.shuffle(3).repeat(False)\\n",'
    new = b'"once = ds.shuffle(3)\\n",'
    assert BASIC.count(old) == 1
    assert result.fixed == BASIC.replace(old, new)
    assert brief(result.findings) == [("TFM105", "cell 4", 2, 14)]  # the unsafe one stays
    before, after = json.loads(BASIC), json.loads(result.fixed)
    assert after["metadata"] == before["metadata"]
    for old_cell, new_cell in zip(before["cells"], after["cells"]):
        assert {k: v for k, v in old_cell.items() if k != "source"} == {k: v for k, v in new_cell.items() if k != "source"}
    assert fix_notebook(result.fixed, "nb.ipynb", CODES, unsafe=False).fixed is None  # a fixed point


@pytest.mark.parametrize(
    "dumps",
    [{"indent": 2, "sort_keys": False, "ensure_ascii": True}, {"indent": None}, {"indent": 4, "ensure_ascii": True}],
    ids=["colab-like", "one-line", "ascii-indent4"],
)
def test_other_writers_layouts_are_kept(dumps):
    data = notebook(markdown("ünï\n"), code("import tensorflow as tf\nds = tf.data.Dataset.range(3).repeat(False)\n# é\n", outputs=[OUTPUT]), **dumps)
    fixed = fix_notebook(data, "nb.ipynb", CODES, unsafe=False).fixed
    spelled = json.dumps("ds = tf.data.Dataset.range(3).repeat(False)\n", ensure_ascii=False).encode()
    assert fixed == data.replace(spelled, spelled.replace(b".repeat(False)", b""))


def test_crlf_bom_and_string_sources_are_kept():
    data = notebook(code("import tensorflow as tf\nd = tf.data.Dataset.range(3).repeat(False)", form="string"))
    data = b"\xef\xbb\xbf" + data.replace(b"\n", b"\r\n")
    fixed = fix_notebook(data, "nb.ipynb", CODES, unsafe=False).fixed
    assert fixed == data.replace(b"d = tf.data.Dataset.range(3).repeat(False)", b"d = tf.data.Dataset.range(3)")


def test_an_empty_source_list_gets_the_files_layout():
    cells = [code("import tensorflow as tf\n"), code("d = tf.data.Dataset.range(3).repeat(False)\n")]
    data = notebook(*cells)
    fixed = fix_notebook(data, "nb.ipynb", CODES, unsafe=False).fixed
    assert b'   "source": [\n    "d = tf.data.Dataset.range(3)\\n"\n   ]' in fixed


MAGICS = notebook(
    code("%matplotlib inline\n%load_ext autoreload\n!pip install x\nimport tensorflow as tf\n?tf.data\ntf.data.Dataset?\nfiles = !ls *.tfrecord\n"),
    code("%%time\nds = tf.data.Dataset.range(3)\nfor i in range(2):\n    %time ds.repeat(False)\nd = (ds\n     .repeat(False))\n"),
    code("%%bash\necho 'tf.data.Dataset.range(3).repeat(False)'\n"),
    code("%%writefile train.py\nimport tensorflow as tf\nds = tf.data.Dataset.range(3).repeat(False)\n"),
    code("x = ds.repeat(False)  # after the magics\n"),
)


def test_magics_do_not_break_parsing_and_come_back_byte_for_byte():
    assert brief(check_notebook(MAGICS, "nb.ipynb", CODES)) == [
        ("TFM105", "cell 2", 6, 7),
        ("TFM105", "cell 5", 1, 8),
    ]
    result = fix_notebook(MAGICS, "nb.ipynb", CODES, unsafe=False)
    cells = json.loads(result.fixed)["cells"]
    originals = json.loads(MAGICS)["cells"]
    assert cells[0] == originals[0]
    assert "".join(cells[1]["source"]) == "%%time\nds = tf.data.Dataset.range(3)\nfor i in range(2):\n    %time ds.repeat(False)\nd = (ds)\n"
    assert cells[2:4] == originals[2:4]  # cell magics other than %%time & co are not Python
    assert cells[4]["source"] == ["x = ds  # after the magics\n"]
    assert result.findings == []


def test_a_cell_that_does_not_parse_is_reported_and_the_others_are_still_checked_and_fixed():
    data = notebook(
        code("import tensorflow as tf\n"),
        markdown("notes"),
        code("print 'hello'\nds.repeat(False)\n"),
        code("ds = tf.data.Dataset.range(3).repeat(False)\n"),
        code("def broken(:\n"),
    )
    assert brief(check_notebook(data, "nb.ipynb", CODES)) == [
        ("TFM001", "cell 3", 1, 1),
        ("TFM105", "cell 4", 1, 31),
        ("TFM001", "cell 5", 1, 12),
    ]
    assert "Cannot parse this cell" in check_notebook(data, "nb.ipynb", CODES)[0].message
    result = fix_notebook(data, "nb.ipynb", CODES, unsafe=False)
    cells = json.loads(result.fixed)["cells"]
    assert cells[2] == json.loads(data)["cells"][2]
    assert cells[3]["source"] == ["ds = tf.data.Dataset.range(3)\n"]
    assert [f.rule for f in result.findings] == ["TFM001", "TFM001"]


def test_a_fix_that_removes_lines_keeps_later_cells_in_place():
    data = notebook(
        code("import tensorflow as tf\nds = (tf.data.Dataset.range(3)\n      .shuffle(3)\n      .repeat(False)\n      .batch(2))\n"),
        code("again = ds.repeat(True)\n"),
    )
    result = fix_notebook(data, "nb.ipynb", CODES, unsafe=False)
    cells = json.loads(result.fixed)["cells"]
    assert "".join(cells[0]["source"]).count("repeat") == 0
    assert cells[1] == json.loads(data)["cells"][1]
    assert brief(result.findings) == [("TFM105", "cell 2", 1, 12)]
    unsafe = fix_notebook(data, "nb.ipynb", CODES, unsafe=True)
    assert unsafe.findings == [] and unsafe.applied == 2


@pytest.mark.parametrize(
    "data, reason",
    [
        (b"{ tensorflow", "not JSON"),
        (b'["tensorflow"]', 'no "cells" list'),
        (b'{"worksheets": [], "nbformat": 3, "x": "tensorflow"}', "nbformat 3"),
        (b'{"cells": [{"cell_type": "code", "source": 3}], "x": "tensorflow"}', "not text"),
        (b'{"cells": ["tensorflow"]}', "not an object"),
        (b"\xff\xfe tensorflow", "not UTF-8"),
    ],
)
def test_bad_notebooks_are_a_finding_never_a_crash(data, reason):
    for findings in (check_notebook(data, "nb.ipynb", CODES), fix_notebook(data, "nb.ipynb", CODES).findings):
        assert [f.rule for f in findings] == ["TFM001"]
        assert "not a valid notebook" in findings[0].message and reason in findings[0].message
    assert fix_notebook(data, "nb.ipynb", CODES).fixed is None


@pytest.mark.parametrize(
    "data",
    [
        notebook(markdown("tensorflow only in prose")),
        notebook(),
        notebook(code("print('no tf here')\n"), markdown("tensorflow")),
        b"not json and never mentions the library",
    ],
)
def test_notebooks_without_tensorflow_code_have_no_findings(data):
    assert check_notebook(data, "nb.ipynb", CODES) == []
    assert fix_notebook(data, "nb.ipynb", CODES).fixed is None


def test_cli_checks_and_fixes_notebooks(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "nb.ipynb").write_bytes(BASIC)
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "other.ipynb").write_bytes(MAGICS)
    runner = CliRunner()
    result = runner.invoke(app, ["check", "nb.ipynb", "--format", "json", "--no-cache"])
    assert result.exit_code == 1
    rows = json.loads(result.stdout)
    assert [(r["rule"], r["path"], r["cell"], r["line"], r["message"][:9]) for r in rows] == [
        ("TFM105", "nb.ipynb", 4, 1, "`repeat(F"),
        ("TFM105", "nb.ipynb", 4, 2, "`repeat(T"),
    ]
    rich = runner.invoke(app, ["check", "--no-cache"])  # directories find notebooks too
    assert rich.exit_code == 1 and "cell 4:" in rich.stdout and "other.ipynb" in rich.stdout
    diff = runner.invoke(app, ["fix", "nb.ipynb", "--diff", "--no-cache"])
    assert diff.exit_code == 1 and '-    "once = ds.shuffle(3).repeat(False)\\n",' in diff.stdout
    fixed = runner.invoke(app, ["fix", "."])
    assert fixed.exit_code == 1  # repeat(True) needs --unsafe-fixes
    assert (tmp_path / "nb.ipynb").read_bytes() == fix_notebook(BASIC, "nb.ipynb", CODES).fixed
    assert runner.invoke(app, ["fix", ".", "--unsafe-fixes"]).exit_code == 0
    assert runner.invoke(app, ["check", "."]).exit_code == 0
    assert json.loads((tmp_path / "nb.ipynb").read_bytes())["cells"][2]["outputs"] == [OUTPUT, PNG]
