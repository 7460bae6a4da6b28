"""Regenerate README.md's generated parts: the rule table (between the rules markers, from
rules.yaml) and every output example (a ```text block right after a `<!-- example -->` line).

An example block is a shell session: each `$ ` line is a command, run by bash in a fresh folder
holding a copy of `examples/` (`tfmigrate` is this checkout's, the terminal 80 columns wide,
without colour), the lines after it are its output (standard output and error, as a terminal
shows them). A command may end with `# first N lines`, `# last N lines` or `# first N and last
M lines`: the output is cut so, with a `...` line where lines were left out. The only
normalisation: the temporary folder reads `/repo`, and trailing spaces are dropped.

    python scripts/update_readme.py           # rewrite README.md
    python scripts/update_readme.py --check   # exit 1 if README.md is not what it would write

tests/test_readme.py runs the check, so the README's examples cannot drift from the tool.
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
sys.path.insert(0, str(ROOT))

EXAMPLE = re.compile(r"(<!-- example -->\n```text\n)(.*?)(^```$)", re.DOTALL | re.MULTILINE)
ABRIDGE = re.compile(r"\s+#\s*(?:first (\d+)(?: and last (\d+))?|last (\d+)) lines?\s*$")
WIDTH = "80"


def rules_table(text: str) -> str:
    from tfmigrate.frontends.report import rules_markdown

    return re.sub(
        r"(<!-- rules:start -->\n).*?(<!-- rules:end -->)",
        lambda m: m.group(1) + rules_markdown() + m.group(2),
        text,
        flags=re.DOTALL,
    )


def _abridge(output: str, command: str) -> str:
    match = ABRIDGE.search(command)
    lines = output.splitlines()
    if not match:
        return "\n".join(lines)
    first, last, only_last = match.groups()
    head = int(first) if first else 0
    tail = int(last or only_last or 0)
    if head + tail >= len(lines):
        return "\n".join(lines)
    kept = lines[:head] + ["..."] + (lines[-tail:] if tail else [])
    return "\n".join(kept)


def run_session(commands, python: str = sys.executable) -> str:
    """Run the commands of one example block in a fresh folder; the block's new text."""
    with tempfile.TemporaryDirectory(prefix="tfm-readme-") as folder:
        shutil.copytree(ROOT / "examples", Path(folder) / "examples")
        env = {
            **os.environ,
            "COLUMNS": WIDTH, "LINES": "50", "NO_COLOR": "1", "TERM": "dumb",
            "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""),
            "TFM_PY": python,
        }
        env.pop("FORCE_COLOR", None)
        preamble = 'tfmigrate() { "$TFM_PY" -m tfmigrate "$@"; }\nflake8() { "$TFM_PY" -m flake8 "$@"; }\n'
        out = []
        real = os.path.realpath(folder)
        for command in commands:
            shell = ABRIDGE.sub("", command)
            result = subprocess.run(
                ["bash", "-c", preamble + shell], cwd=folder, env=env,
                stdout=subprocess.PIPE, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
            )
            text = result.stdout.decode("utf-8", "replace")
            text = text.replace(real, "/repo").replace(folder, "/repo")
            text = "\n".join(line.rstrip() for line in text.splitlines())
            out.append(f"$ {command}")
            body = _abridge(text, command)
            if body:
                out.append(body)
        return "\n".join(out) + "\n"


def commands_of(block: str):
    return [line[2:] for line in block.splitlines() if line.startswith("$ ")]


def examples(text: str, python: str = sys.executable) -> str:
    return EXAMPLE.sub(lambda m: m.group(1) + run_session(commands_of(m.group(2)), python) + m.group(3), text)


def generate(text: str, python: str = sys.executable) -> str:
    return examples(rules_table(text), python)


def main() -> int:
    text = README.read_text(encoding="utf-8")
    new = generate(text)
    if "--check" in sys.argv:
        if new != text:
            import difflib

            sys.stdout.writelines(difflib.unified_diff(text.splitlines(True), new.splitlines(True), "README.md", "generated"))
            return 1
        print("README.md is up to date")
        return 0
    README.write_text(new, encoding="utf-8")
    print("README.md updated" if new != text else "README.md already up to date")
    return 0


if __name__ == "__main__":
    sys.exit(main())
