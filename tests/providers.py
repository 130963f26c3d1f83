"""Run real agentloop agents against scripted provider responses (no network, no keys).

Responses go through the real SDK / HTTP client and agentloop's own adapters via an
in-memory transport, so transcripts are exactly what an agent would produce.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from typing import Any

import httpx
import httpx2
from agentloop import Agent, HostedTool, Transcript
from agentloop.config import Settings, build_client
from agentloop.provider import ModelRequest

from agentloop_tools.web import native_web_search

ENV = {
    "anthropic": {"LLM_PROVIDER": "anthropic", "ANTHROPIC_API_KEY": "test-key"},
    "openai": {"LLM_PROVIDER": "openai", "OPENAI_API_KEY": "test-key"},
}


class Script:
    """Serves the given bodies in order and keeps the requests it received."""

    def __init__(self, bodies: Iterable[dict[str, Any] | str]) -> None:
        self.bodies = list(bodies)
        self.requests: list[dict[str, Any]] = []

    def _next(self, content: bytes) -> tuple[int, bytes]:
        self.requests.append(json.loads(content) if content else {})
        if not self.bodies:
            raise AssertionError("the agent made more requests than the script has responses")
        body = self.bodies.pop(0)
        return 200, (body if isinstance(body, str) else json.dumps(body)).encode()

    def http_client(self, provider: str) -> httpx.Client | httpx2.Client:
        headers = {"content-type": "application/json"}
        if provider == "anthropic":

            def anthropic(request: httpx2.Request) -> httpx2.Response:
                status, content = self._next(request.content)
                return httpx2.Response(status, content=content, headers=headers)

            return httpx2.Client(transport=httpx2.MockTransport(anthropic))

        def openai(request: httpx.Request) -> httpx.Response:
            status, content = self._next(request.content)
            return httpx.Response(status, content=content, headers=headers)

        return httpx.Client(transport=httpx.MockTransport(openai))


def converse(
    provider: str,
    bodies: Sequence[dict[str, Any]],
    prompt: str = "question",
    tools: Sequence[HostedTool] | None = None,
) -> Transcript:
    """One user turn through a real agent; the provider answers with ``bodies`` in order."""
    script = Script(bodies)
    with (
        script.http_client(provider) as http,
        Agent.from_env(
            ENV[provider],
            list(tools if tools is not None else [native_web_search()]),
            http_client=http,
        ) as agent,
    ):
        transcript = Transcript()
        transcript.add_user_message(prompt)
        agent.converse(transcript)
    assert not script.bodies, "the agent stopped before the script ended"
    return transcript


def read_responses(provider: str, bodies: Sequence[dict[str, Any] | str]) -> Transcript:
    """Each recorded response as agentloop's client reads it, appended as the loop would.

    A paused turn (``pause_turn``) is continued in the same message, as agentloop does.
    """
    script = Script(bodies)
    transcript = Transcript()
    paused = False
    with script.http_client(provider) as http:
        client = build_client(Settings.from_env(ENV[provider]), http_client=http)
        while script.bodies:
            if not paused:
                transcript.add_user_message("recorded turn")
            response = client.complete(ModelRequest(messages=tuple(transcript.messages)))
            if paused:
                transcript.extend_last_assistant(response.content, origin=response.origin)
            else:
                transcript.add_assistant_message(response.content, origin=response.origin)
            paused = response.raw_stop_reason == "pause_turn"
    return transcript
