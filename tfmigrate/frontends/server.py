"""`tfmigrate server`: a Language Server (LSP over standard input and output, built on pygls;
`pip install 'tfmigrate[server]'`). For every open Python document, and every code cell of an
open notebook, it publishes the findings `tfmigrate check` would report, as the document is
typed (the editor's text, saved or not), and offers as code actions:

- each fix on offer (quick fix; an unsafe one is labelled so and never preferred),
- `# noqa: CODE` for the line,
- "fix all" (`source.fixAll.tfmigrate`: the safe fixes to a fixed point, as `tfmigrate fix`;
  editors can run it on save) and "fix all, including unsafe fixes" (a quick fix, never on save).

Each document takes the same configuration as on the command line: the nearest
`[tool.tfmigrate]` / tfmigrate.toml at or above its file, read again at every check, so an edit
to it counts at the next keystroke. A file that the configuration excludes gets no findings. It
goes through tfmigrate.api as the command line does, so a document also gets the cross-file facts
of its project's files (star imports of a module importing TensorFlow, the graph module importing
it; the document's unsaved text counts, the other files as on disk), `native`, and the room for
deeply nested code. It never imports TensorFlow. Positions are sent in the encoding the client and server agreed
(UTF-16 code units unless the client offers another).

The computations (findings, fixes, edits) need no pygls: `Linter` holds them; `serve()` wires
them to the protocol.
"""
from __future__ import annotations

import io
import json
import os
import re
import tokenize
from dataclasses import dataclass, field
from typing import Dict, List, Optional, Sequence, Tuple
from urllib.parse import unquote, urlparse

from tfmigrate import __version__
from tfmigrate.findings import Finding

NAME = "tfmigrate"
FIX_ALL_KIND = "source.fixAll.tfmigrate"
_BREAK = re.compile(r"\r\n|\r|\n")


# --- positions -------------------------------------------------------------------------------------

def line_starts(text: str) -> List[int]:
    """Offsets where each line starts, lines as LSP (and Python) count them: \\n, \\r\\n, \\r."""
    return [0] + [m.end() for m in _BREAK.finditer(text)]


def _units(text: str, encoding: str) -> int:
    if encoding == "utf-32":
        return len(text)
    if encoding == "utf-8":
        return len(text.encode("utf-8", "surrogatepass"))
    return len(text.encode("utf-16-le", "surrogatepass")) // 2


def to_position(text: str, starts: List[int], offset: int, encoding: str) -> dict:
    """An offset into `text` (code points) as an LSP position in the negotiated encoding."""
    import bisect

    line = max(bisect.bisect_right(starts, offset) - 1, 0)
    return {"line": line, "character": _units(text[starts[line]:offset], encoding)}


def from_position(text: str, starts: List[int], position: dict, encoding: str) -> int:
    """An LSP position as an offset into `text` (code points)."""
    line = min(max(position["line"], 0), len(starts) - 1)
    start = starts[line]
    end = starts[line + 1] if line + 1 < len(starts) else len(text)
    want = position["character"]
    offset = start
    while offset < end and _units(text[start:offset + 1], encoding) <= want:
        offset += 1
    return offset


def _offset(starts: List[int], text: str, line: int, column: int) -> int:
    """A finding's 1-based line and column (code points) as an offset into `text`."""
    if line < 1:
        return 0
    if line > len(starts):
        return len(text)
    return min(starts[line - 1] + max(column - 1, 0), len(text))


def minimal_edit(old: str, new: str) -> Tuple[int, int, str]:
    """(start, end, replacement): the one span of `old` to replace to get `new`."""
    prefix = 0
    limit = min(len(old), len(new))
    while prefix < limit and old[prefix] == new[prefix]:
        prefix += 1
    suffix = 0
    while suffix < limit - prefix and old[len(old) - 1 - suffix] == new[len(new) - 1 - suffix]:
        suffix += 1
    return prefix, len(old) - suffix, new[prefix:len(new) - suffix]


# --- documents -------------------------------------------------------------------------------------

def uri_to_path(uri: str) -> Optional[str]:
    parsed = urlparse(uri)
    if parsed.scheme != "file":
        return None
    path = unquote(parsed.path)
    if os.name == "nt" and re.match(r"^/[A-Za-z]:", path):
        path = path[1:]
    return path


