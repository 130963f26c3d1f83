"""The error contract of our client-side tools: ``[code] message — what to do``.

Every failure the model can act on is an ``agentloop.ToolError`` whose text starts
with a stable code in brackets, so the model (and a test, or a dashboard reading
transcripts) can tell a rejected query from an exhausted quota without parsing
prose. agentloop shows the text as ``Error: [code] message — remedy`` with
``is_error=True``.

A *fatal* failure (a rejected key, a used-up quota) must be able to end the run:
agentloop turns every ``Exception`` a handler raises into a message for the model,
so :class:`FatalToolError` derives from ``BaseException``, which agentloop's
executor does not catch. The conversation then ends with that exception.
"""

from __future__ import annotations

from agentloop_tools._errors import FatalToolError, ToolFailure

__all__ = [
    "FATAL_CODES",
    "FETCH_CODES",
    "SEARCH_CODES",
    "TOOL_ERROR_CODES",
    "FatalToolError",
    "ToolFailure",
]

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
TOOL_ERROR_CODES: dict[str, frozenset[str]] = {
    "web_search": SEARCH_CODES,
    "web_fetch": FETCH_CODES,
}
