"""Performance benchmark of tfmigrate against TensorFlow's own `tf_upgrade_v2` (prints a table;
not a test).

Usage:
    .venv/bin/python bench/run.py              # full: medians of 3 runs (about 20-30 min on 2 cores)
    .venv/bin/python bench/run.py --repeat 5   # medians of 5 runs
    .venv/bin/python bench/run.py --quick      # 1 run on a subset (a smoke run, a few minutes)
    .venv/bin/python bench/run.py --figures 1,3,8   # only those figures
    options: --keep (keep the temporary trees), --tmp DIR (where to make them)

The pinned corpus (../shared/corpus.txt) is downloaded into .corpus/ if missing, by
scripts/fetch_corpus.py; every run works on copies in a temporary folder (nothing is written into
.corpus/). tfmigrate runs as users run it: its console script in a subprocess, from the folder that
holds the copy (so `.tfmigrate_cache/` is made there), `--no-cache` for cold runs. Each command is
wrapped in a tiny measuring process that reports its wall time, its CPU time, the peak RSS of the
largest process it started (tfmigrate's parent or a worker: getrusage(RUSAGE_CHILDREN).ru_maxrss),
and how much CPU the rest of the machine used meanwhile (from /proc/stat); a run during which
other programs took more than 15% of the machine is thrown away and run again (twice at most).

Figures (targets from the project brief):
  1. cold `check --no-cache` of tensor2tensor vs `tf_upgrade_v2 --intree --outtree`  <= 0.25
  2. cold `fix --unsafe-fixes --no-cache` into a copy vs tf_upgrade_v2               <= 0.35
  3. warm `check` (cache filled, nothing changed) vs tf_upgrade_v2                   <= 0.012
     (the command line repeated: its last run replayed, frontends/warm.py)
  9. warm `check` answered file by file from the cache (the kept run removed first)
  4. pre-commit: `check FILE` of one changed ~300-line file, cache warm              <= 1.0 s
                 the same file again, unchanged (cache hit)                          <= 0.3 s
  5. growth: whole corpus copied 1x/2x/4x, cold check: t(4x)/t(1x)                   <= 4.4
             one synthetic TF1 module of 12.5k/25k/50k lines: t(50k)/t(12.5k)        <= 4.4
             (0.6/1.2/2.3 MB: checked with --max-file-size 8MB, over the 800 KB default)
  6. peak RSS of the largest process, cold check of the 4x corpus                    < 400 MB
  7. cold check of tensor2tensor, --jobs 1 time / --jobs 2 time                      >= 1.7
  8. one process: cold `check --no-cache --jobs 1` of tensor2tensor vs a bare
     `libcst.parse_module` of the same files (CPU seconds, runs alternating)         <= 1.6

`--figures 1,3,8` runs only those figures (each row still prints its committed ratio).
"""
from __future__ import annotations

import argparse
import importlib.util
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Dict, List, Optional, Sequence

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT / ".corpus"
BIN = Path(sys.executable).parent
BIG = "tensor2tensor"  # the benchmark package (prefix of its folder in .corpus/)
FOREIGN_LIMIT = 0.15  # share of the machine other programs may use during a timed run
RETRIES = 2

# Runs one command and prints JSON: wall seconds, CPU seconds of the command and its descendants,
# peak RSS (kB) of the largest of them, and the machine's busy CPU seconds over the same interval.
MEASURE = r"""
import json, os, resource, subprocess, sys, time
def busy():
    with open('/proc/stat') as f:
        v = [int(x) for x in f.readline().split()[1:]]
    return (sum(v[:8]) - v[3] - v[4]) / os.sysconf('SC_CLK_TCK')
cwd, out = sys.argv[1], sys.argv[2]
b0 = busy(); t0 = time.perf_counter()
with open(out, 'wb') as sink:
    rc = subprocess.run(sys.argv[3:], cwd=cwd, stdout=sink, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL).returncode
wall = time.perf_counter() - t0; b1 = busy()
u = resource.getrusage(resource.RUSAGE_CHILDREN)
print(json.dumps({'rc': rc, 'wall': wall, 'cpu': u.ru_utime + u.ru_stime, 'maxrss_kb': u.ru_maxrss, 'busy': b1 - b0}))
"""


