"""``assert_within_budget``: a test's totals against its limits, on a real agent's evidence.

``searches`` and ``fetches`` count hosted and client-side calls alike; a fetch our tool
refused before any request is a refused attempt, not a fetch; a limit on a counter
nobody reported fails, saying it is unknown.
"""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
import yaml
from agentloop import Agent, HostedTool, ToolSpec

from agentloop_tools._plugin.budget import spend_of
from agentloop_tools.testing import (
    AgentloopEvidence,
    ConversationEvidence,
    EvidenceAssertionError,
    EvidenceSummary,
    ScriptedPages,
    ScriptedProvider,
    ScriptedSearch,
    anthropic_message,
    anthropic_search,
    anthropic_text,
    assert_within_budget,
    brave_results,
)
from agentloop_tools.testing._summary import ToolCallRecord
from agentloop_tools.web import DomainPolicy, native_web_search, web_fetch, web_search
from agentloop_tools.web.backends import brave
from tests.agents import ENV
from tests.real_cassettes import FILES, needs_real_cassettes

pytestmark = pytest.mark.agentloop_06

DOCS = "https://docs.python.org/3/"
EVIL = "https://evil.example/page"


def _tool_use(call_id: str, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    return {"type": "tool_use", "id": call_id, "name": name, "input": arguments}


def _evidence() -> AgentloopEvidence:
    """One hosted search, one client web_search (renamed), one fetch read, one refused."""
    evidence = AgentloopEvidence()
    script = [
        anthropic_message(
            [
                anthropic_search("python docs", [DOCS]),
                _tool_use("t1", "search_the_web", {"query": "python tutorial"}),
                _tool_use("t2", "web_fetch", {"url": DOCS}),
                _tool_use("t3", "web_fetch", {"url": EVIL}),
            ],
            stop_reason="tool_use",
        ),
        anthropic_message([anthropic_text("The docs are at https://docs.python.org/3/")]),
    ]
    pages = ScriptedPages({DOCS: "<title>Docs</title><p>" + "The docs. " * 30 + "</p>"})
    hits = ScriptedSearch("brave", [brave_results([(DOCS, "Docs", "The docs.")])])
    tools: list[ToolSpec | HostedTool] = [
        native_web_search(),
        # Renamed (Anthropic's hosted search is "web_search" on the wire): still ours.
        web_search(brave("BSA-placeholder"), http_client=hits.http_client(), name="search_the_web"),
        web_fetch(**pages.tool_options(), policy=DomainPolicy.allow(["python.org"])),
    ]
    client = ScriptedProvider("anthropic", script).http_client()
    with Agent.from_env(
        ENV["anthropic"], tools, observer=evidence.observer, http_client=client
    ) as agent:
        agent.run("Python docs?")
    return evidence


@pytest.fixture(scope="module")
def evidence() -> AgentloopEvidence:
    return _evidence()


def test_searches_and_fetches_count_hosted_and_client_calls_but_not_a_refused_one(
    evidence: AgentloopEvidence,
) -> None:
    summary = assert_within_budget(evidence, searches=2, fetches=1, tool_calls=3)
    assert summary.searches == 1  # the record's own counter stays the hosted one
    [conversation] = summary.conversations
    assert [call.tool for call in conversation.tool_calls] == [
        "web_search",
        "web_fetch",
        "web_fetch",
    ]
    assert [call.refused for call in conversation.tool_calls] == [False, False, True]


def test_over_budget_names_the_counter_the_limit_and_the_spend(
    evidence: AgentloopEvidence,
) -> None:
    with pytest.raises(EvidenceAssertionError) as raised:
        assert_within_budget(evidence, searches=1, fetches=0, model_requests=5)
    message = str(raised.value)
    assert message.splitlines()[:3] == [
        "the test spent more than its budget allows:",
        "- searches: limit 1, spent 2 (conversation 1: 2)",
        "- fetches: limit 0, spent 1 (conversation 1: 1)",
    ]
    assert "(budget from assert_within_budget(model_requests=5, searches=1, fetches=0))" in message
    assert raised.value.failure_kind == "budget"


def test_a_limit_on_unknown_usage_fails_saying_it_is_unknown(
    evidence: AgentloopEvidence,
) -> None:
    # Outside the plugin no raw answer is seen: token usage is unknown, never 0.
    with pytest.raises(EvidenceAssertionError, match=r"spent unknown") as raised:
        assert_within_budget(evidence, output_tokens=1_000_000)
    assert "give the test a cassette" in str(raised.value)


def test_a_stored_record_is_checked_the_same_way(evidence: AgentloopEvidence) -> None:
    stored = EvidenceSummary.from_json(evidence.summary().to_json())
    assert_within_budget(stored, searches=2, fetches=1)
    with pytest.raises(EvidenceAssertionError, match=r"- fetches: limit 0, spent 1"):
        assert_within_budget(stored, fetches=0)


def test_a_record_without_the_tool_field_counts_our_tools_by_name() -> None:
    conversation = ConversationEvidence(
        searches=0,
        fetches=0,
        tool_calls=(
            ToolCallRecord("web_search", {"query": "x"}, "ok"),
            ToolCallRecord("lookup", {}, "ok"),
        ),
    )
    summary = EvidenceSummary(conversations=(conversation,))
    assert_within_budget(summary, searches=1, tool_calls=2)
    with pytest.raises(EvidenceAssertionError, match=r"- searches: limit 0, spent 1"):
        assert_within_budget(summary, searches=0)


def test_each_conversations_share_is_shown() -> None:
    summary = EvidenceSummary(
        conversations=(
            ConversationEvidence(index=0, input_tokens=10),
            ConversationEvidence(index=1, input_tokens=None),
        )
    )
    with pytest.raises(EvidenceAssertionError) as raised:
        assert_within_budget(summary, input_tokens=100)
    assert (
        "- input_tokens: limit 100, spent unknown (conversation 1: 10, conversation 2: unknown)"
        in (str(raised.value))
    )


@pytest.mark.parametrize(
    ("limits", "error", "match"),
    [
        ({"searchs": 1}, TypeError, r"unknown budget counter\(s\) searchs"),
        ({"searches": 1.5}, TypeError, r"searches=1.5 is not a whole number"),
        ({"searches": True}, TypeError, r"searches=True is not a whole number"),
        ({"searches": -1}, ValueError, r"searches=-1 is out of range"),
        ({}, ValueError, r"names no limit"),
    ],
)
def test_bad_limits_are_refused(
    evidence: AgentloopEvidence, limits: dict[str, Any], error: type[Exception], match: str
) -> None:
    with pytest.raises(error, match=match):
        assert_within_budget(evidence, **limits)


# Real recordings (../shared/real-cassettes): the budget and the spend cap count hosted
# searches as the provider billed them in its usage and showed them in its blocks.


@needs_real_cassettes
@pytest.mark.parametrize("path", FILES, ids=lambda path: path.stem[:60])
def test_a_budget_on_a_real_recording_holds_at_what_the_provider_billed(
    path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from tests.cli.test_evidence_record import expected, record_of

    wanted = expected(path)
    if wanted is None:
        pytest.skip("no Anthropic Messages or OpenAI Responses answer in this recording")
    searches, _ = wanted
    summary = EvidenceSummary.from_json(record_of(path, capsys))
    assert_within_budget(summary, searches=searches)
    if searches:
        with pytest.raises(
            EvidenceAssertionError, match=rf"limit {searches - 1}, spent {searches}"
        ):
            assert_within_budget(summary, searches=searches - 1)


@needs_real_cassettes
@pytest.mark.parametrize("path", FILES, ids=lambda path: path.stem[:60])
def test_the_spend_cap_counts_a_real_recordings_billed_searches(path: Path) -> None:
    from tests.cli.test_evidence_record import expected

    wanted = expected(path)
    if wanted is None:
        pytest.skip("no Anthropic Messages or OpenAI Responses answer in this recording")
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    spent = 0
    for interaction in data["interactions"]:
        request = SimpleNamespace(**interaction["request"])
        request.host = request.uri.split("/")[2]
        request.path = "/" + request.uri.split("/", 3)[-1].split("?")[0]
        spent += spend_of(request, interaction["response"]).get("searches", 0)
    assert spent == wanted[0]
