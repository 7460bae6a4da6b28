"""TFM103: `get_variable` creates the same name twice in one variable scope without reuse.

Graph mode raises `ValueError: Variable w already exists`; eager mode silently makes a second
variable with the same name, and `reuse=AUTO_REUSE` is ignored there (FACTS.md). Precision comes
first: only literal names under literal (or the very same) scopes count, only creations that run
together in one execution of a function or of the module, and anything that may share the
variable (any `reuse=` other than None/False, `reuse_variables()`, a new graph, a custom scope,
a caller doing one of these, a `try`) silences the rule. One walk records creations and calls;
`leave_Module` expands each call of a local helper with what the helper always creates
(memoised, so linear in the file) and compares within each function.
"""
from __future__ import annotations

import builtins
from dataclasses import dataclass, field
from typing import Dict, List, Optional, Tuple

import libcst as cst

from tfmigrate.fixers.reuse import auto_reuse, share_in_scope
from tfmigrate.facts.names import dotted
from tfmigrate.rules.base import Rule
from tfmigrate.facts.graph_words import GRAPH_MODE
from tfmigrate.facts.source_search import SourceSearch

_HARMLESS_DECORATORS = ("staticmethod", "classmethod", "add_arg_scope")
_BUILTINS = frozenset(dir(builtins))
_SUMMARY_CAP = 64


@dataclass(frozen=True)
class _Where:
    """Where a call runs, relative to its frame (function, class body or module)."""

    frame: cst.CSTNode
    segs: tuple  # ("lit", name) | ("opaque", id) | ("graph", id), outermost first
    reuse: bool  # under a variable_scope that may reuse
    dropped: bool  # in a lambda, a try body, assertRaises: not worth a claim
    branch: tuple  # (id(if/try/match/...), arm) pairs
    loops: tuple  # (loop node, len(segs), len(branch)) at loop entry
    scope_call: Optional[cst.Call]  # innermost variable_scope(...) in the frame


@dataclass
class _Event:
    node: cst.Call
    seq: int
    where: _Where
    name: str = ""  # literal variable name, for get_variable
    key: tuple = ()  # ("name", f) / ("self", m), for calls
    callee: Optional["_Frame"] = None


@dataclass
class _Frame:
    node: cst.CSTNode
    owner: Optional["_Frame"]
    creates: List[_Event] = field(default_factory=list)
    calls: List[_Event] = field(default_factory=list)
    terms: List[Tuple[int, tuple]] = field(default_factory=list)  # (seq, branch)
    returns: List[int] = field(default_factory=list)
    reuse_seqs: List[int] = field(default_factory=list)
    reset_seqs: List[int] = field(default_factory=list)
    defs: Dict[str, List["_Frame"]] = field(default_factory=dict)
    params: frozenset = frozenset()
    helper: bool = False  # may be summarised: plain def, no odd decorator, not a generator
    protected: bool = False


@dataclass
class _Expanded:
    """A creation as seen from one frame: direct, or through a call of a local helper."""

    segs: tuple
    name: str
    create: _Event
    site: _Event  # the event in this frame: the creation itself or the helper call
    via: Optional[str] = None  # helper name when through a call


def _literal(node) -> Optional[str]:
    if isinstance(node, (cst.SimpleString, cst.ConcatenatedString)):
        value = node.evaluated_value
        return value if isinstance(value, str) else None
    return None


def _last_name(func) -> str:
    if isinstance(func, cst.Attribute):
        return func.attr.value
    return func.value if isinstance(func, cst.Name) else ""


def _arg(call: cst.Call, index: int, keyword: str):
    positional = [a for a in call.args if a.keyword is None]
    for a in call.args:
        if a.keyword is not None and a.keyword.value == keyword:
            return a.value
    return positional[index].value if index < len(positional) else None


