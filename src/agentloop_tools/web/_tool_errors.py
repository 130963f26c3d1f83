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
from agentloop_tools.web._transcript._tool_codes import FATAL_CODES, FETCH_CODES, SEARCH_CODES

__all__ = [
    "FATAL_CODES",
    "FETCH_CODES",
    "SEARCH_CODES",
    "TOOL_ERROR_CODES",
    "FatalToolError",
    "ToolFailure",
]

# One table per tool; docs/tool-errors.md has a row for each code (a test checks both ways).
TOOL_ERROR_CODES: dict[str, frozenset[str]] = {
    "web_search": SEARCH_CODES,
    "web_fetch": FETCH_CODES,
}
