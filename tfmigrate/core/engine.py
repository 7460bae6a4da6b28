"""Per file: parse once, run every enabled rule in one walk, and for `fix`, apply fixes and
re-check until nothing changes (bounded), refusing any result that does not parse.
"""
from __future__ import annotations

import codecs
import re
import sys
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Dict, List, Optional, Sequence

import libcst as cst

from tfmigrate.core import noqa
from tfmigrate.facts import references
from tfmigrate.core.apply import apply_fixes
from tfmigrate.catalogue import catalogue
from tfmigrate.facts.context import FileContext
from tfmigrate.core.deep import run_deep
from tfmigrate.findings import Finding
from tfmigrate.facts.nodes import NODE_TYPES, child_fields, is_node_type
from tfmigrate.core.positions import Positions, python_ast
from tfmigrate.core.registry import all_rules
from tfmigrate.rules.base import Report, Rule

PARSE_ERROR = "TFM001"
INTERNAL_ERROR = "TFM000"
MAX_FIX_PASSES = 16


@dataclass
class FileResult:
    path: str
    original: bytes
    findings: List[Finding] = field(default_factory=list)
    fixed: Optional[bytes] = None  # new bytes when a fix changed the file
    applied: int = 0
    passes: list = field(default_factory=list)  # (before, after, edited spans), when recorded
    requires: tuple = ()  # packages the applied fixes make the code need ("tf-keras")
    fixed_rules: list = field(default_factory=list)  # the rule of each fix applied (--show-fixes)

    @property
    def text(self) -> str:
        """The source as text, for showing lines in reports."""
        data = self.fixed if self.fixed is not None else self.original
        return data.decode("utf-8", errors="replace")


def might_use_tensorflow(data: bytes, shims=None) -> bool:
    """Cheap scan: a file with no 'tensorflow' or 'keras' anywhere (nor a configured re-export
    of them) cannot have a finding."""
    return b"tensorflow" in data or b"keras" in data or (shims is not None and shims.mentioned_in(data))


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


_BOMS = ((codecs.BOM_UTF32_LE, "UTF-32"), (codecs.BOM_UTF32_BE, "UTF-32"),
         (codecs.BOM_UTF16_LE, "UTF-16"), (codecs.BOM_UTF16_BE, "UTF-16"))


def _unreadable_source(data: bytes, path: str, shims=None) -> Optional[Finding]:
    """TFM001 for bytes Python refuses before parsing, which libcst reads (or a byte scan skips)
    as if fine: a UTF-16/32 file (its `tensorflow` is not the bytes the scan looks for) and a NUL
    byte (libcst takes one in a comment). Such a file is never checked, fixed or written."""
    for bom, name in _BOMS:
        if data.startswith(bom):
            if not might_use_tensorflow(data.decode(name.replace("-", "").lower(), "replace").encode("utf-8"), shims):
                return None
            return make_finding(PARSE_ERROR, path, (
                f"Cannot parse this file: it is encoded as {name} (it starts with a {name} byte order mark), "
                "which Python does not read as source code. Save it as UTF-8 to have it checked."
            ), (1, 0), (1, 0))
    nul = data.find(b"\x00")
    if nul < 0 or not might_use_tensorflow(data, shims):
        return None
    line = data.count(b"\n", 0, nul) + 1
    column = nul - (data.rfind(b"\n", 0, nul) + 1)
    return make_finding(PARSE_ERROR, path, (
        f"Cannot parse this file: it contains a NUL byte (line {line}), which Python refuses in source code. "
        "Remove it (or, for a binary file named .py, rename it) to have it checked."
    ), (line, column), (line, column + 1))


_PY2_EXCEPT = re.compile(r"^[ \t]*except[ \t]+[\w.]+[ \t]*,[ \t]*\w+[ \t]*:", re.MULTILINE)


class TooDeep(SyntaxError):
    """Code nested deeper than CPython (or libcst's parser) takes: reported as TFM001 before
    libcst parses it (libcst's native parser would overflow its stack and kill the process)."""


# What CPython says when code is nested too deeply for it (3.11-3.13 wordings).
_TOO_DEEP = ("too many nested parentheses", "too many levels of indentation",
             "too many statically nested blocks", "too complex", "stack overflow")
