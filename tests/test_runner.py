"""Parallel and cached runs give exactly the output of a plain run; the cache is keyed by
content and settings, survives corruption, and a cache hit never imports libcst."""
import json
import os
import subprocess
import sys

import pytest
from typer.testing import CliRunner

from tfmigrate.frontends.cli import app

runner = CliRunner()
TF1 = "import tensorflow as tf\nds = tf.data.Dataset.range({n})\nds = ds.repeat(False)\nx = ds.repeat(True)\n"


@pytest.fixture
def tree(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    for i in range(24):
        sub = tmp_path / f"pkg{i % 3}"
        sub.mkdir(exist_ok=True)
        (sub / f"m{i}.py").write_text(TF1.format(n=i) if i % 4 else "import os\n")
    (tmp_path / "pkg0" / "broken.py").write_text("import tensorflow\nprint 'x'\n")
    return tmp_path


def check(*args):
    return runner.invoke(app, ["check", "--format", "json", *args], catch_exceptions=False).stdout


def test_jobs_and_cache_do_not_change_the_output(tree):
    plain = check("--jobs", "1", "--no-cache")
    assert len(json.loads(plain)) == 37
    assert check("--jobs", "2", "--no-cache") == plain
    assert check("--jobs", "2") == plain  # fills the cache
    assert (tree / ".tfmigrate_cache" / ".gitignore").read_text().strip().endswith("*")
    assert check("--jobs", "1") == plain  # served from the cache
    assert check("--jobs", "2") == plain


def test_cache_follows_content_and_settings(tree):
    check()
    (tree / "pkg1" / "m1.py").write_text("import tensorflow as tf\n")
    assert not any(d["path"].endswith("m1.py") for d in json.loads(check()))
    assert json.loads(check("--select", "TFM001")) == [
        d for d in json.loads(check("--no-cache", "--select", "TFM001"))
    ]


def test_corrupt_or_foreign_cache_entries_are_ignored_and_rewritten(tree):
    plain = check("--no-cache")
    check()
    entries = [os.path.join(d, f) for d, _, fs in os.walk(tree / ".tfmigrate_cache") for f in fs if f.endswith(".json")]
    assert entries
    for i, entry in enumerate(entries):
        with open(entry, "wb") as handle:
            handle.write([b"\x00\xff garbage", b"{}", b'{"fingerprint": 3}', b"[1, 2]"][i % 4])
    assert check() == plain
    assert check() == plain


def test_fix_uses_the_cache_to_skip_files_without_fixes(tree):
    check()
    result = runner.invoke(app, ["fix", "--unsafe-fixes"], catch_exceptions=False)
    assert "Fixed 36 findings in 18 files" in result.stdout
    assert json.loads(check()) == json.loads(check("--no-cache"))


def test_a_cache_hit_does_not_import_libcst(tree):
    code = (
        "import sys\nfrom tfmigrate.frontends.cli import main\n"
        "try:\n    main()\nfinally:\n    sys.stderr.write('LIBCST=%s' % ('libcst' in sys.modules))\n"
    )
    first = subprocess.run([sys.executable, "-c", code, "check", "--jobs", "1"], capture_output=True, text=True)
    assert "LIBCST=True" in first.stderr
    second = subprocess.run([sys.executable, "-c", code, "check", "--jobs", "1"], capture_output=True, text=True)
    assert "LIBCST=False" in second.stderr
    assert second.stdout == first.stdout



def test_a_warm_plain_check_imports_neither_typer_nor_rich_and_prints_what_typer_prints(tree):
    """`check [PATH ...] [--format F]` is read without typer and, printed plain, without rich: the
    same bytes and exit code as the typer route (`--jobs 0` is the default, read by typer)."""
    code = (
        "import sys\nfrom tfmigrate.frontends.cli import main\n"
        "try:\n    main()\nfinally:\n"
        "    sys.stderr.write('LOADED=%s' % sorted({'typer', 'rich', 'libcst', 'yaml'} & set(sys.modules)))\n"
    )

    def tfmigrate(*args):
        return subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True)

    tfmigrate("check")  # fills the cache
    for args in (["check"], ["check", "."], ["check", "--format", "json"], ["check", ".", "--output-format=concise"]):
        plain, typer = tfmigrate(*args), tfmigrate(*args, "--jobs", "0")
        assert "LOADED=[]" in plain.stderr and "'typer'" in typer.stderr
        assert (plain.stdout, plain.returncode) == (typer.stdout, typer.returncode) and plain.returncode == 1
        assert plain.stdout



def test_a_run_in_another_thread_leaves_the_signal_handlers_alone(tree):
    """The language server checks in a thread, where no signal handler can be set."""
    import signal
    import threading

    from tfmigrate import api
    from tfmigrate.workspace.config import Settings

    before = signal.getsignal(signal.SIGINT)
    jobs = api.plan(["."], Settings(), "check", use_cache=False)
    found = []
    worker = threading.Thread(target=lambda: found.extend(api.run(jobs, 1)))
    worker.start()
    worker.join()
    assert len(found) == len(jobs) == 25 and signal.getsignal(signal.SIGINT) is before


def test_clean_removes_the_cache(tree):
    check()
    assert (tree / ".tfmigrate_cache").exists()
    assert runner.invoke(app, ["clean"]).exit_code == 0
    assert not (tree / ".tfmigrate_cache").exists()
