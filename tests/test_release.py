"""The release version scheme (issue 24 item 9): the version is written once, in pyproject.toml;
`tfmigrate.__version__` reads it (from a checkout, or from the installed distribution), and the
README's pre-commit snippet pins the tag of that version, `v<version>`."""
import re
import shutil
import subprocess
import sys
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent


def pyproject_version(root: Path = ROOT) -> str:
    try:
        import tomllib
    except ImportError:  # pragma: no cover - older Pythons
        import tomli as tomllib
    return tomllib.loads((root / "pyproject.toml").read_text(encoding="utf-8"))["project"]["version"]


def readme_pre_commit_snippet() -> str:
    """The README's pre-commit configuration, as a user copies it."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    blocks = [b for b in re.findall(r"```yaml\n(.*?)```", text, re.S) if "id: tfmigrate" in b]
    assert len(blocks) == 1
    return blocks[0]


def test_readme_pre_commit_rev_is_the_tag_of_the_version():
    (repo,) = yaml.safe_load(readme_pre_commit_snippet())["repos"]
    assert repo["rev"] == "v" + pyproject_version()
    assert re.fullmatch(r"\d+\.\d+\.\d+", pyproject_version())  # X.Y.Z, tagged vX.Y.Z


def test_version_is_the_pyprojects(tmp_path):
    import tfmigrate

    assert tfmigrate.__version__ == pyproject_version()
    cli = subprocess.run([sys.executable, "-m", "tfmigrate", "--version"], capture_output=True, text=True, cwd=tmp_path,
                         env={"PYTHONPATH": str(ROOT), "PATH": ""})
    assert cli.stdout == f"tfmigrate {pyproject_version()}\n"


def _version_in(site: Path) -> str:
    return subprocess.run([sys.executable, "-I", "-c", f"import sys; sys.path.insert(0, {str(site)!r}); "
                           "import tfmigrate; print(tfmigrate.__version__)"],
                          capture_output=True, text=True, check=True).stdout.strip()


def test_a_version_bump_in_pyproject_alone_changes_the_version(tmp_path):
    """Written once: bumping pyproject.toml is the whole change (a checkout), and an installed
    tfmigrate says the version it was installed as (no pyproject.toml beside it)."""
    checkout = tmp_path / "checkout"
    checkout.mkdir()
    text = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    bumped = re.sub(r'(?m)^version = "[^"]+"$', 'version = "9.8.7"', text, count=1)
    assert bumped != text
    (checkout / "pyproject.toml").write_text(bumped, encoding="utf-8")
    (checkout / "tfmigrate").mkdir()
    shutil.copy2(ROOT / "tfmigrate" / "__init__.py", checkout / "tfmigrate" / "__init__.py")
    assert _version_in(checkout) == "9.8.7"
    site = tmp_path / "site-packages"
    (site / "tfmigrate").mkdir(parents=True)
    (site / "tfmigrate-9.8.6.dist-info").mkdir()
    shutil.copy2(ROOT / "tfmigrate" / "__init__.py", site / "tfmigrate" / "__init__.py")
    assert _version_in(site) == "9.8.6"
