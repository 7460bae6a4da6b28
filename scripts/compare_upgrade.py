"""Compare tfmigrate with TensorFlow's own `tf_upgrade_v2` on the pinned TF1 corpus (a report, not a test).

Usage:
    .venv/bin/python scripts/compare_upgrade.py                      # every package of ../shared/corpus.txt
    .venv/bin/python scripts/compare_upgrade.py --package trfl       # one package (name prefix), quick
    .venv/bin/python scripts/compare_upgrade.py --corpus DIR         # package folders under DIR
    options: --out DIR (full lists; default: <tmp>/tfmigrate_compare_upgrade), --select CODES
             (default ALL), --keep (keep the temporary trees), --timeout SECONDS (per tool run)

For each package (a failing package is reported and the others go on), on temporary copies only
(nothing is written into .corpus/):

1. Coverage: `tf_upgrade_v2 --intree --outtree --reportfile` runs on a copy; every (file, line) its
   detailed log marks as a change ("Renamed ...", "Changed ...", "Changing ...", "Added keywords",
   "Removed argument", ...) or as a WARNING/ERROR counts; lines with only INFO notes and no change
   are left out (counted apart). Coverage = share of those lines on which `tfmigrate check
   --format json` of the unmodified package reports at least one finding (finding start line; the
   share within a finding's line span is printed too). If tf_upgrade_v2 dies, the file it was on
   (the first one missing from its half-written output tree) is removed from the copy, counted,
   and the run is repeated without it. A line counts as covered when a finding starts on the
   same logical line (a multi-line statement: the tools name different lines of one call).
2. Silent breakage: `tfmigrate fix --unsafe-fixes` on another copy; every fixed file must still
   parse; every TensorFlow/Keras reference left (dotted names whose head is an alias found by
   `tfmigrate.facts.names.ImportTable`, plus the imported module paths themselves) is resolved against
   the installed TensorFlow by getattr from `tensorflow` / `keras` (importlib for private modules;
   the walk stops at the first non-module object). Unresolvable references must carry a finding
   of `tfmigrate check` on the fixed copy. The same resolution runs over tf_upgrade_v2's output.
Per-package settings a maintainer would write (PACKAGE_CONFIG: tensorpack's own re-export of
`tf.compat.v1`) are passed with --config; nothing is written into the copies.
3. Native share: a rewrite is a TF reference that appears in a changed hunk of the output but not
   in the input hunk (difflib over lines); it is compat when its spelling contains `compat.v1`.
   The same measure for both tools; tf_upgrade_v2's report and tfmigrate's fix descriptions
   ("(TF2-native)" / "(compat.v1 fallback)") are printed as cross-checks.
"""
from __future__ import annotations

import argparse
import ast
import difflib
import hashlib
import importlib
import json
import multiprocessing
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import types
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Dict, List, Optional, Sequence, Set, Tuple

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

DEFAULT_CORPUS_FILE = ROOT.parent / "shared" / "corpus.txt"
DEFAULT_CORPUS_DIR = ROOT / ".corpus"
TF_ROOTS = ("tensorflow", "keras", "tf_keras")
# Findings that say nothing about TensorFlow API use.
NON_API_RULES = {"TFM000", "TFM002"}
CHANGE_PREFIXES = (
    "Renamed ", "Changed ", "Changing ", "Added keywords", "Removed argument",
    "Using default_name", "Replaced ", "Removed ",
)
_LOG_RE = re.compile(r"^(\d+):(\d+): (INFO|WARNING|ERROR): (.*)$")
_PROCESSING_RE = re.compile(r"^Processing file '(.*)'$")
_RENAME_RE = re.compile(r"^Renamed '([^']*)' to '([^']*)'")


# --------------------------------------------------------------------------------------------
# small helpers

def tool_path(name: str) -> str:
    candidate = Path(sys.executable).parent / name
    return str(candidate) if candidate.exists() else (shutil.which(name) or name)


def copy_tree(src: Path, dst: Path) -> None:
    shutil.copytree(src, dst, symlinks=True,
                    ignore=shutil.ignore_patterns("__pycache__", ".tfmigrate_cache"))


def py_files(root: Path) -> List[str]:
    """Relative paths of the *.py files under root, sorted (symlinks not followed)."""
    out = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames.sort()
        for name in filenames:
            if name.endswith(".py") and not os.path.islink(os.path.join(dirpath, name)):
                out.append(os.path.relpath(os.path.join(dirpath, name), root))
    return sorted(out)


def read_text(path: Path) -> str:
    data = path.read_bytes()
    for enc in ("utf-8", "latin-1"):
        try:
            return data.decode(enc)
        except UnicodeDecodeError:
            continue
    return data.decode("utf-8", "replace")


def parses(path: Path) -> bool:
    try:
        ast.parse(path.read_bytes())
        return True
    except (SyntaxError, ValueError):
        return False


def pct(num: int, den: int) -> str:
    return f"{100.0 * num / den:.1f}%" if den else "n/a"


def short(text: str, width: int = 110) -> str:
    text = " ".join(text.split())
    return text if len(text) <= width else text[: width - 3] + "..."


def pins(corpus_file: Path) -> List[str]:
    out = []
    for line in corpus_file.read_text().splitlines():
        spec = line.split("#", 1)[0].strip()
        if spec:
            out.append(spec.replace("==", "-"))
    return out


def packages(corpus_dir: Path, corpus_file: Optional[Path], only: Optional[str]) -> List[Tuple[str, Path]]:
    """(name, folder) of the packages to measure, in corpus.txt order (else sorted)."""
    names = pins(corpus_file) if corpus_file and corpus_file.exists() else []
    if not names or not all((corpus_dir / n).is_dir() for n in names):
        names = sorted(p.name for p in corpus_dir.iterdir() if p.is_dir() and not p.name.startswith("."))
    if only:
        names = [n for n in names if n == only or n.startswith(only)]
    return [(n, corpus_dir / n) for n in names]


# --------------------------------------------------------------------------------------------
# tf_upgrade_v2

