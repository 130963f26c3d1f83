"""Every exception the package raises, in one tree under :class:`AgentloopToolsError`.

``except AgentloopToolsError`` catches anything of ours. Where callers already catch a
built-in (a configuration or input error is a ``ValueError``, a failed ``assert_*`` an
``AssertionError``), that base is kept as a second parent, so existing ``except`` clauses
keep working.

Two classes stand outside the tree on purpose:

- :class:`FatalToolError` derives from ``BaseException``: agentloop's executor turns every
  ``Exception`` a tool raises into a message for the model and lets only a
  ``BaseException`` end the run.
- ``Overtime``, the web tools' deadline exceeded mid-body, is an ``httpx.TimeoutException``
  (defined beside the deadline stream): the retry logic that catches httpx timeouts must
  see it as one (and this module imports no transport).

This module imports nothing of the package at import time, so any layer may use it.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from agentloop import ToolError

_CODE = re.compile(r"[a-z][a-z0-9]*(?:-[a-z0-9]+)*")


class AgentloopToolsError(Exception):
    """The base of every exception raised by agentloop_tools."""

    __module__ = "agentloop_tools"


# --- configuration and usage -------------------------------------------------------------


class ConfigError(AgentloopToolsError, ValueError):
    """The configuration cannot be used; the message names the file and the fix."""


class NoSearchBackend(ConfigError):
    """The mapping configures no search backend (still a ``ValueError``, as before).

    Its own type so the pytest plugin can tell a test whose ``agentloop_env`` names
    none which ini key names one, rather than show a traceback into the registry.
    """


class UsageProblem(AgentloopToolsError):
    """Bad command-line usage: reported on stderr with exit code 2."""


class BaselineError(AgentloopToolsError, ValueError):
    """A baseline that cannot be read or written: a usage problem (exit 2)."""


class SkipProblem(AgentloopToolsError, ValueError):
    """``--respect-gitignore`` could not be honoured: a usage problem (exit 2)."""


# --- reading files and recordings --------------------------------------------------------


class InputError(AgentloopToolsError, ValueError):
    """A file that cannot be read whole and safely; the message says why."""

    __module__ = "agentloop_tools.cassettes"


class AdoptRefused(InputError):
    """``adopt`` wrote nothing to the cassette; the message says why."""


class StreamError(AgentloopToolsError, ValueError):
    """A recorded event stream cannot be turned into a response (no events, broken JSON)."""

    __module__ = "agentloop_tools.cassettes"


class UnreadableInteraction(AgentloopToolsError):
    """Raised while classifying one recorded interaction, with the reason it cannot be read."""


class Undecodable(AgentloopToolsError, ValueError):
    """A value that cannot be decoded far enough to be checked for credentials."""


class CassetteSecretError(AgentloopToolsError, ValueError):
    """A cassette about to be written still contains something that looks like a credential.

    Attributes:
        leaks: what was found (records of where, what kind, the masked value).
    """

    __module__ = "agentloop_tools.cassettes"

    def __init__(self, message: str, leaks: Sequence[Any] = ()) -> None:
        super().__init__(message)
        self.leaks: list[Any] = list(leaks)


class RecordingRefused(AgentloopToolsError):
    """Raised inside the checked serializer: the cassette must not reach the disk."""

    def __init__(self, leaks: Sequence[Any]) -> None:
        super().__init__("refused")
        self.leaks: list[Any] = list(leaks)


# --- the client-side tools ---------------------------------------------------------------


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

    def tool_error(self, trailer: str = "") -> ToolError:
        """The soft form: the model sees the text (and ``trailer`` lines); the run goes on."""
        from agentloop import ToolError

        return ToolError(str(self) + trailer)

    def fatal(self, tool: str) -> FatalToolError:
        """The hard form: raised from a handler, it ends the conversation."""
        return FatalToolError(self, tool)


class FetchRefusal(AgentloopToolsError):
    """One soft ``web_fetch`` error on its way to the model (becomes a ``ToolError``).

    Its code is one of ``web._fetch._codes.CODES`` (a test checks every raise site).

    Attributes:
        failure: the code, message and remedy.
    """

    def __init__(self, code: str, message: str, remedy: str) -> None:
        self.failure = ToolFailure(code, message, remedy)
        super().__init__(str(self.failure))

    @property
    def code(self) -> str:
        return self.failure.code

    def tool_error(self, trailer: str = "") -> ToolError:
        """The ``ToolError`` the model sees, with ``trailer`` lines (redirects followed)."""
        return self.failure.tool_error(trailer)


class ExtractionError(AgentloopToolsError):
    """A fetched body could not be read as its type (a broken or encrypted PDF)."""


class PdfOverBudget(AgentloopToolsError):
    """Raised from pypdf's operator visitor: the PDF's reading must stop."""


class ResponseTooLarge(AgentloopToolsError):
    """A search API's decoded body is over the cap, expands too much, or cannot be decoded."""


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

    __module__ = "agentloop_tools.web"

    def __init__(self, failure: ToolFailure, tool: str) -> None:
        super().__init__(f"{tool}: {failure}")
        self.failure = failure
        self.tool = tool

    @property
    def code(self) -> str:
        """The failure's code, e.g. ``"not-configured"`` or ``"quota-exceeded"``."""
        return self.failure.code


# --- tests -------------------------------------------------------------------------------


class EvidenceAssertionError(AgentloopToolsError, AssertionError):
    """An ``assert_*`` helper found the evidence does not say what the test expects.

    The message is redacted (no credential) and made safe for a terminal.
    """

    __module__ = "agentloop_tools.testing"

    # What kind of failure this is for the evidence reports ("domain-policy"), if any.
    failure_kind: str | None = None

    def __init__(self, message: str, *, kind: str | None = None) -> None:
        from agentloop_tools._secrets import redact
        from agentloop_tools._visible import visible

        super().__init__(visible(redact(message), layout=True))
        self.failure_kind = kind
