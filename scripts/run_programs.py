"""Do the 45 real TF1 programs of ../shared/tf1-programs still run under TensorFlow 2.21 after
migration, and print what they printed on the TF1 compatibility route? (a report, not a test)

Usage:
    .venv/bin/python scripts/run_programs.py                  # all 45 programs, 4 modes (about 25 min on 2 cores)
    .venv/bin/python scripts/run_programs.py --fast 5         # the 5 programs with the smallest expected_seconds
    .venv/bin/python scripts/run_programs.py --only morvan-203_variable,stanford-02_placeholder
    .venv/bin/python scripts/run_programs.py --modes native          # issue 13: fix --native (opt-in)
    .venv/bin/python scripts/run_programs.py --modes native,keras3   # and issue 22's level 3 (opt-in)
    options: --programs DIR (default ../shared/tf1-programs), --python PY (default .venv/bin/python),
             --jobs N (programs run in parallel, default 2), --modes asis,fix,... , --json FILE (every
             run), --legacy-keras-env (TF_USE_LEGACY_KERAS=1 for every run, for comparison only),
             --keep (keep the work copies), --tmp DIR (where to make them)

Every program is driven through the corpus harness (`run.py prepare | compat | exec`), on fresh
scratch copies in a temporary folder (nothing is written under the programs folder or the repo).
Modes, each on its own copy (patch first, then migrate, then run):
    asis            the prepared copy, unchanged (all 45 are expected to fail)
    fix             `tfmigrate fix --no-cache --exit-zero` (the safe fixes)
    unsafe          `tfmigrate fix --unsafe-fixes --no-cache --exit-zero`
    tf_upgrade_v2   `tf_upgrade_v2 --intree COPY --outtree COPY_tfu --reportfile ...`, run from COPY_tfu
    compat          (not run by default) run.py's own compat route, with tf-keras where the manifest
                    says the reference needed it: the reference route, a self-check of this harness
    native          (not run by default; issue 13) `tfmigrate fix --native --unsafe-fixes --no-cache
                    --exit-zero`, run with the reference's initial weights (below). Until tfmigrate
                    has the option, every native run is `FAIL: no --native option yet`.
    keras3          (not run by default; issue 22 item 4) `fix --native --keras3 --unsafe-fixes`, run
                    and judged as native, and also judged for level 3 (below).
tfmigrate runs as `PY -m tfmigrate` with this checkout first on PYTHONPATH; tf_upgrade_v2 is the
console script next to PY (else `PY -m tensorflow.tools.compatibility.tf_upgrade_v2_main`).
Programs run WITHOUT TF_USE_LEGACY_KERAS (run.py removes it from the environment): migrated code
must run by itself. Timeout per program run: max(60, 4 x expected_seconds).

A run is `FAIL` (non-zero exit status or timeout), `same` (it ran and its last stdout line equals
the manifest's reference_last_line, timing numbers such as "Took: 11.4 seconds" ignored; only for
stable_output yes/last-line-only; numbers equal within 1e-5 count as the same), `same (spread)` (another
line, but one the reference route also prints when run here up to 3 times: the program's own run-to-run
spread), `DIFF` (it ran, with another last line) or `ok` (it ran; no
line to compare: stable_output=no, or the 5 programs that print nothing, where exit status 0 is
success). For stable_output=no the metric line (reference_metric_line, else the last line) is
shown beside the run's line of the same shape, with the relative difference of its value (the
first non-integer number: a loss or accuracy, not a step counter).

Native mode, per program: first the reference, run.py's compat route (with tf-keras where the
manifest says so; it is also the `compat` column if that mode is selected), run with
TFMIGRATE_WEIGHTS_DUMP: it writes the initial values of its trainable variables (after the first
Session.run of global_variables_initializer, in creation order) to an .npz. Then the native copy,
run with TFMIGRATE_WEIGHTS_LOAD=that .npz: each trainable variable it creates (tf.Variable, Keras 3
layer weights, also when built inside a tf.function) starts from the next dumped array while the
shapes match. Both through scripts/weights_hook/sitecustomize.py, put first on PYTHONPATH (run.py
exec keeps PYTHONPATH, after its shim; the hook does nothing until the program imports TensorFlow).
What was dumped and injected is shown as `weights:` (`injected 4/4`, or the first shape mismatch).
  native      the entry file and its helper modules (manifest `helpers`, same-folder imports)
              contain, outside comments and strings, none of: a `...Session(` call, a name with
              `placeholder`, `feed_dict`, `test_session`, `disable_v2_behavior` or
              `disable_eager_execution` (issue 21's definition of eager TF2: `tf.compat.v1` names that
              run eagerly, such as the model-mapping route's `track_tf1_style_variables` and
              `get_variable`, are allowed) (else: the first of
              each, and the construct each TFM216 finding names, from
              `tfmigrate check --native --output-format json`, on the migrated files, else the
              prepared ones)
  seeded      the original source calls set_random_seed / random.set_seed, or stable_output is
              yes / last-line-only. Verdict: `same` (last line equal to the reference run's here or
              the manifest's, numbers within 1e-5 relative), `close` (within 1e-3), `DIFF`
  unseeded    `xR`: R = the metric value (reference_metric_line's shape, the first non-integer
              number) of the native run / of the reference run here; within 2x if 0.5 <= R <= 2
  also        `lines same k/n`: stdout lines equal to the reference run's at the same place
The cell reads `native, same` / `not native, x1.03` / `FAIL: ...`; the summary counts programs
native AND running, of those the seeded ones `same` and the unseeded ones within 2x.
  level 3     (keras3 mode) `pure TF2`: native, and no `compat.v1` / `tf.compat` name,
              `track_tf1_style_variables`, `tf_keras` or `TF_USE_LEGACY_KERAS` left in the code
              (else `TF1 kept:` the first of each): the program needs neither TensorFlow's compat
              module nor tf-keras.
(Testing the harness: the hidden `--native-from DIR` copies DIR/<id>/* over the program's folder
instead of running fix --native.)

Targets (from the issue): >= 90% of the programs run after `fix --unsafe-fixes` and every one
with a reference prints the same last line; >= 60% run after the safe `fix`. Issue 13 (native
mode): >= 60% native and running; every seeded one the same, every unseeded one within 2x.
"""
from __future__ import annotations

import argparse
import csv
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Dict, List, Optional, Sequence, Tuple

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_PROGRAMS = ROOT.parent / "shared" / "tf1-programs"
MODES = ("asis", "fix", "unsafe", "tf_upgrade_v2")
ALL_MODES = MODES + ("compat", "native", "keras3")
NATIVE_MODES = ("native", "keras3")  # both run with the reference's weights and are compared with it
HOOK_DIR = Path(__file__).resolve().parent / "weights_hook"  # sitecustomize.py: weight dump / injection
DUMP_ENV, LOAD_ENV = "TFMIGRATE_WEIGHTS_DUMP", "TFMIGRATE_WEIGHTS_LOAD"
NO_STDOUT = "(no stdout)"  # reference_last_line of the 5 programs that print nothing
STEP_TIMEOUT = 600.0  # seconds for one prepare / migration step
CELL = 34  # width of a mode's column in the table

