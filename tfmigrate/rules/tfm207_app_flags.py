"""TFM207: `tf.app.flags` / `tf.flags` / `tf.app.run` -> absl (`from absl import app, flags`).

TF1's modules were thin wrappers around absl-py, which TensorFlow 2.21 still installs. Two
measured differences make some rewrites unsafe: TF's FLAGS wrapper parsed `sys.argv` on first
access, absl's raises UnparsedFlagAccessError before `app.run` parsed it (so a `FLAGS` rewrite is
safe only in a module that calls `app.run`); `tf.app.run` tolerated undefined command-line flags,
absl's `app.run` rejects them (so `tf.app.run` -> `app.run` is unsafe).
"""
from __future__ import annotations

import io
import tokenize
from typing import Optional, Tuple

import libcst as cst

from tfmigrate.findings import AddImport, Fix, Replace
from tfmigrate.removed_api import Ref, RemovedApiRule

FLAG_MODULES = ("app.flags", "flags")


def _tokens(source: str):
    """(name, previous token, next token) for NAME tokens `flags` and `app` outside strings
    and comments; None when the source cannot be tokenized."""
    found = []
    try:
        toks = [t for t in tokenize.generate_tokens(io.StringIO(source).readline)
                if t.type not in (tokenize.NL, tokenize.NEWLINE, tokenize.COMMENT, tokenize.INDENT, tokenize.DEDENT)]
    except (tokenize.TokenError, SyntaxError, IndentationError):
        return None
    for i, tok in enumerate(toks):
        if tok.type == tokenize.NAME and tok.string in ("flags", "app"):
            prev = toks[i - 1].string if i else ""
            nxt = toks[i + 1].string if i + 1 < len(toks) else ""
            found.append((tok.string, prev, nxt))
    return found


class _Plan:
    """Per file: the local names the fix binds to absl's `flags` and `app` modules."""

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
        tokens = _tokens(ctx.source)
        self.calls_run = "app.run(" in ctx.source
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
    CLAIMS = ("app", "flags")

    def _plan(self) -> _Plan:
        plan = self.ctx.shared.get("tfm207")
        if plan is None:
            plan = self.ctx.shared["tfm207"] = _Plan(self.ctx)
        return plan

    def describe(self, ref: Ref) -> Tuple[str, Optional[Fix]]:
        path = ref.path
        name = f"`tf.{path}`"
        if path == "app.run" or path.startswith("app.run."):
            fix = self._run_fix(ref)
            what = f"{name} was removed in TensorFlow 2 (it wrapped absl): use absl's `app.run(main)`"
            if fix is None:
                return f"{what}; a bare `tf.app.run()` called `__main__.main`, which this module does not define. No automatic fix.", None
            return f"{what}; absl rejects unknown command-line flags that `tf.app.run` ignored. {fix.description}.", fix
        module = next((m for m in FLAG_MODULES if path == m or path.startswith(m + ".")), None)
        if module is None:  # `tf.app` alone
            return f"{name} was removed in TensorFlow 2: use absl (`from absl import app, flags`). No automatic fix.", None
        rest = path[len(module):]
        fix = self._flags_fix(ref, module, rest)
        what = f"{name} was removed in TensorFlow 2 (it wrapped absl): use `flags{rest}` from absl"
        if fix is None:
            return f"{what}. No automatic fix: the name `flags` is taken here.", None
        if fix.applicability == "unsafe":
            return f"{what}; absl's `FLAGS` must be parsed by `app.run` before it is read, and this module does not call it. {fix.description}.", fix
        return f"{what}. {fix.description}.", fix

    def _module_node(self, ref: Ref, levels: int):
        node = ref.node
        for _ in range(levels):
            if not isinstance(node, cst.Attribute):
                return None
            node = node.value
        return node

    def _flags_fix(self, ref: Ref, module: str, rest: str) -> Optional[Fix]:
        plan = self._plan()
        local = plan.flags
        if local is None:
            return None
        levels = ref.path.count(".") - module.count(".")
        node = self._module_node(ref, levels)
        if node is None or isinstance(node, cst.Name):
            return None  # reached through an imported name (`from tensorflow import flags`)
        reads_flags = rest.startswith(".FLAGS") or rest == ""
        safe = plan.calls_run or not reads_flags
        applicability = "safe" if safe else "unsafe"
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

    def _run_fix(self, ref: Ref) -> Optional[Fix]:
        plan = self._plan()
        if ref.path != "app.run" or plan.app is None:
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
