"""TFM200: a module of TF1 graph code that does not run on TensorFlow's compat route.

TF1 graph code runs under TF 2.21 only as a whole through `tf.compat.v1` with v2 behaviour off
(`import tensorflow.compat.v1 as tf; tf.disable_v2_behavior()`, TensorFlow's migration guide);
`tf.layers` and `tf.nn.rnn_cell` there also need TensorFlow's legacy Keras (tf-keras). The fix
takes that route for the module at once, which keeps TF1's numbers; it is isolated to the module
(Fix.isolation), so the other rules' per-call fixes wait for the next pass and nothing is left
half graph, half eager.
"""
from typing import List, Optional, Tuple

import libcst as cst


from tfmigrate.facts import api_table
from tfmigrate.findings import Fix
from tfmigrate.fixers.compat_route import DATASET_ATTRIBUTES, compat_route_edits
from tfmigrate.rules.base import Rule
from tfmigrate.facts.program import ProgramMode
from tfmigrate.facts.names import dotted

_MAX_EVIDENCE = 3


class GraphModule(Rule):
    code = "TFM200"
    reads = (ProgramMode,)

    @classmethod
    def applies_to(cls, ctx) -> bool:
        program = ctx.names.has_tensorflow and ctx.fact(ProgramMode)
        return bool(program) and program.graph and not program.on_compat_route and not _native_helper_routed(ctx, program)

    def __init__(self, ctx):
        super().__init__(ctx)
        self.v2_only: List[Tuple[cst.CSTNode, str]] = []
        self.dataset_attributes: List[cst.Attribute] = []

    def visit_Attribute(self, node: cst.Attribute) -> None:
        """Names spelled through a plain `tensorflow` alias that only TF2 has: the route keeps
        them working as `tf.compat.v2.<name>`. With `--native`, also a dataset's TF1-only
        attributes (`ds.output_types`): see fixers.compat_route.DATASET_ATTRIBUTES."""
        if self.ctx.native and node.attr.value in DATASET_ATTRIBUTES:
            self.dataset_attributes.append(node)
        parent = self.ctx.stack[-1] if self.ctx.stack else None
        if type(parent) is cst.Attribute and parent.value is node:
            return
        head = node.value
        while type(head) is cst.Attribute:
            head = head.value
        if type(head) is not cst.Name or self.ctx.names.aliases.get(head.value) != "tensorflow":
            return
        path = self.ctx.names.api(node)
        if path and not path.startswith(("compat.", "keras")) and api_table.unresolved(path, True) is not None \
                and api_table.unresolved(path, False) is None and api_table.removed(path) is None:
            self.v2_only.append((node, path))

    def leave_Module(self, node: cst.Module) -> None:
        program = self.ctx.fact(ProgramMode)
        imports = program.tf_imports()
        if not imports:
            return
        target = imports[0][1]  # the first TensorFlow import: the line the fix rewrites
        target = target.name if isinstance(target, cst.ImportAlias) else target
        evidence = ", ".join(f"`{what}` (line {line})" if line else what for line, what in program.evidence[:_MAX_EVIDENCE])
        more = len(program.evidence) - _MAX_EVIDENCE
        if more > 0:
            evidence += f" and {more} more"
        what = "TF1 graph code, and a program's entry point" if program.entry else "TF1 graph code"
        head = (f"This module is {what}: {evidence}. Under TensorFlow 2.21 such code runs "
                "only as a whole through `tf.compat.v1` with v2 behaviour off; fixed call by call it "
                "runs eagerly and the first placeholder or session fails.")
        if program.v2_disabled:
            head = (f"This module is TF1 graph code ({evidence}) and turns v2 behaviour off, but "
                    "`tf.layers` / `tf.nn.rnn_cell` run there under TensorFlow 2.21 only with "
                    "TensorFlow's legacy Keras (`TF_USE_LEGACY_KERAS=1` and the tf-keras package).")
        fix = self._fix()
        if fix is None:
            tail = ("There is no automatic fix (no top-level `import tensorflow` to rewrite): import "
                    "`tensorflow.compat.v1 as tf` and call `tf.disable_v2_behavior()` at the top.")
        else:
            tail = f"The fix: {fix.description[0].lower()}{fix.description[1:]}."
        self.report(target, f"{head} {tail}", fix)

    def _fix(self) -> Optional[Fix]:
        planned = compat_route_edits(self.ctx, self.v2_only, self.dataset_attributes)
        if planned is None:
            return None
        edits, description = planned
        return Fix("safe", description, edits, requires=("tf-keras",) if "tf-keras" in description else (),
                   isolation="module")


def _native_helper_routed(ctx, program: ProgramMode) -> bool:
    """With --native, a helper of graph scripts is on its route once its TensorFlow imports are
    `tensorflow.compat.v1` (`from tensorflow.python... import x` aside: the route leaves those as
    they are; and legacy Keras is on where it needs it): it gets no
    `disable_v2_behavior()` there (fixers.compat_route), so nothing is left to fix."""
    if not (ctx.native and (program.graph_by_import or program.library_only)):
        return False
    imports = program.tf_imports()
    bound = [alias for _, alias, local in imports if local is not None]  # what the route would swap
    return bool(bound) and all(dotted(alias.name) == "tensorflow.compat.v1" for alias in bound) \
        and (program.legacy_keras_set or not program.needs_legacy_keras)
