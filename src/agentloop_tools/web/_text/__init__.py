"""Internal: where the links, mentions and command hosts of a text are."""
