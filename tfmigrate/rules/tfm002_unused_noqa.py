"""TFM002: a `# noqa` naming a TFM code that suppresses nothing. Emitted by the engine after
suppression (see tfmigrate/noqa.py), since only then is it known which codes were used."""
from tfmigrate.rule import Rule


class UnusedNoqa(Rule):
    code = "TFM002"
