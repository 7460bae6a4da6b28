"""TFM101: `tf.layers.dense(x, 3)` and the other functional layers raise AttributeError under
Keras 3 (even as `tf.compat.v1.layers.*`), and under Keras 2 eager code they built new weights on
every call. The TF2 form is a Keras layer object built once and called where the function was.

In a method of a Keras Model/Layer the object goes to `__init__` (safe, when its arguments can be
evaluated there and the call is not repeated by a loop); elsewhere there is no object to hold it,
so it is built inline (unsafe: one new layer each time the line runs).
"""
from __future__ import annotations

from keyword import iskeyword

import libcst as cst

from tfmigrate.findings import Fix, Insert, Replace
from tfmigrate.fixers import layers as fx
from tfmigrate.fixers.keras_init import REPEATING, ClassBook, ConstructorReads, self_param, takes_positional
from tfmigrate.facts.functions import head_name
from tfmigrate.facts.names import Spelling
from tfmigrate.rules.base import Rule
from tfmigrate.facts.program import ProgramMode
from tfmigrate.facts.keras_classes import KerasClasses


# What `fix --keras3` (tfmigrate.native.keras3) does with such a layer, and why one stays TF1.
_KERAS3 = ("`fix --keras3` makes dense, conv1d, conv2d, max/average pooling 1d/2d, flatten and dropout (not in "
           "training mode) Keras layers made once in a model function's Keras layer or a graph class's `__init__`, "
           "where the numbers stay equal; it keeps a layer TF1 inside a loop, inner function or helper method run "
           "more than once, under a `variable_scope` named by a parameter or setting defaults, "
           "in a function another model function calls, with float64 data, or when a Saver reads TF1's names.")

