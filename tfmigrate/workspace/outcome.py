"""What checking or fixing one file came to: what front ends report."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import List, Optional

from tfmigrate.findings import Finding


@dataclass
class Outcome:
    shown: str
    findings: List[Finding] = field(default_factory=list)
    text: Optional[str] = None  # the source, kept only when there is something to show
    applied: int = 0
    changed: bool = False
    diff: str = ""
    output: Optional[bytes] = None  # fixed bytes, for stdin mode
    requires: tuple = ()  # packages the applied fixes make the code need
    fixed_rules: tuple = ()  # the rule of each fix applied, for --show-fixes
    kept: tuple = ()  # `fix --keras3`: what stays TF1 inside the tracked layers, and why

