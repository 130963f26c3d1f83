"""Internal: the client-side web_search tool, its engine and renderer."""
