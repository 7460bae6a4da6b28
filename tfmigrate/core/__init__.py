"""The engine: the TFM001 gate (source), parse once, one walk of every rule (walk) in the lint
pass (engine), fixes to a fixed point (fixloop, apply)."""