@dataclass
class Record:
    severity: str
    col: int
    message: str

    @property
    def kind(self) -> str:
        """change | warning | info."""
        if self.message.startswith(CHANGE_PREFIXES):
            return "change"
        if self.severity in ("WARNING", "ERROR"):
            return "warning"
        return "info"


@dataclass
class UpgradeResult:
    records: Dict[Tuple[str, int], List[Record]] = field(default_factory=dict)
    unparsed: List[str] = field(default_factory=list)  # "ERROR: Failed to parse" (empty output file)
    crashed: List[str] = field(default_factory=list)  # files tf_upgrade_v2 died on (removed, rerun)
    runs: int = 0
    seconds: float = 0.0
    out_dir: Optional[Path] = None
    src_dir: Optional[Path] = None
    error: Optional[str] = None


def parse_report(text: str, src_root: Path) -> Tuple[Dict[Tuple[str, int], List[Record]], List[str]]:
    """The detailed log of a tf_upgrade_v2 report: {(relative file, line): [Record]}, unparsed files."""
    records: Dict[Tuple[str, int], List[Record]] = defaultdict(list)
    unparsed: List[str] = []
    marker = text.find("Detailed log follows:")
    body = text[marker:] if marker >= 0 else text
    current: Optional[str] = None
    last: Optional[Record] = None
    src_abs = os.path.abspath(src_root)
    for line in body.splitlines():
        m = _PROCESSING_RE.match(line)
        if m:
            current = os.path.relpath(os.path.abspath(m.group(1)), src_abs)
            last = None
            continue
        if current is None:
            continue
        m = _LOG_RE.match(line)
        if m:
            last = Record(m.group(3), int(m.group(2)), m.group(4))
            records[(current, int(m.group(1)))].append(last)
        elif line.startswith("ERROR: Failed to parse"):
            unparsed.append(current)
            last = None
        elif line.startswith("-" * 20) or line.startswith(" outputting to"):
            last = None
        elif line.strip() and last is not None:
            last.message += " " + line.strip()  # a message continued on the next line
    return dict(records), sorted(set(unparsed))


def _walk_order(root: Path) -> List[str]:
    """The order in which tf_upgrade_v2's process_tree visits *.py files (os.walk order)."""
    out = []
    for dirpath, _, filenames in os.walk(root):
        for name in filenames:
            if name.endswith(".py"):
                out.append(os.path.relpath(os.path.join(dirpath, name), root))
    return out


def start_upgrade(src: Path, out: Path, report: Path, tmp: Path) -> subprocess.Popen:
    env = dict(os.environ, TMPDIR=str(tmp), TF_CPP_MIN_LOG_LEVEL="3")
    log = open(report.with_suffix(".log"), "wb")
    proc = subprocess.Popen(
        [tool_path("tf_upgrade_v2"), "--intree", str(src), "--outtree", str(out), "--reportfile", str(report)],
        stdout=log, stderr=subprocess.STDOUT, env=env, cwd=str(tmp),
    )
    proc._log = log  # closed by finish_upgrade
    return proc


def finish_upgrade(proc: subprocess.Popen, timeout: float) -> Tuple[int, str]:
    try:
        rc = proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
        rc = -9
    proc._log.close()
    tail = Path(proc._log.name).read_text(errors="replace")[-2000:]
    return rc, tail


class Upgrade:
    """tf_upgrade_v2 on a copy of a package, started in the background; `.result()` waits.

    It dies on some inputs (an exception escapes process_tree, no report is written, the output
    tree is half-written): then the file it was on is removed from the copy and it runs again.
    """

    MAX_RUNS = 8

    def __init__(self, package: Path, work: Path, timeout: float):
        self.work = work
        self.timeout = timeout
        self.res = UpgradeResult(src_dir=work / "tfu_in")
        copy_tree(package, self.res.src_dir)
        (work / "tfu_tmp").mkdir()
        self.t0 = time.monotonic()
        self._start()

    def _start(self) -> None:
        self.res.runs += 1
        self.out = self.work / f"tfu_out{self.res.runs}"
        self.report = self.work / f"tfu_report{self.res.runs}.txt"
        self.proc = start_upgrade(self.res.src_dir, self.out, self.report, self.work / "tfu_tmp")

    def result(self) -> UpgradeResult:
        res = self.res
        while True:
            rc, tail = finish_upgrade(self.proc, self.timeout)
            if rc == 0 and self.report.exists():
                res.records, res.unparsed = parse_report(read_text(self.report), res.src_dir)
                res.out_dir = self.out
                break
            if rc == -9:
                res.error = f"tf_upgrade_v2 timed out after {self.timeout:.0f} s"
                break
            # It died: the first file (in its own visiting order) with no output is the culprit.
            culprit = next((f for f in _walk_order(res.src_dir) if not (self.out / f).exists()), None)
            if culprit is None or res.runs >= self.MAX_RUNS:
                res.error = f"tf_upgrade_v2 exited {rc}: {short(tail, 300)}"
                break
            res.crashed.append(culprit)
            (res.src_dir / culprit).unlink()
            self._start()
        res.seconds = time.monotonic() - self.t0
        return res


# --------------------------------------------------------------------------------------------
# tfmigrate

def tfmigrate(args: List[str], cwd: Path, timeout: float) -> Tuple[int, str, str]:
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    proc = subprocess.run(
        [sys.executable, "-m", "tfmigrate", *args], cwd=str(cwd), env=env,
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=timeout,
    )
    return proc.returncode, proc.stdout.decode("utf-8", "replace"), proc.stderr.decode("utf-8", "replace")


# Settings a package's maintainers would write for tfmigrate (passed with --config, never put
# into the copies): tensorpack binds `tfv1 = tf.compat.v1` in its compat module and imports it
# as `from ..compat import tfv1 as tf` (README, `tensorflow-aliases`).
PACKAGE_CONFIG = {
    "tensorpack": 'tensorflow-aliases = { "tensorpack.compat.tfv1" = "tensorflow.compat.v1" }\n',
}


