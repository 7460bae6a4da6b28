"""Per-file analysis the rules read; imports nothing from core/ or rules/."""