_NUMBER = r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?"
_NUMBER_RE = re.compile(_NUMBER)
# A number after "took"/"time"/"elapsed" or before a unit of seconds: "Took: 11.454136 seconds",
# "Total time: 3.2 seconds", "Loss 13968.7. Time 0.365", "0.5 s".
_TIMING_RE = re.compile(
    rf"(?i)(\b(?:took|time|elapsed|duration)\b\s*[:=]?\s*){_NUMBER}|{_NUMBER}(\s*(?:s|secs?|seconds|ms)\b)"
)
_NO_ATTRIBUTE_RE = re.compile(r"module '([\w.]+)' has no attribute '(\w+)'")
_DID_YOU_MEAN_RE = re.compile(r"\.? Did you mean: '\w+'\?")


# --------------------------------------------------------------------------------------------
# the corpus

@dataclass
class Program:
    """One row of manifest.tsv, the columns this script uses."""

    id: str
    expected_seconds: float
    stable_output: str  # yes | last-line-only | no
    reference_last_line: str
    reference_metric_line: str  # "-" if none
    needs_tf_keras: bool  # compat_needs_tf_keras: the reference ran with tf-keras
    repo_short: str = ""
    original_path: str = ""  # the entry file, relative to programs/<repo_short>/
    helpers: Tuple[str, ...] = ()  # helper modules (.py) relative to programs/<repo_short>/

    def source_files(self, root: Path) -> List[Path]:
        """The entry file and its helper modules under `root` (a work copy, or programs/), entry
        first, then the helpers of the manifest and the same-folder modules the entry imports."""
        entry = root / self.repo_short / self.original_path
        files = [entry] + [root / self.repo_short / h for h in self.helpers]
        try:
            text = entry.read_text(encoding="utf-8", errors="replace")
        except OSError:
            return [f for f in files if f.is_file()]
        for name in re.findall(r"(?m)^\s*(?:from|import)\s+(\w+)", text):
            local = entry.parent / (name + ".py")
            if local.is_file() and local not in files:
                files.append(local)
        return [f for f in files if f.is_file()]

    @property
    def timeout(self) -> float:
        return max(60.0, 4 * self.expected_seconds)

    @property
    def prints_nothing(self) -> bool:
        return self.reference_last_line == NO_STDOUT

    @property
    def has_reference(self) -> bool:
        """A last line that repeats from run to run, to compare exactly."""
        return self.stable_output in ("yes", "last-line-only") and not self.prints_nothing

    @property
    def metric_reference(self) -> Optional[str]:
        if self.reference_metric_line not in ("", "-"):
            return self.reference_metric_line
        return None if self.prints_nothing else self.reference_last_line


def load_programs(programs_dir: Path) -> List[Program]:
    """The manifest's programs, in manifest order."""
    with open(programs_dir / "manifest.tsv", newline="", encoding="utf-8") as f:
        return [
            Program(
                id=row["id"],
                expected_seconds=float(row["expected_seconds"]),
                stable_output=row["stable_output"],
                reference_last_line=row["reference_last_line"],
                reference_metric_line=row["reference_metric_line"],
                needs_tf_keras=row["compat_needs_tf_keras"] == "yes",
                repo_short=row.get("repo_short", ""),
                original_path=row.get("original_path", ""),
                helpers=tuple(h for h in row.get("helpers", "").split(";") if h.strip().endswith(".py")),
            )
            for row in csv.DictReader(f, delimiter="\t")
        ]


def select(programs: List[Program], only: Optional[str] = None, fast: Optional[int] = None) -> List[Program]:
    """--only ID,ID (in manifest order), then --fast N: the N with the smallest expected_seconds."""
    chosen = programs
    if only:
        wanted = [x.strip() for x in only.split(",") if x.strip()]
        unknown = sorted(set(wanted) - {p.id for p in programs})
        if unknown:
            raise ValueError("not in manifest.tsv: " + ", ".join(unknown))
        chosen = [p for p in programs if p.id in wanted]
    if fast is not None:
        quickest = {p.id for p in sorted(chosen, key=lambda p: p.expected_seconds)[:fast]}  # stable sort
        chosen = [p for p in chosen if p.id in quickest]
    return chosen


# --------------------------------------------------------------------------------------------
# comparing outputs

def without_timings(line: str) -> str:
    """The line with its timing numbers replaced by <t>."""
    return _TIMING_RE.sub(lambda m: (m.group(1) or "") + "<t>" + (m.group(2) or ""), line.strip())


def same_line(got: str, reference: str, rel: float = 1e-5) -> bool:
    """The same line, timings aside, and numbers equal within float32 printing (the references
    were printed on another machine: `0.4152645` there is `0.41526446` here)."""
    got, reference = without_timings(got), without_timings(reference)
    if got == reference:
        return True
    if shape(got).replace(" ", "") != shape(reference).replace(" ", ""):  # numpy pads to the widest
        return False
    pairs = zip(_NUMBER_RE.findall(got), _NUMBER_RE.findall(reference))
    try:
        return all(abs(float(a) - float(b)) <= rel * max(abs(float(a)), abs(float(b)), 1e-3) for a, b in pairs)
    except ValueError:
        return False


def shape(line: str) -> str:
    """The line with every number replaced by # and runs of blanks collapsed."""
    return " ".join(_NUMBER_RE.sub("#", line).split())


def metric_line(stdout: str, reference: str) -> Optional[str]:
    """The last stdout line of the same shape as the reference metric line."""
    want = shape(reference)
    for line in reversed(stdout.splitlines()):
        if line.strip() and shape(line) == want:
            return line.strip()
    return None


def metric_value(line: str) -> Optional[float]:
    """The first non-integer number of a line (the loss or accuracy, not the step), else the first."""
    numbers = _NUMBER_RE.findall(line)
    for text in numbers:
        if any(c in text for c in ".eE"):
            return float(text)
    return float(numbers[0]) if numbers else None


def relative_difference(got: str, reference: str) -> Optional[float]:
    a, b = metric_value(got), metric_value(reference)
    if a is None or b is None:
        return None
    if b == 0:
        return 0.0 if a == 0 else None
    return (a - b) / abs(b)


def short_error(error: str, width: int = 200) -> str:
    """One line; `AttributeError: module 'tensorflow' has no attribute 'Session'. Did you mean:
    'version'?` -> `AttributeError: no tensorflow.Session`."""
    text = _DID_YOU_MEAN_RE.sub("", " ".join(error.split()))
    text = _NO_ATTRIBUTE_RE.sub(lambda m: f"no {m.group(1)}.{m.group(2)}", text)
    return text if len(text) <= width else text[: width - 3] + "..."


# --------------------------------------------------------------------------------------------
# native mode (issue 13): is the migrated program TF2-native, and does it compute what the reference did?

