"""One transcript built from a cassette's model calls, requests first, then responses."""

from __future__ import annotations

from typing import Any

from agentloop import Transcript
from agentloop.provider import StopReason
from agentloop.transcript import Message, TextPart, ToolCallPart, ToolResultPart

from agentloop_tools.cassettes._reading._history import History, Said


class Conversation:
    """Builds one transcript from model calls, requests first, then responses.

    ``sources`` holds, for each message, the interaction it came from (None for a prompt).
    """

    def __init__(self) -> None:
        self.transcript = Transcript()
        self.sources: list[int | None] = []
        self.paused = False
        self.calls: set[str] = set()
        self.results: set[str] = set()

    def add(self, index: int, history: History, asked: str, response: Any) -> None:
        """Interaction ``index``: what its request carried, then its response (if any)."""
        messages = self.transcript.messages
        tail: list[Any] = []
        if history.readable:
            self._earlier(index, history)
            tail = [part for said in split(history.messages)[1] for part in said.parts]
        content = response.content if response is not None else ()
        if not tail:
            if not content:
                return
            if self.paused and messages and messages[-1].role == "assistant":
                self.transcript.extend_last_assistant(content, response.origin)
                self._register(content)
                self.paused = response.stop_reason is StopReason.PAUSED
                return
            tail = [TextPart(text=asked)]
        has_results = any(isinstance(part, ToolResultPart) for part in tail)
        repeated = (
            bool(messages) and messages[-1].role == "user" and (messages[-1].content == tuple(tail))
        )  # a retried request carries the same results again
        if (has_results or content) and not repeated:
            self._append("user", tail, index if has_results else None)
        if content:
            self._append("assistant", list(content), index, response.origin)
        self.paused = response is not None and response.stop_reason is StopReason.PAUSED

    def _earlier(self, index: int, history: History) -> None:
        # What came before the last answer: the whole of it when the conversation
        # starts here (resumed from saved history), else the calls and results no
        # recorded response showed. Evidence all the same.
        fresh = not self.transcript.messages
        for said in split(history.messages)[0]:
            parts = [part for part in said.parts if fresh or self._unseen(part)]
            if parts:
                tools = any(isinstance(p, ToolCallPart | ToolResultPart) for p in parts)
                self._append(said.role, parts, index if tools else None)

    def _unseen(self, part: Any) -> bool:
        if isinstance(part, ToolCallPart):
            return part.id not in self.calls
        if isinstance(part, ToolResultPart):
            return part.call_id not in self.results
        return False

    def _append(self, role: str, parts: list[Any], index: int | None, origin: Any = None) -> None:
        self.transcript.messages.append(
            Message(role=role, content=tuple(parts), origin=origin)  # type: ignore[arg-type]
        )
        self.sources.append(index)
        self._register(parts)

    def _register(self, parts: Any) -> None:
        for part in parts:
            if isinstance(part, ToolCallPart):
                self.calls.add(part.id)
            elif isinstance(part, ToolResultPart):
                self.results.add(part.call_id)


def starts_anew(history: History) -> bool:
    """Whether a request starts a new conversation: it carries only prompts.

    Each ``agent.run`` in a test is its own transcript, so it is its own here too.
    """
    # Tool results without their calls continue a conversation (a stateful Responses
    # request sends only the new items, after previous_response_id).
    return history.readable and not any(
        said.role == "assistant" or any(isinstance(part, ToolResultPart) for part in said.parts)
        for said in history.messages
    )


def split(messages: list[Said]) -> tuple[list[Said], list[Said]]:
    """The messages up to the last assistant message, and the user messages after it."""
    last = max((i for i, said in enumerate(messages) if said.role == "assistant"), default=-1)
    return messages[: last + 1], messages[last + 1 :]
