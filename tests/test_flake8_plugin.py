"""The flake8 plugin (entry point `TFM`), run by the real flake8 in a subprocess: the same
findings as `tfmigrate check`, the same configuration, flake8's own selection and noqa on top,
and no TensorFlow import."""
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import flake8  # noqa: F401,E402 - in the test extra: a missing flake8 fails, never skips

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"


def run(*args, cwd):
    return subprocess.run([sys.executable, "-m", "flake8", *args], cwd=cwd, capture_output=True, text=True)


def tfmigrate(*args, cwd):
    return subprocess.run([sys.executable, "-m", "tfmigrate", *args], cwd=cwd, capture_output=True, text=True)


@pytest.fixture
def project(tmp_path):
    shutil.copytree(EXAMPLES, tmp_path / "examples")
    return tmp_path


def locations(text: str):
    return [tuple(line.split(" ", 2)[:2]) for line in text.splitlines()]


def test_the_plugin_is_registered():
    result = subprocess.run([sys.executable, "-m", "flake8", "--version"], capture_output=True, text=True)
    assert "tfmigrate: " in result.stdout


def test_flake8_reports_what_tfmigrate_check_reports(project):
    result = run("--select", "TFM", "examples", cwd=project)
    assert result.returncode == 1, result.stderr
    ours = tfmigrate("check", "--no-cache", "--format", "concise", "examples", cwd=project)
    assert locations(result.stdout) == locations(ours.stdout)  # path:line:col: CODE, in order
    assert len(result.stdout.splitlines()) >= 10
    first = result.stdout.splitlines()[0]
    assert first.startswith("examples/tf1_classifier.py:10:14: TFM104 `image.shape[-1]` is `None`")
    assert first.endswith("[fix: tfmigrate fix]")


def test_tfm_codes_are_on_by_default_next_to_flake8s_own(project):
    result = run("examples/tf1_classifier.py", cwd=project)
    codes = {line.split(" ")[1] for line in result.stdout.splitlines()}
    assert {"TFM104", "TFM105", "E501"} <= codes


def test_the_tfmigrate_configuration_and_flake8s_selection_both_apply(project):
    (project / "pyproject.toml").write_text('[tool.tfmigrate]\nignore = ["TFM101"]\n', encoding="utf-8")
    result = run("--select", "TFM", "examples/tf1_classifier.py", cwd=project)
    codes = [line.split(" ")[1] for line in result.stdout.splitlines()]
    assert "TFM101" not in codes and "TFM105" in codes
    result = run("--select", "TFM", "--extend-ignore", "TFM105", "examples/tf1_classifier.py", cwd=project)
    assert "TFM105" not in result.stdout and "TFM104" in result.stdout
    (project / "pyproject.toml").write_text('[tool.tfmigrate]\nselec = ["TFM1"]\n', encoding="utf-8")
    result = run("--select", "TFM", "examples/tf1_classifier.py", cwd=project)
    assert "TFM000 tfmigrate configuration error" in result.stdout and "selec" in result.stdout


def test_noqa_silences_in_flake8_too(project):
    path = project / "examples" / "tf1_classifier.py"
    path.write_text(path.read_text().replace(".batch(batch_size)\n", ".batch(batch_size)  # noqa: TFM105\n", 1))
    result = run("--select", "TFM", "examples/tf1_classifier.py", cwd=project)
    assert "TFM105" not in result.stdout and "TFM104" in result.stdout


def test_standard_input(project):
    source = (EXAMPLES / "tf1_classifier.py").read_text()
    result = subprocess.run([sys.executable, "-m", "flake8", "--select", "TFM", "-"], input=source,
                            capture_output=True, text=True, cwd=project)
    assert "stdin:19:34: TFM105" in result.stdout


def test_flake8_with_the_plugin_never_imports_tensorflow(project):
    code = (
        "import sys\n"
        "from flake8.main.cli import main\n"
        "rc = main(['--jobs', '1', '--select', 'TFM', 'examples'])\n"
        "assert rc == 1, rc\n"
        "assert 'libcst' in sys.modules\n"
        "assert not [m for m in sys.modules if m.split('.')[0] in ('tensorflow', 'keras', 'tf_keras')]\n"
        "print('OK')\n"
    )
    result = subprocess.run([sys.executable, "-c", code], cwd=project, capture_output=True, text=True,
                            env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parent.parent)})
    assert result.stdout.rstrip().endswith("OK"), result.stderr
