"""Renderers: each a function of findings (and the source text, to show the offending line).

`rich` output is for people (grouped by file, the line with its span underlined, why, how, and
the fix on offer, then a summary per rule); `json` is the machine contract of the core issue.
"""
from __future__ import annotations

import json
import re
from collections import defaultdict
from json.encoder import encode_basestring as _quote  # CPython's C function when it has one
from typing import TYPE_CHECKING, Dict, Iterable, Iterator, List, Mapping, Optional, Sequence, Tuple

from tfmigrate.catalogue import RuleInfo, catalogue
from tfmigrate.findings import Finding

if TYPE_CHECKING:  # rich is imported by the renderers that use it: machine formats never load it
    from rich.console import Console
    from rich.table import Table

STYLE = {"error": "bold red", "warning": "bold yellow"}


def render_json(findings: Sequence[Finding]) -> str:
    return dumps_indented([f.to_json() for f in findings]) + "\n"


class _Unsupported(Exception):
    pass


def dumps_indented(value) -> str:
    """`json.dumps(value, indent=2, ensure_ascii=False)`, the same text: with an indent the
    standard library encodes in pure Python, a generator per level, which cost most of rendering
    thousands of findings; this joins the text in one recursion around the same string quoting
    (in C). A value of another kind than reports hold (a float, a non-string key, ...) is left
    to `json.dumps`."""
    try:
        return _encode(value, "\n")
    except _Unsupported:
        return json.dumps(value, indent=2, ensure_ascii=False)


_SCALARS = {type(None): lambda v: "null", bool: lambda v: "true" if v else "false", int: int.__repr__, str: _quote}


def _encode(value, newline: str) -> str:
    """`value` as json.dumps(indent=2) writes it at the level of `newline` ("\n" and the
    indentation of the line that holds it)."""
    scalar = _SCALARS.get(type(value))
    if scalar is not None:
        return scalar(value)
    if isinstance(value, str):  # subclasses, in json's own order of checks
        return _quote(value)
    if isinstance(value, int) and not isinstance(value, (bool, float)):
        return int.__repr__(value)
    inner = newline + "  "
    if isinstance(value, (list, tuple)):
        if not value:
            return "[]"
        return "[" + inner + ("," + inner).join([_encode(item, inner) for item in value]) + newline + "]"
    if isinstance(value, dict) and all(type(key) is str for key in value):
        if not value:
            return "{}"
        return "{" + inner + ("," + inner).join([_quote(key) + ": " + _encode(item, inner) for key, item in value.items()]) \
            + newline + "}"
    raise _Unsupported  # floats (NaN and infinity have spellings of their own), other keys and objects


def render_json_lines(findings: Sequence[Finding]) -> str:
    return "".join(json.dumps(f.to_json(), ensure_ascii=False) + "\n" for f in findings)


def where(finding: Finding) -> str:
    """`line:col`, or in a notebook `cell N:line:col` (the line in that cell), as Ruff prints them."""
    cell = "" if finding.cell is None else f"cell {finding.cell}:"
    return f"{cell}{finding.line}:{finding.column}"


def in_file(finding: Finding) -> Tuple[int, int, int, int]:
    """(line, column, end_line, end_column) in the file itself: for a notebook's finding, in the
    .ipynb file's JSON text (the line that holds the cell's source line), not in the cell."""
    if finding.cell is None:
        return finding.line, finding.column, finding.end_line, finding.end_column
    return finding.file_range or (1, 1, 1, 1)


def _cell_said(finding: Finding, message: str) -> str:
    """A message placed on the .ipynb file's lines, saying the cell and the line in it."""
    return message if finding.cell is None else f"cell {finding.cell}, line {finding.line}: {message}"


def render_concise(findings: Sequence[Finding]) -> str:
    """flake8-style: one `path:line:col: CODE message` line per finding (`path:cell N:line:col:`
    in a notebook)."""
    return "".join(f"{f.path}:{where(f)}: {f.rule} {f.message}\n" for f in findings)