class FunctionalLayer(Rule):
    code = "TFM101"
    reads = (ProgramMode, KerasClasses)

    def __init__(self, ctx):
        super().__init__(ctx)
        self._book = ClassBook(ctx)  # the classes' __init__ and attributes (fixers.keras_init)

    def _method(self):
        """(classdef, method) for a call in a method of a Keras class; a reason string when it
        is in a Keras class but cannot move to `__init__`; None when no Keras class holds it."""
        stack = self.ctx.stack
        funcs = [i for i, n in enumerate(stack) if isinstance(n, cst.FunctionDef)]
        for depth, i in enumerate(reversed(funcs)):
            if i < 2 or not isinstance(stack[i - 2], cst.ClassDef):
                continue
            classdef, method = stack[i - 2], stack[i]
            if not self._book.is_keras(classdef):
                return None
            if depth > 0:
                return "it is inside a function nested in a method"
            decorators = {head_name(d.decorator) for d in method.decorators}
            if decorators & {"staticmethod", "classmethod"} or self_param(method) is None:
                return "the method has no `self`"
            if method.name.value == "__init__":
                return "it runs in `__init__`; store the layer there and call it in `call`"
            inner = stack[i + 1:]
            if any(isinstance(n, REPEATING) for n in inner):
                return "it runs in a loop or comprehension, where TF1 built one layer per iteration"
            if any(isinstance(n, cst.Lambda) for n in inner):
                return "it is inside a lambda"
            return classdef, method
        return None

    # -- the rule -------------------------------------------------------------------------------
    def visit_Call(self, node: cst.Call) -> None:
        api = self.ctx.names.api(node.func)
        while api is not None and api.startswith(("compat.v1.", "compat.v2.")):
            api = api[10:]  # `tf.compat.v1.layers` under `import tensorflow.compat.v1 as tf`
        if api is None or not api.startswith("layers.") or api[7:] not in fx.SPECS:
            return
        function = api[7:]
        spelled = self.ctx.module.code_for_node(node.func)
        ref = self._spelling(node.func, f"keras.layers.{fx.SPECS[function].cls}")
        wrong = (f"`{spelled}` does not exist under TensorFlow 2.21 / Keras 3 "
                 "(`tf.compat.v1.layers` raises AttributeError).")
        mapped = fx.map_call(function, node)
        place = self._method()
        if isinstance(place, tuple):
            todo = f"Create one `{ref.code}` in `__init__` and call it here"
            if isinstance(mapped, str):
                return self.report(node.func, f"{wrong} {todo}; no automatic fix because {mapped}.")
            result = self._class_fix(node, function, mapped, ref, *place)
            if isinstance(result, str):
                return self.report(node.func, f"{wrong} {todo}; no automatic fix because {result}.")
            fix, caveats = result
            unsafe = f"; the fix is unsafe because {'; '.join(caveats)}" if caveats else ""
            return self.report(node.func, f"{wrong} {todo}{unsafe}.", fix)
        if place is None and (self.ctx.fact(ProgramMode).graph or self.ctx.fact(ProgramMode).model_mapping):
            return self._graph_code(node, spelled, ref)
        if isinstance(place, str) or isinstance(mapped, str):
            why = place if isinstance(place, str) else mapped
            return self.report(
                node.func,
                f"{wrong} Create one `{ref.code}` (e.g. in a Keras layer's `__init__`) and call it "
                f"here; no automatic fix because {why}.",
            )
        layer = fx.constructor(ref.expression(), mapped, node)
        edits = [Replace(node, fx.layer_call(layer, mapped, node))]
        edits.extend(ref.import_edits())
        self.report(
            node.func,
            f"{wrong} Use a `{ref.code}` object created once and called here; with no Keras class "
            "to hold it the fix builds it inline, which creates a new layer (new weights) each "
            "time this line runs in eager code, and TF1 variable names and `variable_scope` "
            "reuse do not carry over.",
            Fix("unsafe", f"Build `{ref.code}(...)` inline and call it on the input"
                + "".join(f" ({n})" for n in mapped.caveats + mapped.caveats_safe), tuple(edits)),
        )

    def _graph_code(self, node: cst.Call, spelled: str, ref: Spelling) -> None:
        """In TF1 graph code a Keras 3 object built inline would lose what the rest of the graph
        relies on (variable_scope reuse, UPDATE_OPS, regularization losses, a placeholder
        `training` flag): the module keeps TF1's layers on the compat route instead."""
        program = self.ctx.fact(ProgramMode)
        native = (f"The TF2-native form, a `{ref.code}` object created once, belongs with a rewrite of the "
                  "whole graph code (weight sharing, UPDATE_OPS, regularization losses, a `training` flag)")
        v1 = self.ctx.names.full_name(node.func) or ""
        if program.model_mapping and v1.startswith("tensorflow.compat.v1."):
            return self.report(
                node.func,
                f"`{spelled}` is a TF1 functional layer on TensorFlow's model-mapping route: inside "
                "`track_tf1_style_variables` code, with legacy Keras (tf-keras), it makes its variables once, "
                f"with TF1's names. {native}; no automatic fix. {_KERAS3}",
                debt=True,
            )
        if program.on_compat_route and program.legacy_keras_set and v1.startswith("tensorflow.compat.v1."):
            return self.report(
                node.func,
                f"`{spelled}` is a TF1 functional layer, running through `tf.compat.v1` with TensorFlow's legacy "
                f"Keras (tf-keras). {native}; no automatic fix.",
                debt=True,
            )
        self.report(
            node.func,
            f"`{spelled}` does not exist under TensorFlow 2.21 / Keras 3 (`tf.compat.v1.layers` needs "
            "TensorFlow's legacy Keras, the tf-keras package). In this TF1 graph module TFM200's fix keeps it "
            f"on `tf.compat.v1.layers` with legacy Keras, so weight sharing and the graph collections keep working. {native}.",
        )

    def _spelling(self, func, api: str) -> Spelling:
        """Spell the class with the alias the call itself used (`tfv1.layers.dense` ->
        `tfv1.keras.layers.Dense`) when that alias is TensorFlow; else the table's choice."""
        head = head_name(func)
        if self.ctx.names.aliases.get(head) in ("tensorflow", "tensorflow.compat.v1"):
            return Spelling(f"{head}.{api}", None)
        return self.ctx.names.spelling(api)

    def _class_fix(self, node, function, mapped, ref, classdef, method):
        info = self._book.class_info(classdef)
        self_name = self_param(method)
        init_self = self_param(info.init) if info.init is not None else self_name
        if init_self is None:
            return "`__init__` has no `self`"
        reads = ConstructorReads(self_name)
        for arg in mapped.ctor_args:
            arg.value.visit(reads)
        reason = self._book.unavailable_in_init(classdef, method, info, reads, init_self, self_name)
        if reason:
            return reason
        ancestors = self._book.ancestors(classdef)

        name = mapped.name
        attr = self._book.attribute_name(
            info,
            name if name and name.isidentifier() and not iskeyword(name) else function,
            set().union(*(self._book.class_info(c).used for c in ancestors)),
        )
        value = fx.constructor(ref.expression(), mapped, node)
        statement = fx.assignment(fx.self_attribute(init_self, attr), value)
        if info.init is not None:
            insert = Insert(owner=info.init, statements=(statement,))
        else:
            first = next((s for s in classdef.body.body if isinstance(s, cst.FunctionDef)), None)
            body = list(classdef.body.body) if isinstance(classdef.body, cst.IndentedBlock) else []
            before = first is None or body.index(first) > 0
            after = first is not None and not first.leading_lines
            positional = any(takes_positional(self._book.class_info(c).init) for c in ancestors[1:])
            init = fx.new_init(init_self, [statement], blank_before=before, blank_after=after,
                               forward_args=positional)
            insert = Insert(owner=classdef, statements=(init,), where="first_def", exclusive=True)
        edits = [insert, Replace(node, fx.layer_call(fx.self_attribute(self_name, attr), mapped, node))]
        edits.extend(ref.import_edits())
        caveats = list(mapped.caveats)
        helper = method.name.value
        if helper not in ("call", "build") and info.calls[helper] != 1:
            caveats.append(
                f"`{helper}` is called {info.calls[helper]} times in the class: TF1 built a layer "
                "per call, the fix shares one" if info.calls[helper] else
                f"`{helper}` is not called in the class: if it runs more than once per step, TF1 "
                "built a layer per run and the fix shares one"
            )
        applicability = "unsafe" if caveats else "safe"
        notes = caveats + mapped.caveats_safe
        note = f" ({'; '.join(notes)})" if notes else ""
        return Fix(
            applicability,
            f"Build `{init_self}.{attr} = {ref.code}(...)` in `__init__` and call "
            f"`{self_name}.{attr}(...)` here{note}",
            tuple(edits),
        ), caveats