def _encode(text: str) -> bytes:
    """The editor's text as the bytes the file would hold: in the encoding it declares, if any."""
    head = "".join(text.splitlines(True)[:2]).encode("utf-8", "surrogateescape")
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(head).readline)
        return text.encode("utf-8" if encoding == "utf-8-sig" else encoding)
    except (SyntaxError, LookupError, UnicodeEncodeError):
        return text.encode("utf-8", "surrogateescape")


def _decode(data: bytes, like: str) -> str:
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
        return data.decode("utf-8" if encoding == "utf-8-sig" else encoding)
    except (SyntaxError, LookupError, UnicodeDecodeError):
        return data.decode("utf-8", "surrogateescape")


@dataclass
class Action:
    title: str
    kind: str  # "quickfix" | FIX_ALL_KIND
    edits: Dict[str, List[Tuple[int, int, str]]]  # uri -> (start, end, text) in that document's text
    finding: Optional[Finding] = None  # the finding it fixes or silences
    preferred: bool = False


@dataclass
class Checked:
    """One document (or notebook) checked: its findings, and the actions on offer, built when
    the editor asks (a fix is applied and parsed only then, not at every keystroke)."""

    findings: Dict[str, List[Finding]] = field(default_factory=dict)  # uri -> findings (lines in that text)
    texts: Dict[str, str] = field(default_factory=dict)  # uri -> the text the findings are about
    error: Optional[str] = None  # a configuration error, shown once
    linted: object = field(default=None, repr=False)  # api.Linted: what applying one fix needs
    fix_all_source: Optional[object] = field(default=None, repr=False)  # unsafe -> {uri: new text} or None
    _memo: dict = field(default_factory=dict, repr=False)

    def actions(self, uri: str, finding: Finding) -> List[Action]:
        """The quick fixes for one finding: its fix, if any, and a noqa comment for its line."""
        key = (uri, id(finding))
        if key not in self._memo:
            self._memo[key] = self._build(uri, finding)
        return self._memo[key]

    def _build(self, uri: str, finding: Finding) -> List[Action]:
        from tfmigrate import api
        from tfmigrate.frontends import addnoqa

        text = self.texts[uri]
        out = []
        new_text = api.fix_one(self.linted, finding) if self.linted is not None else None
        if new_text is not None:  # a fix that cannot be applied or would not parse is not offered
            safe = finding.fix.applicability == "safe"
            label = "" if safe else " (unsafe: may change behaviour)"
            out.append(Action(f"tfmigrate {finding.rule}: {finding.fix.description}{label}", "quickfix",
                              {uri: [minimal_edit(text, new_text)]}, finding, safe))
        if finding.rule not in addnoqa.UNSILENCEABLE:
            insertions, _ = addnoqa.plan(text, [finding])
            starts = line_starts(text)
            for line, (column, insert) in insertions.items():
                at = starts[line - 1] + column
                out.append(Action(f"tfmigrate {finding.rule}: silence on this line (# noqa: {finding.rule})",
                                  "quickfix", {uri: [(at, at, insert)]}, finding))
        return out

    def fix_all(self, unsafe: bool) -> Optional[Action]:
        """Every safe fix (or every fix) to a fixed point, as `tfmigrate fix` would write it."""
        key = ("all", unsafe)
        if key in self._memo:
            return self._memo[key]
        action = None
        everything = [f for found in self.findings.values() for f in found]
        fixable = [f for f in everything if f.fix is not None and (unsafe or f.fix.applicability == "safe")]
        needed = fixable and not (unsafe and all(f.fix.applicability == "safe" for f in fixable))
        if needed and self.fix_all_source is not None:
            new = self.fix_all_source(unsafe)
            edits = {uri: [minimal_edit(self.texts[uri], text)] for uri, text in (new or {}).items()
                     if text != self.texts[uri]}
            if edits:
                title = "tfmigrate: fix all, including unsafe fixes" if unsafe else "tfmigrate: fix all (safe fixes)"
                action = Action(title, "quickfix" if unsafe else FIX_ALL_KIND, edits)
        self._memo[key] = action
        return action