BOOL_CHAIN_LIMIT = 100_000  # `and`/`or` operands in one expression: libcst nests them, CPython does not
_BOOL_WORD = re.compile(rb"\b(?:and|or)\b")


def _cpython_verdict(data: bytes, path: str) -> Optional[SyntaxError]:
    """CPython's compiler on the file, before libcst parses it. Code nested too deeply for
    CPython (`RecursionError` at the recursion limit `python file.py` compiles under, a parser
    stack overflow, too many nested parentheses) raises TooDeep. Another SyntaxError is returned
    for `_cpython_refuses` to judge once libcst has parsed the file: Python 2's `except X, e:`,
    and what the compiler (not the parser) rejects, in every Python 3: `return` or `yield`
    outside a function, `break` outside a loop, `nonlocal` at module level. Syntax newer than
    this Python (PEP 695 on 3.11) is libcst's to judge; notebooks may `await` at the top level."""
    import ast
    import warnings

    from tfmigrate.core.deep import cpython_limit

    flags = ast.PyCF_ALLOW_TOP_LEVEL_AWAIT if path.endswith(".ipynb") else 0
    with warnings.catch_warnings():  # invalid escapes and the like are not tfmigrate's to report
        warnings.simplefilter("ignore")
        try:
            with cpython_limit():
                compile(data, path, "exec", flags=flags, dont_inherit=True)
        except (RecursionError, MemoryError) as error:
            detail = str(error) or "the parser's stack overflowed"
            raise TooDeep(f"it is nested too deeply for Python ({type(error).__name__}: {detail})") from None
        except SyntaxError as error:
            if any(words in (error.msg or "") for words in _TOO_DEEP):
                deep = TooDeep(f"it is nested too deeply for Python ({error.msg})")
                deep.lineno, deep.offset = error.lineno, error.offset
                raise deep from None
            return error
    _check_bool_chains(data)
    return None


def _check_bool_chains(data: bytes) -> None:
    """TooDeep for an expression of more than BOOL_CHAIN_LIMIT `and`/`or` operands: CPython
    keeps them in one list, libcst nests them one per operand (its parser's stack would
    overflow). A cheap count first; the exact chains only when the words are that many."""
    if len(_BOOL_WORD.findall(data)) <= BOOL_CHAIN_LIMIT:
        return
    import ast

    tree = python_ast(data)
    chains: Dict[int, int] = {}
    for node in reversed([n for n in ast.walk(tree) if isinstance(n, ast.BoolOp)]):  # inner ones first
        chains[id(node)] = len(node.values) - 1 + max((chains.get(id(v), 0) for v in node.values), default=0)
        if chains[id(node)] > BOOL_CHAIN_LIMIT:
            deep = TooDeep(
                f"an expression of {chains[id(node)] + 1:,} `and`/`or` operands is more than tfmigrate's "
                f"parser takes ({BOOL_CHAIN_LIMIT:,})"
            )
            deep.lineno, deep.offset = node.lineno, node.col_offset + 1
            raise deep


def _cpython_refuses(refusal: Optional[SyntaxError], data: bytes, source: str) -> None:
    """Raise CPython's SyntaxError (from `_cpython_verdict`) for code libcst accepts but Python
    refuses. Such a file is reported (TFM001), never fixed and written as if valid."""
    if refusal is not None and (_PY2_EXCEPT.search(source) or _parses(data)):
        raise refusal


def _parses(data: bytes) -> bool:
    """Whether CPython's parser (not its compiler) reads the file."""
    try:
        python_ast(data)
        return True
    except SyntaxError:
        return False


_CODING = re.compile(rb"^[ \t\f]*#.*?coding[:=][ \t]*([-\w.]+)")


def _declared_encoding(data: bytes) -> Optional[str]:
    """The encoding a PEP 263 declaration on line 1 or 2 names, or None."""
    for line in data.split(b"\n", 2)[:2]:
        match = _CODING.match(line)
        if match:
            return match.group(1).decode("ascii", "replace")
    return None


def _parses_as_latin1(data: bytes) -> bool:
    """Whether the source parses once read as Latin-1 (every byte is a character there)."""
    try:
        python_ast(data.decode("latin-1"))
    except Exception:  # noqa: BLE001 - any refusal: more is wrong than the encoding
        return False
    return True


