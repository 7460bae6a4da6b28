"""Large files: peak memory and time of `check` and `fix` (issue 14 item 5). Prints a table; not
a test (tests/test_limits.py checks that a file over the limit is reported and skipped).

Usage:
    .venv/bin/python bench/large_files.py            # sizes up to the default max-file-size, and over it
    .venv/bin/python bench/large_files.py --quick    # the largest size under the limit only
    options: --sizes 0.25,0.5,1 (MB), --tmp DIR

Each command runs as users run it (`python -m tfmigrate ... --no-cache --jobs 1`) inside a tiny
measuring process that reports the wall time and the peak RSS of the largest process it started
(getrusage(RUSAGE_CHILDREN).ru_maxrss). Three generated kinds, the costliest per byte first:
  literal   a data literal, one short row per line (what "a 20 MB generated data literal" was)
  oneline   the same numbers on one line (the "5 MB single-line file")
  code      TF1 code with a finding and a fix every few lines (fix's worst case: many passes)
and the two files of the issue, which are over the default limit (800 KB) and must be skipped at
once: a 20 MB literal and a 5 MB single line. The target: peak under 1 GB per worker, time about
linear in the size (s/MB roughly constant).
"""
from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LIMIT_GB = 1.0
HEAD = "import tensorflow as tf\nds = tf.data.Dataset.range(3).repeat(False)\n"

MEASURE = r"""
import json, resource, subprocess, sys, time
start = time.time()
code = subprocess.run(sys.argv[1:], capture_output=True)
peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
print(json.dumps({"wall": time.time() - start, "peak_kb": peak, "rc": code.returncode,
                  "skipped": b"over the max-file-size limit" in code.stdout}))
"""


def generate(kind: str, size: int) -> str:
    """A file of this kind of at most `size` bytes (ASCII), as close to it as the kind's rows allow:
    a 0.8 MB file stays under the 800 KB default max-file-size and is checked, not skipped."""
    rng = random.Random(size)
    parts, total = [HEAD], len(HEAD)
    if kind == "literal":
        parts.append("DATA = [\n")
        total += len(parts[-1]) + len("]\n")
        while True:
            row = f"    [{rng.random():.6f}, {rng.random():.6f}, {rng.randint(0, 9999)}],\n"
            if total + len(row) > size:
                break
            parts.append(row)
            total += len(row)
        parts.append("]\n")
    elif kind == "oneline":
        parts.append("DATA = [")
        total += len(parts[-1]) + len("]\n")
        while True:
            item = f"{rng.randint(0, 99999)}, "
            if total + len(item) > size:
                break
            parts.append(item)
            total += len(item)
        parts.append("]\n")
    else:
        block = (
            "\n\ndef model_{i}(x, training):\n"
            "    ds = tf.data.Dataset.range(3).repeat(False)\n"
            "    h = tf.reduce_sum(x, axis=1, keep_dims=True)\n"
            "    return tf.layers.dense(h, 64, activation=tf.nn.relu)\n"
        )
        i = 0
        while True:
            text = block.format(i=i)
            if total + len(text) > size:
                break
            parts.append(text)
            total += len(text)
            i += 1
    return "".join(parts)


def measure(folder: Path, *args: str) -> dict:
    command = [sys.executable, "-m", "tfmigrate", *args, "--no-cache", "--jobs", "1", "--format", "concise"]
    out = subprocess.run([sys.executable, "-c", MEASURE, *command], cwd=folder, capture_output=True, text=True,
                         env={**os.environ, "PYTHONPATH": str(ROOT)})
    return json.loads(out.stdout)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default="0.2,0.4,0.8", help="MB, comma-separated (under the 800 KB limit)")
    parser.add_argument("--quick", action="store_true", help="only the largest size, check only for literal/oneline")
    parser.add_argument("--tmp", default=None)
    options = parser.parse_args()
    sizes = [float(s) for s in options.sizes.split(",")]
    if options.quick:
        sizes = sizes[-1:]
    work = Path(tempfile.mkdtemp(prefix="tfm-large-", dir=options.tmp))
    rows = []
    try:
        cases = [(kind, mb) for kind in ("literal", "oneline", "code") for mb in sizes]
        cases += [("literal", 20.0), ("oneline", 5.0)]  # the files: over the limit, skipped
        for kind, mb in cases:
            folder = work / f"{kind}_{mb}"
            folder.mkdir()
            source = generate(kind, int(mb * 1e6))
            for mode in ("check", "fix"):
                (folder / "big.py").write_text(source)
                result = measure(folder, mode, "big.py")
                skipped = result["skipped"]
                rows.append((kind, len(source) / 1e6, mode, result["wall"], result["peak_kb"] / 1e6, result["rc"],
                             skipped))
                print(f"{kind:8} {len(source) / 1e6:6.2f} MB  {mode:5}  {result['wall']:7.1f} s  "
                      f"{result['wall'] / (len(source) / 1e6):6.1f} s/MB  peak {result['peak_kb'] / 1e6:5.2f} GB"
                      f"{'  (skipped: over max-file-size)' if skipped else ''}", flush=True)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    worst = max(r[4] for r in rows)
    print(f"\nlargest peak RSS: {worst:.2f} GB (target < {LIMIT_GB} GB per worker): "
          f"{'OK' if worst < LIMIT_GB else 'OVER'}")


if __name__ == "__main__":
    main()
