"""The soft errors of web_fetch: ``[code] message — what to do``, as an ``agentloop.ToolError``.

agentloop hands a ``ToolError`` to the model as ``Error: <message>`` with
``is_error=True``; the code in brackets lets a model (and a reader of the
transcript) tell a refusal it should not retry from a failure it may.
"""

from __future__ import annotations

from agentloop import ToolError

from agentloop_tools.web._tool_errors import FETCH_CODES, ToolFailure

# Every code web_fetch can answer with (the table is in _tool_errors, and
# docs/tool-errors.md).
CODES = FETCH_CODES


class FetchRefusal(Exception):
    """One soft error on its way to the model (becomes a ``ToolError``).

    Carries a :class:`ToolFailure`, the contract ``web_search`` uses too, so both
    tools format ``[code] message — what to do`` the same way.

    Attributes:
        failure: the code (one of ``CODES``), message and remedy.
    """

    def __init__(self, code: str, message: str, remedy: str) -> None:
        assert code in CODES, code
        self.failure = ToolFailure(code, message, remedy)
        super().__init__(str(self.failure))

    @property
    def code(self) -> str:
        return self.failure.code

    @property
    def message(self) -> str:
        return self.failure.message

    @property
    def remedy(self) -> str:
        return self.failure.remedy

    def tool_error(self, trailer: str = "") -> ToolError:
        """The ``ToolError`` the model sees, with ``trailer`` lines (redirects followed)."""
        return ToolError(str(self.failure) + trailer)


def shown(value: object, limit: int = 200) -> str:
    """A value quoted for an error message: escapes newlines, cut to ``limit`` characters."""
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 4] + "...'"
