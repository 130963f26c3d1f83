"""Read the conversation a recorded model request carried: its prompts, tool calls and results.

A client-side tool (our ``web_search``, ``web_fetch``, any function tool) runs in the
agent's process, so its result reaches the model only inside the NEXT request:
Anthropic ``tool_result`` blocks in ``messages``, OpenAI Responses
``function_call_output`` items in ``input``, Chat Completions ``role: "tool"``
messages. This module turns such a request body back into agentloop messages
holding text, ``ToolCallPart`` and ``ToolResultPart`` only (what the audit and the
evidence readers look at); everything else in the request (system prompts,
reasoning, hosted-tool blocks replayed from earlier responses) is not read here.

Only Anthropic carries a tool result's error flag on the wire. For the OpenAI APIs a
result is taken as an error when its text starts with ``Error:``, which is how
agentloop writes every tool error.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from agentloop.transcript import TextPart, ToolCallPart, ToolResultPart

# What a tool result is named when the request does not say (Anthropic results carry
# only the call's id, and the call may not be in the request).
UNKNOWN_TOOL = "unknown"


@dataclass(frozen=True, slots=True)
class _ResultFields:
    """The fields of a client-tool result that hold its pieces, in one API's requests."""

    text: str  # a string or a list of text blocks
    call_id: str  # the id of the call it answers
    name: str | None = None  # the tool's name, if sent (else the call's is used)
    error: str | None = None  # a boolean error flag, if sent (else the "Error:" prefix)


_RESULT_FIELDS = {
    "anthropic": _ResultFields("content", "tool_use_id", error="is_error"),
    "openai": _ResultFields("output", "call_id"),  # a function_call_output item
    "chat": _ResultFields("content", "tool_call_id", name="name"),  # a role "tool" message
}


@dataclass(slots=True)
class Said:
    """One message of the request: its role and the parts read from it (maybe none:
    an assistant message of hosted-tool blocks still marks where the model spoke)."""

    role: str
    parts: list[Any] = field(default_factory=list)


@dataclass(slots=True)
class History:
    """The messages of one request, and what in it could not be read.

    Attributes:
        messages: user and assistant messages in request order (system prompts left out).
        problems: why a part of the request could not be read (the rest still is).
        readable: False when the body holds no conversation at all (empty, ``{}``).
    """

    messages: list[Said] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    readable: bool = True


def read_history(api: str, body: Any) -> History:
    """The conversation in a recorded request ``body`` (text, bytes or None) for ``api``.

    Never raises on the body's shape: what is wrong is named in ``problems``.
    """
    history = History()
    if isinstance(body, bytes):
        try:
            body = body.decode("utf-8")
        except UnicodeDecodeError:
            history.problems.append("the request body is binary (not UTF-8 text)")
            history.readable = False
            return history
    if body is None or (isinstance(body, str) and not body.strip()):
        history.readable = False
        return history
    if not isinstance(body, str):
        history.problems.append(f"the request body is of type {type(body).__name__}, not text")
        history.readable = False
        return history
    try:
        payload = json.loads(body)
    except ValueError:
        history.problems.append(
            "the request body is not JSON, so the tool results sent to the model cannot be read"
        )
        history.readable = False
        return history
    if not isinstance(payload, dict):
        history.problems.append("the request body is not a JSON object")
        history.readable = False
        return history
    key = "input" if api == "openai" else "messages"
    turns = payload.get(key)
    if turns is None:
        history.readable = False
        return history
    if api == "openai" and isinstance(turns, str):
        history.messages.append(Said("user", [TextPart(text=turns)]))
        return history
    if not isinstance(turns, list):
        history.problems.append(
            f"the request's {key!r} is of type {type(turns).__name__}, not a list"
        )
        history.readable = False
        return history
    reader = {"anthropic": _anthropic, "openai": _responses, "chat": _chat}[api]
    reader(turns, history)
    return history


class _Builder:
    """Gathers parts into messages, starting a new one when the role changes."""

    def __init__(self, history: History, fields: _ResultFields) -> None:
        self.history = history
        self.fields = fields
        self.names: dict[str, str] = {}

    def open(self, role: str) -> None:
        """Start a message of ``role`` unless the last one has that role already."""
        messages = self.history.messages
        if not messages or messages[-1].role != role:
            messages.append(Said(role))

    def add(self, role: str, part: Any) -> None:
        if isinstance(part, ToolCallPart):
            self.names.setdefault(part.id, part.tool_name)
        self.open(role)
        self.history.messages[-1].parts.append(part)

    def result(self, item: dict[str, Any], where: str) -> None:
        """Add the client-tool result ``item``, read from this API's fields."""
        fields = self.fields
        text, ok = _text_of(item.get(fields.text))
        if not ok:
            self.history.problems.append(
                f"{where} (a tool result) has {fields.text} of no known form"
            )
        call_id = item.get(fields.call_id)
        if not isinstance(call_id, str) or not call_id:
            self.history.problems.append(f"{where} has no call id")
            call_id = "unidentified-call"
        name = item.get(fields.name) if fields.name else None
        tool = name if isinstance(name, str) and name else self.names.get(call_id, UNKNOWN_TOOL)
        is_error = item.get(fields.error) is True if fields.error else text.startswith("Error:")
        self.add(
            "user",
            ToolResultPart(call_id=call_id, tool_name=tool, content=text, is_error=is_error),
        )

    def call(self, call_id: Any, name: Any, arguments: Any, where: str) -> None:
        if not isinstance(call_id, str) or not call_id:
            self.history.problems.append(f"{where} has no id")
            return
        tool = name if isinstance(name, str) and name else UNKNOWN_TOOL
        parsed, raw = _arguments(arguments)
        self.add(
            "assistant",
            ToolCallPart(id=call_id, tool_name=tool, arguments=parsed, raw_arguments=raw),
        )


