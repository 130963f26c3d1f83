"""The conversations an assertion helper reads, each from its ``since`` on."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from agentloop import Citation, Source, Transcript
from agentloop.transcript import HostedToolPart, Message

from agentloop_tools._errors import EvidenceAssertionError
from agentloop_tools.testing._evidence import AgentloopEvidence
from agentloop_tools.web import Link, citations, links, sources
from agentloop_tools.web._transcript._messages import messages_of, start_index

type Evidence = Transcript | Sequence[Message] | AgentloopEvidence | Any


@dataclass(frozen=True, slots=True)
class Conversation:
    """The messages of one conversation, and the index the helper reads from."""

    messages: Sequence[Message]
    since: int

    def citations(self) -> list[Citation]:
        return citations(self.messages, since=self.since)

    def sources(self) -> list[Source]:
        return sources(self.messages, since=self.since)

    def links(self) -> list[Link]:
        return links(self.messages, since=self.since)

    def read(self) -> Sequence[Message]:
        return self.messages[self.since :]


def read_conversations(transcript: Evidence, since: int) -> list[Conversation]:
    """Each conversation of the evidence (one for a transcript), read from ``since`` on."""
    if isinstance(since, bool) or not isinstance(since, int):
        raise TypeError(f"since must be a message index (int), got {since!r}.")
    if isinstance(transcript, AgentloopEvidence):
        transcripts: list[Any] = list(transcript.transcripts)
    else:
        transcripts = [transcript]
    if not transcripts:
        raise EvidenceAssertionError(
            "No conversation was captured in agentloop_evidence, so there is nothing to check. "
            "Build agents with the agentloop_agent fixture, or pass "
            "observer=agentloop_evidence.observer to agents you build yourself."
        )
    found = []
    for item in transcripts:
        messages = messages_of(item)
        found.append(Conversation(messages, start_index(since, len(messages))))
    return found


def searches(conversations: Sequence[Conversation]) -> list[HostedToolPart]:
    """The hosted tool calls of the conversations, in order."""
    return [
        part
        for conversation in conversations
        for message in conversation.read()
        for part in message.content
        if isinstance(part, HostedToolPart)
    ]