def package_config(name: str, work: Path) -> List[str]:
    """`--config FILE` for a package listed in PACKAGE_CONFIG (by name prefix), else []."""
    for prefix, text in PACKAGE_CONFIG.items():
        if name.startswith(prefix):
            path = work / "tfmigrate.toml"
            path.write_text(text)
            return ["--config", str(path)]
    return []


def tfmigrate_check(root: Path, select: str, timeout: float, config: Sequence[str] = ()) -> List[dict]:
    """Findings of `tfmigrate check --format json` on root, paths made relative to root."""
    rc, out, err = tfmigrate(
        ["check", ".", "--format", "json", "--no-cache", "--exit-zero", "--select", select, *config], root, timeout
    )
    if rc != 0:
        raise RuntimeError(f"tfmigrate check exited {rc}: {short(err, 400)}")
    findings = json.loads(out or "[]")
    for f in findings:
        f["path"] = os.path.normpath(f["path"])
    return sorted(findings, key=lambda f: (f["path"], f["line"], f["column"], f["rule"]))


def tfmigrate_fix(root: Path, select: str, timeout: float, config: Sequence[str] = ()) -> None:
    rc, _, err = tfmigrate(
        ["fix", "--unsafe-fixes", ".", "--no-cache", "--exit-zero", "--format", "json", "--select", select,
         *config],
        root, timeout,
    )
    if rc != 0:
        raise RuntimeError(f"tfmigrate fix exited {rc}: {short(err, 400)}")


def logical_lines(text: str) -> Dict[int, Tuple[int, int]]:
    """Physical line -> (first, last) line of the logical line (statement) it belongs to: both
    tools name a multi-line call by different lines (tf_upgrade_v2 a keyword's, tfmigrate the
    callee's or the keyword's), and the reader fixes them as one."""
    import io
    import tokenize

    spans: Dict[int, Tuple[int, int]] = {}
    start = None
    try:
        for tok in tokenize.generate_tokens(io.StringIO(text).readline):
            if tok.type in (tokenize.COMMENT, tokenize.NL, tokenize.INDENT, tokenize.DEDENT, tokenize.ENCODING):
                continue
            if start is None:
                start = tok.start[0]
            if tok.type in (tokenize.NEWLINE, tokenize.ENDMARKER):
                for n in range(start, tok.end[0] + 1):
                    spans[n] = (start, tok.end[0])
                start = None
    except (tokenize.TokenError, SyntaxError, IndentationError):
        pass
    return spans


def finding_lines(findings: List[dict]) -> Set[Tuple[str, int]]:
    """(file, start line) of API findings."""
    return {(f["path"], f["line"]) for f in findings if f["rule"] not in NON_API_RULES}


# --------------------------------------------------------------------------------------------
# TensorFlow references

@dataclass(frozen=True)
class Ref:
    line: int
    col: int
    spelled: str  # as written ("tf.compat.v1.Session", or the module path of an import)
    full: str  # resolved dotted path ("tensorflow.compat.v1.Session")
    # The lines of the statement it is on (a finding on any of them speaks to it): the whole
    # statement for a simple one, the header for a compound one (`class C(base):`).
    first: int = 0
    last: int = 0
    # Set when the reference is in an `except` block, or goes through a name bound there, whose
    # `try` imports these TensorFlow paths first: when they all resolve, TF 2.21 never runs it.
    guard: Tuple[str, ...] = ()


def _ast_dotted(node: ast.AST) -> Optional[str]:
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    parts.append(node.id)
    return ".".join(reversed(parts))


_FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)


def _imported_tf(stmts: List[ast.stmt]) -> Tuple[str, ...]:
    """The TensorFlow paths the import statements directly in `stmts` import."""
    paths = []
    for node in stmts:
        if isinstance(node, ast.Import):
            paths += [a.name for a in node.names if a.name.split(".")[0] in TF_ROOTS]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module \
                and node.module.split(".")[0] in TF_ROOTS:
            paths += [node.module if a.name == "*" else f"{node.module}.{a.name}" for a in node.names]
    return tuple(paths)


def _bindings(tree: ast.Module):
    """Where each import binds its name: module-wide unless every binding is inside functions
    (then from the import to the end of its function), and which names only an `except` block whose
    `try` also binds them imports (a fallback: the `try`'s binding is what runs)."""
    local: Dict[str, List[Tuple[int, int]]] = defaultdict(list)
    module_wide: Set[str] = set()
    fallback: Dict[str, Tuple[str, ...]] = {}

    def bound(stmts) -> Set[str]:
        names = set()
        for node in stmts:
            for sub in ast.walk(node):
                if isinstance(sub, (ast.Import, ast.ImportFrom)):
                    names |= {(a.asname or a.name).split(".")[0] for a in sub.names}
                elif isinstance(sub, ast.Name) and isinstance(sub.ctx, ast.Store):
                    names.add(sub.id)
        return names

    def visit(node, function):
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            for a in node.names:
                name = (a.asname or a.name).split(".")[0]
                if function is None:
                    module_wide.add(name)
                else:  # from the import on, to the function's end (`if x: use x / else: import`)
                    local[name].append((node.lineno, function.end_lineno or function.lineno))
        if isinstance(node, ast.Try):
            guard = _imported_tf(node.body)
            if guard:
                in_try = bound(node.body)
                for handler in node.handlers:
                    for name in bound(handler.body) & in_try:
                        fallback[name] = guard
        inner = node if isinstance(node, _FUNCTIONS) else function
        for child in ast.iter_child_nodes(node):
            visit(child, inner)

    visit(tree, None)
    return local, module_wide, fallback