def _anthropic(turns: list[Any], history: History) -> None:
    build = _Builder(history, _RESULT_FIELDS["anthropic"])
    for number, turn in enumerate(turns):
        if not isinstance(turn, dict):
            history.problems.append(f"messages[{number}] is not an object")
            continue
        role = turn.get("role")
        content = turn.get("content")
        if role not in ("user", "assistant"):
            continue
        build.open(role)
        if isinstance(content, str):
            build.add(role, TextPart(text=content))
            continue
        if not isinstance(content, list):
            history.problems.append(f"messages[{number}].content is neither text nor a list")
            continue
        for block_number, block in enumerate(content):
            where = f"messages[{number}].content[{block_number}]"
            if not isinstance(block, dict):
                continue
            kind = block.get("type")
            if kind == "text" and isinstance(block.get("text"), str):
                build.add(role, TextPart(text=block["text"]))
            elif kind == "tool_use":
                build.call(block.get("id"), block.get("name"), block.get("input"), where)
            elif kind == "tool_result":
                build.result(block, where)


def _responses(turns: list[Any], history: History) -> None:
    build = _Builder(history, _RESULT_FIELDS["openai"])
    for number, item in enumerate(turns):
        where = f"input[{number}]"
        if not isinstance(item, dict):
            history.problems.append(f"{where} is not an object")
            continue
        kind = item.get("type")
        role = item.get("role")
        if kind == "function_call":
            build.call(item.get("call_id"), item.get("name"), item.get("arguments"), where)
        elif kind == "function_call_output":
            build.result(item, where)
        elif role is None and isinstance(kind, str) and kind != "item_reference":
            # An output item replayed (reasoning, a hosted tool call): the model's turn.
            build.open("assistant")
        elif role in ("user", "assistant") and kind in (None, "message"):
            build.open(role)
            text, _ = _text_of(item.get("content"))
            if text:
                build.add(role, TextPart(text=text))


def _chat(turns: list[Any], history: History) -> None:
    build = _Builder(history, _RESULT_FIELDS["chat"])
    for number, turn in enumerate(turns):
        where = f"messages[{number}]"
        if not isinstance(turn, dict):
            history.problems.append(f"{where} is not an object")
            continue
        role = turn.get("role")
        if role == "tool":
            build.result(turn, where)
        elif role == "user":
            text, _ = _text_of(turn.get("content"))
            build.add("user", TextPart(text=text))
        elif role == "assistant":
            build.open("assistant")
            text, _ = _text_of(turn.get("content"))
            if text:
                build.add("assistant", TextPart(text=text))
            calls = turn.get("tool_calls")
            if calls is not None and not isinstance(calls, list):
                history.problems.append(f"{where}.tool_calls is not a list")
                continue
            seen: set[str] = set()
            for index, call in enumerate(calls or []):
                if not isinstance(call, dict):
                    history.problems.append(f"{where}.tool_calls[{index}] is not an object")
                    continue
                # The ids agentloop gave the calls (and the results answer to): a
                # missing id is call_<n>, a repeated one gets a suffix.
                base = str(call.get("id") or f"call_{index}")
                call_id, suffix = base, index
                while call_id in seen:
                    call_id, suffix = f"{base}_{suffix}", suffix + 1
                seen.add(call_id)
                function = call.get("function")
                function = function if isinstance(function, dict) else {}
                build.call(
                    call_id,
                    function.get("name"),
                    function.get("arguments"),
                    f"{where}.tool_calls[{index}]",
                )


def _text_of(content: Any) -> tuple[str, bool]:
    """The text of a content field: a string, or a list of text blocks/parts."""
    if content is None:
        return "", True
    if isinstance(content, str):
        return content, True
    if isinstance(content, list):
        texts = [
            block["text"]
            for block in content
            if isinstance(block, dict) and isinstance(block.get("text"), str)
        ]
        return "\n".join(texts), True
    return "", False


def _arguments(arguments: Any) -> tuple[dict[str, Any], str | None]:
    if isinstance(arguments, dict):
        return arguments, None
    if isinstance(arguments, str):
        try:
            parsed = json.loads(arguments) if arguments.strip() else {}
        except ValueError:
            return {}, arguments
        return (parsed, arguments) if isinstance(parsed, dict) else ({}, arguments)
    return {}, None
