"""TFM001: the file cannot be parsed. Emitted by the engine with the parser's message and
position; the run goes on with the other files."""
from tfmigrate.rules.base import Rule


class ParseError(Rule):
    code = "TFM001"
