"""The type of the ``agentloop_agent`` fixture's value, for annotations in users' tests."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Literal, Protocol

if TYPE_CHECKING:
    from agentloop import Agent, HostedTool
    from agentloop.tooling import ToolSpec


class AgentFactory(Protocol):
    """``agentloop_agent(tools=(), *, provider=None, model=None, openai_api=None,
    **agent_kwargs) -> Agent``."""

    def __call__(
        self,
        tools: Sequence[ToolSpec | HostedTool] = (),
        *,
        provider: str | None = None,
        model: str | None = None,
        openai_api: Literal["completions", "responses"] | None = None,
        **agent_kwargs: Any,
    ) -> Agent: ...