class Linter:
    """Findings and fixes for a document's text, with the configuration its path takes and the
    cross-file facts of its project's files (tfmigrate.api.Workspace: the files `tfmigrate check`
    visits from the folder of the document's configuration, or from its own folder without one)."""

    def __init__(self):
        self.workspaces: Dict[str, object] = {}  # project folder -> api.Workspace

    def forget(self) -> None:
        """Files changed on disk: read the projects' files again at the next check."""
        for workspace in self.workspaces.values():
            workspace.forget()

    def settings(self, path: Optional[str]):
        """(settings, anchor path) or raises ConfigError; None when the file is excluded."""
        from tfmigrate.workspace.config import resolve

        anchor = path or os.path.join(os.getcwd(), "untitled.py")
        settings = resolve([anchor]).for_path(anchor)
        if path is not None and settings.excluded(path):
            return None
        return settings, anchor

    def job(self, path: Optional[str], data: bytes):
        """The document's api.Job (ConfigError for a bad configuration); None when excluded."""
        from tfmigrate import api

        chosen = self.settings(path)
        if chosen is None:
            return None
        settings, anchor = chosen
        # Without a configuration file, the document's folder (not the server's whole folder).
        root = str(settings.root) if settings.source is not None else os.path.dirname(anchor)
        if root not in self.workspaces:
            self.workspaces[root] = api.Workspace([root])
        return self.workspaces[root].job(anchor, data, settings)

    def check_python(self, uri: str, text: str) -> Checked:
        from tfmigrate import api
        from tfmigrate.workspace.config import ConfigError

        data = _encode(text)
        try:
            job = self.job(uri_to_path(uri), data)
        except ConfigError as error:
            return Checked({uri: []}, {uri: text}, error=str(error))
        if job is None:
            return Checked({uri: []}, {uri: text})
        linted = api.lint(job)

        def fix_all(unsafe: bool):
            outcome = api.fix(job, unsafe)
            return {uri: _decode(outcome.output, text)} if outcome.changed else None

        return Checked({uri: linted.findings}, {uri: text}, linted=linted, fix_all_source=fix_all)

    def check_notebook(self, cells: Sequence[Tuple[str, str]], notebook_uri: str) -> Checked:
        """`cells`: (uri, text) of the notebook's code cells, in order. Findings are per cell (all
        cells form one module, as on the command line); the fix-all actions edit every cell
        they change; a single finding's fix is not offered in a notebook (its noqa is)."""
        from dataclasses import replace

        from tfmigrate import api
        from tfmigrate.workspace.config import ConfigError

        checked = Checked({uri: [] for uri, _ in cells}, dict(cells))
        try:
            job = self.job(uri_to_path(notebook_uri), _notebook_json(cells))
        except ConfigError as error:
            checked.error = str(error)
            return checked
        if job is None or not cells:
            return checked
        for finding in api.check(job).findings:
            if finding.cell is not None and 1 <= finding.cell <= len(cells):
                checked.findings[cells[finding.cell - 1][0]].append(replace(finding, cell=None, file_range=None))

        def fix_all(unsafe: bool):
            outcome = api.fix(job, unsafe)
            if not outcome.changed:
                return None
            sources = [_cell_text(c) for c in json.loads(outcome.output.decode("utf-8"))["cells"]]
            return {uri: new for (uri, _), new in zip(cells, sources)}

        checked.fix_all_source = fix_all
        return checked


def _notebook_json(cells: Sequence[Tuple[str, str]]) -> bytes:
    notebook = {
        "cells": [{"cell_type": "code", "execution_count": None, "metadata": {}, "outputs": [], "source": text}
                  for _, text in cells],
        "metadata": {}, "nbformat": 4, "nbformat_minor": 5,
    }
    return json.dumps(notebook).encode("utf-8")


def _cell_text(cell: dict) -> str:
    source = cell.get("source", "")
    return "".join(source) if isinstance(source, list) else source


# --- the protocol --------------------------------------------------------------------------------