def _parse_error(path: str, error: Exception, data: bytes) -> Finding:
    """TFM001 with the clearest message on offer: CPython's own, else libcst's."""
    line, col, text = 1, 0, str(error).splitlines()[0] if str(error) else type(error).__name__
    if isinstance(error, TooDeep):
        line, col = error.lineno or 1, max((error.offset or 1) - 1, 0)
        return make_finding(PARSE_ERROR, path, (
            f"Cannot parse this file: {error.msg}, so it was not checked. Split the deepest expression "
            "(or block) into several statements to have it checked."
        ), (line, col), (line, col))
    if isinstance(error, SyntaxError) and error.lineno:
        line, col, text = error.lineno, max((error.offset or 1) - 1, 0), error.msg
    elif isinstance(error, UnicodeDecodeError):
        line = data.count(b"\n", 0, error.start) + 1
        col = error.start - (data.rfind(b"\n", 0, error.start) + 1)
        declared = _declared_encoding(data)
        if declared is None:
            byte = data[error.start]
            if _parses_as_latin1(data):  # the encoding is the only problem: say how to declare it
                message = (
                    f"Cannot parse this file: byte 0x{byte:02x} on line {line} is not UTF-8, and the file "
                    "declares no encoding (Python 3 reads undeclared source as UTF-8). If it is Latin-1, "
                    "declare it on the first or second line with `# -*- coding: latin-1 -*-` (or save "
                    "the file as UTF-8) to have it checked."
                )
                return make_finding(PARSE_ERROR, path, message, (line, col), (line, col))
            text = f"not UTF-8 text (byte 0x{byte:02x} on line {line}) and no encoding declared"
        else:
            text = f"not valid text in its declared encoding {declared} ({error.reason} at byte {error.start})"
    elif isinstance(error, cst.ParserSyntaxError):
        line, col, text = error.raw_line, error.raw_column, error.message
        where = re.search(r"error at (\d+):(\d+): ", text)
        if where:
            line, col = int(where.group(1)), max(int(where.group(2)) - 1, 0)  # the token's end; 0 at EOF
            text = text[where.end():]
        text = re.sub(r"^(parser|tokenizer) error: ", "", text)
        try:
            python_ast(data)
        except SyntaxError as py_error:  # CPython says "Missing parentheses in call to 'print'"
            if py_error.lineno:
                line, col, text = py_error.lineno, max((py_error.offset or 1) - 1, 0), py_error.msg
        except Exception:  # null bytes and the like: keep libcst's words
            pass
        else:  # valid Python that libcst cannot read (thousands of implicitly joined strings)
            return make_finding(PARSE_ERROR, path, (
                f"Cannot check this file: it is valid Python, but tfmigrate's parser (libcst) stops at line "
                f"{line} ({text.strip() or 'no reason given'}). Its parser gives up on very long expressions, "
                "such as thousands of implicitly joined strings; split that expression to have the file checked."
            ), (line, col), (line, col))
    if text.startswith("expected one of"):
        text = "invalid syntax"
    stop = "" if text.endswith((".", "?", "!")) else "."
    todo = ("Save it in the encoding it declares (or declare the one it is in)"
            if isinstance(error, UnicodeDecodeError) and _declared_encoding(data) else
            "Fix the syntax (Python 2 code must be ported to Python 3)")
    message = f"Cannot parse this file: {text}{stop} {todo} to have it checked."
    return make_finding(PARSE_ERROR, path, message, (line, col), (line, col))


_REVERSED: Dict[type, tuple] = {}
_LEAVE = object()  # marks, on the walk's stack, that the node below it is being left


