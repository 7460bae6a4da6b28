"""TFM110: `tf.reduce_sum` / `tf.reduce_mean` of a tensor that is uint8 by construction.

Measured under TF 2.21: the reduction keeps the input dtype. `tf.reduce_sum` of uint8 wraps
around modulo 256 (`[200, 100]` -> 44; a 64x64x3 random image -> 180 instead of 1566644), and
`tf.reduce_mean` of uint8 rounds down to a whole number (127 instead of 127.49). uint8 by
construction: `tf.io.decode_raw(x, tf.uint8)`, `decode_png` / `decode_image` without another
dtype, `decode_jpeg` / `decode_bmp` / `decode_gif`, `tf.cast(x, tf.uint8)`, `tf.constant(...,
tf.uint8)`, directly or through a local name (the latest assignment in source order), also
through indexing and shape-only ops (`reshape`, `squeeze`, ...).

Fix: `reduce_sum(tf.cast(x, tf.int64))` (int32 overflows on a 4K RGB image: 3840*2160*3*255 >
2**31) and `reduce_mean(tf.cast(x, tf.float32))`. Safe when the result goes straight into
`tf.cast`; unsafe otherwise, because the result's dtype changes from uint8.
"""
from __future__ import annotations

from typing import Dict, List, Optional

import libcst as cst

from tfmigrate.findings import AddImport, Fix, Replace
from tfmigrate.facts.names import dotted
from tfmigrate.rules.base import Rule

_REDUCE = {"reduce_sum": "int64", "math.reduce_sum": "int64",
           "reduce_mean": "float32", "math.reduce_mean": "float32"}
# API -> index of the dtype argument (None: always uint8), and its keyword.
_DECODERS = {
    "io.decode_raw": (1, "out_type"), "decode_raw": (1, "out_type"),
    "image.decode_png": (2, "dtype"), "io.decode_png": (2, "dtype"),
    "image.decode_image": (2, "dtype"), "io.decode_image": (2, "dtype"),
    "image.decode_jpeg": (None, None), "io.decode_jpeg": (None, None),
    "image.decode_bmp": (None, None), "io.decode_bmp": (None, None),
    "image.decode_gif": (None, None), "io.decode_gif": (None, None),
    "cast": (1, "dtype"), "saturate_cast": (1, "dtype"), "dtypes.cast": (1, "dtype"),
    "image.convert_image_dtype": (1, "dtype"), "constant": (1, "dtype"),
}
_DEFAULT_UINT8 = frozenset({"image.decode_png", "io.decode_png", "image.decode_image", "io.decode_image"})
# Ops whose result has the dtype of their first argument.
_KEEP_DTYPE = frozenset("""reshape squeeze expand_dims transpose identity gather tile
image.flip_left_right image.flip_up_down image.random_flip_left_right image.random_flip_up_down
image.rot90 image.central_crop image.crop_to_bounding_box image.resize_with_crop_or_pad
image.random_crop random_crop""".split())


class Uint8Reduce(Rule):
    code = "TFM110"

    def __init__(self, ctx):
        super().__init__(ctx)
        self._uint8: Dict[int, Dict[str, bool]] = {}  # scope -> name -> uint8 at this point

    def _scope(self) -> Dict[str, bool]:
        scope = self.ctx.enclosing(cst.FunctionDef)
        return self._uint8.setdefault(id(scope) if scope is not None else 0, {})

    def _is_uint8_dtype(self, expr) -> bool:
        if isinstance(expr, cst.SimpleString):
            return expr.evaluated_value == "uint8"
        return self.ctx.names.api(expr) in ("uint8", "dtypes.uint8")

    def _is_uint8(self, expr) -> bool:
        if isinstance(expr, cst.Name):
            return self._scope().get(expr.value, False)
        if isinstance(expr, cst.Subscript):
            return self._is_uint8(expr.value)
        if not isinstance(expr, cst.Call):
            return False
        api = self.ctx.names.api(expr.func)
        if api in _KEEP_DTYPE:
            return bool(expr.args) and expr.args[0].keyword is None and self._is_uint8(expr.args[0].value)
        if api not in _DECODERS:
            return False
        index, keyword = _DECODERS[api]
        if index is None:
            return True
        dtype = _argument(expr, index, keyword)
        if dtype is None:
            return api in _DEFAULT_UINT8
        return self._is_uint8_dtype(dtype)

    def leave_Assign(self, node: cst.Assign) -> None:
        uint8 = self._is_uint8(node.value)
        for target in node.targets:
            if isinstance(target.target, cst.Name):
                self._scope()[target.target.value] = uint8

    def visit_Call(self, node: cst.Call) -> None:
        api = self.ctx.names.api(node.func)
        if api not in _REDUCE:
            return
        arg = _arg(node, 0, "input_tensor")
        if arg is None or not self._is_uint8(arg.value):
            return
        dtype = _REDUCE[api]
        spelled = dotted(node.func) or api
        tensor = self.ctx.module.code_for_node(arg.value)
        if "sum" in api:
            wrong = f"`{spelled}` of a uint8 tensor adds in uint8 and wraps around past 255, silently."
        else:
            wrong = f"`{spelled}` of a uint8 tensor rounds the mean down to a whole number, silently."
        cast = self.ctx.names.spelling("cast")
        kind = self.ctx.names.spelling(dtype)
        new_code = f"{cast.code}({tensor}, {kind.code})"
        edits = [Replace(arg.value, cst.parse_expression(new_code))]
        for imp in {cast.import_statement, kind.import_statement} - {None}:
            edits.append(AddImport(imp))
        stack = self.ctx.stack
        safe = (len(stack) > 1 and isinstance(stack[-1], cst.Arg) and isinstance(stack[-2], cst.Call)
                and stack[-2].args[0] is stack[-1] and self.ctx.names.api(stack[-2].func) == "cast")
        note = "" if safe else " (the result becomes " + dtype + " instead of uint8)"
        self.report(
            node.func,
            f"{wrong} Cast first: `{spelled}({new_code})`.",
            Fix("safe" if safe else "unsafe", f"Cast the input to {dtype}{note}", tuple(edits)),
        )


def _arg(call: cst.Call, index: int, keyword: str) -> Optional[cst.Arg]:
    for arg in call.args:
        if arg.keyword is not None and arg.keyword.value == keyword:
            return arg
    positional: List[cst.Arg] = [a for a in call.args if a.keyword is None and not a.star]
    if any(a.star for a in call.args[: index + 1]):
        return None
    return positional[index] if index < len(positional) else None


def _argument(call: cst.Call, index: int, keyword: str):
    arg = _arg(call, index, keyword)
    return None if arg is None else arg.value
