"""TFM107: a Keras layer with weights constructed inside `call()` or inside a traced function.

Measured under TF 2.21 / Keras 3: `keras.layers.Dense(2)(x)` in a Model's `call` builds a new
layer, with new random weights, on every call (two calls on the same input differ, and
`model.weights` is empty: nothing is trained or saved); inside a `tf.function` it raises
`ValueError: tf.function only supports singleton tf.Variables created on the first call`.

Only layers that own weights are reported (measured by building each `keras.layers` class):
`Flatten()`, `Concatenate()`, `Dropout(...)` and the like built in `call` are harmless. The fix,
in `call` of a Keras class, builds the layer once in `__init__` (created if missing) and uses the
attribute, like TFM101's, with the same class bookkeeping (tfmigrate.fixers.keras_init). Each insert into a class is
exclusive, so two fixes (TFM101's or this rule's) never pick the same attribute name in one pass.
"""
from __future__ import annotations

import re
from typing import List, Optional, Tuple, Union

import libcst as cst

from tfmigrate.findings import Fix, Insert, Replace
from tfmigrate.fixers import layers as fx
from tfmigrate.fixers.keras_init import REPEATING, ClassBook, ConstructorReads, self_param, takes_positional
from tfmigrate.rules.base import Rule
from tfmigrate.facts.traced import FUNCTIONS, TracedFunctions
from tfmigrate.facts.keras_classes import KerasClasses

# keras.layers classes that own weights once built (Keras 3.15; wrappers such as Bidirectional
# hold the weights of the layer they wrap, which is reported itself).
WEIGHTED = frozenset("""
BatchNormalization Conv1D Conv1DTranspose Conv2D Conv2DTranspose Conv3D Conv3DTranspose ConvLSTM1D
ConvLSTM2D ConvLSTM3D Convolution1D Convolution1DTranspose Convolution2D Convolution2DTranspose
Convolution3D Convolution3DTranspose Dense DepthwiseConv1D DepthwiseConv2D EinsumDense Embedding
GRU GRUCell GroupNormalization GroupQueryAttention LSTM LSTMCell LayerNormalization
MultiHeadAttention Normalization PReLU RMSNormalization ReversibleEmbedding SeparableConv1D
SeparableConv2D SeparableConvolution1D SeparableConvolution2D SimpleRNN SimpleRNNCell
CuDNNGRU CuDNNLSTM LocallyConnected1D LocallyConnected2D
""".split())


def _snake(name: str) -> str:
    return re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", name).lower()


