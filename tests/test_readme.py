"""The README's output examples are real: every `<!-- example -->` block is a shell session whose
commands run here (scripts/update_readme.py: a fresh folder with a copy of `examples/`, an
80-column terminal, the temporary folder read as `/repo`) and whose output must be what the README
shows. When the tool changes, `python scripts/update_readme.py` rewrites them."""
import difflib
import importlib.util
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _generator():
    spec = importlib.util.spec_from_file_location("update_readme", ROOT / "scripts" / "update_readme.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_readme_examples_are_the_real_output():
    generator = _generator()
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    blocks = generator.EXAMPLE.findall(text)
    assert len(blocks) >= 10  # the examples are marked, so none escapes the check
    new = generator.examples(text, sys.executable)
    if new != text:
        diff = "".join(difflib.unified_diff(text.splitlines(True), new.splitlines(True), "README.md", "real output"))
        raise AssertionError("README examples differ from the real output; run "
                             "`.venv/bin/python scripts/update_readme.py` and read the diff:\n" + diff)


def test_every_format_example_shows_the_paths_as_printed():
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    for fmt in ("concise", "github", "json-lines", "junit", "sarif"):
        assert f"$ tfmigrate check --format {fmt}" in text
    assert "file=tf1_classifier.py" not in text and '"path": "tf1_classifier.py"' not in text
    assert "unknown key 'selec' in [tool.tfmigrate]" in text


def test_the_abridging_comment_is_honest():
    generator = _generator()
    output = "\n".join(str(i) for i in range(1, 11))
    assert generator._abridge(output, "cmd   # first 2 lines") == "1\n2\n..."
    assert generator._abridge(output, "cmd   # first 1 and last 2 lines") == "1\n...\n9\n10"
    assert generator._abridge(output, "cmd   # last 1 line") == "...\n10"
    assert generator._abridge(output, "cmd   # first 20 lines") == output
    assert generator._abridge(output, "cmd") == output
