"""Internal: reading URLs and hosts, IP forms, domain rules and the rule index."""
