"""Findings as the engine makes them: a catalogue code at a 0-based (line, column) span, and the
engine's own codes. Below the lint pass, the TFM001 gate and the fix loop, which all report."""
from __future__ import annotations

from tfmigrate.catalogue import catalogue
from tfmigrate.findings import Finding

PARSE_ERROR = "TFM001"
INTERNAL_ERROR = "TFM000"


def make_finding(code: str, path: str, message: str, start, end, fix=None, debt: bool = False) -> Finding:
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
