"""Internal: the web_fetch page reader and its steps."""
