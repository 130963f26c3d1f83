"""What the audit reports: one ``Violation`` per place a turn reached a domain it must not."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from agentloop_tools.web._policy._verdict import verdict

type Mode = Literal["allow", "block"]
type Where = Literal["source", "citation", "text", "tool-call", "tool-result", "redirect", "robots"]


@dataclass(frozen=True, slots=True)
class Violation:
    """One place a finished turn reached a domain the policy does not permit.

    Attributes:
        url: the URL or host as it appears (a source or citation URL, or the text as
            written in the answer).
        where: ``"source"`` (a page a hosted tool consulted), ``"citation"`` or
            ``"text"`` (a link or a mention in the answer); for our client-side
            tools, ``"tool-call"`` (a URL, or a ``site:`` host, in the arguments the
            model passed: a page ``web_fetch`` was asked for, a search's query),
            ``"redirect"`` (a redirect hop ``web_fetch`` followed), ``"robots"`` (a
            robots.txt ``web_fetch`` read, or its redirect hop: judged by its host, see
            :func:`robots_policy`) or
            ``"tool-result"`` (a URL our tool's output showed the model: the final
            URL ``web_fetch`` read, a ``web_search`` result).
        message_index: index of the message in the transcript.
        rule: the block rule that matched, or None for "not on the allowlist".
        span: for ``where="text"``, the ``(start, end)`` offsets of ``url`` in the
            message's text (its text parts joined without separators); else None.
        conversation: which conversation of several it was found in: the index
            ``AgentloopEvidence.audit`` gives; ``DomainPolicy.audit`` reads one
            conversation and leaves it 0. Text shows it numbered from 1
            (``str(violation)`` says "conversation 2" for index 1).
    """

    url: str
    where: Where
    message_index: int
    rule: str | None
    span: tuple[int, int] | None = None
    conversation: int = 0

    @property
    def verdict(self) -> str:
        """Why it is a violation, worded as every report and message words it."""
        return verdict(self.rule)

    def __str__(self) -> str:
        place = f"conversation {self.conversation + 1}, " if self.conversation else ""
        return f"{place}message {self.message_index} {self.where}: {self.url} ({self.verdict})"
