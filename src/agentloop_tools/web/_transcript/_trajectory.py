"""Every tool call of a conversation, in order: hosted by the provider or run by the client.

agentloop models a provider-run tool as a ``HostedToolPart`` (its kind, id, query,
sources, error); what the call asked for beyond a query (a fetch's URL, an OpenAI
``open_page``) and the provider's error codes stay in ``Message.origin.raw``. So each
hosted part is read with its raw blocks when they are there (matched by id): Anthropic
``server_tool_use`` + ``*_tool_result``, OpenAI ``web_search_call``. A continued turn
(``pause_turn``) or a mixed client/server turn can bring a call's result in a later
part or message, under the same id: that is one call, placed where it was asked.
Client calls are paired with their results as the report pairs them; ours
(``web_search``, ``web_fetch``) say what came of them, others are ``ok`` unless their
result is an error.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from agentloop import Transcript
from agentloop.transcript import HostedToolPart, Message, ToolCallPart, ToolResultPart

from agentloop_tools.web._transcript._messages import messages_of, start_index
from agentloop_tools.web._transcript._tool_calls import (
    Outcome,
    ToolCall,
    client_calls,
    read_ours,
)

# Anthropic's error codes that mean the provider declined the URL before reading it.
_REFUSALS = frozenset({"url_not_allowed", "url_not_in_prior_context"})
_ACTION_FIELDS = ("query", "queries", "url", "pattern")


def tool_calls(transcript: Transcript | Sequence[Message], *, since: int = 0) -> list[ToolCall]:
    """Every tool call of a conversation, in the order the model made them.

    Hosted searches and fetches (their queries and URLs from the provider's own
    blocks, their error codes such as ``max_uses_exceeded``), our client-side
    ``web_search`` / ``web_fetch`` (with their codes such as ``blocked-by-policy``) and
    any other client tool. A result recorded later than its call (a paused turn, a
    mixed client/server turn) is that call's result, not another call.

    Args:
        transcript: an agentloop ``Transcript``, a ``ConversationResult`` or a list of
            messages.
        since: index of the first message to read calls from; negative counts from
            the end. Results are looked for in every message after the call.
    """
    messages = messages_of(transcript)
    start = start_index(since, len(messages))
    clients = iter(client_calls(messages, start))  # in the order walked below
    results = _hosted_results(messages)
    placed: set[str] = set()
    found: list[ToolCall] = []
    for index in range(start, len(messages)):
        message = messages[index]
        blocks = _blocks_by_id(message)
        for part in message.content:
            if isinstance(part, ToolCallPart):
                paired = next(clients)
                found.append(read_ours(*paired) or _client(*paired))
            elif isinstance(part, HostedToolPart):
                if part.call_id is not None and part.call_id in placed:
                    continue  # the result of a call placed earlier
                if part.call_id is not None:
                    placed.add(part.call_id)
                found.append(_hosted(part, index, blocks, results))
    return found


def _client(call: ToolCallPart, index: int, result: tuple[int, ToolResultPart] | None) -> ToolCall:
    """A client tool not ours: its outcome is what agentloop recorded of its result."""
    if result is None:
        return ToolCall(
            name=call.tool_name,
            arguments=dict(call.arguments),
            outcome="no-result",
            message_index=index,
            call_id=call.id,
        )
    at, part = result
    return ToolCall(
        name=call.tool_name,
        arguments=dict(call.arguments),
        outcome="failed" if part.is_error else "ok",
        message_index=index,
        call_id=call.id,
        result_index=at,
        error=part.content.split("\n", 1)[0] if part.is_error else None,
    )


def _blocks_by_id(message: Message) -> dict[str, Mapping[str, Any]]:
    """The raw blocks of one message that ask for a hosted call, by the call's id."""
    found: dict[str, Mapping[str, Any]] = {}
    if message.origin is None:
        return found
    for block in message.origin.raw:
        if not isinstance(block, Mapping):
            continue
        kind = block.get("type")
        call_id = block.get("id")
        if kind in ("server_tool_use", "web_search_call") and isinstance(call_id, str):
            found.setdefault(call_id, block)
    return found


