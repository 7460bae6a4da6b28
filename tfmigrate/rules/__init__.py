"""One module per rule; every Rule subclass here is found automatically (tfmigrate.core.registry); their base is tfmigrate.rules.base."""
