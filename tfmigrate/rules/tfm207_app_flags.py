"""TFM207: `tf.app.flags` / `tf.flags` / `tf.app.run` -> absl (`from absl import app, flags`).

TF1's modules were thin wrappers around absl-py, which TensorFlow 2.21 still installs. Two
measured differences make some rewrites unsafe: TF's FLAGS wrapper parsed `sys.argv` on first
access, absl's raises UnparsedFlagAccessError before `app.run` parsed it (so a `FLAGS` rewrite is
safe only in a module that calls `app.run`); `tf.app.run` tolerated undefined command-line flags,
absl's `app.run` rejects them (so `tf.app.run` -> `app.run` is unsafe). Reading a flag at import
time (at module level, in a class body, a default value, or a function called at module level)
happens before any `app.run`, so there `FLAGS` keeps TF's lazily parsing wrapper through
`tf.compat.v1` (a fallback); absl's `FLAGS` only where the module calls `app.run` and reads flags
only inside functions. Spelled through `tf.compat.v1` the wrappers still run under TF 2.21:
migration debt, not removed API.
"""
from __future__ import annotations

import re
import tokenize
from typing import Optional, Tuple

import libcst as cst

from tfmigrate.findings import AddImport, Fix, Replace
from tfmigrate.fixers.api_rename import spelling_like
from tfmigrate.facts.nodes import children
from tfmigrate.facts.references import TF1Ref
from tfmigrate.facts.tokens import CodeTokens
from tfmigrate.rules._removed_api import RemovedApiRule

FLAG_MODULES = ("app.flags", "flags")
# A module that reads the command line itself: absl's `app.run` would reject its flags.
_PARSES_ARGV = re.compile(r"\bargparse\b|\bparse_(?:known_)?args\s*\(|\bgetopt\b|\bsys\s*\.\s*argv\b")


def _tokens(ctx):
    """(name, previous token, next token) for NAME tokens `flags` and `app` outside strings
    and comments (the file's shared tokens, facts/tokens.py); None when the source cannot be
    tokenized."""
    toks = ctx.fact(CodeTokens).tokens
    if toks is None:
        return None
    found = []
    for i, (kind, string) in enumerate(toks):
        if kind == tokenize.NAME and string in ("flags", "app"):
            prev = toks[i - 1][1] if i else ""
            nxt = toks[i + 1][1] if i + 1 < len(toks) else ""
            found.append((string, prev, nxt))
    return found


_FLAGS_PATHS = ("app.flags.FLAGS", "flags.FLAGS")


def _reads_flags_at_import(ctx, flags_alias: bool) -> bool:
    """Whether the module reads a flag value when it is imported, before any `app.run` parsed
    the command line: `FLAGS.x` (FLAGS bound to TF's `flags.FLAGS`, or spelled in full) at
    module level, in a class body, a decorator or a default value, or in a module-level function
    that module-level code calls."""
    names = ctx.names
    module = ctx.module
    locals_ = set()
    for stmt in module.body:
        if isinstance(stmt, cst.SimpleStatementLine):
            for small in stmt.body:
                if isinstance(small, cst.Assign) and len(small.targets) == 1 and isinstance(small.targets[0].target, cst.Name):
                    value = small.value
                    if names.api(value) in _FLAGS_PATHS or (
                            flags_alias and isinstance(value, cst.Attribute) and isinstance(value.value, cst.Name)
                            and value.value.value == "flags" and value.attr.value == "FLAGS"):
                        locals_.add(small.targets[0].target.value)

    def is_read(node) -> bool:
        if not isinstance(node, cst.Attribute):
            return False
        base = node.value
        if isinstance(base, cst.Name) and base.value in locals_:
            return True
        return isinstance(base, cst.Attribute) and names.api(base) in _FLAGS_PATHS

    readers = set()  # module-level functions whose body reads a flag
    for stmt in module.body:
        if isinstance(stmt, cst.FunctionDef) and any(is_read(n) for n in _walk(stmt.body, deferred=True)):
            readers.add(stmt.name.value)
    for node in _walk(module, deferred=False):
        if is_read(node):
            return True
        if isinstance(node, cst.Call) and isinstance(node.func, cst.Name) and node.func.value in readers:
            return True
    return False


def _walk(node, deferred: bool):
    """Nodes under `node`; with deferred=False, not into function or lambda bodies (which run
    later), but into their decorators and default values (which run at definition)."""
    stack = [node]
    while stack:
        current = stack.pop()
        yield current
        if not deferred and isinstance(current, cst.FunctionDef):
            stack.extend(d.decorator for d in current.decorators)
            stack.extend(p.default for p in _params(current.params) if p.default is not None)
            continue
        if not deferred and isinstance(current, cst.Lambda):
            stack.extend(p.default for p in _params(current.params) if p.default is not None)
            continue
        stack.extend(children(current))  # formatting nodes hold no flag read nor call