def extract_refs(data: bytes) -> Optional[List[Ref]]:
    """Every TensorFlow/Keras reference of a module, or None when it does not parse.

    Aliases come from tfmigrate's ImportTable over the libcst tree, scoped here: an alias that
    only function-local imports bind is a reference only inside those functions. Positions and
    statement spans come from `ast`.
    """
    if b"tensorflow" not in data and b"keras" not in data:
        try:
            ast.parse(data)
        except (SyntaxError, ValueError):
            return None
        return []
    import libcst as cst

    from tfmigrate.facts.names import ImportTable

    try:
        tree = ast.parse(data)
        module = cst.parse_module(data)
    except Exception:
        return None
    aliases = ImportTable(module, module.code).aliases
    local, module_wide, fallback = _bindings(tree)
    refs: List[Ref] = []

    def in_scope(head: str, line: int) -> bool:
        return head in module_wide or any(a <= line <= b for a, b in local.get(head, ()))

    # (node, statement span, guard of the enclosing except block)
    stack: List[Tuple[ast.AST, Tuple[int, int], Tuple[str, ...]]] = [(tree, (0, 0), ())]
    while stack:
        node, span, guard = stack.pop()
        if isinstance(node, ast.stmt):
            body = getattr(node, "body", None)
            if isinstance(body, list) and body and isinstance(body[0], ast.AST):
                span = (node.lineno, max(node.lineno, body[0].lineno - 1))
            else:
                span = (node.lineno, node.end_lineno or node.lineno)
        if isinstance(node, ast.Try):
            handler_guard = _imported_tf(node.body)
            for child in node.body + node.orelse + node.finalbody:
                stack.append((child, span, guard))
            for handler in node.handlers:
                stack.append((handler, span, handler_guard or guard))
            continue
        if isinstance(node, ast.Import):
            for a in node.names:
                if a.name.split(".")[0] in TF_ROOTS:
                    refs.append(Ref(node.lineno, node.col_offset, a.name, a.name, *span, guard))
            continue
        if isinstance(node, ast.ImportFrom):
            if node.level == 0 and node.module and node.module.split(".")[0] in TF_ROOTS:
                for a in node.names:
                    full = node.module if a.name == "*" else f"{node.module}.{a.name}"
                    refs.append(Ref(node.lineno, node.col_offset, full, full, *span, guard))
            continue
        if isinstance(node, (ast.Attribute, ast.Name)):
            name = _ast_dotted(node)
            if name is not None:
                head, _, rest = name.partition(".")
                target = aliases.get(head)
                if target is not None and not (isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load)) \
                        and in_scope(head, node.lineno):
                    refs.append(Ref(node.lineno, node.col_offset, name, f"{target}.{rest}" if rest else target,
                                    *span, guard or fallback.get(head, ())))
                continue  # a pure Name/Attribute chain holds nothing else
        stack.extend((child, span, guard) for child in ast.iter_child_nodes(node))
    return sorted(set(refs), key=lambda r: (r.line, r.col, r.spelled))


_POOL = None


def _pool():
    global _POOL
    if _POOL is None:
        # spawn: workers never inherit an imported TensorFlow
        _POOL = multiprocessing.get_context("spawn").Pool(max(1, min(4, os.cpu_count() or 1)))
    return _POOL


class RefCache:
    """References per file content (identical files across input/fixed/output are parsed once)."""

    def __init__(self):
        self.by_hash: Dict[str, Optional[List[Ref]]] = {}

    def refs_of(self, paths: List[Path]) -> Dict[Path, Optional[List[Ref]]]:
        datas = {p: p.read_bytes() for p in paths}
        hashes = {p: hashlib.sha1(d).hexdigest() for p, d in datas.items()}
        todo = {}
        for p, h in hashes.items():
            if h not in self.by_hash and h not in todo:
                todo[h] = datas[p]
        if todo:
            keys = sorted(todo)
            if len(keys) > 8:
                results = _pool().map(extract_refs, [todo[k] for k in keys], chunksize=4)
            else:
                results = [extract_refs(todo[k]) for k in keys]
            self.by_hash.update(zip(keys, results))
        return {p: self.by_hash[hashes[p]] for p in paths}


class Resolver:
    """Does a dotted path exist in the installed TensorFlow 2.21 / Keras 3? (imports TensorFlow once)"""

    def __init__(self):
        self.cache: Dict[str, Tuple[bool, str]] = {}
        os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

    def resolve(self, full: str) -> Tuple[bool, str]:
        if full not in self.cache:
            self.cache[full] = self._resolve(full)
        return self.cache[full]

    def never_runs(self, ref: Ref) -> bool:
        """In (or through a name bound in) an `except` block whose `try` imports all resolve."""
        return bool(ref.guard) and all(self.resolve(g)[0] for g in ref.guard)

    @staticmethod
    def _resolve(full: str) -> Tuple[bool, str]:
        parts = full.split(".")
        try:
            obj = importlib.import_module(parts[0])
        except Exception as error:  # tf_keras not installed, ...
            return False, f"{type(error).__name__}: {error}"
        for i in range(1, len(parts)):
            if not isinstance(obj, types.ModuleType):
                return True, ""  # an API object: the rest is attribute access on a value
            try:
                obj = getattr(obj, parts[i])
                continue
            except AttributeError as error:
                reason = f"AttributeError: {error}"
            except Exception as error:
                reason = f"{type(error).__name__}: {error}"
            try:  # private modules (tensorflow.python.ops...) are not attributes of their parent
                obj = importlib.import_module(".".join(parts[: i + 1]))
            except Exception:
                return False, reason
        return True, ""


# --------------------------------------------------------------------------------------------
# diffs: which references each tool wrote

def line_map(old: List[str], new: List[str]) -> Dict[int, int]:
    """1-based new line -> old line (within a replaced hunk, by offset, clamped)."""
    mapping = {}
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, old, new, autojunk=False).get_opcodes():
        for j in range(j1, j2):
            if tag == "equal":
                mapping[j + 1] = i1 + (j - j1) + 1
            elif i2 > i1:
                mapping[j + 1] = min(i1 + (j - j1), i2 - 1) + 1
            else:
                mapping[j + 1] = max(i1, 1)
    return mapping


