"""TFM204: graph collections (`tf.get_collection`, `tf.GraphKeys`, `tf.trainable_variables()`...).
TF2 has no collections; under `tf.compat.v1` in eager mode the readers return [] silently."""
from tfmigrate.findings import Fix
from tfmigrate.facts.program import mentions_graph_mode
from tfmigrate.fixers.api_rename import generic_fix
from tfmigrate.rules._removed_api import RemovedApiRule, fallback_message

# Readers: in eager mode they return [] even after variables were created (measured, TF 2.21).
_READERS = frozenset({
    "get_collection", "get_collection_ref", "trainable_variables", "global_variables",
    "local_variables", "model_variables", "moving_average_variables", "all_variables",
})


class GraphCollection(RemovedApiRule):
    code = "TFM204"
    CLAIMS = (
        "get_collection",
        "get_collection_ref",
        "add_to_collection",
        "add_to_collections",
        "GraphKeys",
        *sorted(_READERS - {"get_collection", "get_collection_ref"}),
    )

    def describe(self, ref):
        fix = generic_fix(ref, self.ctx)
        caveat = ""
        if ref.path in _READERS:
            what = "reads a TF1 graph collection"
            todo = "TF2 has no collections: take the variables from their owner (`model.trainable_variables`, `module.variables`)"
            if fix is not None and not mentions_graph_mode(self.ctx):
                # Renamed, it no longer fails, but in eager code it returns [] silently.
                caveat = "; in eager code it returns []"
                fix = Fix("unsafe", fix.description, fix.edits)
        else:
            what = "uses TF1 graph collections"
            todo = "TF2 has no collections: keep variables and losses on a `tf.Module` or Keras model (`model.losses`, `model.trainable_variables`)"
        return fallback_message(ref, what, todo, fix, caveat), fix