def _params(params: cst.Parameters):
    out = list(params.posonly_params) + list(params.params) + list(params.kwonly_params)
    return out


class _Plan:
    """Per file: the local names the fix binds to absl's `flags` and `app` modules."""

    needs = (CodeTokens,)

    def __init__(self, ctx):
        self.ctx = ctx
        names = ctx.names
        module = ctx.module
        # module-level `flags = tf.app.flags` / `flags = tf.flags`
        self.alias_assigns = []
        self.has_main = False
        for stmt in module.body:
            if isinstance(stmt, cst.FunctionDef) and stmt.name.value == "main":
                self.has_main = True
            if isinstance(stmt, cst.SimpleStatementLine) and len(stmt.body) == 1 and isinstance(stmt.body[0], cst.Assign):
                assign = stmt.body[0]
                if (len(assign.targets) == 1 and isinstance(assign.targets[0].target, cst.Name)
                        and assign.targets[0].target.value == "flags" and names.api(assign.value) in FLAG_MODULES):
                    self.alias_assigns.append(assign)
        tokens = _tokens(ctx)
        self.calls_run = "app.run(" in ctx.source
        self.reads_at_import = _reads_flags_at_import(ctx, bool(self.alias_assigns))
        self.flags = self._choose("flags", tokens, len(self.alias_assigns))
        self.app = self._choose("app", tokens, 0)

    def _choose(self, name: str, tokens, assigns: int) -> Optional[str]:
        """`name` when binding it cannot clash with another use, else `absl_<name>`, else None."""
        bound = self.ctx.names.bound
        for candidate, allowed_assigns in ((name, assigns), (f"absl_{name}", 0)):
            if tokens is None:
                return None
            standalone = [(prev, nxt) for tok, prev, nxt in tokens if tok == candidate and prev != "."] if candidate == name else None
            if candidate != name:
                if f"absl_{name}" in self.ctx.source:
                    continue
                return candidate
            if candidate in bound and self.ctx.names.aliases.get(candidate) is None:
                # bound by an import that is not TensorFlow: only fine if it is absl's
                if f"from absl import {name}" in self.ctx.source:
                    return candidate
                continue
            if candidate in bound:
                continue  # e.g. `from tensorflow import flags`: handled on the import itself
            assigns_seen = sum(1 for prev, nxt in standalone if nxt == "=")
            others = [(p, n) for p, n in standalone if n not in ("=", ".")]
            if not standalone or (allowed_assigns and assigns_seen == allowed_assigns and not others):
                return candidate
        return None

    def import_for(self, module: str) -> str:
        local = self.flags if module == "flags" else self.app
        return f"from absl import {module}" if local == module else f"from absl import {module} as {local}"


