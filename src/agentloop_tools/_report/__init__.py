"""Internal: the evidence records and the JSON, HTML and audit reports."""
