"""The soft errors of web_fetch: ``[code] message — what to do``, as an ``agentloop.ToolError``.

agentloop hands a ``ToolError`` to the model as ``Error: <message>`` with
``is_error=True``; the code in brackets lets a model (and a reader of the
transcript) tell a refusal it should not retry from a failure it may.
"""

from __future__ import annotations

from agentloop_tools._errors import FetchRefusal
from agentloop_tools.web._tool_errors import FETCH_CODES

__all__ = ["CODES", "FetchRefusal", "shown"]

# Every code web_fetch can answer with (the table is in _tool_errors, and
# docs/tool-errors.md).
CODES = FETCH_CODES


def shown(value: object, limit: int = 200) -> str:
    """A value quoted for an error message: escapes newlines, cut to ``limit`` characters."""
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 4] + "...'"
