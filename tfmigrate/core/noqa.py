"""Inline suppression, as flake8 and Ruff spell it (in any case: `# NOQA` too): `# noqa: TFM105`
or `# noqa: TFM105, TFM104` on the reported line (a bare `# noqa` silences every rule there), and,
on a line of its own, `# tfmigrate: noqa: TFM105` to turn those rules off for the whole file (a
bare `# tfmigrate: noqa`: every rule), as Ruff's `# ruff: noqa: F401`. Nothing silences TFM001:
a file that does not parse was not checked. A `noqa` naming an enabled TFM code that silences
nothing is reported as TFM002 (off unless selected), with a fix that removes the stale code.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Dict, List, Optional, Sequence, Tuple

import libcst as cst

from tfmigrate.catalogue import INTERNAL_ERROR, UNUSED_NOQA
from tfmigrate.findings import Finding, Fix, Replace
_CODES = r"[A-Z]+[0-9]+(?:[ \t]*,[ \t]*[A-Z]+[0-9]+)*"
_NOQA = re.compile(rf"#\s*noqa(?::[ \t]*(?P<codes>{_CODES}))?", re.IGNORECASE)
# A bare `noqa` turns every rule off; `noqa:` turns off the codes after it, so a colon followed by
# no valid code turns nothing off (a mistyped list never silences the whole file).
_FILE_NOQA = re.compile(
    rf"^[ \t]*#[ \t]*tfmigrate:[ \t]*noqa(?:(?P<colon>[ \t]*:)[ \t]*(?P<codes>{_CODES})?|\b)".encode(),
    re.MULTILINE | re.IGNORECASE,
)
_MENTION = re.compile("noqa", re.IGNORECASE)
_BREAK = re.compile(r"\r\n|\r|\n")
_FILE_MENTION = re.compile(rb"tfmigrate:[ \t]*noqa", re.IGNORECASE)


@dataclass
class Directive:
    line: int
    column: int  # 0-based column of the comment's '#'
    codes: Optional[List[str]]  # None: a bare `# noqa`
    comment: str  # the whole comment text, from '#'


def mentioned(text: str) -> bool:
    """Whether `noqa` appears at all, in any case (a cheap test before the line by line one)."""
    # A case-insensitive pattern has no literal for `re` to scan for; a match is "noqa" in the
    # lowered text (no other character folds to n, o, q or a), which `in` finds six times faster.
    return "noqa" in text.lower() and _MENTION.search(text) is not None


def file_codes(data: bytes, codes: Sequence[str]) -> Sequence[str]:
    """`codes` less those the file's `# tfmigrate: noqa[: CODES]` lines turn off (all of them
    for a bare one). The engine reports a parse error whatever this returns."""
    if b"tfmigrate" not in data.lower() or not _FILE_MENTION.search(data):  # (bytes: ASCII case only)
        return codes
    off: set = set()
    for match in _FILE_NOQA.finditer(data):
        if not match.group("colon"):
            return []
        listed = (match.group("codes") or b"").decode("ascii")
        off |= {c.strip().upper() for c in listed.split(",") if c.strip()}
    return [c for c in codes if c not in off]


def _comment_start(line: str) -> int:
    """Column of the '#' that starts a comment on this line, ignoring '#' inside strings."""
    quote = None
    i = 0
    while i < len(line):
        ch = line[i]
        if quote:
            if ch == "\\":
                i += 1
            elif line.startswith(quote, i):
                i += len(quote) - 1
                quote = None
        elif ch in "\"'":
            quote = line[i : i + 3] if line[i : i + 3] in ('"""', "'''") else ch
            i += len(quote) - 1
        elif ch == "#":
            return i
        i += 1
    return -1


