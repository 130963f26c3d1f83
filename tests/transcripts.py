"""Transcripts for tests: a real agent's turn against a script, and reading them back.

``converse`` is only the public pieces put together once (``ScriptedProvider`` from
``agentloop_tools.testing`` serving the responses, a real ``agentloop.Agent`` from
``Agent.from_env``), so the suites that need a transcript do not each repeat the
environment, the prompt and the check that the whole script was used. It copies none of
the package's machinery: the responses are built with the package's public builders.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from agentloop import Agent, Transcript
from agentloop.transcript import ToolResultPart

from agentloop_tools.testing import ScriptedProvider
from agentloop_tools.web import native_web_search

# What Agent.from_env needs to build each provider's client; no request leaves the process.
ENV = {
    "anthropic": {"LLM_PROVIDER": "anthropic", "ANTHROPIC_API_KEY": "test-key"},
    "openai": {"LLM_PROVIDER": "openai", "OPENAI_API_KEY": "test-key"},
}


def converse(
    provider: str, responses: Sequence[dict[str, Any]], prompt: str = "question"
) -> Transcript:
    """One user turn through a real agent with ``native_web_search()``, answered by
    ``responses`` in order."""
    scripted = ScriptedProvider(provider, responses)
    with (
        scripted.http_client() as http,
        Agent.from_env(ENV[provider], [native_web_search()], http_client=http) as agent,
    ):
        transcript = Transcript()
        transcript.add_user_message(prompt)
        agent.converse(transcript)
    assert not scripted.responses, f"the agent stopped before the script ended: {scripted!r}"
    return transcript


def results(transcript: Transcript) -> list[ToolResultPart]:
    """Every tool result in the transcript, in order."""
    return [
        part
        for message in transcript.messages
        for part in message.content
        if isinstance(part, ToolResultPart)
    ]