@dataclass
class Run:
    wall: float
    cpu: float
    maxrss_mb: float
    foreign: float  # share of all cores used by other programs during the run
    rc: int


@dataclass
class Series:
    runs: List[Run] = field(default_factory=list)

    @property
    def median(self) -> float:
        return statistics.median(r.wall for r in self.runs)

    @property
    def peak_mb(self) -> float:
        return max(r.maxrss_mb for r in self.runs)

    @property
    def foreign(self) -> float:
        return max(r.foreign for r in self.runs)

    @property
    def cpu(self) -> float:
        return statistics.median(r.cpu for r in self.runs)

    def spread(self) -> str:
        walls = sorted(r.wall for r in self.runs)
        return f"{walls[0]:.2f}-{walls[-1]:.2f}" if len(walls) > 1 else ""


def cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - not Linux
        return os.cpu_count() or 1


def machine_busy(seconds: float = 1.0) -> float:
    """Share of the machine busy over `seconds` while this benchmark runs nothing."""
    def sample():
        with open("/proc/stat") as f:
            v = [int(x) for x in f.readline().split()[1:]]
        return sum(v[:8]), v[3] + v[4]

    total0, idle0 = sample()
    time.sleep(seconds)
    total1, idle1 = sample()
    return 1 - (idle1 - idle0) / max(1, total1 - total0)


def wait_quiet(log, limit: float = 60.0) -> float:
    """Wait (up to `limit` s) until other programs use less than FOREIGN_LIMIT of the machine."""
    start = time.time()
    busy = machine_busy()
    while busy > FOREIGN_LIMIT and time.time() - start < limit:
        log(f"  machine busy ({busy:.0%} of {cores()} cores, load {os.getloadavg()[0]:.2f}); waiting")
        time.sleep(10)
        busy = machine_busy()
    return busy


def measure(cmd: Sequence[str], cwd: Path, log, ok=(0, 1), tmp: Optional[Path] = None, inspect=None) -> Run:
    """Run `cmd` once, re-running it (at most RETRIES times) when other programs took the machine.
    `inspect(output)`, if given, is called with the command's output (a check that it did the
    work timed, not a refusal)."""
    out = Path(tempfile.mkstemp(prefix="bench-out-", suffix=".txt", dir=tmp)[1])
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3", PYTHONDONTWRITEBYTECODE="1", NO_COLOR="1")
    run = None
    for attempt in range(RETRIES + 1):
        wait_quiet(log)
        result = subprocess.run(
            [sys.executable, "-c", MEASURE, str(cwd), str(out), *map(str, cmd)],
            capture_output=True, text=True, env=env, check=True,
        )
        data = json.loads(result.stdout)
        foreign = max(0.0, (data["busy"] - data["cpu"]) / (data["wall"] * cores()))
        run = Run(data["wall"], data["cpu"], data["maxrss_kb"] / 1024, foreign, data["rc"])
        if run.rc not in ok:
            tail = out.read_text(errors="replace")[-3000:]
            raise SystemExit(f"command failed (exit {run.rc}): {' '.join(map(str, cmd))}\n{tail}")
        if inspect is not None:
            inspect(out.read_text(errors="replace"))
        if foreign <= FOREIGN_LIMIT:
            break
        log(f"  other programs used {foreign:.0%} of the machine during that run; "
            + ("running it again" if attempt < RETRIES else "keeping it (flagged)"))
    out.unlink()
    return run


