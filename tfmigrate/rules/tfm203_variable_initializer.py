"""TFM203: `tf.global_variables_initializer()` and friends. TF2 variables are initialized when
created; in eager mode `tf.compat.v1.global_variables_initializer()` returns None. A bare call
statement builds an op nobody runs, so it is removed; anything else gets the compat.v1 fallback."""
from tfmigrate.findings import Fix
from tfmigrate.fixers.statements import remove_call_statement
from tfmigrate.facts.program import mentions_graph_mode
from tfmigrate.fixers.api_rename import generic_fix
from tfmigrate.rules._removed_api import RemovedApiRule, fallback_message


_CHECKS = ("report_uninitialized_variables", "assert_variables_initialized", "is_variable_initialized")


class VariableInitializer(RemovedApiRule):
    code = "TFM203"
    CLAIMS = (
        "global_variables_initializer",
        "initialize_all_variables",
        "local_variables_initializer",
        "initialize_local_variables",
        "variables_initializer",
        "initialize_variables",
        "tables_initializer",
        "initialize_all_tables",
        *_CHECKS,
    )

    def describe(self, ref):
        if ref.path in _CHECKS:
            what = "checks the initialization of TF1 graph variables"
        else:
            what = "initializes TF1 graph variables"
        todo = "TF2 variables are initialized when they are created, so eager code drops the call"
        fix = None
        if ref.call is not None:
            removal = remove_call_statement(ref.call, self.ctx.stack)
            if removal is not None:
                # The op is built and never run: a no-op in eager and graph code alike, unless
                # graph code fetches it by name later (only possible with graph-mode evidence).
                safety = "unsafe" if mentions_graph_mode(self.ctx) else "safe"
                fix = Fix(safety, "Remove the statement (TF2-native: nothing to initialize)", removal)
        if fix is None:
            fix = generic_fix(ref, self.ctx)
        return fallback_message(ref, what, todo, fix), fix
