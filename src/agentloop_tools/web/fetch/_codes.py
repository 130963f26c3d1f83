"""The soft errors of web_fetch: ``[code] message — what to do``, as an ``agentloop.ToolError``.

agentloop hands a ``ToolError`` to the model as ``Error: <message>`` with
``is_error=True``; the code in brackets lets a model (and a reader of the
transcript) tell a refusal it should not retry from a failure it may.
"""

from __future__ import annotations

from agentloop_tools._errors import FetchRefusal

__all__ = ["CODES", "FetchRefusal", "shown"]

# Every code web_fetch can answer with; docs/client-fetch.md has the table.
CODES = frozenset(
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


def shown(value: object, limit: int = 200) -> str:
    """A value quoted for an error message: escapes newlines, cut to ``limit`` characters."""
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 4] + "...'"
