"""TFM215: a call of a TensorFlow or Keras function or class with a keyword, or more positional
arguments, than TensorFlow 2.21's signature of what it calls takes: a TypeError (a ValueError
for Keras 3 optimizers) waiting for the line to run.

Every call tfmigrate.facts.references resolves to a TF 2.21 path is checked against the signature measured
by scripts/gen_signatures.py (`tf`, `tf.compat.v1`, Keras 3). Calls that only TF1's signature of
a changed symbol explains (`tf.argmax(x, dimension=1)`) are TFM299's. The fix renames keywords
whose TF1 spelling is known and that the callee takes under their TF2 name (`dim=` -> `axis=`,
`lr=` -> `learning_rate=`); in TF1 graph code a call that fits TF1's signature of the same name
(`tf.summary.scalar(..., collections=[...])`) goes through `tf.compat.v1`.
"""
from __future__ import annotations

from typing import Optional, Sequence

import libcst as cst

from tfmigrate.facts import api_table
from tfmigrate.findings import Fix, Replace
from tfmigrate.facts.names import dotted
from tfmigrate.rules._removed_api import RemovedApiRule
from tfmigrate.facts.program import ProgramMode

# TF1 keyword -> TF2 keyword of the same meaning (TensorFlow's upgrade tables, Keras 3's notes).
RENAMES = {"dim": "axis", "keep_dims": "keepdims", "reduction_indices": "axis", "lr": "learning_rate"}
# Keras 3 optimizers take **kwargs but reject any name they do not know (ValueError).
_STRICT_KWARGS = ("keras.optimizers.",)


class UnexpectedArgument(RemovedApiRule):
    code = "TFM215"
    reads = (ProgramMode,)

    def check_call(self, call: cst.Call, path: str, v1: bool) -> None:
        signature = api_table.call_signature(path, v1)
        if signature is None or any(a.star for a in call.args):
            return  # not measured, or `*args` / `**kwargs` passed: cannot tell
        names, most, takes_kwargs = signature
        lenient = takes_kwargs and not path.startswith(_STRICT_KWARGS)
        positional = [a for a in call.args if a.keyword is None]
        unknown = [] if lenient else [a for a in call.args if a.keyword is not None and a.keyword.value not in names]
        too_many = most is not None and len(positional) > most
        if not unknown and not too_many:
            return
        spelled = dotted(call.func) or f"tf.{path}"
        error = "ValueError" if path.startswith(_STRICT_KWARGS) else "TypeError"
        if unknown:
            passed = ", ".join(f"`{a.keyword.value}=`" for a in unknown)
            what = f"TensorFlow 2.21's `{spelled}` takes no {passed}"
        else:
            what = (f"TensorFlow 2.21's `{spelled}` takes at most {most} argument{'s' * (most != 1)} by position; "
                    f"this call passes {len(positional)}")
        head = f"{what} (its parameters: {', '.join(names) or 'none'}): the call raises {error} when it runs."
        fix = self._renamed(call, unknown, names) if unknown and not too_many else None
        if fix is None and not v1:
            fix = self._through_v1(call, path, unknown, len(positional))
        tail = f" The fix: {fix.description[0].lower()}{fix.description[1:]}." if fix else " No automatic fix."
        self.report(unknown[0] if unknown else call.func, head + tail, fix)

    def _renamed(self, call: cst.Call, unknown: Sequence[cst.Arg], names: Sequence[str]) -> Optional[Fix]:
        passed = {a.keyword.value for a in call.args if a.keyword is not None}
        new_names = []
        for arg in unknown:
            new = RENAMES.get(arg.keyword.value)
            if new is None or new not in names or new in passed or new in new_names:
                return None
            new_names.append(new)
        renamed = dict(zip((a.keyword.value for a in unknown), new_names))
        args = [a.with_changes(keyword=cst.Name(renamed[a.keyword.value])) if a in unknown else a for a in call.args]
        what = ", ".join(f"`{old}=` -> `{new}=`" for old, new in renamed.items())
        return Fix("safe", f"Rename {what} (the same meaning under TF2's name)", (Replace(call, call.with_changes(args=args)),))

    def _through_v1(self, call: cst.Call, path: str, unknown: Sequence[cst.Arg], positional: int) -> Optional[Fix]:
        """In TF1 graph code, a call that fits TF1's signature of the same name meant TF1's."""
        program = self.ctx.fact(ProgramMode)
        if not (program.graph or program.v2_disabled):
            return None
        v1 = api_table.call_signature(path, True)
        if v1 is None:
            return None
        names, most, takes_kwargs = v1
        if (most is not None and positional > most) or (not takes_kwargs and any(a.keyword.value not in names for a in unknown)):
            return None
        head = call.func
        while isinstance(head, cst.Attribute):
            head = head.value
        if not isinstance(head, cst.Name) or self.ctx.names.aliases.get(head.value) != "tensorflow":
            return None
        new = cst.parse_expression(f"{head.value}.compat.v1.{path}")
        return Fix("safe", f"Call TF1's `{head.value}.compat.v1.{path}`, whose signature this graph code was written for",
                   (Replace(call.func, new),))

