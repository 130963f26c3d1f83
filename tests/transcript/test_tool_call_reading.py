"""Our tools' calls read back from a transcript: what each call came to, in the report's words.

The transcripts are those of a real agent (scripted model, scripted search API, a mock
transport for the pages), except where a run is cut short: a saved transcript whose
last call never got its result is written out by hand, as it would be saved.
"""

from __future__ import annotations

from typing import Any

import httpx
import pytest
from agentloop import Transcript, tool
from agentloop.provider import ModelResponse, StopReason, Usage
from agentloop.transcript import Message, TextPart, ToolCallPart

from agentloop_tools.testing import (
    ScriptedSearch,
    assert_no_violations,
    brave_rate_limited,
    brave_results,
)
from agentloop_tools.web import DomainPolicy, web_fetch
from agentloop_tools.web._transcript._tool_calls import ToolCall, call_for, our_tool_calls
from tests import agents
from tests.fetch.helpers import Recorder, converse, html_page, public_resolver, turn
from tests.search.helpers import call, run_agent, scripted_tool

pytestmark = pytest.mark.core

POLICY = DomainPolicy.allow(["python.org"])
# web_fetch needs agentloop 0.6 (timeout_seconds=): the core runs on 0.4 and 0.5 skip these.
FETCH_TOOL = pytest.mark.agentloop_06
DOCS = ("https://docs.python.org/3/", "Python docs", "The documentation.")
TUTORIAL = ("https://docs.python.org/3/tutorial/", "Tutorial", "Start here.")


def failure_report(transcript: Transcript | list[Message]) -> str:
    with pytest.raises(AssertionError) as raised:
        assert_no_violations(transcript, POLICY)
    return str(raised.value)


def only(transcript: Transcript) -> ToolCall:
    [found] = our_tool_calls(transcript.messages)
    return found


def test_a_call_whose_result_was_never_recorded_says_so() -> None:
    # A run saved mid-turn: the model asked, the tool never answered.
    messages = [
        Message(role="user", content=(TextPart(text="Read the page."),)),
        Message(
            role="assistant",
            content=(
                ToolCallPart(
                    id="c1", tool_name="web_fetch", arguments={"url": "https://evil.com/"}
                ),
            ),
        ),
    ]
    [found] = our_tool_calls(messages)
    assert (found.outcome, found.result_index, found.url) == (
        "no-result",
        None,
        "https://evil.com/",
    )
    report = failure_report(messages)
    assert "tool-call message 1: https://evil.com/" in report
    assert "no result was recorded" in report


def test_a_failed_search_says_no_result_reached_the_model() -> None:
    script = ScriptedSearch("brave", [brave_rate_limited()])
    transcript = run_agent(
        scripted_tool(script, policy=POLICY, attempts=1), [call("site:evil.com python")]
    )
    found = only(transcript)
    assert (found.outcome, found.code, found.hits) == ("failed", "rate-limited", ())
    assert found.error is not None
    assert found.error.startswith("Error: [rate-limited] ")
    # The report pairs the violation (the query named evil.com) with what came of the call.
    report = failure_report(transcript)
    assert "web_search failed ([rate-limited]): no result reached the model" in report


def test_a_search_that_withheld_nothing_counts_only_the_hits_shown() -> None:
    script = ScriptedSearch("brave", [brave_results([DOCS, TUTORIAL])])
    transcript = run_agent(scripted_tool(script, policy=POLICY), [call("python docs")])
    found = only(transcript)
    assert found.hits == ((DOCS[0], DOCS[1]), (TUTORIAL[0], TUTORIAL[1]))
    assert found.withheld == 0
    assert found.describe() == "2 result(s) shown"


def test_a_renamed_search_tool_whose_call_failed_is_known_by_its_arguments() -> None:
    # No marker line to recognise: an error result, under a name of the team's choosing,
    # called with query and count only (the narrowing left out).
    script = ScriptedSearch("brave", [])
    transcript = run_agent(scripted_tool(script, name="find"), [call("x", name="find")])
    found = only(transcript)
    assert (found.tool, found.name, found.outcome, found.code) == (
        "web_search",
        "find",
        "failed",
        "missing-query",
    )
    assert found.describe() == "find failed ([missing-query]): no result reached the model"


@FETCH_TOOL
def test_a_renamed_fetch_tool_that_refused_is_known_by_its_error_code() -> None:
    recorder = Recorder()
    tool = web_fetch(
        policy=POLICY, name="open_page", resolver=public_resolver, http_client=recorder.client()
    )
    transcript = converse(tool, turn({"url": "https://evil.com/setup", "tool": "open_page"}))
    found = only(transcript)
    assert (found.tool, found.outcome, found.code) == ("web_fetch", "refused", "blocked-by-policy")
    assert found.describe() == "open_page refused it ([blocked-by-policy]): nothing was read"
    assert recorder.requests == []


