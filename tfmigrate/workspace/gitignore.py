"""Which files git ignores (respect-gitignore), apart from the plan: a warm `check` answered from
its last identical run (frontends/warm.py) asks git again without importing the planner."""
import os

from tfmigrate.observed import note


def gitignored(files) -> set:
    """The files git ignores (empty outside a git checkout or without git)."""
    if not files or not in_git_checkout():
        return set()
    ignored = _ask_git(files)
    note("g", "\0".join(files), sorted(ignored))
    return ignored


def _ask_git(files) -> set:
    import subprocess

    try:
        result = subprocess.run(
            ["git", "check-ignore", "--stdin", "-z"],
            input="\0".join(files).encode("utf-8", "surrogateescape"),
            capture_output=True,
            timeout=60,
        )
    except (OSError, subprocess.SubprocessError):
        return set()
    if result.returncode not in (0, 1):
        return set()
    return set(result.stdout.decode("utf-8", "surrogateescape").split("\0")) - {""}


def asked_again(joined: str) -> list:
    """What git answers now for the files of a noted "g" look (observed.unchanged's probe)."""
    return sorted(gitignored(joined.split("\0")))


def in_git_checkout() -> bool:
    """Whether git could find a repository from the current folder, where `git check-ignore`
    runs: a `.git` there or above, or GIT_DIR set. Elsewhere git only fails, and starting it
    (and importing subprocess) was a tenth of a warm run's time."""
    if "GIT_DIR" in os.environ:
        return True
    try:
        folder = os.getcwd()
    except OSError:  # the folder was removed: git says what it makes of that
        return True
    while True:
        marker = os.path.join(folder, ".git")
        note("l", marker)
        if os.path.lexists(marker):
            return True
        parent = os.path.dirname(folder)
        if parent == folder:
            return False
        folder = parent