TF1_CONSTRUCTS = ("Session(", "placeholder", "feed_dict", "test_session", "disable_v2_behavior",
                  "disable_eager_execution")
SAME_REL, CLOSE_REL = 1e-5, 1e-3  # "same" (same_line's float32 printing tolerance), "close"
NO_NATIVE_FLAG_RE = re.compile(r"(?i)no such option:?\s*'?--native|unrecognized arguments:.*--native")


def _code_tokens(source: str) -> List[Tuple[int, int, str]]:
    """(type, line, text) of the code tokens: no comments, strings, newlines or indents."""
    import io
    import tokenize

    skip = {tokenize.COMMENT, tokenize.STRING, tokenize.NL, tokenize.NEWLINE, tokenize.INDENT,
            tokenize.DEDENT, tokenize.ENCODING, tokenize.ENDMARKER}
    skip |= {getattr(tokenize, n) for n in ("FSTRING_START", "FSTRING_MIDDLE", "FSTRING_END") if hasattr(tokenize, n)}
    return [(t.type, t.start[0], t.string) for t in tokenize.generate_tokens(io.StringIO(source).readline)
            if t.type not in skip]


def tf1_constructs(source: str) -> List[Tuple[int, str]]:
    """(line, construct) of every TF1 construct of TF1_CONSTRUCTS left in the code, in source order,
    comments and strings aside: a call of a name ending in Session (`tf.Session(`,
    `InteractiveSession(`), a name containing placeholder (`placeholder_with_default` too),
    `feed_dict`, `test_session`, `disable_v2_behavior`, `disable_eager_execution` (graph mode's
    switches; `tf.compat.v1` names that run eagerly are not graph code).
    Source that does not tokenize is searched as text, line by line, without its `#` comments."""
    import tokenize

    found: List[Tuple[int, str]] = []
    try:
        tokens = _code_tokens(source)
    except (tokenize.TokenError, SyntaxError, IndentationError):
        for no, line in enumerate(source.splitlines(), 1):
            code = line.split("#", 1)[0]
            for construct in TF1_CONSTRUCTS:
                if construct in code.replace(" ", ""):
                    found.append((no, construct))
        return found
    names = [(i, t) for i, t in enumerate(tokens) if t[0] == tokenize.NAME]
    for i, (_, line, text) in names:
        after = tokens[i + 1][2] if i + 1 < len(tokens) else ""
        if text.endswith("Session") and after == "(":
            found.append((line, "Session("))
        elif "placeholder" in text:
            found.append((line, "placeholder"))
        elif text == "feed_dict":
            found.append((line, "feed_dict"))
        elif text in ("test_session", "disable_v2_behavior", "disable_eager_execution"):
            found.append((line, text))
    return found


LEGACY_CONSTRUCTS = ("compat", "track_tf1_style_variables", "tf_keras", "TF_USE_LEGACY_KERAS")


def legacy_constructs(source: str) -> List[Tuple[int, str]]:
    """(line, construct) of what keeps a program off level 3 (pure TF2), in source order, comments
    aside: a `compat` name (`tf.compat.v1...`, `from tensorflow.compat import v1`), the
    model-mapping route's `track_tf1_style_variables`, `tf_keras`, and `TF_USE_LEGACY_KERAS` (in a
    string too: `os.environ["TF_USE_LEGACY_KERAS"] = "1"`). Source that does not tokenize is
    searched as text, line by line, without its `#` comments."""
    import io
    import tokenize

    found: List[Tuple[int, str]] = []
    try:
        tokens = [t for t in tokenize.generate_tokens(io.StringIO(source).readline)
                  if t.type in (tokenize.NAME, tokenize.STRING)]
    except (tokenize.TokenError, SyntaxError, IndentationError):
        for no, line in enumerate(source.splitlines(), 1):
            code = line.split("#", 1)[0]
            found.extend((no, c) for c in LEGACY_CONSTRUCTS if re.search(rf"\b{c}\b", code))
        return found
    for token in tokens:
        if token.type == tokenize.NAME and token.string in LEGACY_CONSTRUCTS[:3]:
            found.append((token.start[0], token.string))
        elif token.type == tokenize.STRING and LEGACY_CONSTRUCTS[3] in token.string:
            found.append((token.start[0], LEGACY_CONSTRUCTS[3]))
    return found


def first_of_each(files: Sequence[Path], constructs) -> List[str]:
    """"file.py:line construct" for the first place of each construct `constructs(source)` finds
    in `files`, in file order."""
    kinds, first = set(), []
    for path in files:
        for line, construct in constructs(path.read_text(encoding="utf-8", errors="replace")):
            if construct not in kinds:
                kinds.add(construct)
                first.append(f"{path.name}:{line} {construct}")
    return first


def is_seeded(source: str) -> bool:
    """The source seeds TensorFlow: it calls set_random_seed or random.set_seed (code, not comments)."""
    try:
        tokens = _code_tokens(source)
    except Exception:
        return bool(re.search(r"(?m)^[^#]*(set_random_seed|random\.set_seed)\s*\(", source))
    texts = [t[2] for t in tokens]
    for i, text in enumerate(texts):
        if text == "set_random_seed" or (text == "set_seed" and i >= 2 and texts[i - 1] == "." and texts[i - 2] == "random"):
            return True
    return False


def not_rewritten_reasons(findings: Sequence[dict]) -> List[str]:
    """Why `fix --native` left a module on the compat route: the construct each TFM216 finding
    (tfmigrate check --native --output-format json) names, as "<file>:<line>: <construct>", in
    order, without repeats."""
    reasons: List[str] = []
    for finding in findings:
        message = str(finding.get("message", ""))
        match = re.search(r"stopped at line (\d+): (.*?)\. It rewrites", message)
        if finding.get("rule") != "TFM216" or not match:
            continue
        where = Path(str(finding.get("filename") or finding.get("path") or "")).name
        reason = f"{where}:{match.group(1)}: {match.group(2)}"
        if reason not in reasons:
            reasons.append(reason)
    return reasons


def loss_ratio(native_line: Optional[str], reference_line: Optional[str]) -> Optional[float]:
    """metric_value(native) / metric_value(reference): the final-loss ratio (None if either is
    missing, or the reference's value is 0)."""
    if native_line is None or reference_line is None:
        return None
    a, b = metric_value(native_line), metric_value(reference_line)
    if a is None or b is None or b == 0:
        return None
    return a / b


def within_2x(ratio: Optional[float]) -> bool:
    return ratio is not None and 0.5 <= ratio <= 2.0


def lines_same(got: str, reference: str, rel: float = SAME_REL) -> Tuple[int, int]:
    """(stdout lines equal to the reference's line at the same place, lines of the longer one)."""
    a = [line for line in got.splitlines() if line.strip()]
    b = [line for line in reference.splitlines() if line.strip()]
    return sum(same_line(x, y, rel) for x, y in zip(a, b)), max(len(a), len(b))


