"""sources() and citations() on transcripts the real agentloop adapters build."""

from __future__ import annotations

from typing import Any

import pytest
from agentloop import Citation, Source, Transcript
from agentloop.transcript import HostedToolPart, Message, TextPart

from agentloop_tools.web import DomainPolicy, citations, sources
from tests.providers import converse


def anthropic(content: list[dict[str, Any]], stop_reason: str = "end_turn") -> dict[str, Any]:
    return {
        "id": "msg_1",
        "type": "message",
        "role": "assistant",
        "model": "claude-test",
        "stop_reason": stop_reason,
        "stop_sequence": None,
        "usage": {"input_tokens": 1, "output_tokens": 1},
        "content": content,
    }


def search_call(call_id: str, query: str) -> dict[str, Any]:
    return {
        "type": "server_tool_use",
        "id": call_id,
        "name": "web_search",
        "input": {"query": query},
    }


def search_result(call_id: str, *urls: str) -> dict[str, Any]:
    return {
        "type": "web_search_tool_result",
        "tool_use_id": call_id,
        "content": [
            {
                "type": "web_search_result",
                "url": url,
                "title": f"T {url}",
                "encrypted_content": "enc",
                "page_age": None,
            }
            for url in urls
        ],
    }


def cited_text(text: str, *urls: str) -> dict[str, Any]:
    return {
        "type": "text",
        "text": text,
        "citations": [
            {
                "type": "web_search_result_location",
                "url": url,
                "title": f"T {url}",
                "encrypted_index": "idx",
                "cited_text": f"quote from {url}",
            }
            for url in urls
        ],
    }


def openai(output: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "id": "resp_1",
        "object": "response",
        "status": "completed",
        "model": "gpt-test",
        "output": output,
        "usage": {"input_tokens": 1, "output_tokens": 1},
    }


def openai_message(text: str, *annotations: tuple[str, int, int]) -> dict[str, Any]:
    return {
        "type": "message",
        "id": "msg_1",
        "role": "assistant",
        "status": "completed",
        "content": [
            {
                "type": "output_text",
                "text": text,
                "annotations": [
                    {
                        "type": "url_citation",
                        "url": url,
                        "title": "t",
                        "start_index": start,
                        "end_index": end,
                    }
                    for url, start, end in annotations
                ],
            }
        ],
    }


def urls(found: list[Source] | list[Citation]) -> list[str]:
    return [item.url for item in found]


def test_anthropic_search_results_and_citations() -> None:
    transcript = converse(
        "anthropic",
        [
            anthropic(
                [
                    search_call("srv_1", "python release"),
                    search_result(
                        "srv_1",
                        "https://python.org/a",
                        "https://docs.python.org/b",
                        "https://python.org/a",
                    ),
                    cited_text(
                        "Python 3.14 is out.", "https://docs.python.org/b", "https://python.org/a"
                    ),
                    cited_text(" Again.", "https://docs.python.org/b"),
                ]
            )
        ],
    )
    assert sources(transcript) == [
        Source(url="https://python.org/a", title="T https://python.org/a"),
        Source(url="https://docs.python.org/b", title="T https://docs.python.org/b"),
    ]
    assert urls(citations(transcript)) == [
        "https://docs.python.org/b",
        "https://python.org/a",
        "https://docs.python.org/b",
    ]
    assert citations(transcript)[0].cited_text == "quote from https://docs.python.org/b"


def test_pause_turn_is_one_message_and_nothing_is_lost() -> None:
    paused = anthropic(
        [
            search_call("srv_1", "first"),
            search_result("srv_1", "https://a.example/1"),
            search_call("srv_2", "second"),
        ],
        stop_reason="pause_turn",
    )
    resumed = anthropic(
        [
            # The continuation starts with the result of the search begun before the pause.
            search_result("srv_2", "https://b.example/2"),
            cited_text("Done.", "https://b.example/2"),
        ]
    )
    transcript = converse("anthropic", [paused, resumed])
    assistant = [m for m in transcript.messages if m.role == "assistant"]
    assert len(assistant) == 1
    assert urls(sources(transcript)) == ["https://a.example/1", "https://b.example/2"]
    assert urls(citations(transcript)) == ["https://b.example/2"]
    violations = DomainPolicy.allow(["a.example"]).audit(transcript)
    assert [(v.url, v.where) for v in violations] == [
        ("https://b.example/2", "source"),
        ("https://b.example/2", "citation"),
    ]


def test_a_failed_search_has_no_sources_and_does_not_crash() -> None:
    transcript = converse(
        "anthropic",
        [
            anthropic(
                [
                    search_call("srv_1", "q"),
                    {
                        "type": "web_search_tool_result",
                        "tool_use_id": "srv_1",
                        "content": {
                            "type": "web_search_tool_result_error",
                            "error_code": "max_uses_exceeded",
                        },
                    },
                    {"type": "text", "text": "I could not search."},
                ]
            )
        ],
    )
    assert sources(transcript) == []
    assert citations(transcript) == []
    part = transcript.messages[1].content[0]
    assert isinstance(part, HostedToolPart)
    assert part.error == "max_uses_exceeded"