def _gh_escape(text: str, prop: bool = False) -> str:
    text = text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")
    return text.replace(":", "%3A").replace(",", "%2C") if prop else text


DEBT_NOTE = " (migration debt: runs through tf.compat.v1)"


def level(finding: Finding) -> str:
    """"error" for what breaks under TF 2.21 (at the rule's severity), "warning" for migration
    debt: code that runs as it did, which CI should show but not fail on."""
    return "error" if finding.severity == "error" and finding.kind != "debt" else "warning"


def _worded(finding: Finding) -> str:
    """The message, saying so when the finding is migration debt."""
    return _cell_said(finding, finding.message) + (DEBT_NOTE if finding.kind == "debt" else "")


def render_github(findings: Sequence[Finding]) -> str:
    """GitHub Actions workflow commands: annotations on the pull request's diff (a notebook's on
    the .ipynb file's lines, the message saying the cell and the line in it)."""
    out = []
    for f in findings:
        line, column, end_line, end_column = in_file(f)
        props = (
            f"title={_gh_escape(f'tfmigrate {f.rule} ({f.name})', True)},file={_gh_escape(f.path, True)},"
            f"line={line},col={column},endLine={end_line},endColumn={end_column}"
        )
        out.append(f"::{level(f)} {props}::{_gh_escape(_worded(f))}\n")
    return "".join(out)


def render_junit(findings: Sequence[Finding]) -> str:
    """JUnit XML: a test suite per file, a failing test case per finding (CI test reporters)."""
    from xml.etree import ElementTree as ET

    root = ET.Element("testsuites", name="tfmigrate", tests=str(len(findings)), failures=str(len(findings)), errors="0")
    by_file: Dict[str, List[Finding]] = defaultdict(list)
    for f in findings:
        by_file[f.path].append(f)
    for path, items in by_file.items():
        suite = ET.SubElement(root, "testsuite", name=path, tests=str(len(items)), failures=str(len(items)), errors="0")
        for f in items:
            line, column = in_file(f)[:2]
            case = ET.SubElement(suite, "testcase", name=f"tfmigrate.{f.rule}", classname=path, line=str(line), column=str(column))
            failure = ET.SubElement(case, "failure", message=_cell_said(f, f.message), type=f.rule)
            cell = "" if f.cell is None else f"cell {f.cell}, "
            failure.text = f"{cell}line {f.line}, col {f.column}, {f.rule} {f.name}: {f.message}"
    if not findings:
        ET.SubElement(root, "testsuite", name="tfmigrate", tests="0", failures="0", errors="0")
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"


def sarif_uri(path: str) -> str:
    """A path as the URI SARIF requires (GitHub rejects the whole upload otherwise): relative
    paths percent-encoded (spaces, non-ASCII names; undecodable bytes as they were on disk),
    absolute ones as file:// URIs."""
    from pathlib import PurePath
    from urllib.parse import quote

    pure = PurePath(path)
    if pure.is_absolute():
        return pure.as_uri()
    return quote(pure.as_posix(), safe="/", errors="surrogateescape")


def _sarif_region(f: Finding) -> dict:
    """Lines and columns are 1-based in SARIF (the schema's minimum); an end never precedes the
    start."""
    line, column, end_line, end_column = in_file(f)
    start = (max(line, 1), max(column, 1))
    end = max(start, (end_line, end_column))
    return {"startLine": start[0], "startColumn": start[1], "endLine": end[0], "endColumn": end[1]}