def new_refs(old_text: str, new_text: str, old_refs: List[Ref], new_refs_: List[Ref]) -> List[Ref]:
    """References in changed hunks of the new text that the old hunk did not have (by spelling)."""
    old_lines, new_lines = old_text.splitlines(), new_text.splitlines()
    old_by_line, new_by_line = defaultdict(list), defaultdict(list)
    for r in old_refs:
        old_by_line[r.line].append(r)
    for r in new_refs_:
        new_by_line[r.line].append(r)
    out = []
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, old_lines, new_lines, autojunk=False).get_opcodes():
        if tag == "equal":
            continue
        before = Counter(r.spelled for i in range(i1 + 1, i2 + 1) for r in old_by_line[i])
        for j in range(j1 + 1, j2 + 1):
            for r in new_by_line[j]:
                if before[r.spelled] > 0:
                    before[r.spelled] -= 1
                else:
                    out.append(r)
    return out


def is_compat(spelled: str) -> bool:
    return "compat.v1" in spelled


# --------------------------------------------------------------------------------------------
# one package

@dataclass
class PackageResult:
    name: str
    error: Optional[str] = None
    files: int = 0
    seconds: float = 0.0
    # 1. coverage
    tfu_lines: int = 0
    tfu_info_only: int = 0
    covered: int = 0
    covered_line: int = 0  # a finding starts on the very line (stricter than the logical line)
    misses: List[Tuple[int, str]] = field(default_factory=list)  # (0 broken / 1 other, text)
    miss_kinds: Counter = field(default_factory=Counter)
    miss_tags: Counter = field(default_factory=Counter)
    tfu_crashed: List[str] = field(default_factory=list)
    tfu_unparsed: List[str] = field(default_factory=list)
    tfu_runs: int = 0
    tfu_seconds: float = 0.0
    findings: int = 0
    # 2. breakage
    fixed_files: int = 0
    fixed_unparsable: List[str] = field(default_factory=list)
    refs_total: int = 0
    unresolvable: List[str] = field(default_factory=list)
    unresolvable_silent: List[str] = field(default_factory=list)
    dead_fallbacks: List[str] = field(default_factory=list)  # in/through an except block TF 2.21 never runs
    tfu_refs_total: int = 0
    tfu_unresolvable: List[str] = field(default_factory=list)
    tfu_unresolvable_mentioned: int = 0
    tfu_unresolvable_warned: int = 0
    # 3. native share
    tfm_rewrites: Counter = field(default_factory=Counter)  # native / compat (diff)
    tfu_rewrites: Counter = field(default_factory=Counter)  # native / compat (diff)
    tfu_report_rewrites: Counter = field(default_factory=Counter)  # native / compat / args (report)
    tfm_described: Counter = field(default_factory=Counter)  # native / compat (fix descriptions)


def miss_kind(records: List[Record]) -> str:
    """A short label for what tf_upgrade_v2 did on a line, for the tally of misses."""
    rec = next((r for r in records if r.kind == "change"), None) or next(r for r in records if r.kind != "info")
    msg = rec.message
    m = _RENAME_RE.match(msg)
    if m:
        old = m.group(1)
        return "rename " + ".".join(old.split(".")[:3])
    if msg.startswith("Renamed keyword argument"):
        return "keyword rename"
    words = re.sub(r"'[^']*'", "X", msg)
    words = re.sub(r"\b[\w.]+\.[\w.]+\b", "X", words)
    return f"{rec.severity.lower()}: {short(words, 60)}"


def describe(records: List[Record]) -> str:
    shown = [r for r in records if r.kind != "info"] or records
    return " | ".join(f"{r.severity}: {short(r.message, 140)}" for r in shown[:3])


