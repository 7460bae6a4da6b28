"""Cross-file facts: which modules a graph program imports, star imports."""
