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

import re
from dataclasses import dataclass

from agentloop import ToolError

_CODE = re.compile(r"[a-z][a-z0-9]*(?:-[a-z0-9]+)*")

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


@dataclass(frozen=True, slots=True)
class ToolFailure:
    """One failure, as the model reads it.

    Attributes:
        code: a stable, lower-case, hyphenated code such as ``"search-failed"``.
        message: what happened, in one sentence.
        remedy: what the model (or the application) should do next.
    """

    code: str
    message: str
    remedy: str

    def __post_init__(self) -> None:
        if not _CODE.fullmatch(self.code):
            raise ValueError(
                f"tool error code {self.code!r} is not accepted; use lower-case words "
                "joined by hyphens, such as 'search-failed'."
            )

    def __str__(self) -> str:
        return f"[{self.code}] {self.message} — {self.remedy}"

    def tool_error(self) -> ToolError:
        """The soft form: the model sees the text and the run goes on."""
        return ToolError(str(self))

    def fatal(self, tool: str) -> FatalToolError:
        """The hard form: raised from a handler, it ends the conversation."""
        return FatalToolError(self, tool)


class FatalToolError(BaseException):
    """A client-side tool cannot work for the rest of the run; raised with ``on_fatal="raise"``.

    Derives from ``BaseException`` on purpose: agentloop's executor turns every
    ``Exception`` into a tool result for the model, and lets only a
    ``BaseException`` through. The conversation then ends (agentloop records it as
    cancelled) and this error reaches the code that called ``Agent.run`` /
    ``Agent.converse``. Catch it there by name; a bare ``except Exception`` does not.

    Attributes:
        failure: the code, message and remedy.
        tool: the name of the tool that failed.
    """

    def __init__(self, failure: ToolFailure, tool: str) -> None:
        super().__init__(f"{tool}: {failure}")
        self.failure = failure
        self.tool = tool

    @property
    def code(self) -> str:
        """The failure's code, e.g. ``"not-configured"`` or ``"quota-exceeded"``."""
        return self.failure.code
