"""A recorded stream, put back together: the response each provider's events stand for.

Streamed bodies are read from cassettes written by anyone; each way a stream can be
cut short or malformed is a ``StreamError`` that names what is wrong, never a crash.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from agentloop_tools._errors import StreamError
from agentloop_tools.cassettes._reading._sse import _anthropic, events, rebuild


def stream(*payloads: Any, ending: str = "\n\n") -> str:
    return "".join(f"event: x\ndata: {json.dumps(payload)}{ending}" for payload in payloads)


def test_data_fields_of_one_event_are_joined_and_only_three_line_ends_count() -> None:
    # "\u2028" is allowed raw inside a JSON string: it must not end the line.
    body = 'data: {"a":\ndata: "x\u2028y"}\r\n\r\n: a comment\n\ndata: [DONE]\n\n'
    assert events(body) == [{"a": "x\u2028y"}]


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ("data: {not json\n\n", "an event's data is not JSON: '{not json'"),
        (": only a comment\n\n", "no events in the stream"),
        ("data: [1, 2]\n\n", "no events in the stream"),
        (stream({"type": "ping"}), "not an Anthropic, OpenAI Responses or Chat Completions"),
    ],
)
def test_a_stream_that_is_not_one_says_why(body: str, message: str) -> None:
    with pytest.raises(StreamError, match="^" + message.replace("(", r"\(")):
        rebuild(body)


def test_an_anthropic_stream_becomes_its_message() -> None:
    body = stream(
        {"type": "message_start", "message": {"id": "m", "role": "assistant", "usage": {"a": 1}}},
        {"type": "content_block_start", "index": 0, "content_block": {"type": "thinking"}},
        {"type": "content_block_delta", "index": 0,
         "delta": {"type": "thinking_delta", "thinking": "hm"}},
        {"type": "content_block_delta", "index": 0,
         "delta": {"type": "signature_delta", "signature": "sig"}},
        {"type": "content_block_start", "index": 1, "content_block": {"type": "text"}},
        {"type": "content_block_delta", "index": 1, "delta": {"type": "text_delta", "text": "A"}},
        {"type": "content_block_delta", "index": 1,
         "delta": {"type": "citations_delta", "citation": {"url": "https://a.example/"}}},
        {"type": "content_block_start", "index": 2,
         "content_block": {"type": "tool_use", "name": "web_fetch"}},
        {"type": "content_block_delta", "index": 2,
         "delta": {"type": "input_json_delta", "partial_json": '{"url": "https://'}},
        {"type": "content_block_delta", "index": 2,
         "delta": {"type": "input_json_delta", "partial_json": 'b.example/"}'}},
        {"type": "content_block_start", "index": 3,
         "content_block": {"type": "tool_use", "name": "t"}},
        {"type": "content_block_delta", "index": 3,
         "delta": {"type": "input_json_delta", "partial_json": " "}},
        {"type": "message_delta", "delta": {"stop_reason": "end_turn"}, "usage": {"b": 2}},
    )  # fmt: skip
    message = rebuild(body)
    assert message["stop_reason"] == "end_turn"
    assert message["usage"] == {"a": 1, "b": 2}
    assert message["content"] == [
        {"type": "thinking", "thinking": "hm", "signature": "sig"},
        {"type": "text", "text": "A", "citations": [{"url": "https://a.example/"}]},
        {"type": "tool_use", "name": "web_fetch", "input": {"url": "https://b.example/"}},
        {"type": "tool_use", "name": "t", "input": {}},
    ]


@pytest.mark.parametrize(
    ("payloads", "message"),
    [
        (
            [{"type": "message_start", "message": {}},
             {"type": "error", "error": {"type": "overloaded_error"}}],
            "the stream ended in an error: {'type': 'overloaded_error'}",
        ),
        (
            [{"type": "message_start", "message": {}},
             {"type": "content_block_start", "index": 0, "content_block": {"type": "tool_use"}},
             {"type": "content_block_delta", "index": 0,
              "delta": {"type": "input_json_delta", "partial_json": '{"url": "ht'}}],
            "tool input of block 0 is cut short",
        ),
    ],
)  # fmt: skip
def test_a_broken_anthropic_stream_says_why(payloads: list[Any], message: str) -> None:
    with pytest.raises(StreamError, match=message.replace("{", r"\{").replace("}", r"\}")):
        rebuild(stream(*payloads))


def test_an_anthropic_stream_without_its_start_is_refused() -> None:
    # (rebuild() sends only a stream with message_start here; the reader checks anyway.)
    cut = events(stream({"type": "content_block_delta", "index": 0, "delta": {}}))
    with pytest.raises(StreamError, match="has no message_start event"):
        _anthropic(cut)


def test_an_openai_stream_cut_before_completed_is_its_items() -> None:
    body = stream(
        {"type": "response.created", "response": {"id": "r", "status": "in_progress"}},
        {"type": "response.output_item.done", "output_index": 1, "item": {"id": "b"}},
        {"type": "response.output_item.done", "output_index": 0, "item": {"id": "a"}},
    )
    response = rebuild(body)
    assert response["output"] == [{"id": "a"}, {"id": "b"}]
    assert response["status"] == "completed"


def test_an_openai_stream_with_no_response_event_is_refused() -> None:
    with pytest.raises(StreamError, match=r"no response\.created or response\.completed"):
        rebuild(stream({"type": "response.output_item.done", "item": {}}))


def test_a_chat_completions_stream_becomes_its_completion() -> None:
    chunk = {"object": "chat.completion.chunk", "id": "c", "model": "m", "created": 1}
    body = stream(
        {**chunk, "choices": [{"index": 0, "delta": {"content": "Hi "}}]},
        {**chunk, "choices": [{"index": 0, "delta": {
            "content": "there", "annotations": [{"type": "url_citation"}],
            "tool_calls": [{"index": 0, "id": "call",
                            "function": {"name": "web_", "arguments": '{"q"'}}],
        }}]},
        {**chunk, "choices": [{"index": 0, "delta": {
            "tool_calls": [{"index": 0, "function": {"name": "search", "arguments": ': "x"}'}}],
        }, "finish_reason": "tool_calls"}]},
        {**chunk, "choices": [], "usage": {"total_tokens": 3}},
    )  # fmt: skip
    completion = rebuild(body)
    assert completion["id"] == "c"
    assert completion["usage"] == {"total_tokens": 3}
    [choice] = completion["choices"]
    assert choice["finish_reason"] == "tool_calls"
    assert choice["message"]["content"] == "Hi there"
    assert choice["message"]["annotations"] == [{"type": "url_citation"}]
    assert choice["message"]["tool_calls"] == [
        {"id": "call", "type": "function",
         "function": {"name": "web_search", "arguments": '{"q": "x"}'}},
    ]  # fmt: skip


@pytest.mark.parametrize(
    ("chunk", "message"),
    [
        ({"error": {"message": "boom"}}, "the stream ended in an error"),
        ({"choices": ["x"]}, "a chunk's choice is not an object"),
        ({"choices": [{"delta": "x"}]}, "a chunk's delta is not an object"),
        ({"choices": [{"delta": {"tool_calls": ["x"]}}]}, "a chunk's tool call is not an object"),
        ({"choices": []}, "the stream has no choices"),
    ],
)
def test_a_broken_chat_completions_stream_says_why(chunk: dict[str, Any], message: str) -> None:
    with pytest.raises(StreamError, match=message):
        rebuild(stream({"object": "chat.completion.chunk", **chunk}))