def measure_package(name: str, package: Path, work: Path, args, refcache: RefCache, resolver: Resolver) -> PackageResult:
    res = PackageResult(name)
    t0 = time.monotonic()
    files = py_files(package)
    res.files = len(files)

    # tf_upgrade_v2 runs in the background (one core) while tfmigrate works.
    upgrade = Upgrade(package, work, args.timeout)

    orig = work / "orig"  # pristine copy: .corpus/ is git-ignored, so tfmigrate would skip it there
    copy_tree(package, orig)
    fixed = work / "fixed"
    copy_tree(package, fixed)
    config = package_config(name, work)
    try:
        findings = tfmigrate_check(orig, args.select, args.timeout, config)
        tfmigrate_fix(fixed, args.select, args.timeout, config)
        fixed_findings = tfmigrate_check(fixed, args.select, args.timeout, config)
    finally:
        tfu = upgrade.result()
    res.findings = len(findings)
    res.tfu_crashed, res.tfu_unparsed, res.tfu_runs, res.tfu_seconds = tfu.crashed, tfu.unparsed, tfu.runs, tfu.seconds
    if tfu.error:
        res.error = tfu.error

    # 1. coverage
    starts = finding_lines(findings)
    texts: Dict[str, List[str]] = {}

    def source_line(rel: str, line: int) -> str:
        if rel not in texts:
            texts[rel] = read_text(package / rel).splitlines() if (package / rel).exists() else []
        lines = texts[rel]
        return lines[line - 1].strip() if 0 < line <= len(lines) else ""

    logical: Dict[str, Dict[int, Tuple[int, int]]] = {}
    missed = []
    for (rel, line), records in sorted(tfu.records.items()):
        if all(r.kind == "info" for r in records):
            res.tfu_info_only += 1
            continue
        res.tfu_lines += 1
        res.covered_line += (rel, line) in starts
        if rel not in logical:
            logical[rel] = logical_lines(read_text(package / rel)) if (package / rel).exists() else {}
        first, last = logical[rel].get(line, (line, line))
        if any((rel, n) in starts for n in range(first, last + 1)):
            res.covered += 1
        else:
            missed.append((rel, line, records))
    # Is a missed line broken under TF 2.21 (a reference that does not resolve), or already valid
    # (every reference resolves, e.g. through `import tensorflow.compat.v1 as tf`)?
    miss_refs = refcache.refs_of(sorted({orig / rel for rel, _, _ in missed if (orig / rel).exists()}))
    by_line = defaultdict(list)
    for path, refs in miss_refs.items():
        for r in refs or []:
            by_line[(os.path.relpath(path, orig), r.line)].append(r)
    for rel, line, records in missed:
        refs = by_line.get((rel, line), [])
        broken = [r.spelled for r in refs if not resolver.resolve(r.full)[0]]
        tag = "broken" if broken else ("valid" if refs else "no-ref")
        res.miss_tags[tag] += 1
        res.miss_kinds[f"[{tag}] {miss_kind(records)}"] += 1
        res.misses.append((0 if broken else 1,
                           f"[{tag}] {name}/{rel}:{line}: {describe(records)}"
                           + (f"  (unresolvable: {', '.join(sorted(set(broken)))})" if broken else "")
                           + f"\n    | {short(source_line(rel, line), 160)}"))

    # 2. silent breakage in tfmigrate's output
    orig_parses = {rel for rel in files if parses(orig / rel)}
    fixed_files = py_files(fixed)
    changed = [rel for rel in fixed_files if (orig / rel).exists() and (orig / rel).read_bytes() != (fixed / rel).read_bytes()]
    res.fixed_files = len(changed)
    res.fixed_unparsable = [rel for rel in changed if rel in orig_parses and not parses(fixed / rel)]
    starts_fixed = finding_lines(fixed_findings)
    fixed_refs = refcache.refs_of([fixed / rel for rel in fixed_files])
    for rel in fixed_files:
        for r in fixed_refs[fixed / rel] or []:
            res.refs_total += 1
            ok, reason = resolver.resolve(r.full)
            if ok:
                continue
            entry = f"{name}/{rel}:{r.line}:{r.col + 1}: {r.spelled}  [{short(reason, 90)}]"
            if resolver.never_runs(r):
                res.dead_fallbacks.append(entry)
                continue
            res.unresolvable.append(entry)
            if not any((rel, line) in starts_fixed for line in range(r.first or r.line, max(r.line, r.last) + 1)):
                res.unresolvable_silent.append(entry + f"\n    | {short(source_line_of(fixed / rel, r.line), 160)}")

    # 3a. tfmigrate's rewrites: diff of the fixed copy against the original
    orig_refs = refcache.refs_of([orig / rel for rel in changed])
    for rel in changed:
        old_text, new_text = read_text(orig / rel), read_text(fixed / rel)
        for r in new_refs(old_text, new_text, orig_refs[orig / rel] or [], fixed_refs[fixed / rel] or []):
            res.tfm_rewrites["compat" if is_compat(r.spelled) else "native"] += 1
    for f in findings:
        if f.get("fix"):
            res.tfm_described["compat" if "compat.v1" in f["fix"]["description"] else "native"] += 1

    # 2b/3b. tf_upgrade_v2's output tree
    if tfu.out_dir is not None and tfu.out_dir.exists():
        out_files = [rel for rel in py_files(tfu.out_dir) if (orig / rel).exists()]
        out_refs = refcache.refs_of([tfu.out_dir / rel for rel in out_files])
        tfu_changed = [rel for rel in out_files if (orig / rel).read_bytes() != (tfu.out_dir / rel).read_bytes()]
        orig_refs = refcache.refs_of([orig / rel for rel in tfu_changed])
        for rel in out_files:
            refs = out_refs[tfu.out_dir / rel] or []
            mapping = None
            for r in refs:
                res.tfu_refs_total += 1
                ok, reason = resolver.resolve(r.full)
                if ok or resolver.never_runs(r):
                    continue
                if mapping is None:
                    mapping = (line_map(read_text(orig / rel).splitlines(), read_text(tfu.out_dir / rel).splitlines())
                               if rel in tfu_changed else {})
                in_line = mapping.get(r.line, r.line)
                recs = tfu.records.get((rel, in_line), [])
                res.tfu_unresolvable.append(
                    f"{name}/{rel}:{r.line}:{r.col + 1}: {r.spelled}  [{short(reason, 80)}]"
                    f"  report: {describe(recs) if recs else '(nothing)'}"
                )
                res.tfu_unresolvable_mentioned += bool(recs)
                res.tfu_unresolvable_warned += any(x.severity != "INFO" for x in recs)
        for rel in tfu_changed:
            if rel in tfu.unparsed:
                continue  # its output file is empty: no rewrite
            old_text, new_text = read_text(orig / rel), read_text(tfu.out_dir / rel)
            for r in new_refs(old_text, new_text, orig_refs[orig / rel] or [], out_refs[tfu.out_dir / rel] or []):
                res.tfu_rewrites["compat" if is_compat(r.spelled) else "native"] += 1
    for records in tfu.records.values():
        for r in records:
            if r.kind != "change":
                continue
            m = _RENAME_RE.match(r.message)
            if m:
                res.tfu_report_rewrites["compat" if is_compat(m.group(2)) else "native"] += 1
            elif r.message.startswith(("Changed ", "Changing ")) and " arg of " not in r.message:
                target = r.message.split(" to ", 1)[-1]
                res.tfu_report_rewrites["compat" if is_compat(target) else "native"] += 1
            else:
                res.tfu_report_rewrites["args"] += 1
    res.seconds = time.monotonic() - t0
    return res


def source_line_of(path: Path, line: int) -> str:
    lines = read_text(path).splitlines()
    return lines[line - 1].strip() if 0 < line <= len(lines) else ""


# --------------------------------------------------------------------------------------------
# report

def share(c: Counter) -> Tuple[int, int, str]:
    total = c["native"] + c["compat"]
    return c["native"], total, pct(c["native"], total)


def ratio(a: Counter, b: Counter) -> str:
    ta, tb = a["native"] + a["compat"], b["native"] + b["compat"]
    if not ta or not tb:
        return "n/a"
    sa, sb = a["native"] / ta, b["native"] / tb
    return f"{sa / sb:.2f}x" if sb else "inf"


