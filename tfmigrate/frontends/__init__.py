"""What users touch: the CLI, reports, the language server, flake8, baseline, add-noqa."""
