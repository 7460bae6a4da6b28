"""A plain `check` repeated on files that did not change is answered from its last identical run
(frontends/warm.py): the same bytes and exit code, and any change it depends on runs it again."""
import json
import os
import subprocess
import sys
import time

import pytest

from tfmigrate import observed
from tfmigrate.frontends import cli, commands

TF1 = b"import tensorflow as tf\nds = tf.data.Dataset.range(3)\nds = ds.repeat(False)\n"


@pytest.fixture
def tree(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("GIT_DIR", raising=False)
    monkeypatch.setattr(observed, "RACY_NS", 0)  # the files were written a moment ago
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "a.py").write_bytes(TF1)
    (tmp_path / "pkg" / "b.py").write_bytes(b"import os\n")
    return tmp_path


def tfmigrate(capfd, monkeypatch, *args):
    """(stdout, exit code, whether the run was replayed) of `tfmigrate ARGS` in this process."""
    ran = []
    real = commands.check
    monkeypatch.setattr(commands, "check", lambda *a, **k: ran.append(1) or real(*a, **k))
    monkeypatch.setattr(sys, "argv", ["tfmigrate", *args])
    time.sleep(0.01)  # a change after the last run has a later time than that run's start
    with pytest.raises(SystemExit) as stop:
        cli.main()
    return capfd.readouterr().out, stop.value.code, not ran


@pytest.mark.parametrize("fmt", ["rich", "json", "concise"])
def test_a_repeated_check_is_replayed_byte_for_byte(tree, capfd, monkeypatch, fmt):
    tfmigrate(capfd, monkeypatch, "check", "--format", fmt)  # makes the cache folder: not kept
    first = tfmigrate(capfd, monkeypatch, "check", "--format", fmt)
    second = tfmigrate(capfd, monkeypatch, "check", ".", "--format", fmt)
    assert not first[2] and second[2] and second[:2] == first[:2] and first[1] == 1 and first[0]


def test_any_change_the_output_depends_on_runs_it_again(tree, capfd, monkeypatch):
    def findings():
        out, code, replayed = tfmigrate(capfd, monkeypatch, "check", "--format", "json")
        return sorted({f["path"] for f in json.loads(out)}), code, replayed

    assert findings() == (["pkg/a.py"], 1, False)
    assert findings() == (["pkg/a.py"], 1, False)  # the first run made the cache folder
    assert findings() == (["pkg/a.py"], 1, True)
    (tree / "pkg" / "b.py").write_bytes(TF1)  # a file's bytes
    assert findings() == (["pkg/a.py", "pkg/b.py"], 1, False)
    assert findings()[2]
    (tree / "pkg" / "new").mkdir()
    (tree / "pkg" / "new" / "c.py").write_bytes(TF1)  # a new file in a new folder
    assert findings() == (["pkg/a.py", "pkg/b.py", "pkg/new/c.py"], 1, False)
    (tree / "tfmigrate.toml").write_text('exclude = ["new"]\n')  # a configuration appears
    assert findings() == (["pkg/a.py", "pkg/b.py"], 1, False)
    assert findings()[2]
    (tree / "tfmigrate.toml").write_text('exclude = ["b.py"]\n')  # it changes
    assert findings() == (["pkg/a.py", "pkg/new/c.py"], 1, False)
    os.remove(tree / "pkg" / "a.py")
    os.remove(tree / "pkg" / "new" / "c.py")
    assert findings() == ([], 0, False)


def test_a_run_is_not_kept_when_a_file_changed_just_before_it(tree, capfd, monkeypatch):
    monkeypatch.setattr(observed, "RACY_NS", 3600 * 10**9)
    tfmigrate(capfd, monkeypatch, "check")
    assert not tfmigrate(capfd, monkeypatch, "check")[2]
    assert not (tree / ".tfmigrate_cache" / "runs").exists()


def test_git_is_asked_again_when_a_run_is_replayed(tree, capfd, monkeypatch):
    if subprocess.run(["git", "--version"], capture_output=True).returncode:
        pytest.skip("no git")
    subprocess.run(["git", "init", "-q"], check=True)
    (tree / ".gitignore").write_text(".tfmigrate_cache\n")
    (tree / "pkg" / "b.py").write_bytes(TF1)
    tfmigrate(capfd, monkeypatch, "check")
    tfmigrate(capfd, monkeypatch, "check")
    both = tfmigrate(capfd, monkeypatch, "check")
    assert both[2] and "pkg/b.py" in both[0]
    with open(tree / ".gitignore", "a") as handle:  # in place: its folder's time stays the same
        handle.write("pkg/b.py\n")
    ignored = tfmigrate(capfd, monkeypatch, "check")
    assert not ignored[2] and "pkg/a.py" in ignored[0] and "pkg/b.py" not in ignored[0]


def test_a_replay_imports_neither_the_planner_nor_the_renderers(tree):
    code = ("import sys\nfrom tfmigrate import observed\nobserved.RACY_NS = 0\n"
            "from tfmigrate.frontends.cli import main\ntry:\n    main()\nfinally:\n"
            "    sys.stderr.write('LOADED=%s' % sorted(m for m in ('tfmigrate.workspace.config', "
            "'tfmigrate.frontends.report', 'tfmigrate.frontends.commands') if m in sys.modules))\n")
    runs = [subprocess.run([sys.executable, "-c", code, "check"], capture_output=True, text=True) for _ in range(3)][1:]
    assert "LOADED=[]" not in runs[0].stderr and "LOADED=[]" in runs[1].stderr
    assert (runs[1].stdout, runs[1].returncode) == (runs[0].stdout, runs[0].returncode) == (runs[0].stdout, 1)


def test_a_report_laid_out_for_a_console_is_not_kept(tree, capfd, monkeypatch):
    monkeypatch.setenv("FORCE_COLOR", "1")  # rich's own layout, not one plain text
    runs = [tfmigrate(capfd, monkeypatch, "check") for _ in range(3)]
    assert not any(replayed for _, _, replayed in runs) and runs[2][:2] == runs[1][:2]
    assert not (tree / ".tfmigrate_cache" / "runs").exists()
