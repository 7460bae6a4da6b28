"""TFM201: TF1 sessions: `tf.Session` and friends (API table), and running a graph through one:
`sess.run(...)`, `feed_dict=`, `tensor.eval()` / `op.run()` where a session is evident."""
import re
from functools import cached_property
from typing import Set

import libcst as cst

from tfmigrate.fixers.api_rename import generic_fix
from tfmigrate.rules._removed_api import RemovedApiRule, fallback_message
from tfmigrate.facts.program import ProgramMode
from tfmigrate.facts.source_search import SourceSearch

_CONFIG = ("ConfigProto", "GPUOptions", "RunOptions", "RunMetadata", "GraphOptions", "OptimizerOptions")
# Receivers that are sessions by name: `sess.run(...)`, `self._session.run(...)`.
_SESSION_NAMES = frozenset({"sess", "session", "_sess", "_session", "tf_sess", "tf_session"})
# `x = tf.Session(...)`, `with tf.compat.v1.Session(...) as sess`, `x = tf.train.MonitoredTrainingSession(`
_BOUND = re.compile(r"(\w+)\s*=\s*[\w.]*(?:Session|MonitoredTrainingSession)\(|Session\([^()]*\)\s+as\s+(\w+)")
_EVIDENT = re.compile(r"\b(?:Session|InteractiveSession|MonitoredTrainingSession|get_default_session|test_session|cached_session)\b")


class Session(RemovedApiRule):
    code = "TFM201"
    reads = (ProgramMode, SourceSearch)
    CLAIMS = (
        "Session",
        "InteractiveSession",
        "get_default_session",
        "train.MonitoredSession",
        "train.MonitoredTrainingSession",
        "train.SingularMonitoredSession",
        *_CONFIG,
    )

    def describe(self, ref):
        fix = generic_fix(ref, self.ctx)
        if ref.path in _CONFIG:
            what = "configures a TF1 session"
            todo = "TF2 configures devices with `tf.config` (e.g. `tf.config.experimental.set_memory_growth`)"
        elif ref.path == "get_default_session":
            what = "returns the TF1 session that runs graphs"
            todo = "TF2 runs eagerly: call the computation directly and use its result"
        else:
            what = "runs TF1 graphs"
            todo = "TF2 runs eagerly: call the computation directly (wrapped in `tf.function` for graph speed) and use its result"
        return fallback_message(ref, what, todo, fix), fix

    # sess.run / t.eval() / op.run() --------------------------------------------------------
    @cached_property
    def _session_vars(self) -> Set[str]:
        names = set(_SESSION_NAMES)
        for match in _BOUND.finditer(self.ctx.source):
            names.add(match.group(1) or match.group(2))
        return names

    @cached_property
    def _tensor_vars(self) -> Set[str]:
        """Names assigned straight from a TensorFlow call or `.minimize(...)`: tensors and ops."""
        aliases = "|".join(re.escape(a) for a in self.ctx.names.aliases) or "tf"
        pattern = re.compile(rf"^[ \t]*(\w+)[ \t]*=[ \t]*(?:(?:{aliases})\.[\w.]+\(|.*\.minimize\()", re.MULTILINE)
        return {m.group(1) for m in pattern.finditer(self.ctx.source)}

    def _is_session(self, receiver) -> bool:
        if isinstance(receiver, cst.Name):
            return receiver.value in self._session_vars
        if isinstance(receiver, cst.Attribute):
            return receiver.attr.value in _SESSION_NAMES
        return False

    def _is_tensor(self, receiver) -> bool:
        if isinstance(receiver, cst.Name):
            return receiver.value in self._tensor_vars
        if isinstance(receiver, cst.Call):
            return self.ctx.names.api(receiver.func) is not None
        return False

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        if not isinstance(func, cst.Attribute) or func.attr.value not in ("run", "eval", "partial_run"):
            return
        keywords = {a.keyword.value for a in node.args if a.keyword is not None}
        positional = [a for a in node.args if a.keyword is None]
        method, receiver = func.attr.value, func.value
        if method in ("run", "partial_run") and (self._is_session(receiver) or "feed_dict" in keywords):
            feed = ", with the `feed_dict` values as its arguments" if "feed_dict" in keywords else ""
            self.report(
                func.attr,
                f"`{_short(self.ctx, func)}(...)` runs a TF1 graph in a session, which TensorFlow 2 does not build. "
                f"Call the computation as a function and use its result (wrap it in `tf.function` for graph speed){feed}; "
                "there is no automatic fix.",
                debt=self.ctx.fact(ProgramMode).on_compat_route,
            )
            return
        if positional or not keywords <= {"feed_dict", "session"}:
            return
        if not self.ctx.fact(SourceSearch).found(_EVIDENT) or not (keywords or self._is_tensor(receiver)):
            return
        if method == "eval":
            todo = "In TF2 an eager tensor already holds its value: use `.numpy()` (or return it from a `tf.function`)"
        else:
            todo = "In TF2 operations run when called: call the function that does the work instead"
        self.report(
            func.attr,
            f"`{_short(self.ctx, func)}()` runs a TF1 graph element in the default session, which TensorFlow 2 does not have. "
            f"{todo}; there is no automatic fix.",
            debt=self.ctx.fact(ProgramMode).on_compat_route,
        )


def _short(ctx, func: cst.Attribute) -> str:
    """`sess.run`, `self.sess.run`; `.run` when the receiver is long or spans lines."""
    code = ctx.module.code_for_node(func)
    return code if len(code) <= 40 and "\n" not in code else f".{func.attr.value}"
