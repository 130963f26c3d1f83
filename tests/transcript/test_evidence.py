"""sources() and citations() on transcripts the real agentloop adapters build."""

from __future__ import annotations

import pytest
from agentloop import Citation, Source, Transcript
from agentloop.transcript import HostedToolPart, Message, TextPart

from agentloop_tools.testing import (
    anthropic_message,
    anthropic_search,
    anthropic_text,
    openai_message,
    openai_response,
    openai_search,
)
from agentloop_tools.web import DomainPolicy, citations, sources
from tests.transcripts import converse

pytestmark = pytest.mark.core


def urls(found: list[Source] | list[Citation]) -> list[str]:
    return [item.url for item in found]


@pytest.mark.agentloop_06
def test_anthropic_search_results_and_citations() -> None:
    a, b = "https://python.org/a", "https://docs.python.org/b"
    transcript = converse("anthropic", [anthropic_message([
        anthropic_search("python release", [(a, "Page A"), (b, "Page B"), (a, "Page A again")]),
        anthropic_text("Python 3.14 is out.", cite=[b, a]),
        anthropic_text(" Again.", cite=[b]),
    ])])  # fmt: skip
    assert sources(transcript) == [Source(url=a, title="Page A"), Source(url=b, title="Page B")]
    assert urls(citations(transcript)) == [b, a, b]
    assert [c.cited_text for c in citations(transcript)] == [
        "Python 3.14 is out.",
        "Python 3.14 is out.",
        " Again.",
    ]


@pytest.mark.agentloop_06
def test_pause_turn_is_one_message_and_nothing_is_lost() -> None:
    # A search begun before the pause and answered after it: a split no builder writes.
    begun = {"type": "server_tool_use", "id": "srvtoolu_split", "name": "web_search",
             "input": {"query": "second"}}  # fmt: skip
    answered = {
        "type": "web_search_tool_result",
        "tool_use_id": "srvtoolu_split",
        "content": [{"type": "web_search_result", "url": "https://b.example/2", "title": "B",
                     "encrypted_content": "enc", "page_age": None}],
    }  # fmt: skip
    paused = anthropic_message(
        [anthropic_search("first", ["https://a.example/1"]), begun], stop_reason="pause_turn"
    )
    # The continuation starts with the result of the search begun before the pause.
    resumed = anthropic_message([answered, anthropic_text("Done.", cite=["https://b.example/2"])])
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


@pytest.mark.agentloop_06
def test_a_failed_search_has_no_sources_and_does_not_crash() -> None:
    transcript = converse("anthropic", [anthropic_message([
        anthropic_search("q", error="max_uses_exceeded"),
        anthropic_text("I could not search."),
    ])])  # fmt: skip
    assert sources(transcript) == []
    assert citations(transcript) == []
    part = transcript.messages[1].content[0]
    assert isinstance(part, HostedToolPart)
    assert part.error == "max_uses_exceeded"


@pytest.mark.agentloop_06
def test_anthropic_web_fetch_results_are_sources() -> None:
    # No builder writes web_fetch blocks: they are written out as the API sends them.
    transcript = converse(
        "anthropic",
        [
            anthropic_message(
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
                    anthropic_text("Read it."),
                ]
            )
        ],
    )
    assert sources(transcript) == [Source(url="https://fetched.example/page", title="Fetched")]
    violations = DomainPolicy.block(["fetched.example"]).audit(transcript)
    assert [(v.url, v.where, v.rule) for v in violations] == [
        ("https://fetched.example/page", "source", "fetched.example")
    ]


@pytest.mark.agentloop_06
def test_openai_search_open_page_find_in_page_and_citations() -> None:
    text = "See the docs ([docs.python.org](https://docs.python.org/3/?utm_source=openai))."
    start = text.index("[")
    cited = "https://docs.python.org/3/?utm_source=openai"
    # An "api" source, open_page and find_in_page are shapes openai_search does not write.
    transcript = converse(
        "openai",
        [
            openai_response(
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
                    openai_message(text, cite=[(cited, text[start : len(text) - 2])]),
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


@pytest.mark.agentloop_06
def test_openai_failed_search_is_an_error_without_sources() -> None:
    transcript = converse(
        "openai",
        [openai_response([openai_search("q", status="failed"), openai_message("No luck.")])],
    )
    assert sources(transcript) == []
    part = transcript.messages[1].content[0]
    assert isinstance(part, HostedToolPart)
    assert part.error == "failed"


@pytest.mark.agentloop_06
def test_unknown_blocks_are_ignored_not_fatal() -> None:
    transcript = converse(
        "anthropic",
        [
            anthropic_message(
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
                    anthropic_text("Fine."),
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


ONE, TWO = "https://one.example/", "https://two.example/"


@pytest.mark.agentloop_06
def test_since_reads_one_turn_and_accepts_message_lists() -> None:
    first = converse("anthropic", [anthropic_message([anthropic_text("one", cite=[ONE])])])
    messages: list[Message] = [*first.messages]
    second = converse("anthropic", [anthropic_message([anthropic_text("two", cite=[TWO])])])
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
