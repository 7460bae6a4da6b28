"""Every `tf.contrib` (and `tf.estimator`) symbol in real TF1 code, with its fate under
`tfmigrate fix`: a faithful fix (TF2-native or compat route), the tf-slim package, or no home
(then the finding's guidance). Reads the findings of TFM206 / TFM213 / TFM214 from
`tfmigrate check --format json` over the roots given (e.g. .corpus, ../shared/tf1-repos/*/repo).

    python scripts/contrib_census.py ROOT [ROOT...] [--markdown]
"""
from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
from collections import Counter, defaultdict
from pathlib import Path

RULES = ("TFM206", "TFM213", "TFM214")
_NAMED = re.compile(r"`(tf\.(?:contrib|estimator|compat\.v1\.estimator)[\w.]*)`")
_FROM = re.compile(r"^`([\w.]+)` comes from `(tf\.[\w.]+)`")


def symbol(finding: dict) -> str:
    """The dotted symbol a finding is about, as `tf.contrib.module.name` (import lines included)."""
    message = finding["message"]
    came = _FROM.match(message)
    if came:
        return f"{came.group(2)}.{came.group(1).split('.')[-1]}"
    named = _NAMED.search(message)
    if named:
        return named.group(1).replace("tf.compat.v1.", "tf.")
    return message.split("`")[1] if "`" in message else message[:40]


def fate(finding: dict) -> str:
    fix = finding.get("fix")
    message = finding["message"]
    if fix is None and ("TFM200's fix" in message or "compat route" in message):
        return "compat route (TFM200 moves the module)"
    if fix is None and message.startswith("Importing"):
        return "import line without a fix of its own"
    if fix is None and _FROM.match(message):
        return "use through an imported contrib module"
    if fix is None:
        return "no home"
    text = fix["description"]
    if "tf_slim" in text or "tf-slim" in text:
        return f"tf_slim ({fix['applicability']})"
    if text.startswith("Remove the import"):
        return "import removed (unused after the other fixes)"
    return f"fix ({fix['applicability']}): {text[:70]}"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("roots", nargs="+")
    parser.add_argument("--python", default=sys.executable)
    args = parser.parse_args()
    out = subprocess.run([args.python, "-m", "tfmigrate", "check", "--no-cache", "--format", "json",
                          "--select", ",".join(RULES), *args.roots], capture_output=True, text=True)
    findings = json.loads(out.stdout or "[]")
    table = defaultdict(Counter)
    files = defaultdict(set)
    for f in findings:
        name = symbol(f)
        table[name][fate(f)] += 1
        files[name].add(f["path"])
    print(f"{len(findings)} findings, {len(table)} symbols, roots: {' '.join(args.roots)}")
    print("| symbol | uses | files | fate |")
    print("|---|---|---|---|")
    for name in sorted(table, key=lambda n: (-sum(table[n].values()), n)):
        fates = "; ".join(f"{k} x{v}" if len(table[name]) > 1 else k for k, v in table[name].most_common())
        print(f"| `{name}` | {sum(table[name].values())} | {len(files[name])} | {fates} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