class _Walk:
    """One pre/post-order walk of the tree that dispatches each node to every rule's visit_ and
    leave_ methods. It reads dataclass fields directly: libcst's own visitor rebuilds every node
    and costs as much as the parse."""

    def __init__(self, ctx: FileContext, rules: Sequence[Rule]):
        self.ctx = ctx
        self.failed: Dict[Rule, BaseException] = {}
        visits, leaves = defaultdict(list), defaultdict(list)
        for rule in rules:
            for attr in rule.handlers():
                table = visits if attr.startswith("visit_") else leaves
                table[getattr(cst, attr[6:])].append((rule, getattr(rule, attr)))
        self.visits, self.leaves = dict(visits), dict(leaves)

    def _run(self, handlers, node) -> None:
        for rule, method in handlers:
            if rule in self.failed:
                continue
            try:
                method(node)
            except Exception as error:  # one broken rule must not stop the others
                self.failed[rule] = error

    def walk(self, root: cst.CSTNode) -> None:
        visits, leaves, ancestors = self.visits, self.leaves, self.ctx.stack
        is_node, reversed_fields = NODE_TYPES, _REVERSED
        todo = [root]
        while todo:
            node = todo.pop()
            if node is _LEAVE:
                node = todo.pop()
                ancestors.pop()
                handlers = leaves.get(type(node))
                if handlers:
                    self._run(handlers, node)
                continue
            kind = type(node)
            handlers = visits.get(kind)
            if handlers:
                self._run(handlers, node)
            ancestors.append(node)
            todo.append(node)
            todo.append(_LEAVE)
            fields = reversed_fields.get(kind)
            if fields is None:
                fields = reversed_fields[kind] = tuple(reversed(child_fields(kind)))
            for name in fields:  # pushed last-first, so popped in source order
                value = getattr(node, name)
                value_kind = type(value)
                if value_kind is list or value_kind is tuple:
                    for item in reversed(value):
                        flag = is_node.get(type(item))
                        if flag is None:
                            flag = is_node_type(type(item))
                        if flag:
                            todo.append(item)
                else:
                    flag = is_node.get(value_kind)
                    if flag is None:
                        flag = is_node_type(value_kind)
                    if flag:
                        todo.append(value)


@dataclass
class _Pass:
    module: Optional[cst.Module]
    findings: List[Finding]
    positions: object = None


def _internal_error(path: str, what: str, error: BaseException) -> Finding:
    return make_finding(
        INTERNAL_ERROR,
        path,
        f"Internal error {what}: {type(error).__name__}: {error}. "
        "The rest of the run went on; please report this with the file.",
        (1, 0),
        (1, 0),
    )


def _lint(data: bytes, path: str, codes: Sequence[str], parsed: Optional[cst.Module] = None, shims=None,
          imported_by: Optional[str] = None, native: bool = False) -> _Pass:
    """Lint one file (`parsed`: its module, when the caller has parsed it already); no
    exception escapes (it becomes a TFM000 finding)."""
    unreadable = _unreadable_source(data, path, shims)
    if unreadable is not None:
        return _Pass(None, [unreadable])
    try:
        return _lint_unguarded(data, path, noqa.file_codes(data, codes), parsed, shims, imported_by, native)
    except RecursionError:  # code nested deeper than tfmigrate's recursion limit (tfmigrate.core.deep)
        return _Pass(None, [make_finding(INTERNAL_ERROR, path, (
            "Cannot check this file: its code is nested too deeply for tfmigrate (the recursion limit "
            f"{sys.getrecursionlimit():,} was reached), so it was not checked; the rest of the run went on. "
            "Split the deepest expression into several statements to have it checked."
        ), (1, 0), (1, 0))])
    except Exception as error:
        return _Pass(None, [_internal_error(path, "while checking this file", error)])


def _parse(data: bytes) -> cst.Module:
    """libcst's parse, without the validation every node's constructor runs (a fifth of the
    parse). The validation guards trees built by hand; the parser's own are valid by
    construction (libcst's authors say as much in `CSTNode.__post_init__`)."""
    node = cst.CSTNode
    validate = node.__post_init__
    node.__post_init__ = _no_validation
    try:
        return cst.parse_module(data)
    finally:
        node.__post_init__ = validate


def _no_validation(self) -> None:
    pass


def _forget(ctx: FileContext, rules: Sequence[Rule]) -> None:
    """Drop what the rules and the context hold. They point at each other (the references step,
    per-file facts, cached helpers), and such cycles would keep each file's whole tree alive until
    the garbage collector's full pass, which then has millions of nodes to scan."""
    for rule in rules:
        rule.__dict__.clear()
    ctx.__dict__.clear()


