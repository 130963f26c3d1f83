"""Rebuild the final response from a streamed (SSE) body, for either provider.

agentloop does not stream, so a recorded stream (from another client) is turned
back into the JSON body the non-streaming API would have returned, and read like
one. Anthropic: content blocks are assembled from their deltas (text, tool input
JSON, citations, thinking). OpenAI Responses: the ``response.completed`` event
carries the whole response; without it, the finished output items are used. Chat
Completions: the ``chat.completion.chunk`` deltas (content, tool calls by index,
annotations, finish reason) are joined into one ``chat.completion``.
"""

from __future__ import annotations

import json
import re
from typing import Any

from agentloop_tools._errors import StreamError

_LINE_END = re.compile(r"\r\n|\r|\n")


def stream_lines(body: str) -> list[str]:
    """A stream's lines as the SSE grammar ends them: at CRLF, LF or CR only.

    ``str.splitlines()`` also breaks at U+2028, U+2029, U+0085 (and more), which JSON
    allows raw inside a string.
    """
    return _LINE_END.split(body)


def is_stream(body: str) -> bool:
    head = body.lstrip()[:200]
    return head.startswith(("event:", "data:", ":")) or "\nevent:" in head or "\ndata:" in head


def events(body: str) -> list[dict[str, Any]]:
    """The JSON payload of every ``data:`` field, in order (``[DONE]`` and comments skipped)."""
    found = []
    data_lines: list[str] = []
    for line in [*stream_lines(body), ""]:
        if line.startswith("data:"):
            value = line[5:]
            # One space after the colon is the field's separator; the rest is data.
            data_lines.append(value[1:] if value.startswith(" ") else value)
        elif not line.strip(" \t") and data_lines:
            text = "\n".join(data_lines)
            data_lines = []
            if text == "[DONE]":
                continue
            try:
                payload = json.loads(text)
            except ValueError as error:
                raise StreamError(f"an event's data is not JSON: {text[:80]!r}") from error
            if isinstance(payload, dict):
                found.append(payload)
    if not found:
        raise StreamError("no events in the stream")
    return found


def rebuild(body: str) -> dict[str, Any]:
    """The response JSON a streamed body stands for."""
    stream = events(body)
    kinds = {str(event.get("type", "")) for event in stream}
    if "message_start" in kinds:
        return _anthropic(stream)
    if any(kind.startswith("response.") for kind in kinds):
        return _openai(stream)
    if any(event.get("object") == "chat.completion.chunk" for event in stream):
        return _chat(stream)
    raise StreamError(
        "not an Anthropic, OpenAI Responses or Chat Completions stream "
        f"(events: {sorted(kinds)[:5]})"
    )


def _anthropic(stream: list[dict[str, Any]]) -> dict[str, Any]:
    message: dict[str, Any] | None = None
    blocks: dict[int, dict[str, Any]] = {}
    partial_json: dict[int, str] = {}
    for event in stream:
        kind = event.get("type")
        if kind == "message_start":
            message = dict(event.get("message") or {})
        elif kind == "content_block_start":
            index = int(event["index"])
            blocks[index] = dict(event.get("content_block") or {})
        elif kind == "content_block_delta":
            index = int(event["index"])
            block = blocks.setdefault(index, {})
            delta = event.get("delta") or {}
            delta_kind = delta.get("type")
            if delta_kind == "text_delta":
                block["text"] = block.get("text", "") + str(delta.get("text", ""))
            elif delta_kind == "input_json_delta":
                partial_json[index] = partial_json.get(index, "") + str(
                    delta.get("partial_json", "")
                )
            elif delta_kind == "citations_delta":
                block.setdefault("citations", []).append(delta.get("citation"))
            elif delta_kind == "thinking_delta":
                block["thinking"] = block.get("thinking", "") + str(delta.get("thinking", ""))
            elif delta_kind == "signature_delta":
                block["signature"] = delta.get("signature")
        elif kind == "message_delta" and message is not None:
            message.update(event.get("delta") or {})
            if event.get("usage"):
                message["usage"] = {**(message.get("usage") or {}), **event["usage"]}
        elif kind == "error":
            raise StreamError(f"the stream ended in an error: {event.get('error')}")
    if message is None:
        raise StreamError("the stream has no message_start event")
    for index, text in partial_json.items():
        try:
            blocks[index]["input"] = json.loads(text) if text.strip() else {}
        except ValueError as error:
            raise StreamError(f"tool input of block {index} is cut short") from error
    message["content"] = [blocks[index] for index in sorted(blocks)]
    return message


def _openai(stream: list[dict[str, Any]]) -> dict[str, Any]:
    final: dict[str, Any] | None = None
    items: dict[int, dict[str, Any]] = {}
    for event in stream:
        kind = event.get("type")
        if kind in ("response.completed", "response.incomplete", "response.failed") or (
            kind == "response.created" and final is None
        ):
            final = dict(event.get("response") or {})
        elif kind == "response.output_item.done":
            items[int(event.get("output_index", len(items)))] = dict(event.get("item") or {})
    if final is None:
        raise StreamError("the stream has no response.created or response.completed event")
    if not final.get("output") and items:
        final["output"] = [items[index] for index in sorted(items)]
        if final.get("status") in (None, "in_progress"):
            final["status"] = "completed"
    return final


def _chat(stream: list[dict[str, Any]]) -> dict[str, Any]:
    final: dict[str, Any] = {"object": "chat.completion"}
    choices: dict[int, dict[str, Any]] = {}
    calls: dict[int, dict[int, dict[str, Any]]] = {}
    for event in stream:
        if event.get("error") is not None:
            raise StreamError(f"the stream ended in an error: {event.get('error')}")
        for key in ("id", "model", "created"):
            if key in event:
                final.setdefault(key, event[key])
        if event.get("usage"):
            final["usage"] = event["usage"]
        for choice in event.get("choices") or []:
            if not isinstance(choice, dict):
                raise StreamError("a chunk's choice is not an object")
            index = int(choice.get("index") or 0)
            state = choices.setdefault(
                index,
                {"index": index, "message": {"role": "assistant", "content": None}},
            )
            message = state["message"]
            delta = choice.get("delta") or {}
            if not isinstance(delta, dict):
                raise StreamError("a chunk's delta is not an object")
            if isinstance(delta.get("content"), str):
                message["content"] = (message["content"] or "") + delta["content"]
            if isinstance(delta.get("annotations"), list):
                message.setdefault("annotations", []).extend(delta["annotations"])
            for call in delta.get("tool_calls") or []:
                if not isinstance(call, dict):
                    raise StreamError("a chunk's tool call is not an object")
                slots = calls.setdefault(index, {})
                slot = slots.setdefault(
                    int(call.get("index") or 0),
                    {"id": None, "type": "function", "function": {"name": "", "arguments": ""}},
                )
                if call.get("id"):
                    slot["id"] = call["id"]
                function = call.get("function") or {}
                name = function.get("name")
                if isinstance(name, str) and name and name != slot["function"]["name"]:
                    slot["function"]["name"] += name
                if isinstance(function.get("arguments"), str):
                    slot["function"]["arguments"] += function["arguments"]
            if choice.get("finish_reason"):
                state["finish_reason"] = choice["finish_reason"]
    if not choices:
        raise StreamError("the stream has no choices")
    for index, slots in calls.items():
        choices[index]["message"]["tool_calls"] = [slots[key] for key in sorted(slots)]
    final["choices"] = [choices[index] for index in sorted(choices)]
    return final
