"""TFM000: a rule raised while checking a file. Emitted by the engine, which keeps the other rules
running and reports the failure here instead of crashing the run."""
from tfmigrate.rules.base import Rule


class InternalError(Rule):
    code = "TFM000"
