"""Internal: DomainPolicy, the text audit and the violations it reports."""