class LayerInCall(Rule):
    code = "TFM107"
    reads = (TracedFunctions, KerasClasses)

    def __init__(self, ctx):
        super().__init__(ctx)
        self._book = ClassBook(ctx)  # the classes' __init__ and attributes (fixers.keras_init)
        self._traced: List[Tuple[cst.Call, str, cst.CSTNode]] = []

    def visit_Call(self, node: cst.Call) -> None:
        api = self.ctx.names.api(node.func)
        if api is None or not api.startswith("keras.layers.") or api.rsplit(".", 1)[-1] not in WEIGHTED:
            return
        cls = api.rsplit(".", 1)[-1]
        place = self._call_method()
        if place is None:
            fn = self.ctx.enclosing(FUNCTIONS)
            if fn is not None:
                self._traced.append((node, cls, fn))
            return
        if self._lazy(node):
            return
        wrong = (f"`{cls}` is built inside `call`, so every call makes a new layer with new random "
                 "weights, and none of them is trained or saved.")
        todo = "Build it once in `__init__` and use that attribute here"
        if isinstance(place, str):
            return self.report(node.func, f"{wrong} {todo}; no automatic fix because {place}.")
        fix = self._fix(node, cls, *place)
        if isinstance(fix, str):
            return self.report(node.func, f"{wrong} {todo}; no automatic fix because {fix}.")
        self.report(node.func, f"{wrong} {todo}.", fix)

    def leave_Module(self, node: cst.Module) -> None:
        for call, cls, fn in self._traced:
            kind = self.ctx.fact(TracedFunctions).kind(fn)
            if kind is None:
                continue
            self.report(
                call.func,
                f"`{cls}` is built inside {kind}, which creates its weights while tracing and fails "
                "(TensorFlow allows variables only on the first trace). Build the layer once, "
                "outside the function, and call it here.",
            )

    # -- where the construction sits ------------------------------------------------------------
    def _call_method(self) -> Union[None, str, Tuple[cst.ClassDef, cst.FunctionDef]]:
        """(class, method) when the innermost function is `call` of a Keras class; a reason
        string when it is there but cannot move; None when it is not in such a `call`."""
        stack = self.ctx.stack
        funcs = [i for i, n in enumerate(stack) if isinstance(n, (cst.FunctionDef, cst.Lambda))]
        if not funcs:
            return None
        i = funcs[-1]
        method = stack[i]
        if not (isinstance(method, cst.FunctionDef) and method.name.value == "call" and i >= 2):
            return None
        classdef = stack[i - 2]
        if not isinstance(classdef, cst.ClassDef) or self.ctx.fact(KerasClasses).kind(classdef) is None:
            return None
        if self_param(method) is None:
            return "`call` has no `self`"
        if any(isinstance(n, REPEATING) for n in stack[i + 1:]):
            return "it runs in a loop or comprehension, which would need one layer per iteration"
        return classdef, method

    def _lazy(self, node: cst.Call) -> bool:
        """`self.x = Dense(...)` under an `if` in `call`: built once, on the first call."""
        parent = self.ctx.stack[-1] if self.ctx.stack else None
        if not (isinstance(parent, cst.Assign) and any(
            isinstance(t.target, cst.Attribute) for t in parent.targets
        )):
            return False
        return any(isinstance(n, cst.If) for n in self.ctx.stack)

    # -- the fix ----------------------------------------------------------------------------------
    def _fix(self, node: cst.Call, cls: str, classdef: cst.ClassDef, method: cst.FunctionDef) -> Union[Fix, str]:
        book = self._book
        parent = self.ctx.stack[-1] if self.ctx.stack else None
        if isinstance(parent, cst.Assign) and any(isinstance(t.target, cst.Attribute) for t in parent.targets):
            return "it is stored on an attribute in `call`; build it in `__init__` instead"
        info = book.class_info(classdef)
        self_name = self_param(method)
        init_self = self_param(info.init) if info.init is not None else self_name
        if init_self is None:
            return "`__init__` has no `self`"
        reads = ConstructorReads(self_name)
        node.visit(reads)
        reason = book.unavailable_in_init(classdef, method, info, reads, init_self, self_name)
        if reason:
            return reason
        ancestors = book.ancestors(classdef)
        attr = book.attribute_name(
            info, _name_argument(node) or _snake(cls),
            set().union(*(book.class_info(c).used for c in ancestors)),
        )
        statement = fx.assignment(fx.self_attribute(init_self, attr), node)
        if info.init is not None:
            insert = Insert(owner=info.init, statements=(statement,), exclusive=True)
        else:
            body = list(classdef.body.body) if isinstance(classdef.body, cst.IndentedBlock) else []
            first = next((s for s in body if isinstance(s, cst.FunctionDef)), None)
            positional = any(takes_positional(book.class_info(c).init) for c in ancestors[1:])
            init = fx.new_init(init_self, [statement], blank_before=first is None or body.index(first) > 0,
                               blank_after=first is not None and not first.leading_lines,
                               forward_args=positional)
            insert = Insert(owner=classdef, statements=(init,), where="first_def", exclusive=True)
        replace = Replace(node, fx.self_attribute(self_name, attr).with_changes(lpar=node.lpar, rpar=node.rpar))
        return Fix("safe", f"Build `{init_self}.{attr} = {cls}(...)` in `__init__` and use `{self_name}.{attr}` here",
                   (insert, replace))


def _name_argument(node: cst.Call) -> Optional[str]:
    """The literal `name="..."` of the constructor, when it makes an attribute name."""
    for arg in node.args:
        if arg.keyword is not None and arg.keyword.value == "name" and isinstance(arg.value, cst.SimpleString):
            value = arg.value.evaluated_value
            if isinstance(value, str) and value.isidentifier():
                return value
    return None
