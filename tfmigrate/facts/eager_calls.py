"""What a module's code does that runs otherwise eagerly when an eager test calls it: graph
constructs, `tf.gradients`, state changed when a graph ran. Read from the bytes (project.graph_imports
decides which modules an eager test may call; TFM216 names the construct that holds a library).
"""
from __future__ import annotations

import re
from typing import Optional

# What runs otherwise eagerly when a test calls it: graph constructs, `tf.gradients`, state changed
# when a graph ran. A module without any of them is one an eager test may call (native.test_files).
NOT_EAGER = re.compile(rb"\.(?:placeholder\w*|Session|InteractiveSession|get_variable|variable_scope|get_collection\w*|"
                       rb"add_to_collection|\w*initializer|gradients|assign\w*|scatter_(?!nd\s*\()\w+|py_func|Graph|"
                       rb"get_default_graph|disable_\w+|make_template|Print)\s*\(|\bfeed_dict\s*=|\.(?:name|op|graph|value)\b|"
                       # a TF1 `Dimension`'s methods on a shape's element (eagerly an int or None; a slice
                       # `shape[:-1]` is a TensorShape, the same in TF2)
                       rb"\[[^\[\]:]*\]\s*\.\s*(?:assert_is_compatible_with|is_compatible_with|merge_with)\s*\(")


def not_eager_construct(data: bytes) -> Optional[str]:
    """The first construct of the module that runs otherwise eagerly (`.assign(`, `.name`), which
    keeps an eager test from calling it (eager_imports), else None."""
    found = NOT_EAGER.search(code_only(data))
    return found.group(0).decode("utf-8", "replace").rstrip("( \t") if found else None


def code_only(data: bytes) -> bytes:
    """The module's code without its comments and strings (a docstring's `with tf.Session() as
    sess:` example runs nothing), without `self.name` (an object's own attribute) and without the
    `.value` of a static shape's element (TFM111 fixes it for both behaviours); the bytes as they
    are when they do not tokenize."""
    import io
    import tokenize

    try:
        tokens = [t for t in tokenize.tokenize(io.BytesIO(data).readline)
                  if t.type not in (tokenize.COMMENT, tokenize.STRING)]
        text = tokenize.untokenize((t.type, t.string) for t in tokens)
    except (tokenize.TokenError, SyntaxError, ValueError):
        return data
    text = text if isinstance(text, bytes) else text.encode("utf-8")
    text = re.sub(rb"\bdtype\s*\.\s*name\b", b"dtype_name", text)
    # a static shape's element read by `.value` (`x.get_shape()[-1].value`): TFM111 writes it
    # `tf.compat.dimension_value(...)`, which reads the same under both behaviours
    text = re.sub(rb"(\.\s*(?:get_shape\s*\(\s*\)|shape)\s*\[[^\[\]]*\])\s*\.\s*value\b", rb"\1", text)
    return re.sub(rb"\bself\s*\.\s*name\b", b"self_name", text)
