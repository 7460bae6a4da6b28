"""One module per rule; every Rule subclass here is found automatically (see tfmigrate.rule)."""