def alternating(repeat: int, first: tuple, second: tuple, cwd: Path, log, tmp=None) -> tuple:
    """Two series run in turn (first #1, second #1, first #2, ...), so a change in the machine's load
    falls on both: each of `first` and `second` is (label, make_cmd, prepare or None)."""
    a, b = Series(), Series()
    for i in range(repeat):
        for (label, make_cmd, prepare), s in ((first, a), (second, b)):
            s.runs.extend(series(label, 1, lambda _: make_cmd(i), cwd, log, prepare=(lambda _: prepare(i)) if prepare else None,
                                 tmp=tmp, first=i).runs)
    return a, b


def series(label: str, repeat: int, make_cmd, cwd: Path, log, prepare=None, ok=(0, 1), tmp=None, first=0,
           inspect=None) -> Series:
    s = Series()
    for i in range(repeat):
        if prepare:
            prepare(i)
        cmd = make_cmd(i)
        run = measure(cmd, cwd, log, ok, tmp, inspect)
        s.runs.append(run)
        log(f"  {label} #{first + i + 1}: {run.wall:.2f} s wall, {run.cpu:.2f} s CPU, {run.maxrss_mb:.0f} MB peak"
            + (f", others {run.foreign:.0%}" if run.foreign > 0.02 else ""))
    return s


# ---------------------------------------------------------------------------------------------
# inputs


def ensure_corpus() -> List[Path]:
    spec = importlib.util.spec_from_file_location("fetch_corpus", ROOT / "scripts" / "fetch_corpus.py")
    fetch_corpus = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(fetch_corpus)
    return [fetch_corpus.fetch(pin, CORPUS) for pin in fetch_corpus.pins(fetch_corpus.DEFAULT_LIST)]


def py_files(folder: Path) -> List[Path]:
    return sorted(p for p in folder.rglob("*.py") if p.is_file())


def count_lines(files: Sequence[Path]) -> int:
    return sum(len(f.read_bytes().splitlines()) for f in files)


def pick_file(folder: Path, lines: int = 300) -> Path:
    """A file of the package that mentions tensorflow and is as close to `lines` long as any."""
    best = None
    for f in py_files(folder):
        data = f.read_bytes()
        if b"tensorflow" not in data:
            continue
        gap = abs(len(data.splitlines()) - lines)
        if best is None or gap < best[0]:
            best = (gap, f)
    return best[1]


SYNTH_HEADER = '''"""Synthetic TF1-era model code for the tfmigrate benchmark (generated)."""
import numpy as np
import tensorflow as tf

FLAGS = tf.app.flags.FLAGS
'''

SYNTH_BLOCK = '''

def block_{i}(inputs, units={u}, training=True):
    """Block {i}: a dense stack under its own variable scope."""
    with tf.variable_scope("block_{i}"):
        w = tf.get_variable("w_{i}", [units, units], initializer=tf.glorot_uniform_initializer())
        b = tf.get_variable("b_{i}", [units], initializer=tf.zeros_initializer())
        hidden = tf.layers.dense(inputs, units, activation=tf.nn.relu, name="dense_{i}")
        hidden = tf.layers.dropout(hidden, rate=0.1, training=training)
        hidden = tf.matmul(hidden, w) + b
        if hidden.shape[-1] == units:
            hidden = tf.layers.batch_normalization(hidden, training=training)
        tf.add_to_collection("activations", hidden)
        return tf.nn.relu(hidden)


def train_{i}(data, labels, steps=10):
    x = tf.placeholder(tf.float32, [None, {u}], name="x_{i}")
    y = tf.placeholder(tf.int64, [None], name="y_{i}")
    logits = block_{i}(x)
    loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=y, logits=logits))
    train_op = tf.train.AdamOptimizer(1e-3).minimize(loss)
    saver = tf.train.Saver()
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        for step in range(steps):
            _, value = sess.run([train_op, loss], feed_dict={{x: data, y: labels}})
            if step % 5 == 0:
                print("block {i}", step, value)
        saver.save(sess, "/tmp/block_{i}.ckpt")
    return value
'''


