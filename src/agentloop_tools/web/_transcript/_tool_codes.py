"""The codes our client-side tools answer with: a fact of the text they write.

The tools raise them (``_tool_errors.py`` holds the contract and re-exports these);
the transcript readers recognise them in a result read back, so the table lives
below both.
"""

from __future__ import annotations

# The one table of codes, per tool: docs/tool-errors.md has a row for each (a test
# checks both ways). Fatal codes end the tool's use for the run (``on_fatal``).
SEARCH_CODES = frozenset(
    {
        "missing-query",
        "domain-lists-conflict",
        "invalid-domain",
        "query-rejected",
        "search-failed",
        "rate-limited",
        "not-configured",
        "quota-exceeded",
    }
)
FATAL_CODES = frozenset({"not-configured", "quota-exceeded"})
FETCH_CODES = frozenset(
    {
        "invalid-url",
        "unsupported-scheme",
        "userinfo-not-allowed",
        "url-too-long",
        "hostname-too-shallow",
        "blocked-by-policy",
        "blocked-address",
        "disallowed-by-robots",
        "fetch-error",
        "timeout",
        "too-large",
        "unsupported-content",
        "no-text",
        "invalid-start",
    }
)
# web_fetch answers these before the page is requested: nothing of it was read.
FETCH_REFUSALS = FETCH_CODES - {
    "fetch-error",
    "timeout",
    "too-large",
    "unsupported-content",
    "no-text",
}