def render_sarif(findings: Sequence[Finding]) -> str:
    """SARIF 2.1.0, as GitHub code scanning reads it: every rule with its help and fix
    availability, every finding with its region."""
    from tfmigrate import __version__

    infos = list(catalogue().values())
    index = {info.code: i for i, info in enumerate(infos)}
    rules = [
        {
            "id": info.code,
            "name": info.name,
            "shortDescription": {"text": info.summary},
            "fullDescription": {"text": info.rationale},
            "help": {
                "text": f"{info.rationale}\n\nBefore:\n{info.bad}\nAfter:\n{info.good}",
                "markdown": f"{info.rationale}\n\nBefore:\n```python\n{info.bad}```\nAfter:\n```python\n{info.good}```",
            },
            "defaultConfiguration": {"level": "error" if info.severity == "error" else "warning"},
            "properties": {"fix": info.fix, "tags": ["tensorflow", "migration"]},
        }
        for info in infos
    ]
    results = []
    for f in findings:
        result = {
            "ruleId": f.rule,
            "ruleIndex": index[f.rule],
            "level": level(f),
            "message": {"text": _worded(f)},
            "locations": [
                {
                    "physicalLocation": {
                        "artifactLocation": {"uri": sarif_uri(f.path)},
                        "region": _sarif_region(f),
                    }
                }
            ],
            "properties": {
                "fix": None if f.fix is None else {"applicability": f.fix.applicability, "description": f.fix.description},
                "kind": f.kind,  # "breaks" under TF 2.21, or "debt": runs through tf.compat.v1
                # a notebook's: the region is on the .ipynb file's lines; this is the cell, and
                # the line and column in it
                **({} if f.cell is None else {"cell": f.cell, "cellLine": f.line, "cellColumn": f.column}),
            },
        }
        results.append(result)
    sarif = {
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
        "runs": [
            {
                "tool": {
                    "driver": {
                        "name": "tfmigrate",
                        "version": __version__,
                        "informationUri": "https://pypi.org/project/tfmigrate/",
                        "rules": rules,
                    }
                },
                "results": results,
            }
        ],
    }
    return dumps_indented(sarif) + "\n"


def render_statistics(findings: Sequence[Finding]) -> str:
    """Counts per rule, most frequent first, as `ruff --statistics`."""
    return "".join(f"{row['count']:6}  {row['code']}  {'[*]' if row['fixable'] else '[ ]'} {row['name']}\n"
                   for row in statistics_rows(findings))


def statistics_rows(findings: Sequence[Finding]) -> List[dict]:
    """Counts per rule as data, in render_statistics' order (as `ruff --statistics
    --output-format json`): code, name, count, and how many of them have a fix."""
    counts: Dict[str, List[Finding]] = defaultdict(list)
    for f in findings:
        counts[f.rule].append(f)
    return [
        {"code": code, "name": items[0].name, "count": len(items),
         "fixable": any(f.fix is not None for f in items), "fixable_count": sum(f.fix is not None for f in items)}
        for code, items in sorted(counts.items(), key=lambda kv: (-len(kv[1]), kv[0]))
    ]


def render_statistics_json(findings: Sequence[Finding]) -> str:
    return json.dumps(statistics_rows(findings), indent=2) + "\n"


def render_statistics_json_lines(findings: Sequence[Finding]) -> str:
    return "".join(json.dumps(row) + "\n" for row in statistics_rows(findings))


STATISTICS_RENDERERS = {"json": render_statistics_json, "json-lines": render_statistics_json_lines}

RENDERERS = {
    "json": render_json,
    "json-lines": render_json_lines,
    "concise": render_concise,
    "github": render_github,
    "junit": render_junit,
    "sarif": render_sarif,
}


Row = List[Tuple[str, str]]  # one line of the report: (text, style) segments, "" for no style


def _fix_label(finding: Finding) -> Row:
    fix = finding.fix
    if fix is None:
        return [("no automatic fix", "dim")]
    if fix.applicability == "safe":
        return [("fix (safe): ", "green"), (fix.description, "")]
    return [("fix (unsafe, with --unsafe-fixes): ", "yellow"), (fix.description, "")]