def compare_native(native_stdout: str, reference_stdout: Optional[str], program: Program,
                   seeded: bool) -> Dict[str, object]:
    """The native run's output against the reference run's (the compat route run here with the
    weights dumped; the manifest's lines if it did not run). verdict: for a seeded program `same`
    (last line within SAME_REL, of the reference run here or the manifest's), `close` (CLOSE_REL)
    or `diff`; for an unseeded one `within 2x` / `beyond 2x` (the metric's ratio) or `no metric`;
    `ok` for a program that prints nothing."""
    reference_last = (last_line_of(reference_stdout) if reference_stdout is not None
                      else ("" if program.prints_nothing else program.reference_last_line))
    native_last = last_line_of(native_stdout)
    out: Dict[str, object] = {"reference_line": reference_last, "ratio": None, "lines_same": ""}
    reference_metric = program.metric_reference
    if reference_metric:
        mine = metric_line(native_stdout, reference_metric)
        theirs = metric_line(reference_stdout, reference_metric) if reference_stdout is not None else None
        out["ratio"] = loss_ratio(mine, theirs or reference_metric)
    if reference_stdout is not None:
        k, n = lines_same(native_stdout, reference_stdout)
        out["lines_same"] = f"{k}/{n}"
    if program.prints_nothing and not native_last:
        out["verdict"] = "ok"
    elif seeded:
        candidates = [reference_last] + ([program.reference_last_line] if program.has_reference else [])
        if any(same_line(native_last, c, SAME_REL) for c in candidates if c):
            out["verdict"] = "same"
        elif any(same_line(native_last, c, CLOSE_REL) for c in candidates if c):
            out["verdict"] = "close"
        else:
            out["verdict"] = "diff"
    elif out["ratio"] is None:
        out["verdict"] = "no metric"
    else:
        out["verdict"] = "within 2x" if within_2x(out["ratio"]) else "beyond 2x"
    return out


def weights_env(dump: Optional[Path] = None, load: Optional[Path] = None) -> Dict[str, str]:
    """The environment of a run with the weights hook: HOOK_DIR first on PYTHONPATH (run.py exec
    keeps PYTHONPATH, after its shim), and the dump or load path."""
    path = os.environ.get("PYTHONPATH")
    env = dict(os.environ, PYTHONPATH=str(HOOK_DIR) + (os.pathsep + path if path else ""))
    env.pop(DUMP_ENV, None)
    env.pop(LOAD_ENV, None)
    if dump is not None:
        env[DUMP_ENV] = str(dump)
    if load is not None:
        env[LOAD_ENV] = str(load)
    return env


def weights_summary(npz: Path, loaded: bool) -> str:
    """One phrase from the hook's status files: what was dumped, what was injected."""
    def read(path: Path) -> Optional[dict]:
        try:
            return json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None

    dump = read(Path(str(npz) + ".dump.json"))
    if dump is None:
        return "no dump (the reference did not run)"
    if not dump.get("dumped"):
        return f"no dump: {dump.get('reason', '?')}"
    if not loaded:
        return f"dumped {dump.get('count')}"
    load = read(Path(str(npz) + ".load.json"))
    if load is None:
        return f"dumped {dump.get('count')}, not loaded (no TensorFlow import?)"
    text = f"injected {load['injected']}/{load['of']}"
    mismatch = load.get("mismatch")
    if not mismatch and load["injected"] < load["of"]:
        text += " (fewer trainable variables made, or on another graph or thread)"
    if mismatch:
        text += (f", shape mismatch at #{mismatch['index']} ({mismatch.get('name')}: "
                 f"{mismatch.get('variable_shape')} vs dumped {mismatch.get('dumped_shape')})")
    if load.get("extra_trainable"):
        text += f", {load['extra_trainable']} more trainable"
    return text


# --------------------------------------------------------------------------------------------
# running one program in one mode

@dataclass
class Settings:
    programs_dir: Path
    python: str
    modes: Sequence[str] = MODES
    legacy_keras_env: bool = False  # TF_USE_LEGACY_KERAS=1 for every run
    keep: bool = False
    tmp: Optional[Path] = None
    native_from: Optional[Path] = None  # hidden --native-from DIR: DIR/<id>/ files instead of fix --native


@dataclass
class RunResult:
    id: str
    mode: str
    status: str = "fail"  # same | ok | diff | fail
    rc: Optional[int] = None
    seconds: float = 0.0  # the program's run
    timed_out: bool = False
    last_line: str = ""
    reference_last_line: str = ""
    error: str = ""
    step_seconds: float = 0.0  # prepare + migration
    legacy_keras: bool = False
    stdout_lines: int = 0
    metric_line: Optional[str] = None
    reference_metric_line: Optional[str] = None
    metric_rel_diff: Optional[float] = None
    stderr_tail: List[str] = field(default_factory=list)  # of a failed run or step
    compat_lines: List[str] = field(default_factory=list)  # reference route re-run here, for a DIFF
    workdir: str = ""
    stdout_path: str = ""
    # native mode only
    native: Optional[bool] = None  # no TF1_CONSTRUCTS left in the entry file and its helpers
    native_blockers: List[str] = field(default_factory=list)  # "file.py:line construct", first of each kind
    not_rewritten: List[str] = field(default_factory=list)  # TFM216's constructs (check --native)
    seeded: Optional[bool] = None
    weights: str = ""  # what the hook dumped and injected
    reference_here: str = ""  # last line of the reference (compat) run made here
    reference_here_rc: Optional[int] = None
    native_verdict: str = ""  # same | close | diff | within 2x | beyond 2x | no metric | ok
    loss_ratio: Optional[float] = None  # metric value native / reference
    lines_same: str = ""  # stdout lines equal to the reference's, "k/n"
    # keras3 mode only
    pure_tf2: Optional[bool] = None  # native and no LEGACY_CONSTRUCTS left (level 3)
    legacy_left: List[str] = field(default_factory=list)  # "file.py:line construct", first of each kind

    @property
    def ran(self) -> bool:
        return self.status != "fail"

    def cell(self) -> str:
        if self.status == "fail":
            error = short_error(self.error or f"exit status {self.rc}")
            text = "FAIL: " + re.sub(r"\btensorflow\b", "tf", error.replace("AttributeError: no ", "no "))
        elif self.mode in NATIVE_MODES:
            verdict = {"diff": "DIFF", "within 2x": f"x{self.loss_ratio:.2f}" if self.loss_ratio else "",
                       "beyond 2x": f"x{self.loss_ratio:.2f} (>2x)" if self.loss_ratio else ""}.get(
                self.native_verdict, self.native_verdict)
            text = ("native" if self.native else "not native") + (", " + verdict if verdict else "")
            if self.mode == "keras3" and self.native:
                text += ", pure TF2" if self.pure_tf2 else ", TF1 kept"
        else:
            text = {"same": "same", "spread": "same (spread)", "ok": "ok", "diff": "DIFF"}[self.status]
        return text if len(text) <= CELL - 1 else text[: CELL - 4] + "..."


