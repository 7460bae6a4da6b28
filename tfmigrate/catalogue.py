"""rules.yaml, the one catalogue of rule metadata; rule selection by code or prefix; and
`make_finding`, a Finding for a catalogue code (name and severity from the catalogue)."""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Dict, Iterable, List, Optional

from tfmigrate.findings import Finding

# The tool's own codes: reported whatever the selection or noqa.
INTERNAL_ERROR = "TFM000"
PARSE_ERROR = "TFM001"
UNUSED_NOQA = "TFM002"
UNSILENCEABLE = frozenset({INTERNAL_ERROR, PARSE_ERROR, UNUSED_NOQA})  # by a line's noqa

_FIELDS = ("name", "severity", "summary", "rationale", "bad", "good", "fix")
_SEVERITIES = ("error", "warning")
_FIX = ("safe", "unsafe", "sometimes", "none")


@dataclass(frozen=True)
class RuleInfo:
    code: str
    name: str
    severity: str
    summary: str
    rationale: str
    bad: str
    good: str
    fix: str
    default: bool = True
    min_tf: str = "2.0"  # the first TensorFlow version where the rule's fact holds


def _catalogue_path() -> Path:
    packaged = Path(__file__).with_name("rules.yaml")
    return packaged if packaged.exists() else Path(__file__).resolve().parent.parent / "rules.yaml"


# rules.yaml as JSON, with the SHA-256 of the rules.yaml it was made from (scripts/gen_rules_json.py;
# tests/test_catalogue.py checks it is current). Read instead of the YAML when the digests agree:
# importing PyYAML and loading the YAML cost about 13 ms of every start-up (4% of a warm check).
RULES_JSON = Path(__file__).with_name("data") / "rules.json"


def yaml_rules(text: str) -> dict:
    """rules.yaml's mapping, read with PyYAML."""
    import yaml

    # libyaml's loader when PyYAML has it: the same data, 15x faster
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    return yaml.load(text, Loader=loader)


def _raw_rules() -> dict:
    import hashlib
    import json

    data = _catalogue_path().read_bytes()
    try:
        generated = json.loads(RULES_JSON.read_bytes())
        if generated.get("rules_yaml_sha256") == hashlib.sha256(data).hexdigest():
            return generated["rules"]
    except (OSError, ValueError, AttributeError, KeyError):
        pass
    return yaml_rules(data.decode("utf-8"))  # rules.yaml edited since (or no JSON): the YAML itself


@lru_cache(maxsize=None)
def catalogue() -> Dict[str, RuleInfo]:
    raw = _raw_rules()
    result: Dict[str, RuleInfo] = {}
    for code, entry in raw.items():
        missing = [f for f in _FIELDS if f not in entry]
        if missing:
            raise ValueError(f"rules.yaml: {code} lacks {', '.join(missing)}")
        if entry["severity"] not in _SEVERITIES or entry["fix"] not in _FIX:
            raise ValueError(f"rules.yaml: {code} has a bad severity or fix value")
        result[code] = RuleInfo(
            code=code,
            default=entry.get("default", True),
            min_tf=str(entry.get("min-tf", "2.0")),
            **{f: entry[f] for f in _FIELDS},
        )
    return result


class SelectionError(ValueError):
    pass


def select(select: Optional[Iterable[str]] = None, ignore: Optional[Iterable[str]] = None) -> List[str]:
    """Codes enabled by `--select` / `--ignore`, each taking codes or prefixes (TFM1, TFM104)."""
    codes = list(catalogue())

    def expand(patterns: Iterable[str]) -> List[str]:
        out = []
        for raw in patterns:
            for pattern in filter(None, (p.strip().upper() for p in raw.split(","))):
                matched = [c for c in codes if c.startswith(pattern)]
                if pattern == "ALL":
                    matched = codes
                if not matched:
                    raise SelectionError(f"unknown rule code or prefix: {pattern}")
                out.extend(matched)
        return out

    chosen = expand(select) if select else [c for c in codes if catalogue()[c].default]
    dropped = set(expand(ignore or ()))
    return [c for c in codes if c in chosen and c not in dropped]


def make_finding(code: str, path: str, message: str, start=(1, 0), end=(1, 0), fix=None, debt: bool = False) -> Finding:
    """A finding of `code` at a span of 0-based columns (`start`, `end`: (line, column)); the
    default is the file as a whole (line 1, column 1)."""
    info = catalogue()[code]
    return Finding(
        rule=code,
        name=info.name,
        path=path,
        line=start[0],
        column=start[1] + 1,
        end_line=end[0],
        end_column=end[1] + 1,
        severity=info.severity,
        message=message,
        fix=fix,
        kind="debt" if debt else "breaks",
    )