def print_report(results: List[PackageResult], out_dir: Path, wall: float) -> Dict[str, object]:
    ok = [r for r in results if r.error is None or r.tfu_lines or r.refs_total]
    tot = PackageResult("TOTAL")
    for r in ok:
        for attr in ("files", "tfu_lines", "tfu_info_only", "covered", "covered_line", "findings", "fixed_files",
                     "refs_total", "tfu_refs_total", "tfu_unresolvable_mentioned", "tfu_unresolvable_warned"):
            setattr(tot, attr, getattr(tot, attr) + getattr(r, attr))
        for attr in ("misses", "fixed_unparsable", "unresolvable", "unresolvable_silent", "tfu_unresolvable",
                     "tfu_crashed", "tfu_unparsed", "dead_fallbacks"):
            getattr(tot, attr).extend(f"{r.name}/{x}" if attr in ("tfu_crashed", "tfu_unparsed", "fixed_unparsable") else x
                                      for x in getattr(r, attr))
        for attr in ("miss_kinds", "miss_tags", "tfm_rewrites", "tfu_rewrites", "tfu_report_rewrites", "tfm_described"):
            getattr(tot, attr).update(getattr(r, attr))

    out_dir.mkdir(parents=True, exist_ok=True)
    files = {
        "misses": out_dir / "coverage_misses.txt",
        "silent": out_dir / "unresolvable_without_finding.txt",
        "unresolvable": out_dir / "unresolvable_tfmigrate.txt",
        "dead": out_dir / "unresolvable_in_dead_fallbacks.txt",
        "tfu_unresolvable": out_dir / "unresolvable_tf_upgrade_v2.txt",
    }
    tot.misses.sort(key=lambda m: m[0])  # stable: broken lines first, then corpus order
    misses = [text for _, text in tot.misses]
    files["misses"].write_text("\n".join(misses) + "\n")
    files["silent"].write_text("\n".join(tot.unresolvable_silent) + "\n")
    files["unresolvable"].write_text("\n".join(tot.unresolvable) + "\n")
    files["dead"].write_text("\n".join(tot.dead_fallbacks) + "\n")
    files["tfu_unresolvable"].write_text("\n".join(tot.tfu_unresolvable) + "\n")

    bar = "=" * 100
    print(bar)
    print("1. COVERAGE: tf_upgrade_v2's changed/warned lines on which tfmigrate reports a finding")
    print(bar)
    print(f"{'package':26} {'tfu lines':>9} {'covered':>8} {'share':>7} {'(line)':>7} {'info-only':>9} "
          f"{'findings':>8} {'tfu crash/unparsed':>18} {'tfu s':>6}")

    def coverage_row(name, r):
        return (f"{name:26} {r.tfu_lines:9} {r.covered:8} {pct(r.covered, r.tfu_lines):>7} "
                f"{pct(r.covered_line, r.tfu_lines):>7} {r.tfu_info_only:9} {r.findings:8} "
                f"{len(r.tfu_crashed):>8}/{len(r.tfu_unparsed):<9}")

    for r in results:
        if r.error and not r.tfu_lines:
            print(f"{r.name:26} FAILED: {short(r.error, 70)}")
            continue
        print(f"{coverage_row(r.name, r)} {r.tfu_seconds:6.0f}")
    print(coverage_row("TOTAL", tot))
    for label, items in (("tf_upgrade_v2 died on (removed, rerun)", tot.tfu_crashed),
                         ("tf_upgrade_v2 could not parse (wrote empty files)", tot.tfu_unparsed)):
        if items:
            print(f"  {label}: {', '.join(items[:10])}{' ...' if len(items) > 10 else ''}")
    print(f"\nMisses: {len(misses)} (all in {files['misses']}): {tot.miss_tags['broken']} [broken] (a reference on the "
          f"line does not resolve in TF 2.21), {tot.miss_tags['valid']} [valid] (every reference on the line "
          f"resolves, e.g. via a compat.v1 alias), {tot.miss_tags['no-ref']} [no-ref]; by kind:")
    for kind, n in sorted(tot.miss_kinds.items(), key=lambda kv: (-kv[1], kv[0]))[:25]:
        print(f"  {n:6}  {kind}")
    print(f"\nFirst {min(40, len(misses))} misses (broken lines first):")
    for m in misses[:40]:
        print("  " + m)

    print("\n" + bar)
    print("2. SILENT BREAKAGE after `tfmigrate fix --unsafe-fixes` (and in tf_upgrade_v2's output)")
    print(bar)
    print(f"{'package':26} {'fixed files':>11} {'unparsable':>10} {'TF refs':>8} {'unresolv.':>9} "
          f"{'no finding':>10} | {'tfu refs':>8} {'tfu unres.':>10} {'in report':>9} {'warned':>6}")

    def breakage_row(name, r):
        return (f"{name:26} {r.fixed_files:11} {len(r.fixed_unparsable):10} {r.refs_total:8} {len(r.unresolvable):9} "
                f"{len(r.unresolvable_silent):10} | {r.tfu_refs_total:8} {len(r.tfu_unresolvable):10} "
                f"{r.tfu_unresolvable_mentioned:9} {r.tfu_unresolvable_warned:6}")

    for r in results:
        if not (r.error and not r.refs_total):
            print(breakage_row(r.name, r))
    print(breakage_row("TOTAL", tot))
    if tot.fixed_unparsable:
        print("  fixed files that no longer parse: " + ", ".join(tot.fixed_unparsable))
    print(f"\nUnresolvable references left by tfmigrate WITHOUT a finding on their line: {len(tot.unresolvable_silent)}"
          f" (all in {files['silent']})")
    for m in tot.unresolvable_silent[:40]:
        print("  " + m)
    print(f"(every unresolvable reference: {files['unresolvable']}; tf_upgrade_v2's: {files['tfu_unresolvable']})")
    print(f"Not counted (both tools): {len(tot.dead_fallbacks)} in or through an `except` block whose `try` "
          f"imports resolve under TF 2.21, so it never runs ({files['dead']})")

    print("\n" + bar)
    print("3. NATIVE SHARE of rewrites (references written by each tool; compat = spelling contains compat.v1)")
    print(bar)
    print(f"{'package':26} {'tfmigrate native/all':>22} {'share':>7} | {'tf_upgrade_v2 native/all':>25} {'share':>7} | ratio")
    for r in results:
        if r.error and not r.refs_total:
            continue
        n1, t1, s1 = share(r.tfm_rewrites)
        n2, t2, s2 = share(r.tfu_rewrites)
        print(f"{r.name:26} {f'{n1}/{t1}':>22} {s1:>7} | {f'{n2}/{t2}':>25} {s2:>7} | {ratio(r.tfm_rewrites, r.tfu_rewrites)}")
    n1, t1, s1 = share(tot.tfm_rewrites)
    n2, t2, s2 = share(tot.tfu_rewrites)
    print(f"{'TOTAL':26} {f'{n1}/{t1}':>22} {s1:>7} | {f'{n2}/{t2}':>25} {s2:>7} | {ratio(tot.tfm_rewrites, tot.tfu_rewrites)}")
    dn, dt, ds = share(tot.tfm_described)
    rn, rt, rs = share(tot.tfu_report_rewrites)
    print(f"Cross-checks: tfmigrate fix descriptions (offered fixes, check on the original): {dn}/{dt} native = {ds};")
    print(f"  tf_upgrade_v2 report (Renamed/Changed/Changing records): {rn}/{rt} native = {rs}, "
          f"plus {tot.tfu_report_rewrites['args']} argument-only edits; ratio by these: "
          f"{ratio(tot.tfm_described, tot.tfu_report_rewrites)}")

    print("\n" + bar)
    print("SUMMARY")
    print(bar)
    rows = [
        ("coverage of tf_upgrade_v2's lines", pct(tot.covered, tot.tfu_lines),
         f"{tot.covered}/{tot.tfu_lines} (same line: {pct(tot.covered_line, tot.tfu_lines)})", ">= 99%"),
        ("unresolvable refs without a finding", str(len(tot.unresolvable_silent)),
         f"of {len(tot.unresolvable)} unresolvable / {tot.refs_total} refs", "0"),
        ("  (tf_upgrade_v2: unresolvable refs)", str(len(tot.tfu_unresolvable)),
         f"{tot.tfu_unresolvable_mentioned} mentioned in its report", ""),
        ("fixed files that no longer parse", str(len(tot.fixed_unparsable)), f"of {tot.fixed_files} fixed", "0"),
        ("native share tfmigrate", s1, f"{n1}/{t1}", ""),
        ("native share tf_upgrade_v2", s2, f"{n2}/{t2}", ""),
        ("native share ratio", ratio(tot.tfm_rewrites, tot.tfu_rewrites), "", ">= 3x"),
    ]
    print(f"{'figure':40} {'value':>8}  {'detail':45} target")
    for a, b, c, d in rows:
        print(f"{a:40} {b:>8}  {c:45} {d}")
    failed = [r.name for r in results if r.error]
    if failed:
        print("packages with errors: " + "; ".join(f"{r.name}: {short(r.error, 120)}" for r in results if r.error))
    print(f"wall time {wall:.0f} s; full lists in {out_dir}")
    return {
        "coverage": (tot.covered, tot.tfu_lines),
        "unresolvable": len(tot.unresolvable),
        "unresolvable_silent": len(tot.unresolvable_silent),
        "refs_total": tot.refs_total,
        "tfu_unresolvable": len(tot.tfu_unresolvable),
        "fixed_unparsable": len(tot.fixed_unparsable),
        "native_tfmigrate": dict(tot.tfm_rewrites),
        "native_tf_upgrade_v2": dict(tot.tfu_rewrites),
        "ratio": ratio(tot.tfm_rewrites, tot.tfu_rewrites),
    }


