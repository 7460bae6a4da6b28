"""TFM216: with `--native`, a module of TF1 graph code that `fix --native` cannot rewrite as eager
TF2, and the construct that stops it.

`fix --native` rewrites a whole graph script before any other fix (tfmigrate.native, in the fix
loop's native pre-pass); a module it leaves alone keeps the compat route (TFM200), and this finding
says why, so the user knows what to migrate by hand (or what tfmigrate would need to learn).
"""
from __future__ import annotations

import re

import libcst as cst

from tfmigrate.facts.program import ProgramMode
from tfmigrate.rules.base import Rule

_HOW = {  # a word of the construct -> how to migrate that part by hand (the first that matches)
    "does not map yet": "make the library's model code make its variables with `tf.compat.v1.get_variable` "
                        "under `variable_scope` (or `tf.compat.v1.layers`) and nothing else that keeps state, and "
                        "call it from graph statements at the script's top level (or in its `main`): `fix --native` "
                        "then calls it through one tracked store (`track_tf1_style_variables`), each variable made "
                        "once with its TF1 name",
    "makes state a tracked call": "make the variables with `tf.compat.v1.get_variable` under `variable_scope`: "
                                  "`fix --native` then calls the function through one tracked store, where each "
                                  "variable is made once with its TF1 name and found again by name",
    "unfed": "give the prediction a method of its own that builds only what it needs, or feed every "
             "placeholder the class's graph reads",
    "made again at every call": "make the variable with `tf.compat.v1.get_variable` under a name, which "
                                "tracked code finds again on each call",
    "summar": "write summaries with `tf.summary.create_file_writer(...)` and `tf.summary.scalar(..., step=)`",
    "optimizer state": "keep TF1's optimizer (`tf.compat.v1.train.AdamOptimizer`) and make its state before "
                       "the Saver (one training step traced with `get_concrete_function`), or read the slots "
                       "with `tf.train.load_checkpoint` and assign them to the optimizer's",
    "Saver": "save and restore with `tf.train.Checkpoint`",
    "collection": "keep the objects in Python lists or on a `tf.Module`",
    "class": "make the class a `tf.Module` (or a Keras layer) that creates its variables once",
    "function that builds graph state": "create the variables once, outside the function, and pass them in",
    "graph-level seed": "accept the new draws with `fix --unsafe-fixes --native`, or keep the compat route "
                        "while the printed numbers must not move",
    "seed": "draw the random numbers with `tf.random.Generator.from_seed(...)`",
    "queue": "read the data with `tf.data` (`tf.data.TextLineDataset`, `TFRecordDataset`, ...)",
    "test method": "write that test eagerly: read tensors with `self.evaluate(t)` where the session ran them, "
                   "in the order its state changes",
}


class NotNative(Rule):
    code = "TFM216"
    reads = (ProgramMode,)

    @classmethod
    def applies_to(cls, ctx) -> bool:
        return bool(ctx.native) and ctx.names.has_tensorflow and (ctx.fact(ProgramMode).graph or _estimator(ctx))

    def leave_Module(self, node: cst.Module) -> None:
        from tfmigrate.native import rewrite

        # under `fix --unsafe-fixes`, what holds the module after the unsafe conversions, not the
        # advice to give the flag that was given
        outcome = rewrite(self.ctx.source, self.ctx.names.stateful_imports, self.ctx.names.eager_imports,
                          self.ctx.unsafe, group=self.ctx.names.class_group)
        imports = self.ctx.fact(ProgramMode).tf_imports()
        if outcome.blocker is None and not self.ctx.keras3:
            return
        if imports:
            target = imports[0][1]
            target = target.name if isinstance(target, cst.ImportAlias) else target
        else:  # a group's library whose `tf` arrives by `from layers import *`: reported there
            target = _star_import(node) if self.ctx.names.class_group else None
            if target is None:
                return
        if outcome.blocker is None:  # `--keras3`: what level 3 would keep TF1, per construct (issue 22)
            upgraded = rewrite(self.ctx.source, self.ctx.names.stateful_imports, self.ctx.names.eager_imports,
                               self.ctx.unsafe, keras3=True)
            for why in upgraded.kept:
                self.report(target, f"`fix --keras3` rewrites this module as eager TF2 and keeps TF1 code inside "
                                    f"a tracked layer (it runs under tf-keras): {why}.", None, debt=True)
            return
        blocker = outcome.blocker
        construct = _construct(blocker.construct, self.ctx.imported_by, self.ctx.source)
        graph = self.ctx.fact(ProgramMode).graph
        how = next((text for key, text in _HOW.items() if key in construct), None) if graph else None
        advice = f" To migrate that part by hand, {how}." if how else ""
        kept = ("keeps TensorFlow's compat route (TFM200)" if graph else
                "is left as it is: its `tf.estimator` code cannot run on TensorFlow 2.21 (TFM213)")
        self.report(target, (
            f"`fix --native` cannot rewrite this module as eager TF2; it stopped at line {blocker.line}: "
            f"{construct}. It rewrites placeholders, variables, `tf.layers`, tensors, `minimize`, "
            "`tf.data` iterators, `tf.metrics.accuracy`, a `tf.train.Saver`, a Session and its `run` calls "
            "(also inside a function called once, such as `main`), model functions of the script or of its project's "
            "modules (through tracked objects), model classes whose `__init__` builds the graph, "
            "`tf.test.TestCase` methods run in a test session, and a `tf.estimator.Estimator` of a model_fn with "
            "its `train` / `evaluate` / `predict`; "
            f"the module {kept}.{advice}{_also_held(blocker)}"), None, debt=True)
        for where, held in blocker.held:  # (each other test method that holds the file, at its `def`)
            function = _method(node, where)
            if function is not None:
                self.report(function.name, (
                    f"`fix --native` keeps this test file on the compat route for this test method too "
                    f"(line {held.line}): {held.construct.split(': ', 1)[-1]}."), None, debt=True)


