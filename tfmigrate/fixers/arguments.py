"""The argument list of a rewritten call: the call's own arguments after some were dropped
(a keyword TF2 removed), renamed or added (a pinned default), joined as the call had them.

Every fix that removes or adds a keyword builds the new list with `joined`, so the commas and
the whitespace after them stay the call's: each argument but the last keeps its comma (an added
one gets `, `), and the last takes the comma the call's last argument had (none, or a trailing
comma that stays)."""
from __future__ import annotations

from typing import List, Sequence

import libcst as cst

EQUAL = cst.AssignEqual(whitespace_before=cst.SimpleWhitespace(""), whitespace_after=cst.SimpleWhitespace(""))
_COMMA = cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))


def keyword(name: str, value: cst.BaseExpression) -> cst.Arg:
    """`name=value`, spelled without spaces around `=`."""
    return cst.Arg(value=value, keyword=cst.Name(name), equal=EQUAL)


def joined(call: cst.Call, args: Sequence[cst.Arg]) -> List[cst.Arg]:
    """`args` as the argument list of `call` (see the module docstring)."""
    return join(args, call.args[-1].comma if call.args else cst.MaybeSentinel.DEFAULT)


def join(args: Sequence[cst.Arg], last_comma=cst.MaybeSentinel.DEFAULT) -> List[cst.Arg]:
    """The args with commas between them (their own where they had one, else `, `) and
    `last_comma` after the last."""
    out = [a if isinstance(a.comma, cst.Comma) else a.with_changes(comma=_COMMA) for a in args[:-1]]
    return out + [a.with_changes(comma=last_comma) for a in args[-1:]]