def _lint_unguarded(data: bytes, path: str, codes: Sequence[str], parsed: Optional[cst.Module], shims=None,
                    imported_by: Optional[str] = None, native: bool = False) -> _Pass:
    if not might_use_tensorflow(data, shims):
        return _Pass(None, [])
    try:
        # CPython first: code too deep for it must never reach libcst's native parser. A fix's
        # output was checked by the pass that made it.
        refusal = _cpython_verdict(data, path) if parsed is None else None
        module = parsed or _parse(data)
        source = data.decode(module.encoding, errors="replace")  # cheaper than module.code
        _cpython_refuses(refusal, data, source)
    except Exception as error:  # libcst raises several types for bad input
        # Whatever the selection or noqa, as Ruff's syntax errors: the file was not checked.
        return _Pass(None, [_parse_error(path, error, data)])
    ctx = FileContext(path, module, source, shims, imported_by)
    ctx.native = native
    registry = all_rules()
    rules = [registry[c](ctx) for c in codes if c in registry and registry[c].applies_to(ctx)]
    steps = references.steps(ctx, rules)  # walked before the rules, at each node
    walk = _Walk(ctx, steps + [r for r in rules if r.handlers()])
    if rules:
        walk.walk(module)
    for step in steps:
        walk.failed.update(step.failed)  # a rule that failed on a reference handed to it
    reports: List[Report] = [rep for rule in rules if rule not in walk.failed for rep in rule.reports]
    errors = [(rule.code, error) for rule, error in walk.failed.items()]
    _forget(ctx, rules)
    may_be_stale = noqa.UNUSED_NOQA in codes and noqa.mentioned(source)
    if not reports and not errors and not may_be_stale:
        return _Pass(module, [])
    positions = Positions(module, data, source)
    positions.prepare([(rep.statements, rep.node) for rep in reports])
    for rep in reports:
        for edit in rep.fix.edits if rep.fix is not None else ():
            target = getattr(edit, "node", None) or getattr(edit, "owner", None)
            if target is not None:
                positions.hint(target, rep.statements)
    findings = []
    for rep in reports:
        rng = positions[rep.node]
        start, end = (rng.start.line, rng.start.column), (rng.end.line, rng.end.column)
        findings.append(make_finding(rep.code, path, rep.message, start, end, rep.fix, rep.debt))
    for code, error in errors:
        findings.append(_internal_error(path, f"in rule {code}", error))
    findings, stale = noqa.suppress(findings, source, codes, list(catalogue()))
    if stale:
        findings += noqa.unused_findings(module, stale, path, make_finding, positions)
    findings.sort(key=lambda f: (f.line, f.column, f.rule))
    return _Pass(module, findings, positions)


def check_source(data: bytes, path: str, codes: Sequence[str], shims=None, imported_by=None,
                 native: bool = False) -> List[Finding]:
    """`shims`: the project's re-exports of TensorFlow (names.Shims), or None. `imported_by`: a
    checked module of TF1 graph code that imports this one (graph_imports), or None. Runs with
    room for deeply nested code (tfmigrate.core.deep)."""
    return run_deep(lambda: _lint(data, path, codes, shims=shims, imported_by=imported_by, native=native).findings)


def _applicable(findings: Sequence[Finding], unsafe: bool, refused: set) -> List[Finding]:
    return [
        f
        for f in findings
        if f.fix is not None
        and f.fix.edits
        and (unsafe or f.fix.applicability == "safe")
        and (f.rule, f.line, f.column) not in refused
    ]


GRAPH_MODULE = "TFM200"
NATIVE = "TFM216"


def _native(data: bytes, result: FileResult, record: bool) -> bytes:
    """The module rewritten as eager TF2 (tfmigrate.native), before any other fix; `data` itself
    when it is not a TF1 graph script tfmigrate can rewrite (TFM216 then says why)."""
    if not might_use_tensorflow(data):
        return data
    from tfmigrate.native import rewrite

    try:
        source = data.decode("utf-8")
    except UnicodeDecodeError:
        return data
    outcome = rewrite(source)
    if outcome.code is None:
        return data
    new = outcome.code.encode("utf-8")
    if record:
        result.passes.append((data, new, [((1, 0), (data.count(b"\n") + 1, 0))]))  # the whole module
    result.applied += 1
    result.fixed_rules.append(NATIVE)
    if "write_summaries(" in outcome.code:
        result.requires = tuple(sorted(set(result.requires) | {"tensorboard"}))
    return new


def _route_first(fixable: List[Finding]) -> List[Finding]:
    """A module moving to the compat route (TFM200) moves alone: the other fixes were chosen for
    the module as it was, and are chosen again in the next pass for the module on the route."""
    route = [f for f in fixable if f.rule == GRAPH_MODULE]
    return route or fixable


