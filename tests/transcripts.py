"""Reading transcripts in tests: shared by the client-side tool suites."""

from __future__ import annotations

from agentloop import Transcript
from agentloop.transcript import ToolResultPart


def results(transcript: Transcript) -> list[ToolResultPart]:
    """Every tool result in the transcript, in order."""
    return [
        part
        for message in transcript.messages
        for part in message.content
        if isinstance(part, ToolResultPart)
    ]