def _snippet(lines: List[str], finding: Finding) -> List[Row]:
    """The reported line, with its span underlined (tabs expanded alike on both lines)."""
    if not 1 <= finding.line <= len(lines):
        return []
    raw = lines[finding.line - 1].rstrip("\r\n")
    start = finding.column - 1
    end = finding.end_column - 1 if finding.end_line == finding.line else len(raw)
    end = max(end, start + 1)
    prefix = raw[:start].expandtabs(4)
    marked = raw[start:end].expandtabs(4)
    number = str(finding.line)
    gutter = " " * len(number)
    return [
        [(f" {number} │ ", "blue"), (raw.expandtabs(4), "")],
        [(f" {gutter} │ ", "blue"), (" " * len(prefix) + "^" * max(len(marked), 1), STYLE.get(finding.severity, "bold"))],
    ]


def _parts(findings: Sequence[Finding], sources: Mapping[str, str], files_checked: int, fixed: int, fixed_files: int,
           extra: str, listing: str, quiet: bool) -> Iterator[Tuple[str, object, str]]:
    """The rich report in order, one home for both of its printers: ("line", text, style) is
    printed as one soft-wrapped Text, ("rows", rows, "") a file's findings, ("table", rows, "")
    the summary per rule (summary_rows)."""
    by_file: Dict[str, List[Finding]] = defaultdict(list)
    for f in findings:
        by_file[f.path].append(f)
    dead = estimator_line(findings)
    if dead and not quiet:
        yield "line", dead + "\n", "bold"
    for path, items in by_file.items():
        rows: List[Row] = [[(path, "bold underline")]]
        lines = sources.get(path, "").splitlines()
        for f in items:
            rows.append([(f"{path}:{where(f)}: ", "bold"), (f.rule, STYLE.get(f.severity, "bold")), (" ", ""), (f.name, "cyan")]
                        + ([(DEBT_NOTE, "dim")] if f.kind == "debt" else []))
            rows.extend(_snippet(lines, f))
            rows.append([("   = ", "blue"), (f.message, "")])
            rows.append([("   = ", "blue")] + _fix_label(f))
            rows.append([])
        yield "rows", rows, ""
    if listing:
        yield "line", listing.rstrip("\n") + "\n", ""
    if quiet:
        return
    if findings:
        yield "table", summary_rows(findings), ""
    yield ("line", *_closing(findings, files_checked, fixed, fixed_files))
    if extra:
        yield "line", extra, ""


def render_rich(
    findings: Sequence[Finding],
    sources: Mapping[str, str],
    console: Console,
    files_checked: int,
    fixed: int = 0,
    fixed_files: int = 0,
    extra: str = "",
    listing: str = "",
    quiet: bool = False,
) -> None:
    """`listing`: what `fix --show-fixes` applied, before the summary; `quiet`: the findings only."""
    from rich.text import Text

    for kind, value, style in _parts(findings, sources, files_checked, fixed, fixed_files, extra, listing, quiet):
        if kind == "rows":
            _print_rows(console, value)
        elif kind == "table":
            console.print(summary_table(value))
        else:
            console.print(Text(value, style=style or ""), soft_wrap=True)


def render_plain(findings: Sequence[Finding], sources: Mapping[str, str], width: int, files_checked: int, fixed: int = 0,
                 fixed_files: int = 0, extra: str = "", listing: str = "", quiet: bool = False) -> Optional[str]:
    """The rich report as rich prints it without colours on a console `width` columns wide (see
    plain_width), without importing rich (a quarter of a warm run's time); None when a part needs
    rich's own layout: a summary table wider than the console, a line with a tab or control
    character."""
    out = []
    for kind, value, _ in _parts(findings, sources, files_checked, fixed, fixed_files, extra, listing, quiet):
        if kind == "rows":
            out.append(_plain_rows(value))
        elif kind == "table":
            table = _plain_table(value, width)
            if table is None:
                return None
            out.append(table)
        elif all(line.isprintable() for line in value.split("\n")):
            out.append(value + "\n")
        else:
            return None
    return "".join(out)


