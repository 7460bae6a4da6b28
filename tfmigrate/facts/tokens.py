"""The file's code tokens, made once per file and shared by whoever reads names at token level
(`NameCounts` for an import's removal, TFM207's plan), so strings and comments never count.
"""
from __future__ import annotations

import io
import sys
import tokenize
from typing import List, Optional, Tuple

# Layout and comments: no consumer looks at them.
_SKIP = frozenset((tokenize.NL, tokenize.NEWLINE, tokenize.COMMENT, tokenize.INDENT, tokenize.DEDENT))

try:  # CPython 3.11's C tokenizer, several times faster than `tokenize` for the same tokens here
    from _tokenize import TokenizerIter as _C_TOKENIZER  # type: ignore[import-not-found]
except ImportError:  # pragma: no cover - another implementation
    _C_TOKENIZER = None
# On 3.12+ `tokenize` is itself built on the C tokenizer (with another signature): used as it is.
_USE_C = _C_TOKENIZER is not None and sys.version_info[:2] == (3, 11)
# The C tokenizer's own types for `async` / `await`, which `tokenize` gives as NAME.
_AS_NAME = {getattr(tokenize, kind): tokenize.NAME for kind in ("ASYNC", "AWAIT") if hasattr(tokenize, kind)}


def code_tokens(text: str) -> Optional[List[Tuple[int, str]]]:
    """(type, string) of every token of `text` but layout and comments, in order (ENDMARKER
    last), as `tokenize.generate_tokens` gives them; None when `tokenize` refuses the text."""
    if _USE_C:
        try:
            # (string, type, line, end line, column, end column, line text); NAME is NAME, an
            # operator's type is its exact one (only NAME and the strings are read). It gives
            # no ENDMARKER: added, as `tokenize` ends with one.
            found = [(_AS_NAME.get(kind, kind), string) for string, kind, *_ in _C_TOKENIZER(text)
                     if kind not in _SKIP]
            found.append((tokenize.ENDMARKER, ""))
            return found
        except (SyntaxError, ValueError):
            pass  # the pure-Python tokenizer decides (it is more lenient in places)
    try:
        return [(t.type, t.string) for t in tokenize.generate_tokens(io.StringIO(text).readline)
                if t.type not in _SKIP]
    except (tokenize.TokenError, SyntaxError):
        return None


class CodeTokens:
    """Per file (`ctx.fact(CodeTokens).tokens`): `code_tokens` of its source."""

    needs = ()

    def __init__(self, ctx):
        self.tokens = code_tokens(ctx.source)
