"""Drive web_search through a real agentloop Agent: FakeClient model, MockTransport API."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import httpx
from agentloop import Agent, Transcript
from agentloop.provider import ModelResponse, StopReason, Usage
from agentloop.providers.fake import FakeClient
from agentloop.tooling import ToolSpec
from agentloop.transcript import TextPart, ToolCallPart

from tests.transcripts import results as results

BRAVE_KEY = "BSA-test-secret-0123456789"
TAVILY_KEY = "tvly-test-secret-0123456789"
EXA_KEY = "exa-test-secret-0123456789"

type Reply = tuple[int, Any] | tuple[int, Any, dict[str, str]] | httpx.TransportError


@dataclass
class Api:
    """A scripted search API: each request takes the next reply; requests are kept."""

    replies: list[Reply]
    requests: list[httpx.Request] = field(default_factory=list)

    def handle(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        if not self.replies:
            raise AssertionError(f"the tool sent more requests than scripted: {request.url}")
        reply = self.replies.pop(0)
        if isinstance(reply, httpx.TransportError):
            raise reply
        status, body, *rest = reply
        headers = rest[0] if rest else {}
        content = body.encode() if isinstance(body, str) else json.dumps(body).encode()
        return httpx.Response(status, content=content, headers=headers)

    def client(self) -> httpx.Client:
        return httpx.Client(transport=httpx.MockTransport(self.handle))


@dataclass
class Clock:
    """A fake monotonic clock; ``sleep`` advances it and records every wait."""

    now: float = 1000.0
    waits: list[float] = field(default_factory=list)

    def __call__(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.waits.append(seconds)
        self.now += seconds


def response(*parts: Any, stop: StopReason = StopReason.END_TURN) -> ModelResponse:
    return ModelResponse(
        content=tuple(parts), stop_reason=stop, usage=Usage(), model="fake-1", provider="fake"
    )


def call(query: Any, count: Any = None, *, name: str = "web_search", n: int = 1) -> ToolCallPart:
    return ToolCallPart(id=f"call_{n}", tool_name=name, arguments={"query": query, "count": count})


def run_agent(tool: ToolSpec, *turns: Sequence[ToolCallPart], answer: str = "Done.") -> Transcript:
    """One conversation: each turn is a list of tool calls (run in parallel), then the answer."""
    script = [response(*calls, stop=StopReason.TOOL_USE) for calls in turns]
    script.append(response(TextPart(text=answer)))
    agent = Agent([tool], client=FakeClient(*script))
    transcript = Transcript()
    transcript.add_user_message("Research this.")
    return agent.converse(transcript)


def brave_body(*hits: tuple[str, str, str]) -> dict[str, Any]:
    """A Brave web search body (the documented shape), one result per (title, url, description)."""
    return {
        "type": "search",
        "query": {"original": "q", "more_results_available": True},
        "web": {
            "type": "search",
            "results": [
                {
                    "title": title,
                    "url": url,
                    "description": description,
                    "is_source_local": False,
                    "is_source_both": False,
                    "page_age": "2024-10-07T00:00:00",
                    "profile": {"name": "Python", "url": url},
                    "language": "en",
                    "family_friendly": True,
                    "type": "search_result",
                    "meta_url": {"scheme": "https", "netloc": "x", "path": "/"},
                }
                for title, url, description in hits
            ],
            "family_friendly": True,
        },
    }