class StepFailed(Exception):
    """A prepare or migration step exited non-zero; `output` is what it printed."""

    def __init__(self, message: str, output: str):
        super().__init__(message)
        self.output = output


def step(what: str, cmd: Sequence[object], cwd: Path, timeout: float = STEP_TIMEOUT,
         env: Optional[Dict[str, str]] = None) -> str:
    """Run one command; its stdout + stderr. StepFailed if it exits non-zero or times out."""
    try:
        proc = subprocess.run([str(c) for c in cmd], cwd=str(cwd), env=env, stdin=subprocess.DEVNULL,
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=timeout)
    except subprocess.TimeoutExpired as exc:
        raise StepFailed(f"{what} timed out after {timeout:.0f} s",
                         (exc.output or b"").decode("utf-8", "replace")) from None
    out = proc.stdout.decode("utf-8", "replace")
    if proc.returncode != 0:
        raise StepFailed(f"{what} exited {proc.returncode}: {last_line_of(out)}", out)
    return out


def tfmigrate_cmd(python: str) -> Tuple[List[str], Dict[str, str]]:
    """`PY -m tfmigrate` and an environment with this checkout first on PYTHONPATH."""
    path = os.environ.get("PYTHONPATH")
    env = dict(os.environ, PYTHONPATH=str(ROOT) + (os.pathsep + path if path else ""))
    return [python, "-m", "tfmigrate"], env


def tf_upgrade_cmd(python: str) -> List[str]:
    script = Path(python).parent / "tf_upgrade_v2"
    if script.exists():
        return [str(script)]
    return [python, "-m", "tensorflow.tools.compatibility.tf_upgrade_v2_main"]


def migrate(mode: str, work: Path, settings: Settings, program: Optional[Program] = None) -> Path:
    """Rewrite the prepared copy `work` for `mode`; the folder to run. (`program`: for --native-from.)"""
    if mode == "asis":
        return work
    if mode in ("fix", "unsafe"):
        cmd, env = tfmigrate_cmd(settings.python)
        unsafe = ["--unsafe-fixes"] if mode == "unsafe" else []
        # --jobs 1: the programs already run `--jobs` at a time
        step("tfmigrate fix", [*cmd, "fix", *unsafe, "--no-cache", "--exit-zero", "--jobs", "1", "."], work, env=env)
        return work
    if mode == "tf_upgrade_v2":
        out_dir = work.parent / (work.name + "_tfu")
        report = work.parent / (work.name + "_tfu_report.txt")
        step("tf_upgrade_v2", [*tf_upgrade_cmd(settings.python), "--intree", work, "--outtree", out_dir,
                               "--reportfile", report], work.parent)
        return out_dir
    if mode == "compat":
        step("run.py compat", [settings.python, settings.programs_dir / "run.py", "compat", work], work.parent)
        return work
    if mode in NATIVE_MODES:
        if settings.native_from is not None:  # hand-written native files, to test this harness
            if program is None:
                raise StepFailed("--native-from needs the program", "")
            source = settings.native_from / program.id
            if not source.is_dir():
                raise StepFailed(f"--native-from: no folder {source}", "")
            folder = (work / program.repo_short / program.original_path).parent
            for path in sorted(source.rglob("*")):
                if path.is_file():
                    target = folder / path.relative_to(source)
                    target.parent.mkdir(parents=True, exist_ok=True)
                    shutil.copyfile(path, target)
            return work
        cmd, env = tfmigrate_cmd(settings.python)
        keras3 = ["--keras3"] if mode == "keras3" else []
        try:
            step(f"tfmigrate fix --native {' '.join(keras3)}".rstrip(),
                 [*cmd, "fix", "--native", *keras3, "--unsafe-fixes", "--no-cache", "--exit-zero", "--jobs", "1", "."],
                 work, env=env)
        except StepFailed as exc:
            if NO_NATIVE_FLAG_RE.search(exc.output):
                raise StepFailed("no --native option yet (tfmigrate fix: No such option)", exc.output) from None
            raise
        return work
    raise ValueError(f"unknown mode {mode!r}")


def last_line_of(text: str) -> str:
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    return lines[-1] if lines else ""


def tail(text: str, n: int = 15) -> List[str]:
    return [line for line in text.splitlines() if line.strip()][-n:]


def run_mode(program: Program, mode: str, base: Path, settings: Settings,
             env: Optional[Dict[str, str]] = None) -> RunResult:
    """Prepare a fresh copy under base/<id>/<mode>, migrate it, run it and judge the output.
    `env`: the environment of `run.py exec` (and so of the program), e.g. weights_env(...)."""
    res = RunResult(program.id, mode, reference_last_line=program.reference_last_line,
                    reference_metric_line=program.metric_reference)
    res.legacy_keras = settings.legacy_keras_env or (mode == "compat" and program.needs_tf_keras)
    run_py = settings.programs_dir / "run.py"
    work = base / program.id / mode
    if work.exists():
        shutil.rmtree(work)
    work.mkdir(parents=True)
    res.workdir = str(work)
    t0 = time.monotonic()
    out = ""
    try:
        step("run.py prepare", [settings.python, run_py, "prepare", program.id, work], work.parent)
        if mode in NATIVE_MODES:  # the prepared sources, for `check --native`
            original = base / program.id / "native_original"
            shutil.rmtree(original, ignore_errors=True)
            shutil.copytree(work, original, ignore=lambda d, names: [
                n for n in names if not n.endswith(".py") and not os.path.isdir(os.path.join(d, n))])
        target = migrate(mode, work, settings, program)
        res.step_seconds = round(time.monotonic() - t0, 1)
        res.workdir = str(target)
        if mode in NATIVE_MODES:
            judge_nativeness(res, program, work, base / program.id / "native_original", settings)
        if mode == "keras3":
            res.legacy_left = first_of_each(program.source_files(work), legacy_constructs)
            res.pure_tf2 = bool(res.native) and not res.legacy_left
        cmd = [settings.python, run_py, "exec", program.id, target, "--python", settings.python,
               "--timeout", program.timeout] + (["--legacy-keras"] if res.legacy_keras else [])
        out = step("run.py exec", cmd, target.parent, timeout=program.timeout + 120, env=env)
        data = json.loads(last_line_of(out))
    except StepFailed as exc:
        res.error, res.stderr_tail = str(exc), tail(exc.output)
        return res
    except ValueError:  # no JSON line
        res.error, res.stderr_tail = f"run.py exec printed no JSON: {last_line_of(out)}", tail(out)
        return res

    res.rc, res.seconds, res.timed_out = data["rc"], data["seconds"], data["timed_out"]
    res.last_line, res.error = data["last_line"], data["error"]
    res.stdout_path = data["stdout"]
    stdout = Path(data["stdout"]).read_text(encoding="utf-8", errors="replace")
    res.stdout_lines = sum(1 for line in stdout.splitlines() if line.strip())
    if program.metric_reference:
        res.metric_line = metric_line(stdout, program.metric_reference)
        if res.metric_line is not None:
            res.metric_rel_diff = relative_difference(res.metric_line, program.metric_reference)

    if res.rc != 0 or res.timed_out:
        res.stderr_tail = tail(Path(data["stderr"]).read_text(encoding="utf-8", errors="replace"))
    elif program.has_reference:
        res.status = "same" if same_line(res.last_line, program.reference_last_line) else "diff"
    else:
        res.status = "ok"
    return res