def _also_held(blocker) -> str:
    if not blocker.held:
        return ""
    return (f" {len(blocker.held) + 1} of its {blocker.tests} test methods hold it there; "
            "the others are reported at their `def`.")


def _method(node: cst.Module, where: str):
    """The `def` of `Class.method` among the module's top-level classes."""
    cls, _, name = where.partition(".")
    for statement in node.body:
        if isinstance(statement, cst.ClassDef) and statement.name.value == cls:
            for member in statement.body.body:
                if isinstance(member, cst.FunctionDef) and member.name.value == name:
                    return member
    return None


def _star_import(node: cst.Module):
    """The module's first top-level `from X import *` (the module X, where its TensorFlow comes from)."""
    for statement in node.body:
        if isinstance(statement, cst.SimpleStatementLine):
            for small in statement.body:
                if isinstance(small, cst.ImportFrom) and isinstance(small.names, cst.ImportStar):
                    return small.module if small.module is not None else small
    return None


def _construct(construct: str, importer, source: str) -> str:
    """A library module is held back by the program that imports it (issue 21: across files, all
    or nothing), which the run names (`imported_by`: a checked graph module the native rewrite
    leaves on the compat route); its own TFM216 says what holds it. When the module itself uses
    what an eager test could not call through (`.assign(`), that is named too: it holds the test."""
    from tfmigrate.native.script import LIBRARY_MODULE  # imported with the rewrite, under --native only
    from tfmigrate.facts.eager_calls import not_eager_construct

    if construct != LIBRARY_MODULE or not importer:
        return construct
    from tfmigrate.native.imported_models import STORE_LINE
    from tfmigrate.observed import read_noted

    if STORE_LINE.encode() in read_noted(importer):  # (the program is eager TF2 already, and calls this one's TF1 code)
        return (f"a library of TF1 model code that `{importer}`, rewritten as eager TF2, calls through its tracked "
                "store (`track_tf1_style_variables`), where its variables are made once with their TF1 names: it "
                "stays TF1 code, running through `tf.compat.v1`")
    data = source.encode("utf-8", "surrogateescape")
    # (`disable_v2_behavior()` on a line of its own is the compat route, TFM200's on an earlier pass:
    # the module's own TF1 code is what holds it)
    own = not_eager_construct(re.sub(rb"(?m)^[ \t]*[\w.]+\.disable_v2_behavior\(\)[ \t]*$", b"", data))
    if own is not None:
        return (f"a library module that the graph module `{importer}` imports, and `{importer}` keeps the compat "
                f"route; it uses `{own.strip()}` itself, graph state that runs otherwise eagerly, so an eager "
                f"`{importer}` could not call it either: migrate that part by hand first")
    return (f"a library module that the graph module `{importer}` imports, and `{importer}` keeps the compat "
            "route: a library module goes eager only with the programs that use it (follow the imports to the "
            "program whose TFM216 names what holds it there)")


def _estimator(ctx) -> bool:
    """An Estimator program (not graph code by its evidence, yet TF 2.21 cannot run it): `fix --native`
    rewrites it, or says here why not."""
    if "estimator" not in ctx.source:
        return False
    from tfmigrate.native.estimators import uses_estimator

    return uses_estimator(ctx.module, ctx.source)