SYNTH_MAX_FILE_SIZE = "8MB"  # over the 50k-line module's 2.3 MB


def _checked_whole(report: str) -> None:
    """The synthetic module was checked: findings, and no TFM001 (too large, not checked)."""
    if "TFM001" in report or "TFM200" not in report:
        raise SystemExit("the synthetic module was not checked (TFM001, or no finding):\n" + report[-2000:])


def synthetic_module(lines: int) -> str:
    parts, total, i = [SYNTH_HEADER], SYNTH_HEADER.count("\n"), 0
    while total < lines:
        block = SYNTH_BLOCK.format(i=i, u=32 + 8 * (i % 8))
        parts.append(block)
        total += block.count("\n")
        i += 1
    return "".join(parts)


# ---------------------------------------------------------------------------------------------
# the benchmark


# A bare libcst parse of every .py file under the folder given: the floor of a libcst design.
BARE_PARSE = r"""
import pathlib, sys
import libcst
for path in sorted(pathlib.Path(sys.argv[1]).rglob("*.py")):
    try:
        libcst.parse_module(path.read_bytes())
    except Exception:
        pass
"""


def versions() -> Dict[str, str]:
    from importlib.metadata import PackageNotFoundError, version

    out = {}
    for name in ("tfmigrate", "libcst", "tensorflow-cpu", "tensorflow"):
        try:
            out[name] = version(name)
        except PackageNotFoundError:
            pass
    return out


def cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


BASELINE = Path(__file__).resolve().parent / "baseline.json"


def committed(key: str) -> str:
    """` (committed X)`: the ratio bench/baseline.json holds for this figure, or nothing."""
    try:
        value = json.loads(BASELINE.read_text()).get(key)
    except (OSError, ValueError):
        return ""
    return "" if value is None else f" (committed {value:g})"