def judge_nativeness(res: RunResult, program: Program, work: Path, original: Path, settings: Settings) -> None:
    """res.native and res.native_blockers from the migrated entry file and helpers under `work`;
    for a program that is not native, res.not_rewritten from `tfmigrate check --native` on the
    migrated files, else on the prepared ones (`original`), if that option exists."""
    files = program.source_files(work)
    blockers = first_of_each(files, tf1_constructs)
    res.native = bool(files) and not blockers
    res.native_blockers = blockers if files else ["entry file not found"]
    if res.native:
        return
    for root in (work, original):
        reasons = check_native_reasons(program, root, settings)
        if reasons is None:  # no --native for check
            return
        if reasons:
            res.not_rewritten = reasons
            return


def check_native_reasons(program: Program, root: Path, settings: Settings) -> Optional[List[str]]:
    """The constructs TFM216 names in `tfmigrate check --native --output-format json`
    on the program's files under `root`; None if check has no --native option."""
    files = program.source_files(root)
    if not files:
        return []
    cmd, env = tfmigrate_cmd(settings.python)
    proc = subprocess.run([*cmd, "check", "--native", "--output-format", "json", "--no-cache", "--exit-zero",
                           *[str(f) for f in files]], cwd=str(root), env=env, stdin=subprocess.DEVNULL,
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=STEP_TIMEOUT)
    if proc.returncode != 0:
        if NO_NATIVE_FLAG_RE.search(proc.stderr.decode("utf-8", "replace")):
            return None
        return []
    try:
        findings = json.loads(proc.stdout.decode("utf-8", "replace"))
    except ValueError:
        return []
    return not_rewritten_reasons(findings if isinstance(findings, list) else [])


def judged_as_seeded(stable_output: str, sources) -> bool:
    """Whether a program's native run must print the reference's numbers (else its metric is judged
    against the reference's spread). A program whose output the manifest measured as varying run to
    run (`stable_output` no: numpy unseeded, threads) is judged by its spread even when it seeds
    TensorFlow (404_AutoEncoder: `tf.set_random_seed(1)`, but numpy shuffles its batches unseeded)."""
    if stable_output in ("yes", "last-line-only"):
        return True
    return stable_output != "no" and any(is_seeded(source) for source in sources)


def run_native(program: Program, base: Path, settings: Settings, reference: Optional[RunResult],
               reference_stdout: Optional[str], npz: Path, mode: str = "native") -> RunResult:
    """The native mode (or keras3): `fix --native`, run with the reference's initial weights injected (if it
    dumped any), and compared with the reference run (`reference`, the compat route run here, and
    its stdout; None if it did not run)."""
    dumped = Path(str(npz) + ".dump.json")
    loaded = False
    env = None
    try:
        loaded = json.loads(dumped.read_text(encoding="utf-8")).get("dumped", False) and npz.is_file()
    except (OSError, ValueError):
        pass
    if loaded:
        env = weights_env(load=npz)
    res = run_mode(program, mode, base, settings, env=env)
    res.weights = weights_summary(npz, loaded and res.rc is not None)  # rc None: it did not run
    res.seeded = judged_as_seeded(program.stable_output, (
        f.read_text(encoding="utf-8", errors="replace") for f in program.source_files(settings.programs_dir / "programs")))
    if reference is not None:
        res.reference_here, res.reference_here_rc = reference.last_line, reference.rc
    if not res.ran:
        return res
    native_stdout = Path(res.stdout_path).read_text(encoding="utf-8", errors="replace")
    verdict = compare_native(native_stdout, reference_stdout, program, bool(res.seeded))
    res.native_verdict = str(verdict["verdict"])
    res.loss_ratio = verdict["ratio"]  # type: ignore[assignment]
    res.lines_same = str(verdict["lines_same"])
    if reference_stdout is not None:
        res.reference_here = str(verdict["reference_line"])
    return res


SPREAD_RUNS = 3


def _judge_by_spread(res: RunResult, program: Program, base: Path, settings: Settings) -> None:
    """A migrated program whose last line differs from the manifest's: run the reference route
    (compat) here, up to SPREAD_RUNS times; if one of those prints the same line, the difference
    is the program's own run-to-run spread (threads, unseeded draws), status "spread"."""
    for _ in range(SPREAD_RUNS):
        ref = run_mode(program, "compat", base, settings)
        res.compat_lines.append(ref.last_line)
        shutil.rmtree(base / program.id / "compat", ignore_errors=True)
        if ref.rc == 0 and same_line(res.last_line, ref.last_line):
            res.status = "spread"
            return


def run_program(program: Program, settings: Settings, base: Path) -> List[RunResult]:
    """Every mode of one program, one after the other (a pool task)."""
    results = []
    reference = None  # with native: the compat route run first, dumping its initial weights
    reference_stdout: Optional[str] = None
    npz = base / program.id / "weights.npz"
    if set(NATIVE_MODES) & set(settings.modes):
        (base / program.id).mkdir(parents=True, exist_ok=True)
        try:
            reference = run_mode(program, "compat", base, settings, env=weights_env(dump=npz))
        except Exception as exc:
            reference = RunResult(program.id, "compat", error=f"harness: {type(exc).__name__}: {exc}")
        reference.weights = weights_summary(npz, False)
        if reference.ran and reference.stdout_path:
            reference_stdout = Path(reference.stdout_path).read_text(encoding="utf-8", errors="replace")
    for mode in settings.modes:
        try:
            if mode == "compat" and reference is not None:
                res = reference
            elif mode in NATIVE_MODES:
                res = run_native(program, base, settings, reference, reference_stdout, npz, mode)
            else:
                res = run_mode(program, mode, base, settings)
        except Exception as exc:  # one broken run must not stop the others
            res = RunResult(program.id, mode, error=f"harness: {type(exc).__name__}: {exc}")
        if res.status == "diff" and mode in ("fix", "unsafe"):
            _judge_by_spread(res, program, base, settings)
        results.append(res)
        if not settings.keep:
            shutil.rmtree(base / program.id / mode, ignore_errors=True)
            shutil.rmtree(base / program.id / (mode + "_tfu"), ignore_errors=True)
    if not settings.keep:
        shutil.rmtree(base / program.id, ignore_errors=True)
    return results


