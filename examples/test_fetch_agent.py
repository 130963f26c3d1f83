"""An agent that searches then fetches, with the fetch replayed from a cassette.

The model is scripted (agentloop's FakeClient); the page request is answered by
cassettes/examples/test_fetch_agent/<test>.yaml through the real web_fetch transport,
so the test runs offline: the address check runs when a connection is opened, and
a replayed request opens none, so DNS is never asked. The page in the cassette is a
shortened copy recorded from ScriptedPages (scripts.PAGES), re-recorded with:
    pytest examples/test_fetch_agent.py --record-mode=rewrite --agentloop-from-scripts
"""

from __future__ import annotations

from typing import Any

import pytest
from agentloop import Agent, Transcript
from agentloop.provider import ModelResponse, StopReason, Usage
from agentloop.providers.fake import FakeClient
from agentloop.transcript import ContentPart, TextPart, ToolCallPart, ToolResultPart
from fetch_agent import POLICY, fetch_tools
from scripts import PAGES

from agentloop_tools.testing import ScriptedPages, assert_no_violations
from agentloop_tools.web import sources

PAGE = "https://docs.python.org/3/tutorial/controlflow.html"


def _turn(*parts: ContentPart, end: bool = False) -> ModelResponse:
    stop = StopReason.END_TURN if end else StopReason.TOOL_USE
    return ModelResponse(
        content=parts, stop_reason=stop, usage=Usage(), model="fake-1", provider="fake"
    )


def _call(call_id: str, name: str, **arguments: Any) -> ToolCallPart:
    return ToolCallPart(id=call_id, tool_name=name, arguments=arguments)


@pytest.mark.vcr
def test_the_agent_searches_then_reads_the_permitted_page(agentloop_from_scripts: bool) -> None:
    model = FakeClient(
        _turn(_call("s1", "search_docs", query="python tutorial")),
        _turn(
            _call("f1", "web_fetch", url=PAGE, start=None),
            _call("f2", "web_fetch", url="https://evil.example/python-tutorial", start=None),
        ),
        _turn(TextPart(text="Use the match statement for structural pattern matching."), end=True),
    )
    # Recording with --agentloop-from-scripts, the page comes from memory (no network).
    options = ScriptedPages(PAGES).tool_options() if agentloop_from_scripts else {}
    agent = Agent(fetch_tools(**options), client=model)
    transcript = Transcript()
    transcript.add_user_message("How do I branch on the shape of a value in Python?")
    # The cassette answers the request: no connection is opened, so DNS is never asked.
    agent.converse(transcript)

    read, refused = [
        part
        for message in transcript.messages
        for part in message.content
        if isinstance(part, ToolResultPart) and part.tool_name == "web_fetch"
    ]
    assert read.content.startswith(f"[web_fetch] url: {PAGE}\n")
    assert "match statement" in read.content
    assert refused.content.startswith("Error: [blocked-by-policy] https://evil.example/")
    assert [source.url for source in sources(transcript)] == [PAGE]
    # The model asked for the off-list page and web_fetch refused it: the audit still
    # reports the attempt, from the transcript alone, marked refused (nothing was read).
    [attempt] = POLICY.audit(transcript)
    assert (attempt.where, attempt.url, attempt.refused) == (
        "tool-call",
        "https://evil.example/python-tutorial",
        True,
    )
    # The policy held: a refused attempt does not fail by default (no one can promise
    # what a real model asks for). Ask for it to fail with refused_attempts="fail".
    assert_no_violations(transcript, POLICY)
    with pytest.raises(AssertionError, match=r"refused by web_fetch \(\[blocked-by-policy\]\)"):
        assert_no_violations(transcript, POLICY, refused_attempts="fail")
