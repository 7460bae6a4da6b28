"""TFM202: `tf.placeholder` and its variants: graph inputs fed by a session. TF2 passes values as
function arguments; the fix is the compat.v1 fallback (which still needs graph mode)."""
from tfmigrate.fixers.api_rename import generic_fix
from tfmigrate.rules._removed_api import RemovedApiRule, fallback_message
from tfmigrate.facts.graph_words import V2_OFF_WORD
from tfmigrate.facts.source_search import SourceSearch


class Placeholder(RemovedApiRule):
    code = "TFM202"
    reads = (SourceSearch,)
    CLAIMS = ("placeholder", "placeholder_with_default", "sparse_placeholder")

    def describe(self, ref):
        fix = generic_fix(ref, self.ctx)
        todo = (
            "In TF2 the value is an argument of the function that uses it "
            "(`tf.function(input_signature=[tf.TensorSpec(shape, dtype)])` pins its shape and dtype)"
        )
        caveat = ""
        if ref.path != "placeholder_with_default" and not self.ctx.fact(SourceSearch).found(V2_OFF_WORD):
            caveat = "; it raises RuntimeError unless `tf.compat.v1.disable_eager_execution()` runs first"
        return fallback_message(ref, "declares a TF1 graph input fed by a session", todo, fix, caveat), fix
