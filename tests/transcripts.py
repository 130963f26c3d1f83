"""Transcripts for tests: a real agent's turn against a script, and reading them back.

``converse`` is ``tests.agents.converse`` with ``native_web_search()`` as the tool, so
the suites that need a hosted-search transcript do not each repeat the tool, the
environment, the prompt and the check that the whole script was used. It copies none of
the package's machinery: the responses are built with the package's public builders.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from agentloop import Transcript
from agentloop.transcript import ToolResultPart

from agentloop_tools.web import native_web_search
from tests import agents


def converse(
    provider: str, responses: Sequence[dict[str, Any]], prompt: str = "question"
) -> Transcript:
    """One user turn through a real agent with ``native_web_search()``, answered by
    ``responses`` in order (``tests.agents.converse``)."""
    return agents.converse([native_web_search()], responses, prompt=prompt, provider=provider)


def results(transcript: Transcript) -> list[ToolResultPart]:
    """Every tool result in the transcript, in order."""
    return [
        part
        for message in transcript.messages
        for part in message.content
        if isinstance(part, ToolResultPart)
    ]