def _apply(module: cst.Module, fixable: Sequence[Finding], positions, spans: list, rules: Optional[list] = None):
    """Apply the fixes together; if that fails or breaks the syntax, find the culprits one by
    one, refuse them, and apply the rest. Returns (new bytes or None, fixes applied, refused,
    the new bytes parsed); `spans` receives the edited regions of the batch that was applied,
    `rules` (if given) the rule of each fix applied."""

    def attempt(batch):
        edited: list = []
        chosen: list = []
        text, taken, parsed = apply_fixes(module, [f.fix for f in batch], positions, edited, chosen)
        if text is None:
            return None, 0, None
        new = text.encode(module.encoding)
        if parsed is None:
            parsed = _parse(new)  # refuses code that does not parse; the next pass reuses the tree
        elif positions.cpython_parses:
            python_ast(new)  # the edited statements parsed one by one; the whole must parse too
        spans[:] = edited
        if rules is not None:
            taken_ids = {id(fix) for fix in chosen}
            rules[:] = [f.rule for f in batch if id(f.fix) in taken_ids]
        return new, taken, parsed

    try:
        new, taken, parsed = attempt(fixable)
        return new, taken, [], parsed
    except Exception:
        pass
    good, refused = [], []
    for finding in fixable:
        try:
            attempt([finding])
            good.append(finding)
        except Exception:
            refused.append(finding)
    if good:
        try:
            new, taken, parsed = attempt(good)
            return new, taken, refused, parsed
        except Exception:
            refused.extend(good)
    return None, 0, refused, None


def fix_source(data: bytes, path: str, codes: Sequence[str], unsafe: bool = False, record: bool = False,
               shims=None, imported_by=None, native: bool = False) -> FileResult:
    """Fix to a fixed point. The result's `fixed` is None when nothing changed. A fix whose
    result would not parse is refused (reported as TFM000) and the others still apply.
    `native`: a TF1 graph script is first rewritten as eager TF2 where it can be (TFM216)."""
    return run_deep(_fix_source, data, path, codes, unsafe, record, shims, imported_by, native)


def _fix_source(data: bytes, path: str, codes: Sequence[str], unsafe: bool, record: bool, shims,
                imported_by, native: bool = False) -> FileResult:
    result = FileResult(path, data)
    current = data
    if native and NATIVE in codes:
        current = _native(data, result, record)
    refused: set = set()
    failures: List[Finding] = []
    lint = None
    parsed = None
    for _ in range(MAX_FIX_PASSES):
        lint = _lint(current, path, codes, parsed, shims, imported_by, native)
        parsed = None
        fixable = _route_first(_applicable(lint.findings, unsafe, refused))
        if lint.module is None or not fixable:
            break
        spans: list = []
        rules: list = []
        new, taken, bad, parsed = _apply(lint.module, fixable, lint.positions, spans, rules)
        for finding in bad:
            refused.add((finding.rule, finding.line, finding.column))
            failures.append(
                make_finding(
                    INTERNAL_ERROR,
                    path,
                    f"The {finding.rule} fix at line {finding.line} would have produced invalid code and "
                    "was not applied; the finding stays. Please report this with the file.",
                    (finding.line, finding.column - 1),
                    (finding.line, finding.column - 1),
                )
            )
        if new is None or new == current:
            parsed = None
            if not bad:
                break
            continue
        if record:
            result.passes.append((current, new, spans))
        current = new
        result.applied += taken
        result.fixed_rules.extend(rules)
        result.requires = tuple(sorted(set(result.requires).union(*(f.fix.requires for f in fixable))))
        lint = None
    if lint is None:
        lint = _lint(current, path, codes, parsed, shims, imported_by, native)
    result.findings = sorted(lint.findings + failures, key=lambda f: (f.line, f.column, f.rule))
    if current != data:
        result.fixed = current
    return result


def lint_source(data: bytes, path: str, codes: Sequence[str], shims=None, imported_by=None,
                native: bool = False):
    """check_source's whole pass: the findings with their fixes, and the parsed module and
    positions those fixes refer to (`module` is None when the file was not parsed), for a caller
    that applies one fix at a time (the editor's quick fixes, through tfmigrate.api)."""
    return run_deep(_lint, data, path, codes, None, shims, imported_by, native)
