"""tfmigrate: a TF1-to-TF2 migration linter and fixer."""
__version__ = "0.1.0"