@FETCH_TOOL
def test_every_hop_of_a_redirect_chain_is_in_the_outcome() -> None:
    table = {
        "https://a.example/start": "/middle",
        "https://a.example/middle": "https://b.example/end",
    }

    def respond(request: httpx.Request) -> httpx.Response:
        target = table.get(str(request.url))
        if target is not None:
            return httpx.Response(302, headers={"location": target})
        return html_page("<p>" + "The final page. " * 20 + "</p>", title="Final")

    tool = web_fetch(resolver=public_resolver, http_client=Recorder(respond).client())
    found = only(converse(tool, turn({"url": "https://a.example/start"})))
    assert found.redirects == ("https://a.example/middle",)
    assert (found.read, found.title) == ("https://b.example/end", "Final")
    assert found.describe() == (
        "redirected through https://a.example/middle and read https://b.example/end"
    )


@tool(parameters={"type": "object", "properties": {"url": {"type": "string"}}})
def open_url(url: str) -> str:
    """Open a URL in the team's own browser tool (not one of ours)."""
    return f"opened {url}"


def _turn(*parts: Any) -> ModelResponse:
    return ModelResponse(
        content=parts, stop_reason=StopReason.TOOL_USE, usage=Usage(), model="f", provider="fake"
    )


def test_calls_of_other_tools_are_not_read_as_ours() -> None:
    script = ScriptedSearch("brave", [brave_results([DOCS])])
    transcript = agents.converse(
        [scripted_tool(script, policy=POLICY), open_url],
        [
            _turn(
                ToolCallPart(id="c1", tool_name="open_url", arguments={"url": "https://evil.com/"}),
                call("python docs", n=2),
            ),
            ModelResponse(
                content=(TextPart(text="Done."),),
                stop_reason=StopReason.END_TURN,
                usage=Usage(),
                model="f",
                provider="fake",
            ),
        ],
        prompt="Research this.",
    )
    assert [(found.name, found.call_id) for found in our_tool_calls(transcript.messages)] == [
        ("web_search", "call_2")
    ]


@FETCH_TOOL
def test_a_violation_is_paired_with_the_call_of_its_own_message() -> None:
    # The same URL asked for twice: each tool-call violation gets its own call's outcome.
    recorder = Recorder()
    tool = web_fetch(policy=POLICY, resolver=public_resolver, http_client=recorder.client())
    transcript = converse(
        tool, turn({"url": "https://evil.com/a"}), turn({"url": "https://docs.python.org/3/"})
    )
    calls = our_tool_calls(transcript.messages)
    refused, read = calls
    assert call_for(calls, refused.message_index, "https://evil.com/a") is refused
    assert call_for(calls, read.message_index, "https://docs.python.org/3/") is read
    # A URL no call of that message named has no call to describe.
    assert call_for(calls, read.message_index, "https://evil.com/a") is None


def narrowed(query: str, allowed: list[str] | None, *, name: str) -> ToolCallPart:
    arguments = {"query": query, "count": None, "allowed_domains": allowed,
                 "blocked_domains": None}  # fmt: skip
    return ToolCallPart(id="call_1", tool_name=name, arguments=arguments)


def test_a_renamed_search_called_with_its_narrowing_is_known_and_paired() -> None:
    # The strict schema sends all four arguments: the call is ours under any name, and a
    # violation from the domains it narrowed to is paired with what came of it.
    script = ScriptedSearch("brave", [brave_rate_limited()])
    tool = scripted_tool(script, policy=POLICY, name="find", attempts=1)
    transcript = run_agent(tool, [narrowed("python", ["docs.python.org"], name="find")])
    found = only(transcript)
    assert (found.tool, found.name, found.outcome, found.code) == (
        "web_search",
        "find",
        "failed",
        "rate-limited",
    )
    assert found.allowed_domains == ("docs.python.org",)
    assert call_for([found], found.message_index, "docs.python.org") is found
    assert call_for([found], found.message_index, "evil.com") is None


def test_a_violation_from_a_narrowing_names_the_call_in_the_report() -> None:
    tool = scripted_tool(ScriptedSearch("brave", []), policy=POLICY, name="find")
    transcript = run_agent(tool, [narrowed("python", ["evil.com"], name="find")])
    # The tool refused a narrowing its policy does not permit, without a request.
    report = failure_report(transcript)
    assert (
        "  - tool-call message 1: evil.com  [not on the allowlist]\n      0 result(s) shown\n"
        in (report)
    )
