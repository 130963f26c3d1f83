"""tool_calls(): every call of a conversation in order, hosted by the provider or client-side.

The transcripts come from a real agentloop Agent: a scripted provider answers over HTTP
with provider-shaped bodies (the package's public builders), the agent runs the real
``web_fetch`` and a tool of the team's own. Hosted errors are written as the provider
documents them (no real recording holds one: see ../shared/real-cassettes/PROVENANCE.md).
"""

from __future__ import annotations

import re
from typing import Any

import pytest
from agentloop import Transcript, tool
from agentloop.transcript import HostedToolPart, Message, TextPart, ToolCallPart, ToolResultPart

from agentloop_tools.testing import (
    AgentloopEvidence,
    anthropic_message,
    anthropic_search,
    anthropic_text,
    openai_message,
    openai_response,
    openai_search,
)
from agentloop_tools.testing._scripted import scripted_id
from agentloop_tools.web import DomainPolicy, ToolCall, native_web_search, tool_calls, web_fetch
from tests import agents
from tests.fetch.helpers import public_resolver

pytestmark = [pytest.mark.core, pytest.mark.agentloop_06]  # web_fetch needs agentloop 0.6

ALLOW = DomainPolicy.allow(["python.org"])
EVIL = "https://evil.example/page"


@tool(parameters={"type": "object", "properties": {"term": {"type": "string"}}})
def lookup(term: str) -> str:
    """The team's own tool: not one of ours, read as any client tool."""
    return f"{term}: 42"


def tool_use(name: str, **arguments: Any) -> dict[str, Any]:
    return {"type": "tool_use", "id": scripted_id("toolu"), "name": name, "input": arguments}


def fetch_error(url: str, code: str) -> dict[str, Any]:
    """A hosted web_fetch that failed, as Anthropic documents the blocks."""
    call_id = scripted_id("srvtoolu")
    return {
        "_blocks": [
            {"type": "server_tool_use", "id": call_id, "name": "web_fetch", "input": {"url": url}},
            {
                "type": "web_fetch_tool_result",
                "tool_use_id": call_id,
                "content": {"type": "web_fetch_tool_result_error", "error_code": code},
            },
        ]
    }


def anthropic_run(*script: dict[str, Any]) -> Transcript:
    fetch = web_fetch(policy=ALLOW, resolver=public_resolver)
    return agents.converse(
        [native_web_search(), fetch, lookup], script, prompt="Find it.", provider="anthropic"
    )


def shape(calls: list[ToolCall]) -> list[tuple[str, bool, str, str | None]]:
    return [(call.name, call.hosted, call.outcome, call.code) for call in calls]


def test_hosted_and_client_calls_come_in_the_order_the_model_made_them() -> None:
    transcript = anthropic_run(
        anthropic_message(
            [
                anthropic_search("python release", ["https://www.python.org/downloads/"]),
                tool_use("web_fetch", url=EVIL),
                tool_use("lookup", term="python"),
            ],
            stop_reason="tool_use",
        ),
        anthropic_message(
            [anthropic_search("python 3.14", error="max_uses_exceeded"), anthropic_text("Done.")]
        ),
    )
    calls = tool_calls(transcript)
    assert shape(calls) == [
        ("web_search", True, "ok", None),
        ("web_fetch", False, "refused", "blocked-by-policy"),
        ("lookup", False, "ok", None),
        ("web_search", True, "failed", "max_uses_exceeded"),
    ]
    search, fetch, mine, failed = calls
    assert search.arguments == {"query": "python release"}
    assert search.query == "python release"
    assert search.hits == (
        ("https://www.python.org/downloads/", "https://www.python.org/downloads/"),
    )
    assert fetch.arguments == {"url": EVIL}
    assert (fetch.tool, fetch.url) == ("web_fetch", EVIL)
    assert mine.arguments == {"term": "python"}
    assert (mine.tool, mine.result_index) == (None, 2)
    assert failed.arguments == {"query": "python 3.14"}
    assert [call.message_index for call in calls] == [1, 1, 1, 3]
    assert {call.conversation for call in calls} == {0}
    assert str(failed) == "web_search(query='python 3.14') (hosted) -> failed [max_uses_exceeded]"
    # since= reads the calls of the later messages only, as sources() does.
    assert shape(tool_calls(transcript, since=-1)) == [shape(calls)[-1]]


def test_a_hosted_fetch_the_provider_refused_or_failed_says_so_with_its_code() -> None:
    transcript = anthropic_run(
        anthropic_message(
            [
                fetch_error("https://blocked.example/", "url_not_allowed"),
                fetch_error("https://down.example/", "url_not_accessible"),
                anthropic_text("Could not read them."),
            ]
        )
    )
    refused, failed = tool_calls(transcript)
    assert (refused.name, refused.hosted, refused.outcome, refused.code) == (
        "web_fetch",
        True,
        "refused",
        "url_not_allowed",
    )
    assert (refused.arguments, refused.url) == (
        {"url": "https://blocked.example/"},
        "https://blocked.example/",
    )
    assert (failed.outcome, failed.code) == ("failed", "url_not_accessible")