def test_anthropic_web_fetch_results_are_sources() -> None:
    transcript = converse(
        "anthropic",
        [
            anthropic(
                [
                    {
                        "type": "server_tool_use",
                        "id": "srv_f",
                        "name": "web_fetch",
                        "input": {"url": "https://fetched.example/page"},
                    },
                    {
                        "type": "web_fetch_tool_result",
                        "tool_use_id": "srv_f",
                        "content": {
                            "type": "web_fetch_result",
                            "url": "https://fetched.example/page",
                            "retrieved_at": "2025-01-01T00:00:00Z",
                            "content": {
                                "type": "document",
                                "title": "Fetched",
                                "source": {"type": "text", "media_type": "text/plain", "data": "x"},
                            },
                        },
                    },
                    {
                        "type": "server_tool_use",
                        "id": "srv_g",
                        "name": "web_fetch",
                        "input": {"url": "https://denied.example/"},
                    },
                    {
                        "type": "web_fetch_tool_result",
                        "tool_use_id": "srv_g",
                        "content": {
                            "type": "web_fetch_tool_result_error",
                            "error_code": "url_not_allowed",
                        },
                    },
                    {"type": "text", "text": "Read it."},
                ]
            )
        ],
    )
    assert sources(transcript) == [Source(url="https://fetched.example/page", title="Fetched")]
    violations = DomainPolicy.block(["fetched.example"]).audit(transcript)
    assert [(v.url, v.where, v.rule) for v in violations] == [
        ("https://fetched.example/page", "source", "fetched.example")
    ]


def test_openai_search_open_page_find_in_page_and_citations() -> None:
    text = "See the docs ([docs.python.org](https://docs.python.org/3/?utm_source=openai))."
    start = text.index("[")
    transcript = converse(
        "openai",
        [
            openai(
                [
                    {
                        "type": "web_search_call",
                        "id": "ws_1",
                        "status": "completed",
                        "action": {
                            "type": "search",
                            "query": "python docs",
                            "sources": [
                                {"type": "url", "url": "https://python.org/"},
                                {"type": "api", "name": "oai-weather"},
                            ],
                        },
                    },
                    {
                        "type": "web_search_call",
                        "id": "ws_2",
                        "status": "completed",
                        "action": {"type": "open_page", "url": "https://opened.example/page"},
                    },
                    {
                        "type": "web_search_call",
                        "id": "ws_3",
                        "status": "completed",
                        "action": {
                            "type": "find_in_page",
                            "url": "https://found.example/page",
                            "pattern": "x",
                        },
                    },
                    openai_message(
                        text, ("https://docs.python.org/3/?utm_source=openai", start, len(text) - 2)
                    ),
                ]
            )
        ],
    )
    assert urls(sources(transcript)) == [
        "https://python.org/",
        "https://opened.example/page",
        "https://found.example/page",
        "https://docs.python.org/3/?utm_source=openai",
    ]
    [citation] = citations(transcript)
    assert (citation.start, citation.end) == (start, len(text) - 2)
    # One citation, written twice (annotation and inline markdown link): both reported.
    violations = DomainPolicy.allow(["python.org"]).audit(transcript)
    assert [(v.url, v.where) for v in violations] == [
        ("https://opened.example/page", "source"),
        ("https://found.example/page", "source"),
    ]


def test_openai_failed_search_is_an_error_without_sources() -> None:
    transcript = converse(
        "openai",
        [
            openai(
                [
                    {
                        "type": "web_search_call",
                        "id": "ws_1",
                        "status": "failed",
                        "action": {"type": "search", "query": "q"},
                    },
                    openai_message("No luck."),
                ]
            )
        ],
    )
    assert sources(transcript) == []
    part = transcript.messages[1].content[0]
    assert isinstance(part, HostedToolPart)
    assert part.error == "failed"


def test_unknown_blocks_are_ignored_not_fatal() -> None:
    transcript = converse(
        "anthropic",
        [
            anthropic(
                [
                    {
                        "type": "mystery_block",
                        "url": "https://ignored.example/",
                        "content": [1, None, "x"],
                    },
                    {
                        "type": "code_execution_tool_result",
                        "tool_use_id": "x",
                        "content": {
                            "type": "code_execution_result",
                            "stdout": "https://stdout.example/",
                        },
                    },
                    {"type": "text", "text": "Fine."},
                ]
            )
        ],
    )
    assert sources(transcript) == []


def test_hand_built_transcripts_without_origin_are_read_from_parts() -> None:
    transcript = Transcript()
    transcript.add_user_message("q")
    transcript.add_assistant_message(
        [
            HostedToolPart(kind="web_search", sources=(Source(url="https://a.example/"),)),
            TextPart(text="A", citations=(Citation(url="https://b.example/"),)),
        ]
    )
    assert urls(sources(transcript)) == ["https://a.example/", "https://b.example/"]
    assert urls(citations(transcript)) == ["https://b.example/"]


def test_since_reads_one_turn_and_accepts_message_lists() -> None:
    first = converse("anthropic", [anthropic([cited_text("one", "https://one.example/")])])
    messages: list[Message] = [*first.messages]
    second = converse("anthropic", [anthropic([cited_text("two", "https://two.example/")])])
    messages += second.messages
    assert urls(sources(messages)) == ["https://one.example/", "https://two.example/"]
    assert urls(sources(messages, since=2)) == ["https://two.example/"]
    assert urls(citations(messages, since=-1)) == ["https://two.example/"]
    policy = DomainPolicy.allow(["one.example"])
    assert [v.message_index for v in policy.audit(messages, since=2)] == [3]


@pytest.mark.parametrize("bad", ["text", 3, None, [1, 2]])
def test_readers_refuse_what_is_not_a_transcript(bad: object) -> None:
    with pytest.raises(TypeError, match="expected an agentloop Transcript"):
        sources(bad)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="expected an agentloop Transcript"):
        DomainPolicy.allow(["a.example"]).audit(bad)  # type: ignore[arg-type]


def test_since_must_be_an_int() -> None:
    with pytest.raises(TypeError, match="since must be a message index"):
        citations(Transcript(), since="1")  # type: ignore[arg-type]
