"""One module per fix family: pure functions from a matched node to its replacement."""