class AppFlags(RemovedApiRule):
    code = "TFM207"
    reads = (_Plan, CodeTokens)
    CLAIMS = ("app", "flags")

    def _plan(self) -> _Plan:
        """The file's plan, made on the first reference this rule describes."""
        return self.ctx.fact(_Plan)

    def describe(self, ref: TF1Ref) -> Tuple[str, Optional[Fix]]:
        path = ref.path
        name = f"`tf.{path}`"
        if ref.spelled_v1:  # runs under TF 2.21: TF1 API left for absl, not removed API
            name = f"`tf.compat.v1.{path}`"
            gone = f"{name} runs under TensorFlow 2.21 only through `tf.compat.v1` (TF1's wrapper of absl)"
        else:
            gone = f"{name} was removed in TensorFlow 2 (it wrapped absl)"
        if path == "app.run" and not ref.spelled_v1 and not ref.routed:
            fix = self._compat_fix(ref, "TF1's, which ignores command-line flags the program does not define")
            return (f"{gone}. Absl's `app.run(main)` rejects command-line flags this program does not "
                    f"define, which TF1's ignored. {fix.description}.", fix)
        if path == "app.run" or path.startswith("app.run."):
            fix = self._run_fix(ref)
            what = f"{gone}: use absl's `app.run(main)`"
            if fix is None and _PARSES_ARGV.search(self.ctx.source):
                return (f"{what}, but this module reads the command line itself (argparse, getopt or "
                        "`sys.argv`), and absl rejects the flags it does not define. Keep it until those "
                        "flags are absl flags; no automatic fix."), None
            if fix is None:
                return f"{what}; a bare `tf.app.run()` called `__main__.main`, which this module does not define. No automatic fix.", None
            return f"{what}; absl rejects unknown command-line flags that `tf.app.run` ignored. {fix.description}.", fix
        module = next((m for m in FLAG_MODULES if path == m or path.startswith(m + ".")), None)
        if module is None:  # `tf.app` alone
            return f"{gone}: use absl (`from absl import app, flags`). No automatic fix.", None
        rest = path[len(module):]
        fix = self._flags_fix(ref, module, rest)
        what = f"{gone}: use `flags{rest}` from absl"
        if fix is None and ref.spelled_v1 and self._reads(rest):
            return f"{gone}. {self._why_not_absl()}, so it stays until that changes; no automatic fix.", None
        if fix is None:
            return f"{what}. No automatic fix: the name `flags` is taken here.", None
        if "compat.v1" in fix.description:
            return f"{gone}. {self._why_not_absl()}. {fix.description}.", fix
        return f"{what}. {fix.description}.", fix

    @staticmethod
    def _reads(rest: str) -> bool:
        return rest.startswith(".FLAGS") or rest == ""

    def _why_not_absl(self) -> str:
        if self._plan().reads_at_import:
            return ("This module reads a flag when it is imported, before any `app.run`: absl's `FLAGS` "
                    "raises UnparsedFlagAccessError there, TF's wrapper parses the command line on first use")
        return ("This module does not call `app.run`: absl's `FLAGS` raises UnparsedFlagAccessError until "
                "something parses the command line, TF's wrapper parses it on first use")

    def _module_node(self, ref: TF1Ref, levels: int):
        node = ref.node
        for _ in range(levels):
            if not isinstance(node, cst.Attribute):
                return None
            node = node.value
        return node

    def _flags_fix(self, ref: TF1Ref, module: str, rest: str) -> Optional[Fix]:
        plan = self._plan()
        local = plan.flags
        if local is None:
            return None
        levels = ref.path.count(".") - module.count(".")
        node = self._module_node(ref, levels)
        if node is None or isinstance(node, cst.Name):
            return None  # reached through an imported name (`from tensorflow import flags`)
        if self._reads(rest) and (not plan.calls_run or plan.reads_at_import):
            return self._compat_fix(ref)  # absl's FLAGS would raise when read: keep TF's wrapper
        applicability = "safe"
        parent = self.ctx.stack[-1] if self.ctx.stack else None
        if rest == "" and isinstance(parent, cst.Assign) and any(a is parent for a in plan.alias_assigns) and local == "flags":
            # `flags = tf.app.flags` -> `from absl import flags`
            new = cst.ImportFrom(module=cst.Name("absl"), names=[cst.ImportAlias(name=cst.Name("flags"))])
            return Fix(applicability, "Replace with `from absl import flags` (TF2-native: absl)", (Replace(parent, new),))
        return Fix(
            applicability,
            f"Replace with absl's `{local}{rest}` and import it (TF2-native: absl)",
            (Replace(node, cst.Name(local)), AddImport(plan.import_for("flags"))),
        )

    def _compat_fix(self, ref: TF1Ref, why: str = "it parses the command line on first use, as TF1's did") -> Optional[Fix]:
        """`tf.app.flags.FLAGS` -> `tf.compat.v1.app.flags.FLAGS`: TF1's wrapper, which parses
        `sys.argv` on first access (it wraps absl's FLAGS, so absl's DEFINE_* and `app.run` fill it).
        `tf.app.run` -> `tf.compat.v1.app.run`: TF1's, which ignores flags nobody defined."""
        if ref.spelled_v1 or ref.routed:
            return None  # runs as it is; in a TF1 graph module TFM200 moves it with the rest
        reference = spelling_like(ref, self.ctx, f"compat.v1.{ref.path}")
        return Fix("safe", f"Replace with `{reference.code}` (a compat.v1 fallback, not TF2-native: {why})",
                   (Replace(ref.node, reference.expression()), *reference.import_edits()))

    def _run_fix(self, ref: TF1Ref) -> Optional[Fix]:
        plan = self._plan()
        if ref.path != "app.run" or plan.app is None or _PARSES_ARGV.search(self.ctx.source):
            return None
        node = self._module_node(ref, 1)
        if node is None or isinstance(node, cst.Name):
            return None
        new_func = cst.Attribute(value=cst.Name(plan.app), attr=cst.Name("run"))
        call = ref.call
        if call is not None and not call.args:
            if not plan.has_main:
                return None
            edits = (Replace(call, call.with_changes(func=new_func, args=[cst.Arg(cst.Name("main"))])),)
            description = f"Replace with `{plan.app}.run(main)` from absl (TF2-native: absl)"
        else:
            if call is None and not plan.has_main:
                return None
            edits = (Replace(ref.node, new_func),)
            description = f"Replace with absl's `{plan.app}.run` (TF2-native: absl)"
        return Fix("unsafe", description, edits + (AddImport(plan.import_for("app")),))