def main(argv=None) -> int:
    global FOREIGN_LIMIT
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=3, help="runs per figure; the median is shown (default 3)")
    parser.add_argument("--quick", action="store_true", help="1 run on a subset: a smoke run")
    parser.add_argument("--keep", action="store_true", help="keep the temporary trees")
    parser.add_argument("--tmp", type=Path, default=None, help="folder for the temporary trees")
    parser.add_argument("--max-foreign", type=float, default=FOREIGN_LIMIT,
                        help="share of the machine other programs may use during a kept run (default 0.15; 1 disables the check)")
    parser.add_argument("--figures", default="1,2,3,4,5,6,7,8,9",
                        help="comma-separated figure numbers to run (default: all)")
    args = parser.parse_args(argv)
    FOREIGN_LIMIT = args.max_foreign
    figures = {int(f) for f in args.figures.split(",") if f.strip()}
    repeat = 1 if args.quick else max(1, args.repeat)
    started = time.time()

    def log(message: str) -> None:
        print(f"[{time.time() - started:6.0f}s] {message}", file=sys.stderr, flush=True)

    tfmigrate = [str(BIN / "tfmigrate")] if (BIN / "tfmigrate").exists() else [sys.executable, "-m", "tfmigrate"]
    upgrade = BIN / "tf_upgrade_v2"
    if not upgrade.exists():
        upgrade = Path(shutil.which("tf_upgrade_v2") or "tf_upgrade_v2")

    # Byte-compile tfmigrate as `pip install` does for users: an editable install run under
    # PYTHONDONTWRITEBYTECODE would otherwise compile every module from source on every start.
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(ROOT / "tfmigrate")], check=True)
    packages = ensure_corpus()
    big = next(p for p in packages if p.name.startswith(BIG))
    tmp = Path(tempfile.mkdtemp(prefix="tfmigrate-bench-", dir=args.tmp))
    load_start = os.getloadavg()
    log(f"working in {tmp}; load average {load_start[0]:.2f} {load_start[1]:.2f} {load_start[2]:.2f}")
    rows = []  # (figure, tfmigrate, tf_upgrade_v2, measure, target, ok, note)
    peaks: Dict[str, float] = {}
    foreign = 0.0

    def note_series(name: str, s: Series) -> Series:
        nonlocal foreign
        peaks[name] = s.peak_mb
        foreign = max(foreign, s.foreign)
        return s

    try:
        # --- the benchmark package: tensor2tensor (--quick: its layers/ folder) ----------------
        bench_src = big / "tensor2tensor" / "layers" if args.quick else big
        work = tmp / "t2t"
        shutil.copytree(bench_src, work / "src")
        files = py_files(work / "src")
        nfiles, nlines = len(files), count_lines(files)
        what = f"{big.name}{'/tensor2tensor/layers' if args.quick else ''}: {nfiles} files, {nlines:,} lines"
        log(f"benchmark package {what}")

        def upgrade_tree(i):
            return [upgrade, "--intree", "src", "--outtree", f"upgraded_{i}", "--reportfile", f"report_{i}.txt"]

        def clean_upgrade(i):
            shutil.rmtree(work / f"upgraded_{i}", ignore_errors=True)

        if figures & {1, 2, 3, 9}:
            log("tf_upgrade_v2 and the cold check (default --jobs) on the benchmark package, in turn")
            up, cold = alternating(repeat, ("tf_upgrade_v2", upgrade_tree, clean_upgrade),
                                   ("check --no-cache", lambda i: [*tfmigrate, "check", "--no-cache", "src"], None), work, log, tmp)
            note_series("tf_upgrade_v2", up)
            note_series("check cold", cold)
            for i in range(repeat):
                clean_upgrade(i)
        if 1 in figures:
            ratio = cold.median / up.median
            rows.append(("1. cold check", f"{cold.median:.2f} s (CPU {cold.cpu:.1f})", f"{up.median:.2f} s (CPU {up.cpu:.1f})", f"{ratio:.3f}{committed('cold_check')}", "<= 0.25", ratio <= 0.25, ""))

        def fresh_copy(i):
            shutil.rmtree(work / "fixcopy", ignore_errors=True)
            shutil.copytree(work / "src", work / "fixcopy")

        if 2 in figures:
            log("cold fix --unsafe-fixes into a copy")
            fix = note_series("fix cold", series(
                "fix --unsafe-fixes --no-cache", repeat,
                lambda i: [*tfmigrate, "fix", "--unsafe-fixes", "--no-cache", "fixcopy"], work, log, prepare=fresh_copy, tmp=tmp,
            ))
            shutil.rmtree(work / "fixcopy", ignore_errors=True)
            ratio = fix.median / up.median
            rows.append(("2. cold fix --unsafe-fixes", f"{fix.median:.2f} s (CPU {fix.cpu:.1f})", f"{up.median:.2f} s (CPU {up.cpu:.1f})", f"{ratio:.3f}{committed('cold_fix')}", "<= 0.35", ratio <= 0.35, ""))

        if 3 in figures:
            log("warm check (cache filled first)")
            measure([*tfmigrate, "check", "src"], work, log, tmp=tmp)  # fills .tfmigrate_cache/
            warm = note_series("check warm", series("check (warm)", repeat, lambda i: [*tfmigrate, "check", "src"], work, log, tmp=tmp))
            ratio = warm.median / up.median
            rows.append(("3. warm check", f"{warm.median:.2f} s (CPU {warm.cpu:.1f})", f"{up.median:.2f} s (CPU {up.cpu:.1f})", f"{ratio:.4f}{committed('warm_check')}", "<= 0.012", ratio <= 0.012, ""))

        if 9 in figures:
            log("warm check, every file from the per-file cache (the kept run removed before each)")
            measure([*tfmigrate, "check", "src"], work, log, tmp=tmp)  # fills .tfmigrate_cache/
            files = note_series("check warm, per file", series(
                "check (warm, per file)", repeat, lambda i: [*tfmigrate, "check", "src"], work, log, tmp=tmp,
                prepare=lambda i: shutil.rmtree(work / ".tfmigrate_cache" / "runs", ignore_errors=True)))
            ratio = files.median / up.median
            rows.append(("9. warm check, per file", f"{files.median:.2f} s (CPU {files.cpu:.1f})", f"{up.median:.2f} s (CPU {up.cpu:.1f})", f"{ratio:.4f}{committed('warm_check_files')}", "-", None, ""))

        if 4 in figures:
            target = pick_file(work / "src")
            relative = target.relative_to(work)
            original = target.read_bytes()
            target_lines = len(original.splitlines())

            def edit(i):
                target.write_bytes(original + f"# edited by the benchmark, run {i} at {time.time()}\n".encode())

            log(f"pre-commit: check {relative} ({target_lines} lines), changed then unchanged")
            changed, unchanged = Series(), Series()
            for i in range(repeat):
                edit(i)
                changed.runs.extend(series("check FILE (changed)", 1, lambda _: [*tfmigrate, "check", str(relative)], work, log, tmp=tmp).runs)
                unchanged.runs.extend(series("check FILE (cached)", 1, lambda _: [*tfmigrate, "check", str(relative)], work, log, tmp=tmp).runs)
            target.write_bytes(original)
            note_series("check FILE changed", changed)
            note_series("check FILE cached", unchanged)
            log("tf_upgrade_v2 --infile on the same file")
            up_one = note_series("tf_upgrade_v2 FILE", series(
                "tf_upgrade_v2 --infile", repeat,
                lambda i: [upgrade, "--infile", str(relative), "--outfile", f"one_{i}.py", "--reportfile", f"one_{i}.txt"], work, log, tmp=tmp,
            ))
            rows.append((f"4. pre-commit, 1 changed file ({target_lines} lines)", f"{changed.median:.2f} s", f"{up_one.median:.2f} s",
                         f"{changed.median:.2f} s", "<= 1.0 s", changed.median <= 1.0, ""))
            rows.append(("4. pre-commit, 1 unchanged (cached) file", f"{unchanged.median:.2f} s", f"{up_one.median:.2f} s",
                         f"{unchanged.median:.2f} s", "<= 0.3 s", unchanged.median <= 0.3, ""))
        shutil.rmtree(work, ignore_errors=True)

        # --- jobs: tensor2tensor, --jobs 1 vs --jobs 2 -------------------------------------------
        work.mkdir()
        shutil.copytree(bench_src, work / "src")
        if figures & {7, 8}:
            log("cold check --jobs 1 and a bare libcst parse of the same files, in turn")
            one, bare = alternating(repeat, ("check --no-cache --jobs 1", lambda i: [*tfmigrate, "check", "--no-cache", "--jobs", "1", "src"], None),
                                    ("bare libcst.parse_module", lambda i: [sys.executable, "-c", BARE_PARSE, "src"], None), work, log, tmp)
            note_series("check --jobs 1", one)
            note_series("bare parse", bare)
            single = one.cpu / bare.cpu
        if 7 in figures:
            log("cold check --jobs 2")
            two = note_series("check --jobs 2", series("check --no-cache --jobs 2", repeat, lambda i: [*tfmigrate, "check", "--no-cache", "--jobs", "2", "src"], work, log, tmp=tmp))
            speedup = one.median / two.median
        shutil.rmtree(work, ignore_errors=True)

        if figures & {5, 6}:
            # --- growth: the whole corpus 1x, 2x, 4x --------------------------------------------------
            growth_pkgs = [p for p in packages if p.name.startswith("trfl")] if args.quick else packages
            growth: Dict[int, Series] = {}
            gfiles = glines = 0
            for copies in (1, 2, 4):
                folder = tmp / f"growth{copies}x"
                for j in range(copies):
                    for pkg in growth_pkgs:
                        shutil.copytree(pkg, folder / "src" / f"copy{j}" / pkg.name)
                if copies == 1:
                    found = py_files(folder / "src")
                    gfiles, glines = len(found), count_lines(found)
                    log(f"growth corpus 1x: {len(growth_pkgs)} packages, {gfiles} files, {glines:,} lines")
                log(f"cold check of the corpus {copies}x")
                growth[copies] = note_series(f"check corpus {copies}x", series(
                    f"check --no-cache corpus {copies}x", repeat, lambda i: [*tfmigrate, "check", "--no-cache", "src"], folder, log, tmp=tmp,
                ))
                if copies == 1:
                    log("tf_upgrade_v2 on the corpus 1x (one run: a reference)")
                    up_corpus = series("tf_upgrade_v2 corpus 1x", 1, lambda i: [upgrade, "--intree", "src", "--outtree", "upgraded", "--reportfile", "report.txt"],
                                       folder, log, ok=range(0, 256), tmp=tmp)
                    up_corpus_rc = up_corpus.runs[0].rc
                shutil.rmtree(folder, ignore_errors=True)
            g2, g4 = growth[2].median / growth[1].median, growth[4].median / growth[1].median
            up_note = f"{up_corpus.median:.1f} s (1x)" + (f", exit {up_corpus_rc}" if up_corpus_rc else "")
            rows.append((f"5. corpus 1x ({gfiles} files, {glines / 1000:.0f}k lines)", f"{growth[1].median:.2f} s", up_note, "1.00x", "", None, ""))
            rows.append(("5. corpus 2x", f"{growth[2].median:.2f} s", "", f"{g2:.2f}x", "<= 2.2x", g2 <= 2.2, ""))
            rows.append(("5. corpus 4x", f"{growth[4].median:.2f} s", "", f"{g4:.2f}x", "<= 4.4x", g4 <= 4.4, ""))

            synth_dir = tmp / "synthetic"
            synth_dir.mkdir()
            sizes = (2_500, 5_000, 10_000) if args.quick else (12_500, 25_000, 50_000)
            synth: Dict[int, Series] = {}
            synth_up: Dict[int, Series] = {}
            for size in sizes:
                name = f"synthetic_{size}.py"
                (synth_dir / name).write_text(synthetic_module(size))
                real = len((synth_dir / name).read_text().splitlines())
                log(f"synthetic module, {real:,} lines")
                # The 25k and 50k-line modules (1.2 and 2.3 MB) are over the default max-file-size
                # (800 KB), which reports such a file (TFM001) and skips it: the limit is raised here,
                # and each run's report is checked to hold the module's findings, not that refusal.
                synth[size] = note_series(f"check synthetic {size}", series(
                    f"check --no-cache {name}", repeat,
                    lambda i: [*tfmigrate, "check", "--no-cache", "--max-file-size", SYNTH_MAX_FILE_SIZE, name],
                    synth_dir, log, tmp=tmp, inspect=_checked_whole,
                ))
                synth_up[size] = note_series(f"tf_upgrade_v2 synthetic {size}", series(
                    f"tf_upgrade_v2 {name}", repeat,
                    lambda i: [upgrade, "--infile", name, "--outfile", f"up_{i}_{name}", "--reportfile", f"up_{i}_{size}.txt"], synth_dir, log, tmp=tmp,
                ))
            base = synth[sizes[0]].median
            for size in sizes:
                growth_ratio = synth[size].median / base
                limit = 1.1 * size / sizes[0]
                label = f"5. synthetic module {size / 1000:g}k lines"
                up_s = synth_up[size].median
                if size == sizes[0]:
                    rows.append((label, f"{synth[size].median:.2f} s", f"{up_s:.2f} s", "1.00x", "", None, ""))
                else:
                    rows.append((label, f"{synth[size].median:.2f} s", f"{up_s:.2f} s", f"{growth_ratio:.2f}x", f"<= {limit:.1f}x", growth_ratio <= limit, ""))
            # the fixed start-up hides part of any superlinear term: show the marginal cost as well
            per_kline = [(synth[b].median - synth[a].median) / ((b - a) / 1000) for a, b in zip(sizes, sizes[1:])]
            marginal = per_kline[-1] / per_kline[0] if per_kline[0] > 0 else float("inf")

        if 6 in figures:
            peak4 = growth[4].peak_mb
            rows.append(("6. peak RSS, corpus 4x cold check", f"{peak4:.0f} MB", "", f"{peak4:.0f} MB", "< 400 MB", peak4 < 400, "largest process"))
        if 7 in figures:
            rows.append(("7. --jobs 1 / --jobs 2 (cold check)", f"{one.median:.2f} / {two.median:.2f} s (CPU {one.cpu:.1f} / {two.cpu:.1f})", "", f"{speedup:.2f}x{committed('jobs_speedup')}", ">= 1.7x", speedup >= 1.7, ""))
        if 8 in figures:
            rows.append(("8. one process: check --jobs 1 / bare libcst parse", f"CPU {one.cpu:.2f} s", f"bare parse CPU {bare.cpu:.2f} s",
                         f"{single:.3f}{committed('single_process')}", "<= 1.6", single <= 1.6, ""))
    finally:
        if args.keep:
            log(f"kept {tmp}")
        else:
            shutil.rmtree(tmp, ignore_errors=True)

    # --- the report ------------------------------------------------------------------------------
    v = versions()
    load_end = os.getloadavg()
    print()
    print(f"tfmigrate benchmark{' (--quick: 1 run on a subset)' if args.quick else f' (median of {repeat} runs)'}")
    print(f"machine: {cores()} cores, {cpu_model()}, {platform.system()} {platform.release()}, "
          f"Python {platform.python_version()}")
    print(f"versions: tfmigrate {v.get('tfmigrate', '?')}, libcst {v.get('libcst', '?')}, "
          f"tensorflow {v.get('tensorflow-cpu', v.get('tensorflow', '?'))} (tf_upgrade_v2)")
    print(f"benchmark package: {what}; tfmigrate command: {' '.join(Path(c).name if i == 0 else c for i, c in enumerate(tfmigrate))}")
    print(f"load average at start {load_start[0]:.2f} / {load_start[1]:.2f} / {load_start[2]:.2f}, at end "
          f"{load_end[0]:.2f} / {load_end[1]:.2f} / {load_end[2]:.2f}; other programs used at most "
          f"{foreign:.0%} of the machine during a kept run")
    print()
    header = ("figure", "tfmigrate", "tf_upgrade_v2", "measure", "target", "result")
    table = [header] + [
        (r[0], r[1], r[2], r[3], r[4], "" if r[5] is None else ("PASS" if r[5] else "MISS")) for r in rows
    ]
    widths = [max(len(row[k]) for row in table) for k in range(len(header))]
    print("| " + " | ".join(h.ljust(w) for h, w in zip(header, widths)) + " |")
    print("|" + "|".join("-" * (w + 2) for w in widths) + "|")
    for row in table[1:]:
        print("| " + " | ".join(c.ljust(w) for c, w in zip(row, widths)) + " |")
    print()
    if figures & {5, 6}:
        print(f"synthetic module, marginal cost per 1k lines: "
              + ", ".join(f"{c:.3f} s" for c in per_kline)
              + f" (last / first = {marginal:.2f}; 1.0 is linear)")
    print("peak RSS (largest process) per series: " + ", ".join(f"{k} {m:.0f} MB" for k, m in peaks.items()))
    print(f"total benchmark time {time.time() - started:.0f} s")
    return 0 if all(r[5] is not False for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