def _print_rows(console: Console, rows: Sequence[Row]) -> None:
    """One print per file (each console.print call has a fixed cost: terminal size, locks,
    buffer). Without colours (output to a file or a pipe, NO_COLOR) rich would print exactly the
    plain text, which is written directly: building and styling rich Text objects cost a third of
    a millisecond per finding, most of a warm run with thousands of findings."""
    if console.color_system is None and not console.record and not console.is_terminal:
        console.file.write(_plain_rows(rows))
    else:
        from rich.text import Text

        texts = [Text.assemble(*((text, style or None) for text, style in row)) for row in rows]
        console.print(*texts, sep="\n", soft_wrap=True)


def _plain_rows(rows: Sequence[Row]) -> str:
    return "".join("".join(text for text, _ in row) + "\n" for row in rows)


SUMMARY_COLUMNS = ("Rule", "Name", "Findings", "Safe fix", "Unsafe fix", "Files")  # fits 80 columns


def summary_rows(findings: Iterable[Finding]) -> List[Tuple[str, ...]]:
    """The summary per rule: a row of SUMMARY_COLUMNS' cells per rule, by code."""
    rows: Dict[str, dict] = {}
    for f in findings:
        row = rows.setdefault(f.rule, {"name": f.name, "n": 0, "safe": 0, "unsafe": 0, "files": set()})
        row["n"] += 1
        row["files"].add(f.path)
        if f.fix is not None:
            row[f.fix.applicability] += 1
    return [(code, row["name"], str(row["n"]), str(row["safe"]), str(row["unsafe"]), str(len(row["files"])))
            for code, row in sorted(rows.items())]


def summary_table(rows: Sequence[Tuple[str, ...]]) -> Table:
    from rich.table import Table

    table = Table(title="Findings by rule", title_justify="left")
    for column in SUMMARY_COLUMNS:
        table.add_column(column, justify="left" if column in ("Rule", "Name") else "right")
    for row in rows:
        table.add_row(*row)
    return table


_PLAIN_CELL = re.compile(r"[A-Za-z0-9 _.-]*")  # no markup, emoji code or wide character for rich to read


def _plain_table(rows: Sequence[Tuple[str, ...]], width: int) -> Optional[str]:
    """summary_table as rich draws it without colours when it fits in `width` columns (rich's
    default box, header cells justified as their column); None when it does not fit, or a cell
    holds what rich would read as markup."""
    if not all(_PLAIN_CELL.fullmatch(cell) for row in rows for cell in row):
        return None
    widths = [max(len(cell) for cell in column) for column in zip(SUMMARY_COLUMNS, *rows)]
    total = sum(widths) + 3 * len(widths) + 1
    if total > width:
        return None

    def line(left: str, fill: str, middle: str, right: str) -> str:
        return left + middle.join(fill * (w + 2) for w in widths) + right + "\n"

    def cells(row: Sequence[str], bar: str) -> str:
        justified = [cell.ljust(w) if column in ("Rule", "Name") else cell.rjust(w)
                     for column, cell, w in zip(SUMMARY_COLUMNS, row, widths)]
        return bar + " " + f" {bar} ".join(justified) + " " + bar + "\n"

    return ("Findings by rule".ljust(total) + "\n" + line("┏", "━", "┳", "┓") + cells(SUMMARY_COLUMNS, "┃")
            + line("┡", "━", "╇", "┩") + "".join(cells(row, "│") for row in rows) + line("└", "─", "┴", "┘"))