def run_all(programs: List[Program], settings: Settings, jobs: int = 2) -> Dict[str, List[RunResult]]:
    """{program id: its runs}; the longest programs start first, `jobs` at a time."""
    base = Path(tempfile.mkdtemp(prefix="tfm_programs_", dir=settings.tmp))
    results: Dict[str, List[RunResult]] = {}
    order = sorted(programs, key=lambda p: -p.expected_seconds)
    try:
        with ProcessPoolExecutor(max_workers=max(1, jobs)) as pool:
            futures = {pool.submit(run_program, p, settings, base): p for p in order}
            for done, future in enumerate(as_completed(futures), 1):
                program = futures[future]
                results[program.id] = future.result()
                cells = ", ".join(f"{r.mode} {r.cell()}" for r in results[program.id])
                print(f"[{done}/{len(programs)}] {program.id}: {cells}", file=sys.stderr, flush=True)
    finally:
        if settings.keep:
            print(f"work copies kept in {base}", file=sys.stderr)
        else:
            shutil.rmtree(base, ignore_errors=True)
    return results


# --------------------------------------------------------------------------------------------
# report

@dataclass
class Totals:
    mode: str
    programs: int
    with_reference: int
    ran: int = 0
    same: int = 0
    diff: int = 0
    timeouts: int = 0


def percent(n: int, of: int) -> str:
    return f"{100.0 * n / of:.0f}%" if of else "n/a"


def totals(programs: List[Program], results: Dict[str, List[RunResult]], mode: str) -> Totals:
    t = Totals(mode, len(programs), sum(p.has_reference for p in programs))
    for p in programs:
        for r in results[p.id]:
            if r.mode == mode:
                t.ran += r.ran
                t.same += r.status in ("same", "spread")
                t.diff += r.status == "diff"
                t.timeouts += r.timed_out
    return t


def target_lines(by_mode: Dict[str, Totals]) -> List[str]:
    def verdict(ok: bool) -> str:
        return "PASS" if ok else "FAIL"

    lines = []
    unsafe, safe = by_mode.get("unsafe"), by_mode.get("fix")
    if unsafe:
        lines.append(f"  >= 90% run after fix --unsafe-fixes: {unsafe.ran}/{unsafe.programs} = "
                     f"{percent(unsafe.ran, unsafe.programs)}  {verdict(unsafe.ran >= 0.9 * unsafe.programs)}")
        lines.append(f"  every one with a reference prints the same last line (unsafe): {unsafe.same}/"
                     f"{unsafe.with_reference} ({unsafe.diff} ran with another line)  "
                     f"{verdict(unsafe.same == unsafe.with_reference)}")
    if safe:
        lines.append(f"  >= 60% run after the safe fix: {safe.ran}/{safe.programs} = "
                     f"{percent(safe.ran, safe.programs)}  {verdict(safe.ran >= 0.6 * safe.programs)}")
    return lines


@dataclass
class NativeTotals:
    programs: int
    native_running: int = 0  # native (no TF1 construct left) and ran
    seeded: int = 0  # of native_running
    seeded_same: int = 0
    seeded_close: int = 0  # within CLOSE_REL, not SAME_REL
    unseeded: int = 0
    unseeded_within_2x: int = 0
    native_failing: int = 0  # native, but the run failed
    not_native: int = 0
    pure_tf2: int = 0  # keras3 mode: of native_running, no compat / tf-keras left (level 3)
    pure_tf2_same: int = 0  # of pure_tf2, seeded same or unseeded within 2x


def native_totals(programs: List[Program], results: Dict[str, List[RunResult]], mode: str = "native") -> NativeTotals:
    t = NativeTotals(len(programs))
    for p in programs:
        for r in results[p.id]:
            if r.mode != mode:
                continue
            if not r.native:
                t.not_native += 1
            elif not r.ran:
                t.native_failing += 1
            else:
                t.native_running += 1
                if r.seeded:
                    t.seeded += 1
                    t.seeded_same += r.native_verdict in ("same", "ok")
                    t.seeded_close += r.native_verdict == "close"
                else:
                    t.unseeded += 1
                    t.unseeded_within_2x += r.native_verdict in ("within 2x", "ok")
                if r.pure_tf2:
                    t.pure_tf2 += 1
                    t.pure_tf2_same += r.native_verdict in (("same", "ok") if r.seeded else ("within 2x", "ok"))
    return t


def native_lines(programs: List[Program], results: Dict[str, List[RunResult]], subset: str,
                 mode: str = "native") -> List[str]:
    """The native (or keras3) mode's summary (issue 13's targets) and, per program, why it is not
    native or not the same (keras3: what keeps it off level 3)."""
    t = native_totals(programs, results, mode)
    title = "Native (fix --native, issue 13)" if mode == "native" else "Keras 3 (fix --native --keras3, issue 22)"
    lines = [f"\n{title}{subset}: {t.native_running}/{t.programs} native and running "
             f"= {percent(t.native_running, t.programs)} (target >= 60%)  "
             f"{'PASS' if t.native_running >= 0.6 * t.programs else 'FAIL'}; "
             f"{t.not_native} not native, {t.native_failing} native but failing",
             f"  of those: seeded same {t.seeded_same}/{t.seeded} (close, within {CLOSE_REL:g}: {t.seeded_close}), "
             f"unseeded final loss (metric line) within 2x {t.unseeded_within_2x}/{t.unseeded}  "
             + ("n/a" if not t.native_running else
                "PASS" if t.seeded_same == t.seeded and t.unseeded_within_2x == t.unseeded else "FAIL")]
    if mode == "keras3":
        lines.append(f"  level 3 (pure TF2: no compat / tf-keras left): {t.pure_tf2}/{t.programs}, "
                     f"of those the same (seeded) or within 2x (unseeded): {t.pure_tf2_same}")
    details = []
    for p in programs:
        for r in results[p.id]:
            if r.mode != mode:
                continue
            seeded = "seeded" if r.seeded else "unseeded"
            if r.native is None:
                why = f"not migrated: {short_error(r.error, 150)}"
            elif not r.native:
                why = "not native: first " + r.native_blockers[0] + (
                    f" (then {', '.join(r.native_blockers[1:])})" if len(r.native_blockers) > 1 else "")
                if r.not_rewritten:
                    why += " | TFM216: " + "; ".join(r.not_rewritten)[:300]
                if not r.ran:
                    why += f" | and FAIL: {short_error(r.error or f'exit status {r.rc}', 120)}"
            elif not r.ran:
                why = f"native, FAIL: {short_error(r.error or f'exit status {r.rc}', 150)}"
            else:
                ratio = f", metric x{r.loss_ratio:.3g}" if r.loss_ratio is not None else ""
                why = f"native, {seeded}, {r.native_verdict}{ratio}, lines same {r.lines_same or '-'}"
                if mode == "keras3":
                    why += ", pure TF2" if r.pure_tf2 else f", TF1 kept: {', '.join(r.legacy_left)}"
                if r.native_verdict in ("same", "ok", "within 2x"):
                    why += f" [{r.weights}]"
                    details.append(f"  {p.id}: {why}")
                    continue
                why += f"\n      reference here: {r.reference_here}\n      native:         {r.last_line}"
            details.append(f"  {p.id}: {why}\n      weights: {r.weights}")
    if details:
        lines.append(f"Per program ({mode} mode):")
        lines.extend(details)
    return lines