def _hosted_results(messages: Sequence[Message]) -> dict[str, tuple[int, Mapping[str, Any]]]:
    """Each Anthropic hosted result block of the conversation, by its call's id (the first)."""
    found: dict[str, tuple[int, Mapping[str, Any]]] = {}
    for index, message in enumerate(messages):
        if message.origin is None:
            continue
        for block in message.origin.raw:
            if not isinstance(block, Mapping):
                continue
            kind = block.get("type")
            call_id = block.get("tool_use_id")
            if isinstance(kind, str) and kind.endswith("_tool_result") and isinstance(call_id, str):
                found.setdefault(call_id, (index, block))
    return found


def _hosted(
    part: HostedToolPart,
    index: int,
    blocks: Mapping[str, Mapping[str, Any]],
    results: Mapping[str, tuple[int, Mapping[str, Any]]],
) -> ToolCall:
    block = blocks.get(part.call_id) if part.call_id is not None else None
    if block is not None and block.get("type") == "web_search_call":
        return _openai(part, index, block)
    arguments: dict[str, Any] = {}
    name = part.kind
    if block is not None:
        given = block.get("input")
        arguments = dict(given) if isinstance(given, Mapping) else {}
        named = block.get("name")
        name = named if isinstance(named, str) and named else part.kind
    elif part.query is not None:
        arguments = {"query": part.query}
    result = results.get(part.call_id) if part.call_id is not None else None
    hits: tuple[tuple[str, str], ...] = ()
    read = title = None
    outcome: Outcome
    code: str | None
    if result is not None:
        outcome, code, hits, read, title = _read_result(result[1])
    elif block is not None:
        outcome, code = "no-result", None
    else:  # no raw blocks (a transcript built without them): the part is all we know
        outcome, code = ("failed", part.error) if part.error else ("ok", None)
    url = arguments.get("url")
    query = arguments.get("query", part.query)
    return ToolCall(
        name=str(name),
        arguments=arguments,
        hosted=True,
        outcome=outcome,
        code=code,
        message_index=index,
        call_id=part.call_id,
        result_index=None if result is None else result[0],
        error=f"{name} failed: {code}" if code else None,
        query=query if isinstance(query, str) else None,
        hits=hits or tuple((s.url, s.title or "") for s in part.sources),
        url=url if isinstance(url, str) else None,
        read=read,
        title=title,
    )


def _read_result(
    block: Mapping[str, Any],
) -> tuple[Outcome, str | None, tuple[tuple[str, str], ...], str | None, str | None]:
    """An Anthropic result block: outcome, error code, hits, the page read and its title."""
    content = block.get("content")
    if isinstance(content, Mapping):
        kind = str(content.get("type", ""))
        if kind.endswith("_error"):
            code = content.get("error_code")
            code = code if isinstance(code, str) and code else "unknown"
            return ("refused" if code in _REFUSALS else "failed"), code, (), None, None
        url = content.get("url")
        document = content.get("content")
        title = document.get("title") if isinstance(document, Mapping) else None
        return (
            "ok",
            None,
            (),
            url if isinstance(url, str) else None,
            title if isinstance(title, str) else None,
        )
    if block.get("is_error") is True:  # an MCP-style result: an error without a code
        return "failed", None, (), None, None
    return "ok", None, tuple(_hits(content)), None, None


def _hits(content: object) -> Iterator[tuple[str, str]]:
    if isinstance(content, list | tuple):
        for item in content:
            if isinstance(item, Mapping) and isinstance(item.get("url"), str):
                title = item.get("title")
                yield item["url"], title if isinstance(title, str) else ""


def _openai(part: HostedToolPart, index: int, item: Mapping[str, Any]) -> ToolCall:
    """An OpenAI ``web_search_call``: its action is the call; ``status`` its outcome."""
    action = item.get("action")
    action = action if isinstance(action, Mapping) else {}
    arguments: dict[str, Any] = {}
    if isinstance(action.get("type"), str):
        arguments["action"] = action["type"]
    arguments.update({key: action[key] for key in _ACTION_FIELDS if key in action})
    status = item.get("status")
    failed = status not in (None, "completed")
    url = arguments.get("url")
    query = arguments.get("query")
    return ToolCall(
        name=part.kind,
        arguments=arguments,
        hosted=True,
        outcome="failed" if failed else "ok",
        code=str(status) if failed else None,
        message_index=index,
        call_id=part.call_id,
        result_index=index,
        error=f"web_search_call {status}" if failed else None,
        query=query if isinstance(query, str) else None,
        hits=tuple(_hits(action.get("sources"))),
        url=url if isinstance(url, str) else None,
    )