def _closing(findings: Sequence[Finding], files_checked: int, fixed: int, fixed_files: int) -> Tuple[str, str]:
    """The closing line's text and style."""
    files = len({f.path for f in findings})
    parts = []
    if fixed:
        parts.append(f"Fixed {fixed} finding{'s' * (fixed != 1)} in {fixed_files} file{'s' * (fixed_files != 1)}. ")
    if not findings:
        parts.append(f"No findings in {files_checked} file{'s' * (files_checked != 1)} checked.")
        return "".join(parts), "green"
    safe = sum(1 for f in findings if f.fix is not None and f.fix.applicability == "safe")
    unsafe = sum(1 for f in findings if f.fix is not None and f.fix.applicability == "unsafe")
    parts.append(
        f"Found {len(findings)} finding{'s' * (len(findings) != 1)} in {files} of "
        f"{files_checked} file{'s' * (files_checked != 1)} checked."
    )
    debt = sum(1 for f in findings if f.kind == "debt")
    if debt:
        parts[-1] = parts[-1][:-1] + (f": {len(findings) - debt} break under TensorFlow 2.21, {debt} "
                                      "migration debt (TF1 API that runs through `tf.compat.v1`).")
    if safe:
        parts.append(f" {safe} fixable with `tfmigrate fix`.")
    if unsafe:
        parts.append(f" {unsafe} more with `tfmigrate fix --unsafe-fixes`.")
    dead = estimator_line(findings)
    if dead:
        parts.append(f" {dead}")
    return "".join(parts), "bold"


def estimator_line(findings: Iterable[Finding], shown: int = 5) -> str:
    """The files built on `tf.estimator` (a TFM213 finding without a fix), said once: TF 2.21 has
    no `tf.estimator`, so each fails as a whole however many other findings it has."""
    paths = sorted({f.path for f in findings if f.rule == "TFM213" and f.fix is None})
    if not paths:
        return ""
    names = ", ".join(paths[:shown]) + (f" and {len(paths) - shown} more" if len(paths) > shown else "")
    one = len(paths) == 1
    native = len({f.path for f in findings if f.rule == "TFM213" and "fix --native` rewrites" in f.message})
    says = "" if not native else (" `tfmigrate fix --native` rewrites it as eager TF2." if one else
                                  f" `tfmigrate fix --native` rewrites {native} of them as eager TF2.")
    return (f"{len(paths)} file{'s' * (not one)} use{'s' * one} `tf.estimator` (TFM213), removed in TensorFlow 2.16: "
            f"{'it' if one else 'each'} cannot run on TensorFlow 2.21 until {'its' if one else 'their'} Estimator "
            f"is replaced ({names}).{says}")


REQUIREMENTS = {
    "tf-keras": "tf-keras: `pip install tf-keras` (the same version as TensorFlow); the fixed code sets "
                "TF_USE_LEGACY_KERAS=1 for `tf.layers` / `tf.nn.rnn_cell` in graph code and for "
                "`--native`'s model-mapping route (`track_tf1_style_variables`)",
    "tf-slim": "tf-slim: `pip install tf-slim` (`tf.contrib.layers` and `tf.contrib.slim` moved there)",
    "tensorboard": "tensorboard: `pip install tensorboard` (TF2's `tf.summary` ops, which `fix --native` "
                   "writes, need it; TF1's FileWriter did not)",
}


def requirements_line(requires) -> str:
    """What the fixed code needs that the original did not, said once per run."""
    needed = sorted(set(requires))
    if not needed:
        return ""
    return "The fixed code needs: " + "; ".join(REQUIREMENTS.get(r, r) for r in needed) + "."


def kept_tf1_lines(kept) -> str:
    """What `fix --keras3` left TF1 inside the tracked layers, per file and construct, and why
    (issue 22: the debt that stays at level 2, said where the run ends, once)."""
    lines = [f"  {shown}: {why}" for shown, whys in kept for why in whys]
    if not lines:
        return ""
    return "`--keras3` kept TF1 code inside tracked layers (it runs under tf-keras):\n" + "\n".join(lines)


def closing_text(findings: Sequence[Finding], files_checked: int, fixed: int = 0, fixed_files: int = 0) -> str:
    """The rich report's closing line as plain text (for stderr, beside machine formats)."""
    return _closing(findings, files_checked, fixed, fixed_files)[0]


