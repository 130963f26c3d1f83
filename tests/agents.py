"""Run a real agentloop Agent on a scripted model: the one helper the suites share.

The model answers from a script, in order: ``ModelResponse`` objects on agentloop's own
``FakeClient``, or, given a ``provider``, provider-shaped JSON bodies (built with the
package's public builders) served over HTTP by ``ScriptedProvider`` to the client
``Agent.from_env`` builds. The agent and the tools are real; no request leaves the
process.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from agentloop import Agent, HostedTool, ToolSpec, Transcript
from agentloop.providers.fake import FakeClient

from agentloop_tools.testing import ScriptedProvider

# What Agent.from_env needs to build each provider's client.
ENV = {
    "anthropic": {"LLM_PROVIDER": "anthropic", "ANTHROPIC_API_KEY": "test-key"},
    "openai": {"LLM_PROVIDER": "openai", "OPENAI_API_KEY": "test-key"},
    "openrouter": {"LLM_PROVIDER": "openrouter", "OPENROUTER_API_KEY": "test-key"},
}


def converse(
    tools: Sequence[ToolSpec | HostedTool],
    script: Sequence[Any],
    *,
    prompt: str,
    provider: str | None = None,
) -> Transcript:
    """One user turn (``prompt``) through a real Agent with ``tools``.

    Without ``provider`` the script is ``ModelResponse`` objects for ``FakeClient``; with
    one it is that provider's response bodies, and the agent must use the whole script.
    """
    transcript = Transcript()
    transcript.add_user_message(prompt)
    if provider is None:
        Agent(list(tools), client=FakeClient(*script)).converse(transcript)
        return transcript
    scripted = ScriptedProvider(provider, script)
    with (
        scripted.http_client() as http,
        Agent.from_env(ENV[provider], list(tools), http_client=http) as agent,
    ):
        agent.converse(transcript)
    assert not scripted.responses, f"the agent stopped before the script ended: {scripted!r}"
    return transcript
