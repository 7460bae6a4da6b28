"""Baselines for legacy codebases: record today's findings once (`--update-baseline`), then fail
only on new ones. Recording is explicit and a missing baseline is an error, so a typo'd path in CI
fails the build instead of recording a fresh baseline that hides everything.

An entry is (rule, path relative to the baseline file, fingerprint of the reported line's code,
with whitespace folded), so entries survive lines moving up or down; identical lines count as
a multiset, so a second copy of a recorded mistake is still new.
"""
from __future__ import annotations

import hashlib
import json
import os
from collections import Counter
from dataclasses import replace
from pathlib import Path
from typing import List, Optional, Sequence, Tuple

from tfmigrate.atomic import write_atomic


def _key(finding, text: str, base: Path) -> Tuple[str, str, str]:
    lines = text.splitlines() if text else []
    code = lines[finding.line - 1] if 0 < finding.line <= len(lines) else ""
    digest = hashlib.sha256(" ".join(code.split()).encode("utf-8", "surrogateescape")).hexdigest()[:16]
    path = Path(os.path.relpath(os.path.abspath(finding.path), base)).as_posix()
    return finding.rule, path, digest


def _keys(outcomes: Sequence, baseline: str):
    base = Path(os.path.abspath(baseline)).parent
    return [(o, f, _key(f, o.text or "", base)) for o in outcomes for f in o.findings]


def problem(baseline: str, update: bool) -> Optional[str]:
    """What stops this baseline from being read (or, with `update`, written), checked before the
    run: a typo'd path must fail the build, never silently record a new baseline."""
    if update:
        folder = os.path.dirname(os.path.abspath(baseline))
        if not os.path.isdir(folder):
            return f"{baseline}: cannot record the baseline: no such folder {folder}; create it or choose another path"
        if os.path.isdir(baseline):
            return f"{baseline}: cannot record the baseline: it is a folder; name a file"
        return None
    if not os.path.exists(baseline):
        return (
            f"{baseline}: no such baseline file; check the path, or record today's findings with "
            f"`--baseline {baseline} --update-baseline`"
        )
    return None


def record(baseline: str, outcomes: Sequence) -> Tuple[List, str]:
    """Write every finding of this run to the baseline (created or replaced); outcomes without
    them, and a one-line note for the report. OSError if the file cannot be written."""
    keys = _keys(outcomes, baseline)
    payload = {
        "tool": "tfmigrate",
        "version": 1,
        "findings": [{"rule": r, "path": p, "fingerprint": h} for r, p, h in sorted(k for _, _, k in keys)],
    }
    write_atomic(baseline, (json.dumps(payload, indent=1) + "\n").encode("utf-8"), new=True)
    return [replace(o, findings=[]) for o in outcomes], (
        f"Recorded {len(keys)} finding{'s' * (len(keys) != 1)} in the baseline {baseline}; "
        "from now on only new findings are reported."
    )


def apply(baseline: str, outcomes: Sequence) -> Tuple[List, str]:
    """Outcomes with baselined findings removed, and a one-line note for the report. ValueError
    if the baseline is missing or not one."""
    keys = _keys(outcomes, baseline)
    try:
        data = json.loads(Path(baseline).read_text(encoding="utf-8"))
        known = Counter((e["rule"], e["path"], e["fingerprint"]) for e in data["findings"])
    except FileNotFoundError:
        raise ValueError(problem(baseline, False)) from None
    except OSError as error:
        raise ValueError(f"{baseline}: cannot read the baseline: {error.strerror or error}") from None
    except (OSError, ValueError, KeyError, TypeError) as error:
        raise ValueError(
            f"{baseline}: not a tfmigrate baseline ({error}); record a new one with `--update-baseline`"
        ) from None
    kept = {id(o): [] for o in outcomes}
    hidden = 0
    for outcome, finding, key in keys:
        if known[key] > 0:
            known[key] -= 1
            hidden += 1
        else:
            kept[id(outcome)].append(finding)
    gone = sum(known.values())
    note = f"{hidden} finding{'s' * (hidden != 1)} in the baseline {baseline} not shown."
    if gone:
        note += (
            f" {gone} baseline entr{'ies' if gone != 1 else 'y'} no longer found (fixed): "
            "run with `--update-baseline` to record the smaller baseline."
        )
    return [replace(o, findings=kept[id(o)]) for o in outcomes], note
