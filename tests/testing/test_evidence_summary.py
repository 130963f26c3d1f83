"""``AgentloopEvidence.summary()`` outside the plugin, and the record as JSON.

Outside the plugin no raw provider answer is seen: usage is unknown (``None``), never 0;
hosted searches are still counted from the blocks of the APIs that show them.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from agentloop import Agent

from agentloop_tools.testing import (
    AgentloopEvidence,
    EvidenceSummary,
    ScriptedProvider,
    anthropic_message,
    anthropic_search,
    anthropic_text,
)
from agentloop_tools.web import DomainPolicy, native_web_search
from tests.agents import ENV

DOCS = "https://docs.python.org/3/"

pytestmark = pytest.mark.agentloop_06


def run(evidence: AgentloopEvidence, script: list[dict[str, Any]]) -> None:
    client = ScriptedProvider("anthropic", script).http_client()
    with Agent.from_env(
        ENV["anthropic"], [native_web_search()], observer=evidence.observer, http_client=client
    ) as agent:
        agent.run("Python docs?")


def test_outside_the_plugin_usage_is_unknown_and_searches_come_from_the_blocks() -> None:
    evidence = AgentloopEvidence()
    run(evidence, [anthropic_message([anthropic_search("py", [DOCS]), anthropic_text("ok")])])
    summary = evidence.summary(DomainPolicy.block(["wikipedia.org"]))
    [conversation] = summary.conversations
    assert summary.input_tokens is None
    assert summary.output_tokens is None
    assert conversation.model_requests == 1  # the observer saw the request
    assert summary.searches == 1
    assert summary.queries == ("py",)
    assert summary.verdict == "pass"
    assert summary.attribution == "observer"


def test_a_transcript_added_by_hand_has_unknown_requests() -> None:
    evidence = AgentloopEvidence()
    run(evidence, [anthropic_message([anthropic_text("ok")])])
    other = AgentloopEvidence()
    other.add(evidence.transcripts[0])
    assert other.summary().model_requests is None
    assert other.summary().total("tool_calls") == 0


def test_the_record_round_trips_through_json_and_a_newer_schema_is_refused() -> None:
    evidence = AgentloopEvidence()
    run(evidence, [anthropic_message([anthropic_search("py", [DOCS]), anthropic_text("ok")])])
    summary = evidence.summary()
    text = summary.to_json()
    assert json.loads(text)["schema"] == 1
    assert EvidenceSummary.from_json(text) == summary
    assert EvidenceSummary.from_json(summary.to_dict()) == summary
    newer = {**summary.to_dict(), "schema": 99}
    with pytest.raises(ValueError, match="schema 99 is not one this agentloop-tools reads"):
        EvidenceSummary.from_json(newer)


@pytest.mark.parametrize(
    "hostile",
    ['"text"', "[1, 2]", '{"schema": 1, "conversations": "no"}', '{"schema": true}'],
)
def test_a_hostile_stored_record_is_a_value_error(hostile: str) -> None:
    with pytest.raises(ValueError, match=r"evidence record|schema"):
        EvidenceSummary.from_json(hostile)


def _nested(depth: int) -> list[Any]:
    value: list[Any] = []
    for _ in range(depth):
        value = [value]
    return value


@pytest.mark.parametrize(
    "hostile",
    [
        "[" * 100_000 + "]" * 100_000,
        '{"schema": 1, "conversations": ' + "[" * 100_000 + "]" * 100_000 + "}",
        {"schema": 1, "conversations": [{"hosted": [{"kind": _nested(100_000)}]}]},
        '{"schema": 0}',
        '{"schema": -5}',
    ],
    ids=["deep-text", "deep-conversations", "deep-mapping", "schema-0", "schema-negative"],
)
def test_a_record_nested_too_deep_or_of_no_schema_is_a_value_error(hostile: object) -> None:
    # The documented error, never a RecursionError out of the JSON reader or str().
    with pytest.raises(ValueError, match=r"nested too deeply|is not one this agentloop-tools"):
        EvidenceSummary.from_json(hostile)  # type: ignore[arg-type]


def test_wrong_types_inside_a_stored_record_read_as_unknown() -> None:
    record = EvidenceSummary.from_json(
        {"schema": 1, "conversations": [{"counters": {"searches": "3", "input_tokens": -1.5}}]}
    )
    assert record.searches is None
    assert record.input_tokens is None


def test_deeply_nested_arguments_given_as_data_are_named_not_a_crash() -> None:
    deep: list[object] = []
    for _ in range(100_000):
        deep = [deep]
    call = {"name": "x", "arguments": {"a": deep}}
    record = EvidenceSummary.from_json({"schema": 1, "conversations": [{"tool_calls": [call]}]})
    text = record.to_json()  # raised RecursionError
    assert "nested too deeply to show" in text
