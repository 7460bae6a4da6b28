"""Static-shape reads rewritten as run-time ones: `x.shape[i]` -> `tf.shape(x)[i]`.

In traced code (a `Dataset.map` function) a static dimension is often `None`; `tf.shape(x)` is the
size the tensor really has when the op runs. The matched node's parentheses are kept, and the
tensor expression is moved unchanged into the call.
"""
import libcst as cst


def _bare(expr: cst.BaseExpression) -> cst.BaseExpression:
    """`(a + b)` -> `a + b`: a call argument needs no parentheses of its own."""
    if getattr(expr, "lpar", None):
        return expr.with_changes(lpar=[], rpar=[])
    return expr


def dynamic_shape(shape_fn: str, tensor: cst.BaseExpression, like: cst.BaseExpression) -> cst.Call:
    """`tf.shape(tensor)`, spelled with `shape_fn` ("tf.shape"), with the parentheses of `like`."""
    return cst.Call(
        func=cst.parse_expression(shape_fn),
        args=[cst.Arg(_bare(tensor))],
        lpar=list(getattr(like, "lpar", ())),
        rpar=list(getattr(like, "rpar", ())),
    )


def dynamic_dims(
    shape_fn: str, tensor: cst.BaseExpression, read: cst.Subscript, like: cst.BaseExpression
) -> cst.Subscript:
    """`tf.shape(tensor)[...]` with the index or slice of `read` and the parentheses of `like`.

    `like` is the node being replaced: the subscript itself, or `x.shape[i].value` around it.
    """
    return cst.Subscript(
        value=dynamic_shape(shape_fn, tensor, cst.Name("_")),
        slice=read.slice,
        lbracket=read.lbracket,
        rbracket=read.rbracket,
        lpar=list(getattr(like, "lpar", ())),
        rpar=list(getattr(like, "rpar", ())),
    )