def test_a_paused_turn_continued_by_the_provider_is_one_call_each() -> None:
    # The continuation starts with the result of the search the paused part began.
    call_id = scripted_id("srvtoolu")
    started = {
        "type": "server_tool_use",
        "id": call_id,
        "name": "web_search",
        "input": {"query": "q1"},
    }
    result = {
        "type": "web_search_tool_result",
        "tool_use_id": call_id,
        "content": [
            {"type": "web_search_result", "url": "https://www.python.org/", "title": "Python"}
        ],
    }
    transcript = agents.converse(
        [native_web_search()],
        [
            anthropic_message([anthropic_text("Searching."), started], stop_reason="pause_turn"),
            anthropic_message([result, anthropic_search("q2", []), anthropic_text("Done.")]),
        ],
        prompt="Find it.",
        provider="anthropic",
    )
    # agentloop keeps the continuation's result as a part of its own; it is that call's.
    parts = [p for p in transcript.messages[1].content if isinstance(p, HostedToolPart)]
    assert len(parts) == 3
    calls = tool_calls(transcript)
    assert [(c.arguments, c.outcome, len(c.hits)) for c in calls] == [
        ({"query": "q1"}, "ok", 1),
        ({"query": "q2"}, "ok", 0),
    ]


def test_a_hosted_call_whose_result_never_came_has_no_result() -> None:
    call_id = scripted_id("srvtoolu")
    started = {
        "type": "server_tool_use",
        "id": call_id,
        "name": "web_search",
        "input": {"query": "q"},
    }
    transcript = agents.converse(
        [native_web_search()],
        [anthropic_message([started, anthropic_text("Stopped.")])],
        prompt="Find it.",
        provider="anthropic",
    )
    [call] = tool_calls(transcript)
    assert (call.outcome, call.result_index, call.describe()) == (
        "no-result",
        None,
        "no result was recorded",
    )


def test_openai_web_search_calls_carry_their_action() -> None:
    opened = {
        "type": "web_search_call",
        "id": scripted_id("ws"),
        "status": "completed",
        "action": {"type": "open_page", "url": "https://docs.python.org/3/"},
    }
    found = {
        "type": "web_search_call",
        "id": scripted_id("ws"),
        "status": "completed",
        "action": {
            "type": "find_in_page",
            "url": "https://docs.python.org/3/",
            "pattern": "asyncio",
        },
    }
    transcript = agents.converse(
        [native_web_search()],
        [
            openai_response(
                [
                    openai_search("python docs", ["https://docs.python.org/3/"]),
                    opened,
                    found,
                    openai_search("python 3.14", status="failed"),
                    openai_message("Done."),
                ]
            )
        ],
        prompt="Find it.",
        provider="openai",
    )
    calls = tool_calls(transcript)
    assert [(c.name, c.hosted, c.arguments, c.outcome, c.code) for c in calls] == [
        ("web_search", True, {"action": "search", "query": "python docs"}, "ok", None),
        (
            "web_search",
            True,
            {"action": "open_page", "url": "https://docs.python.org/3/"},
            "ok",
            None,
        ),
        (
            "web_search",
            True,
            {"action": "find_in_page", "url": "https://docs.python.org/3/", "pattern": "asyncio"},
            "ok",
            None,
        ),
        ("web_search", True, {"action": "search", "query": "python 3.14"}, "failed", "failed"),
    ]
    assert calls[0].hits == (("https://docs.python.org/3/", ""),)


def test_a_client_tool_that_failed_or_never_answered_says_so() -> None:
    messages = [
        Message(role="user", content=(TextPart(text="Go."),)),
        Message(
            role="assistant",
            content=(
                ToolCallPart(id="a", tool_name="lookup", arguments={"term": "x"}),
                ToolCallPart(id="b", tool_name="lookup", arguments={"term": "y"}),
            ),
        ),
        Message(
            role="user",
            content=(
                ToolResultPart(
                    call_id="a", tool_name="lookup", content="Error: boom\nmore", is_error=True
                ),
            ),
        ),
    ]
    failed, silent = tool_calls(messages)
    assert (failed.outcome, failed.code, failed.error, failed.result_index) == (
        "failed",
        None,
        "Error: boom",
        2,
    )
    assert (silent.outcome, silent.result_index) == ("no-result", None)


def test_a_hosted_part_without_the_providers_blocks_is_read_from_the_part() -> None:
    # A transcript built by hand (or saved without raw blocks) has only agentloop's parts.
    messages = [
        Message(role="user", content=(TextPart(text="Go."),)),
        Message(
            role="assistant",
            content=(
                HostedToolPart(kind="web_search", call_id="s1", query="q"),
                HostedToolPart(
                    kind="web_search", call_id="s2", query="r", error="too_many_requests"
                ),
            ),
        ),
    ]
    assert [(c.arguments, c.outcome, c.code) for c in tool_calls(messages)] == [
        ({"query": "q"}, "ok", None),
        ({"query": "r"}, "failed", "too_many_requests"),
    ]


def test_the_evidence_numbers_the_conversation_of_each_call() -> None:
    evidence = AgentloopEvidence()
    for query in ("first", "second"):
        evidence.add(
            agents.converse(
                [native_web_search()],
                [anthropic_message([anthropic_search(query, []), anthropic_text("Done.")])],
                prompt="Find it.",
                provider="anthropic",
            )
        )
    calls = evidence.tool_calls()
    assert [(c.conversation, c.query) for c in calls] == [(0, "first"), (1, "second")]


def test_hostile_arguments_are_shown_bounded_and_escaped() -> None:
    hostile = "\x1b[31mred\x1b[0m" + "x" * 10_000
    call = ToolCall(name="lookup", arguments={"term": hostile, "other": list(range(1000))})
    text = str(call)
    assert "\x1b" not in text
    assert len(text) < 200
    assert re.match(r"lookup\(term='\\x1b\[31mred", text)
