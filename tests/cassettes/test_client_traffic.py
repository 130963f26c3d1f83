"""The reader with client-side tools: their results from the next request, their own
traffic skipped, Chat Completions read, and nothing a model call says lost silently."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from agentloop.transcript import TextPart, ToolCallPart, ToolResultPart

from agentloop_tools.cassettes import read_cassette
from agentloop_tools.testing import anthropic_message, anthropic_text, chat_completion
from agentloop_tools.web import DomainPolicy, SearchHit, sources
from agentloop_tools.web._search._render import render_results

REPO = Path(__file__).parents[2]
EXAMPLES = REPO / "cassettes" / "examples"
POLICY = DomainPolicy.allow(["python.org"])
CHAT = "https://openrouter.ai/api/v1/chat/completions"
ANTHROPIC = "https://api.anthropic.com/v1/messages"
RESULTS = render_results(
    [
        SearchHit(title="Whatsnew", url="https://docs.python.org/3/whatsnew/3.13.html", snippet=""),
        SearchHit(title="Blog", url="https://medium.com/@a/repl", snippet=""),
    ]
)
CALL = {"query": "python repl", "count": 5}


def interaction(
    uri: str,
    response: Any,
    request: Any = "{}",
    *,
    method: str = "POST",
    status: int = 200,
) -> dict[str, Any]:
    body = response if isinstance(response, str | bytes) else json.dumps(response)
    return {
        "request": {
            "method": method,
            "uri": uri,
            "body": request if isinstance(request, str | bytes) else json.dumps(request),
            "headers": {},
        },
        "response": {
            "status": {"code": status, "message": "OK"},
            "headers": {},
            "body": {"string": body},
        },
    }


def cassette(tmp_path: Path, *interactions: dict[str, Any]) -> Path:
    path = tmp_path / "cassette.yaml"
    path.write_text(yaml.safe_dump({"version": 1, "interactions": list(interactions)}))
    return path


def chat_request(*messages: dict[str, Any]) -> dict[str, Any]:
    return {"model": "m", "messages": [{"role": "user", "content": "Q?"}, *messages]}


CALLED = {
    "role": "assistant",
    "content": None,
    "tool_calls": [
        {
            "id": "call_1",
            "type": "function",
            "function": {"name": "web_search", "arguments": json.dumps(CALL)},
        }
    ],
}
ANSWERED = {"role": "tool", "tool_call_id": "call_1", "name": "web_search", "content": RESULTS}


def chat_conversation(tmp_path: Path, *between: dict[str, Any]) -> Path:
    return cassette(
        tmp_path,
        interaction(CHAT, chat_completion(calls=[("call_1", "web_search", CALL)]), chat_request()),
        *between,
        interaction(CHAT, chat_completion("Done."), chat_request(CALLED, ANSWERED)),
    )


def test_a_chat_completions_conversation_is_rebuilt_with_its_tool_results(tmp_path: Path) -> None:
    search = interaction(
        "https://api.search.brave.com/res/v1/web/search?q=python",
        {"web": {"results": []}},
        "",
        method="GET",
    )
    reading = read_cassette(chat_conversation(tmp_path, search))
    assert reading.problems == []
    assert (reading.skipped, reading.tool_traffic) == (1, 1)
    [transcript] = reading.transcripts
    roles = [message.role for message in transcript.messages]
    assert roles == ["user", "assistant", "user", "assistant"]
    [call] = transcript.messages[1].content
    assert isinstance(call, ToolCallPart)
    assert call.arguments == CALL
    [result] = transcript.messages[2].content
    assert isinstance(result, ToolResultPart)
    assert (result.call_id, result.tool_name, result.is_error) == ("call_1", "web_search", False)
    assert reading.interactions == [[None, 0, 2, 2]]
    assert [s.url for s in sources(transcript)] == [
        "https://docs.python.org/3/whatsnew/3.13.html",
        "https://medium.com/@a/repl",
    ]
    assert [(v.where, v.url) for v in POLICY.audit(transcript)] == [
        ("tool-result", "https://medium.com/@a/repl")
    ]


def test_a_streamed_chat_completion_is_read(tmp_path: Path) -> None:
    chunks = [
        {"object": "chat.completion.chunk", "id": "g", "model": "m",
         "choices": [{"index": 0, "delta": {"role": "assistant", "tool_calls": [
             {"index": 0, "id": "call_1", "function": {"name": "web_search", "arguments": ""}}]}}]},
        {"object": "chat.completion.chunk", "choices": [{"index": 0, "delta": {"tool_calls": [
            {"index": 0, "function": {"arguments": json.dumps(CALL)[:10]}}]}}]},
        {"object": "chat.completion.chunk", "choices": [{"index": 0, "delta": {"tool_calls": [
            {"index": 0, "function": {"arguments": json.dumps(CALL)[10:]}}]},
            "finish_reason": "tool_calls"}]},
    ]  # fmt: skip
    stream = "".join(f"data: {json.dumps(chunk)}\n\n" for chunk in chunks) + "data: [DONE]\n\n"
    reading = read_cassette(cassette(tmp_path, interaction(CHAT, stream, chat_request())))
    assert reading.problems == []
    [call] = reading.transcripts[0].messages[1].content
    assert isinstance(call, ToolCallPart)
    assert (call.id, call.tool_name, call.arguments) == ("call_1", "web_search", CALL)


@pytest.mark.parametrize(
    ("method", "uri", "body"),
    [
        ("GET", "https://api.search.brave.com/res/v1/web/search?q=x", '{"web": {}}'),
        ("POST", "https://api.tavily.com/search", '{"results": []}'),
        ("POST", "https://api.exa.ai/search", '{"results": []}'),
        ("POST", "https://search.corp.example/api/search", '{"rows": []}'),
        ("GET", "https://searx.example/search?q=x&format=json", '{"results": []}'),
        ("GET", "https://docs.python.org/3/tutorial/", "<html><p>Hello</p></html>"),
        ("GET", "https://blog.example/messages", '{"type": "message", "note": "not a model"}'),
        ("GET", "https://site.example/report.pdf", b"%PDF-1.7\xff\xfe binary"),
        ("HEAD", "https://site.example/", ""),
        ("GET", "https://site.example/robots.txt", "User-agent: *"),
    ],
)
def test_search_api_calls_and_fetched_pages_are_skipped_not_problems(
    tmp_path: Path, method: str, uri: str, body: str | bytes
) -> None:
    reading = read_cassette(cassette(tmp_path, interaction(uri, body, "", method=method)))
    assert reading.problems == []
    assert (reading.skipped, reading.tool_traffic) == (1, 1)


@pytest.mark.parametrize(
    ("method", "uri", "body"),
    [
        ("POST", "https://api.example.com/v1/generate", '{"text": "hi"}'),
        ("GET", "https://api.openai.com/v1/files", '{"data": []}'),
        ("POST", "https://api.anthropic.com/v1/complete", '{"completion": "hi"}'),
    ],
)
def test_a_call_the_reader_cannot_place_is_a_problem(
    tmp_path: Path, method: str, uri: str, body: str
) -> None:
    reading = read_cassette(cassette(tmp_path, interaction(uri, body, method=method)))
    [problem] = reading.problems
    assert problem.reason.startswith(f"unknown provider API at {uri!r}")
    assert "Chat Completions" in problem.reason


def test_a_chat_body_at_an_unknown_path_is_read_as_chat(tmp_path: Path) -> None:
    path = cassette(
        tmp_path, interaction("https://llm.corp.example/v1/generate", chat_completion("Hi."))
    )
    reading = read_cassette(path)
    assert reading.problems == []
    assert [m.role for m in reading.transcripts[0].messages] == ["user", "assistant"]


def test_an_unreadable_request_is_a_problem_that_hides_nothing(tmp_path: Path) -> None:
    linked = chat_completion("See [this](https://evil.example/page).")
    reading = read_cassette(cassette(tmp_path, interaction(CHAT, linked, "{not json")))
    [problem] = reading.problems
    assert (problem.interaction, problem.reason) == (
        0,
        "the request: the request body is not JSON, so the tool results sent to the model "
        "cannot be read",
    )
    [transcript] = reading.transcripts
    assert [(v.where, v.url) for v in POLICY.audit(transcript)] == [
        ("text", "https://evil.example/page")
    ]


def test_a_tool_result_without_an_id_is_a_problem_and_still_read(tmp_path: Path) -> None:
    answered = {"role": "tool", "name": "web_search", "content": RESULTS}
    path = cassette(
        tmp_path,
        interaction(CHAT, chat_completion(calls=[("call_1", "web_search", CALL)]), chat_request()),
        interaction(CHAT, chat_completion("Done."), chat_request(CALLED, answered)),
    )
    reading = read_cassette(path)
    assert [(p.interaction, p.reason) for p in reading.problems] == [
        (1, "the request: messages[2] has no call id")
    ]
    [transcript] = reading.transcripts
    assert ("tool-result", "https://medium.com/@a/repl") in [
        (v.where, v.url) for v in POLICY.audit(transcript)
    ]


def test_a_retried_request_adds_its_results_once(tmp_path: Path) -> None:
    limited = interaction(
        CHAT, '{"error": "rate limited"}', chat_request(CALLED, ANSWERED), status=429
    )
    reading = read_cassette(chat_conversation(tmp_path, limited))
    assert reading.problems == []
    [transcript] = reading.transcripts
    assert [m.role for m in transcript.messages] == ["user", "assistant", "user", "assistant"]


def test_a_failed_last_call_still_shows_the_results_it_carried(tmp_path: Path) -> None:
    path = cassette(
        tmp_path,
        interaction(CHAT, chat_completion(calls=[("call_1", "web_search", CALL)]), chat_request()),
        interaction(CHAT, '{"error": "overloaded"}', chat_request(CALLED, ANSWERED), status=503),
    )
    [transcript] = read_cassette(path).transcripts
    assert [m.role for m in transcript.messages] == ["user", "assistant", "user"]
    assert "https://medium.com/@a/repl" in [s.url for s in sources(transcript)]


def test_an_anthropic_error_result_shows_no_pages(tmp_path: Path) -> None:
    use = {"type": "tool_use", "id": "toolu_1", "name": "web_search", "input": CALL}
    request = {
        "model": "m",
        "messages": [
            {"role": "user", "content": "Q?"},
            {"role": "assistant", "content": [use]},
            {"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": "toolu_1", "content": RESULTS,
                 "is_error": True}
            ]},
        ],
    }  # fmt: skip
    path = cassette(
        tmp_path,
        interaction(
            ANTHROPIC,
            anthropic_message([use], stop_reason="tool_use"),
            {"messages": request["messages"][:1]},
        ),
        interaction(ANTHROPIC, anthropic_message([anthropic_text("Sorry.")]), request),
    )
    reading = read_cassette(path)
    assert reading.problems == []
    [transcript] = reading.transcripts
    [result] = transcript.messages[2].content
    assert isinstance(result, ToolResultPart)
    assert (result.tool_name, result.is_error) == ("web_search", True)
    assert list(sources(transcript)) == []


def test_each_agent_run_is_its_own_transcript(tmp_path: Path) -> None:
    first = interaction(CHAT, chat_completion("One."), chat_request())
    second = interaction(
        CHAT, chat_completion("Two."), {"messages": [{"role": "user", "content": "Again?"}]}
    )
    reading = read_cassette(cassette(tmp_path, first, second))
    assert [len(t.messages) for t in reading.transcripts] == [2, 2]
    assert reading.interactions == [[None, 0], [None, 1]]
    [asked] = reading.transcripts[1].messages[0].content
    assert isinstance(asked, TextPart)
    assert asked.text == "Again?"


def test_history_the_cassette_never_answered_is_read_from_the_first_request(
    tmp_path: Path,
) -> None:
    path = cassette(
        tmp_path, interaction(CHAT, chat_completion("Done."), chat_request(CALLED, ANSWERED))
    )
    reading = read_cassette(path)
    assert reading.interactions == [[None, 0, 0, 0]]
    [transcript] = reading.transcripts
    assert [m.role for m in transcript.messages] == ["user", "assistant", "user", "assistant"]
    assert ("tool-result", "https://medium.com/@a/repl") in [
        (v.where, v.url) for v in POLICY.audit(transcript)
    ]


def test_the_bundled_client_search_example_reads_whole() -> None:
    [path] = (EXAMPLES / "test_client_search").glob("*.yaml")
    reading = read_cassette(path)
    assert reading.problems == []
    assert reading.tool_traffic == 1
    [transcript] = reading.transcripts
    assert [s.url for s in sources(transcript)] == [
        "https://docs.python.org/3/whatsnew/3.13.html",
        "https://realpython.com/python313-repl/",
    ]
    assert [(v.where, v.url) for v in POLICY.audit(transcript)] == [
        ("tool-result", "https://realpython.com/python313-repl/")
    ]


def test_the_bundled_fetch_example_is_tool_traffic_only() -> None:
    [path] = (EXAMPLES / "test_fetch_agent").glob("*.yaml")
    reading = read_cassette(path)
    assert (reading.problems, reading.transcripts, reading.tool_traffic) == ([], [], 1)


def test_a_stateful_responses_request_with_only_results_continues_the_conversation(
    tmp_path: Path,
) -> None:
    from agentloop_tools.testing import openai_message, openai_response

    responses = "https://api.openai.com/v1/responses"
    called = {
        "type": "function_call",
        "id": "fc_1",
        "call_id": "call_1",
        "name": "web_search",
        "arguments": json.dumps(CALL),
        "status": "completed",
    }
    output = {"type": "function_call_output", "call_id": "call_1", "output": RESULTS}
    path = cassette(
        tmp_path,
        interaction(responses, openai_response([called]), {"input": "Q?"}),
        interaction(
            responses,
            openai_response([openai_message("Done.")]),
            {"previous_response_id": "resp_1", "input": [output]},
        ),
    )
    reading = read_cassette(path)
    assert reading.problems == []
    [transcript] = reading.transcripts
    assert [m.role for m in transcript.messages] == ["user", "assistant", "user", "assistant"]
    assert [s.url for s in sources(transcript)][-1] == "https://medium.com/@a/repl"


@pytest.mark.parametrize(
    ("method", "uri"),
    [
        ("POST", "https://api.anthropic.com/v1/messages/count_tokens"),
        ("GET", "https://api.openai.com/v1/models"),
        ("GET", "https://api.anthropic.com/v1/models/claude-sonnet-4-5"),
    ],
)
def test_provider_bookkeeping_calls_are_skipped(tmp_path: Path, method: str, uri: str) -> None:
    reading = read_cassette(
        cassette(tmp_path, interaction(uri, '{"input_tokens": 5}', method=method))
    )
    assert (reading.problems, reading.skipped, reading.tool_traffic) == ([], 1, 0)


# --- where each API puts a client-tool result ---------------------------------------
# One table in the reader says, per API, which fields hold a result's text, call id,
# tool name and error flag; these pin every entry of it through read_cassette.

RESPONSES = "https://api.openai.com/v1/responses"


def answered_by(api: str, result: dict[str, Any]) -> dict[str, Any]:
    """An interaction whose request holds a web_search call (id call_1) and ``result``."""
    from agentloop_tools.testing import openai_message, openai_response

    if api == "anthropic":
        use = {"type": "tool_use", "id": "call_1", "name": "web_search", "input": CALL}
        request = {
            "messages": [
                {"role": "user", "content": "Q?"},
                {"role": "assistant", "content": [use]},
                {"role": "user", "content": [{"type": "tool_result", **result}]},
            ]
        }
        return interaction(ANTHROPIC, anthropic_message([anthropic_text("Done.")]), request)
    if api == "openai":
        called = {
            "type": "function_call",
            "call_id": "call_1",
            "name": "web_search",
            "arguments": json.dumps(CALL),
        }
        output = {"type": "function_call_output", **result}
        request = {"input": [{"role": "user", "content": "Q?"}, called, output]}
        return interaction(RESPONSES, openai_response([openai_message("Done.")]), request)
    return interaction(
        CHAT, chat_completion("Done."), chat_request(CALLED, {"role": "tool", **result})
    )


# api: (where the result sits, its text field, its call-id field)
RESULT_FIELDS = {
    "anthropic": ("messages[2].content[0]", "content", "tool_use_id"),
    "openai": ("input[2]", "output", "call_id"),
    "chat": ("messages[2]", "content", "tool_call_id"),
}


def read_result(tmp_path: Path, api: str, result: dict[str, Any]) -> tuple[Any, ToolResultPart]:
    reading = read_cassette(cassette(tmp_path, answered_by(api, result)))
    [transcript] = reading.transcripts
    [part] = transcript.messages[2].content
    assert isinstance(part, ToolResultPart)
    return reading, part


@pytest.mark.parametrize("api", RESULT_FIELDS)
def test_a_tool_result_is_read_from_each_apis_own_fields(tmp_path: Path, api: str) -> None:
    _, text, call_id = RESULT_FIELDS[api]
    reading, part = read_result(tmp_path, api, {call_id: "call_1", text: RESULTS})
    assert reading.problems == []
    assert (part.call_id, part.tool_name, part.content, part.is_error) == (
        "call_1",
        "web_search",
        RESULTS,
        False,
    )


@pytest.mark.parametrize("api", RESULT_FIELDS)
def test_a_tool_result_of_unknown_form_is_a_problem_naming_its_field(
    tmp_path: Path, api: str
) -> None:
    where, text, call_id = RESULT_FIELDS[api]
    reading, part = read_result(tmp_path, api, {call_id: "call_1", text: {"odd": 1}})
    assert [(p.interaction, p.reason) for p in reading.problems] == [
        (0, f"the request: {where} (a tool result) has {text} of no known form")
    ]
    assert (part.call_id, part.tool_name, part.content) == ("call_1", "web_search", "")


@pytest.mark.parametrize("api", RESULT_FIELDS)
def test_a_tool_result_without_a_call_id_is_a_problem_in_every_api(
    tmp_path: Path, api: str
) -> None:
    where, text, _ = RESULT_FIELDS[api]
    reading, part = read_result(tmp_path, api, {text: {"odd": 1}})
    # Both problems, in the order the result's fields are read.
    assert [p.reason for p in reading.problems] == [
        f"the request: {where} (a tool result) has {text} of no known form",
        f"the request: {where} has no call id",
    ]
    assert (part.call_id, part.tool_name) == ("unidentified-call", "unknown")


@pytest.mark.parametrize(
    ("api", "is_error"),
    # Only Anthropic carries an error flag; the OpenAI APIs are read by agentloop's
    # "Error:" prefix, which Anthropic's flag overrides.
    [("anthropic", False), ("openai", True), ("chat", True)],
)
def test_an_error_result_is_told_by_the_flag_or_the_prefix(
    tmp_path: Path, api: str, is_error: bool
) -> None:
    _, text, call_id = RESULT_FIELDS[api]
    _, part = read_result(tmp_path, api, {call_id: "call_1", text: "Error: quota exceeded"})
    assert part.is_error is is_error


@pytest.mark.parametrize("api", RESULT_FIELDS)
def test_only_chat_results_carry_their_tool_name(tmp_path: Path, api: str) -> None:
    _, text, call_id = RESULT_FIELDS[api]
    _, part = read_result(tmp_path, api, {call_id: "call_1", text: "", "name": "web_fetch"})
    assert part.tool_name == ("web_fetch" if api == "chat" else "web_search")
