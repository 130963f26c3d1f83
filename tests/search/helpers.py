"""Drive web_search through a real agentloop Agent: a FakeClient model, a fake clock.

The search API itself is scripted with the public ``agentloop_tools.testing.ScriptedSearch``
and its builders (``brave_results`` and the rest), not with copies kept here.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from agentloop import Transcript
from agentloop.provider import ModelResponse, StopReason, Usage
from agentloop.tooling import ToolSpec
from agentloop.transcript import TextPart, ToolCallPart

from agentloop_tools.testing import ScriptedSearch
from agentloop_tools.web import web_search
from agentloop_tools.web.backends import SearchBackendLike, brave
from tests.agents import converse
from tests.transcripts import results as results

BRAVE_KEY = "BSA-test-secret-0123456789"
TAVILY_KEY = "tvly-test-secret-0123456789"
EXA_KEY = "exa-test-secret-0123456789"


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


def scripted_tool(
    script: ScriptedSearch,
    backend: SearchBackendLike | None = None,
    *,
    clock: Clock | None = None,
    **options: Any,
) -> ToolSpec:
    """``web_search`` on ``backend`` (Brave with the test key by default) answered by
    ``script``, waiting on ``clock`` (a fresh fake clock by default)."""
    clock = clock or Clock()
    return web_search(
        backend or brave(BRAVE_KEY),
        http_client=script.http_client(),
        sleep=clock.sleep,
        clock=clock,
        **options,
    )


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
    return converse([tool], script, prompt="Research this.")