def report(programs: List[Program], results: Dict[str, List[RunResult]], modes: Sequence[str],
           total_programs: int) -> Dict[str, Totals]:
    width = max(len("program"), *(len(p.id) for p in programs)) + 2
    print(f"{'program':{width}}" + "".join(f"{m:{CELL}}" for m in modes).rstrip())
    for p in programs:
        cells = {r.mode: r.cell() for r in results[p.id]}
        print(f"{p.id:{width}}" + "".join(f"{cells.get(m, '-'):{CELL}}" for m in modes).rstrip())

    diffs = [r for p in programs for r in results[p.id] if r.status in ("diff", "spread")]
    if diffs:
        print("\nAnother last line than the manifest's (DIFF; `same (spread)`: the reference route run here "
              "printed it too):")
        for r in diffs:
            print(f"  {r.id} [{r.mode}] {r.status}\n      reference: {r.reference_last_line}\n      got:       {r.last_line}")
            if r.compat_lines:
                print(f"      compat route here: {' | '.join(r.compat_lines)}")

    errors: Dict[str, Counter] = {m: Counter() for m in modes}
    for p in programs:
        for r in results[p.id]:
            if r.status == "fail":
                errors[r.mode][short_error(r.error or f"exit status {r.rc}", 150)] += 1
    if any(errors.values()):
        print("\nFailures by mode (count x error):")
        for mode in modes:
            for error, n in errors[mode].most_common():
                print(f"  {mode:14} {n:3} x {error}")

    unstable = [p for p in programs if p.stable_output == "no" and p.metric_reference]
    if unstable:
        print("\nMetric lines of the programs whose output varies (stable_output=no): run vs reference")
        for p in unstable:
            print(f"  {p.id}\n      {'reference':14} {p.metric_reference}")
            for r in results[p.id]:
                if not r.ran:
                    continue
                rel = f"   ({r.metric_rel_diff:+.1%})" if r.metric_rel_diff is not None else ""
                shown = r.metric_line if r.metric_line is not None else f"(no line of this shape; last: {r.last_line})"
                print(f"      {r.mode:14} {shown}{rel}")

    by_mode = {m: totals(programs, results, m) for m in modes}
    subset = "" if len(programs) == total_programs else f" (a subset: {len(programs)} of {total_programs})"
    with_ref = sum(p.has_reference for p in programs)
    print(f"\nTotals{subset}; {with_ref} with a reference last line (stable_output yes/last-line-only, prints something)")
    print(f"{'mode':16}{'ran':>14}{'same last line':>18}{'diff':>6}{'timeouts':>10}")
    for t in by_mode.values():
        print(f"{t.mode:16}{f'{t.ran}/{t.programs}':>9} {percent(t.ran, t.programs):>4}"
              f"{f'{t.same}/{t.with_reference}':>18}{t.diff:>6}{t.timeouts:>10}")
    lines = target_lines(by_mode)
    if lines:
        print("Targets (issue)" + (" - measured on a subset only" if subset else "") + ":")
        print("\n".join(lines))
    for mode in NATIVE_MODES:
        if mode in modes:
            print("\n".join(native_lines(programs, results, subset, mode)))
    return by_mode


def write_json(path: Path, programs: List[Program], results: Dict[str, List[RunResult]],
               by_mode: Dict[str, Totals], settings: Settings, wall: float) -> None:
    data = {
        "programs_dir": str(settings.programs_dir),
        "python": settings.python,
        "legacy_keras_env": settings.legacy_keras_env,
        "modes": list(settings.modes),
        "wall_seconds": round(wall, 1),
        "totals": {m: asdict(t) for m, t in by_mode.items()},
        **{f"{m}_totals": asdict(native_totals(programs, results, m)) for m in NATIVE_MODES if m in settings.modes},
        "runs": [asdict(r) for p in programs for r in results[p.id]],
    }
    path.write_text(json.dumps(data, indent=1) + "\n", encoding="utf-8")


def default_python() -> str:
    venv = ROOT / ".venv" / "bin" / "python"
    return str(venv) if venv.exists() else sys.executable


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--programs", type=Path, default=DEFAULT_PROGRAMS, help="the tf1-programs folder")
    parser.add_argument("--only", help="comma-separated program ids")
    parser.add_argument("--fast", type=int, metavar="N", help="the N programs with the smallest expected_seconds")
    parser.add_argument("--modes", default=",".join(MODES),
                        help=f"comma-separated, of {', '.join(ALL_MODES)} (default: {','.join(MODES)}; "
                             "compat and native are opt-in)")
    parser.add_argument("--python", default=default_python(), help="interpreter with TensorFlow 2.21 (and tf-keras)")
    parser.add_argument("--jobs", type=int, default=2, help="programs run in parallel (default 2)")
    parser.add_argument("--json", type=Path, metavar="FILE", help="write every run as JSON")
    parser.add_argument("--legacy-keras-env", action="store_true",
                        help="set TF_USE_LEGACY_KERAS=1 for every run (for comparison only)")
    parser.add_argument("--keep", action="store_true", help="keep the work copies")
    parser.add_argument("--tmp", type=Path, help="where to make the work copies")
    # for testing this harness: native mode copies DIR/<id>/* over the program's folder instead of fix --native
    parser.add_argument("--native-from", type=Path, metavar="DIR", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)

    programs_dir = args.programs.resolve()
    if not (programs_dir / "manifest.tsv").is_file() or not (programs_dir / "run.py").is_file():
        parser.error(f"no manifest.tsv and run.py in {programs_dir}")
    modes = [m.strip() for m in args.modes.split(",") if m.strip()]
    bad = [m for m in modes if m not in ALL_MODES]
    if bad or not modes:
        parser.error(f"unknown mode(s) {', '.join(bad)}; choose from {', '.join(ALL_MODES)}")
    every = load_programs(programs_dir)
    try:
        programs = select(every, args.only, args.fast)
    except ValueError as exc:
        parser.error(str(exc))
    if not programs:
        parser.error("no program selected")
    python = os.path.abspath(shutil.which(args.python) or args.python)  # the runs have other cwds
    settings = Settings(programs_dir, python, modes, args.legacy_keras_env, args.keep, args.tmp,
                        args.native_from.resolve() if args.native_from else None)

    print(f"{len(programs)} program(s) x {len(modes)} mode(s), {args.jobs} at a time, python {python}"
          + (", TF_USE_LEGACY_KERAS=1 for every run" if args.legacy_keras_env else ""), file=sys.stderr)
    t0 = time.monotonic()
    results = run_all(programs, settings, args.jobs)
    wall = time.monotonic() - t0
    by_mode = report(programs, results, modes, len(every))
    print(f"wall time {wall:.0f} s ({args.jobs} job(s))")
    if args.json:
        write_json(args.json, programs, results, by_mode, settings, wall)
        print(f"every run: {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