def fixes_listing(applied: Sequence[Tuple[str, Sequence[str]]], would: bool = False) -> str:
    """What `fix --show-fixes` applied, per file and rule, as Ruff lists it:

        Fixed 3 findings:
        - examples/a.py:
              2 × TFM101 (functional-layer)
    """
    from collections import Counter

    total = sum(len(rules) for _, rules in applied)
    verb = "Would fix" if would else "Fixed"
    if not total:
        return f"{'No fixes would be applied' if would else 'No fixes applied'}.\n"
    lines = [f"{verb} {total} finding{'s' * (total != 1)}:"]
    names = catalogue()
    for path, rules in applied:
        if not rules:
            continue
        lines.append(f"- {path}:")
        for code, count in sorted(Counter(rules).items(), key=lambda kv: (-kv[1], kv[0])):
            name = names[code].name if code in names else ""
            lines.append(f"    {count:4} × {code} ({name})")
    return "\n".join(lines) + "\n"


def render_rules_text(enabled: Iterable[str], width: int = 80) -> str:
    """Every rule in two lines or more, readable in 80 columns: code, name, fix, whether it is
    on here and its severity; then the summary, wrapped and indented."""
    import textwrap

    enabled = set(enabled)
    infos = list(catalogue().values())
    name_width = max(len(i.name) for i in infos)
    head = f"{'Code':<8}{'Name':<{name_width + 2}}{'Fix':<11}{'On':<5}Severity"
    lines = [head]
    indent = " " * 8
    for info in infos:
        on = "on" if info.code in enabled else "off"
        lines.append(f"{info.code:<8}{info.name:<{name_width + 2}}{info.fix:<11}{on:<5}{info.severity}".rstrip())
        lines.extend(textwrap.wrap(info.summary, width=max(width, 40), initial_indent=indent,
                                   subsequent_indent=indent, break_on_hyphens=False))
    lines.append("")
    lines.append("Fix: safe (applied by `tfmigrate fix`), unsafe (with --unsafe-fixes), sometimes (the finding "
                 "says which), none. On: enabled by the configuration and flags here. "
                 "`tfmigrate explain CODE` tells why and shows a before/after.")
    tail = textwrap.wrap(lines.pop(), width=max(width, 40))
    return "\n".join(lines + tail) + "\n"


def render_rules_json(enabled: Iterable[str]) -> str:
    enabled = set(enabled)
    rules = [
        {
            "code": info.code,
            "name": info.name,
            "severity": info.severity,
            "fix": info.fix,
            "enabled": info.code in enabled,
            "default": info.default,
            "min_tf": info.min_tf,
            "summary": info.summary,
        }
        for info in catalogue().values()
    ]
    return json.dumps(rules, indent=2, ensure_ascii=False) + "\n"


def rules_markdown() -> str:
    """The README's rule table."""
    lines = ["| Code | Name | Fix | What it finds |", "|---|---|---|---|"]
    for info in catalogue().values():
        summary = info.summary.replace("|", "\\|")
        lines.append(f"| {info.code} | {info.name} | {info.fix} | {summary} |")
    return "\n".join(lines) + "\n"


def render_explain(console: Console, info: RuleInfo) -> None:
    from rich.text import Text

    console.print(Text(f"{info.code} {info.name} ({info.severity}, fix: {info.fix})", style="bold"))
    console.print()
    console.print(Text(info.summary))
    console.print()
    console.print(Text("Why", style="bold"))
    console.print(Text(info.rationale))
    if info.bad.strip():
        console.print()
        console.print(Text("Before", style="bold red"))
        console.print(Text(info.bad.rstrip()), soft_wrap=True)
        console.print()
        console.print(Text("After", style="bold green"))
        console.print(Text(info.good.rstrip()), soft_wrap=True)