def directives(source: str) -> Dict[int, Directive]:
    found: Dict[int, Directive] = {}
    if not mentioned(source):
        return found
    # Lines as Python (and libcst's positions) count them: a form feed or a U+2028 inside a line
    # is not a line break, as str.splitlines would have it.
    for number, line in enumerate(_BREAK.split(source), 1):
        if not mentioned(line):
            continue
        start = _comment_start(line)
        if start < 0:
            continue
        match = _NOQA.search(line, start)
        if not match:
            continue
        codes = match.group("codes")
        parsed = None if codes is None else [c.strip().upper() for c in codes.split(",")]
        found[number] = Directive(number, start, parsed, line[start:])
    return found


def suppress(
    findings: List[Finding], source: str, codes: Sequence[str], known: Sequence[str]
) -> Tuple[List[Finding], List[Tuple[Directive, List[str]]]]:
    """Findings left after `noqa`, and the directives with TFM codes that silenced nothing."""
    table = directives(source)
    if not table:
        return findings, []
    used: Dict[int, set] = {}
    kept = []
    for f in findings:
        d = table.get(f.line)
        if d is not None and f.rule not in (INTERNAL_ERROR, UNUSED_NOQA) and (d.codes is None or f.rule in d.codes):
            used.setdefault(f.line, set()).add(f.rule)
            continue
        kept.append(f)
    stale = []
    if UNUSED_NOQA in codes:
        for d in table.values():
            if d.codes is None:
                continue
            unused = [
                c for c in d.codes
                if c.startswith("TFM") and (c in codes or c not in known) and c not in used.get(d.line, set())
            ]
            if unused:
                stale.append((d, unused))
    return kept, stale


def _without(comment: str, unused: Sequence[str]) -> str:
    """The comment with the stale codes removed (the whole `# noqa...` part if none remain)."""
    match = _NOQA.search(comment)
    keep = [c.strip() for c in match.group("codes").split(",") if c.strip().upper() not in unused]
    replacement = f"# noqa: {', '.join(keep)}" if keep else ""
    new = comment[: match.start()] + replacement + comment[match.end():]
    new = new.strip()
    return new if new.startswith("#") or not new else "# " + new


class _Comments(cst.CSTVisitor):
    """Nodes that own a comment: a statement's trailing whitespace, or a comment line."""

    def __init__(self):
        self.owners: List[cst.CSTNode] = []

    def visit_TrailingWhitespace(self, node: cst.TrailingWhitespace) -> None:
        if node.comment is not None:
            self.owners.append(node)

    def visit_EmptyLine(self, node: cst.EmptyLine) -> None:
        if node.comment is not None:
            self.owners.append(node)


def unused_findings(module: cst.Module, stale, path: str, make_finding, positions) -> List[Finding]:
    """TFM002 findings, with a fix that edits the comment (looked up only in such files)."""
    collector = _Comments()
    module.visit(collector)
    by_line = {}
    for node in collector.owners:
        by_line.setdefault(positions[node.comment].start.line, node)
    out = []
    for d, unused in stale:
        owner = by_line.get(d.line)
        if owner is None or not mentioned(owner.comment.value):
            continue  # the text was inside a string, not a comment
        text = _without(owner.comment.value, unused)
        if text:
            new = owner.with_changes(comment=cst.Comment(text))
        else:
            new = owner.with_changes(comment=None, whitespace=cst.SimpleWhitespace(""))
        fix = Fix("safe", f"Remove {', '.join(unused)} from the noqa comment", (Replace(owner, new),))
        message = (
            f"`noqa` names {', '.join(unused)}, which {'reports' if len(unused) == 1 else 'report'} nothing on this line. "
            "Remove the stale code so the comment does not hide a future finding."
        )
        col = d.column + d.comment.upper().find(unused[0])
        out.append(make_finding(UNUSED_NOQA, path, message, (d.line, col), (d.line, col + len(unused[0])), fix))
    return out


def codes_end(line: str, directive: Directive) -> Optional[int]:
    """Where the codes of the line's `# noqa: CODES` end (more codes go there); None for a bare
    `# noqa`."""
    match = _NOQA.search(line, directive.column)
    return None if match is None or match.group("codes") is None else match.end("codes")
