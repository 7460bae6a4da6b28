"""TFM002: a `# noqa` naming a TFM code that suppresses nothing. Emitted by the engine after
suppression (see tfmigrate/core/noqa.py), since only then is it known which codes were used."""
from tfmigrate.rules.base import Rule


class UnusedNoqa(Rule):
    code = "TFM002"
