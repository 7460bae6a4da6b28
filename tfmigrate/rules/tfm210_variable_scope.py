"""TFM210: `tf.variable_scope` / `tf.get_variable` and the name-based variable sharing of TF1."""
from tfmigrate.fixers.api_rename import generic_fix
from tfmigrate.rules._removed_api import RemovedApiRule, fallback_message


class VariableScope(RemovedApiRule):
    code = "TFM210"
    CLAIMS = (
        "variable_scope",
        "variable_op_scope",
        "VariableScope",
        "get_variable",
        "get_local_variable",
        "get_variable_scope",
        "AUTO_REUSE",
        "make_template",
    )

    def describe(self, ref):
        fix = generic_fix(ref, self.ctx)
        todo = (
            "TF2 owns variables in objects: create them once in a Keras layer or a `tf.Module` "
            "(eager mode ignores reuse by name)"
        )
        return fallback_message(ref, "shares TF1 variables by name", todo, fix), fix