def run(package_dirs: List[Tuple[str, Path]], out_dir: Path, select: str = "ALL", timeout: float = 900,
        keep: bool = False) -> Dict[str, object]:
    """Measure every package; a failing package is reported and the rest go on."""
    args = argparse.Namespace(select=select, timeout=timeout)
    refcache, resolver = RefCache(), Resolver()
    results: List[PackageResult] = []
    t0 = time.monotonic()
    base = Path(tempfile.mkdtemp(prefix="tfm_compare_"))
    try:
        for name, folder in package_dirs:
            work = base / name
            work.mkdir()
            print(f"... {name}", file=sys.stderr, flush=True)
            try:
                res = measure_package(name, folder, work, args, refcache, resolver)
            except Exception as error:  # one package must not stop the others
                res = PackageResult(name, error=f"{type(error).__name__}: {error}")
            results.append(res)
            print(f"    {name}: {res.seconds:.0f} s" + (f"  ERROR {short(res.error, 150)}" if res.error else ""),
                  file=sys.stderr, flush=True)
            if not keep:
                shutil.rmtree(work, ignore_errors=True)
    finally:
        if not keep:
            shutil.rmtree(base, ignore_errors=True)
        else:
            print(f"temporary trees kept in {base}", file=sys.stderr)
        global _POOL
        if _POOL is not None:
            _POOL.close()
            _POOL.join()
            _POOL = None
    return print_report(results, out_dir, time.monotonic() - t0)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS_DIR, help="folder of package folders")
    parser.add_argument("--corpus-file", type=Path, default=DEFAULT_CORPUS_FILE)
    parser.add_argument("--package", help="only this package (name or name prefix, e.g. trfl)")
    parser.add_argument("--out", type=Path, default=Path(tempfile.gettempdir()) / "tfmigrate_compare_upgrade")
    parser.add_argument("--select", default="ALL", help="tfmigrate rule selection (default ALL)")
    parser.add_argument("--timeout", type=float, default=900, help="seconds per tool run (a hung run fails its package only)")
    parser.add_argument("--keep", action="store_true", help="keep the temporary trees")
    args = parser.parse_args(argv)
    if not args.corpus.is_dir():
        parser.error(f"no corpus folder {args.corpus} (run scripts/fetch_corpus.py)")
    chosen = packages(args.corpus, args.corpus_file, args.package)
    if not chosen:
        parser.error("no package matched")
    run(chosen, args.out, args.select, args.timeout, args.keep)
    return 0


if __name__ == "__main__":
    sys.exit(main())