def _single_iteration(loop) -> bool:
    it = getattr(loop, "iter", None)
    if isinstance(it, (cst.List, cst.Tuple, cst.Set)):
        return len(it.elements) <= 1
    if isinstance(it, cst.Call) and dotted(it.func) == "range" and len(it.args) == 1:
        value = it.args[0].value
        return isinstance(value, cst.Integer) and int(value.value) <= 1
    return False


class DuplicateGetVariable(Rule):
    code = "TFM103"
    reads = (SourceSearch,)

    @classmethod
    def applies_to(cls, ctx) -> bool:
        return ctx.names.has_tensorflow and "get_variable" in ctx.source

    def __init__(self, ctx):
        super().__init__(ctx)
        self.frames: Dict[int, _Frame] = {}
        self.seq = 0
        self.tainted = set()  # ids of loops that may not repeat their body as written
        self.reuse_loops = set()  # ids of loops containing reuse_variables()
        self.rebound = set()  # names assigned somewhere: not a reliable helper
        self.rebound_attrs = set()
        self.methods: Dict[str, List[_Frame]] = {}

    # ---- the walk -------------------------------------------------------------------------

    def _next(self) -> int:
        self.seq += 1
        return self.seq

    def _scope_item(self, item: cst.WithItem):
        """(kind, segments, call) for one `with` item; kind in lit/opaque/graph/reuse/drop/None."""
        call = item.item
        if not isinstance(call, cst.Call):
            return None, (), None
        last = _last_name(call.func)
        if last == "as_default" or (
            last in ("test_session", "session", "cached_session")
            and any(a.keyword is not None and a.keyword.value == "graph" for a in call.args)
        ):
            return "graph", (("graph", id(call)),), None
        if last.startswith("assertRaises") or last == "raises":
            return "drop", (), None
        if last != "variable_scope":
            if "variable_scope" in last or "var_scope" in last or "reuse" in last:
                return "reuse", (), None  # a wrapper we cannot see into (e.g. Sonnet's)
            return None, (), None
        positional = [a for a in call.args if a.keyword is None]
        keywords = {a.keyword.value for a in call.args if a.keyword is not None}
        if any(a.star for a in call.args) or len(positional) > 3 or "custom_getter" in keywords:
            return "reuse", (), None
        reuse = _arg(call, 99, "reuse")
        if reuse is not None and not (
            isinstance(reuse, cst.Name) and reuse.value in ("None", "False")
        ):
            return "reuse", (), call
        name = _literal(_arg(call, 0, "name_or_scope"))
        if name:
            return "lit", tuple(("lit", p) for p in name.split("/") if p), call
        return "opaque", (("opaque", id(call)),), call

    def _where(self, node) -> _Where:
        stack = self.ctx.stack
        frame, segs, reuse, dropped, branch, loops, scope_call = None, [], False, False, [], [], None
        last = len(stack) - 1
        for i, anc in enumerate(stack):
            child = stack[i + 1] if i < last else node
            kind = type(anc)
            if kind is cst.Module or (
                kind in (cst.FunctionDef, cst.ClassDef) and child is anc.body
            ):
                frame, segs, reuse, dropped, branch, loops, scope_call = (
                    anc, [], False, False, [], [], None
                )
            elif kind is cst.With and child is anc.body:
                for item in anc.items:
                    what, new, call = self._scope_item(item)
                    if what == "reuse":
                        reuse = True
                    elif what == "drop":
                        dropped = True
                    segs.extend(new)
                    if what in ("lit", "opaque"):
                        scope_call = call
            elif kind in (cst.If, cst.IfExp):
                if child is anc.body:
                    branch.append((id(anc), 0))
                elif child is anc.orelse:
                    branch.append((id(anc), 1))
            elif kind in (cst.For, cst.While):
                if child is anc.body:
                    loops.append((anc, len(segs), len(branch)))
                elif child is anc.orelse:
                    branch.append((id(anc), 1))
            elif kind in (cst.ListComp, cst.SetComp, cst.GeneratorExp, cst.DictComp):
                if any(child is getattr(anc, a, None) for a in ("elt", "key", "value")):
                    loops.append((anc, len(segs), len(branch)))
            elif kind in (cst.Try, cst.TryStar):
                if child is anc.body:
                    dropped = dropped or bool(anc.handlers)
                elif child is anc.orelse or isinstance(
                    child, (cst.ExceptHandler, cst.ExceptStarHandler)
                ):
                    branch.append((id(anc), id(child)))
            elif kind is cst.Match and isinstance(child, cst.MatchCase):
                branch.append((id(anc), id(child)))
            elif kind is cst.BooleanOperation and child is anc.right:
                branch.append((id(anc), 1))
            elif kind is cst.Lambda and child is anc.body:
                dropped = True
        return _Where(frame, tuple(segs), reuse, dropped, tuple(branch), tuple(loops), scope_call)

    def _frame(self, where: _Where) -> _Frame:
        return self.frames[id(where.frame)]

    def visit_Module(self, node: cst.Module) -> None:
        self.frames[id(node)] = _Frame(node, None)

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        self.frames[id(node)] = _Frame(node, self._frame(self._where(node)))

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        owner = self._frame(self._where(node))
        params = node.params
        names = [p.name.value for p in (*params.posonly_params, *params.params, *params.kwonly_params)]
        for star in (params.star_arg, params.star_kwarg):
            if isinstance(star, cst.Param):
                names.append(star.name.value)
        decorators = [dotted(getattr(d.decorator, "func", d.decorator)) or "?" for d in node.decorators]
        frame = _Frame(node, owner, params=frozenset(names))
        frame.helper = node.asynchronous is None and all(
            d.split(".")[-1] in _HARMLESS_DECORATORS for d in decorators
        )
        frame.protected = any("reuse" in d.lower() or "template" in d.lower() for d in decorators)
        self.frames[id(node)] = frame
        owner.defs.setdefault(node.name.value, []).append(frame)
        if isinstance(owner.node, cst.ClassDef):
            self.methods.setdefault(node.name.value, []).append(frame)

    def _terminator(self, node, counts_in_loops: bool) -> None:
        where = self._where(node)
        seq = self._next()
        frame = self._frame(where)
        frame.terms.append((seq, where.branch))
        if isinstance(node, cst.Return):
            frame.returns.append(seq)
        if counts_in_loops:
            self.tainted.update(id(loop) for loop, _, _ in where.loops)

    def leave_Return(self, node) -> None:  # after its value, which may call a helper
        self._terminator(node, True)

    def visit_Break(self, node) -> None:
        self._terminator(node, True)

    def visit_Continue(self, node) -> None:
        self._terminator(node, True)

    def leave_Raise(self, node) -> None:
        self._terminator(node, False)

    def visit_Yield(self, node) -> None:
        self._frame(self._where(node)).helper = False

    def _barrier(self, node, kind: str) -> None:
        where = self._where(node)
        frame = self._frame(where)
        (frame.reuse_seqs if kind == "reuse" else frame.reset_seqs).append(self._next())
        loops = {id(loop) for loop, _, _ in where.loops}
        self.tainted.update(loops)
        if kind == "reuse":
            self.reuse_loops.update(loops)
        frame.helper = False

    def _bind(self, target) -> None:
        if isinstance(target, cst.Name):
            self.rebound.add(target.value)
        elif isinstance(target, (cst.Tuple, cst.List)):
            for element in target.elements:
                self._bind(element.value)
        elif isinstance(target, cst.StarredElement):
            self._bind(target.value)
        elif isinstance(target, cst.Attribute):
            self.rebound_attrs.add(target.attr.value)

    def visit_AssignTarget(self, node: cst.AssignTarget) -> None:
        self._bind(node.target)
        if isinstance(node.target, cst.Attribute) and node.target.attr.value == "_reuse":
            self._barrier(node, "reuse")

    def visit_AugAssign(self, node) -> None:
        self._bind(node.target)

    def visit_AnnAssign(self, node) -> None:
        self._bind(node.target)

    def visit_For(self, node) -> None:
        self._bind(node.target)

    def visit_CompFor(self, node) -> None:
        self._bind(node.target)

    def visit_AsName(self, node) -> None:
        self._bind(node.name)

    def visit_NamedExpr(self, node) -> None:
        self._bind(node.target)

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        last = _last_name(func)
        if last == "reuse_variables":
            self._barrier(node, "reuse")
        elif last == "reset_default_graph":
            self._barrier(node, "reset")
        elif last == "get_variable":
            api = self.ctx.names.api(func)
            if api is None or not (api == "get_variable" or api.endswith("variable_scope.get_variable")):
                return
            if any(a.star for a in node.args) or any(
                a.keyword is not None and a.keyword.value == "custom_getter" for a in node.args
            ):
                return
            name = _literal(_arg(node, 0, "name"))
            if name:
                where = self._where(node)
                self._frame(where).creates.append(_Event(node, self._next(), where, name=name))
        elif isinstance(func, cst.Name) and func.value not in _BUILTINS:
            where = self._where(node)
            self._frame(where).calls.append(_Event(node, self._next(), where, key=("name", last)))
        elif (
            isinstance(func, cst.Attribute)
            and isinstance(func.value, cst.Name)
            and func.value.value == "self"
        ):
            where = self._where(node)
            self._frame(where).calls.append(_Event(node, self._next(), where, key=("self", last)))

    # ---- the analysis ---------------------------------------------------------------------

    def leave_Module(self, node: cst.Module) -> None:
        frames = list(self.frames.values())
        for frame in frames:
            for call in frame.calls:
                call.callee = self._resolve(frame, call)
        self._barriers_through_calls(frames)
        self._protect(frames)
        self._summaries: Dict[int, list] = {}
        self._claimed: Dict[int, bool] = {}
        for frame in frames:
            if not frame.protected:
                self._check_frame(frame)
        self._release(frames)

    @staticmethod
    def _release(frames: List[_Frame]) -> None:
        """Break the frames' cycles (owner <-> defs, a call's callee back to its caller) once the
        analysis is done, so the tree they point into is freed by reference counting."""
        for frame in frames:
            frame.owner = None
            frame.defs = {}
            for call in frame.calls:
                call.callee = None

    def _resolve(self, frame: _Frame, call: _Event) -> Optional[_Frame]:
        """The local def a call runs, when that is certain enough to reason about."""
        kind, name = call.key
        if kind == "self":
            found = self.methods.get(name, [])
            if len(found) != 1 or name in self.rebound_attrs:
                return None
            klass = frame.owner
            while klass is not None and not isinstance(klass.node, cst.ClassDef):
                klass = klass.owner
            target = found[0].owner
            if klass is None or not (
                klass is target
                or any(_last_name(b.value) == target.node.name.value for b in klass.node.bases)
            ):
                return None
            return found[0]
        if name in self.rebound or name in self.ctx.names.bound:
            return None
        scope = frame
        while scope is not None:
            if name in scope.params:
                return None
            if not isinstance(scope.node, cst.ClassDef) or scope is frame:
                found = scope.defs.get(name)
                if found:
                    return found[0] if len(found) == 1 else None
            scope = scope.owner
        return None

    def _barriers_through_calls(self, frames: List[_Frame]) -> None:
        """A call of a local function that (transitively) reuses or resets is itself a barrier."""
        memo: Dict[int, Tuple[bool, bool]] = {}

        def kinds(frame: _Frame) -> Tuple[bool, bool]:
            if id(frame) not in memo:
                memo[id(frame)] = (bool(frame.reuse_seqs), bool(frame.reset_seqs))
                reuse, reset = memo[id(frame)]
                for call in frame.calls:
                    if call.callee is not None:
                        sub = kinds(call.callee)
                        reuse, reset = reuse or sub[0], reset or sub[1]
                memo[id(frame)] = (reuse, reset)
            return memo[id(frame)]

        for frame in frames:
            for call in frame.calls:
                if call.callee is None:
                    continue
                reuse, reset = kinds(call.callee)
                loops = {id(loop) for loop, _, _ in call.where.loops}
                if reuse:
                    frame.reuse_seqs.append(call.seq)
                    self.reuse_loops.update(loops)
                if reset:
                    frame.reset_seqs.append(call.seq)
                if reuse or reset:
                    self.tainted.update(loops)
                    frame.helper = False

    def _reused(self, frame: _Frame, event: _Event) -> bool:
        where = event.where
        return (
            where.reuse
            or any(seq < event.seq for seq in frame.reuse_seqs)
            or any(id(loop) in self.reuse_loops for loop, _, _ in where.loops)
        )

    def _protect(self, frames: List[_Frame]) -> None:
        """Functions a caller runs under reuse (or a reuse decorator), and all they call."""
        todo = [f for f in frames if f.protected]
        for frame in frames:
            for call in frame.calls:
                if call.callee is not None and self._reused(frame, call):
                    todo.append(call.callee)
        while todo:
            frame = todo.pop()
            frame.protected = True
            todo.extend(c.callee for c in frame.calls if c.callee is not None and not c.callee.protected)

    def _summary(self, frame: _Frame) -> list:
        """(relative literal segments, name, creation) a helper creates on every call."""
        key = id(frame)
        if key in self._summaries:
            return self._summaries[key]
        self._summaries[key] = []  # recursion guard
        out = []
        if frame.helper and isinstance(frame.node, cst.FunctionDef) and not frame.reset_seqs:
            first_return = min(frame.returns, default=None)

            def plain(event: _Event) -> bool:
                w = event.where
                return (
                    not (w.reuse or w.dropped or w.branch or w.loops)
                    and all(s[0] == "lit" for s in w.segs)
                    and (first_return is None or event.seq < first_return)
                )

            for event in frame.creates:
                if plain(event):
                    out.append((event.where.segs, event.name, event))
            for call in frame.calls:
                if call.callee is not None and plain(call):
                    for segs, name, create in self._summary(call.callee):
                        out.append((call.where.segs + segs, name, create))
        self._summaries[key] = out[:_SUMMARY_CAP]
        return self._summaries[key]

    def _expanded(self, frame: _Frame) -> List[_Expanded]:
        out = []
        for event in frame.creates:
            if not (event.where.dropped or self._reused(frame, event)):
                out.append(_Expanded(event.where.segs, event.name, event, event))
        for call in frame.calls:
            if call.callee is None or call.where.dropped or self._reused(frame, call):
                continue
            for segs, name, create in self._summary(call.callee):
                out.append(_Expanded(call.where.segs + segs, name, create, call, call.key[1]))
        return out

    def _together(self, frame: _Frame, a: _Expanded, b: _Expanded) -> bool:
        """Whether `a` (earlier) and `b` can both run in one execution of the frame."""
        first, second = a.site, b.site
        if first.seq == second.seq:
            return False
        k = min(len(first.where.branch), len(second.where.branch))
        if first.where.branch[:k] != second.where.branch[:k]:
            return False  # if/else arms, except handlers, ...
        if any(first.seq < s < second.seq for s in frame.reset_seqs):
            return False
        if len(first.where.branch) > k:  # `if c: a; return` then b
            arm = first.where.branch[k]
            for seq, branch in frame.terms:
                if first.seq < seq < second.seq and len(branch) > k and branch[k] == arm:
                    return False
        return True

    def _check_frame(self, frame: _Frame) -> None:
        groups: Dict[tuple, List[_Expanded]] = {}
        for item in sorted(self._expanded(frame), key=lambda e: e.site.seq):
            groups.setdefault((item.segs, item.name), []).append(item)
            self._check_loop(item)
        for items in groups.values():
            for j in range(1, min(len(items), _SUMMARY_CAP)):
                for i in range(j):
                    if self._together(frame, items[i], items[j]):
                        self._claim(items[j], "twice", items[i])
                        break

    def _check_loop(self, item: _Expanded) -> None:
        for loop, n_segs, n_branch in item.site.where.loops:
            if (
                id(loop) not in self.tainted
                and not _single_iteration(loop)
                and len(item.site.where.branch) == n_branch
                and all(s[0] == "lit" for s in item.segs[n_segs:])
            ):
                self._claim(item, "loop")
                return

    # ---- the report -----------------------------------------------------------------------

    def _claim(self, item: _Expanded, case: str, first: Optional[_Expanded] = None) -> None:
        create = item.create
        if id(create.node) in self._claimed:
            return
        self._claimed[id(create.node)] = True
        shown = []
        for seg in item.segs:
            shown = shown + [seg[1]] if seg[0] == "lit" else []
        full = "/".join(shown + [item.name])
        if case == "loop" and item.via:
            what = (f"`{item.via}()` is called in a loop in the same variable scope, so this "
                    f"`get_variable` creates `{full}` again on every iteration")
        elif case == "loop":
            what = f"`get_variable` creates `{full}` again on every iteration of this loop"
        elif item.via and first is not None and first.via == item.via:
            what = (f"`{item.via}()` is called twice in the same variable scope, so this "
                    f"`get_variable` creates `{full}` twice")
        elif item.via:
            what = (f"`{item.via}()` makes this `get_variable` create `{full}` a second time "
                    "in the same variable scope")
        else:
            what = f"`get_variable` creates `{full}` a second time in the same variable scope"
        what += (f" without reuse: graph mode raises `ValueError: Variable {full} already "
                 "exists`, eager mode silently makes a second variable.")
        todo, fix = self._remedy(item, case, first)
        self.report(create.node.func, f"{what} {todo}", fix)

    def _remedy(self, item: _Expanded, case: str, first: Optional[_Expanded]):
        create = item.create
        if not self.ctx.fact(SourceSearch).found(GRAPH_MODE):
            return ("Create the variable once (for example as an attribute or a Keras layer) "
                    "and use that object, or pass distinct names; `reuse` is ignored in eager "
                    "mode."), None
        scope = create.where.scope_call
        if scope is None:
            spelled = auto_reuse(cst.Call(cst.Name("variable_scope")), self.ctx.names).code
            return (f"Wrap it in `variable_scope(..., reuse={spelled})` to share one variable, "
                    "or pass distinct names."), None
        if first is not None and not first.via and not item.via and _shapes_differ(
            self.ctx.module, first.create.node, create.node
        ):
            return "Pass distinct names: the two shapes differ, so one variable cannot serve both.", None
        safe = case != "loop" and not (item.via and _uses_params(create))
        spelled, fix = share_in_scope(scope, self.ctx.names, safe)
        return (f"Add `reuse={spelled}` to the enclosing `variable_scope` to share one "
                "variable, or pass distinct names."), fix

def _shapes_differ(module: cst.Module, a: cst.Call, b: cst.Call) -> bool:
    sa, sb = _arg(a, 1, "shape"), _arg(b, 1, "shape")
    return sa is not None and sb is not None and module.code_for_node(sa) != module.code_for_node(sb)


def _uses_params(create: _Event) -> bool:
    """Whether the helper's get_variable depends on its parameters (shapes may then differ)."""
    frame = create.where.frame
    if not isinstance(frame, cst.FunctionDef):
        return False
    every = (*frame.params.posonly_params, *frame.params.params, *frame.params.kwonly_params)
    params = {p.name.value for p in every} - {"self", "cls"}
    stack = [a.value for a in create.node.args]
    while stack:
        node = stack.pop()
        if isinstance(node, cst.Name) and node.value in params:
            return True
        stack.extend(node.children)
    return False
