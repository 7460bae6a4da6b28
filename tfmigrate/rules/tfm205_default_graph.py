"""TFM205: `tf.reset_default_graph()` / `tf.get_default_graph()`: the TF1 default graph."""
from tfmigrate.fixers.api_rename import generic_fix
from tfmigrate.rules._removed_api import RemovedApiRule, fallback_message


class DefaultGraph(RemovedApiRule):
    code = "TFM205"
    CLAIMS = ("reset_default_graph", "get_default_graph")

    def describe(self, ref):
        fix = generic_fix(ref, self.ctx)
        if ref.path == "reset_default_graph":
            what = "clears the TF1 default graph (the usual reset between models in notebooks and tests)"
            todo = "In TF2 call `tf.keras.backend.clear_session()` to start fresh"
        else:
            what = "returns the TF1 default graph"
            todo = "TF2 code runs eagerly, with no default graph to add operations to or to inspect"
        return fallback_message(ref, what, todo, fix), fix
