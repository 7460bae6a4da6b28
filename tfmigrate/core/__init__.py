"""The engine: parse once, one walk of every rule, fixes to a fixed point."""
