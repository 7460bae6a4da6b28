"""Reading rule fixture folders: tests/fixtures/<CODE>/{bad_*,ok_*,exec_*}.py and expected/.

- bad_*.py: positives; every line that must be reported ends with `# expect: <CODE>`.
- ok_*.py: hard negatives; no finding of <CODE> at all.
- expected/<case>.findings and expected/<case>.fixed: snapshots of the findings and of
  `fix --unsafe-fixes` (rule selected alone). Regenerate with TFMIGRATE_UPDATE_SNAPSHOTS=1,
  then read the diff before committing.
- exec_*.py: programs run under TensorFlow 2.21 before and after the fix (see test_exec.py).
- `# tfmigrate-options: native` in a fixture: checked and fixed with that option on (`--native`).
"""
import os
import re
from pathlib import Path

FIXTURES = Path(__file__).parent / "fixtures"
UPDATE = os.environ.get("TFMIGRATE_UPDATE_SNAPSHOTS") == "1"
EXPECT = re.compile(r"#\s*expect:\s*((?:TFM\d{3}[\s,]*)+)")


def rule_dirs():
    return sorted(p for p in FIXTURES.iterdir() if p.is_dir() and re.fullmatch(r"TFM\d{3}", p.name))


def cases(prefix):
    return [p for d in rule_dirs() for p in sorted(d.glob(f"{prefix}_*.py"))]


def options(case) -> dict:
    """Engine options a fixture asks for on a line `# tfmigrate-options: native` (the settings a
    user would pass, e.g. `--native`)."""
    match = re.search(r"^# tfmigrate-options:(.*)$", case.read_text(encoding="utf-8"), re.MULTILINE)
    return {name: True for name in match.group(1).split()} if match else {}


def expected_lines(source: str, code: str):
    lines = set()
    for number, text in enumerate(source.splitlines(), 1):
        match = EXPECT.search(text)
        if match and code in match.group(1):
            lines.add(number)
    return lines


def format_findings(findings) -> str:
    out = []
    for f in findings:
        fix = "no fix" if f.fix is None else f.fix.applicability
        out.append(f"{f.line}:{f.column}-{f.end_line}:{f.end_column} {f.rule} [{fix}] {f.message}")
    return "\n".join(out) + "\n"


def snapshot(path: Path, actual: str) -> str:
    """The stored snapshot (written first when updating)."""
    if UPDATE or not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        if not UPDATE:
            raise AssertionError(f"missing snapshot {path}; run with TFMIGRATE_UPDATE_SNAPSHOTS=1")
        path.write_bytes(actual.encode("utf-8"))
    return path.read_bytes().decode("utf-8")


def lines_outside_edits(before: bytes, after: bytes, spans) -> list:
    """Runs of original lines outside every edited span that the fixed file does not contain,
    unchanged and in order. Blank lines at a run's edges may move with a statement a fix
    inserts or removes (in libcst they belong to that node, outside its reported range)."""
    old, new = before.splitlines(), after.splitlines()
    covered = set()
    for (first, _), (last, _) in spans:
        covered.update(range(first, last + 1))
    runs, run = [], []
    for number, line in enumerate(old, 1):
        if number in covered:
            runs.append(run)
            run = []
        else:
            run.append(line)
    runs.append(run)
    missing, at = [], 0
    for run in runs:
        while run and not run[0].strip():
            run = run[1:]
        while run and not run[-1].strip():
            run = run[:-1]
        if not run:
            continue
        for start in range(at, len(new) - len(run) + 1):
            if new[start : start + len(run)] == run:
                at = start + len(run)
                break
        else:
            missing.append(run)
    return missing


_DECIMAL = re.compile(r"-?\d+\.\d+(?:e[-+]?\d+)?")


def same_printed(got: str, want: str, rel: float = 5e-4, floor: float = 2e-5) -> bool:
    """`got` is the line `want` (an exec fixture's `# fixed:` line), its decimals equal within `rel`
    (at least `floor`): another CPU's kernels (AVX-512 or AVX2, with or without FMA) round a long
    training run's sums otherwise, moving the 4th or 5th printed digit (measured: 16.8695 on the
    machine that wrote a reference, 16.8674 on another). Text and integers stay exact."""
    if got == want:
        return True
    if _DECIMAL.sub("#", got) != _DECIMAL.sub("#", want):
        return False
    pairs = zip((float(x) for x in _DECIMAL.findall(got)), (float(x) for x in _DECIMAL.findall(want)))
    return all(abs(a - b) <= max(floor, rel * abs(b)) for a, b in pairs)