def serve() -> None:  # pragma: no cover - run as a process by the tests
    from lsprotocol import types
    from pygls.lsp.server import LanguageServer

    linter = Linter()
    server = LanguageServer(
        NAME, __version__,
        text_document_sync_kind=types.TextDocumentSyncKind.Incremental,
        notebook_document_sync=types.NotebookDocumentSyncOptions(
            notebook_selector=[types.NotebookDocumentFilterWithCells(
                cells=[types.NotebookCellLanguage(language="python")], notebook="*")],
        ),
    )
    checked: Dict[str, Checked] = {}  # document or notebook uri -> its last check
    shown_errors: set = set()

    def encoding() -> str:
        kind = server.workspace.position_encoding
        value = getattr(kind, "value", kind) or "utf-16"
        return str(value)

    def to_range(text: str, finding: Finding) -> "types.Range":
        starts = line_starts(text)
        enc = encoding()
        start = _offset(starts, text, finding.line, finding.column)
        end = max(_offset(starts, text, finding.end_line, finding.end_column), start)
        a, b = to_position(text, starts, start, enc), to_position(text, starts, end, enc)
        return types.Range(types.Position(**a), types.Position(**b))

    def diagnostic(text: str, finding: Finding) -> "types.Diagnostic":
        severity = types.DiagnosticSeverity.Error if finding.severity == "error" else types.DiagnosticSeverity.Warning
        fix = None if finding.fix is None else {"applicability": finding.fix.applicability,
                                                 "description": finding.fix.description}
        message = finding.message + (" (migration debt: runs through tf.compat.v1)" if finding.kind == "debt" else "")
        return types.Diagnostic(
            range=to_range(text, finding), message=message, severity=severity, code=finding.rule,
            source=NAME, data={"name": finding.name, "fix": fix, "kind": finding.kind},
        )

    def publish(result: Checked, versions: Dict[str, Optional[int]]) -> None:
        if result.error and result.error not in shown_errors:
            shown_errors.add(result.error)
            server.window_show_message(types.ShowMessageParams(types.MessageType.Error, f"tfmigrate: {result.error}"))
        for uri, found in result.findings.items():
            text = result.texts[uri]
            server.text_document_publish_diagnostics(types.PublishDiagnosticsParams(
                uri=uri, diagnostics=[diagnostic(text, f) for f in found], version=versions.get(uri),
            ))

    def check_document(uri: str) -> None:
        if uri.endswith(".ipynb") or uri_to_path(uri) is None and not uri.startswith("untitled:"):
            return
        document = server.workspace.get_text_document(uri)
        if getattr(document, "language_id", "python") not in (None, "python") and not uri.endswith(".py"):
            return
        result = linter.check_python(uri, document.source)
        checked[uri] = result
        publish(result, {uri: document.version})

    def check_notebook(uri: str) -> None:
        notebook = server.workspace.get_notebook_document(notebook_uri=uri)
        if notebook is None:
            return
        cells, versions = [], {}
        for cell in notebook.cells:
            if cell.kind != types.NotebookCellKind.Code:
                continue
            document = server.workspace.get_text_document(cell.document)
            if getattr(document, "language_id", "python") not in (None, "python"):
                continue
            cells.append((cell.document, document.source))
            versions[cell.document] = document.version
        result = linter.check_notebook(cells, uri)
        for cell_uri, _ in cells:
            checked[cell_uri] = result
        checked[uri] = result
        publish(result, versions)

    def forget(uris: Sequence[str]) -> None:
        for uri in uris:
            checked.pop(uri, None)
            server.text_document_publish_diagnostics(types.PublishDiagnosticsParams(uri=uri, diagnostics=[]))

    @server.feature(types.TEXT_DOCUMENT_DID_OPEN)
    def did_open(params: types.DidOpenTextDocumentParams) -> None:
        if params.text_document.language_id == "python" or params.text_document.uri.endswith(".py"):
            check_document(params.text_document.uri)

    @server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
    def did_change(params: types.DidChangeTextDocumentParams) -> None:
        uri = params.text_document.uri
        if uri in checked and checked[uri].texts.keys() == {uri}:
            check_document(uri)

    @server.feature(types.TEXT_DOCUMENT_DID_SAVE)
    def did_save(params: types.DidSaveTextDocumentParams) -> None:
        linter.forget()  # the other files' facts may change with this one's bytes on disk
        if params.text_document.uri in checked:
            check_document(params.text_document.uri)

    @server.feature(types.TEXT_DOCUMENT_DID_CLOSE)
    def did_close(params: types.DidCloseTextDocumentParams) -> None:
        if params.text_document.uri in checked:
            forget([params.text_document.uri])

    @server.feature(types.NOTEBOOK_DOCUMENT_DID_OPEN)
    def notebook_open(params: types.DidOpenNotebookDocumentParams) -> None:
        check_notebook(params.notebook_document.uri)

    @server.feature(types.NOTEBOOK_DOCUMENT_DID_CHANGE)
    def notebook_change(params: types.DidChangeNotebookDocumentParams) -> None:
        check_notebook(params.notebook_document.uri)

    @server.feature(types.NOTEBOOK_DOCUMENT_DID_SAVE)
    def notebook_save(params: types.DidSaveNotebookDocumentParams) -> None:
        linter.forget()
        check_notebook(params.notebook_document.uri)

    @server.feature(types.NOTEBOOK_DOCUMENT_DID_CLOSE)
    def notebook_close(params: types.DidCloseNotebookDocumentParams) -> None:
        result = checked.pop(params.notebook_document.uri, None)
        forget([c.uri for c in params.cell_text_documents] + (list(result.texts) if result else []))

    @server.feature(types.WORKSPACE_DID_CHANGE_WATCHED_FILES)
    def files_changed(params: types.DidChangeWatchedFilesParams) -> None:
        shown_errors.clear()  # a configuration may have changed: check every open document again
        linter.forget()
        for uri, result in list(checked.items()):
            if result.texts.keys() == {uri}:
                check_document(uri)

    @server.feature(
        types.TEXT_DOCUMENT_CODE_ACTION,
        types.CodeActionOptions(code_action_kinds=[types.CodeActionKind.QuickFix, FIX_ALL_KIND],
                                resolve_provider=False),
    )
    def code_action(params: types.CodeActionParams):
        uri = params.text_document.uri
        result = checked.get(uri)
        if result is None or uri not in result.texts:
            return []
        only = [str(getattr(k, "value", k)) for k in (params.context.only or [])]
        text = result.texts[uri]
        document = server.workspace.get_text_document(uri)
        if document.source != text:  # stale: the client asks about a newer text than checked
            return []
        enc = encoding()
        starts = line_starts(text)
        first = from_position(text, starts, {"line": params.range.start.line, "character": params.range.start.character}, enc)
        last = from_position(text, starts, {"line": params.range.end.line, "character": params.range.end.character}, enc)
        wanted = lambda kind: not only or any(kind == k or kind.startswith(k + ".") for k in only)  # noqa: E731
        actions: List[Action] = []
        if wanted("quickfix"):
            for finding in result.findings.get(uri, []):
                lo = _offset(starts, text, finding.line, 1)  # the request's range meets the finding's lines
                hi = _offset(starts, text, finding.end_line + 1, 1)
                if lo <= last and first <= hi:
                    actions.extend(result.actions(uri, finding))
        for unsafe in (False, True):
            action = result.fix_all(unsafe) if wanted(FIX_ALL_KIND if not unsafe else "quickfix") else None
            if action is not None:
                actions.append(action)
        out = []
        for action in actions:
            changes = {}
            for target, edits in action.edits.items():
                target_text = result.texts[target]
                target_starts = line_starts(target_text)
                changes[target] = [
                    types.TextEdit(
                        range=types.Range(
                            types.Position(**to_position(target_text, target_starts, a, enc)),
                            types.Position(**to_position(target_text, target_starts, b, enc)),
                        ),
                        new_text=new,
                    )
                    for a, b, new in edits
                ]
            diagnostics = [diagnostic(text, action.finding)] if action.finding is not None else None
            out.append(types.CodeAction(
                title=action.title, kind=action.kind, edit=types.WorkspaceEdit(changes=changes),
                diagnostics=diagnostics, is_preferred=action.preferred or None,
            ))
        return out

    server.start_io()


def main() -> None:  # pragma: no cover
    serve()
