"""tool_calls() on real recordings: the hosted calls are the ones the provider recorded.

Two oracles, neither computed by the code under test: the "hosted tool calls" line
PROVENANCE.md gives each recorded response (read from the provider's blocks by the
folder's own extractors), and Anthropic's billing count in each response's ``usage``
(``server_tool_use.web_search_requests`` / ``web_fetch_requests``). Skips when the
folder is absent, as the other real-cassette tests do.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

import pytest
from agentloop import Transcript

from agentloop_tools.cassettes import read_cassette
from agentloop_tools.testing import AgentloopEvidence, assert_tool_calls, tool_call
from agentloop_tools.web import ToolCall, tool_calls
from tests.real_cassettes import needs_real_cassettes
from tests.recorded import FOLDER, interactions, provider_of, read_alone

pytestmark = [
    pytest.mark.core,
    needs_real_cassettes,
    pytest.mark.agentloop_06,  # the cassette reader builds agentloop's clients
]

_INTERACTION = re.compile(r"^  - \[(\d+)\] `POST ")
_CALLS = re.compile(r"^    - hosted tool calls(?: \(\d+\): (.*)|: none in this response)$")
_ONE = re.compile(r'(?P<name>[a-z_]+)(?: (?P<arg>"(?:[^"\\]|\\.)*"|\S+))?(?: \([^)]*\))?(?:; |$)')


def recorded_calls() -> dict[tuple[str, int], list[tuple[str, str | None]]]:
    """PROVENANCE.md's hosted calls of each response: (name, query or URL)."""
    text = (FOLDER / "PROVENANCE.md").read_text(encoding="utf-8")
    found: dict[tuple[str, int], list[tuple[str, str | None]]] = {}
    for section in text.split("\n### `")[1:]:
        name = section.split("`", 1)[0]
        index = None
        for line in section.splitlines():
            started = _INTERACTION.match(line)
            if started:
                index = int(started.group(1))
            listed = _CALLS.match(line)
            if listed and index is not None:
                found[(name, index)] = _parse(listed.group(1) or "")
    return found


def _parse(text: str) -> list[tuple[str, str | None]]:
    calls: list[tuple[str, str | None]] = []
    position = 0
    while position < len(text):
        one = _ONE.match(text, position)
        assert one is not None, text[position:]
        arg = one.group("arg")
        if arg is None or arg in ("null", "None"):
            calls.append((one.group("name"), None))
        else:
            calls.append((one.group("name"), json.loads(arg) if arg.startswith('"') else arg))
        position = one.end()
    return calls


RECORDED = recorded_calls() if (FOLDER / "PROVENANCE.md").is_file() else {}
CASES = sorted(RECORDED)


def asked(call: ToolCall) -> tuple[str, str | None]:
    """A hosted call in PROVENANCE.md's terms: Anthropic's tool name, OpenAI's action."""
    if "action" in call.arguments:  # an OpenAI web_search_call
        target = call.arguments.get("query" if call.arguments["action"] == "search" else "url")
        return str(call.arguments["action"]), target
    return call.name, call.arguments.get("query", call.arguments.get("url"))


@pytest.fixture(scope="module")
def response(tmp_path_factory: pytest.TempPathFactory) -> Callable[[str, int], Transcript]:
    """The transcript of one recorded interaction read alone; its last message is the
    recorded response (JSON or a rebuilt stream)."""
    return read_alone(tmp_path_factory.mktemp("one-response"))


def test_the_oracle_covers_both_providers_and_every_kind_of_call() -> None:
    assert len(CASES) >= 45
    kinds = {name for calls in RECORDED.values() for name, _ in calls}
    assert {"web_search", "web_fetch", "code_execution", "search", "open_page"} <= kinds
    assert "find_in_page" in kinds
    assert sum(len(calls) for calls in RECORDED.values()) >= 100


@pytest.mark.parametrize(("name", "index"), CASES)
def test_the_hosted_calls_of_each_response_are_the_ones_it_recorded(
    name: str, index: int, response: Callable[[str, int], Transcript]
) -> None:
    calls = [call for call in tool_calls(response(name, index), since=-1) if call.hosted]
    # A call asked for in an earlier request (its result alone in this response: a paused
    # turn continued, a search in flight) has no arguments: PROVENANCE lists calls asked.
    assert [asked(call) for call in calls if call.arguments] == RECORDED[(name, index)]
    assert all(call.outcome in ("ok", "no-result") for call in calls)  # no error is recorded


def usage_of(interaction: dict[str, Any]) -> dict[str, int] | None:
    """Anthropic's ``usage.server_tool_use`` of a response: the body's, or for a stream
    the last event that carries it."""
    body = interaction["response"]["body"]["string"]
    body = body.decode() if isinstance(body, bytes) else body
    payloads = [body] if body.lstrip().startswith("{") else [
        line[len("data:") :] for line in body.splitlines() if line.startswith("data:")
    ]  # fmt: skip
    found = None
    for payload in payloads:
        try:
            data = json.loads(payload)
        except ValueError:
            continue
        for holder in (data, data.get("message") or {}):
            usage = holder.get("usage") if isinstance(holder, dict) else None
            if isinstance(usage, dict) and isinstance(usage.get("server_tool_use"), dict):
                found = usage["server_tool_use"]
    return found


BILLED = [
    (name, index)
    for name, index in CASES
    if provider_of(interactions(name)[index]["request"]["uri"]) == "anthropic"
    and usage_of(interactions(name)[index]) is not None
]


def test_most_anthropic_responses_report_what_they_billed() -> None:
    assert len(BILLED) >= 20


@pytest.mark.parametrize(("name", "index"), BILLED)
def test_hosted_searches_and_fetches_that_ran_are_what_the_provider_billed(
    name: str, index: int, response: Callable[[str, int], Transcript]
) -> None:
    billed = usage_of(interactions(name)[index])
    assert billed is not None
    ran = [
        c
        for c in tool_calls(response(name, index), since=-1)
        if c.hosted and c.outcome != "no-result"
    ]
    assert sum(c.name == "web_search" for c in ran) == billed.get("web_search_requests", 0)
    assert sum(c.name == "web_fetch" for c in ran) == billed.get("web_fetch_requests", 0)


def test_a_paused_turn_read_whole_is_each_search_once_with_its_result() -> None:
    name = "pydantic-ai__test_pause_turn_web_search_vcr.yaml"
    evidence = AgentloopEvidence()
    for transcript in read_cassette(FOLDER / name).transcripts:
        evidence.add(transcript)
    calls = evidence.tool_calls()
    recorded = RECORDED[(name, 0)] + RECORDED[(name, 1)]
    assert [asked(call) for call in calls] == recorded
    assert len(recorded) == 15
    assert {call.outcome for call in calls} == {"ok"}, "the continuation's result is the call's"
    assert len({call.call_id for call in calls}) == 15


def test_assert_tool_calls_reads_a_real_openai_trajectory() -> None:
    name = "ruby_llm__chat_with_response_api_deep_research_openai_o4-mini-deep-research_can_respond"
    name += ".yaml"
    evidence = AgentloopEvidence()
    for transcript in read_cassette(FOLDER / name).transcripts:
        evidence.add(transcript)
    britannica = re.compile(r"britannica\.com")
    matched = assert_tool_calls(
        evidence,
        tool_call("web_search", action="search", query=re.compile("boils at 100")),
        tool_call("web_search", action="open_page", url=britannica),
        tool_call("web_search", action="find_in_page", pattern="boils", url=britannica),
    )
    assert [call.message_index for call in matched] == [1, 1, 1]
    with pytest.raises(AssertionError, match=r"1 of 1 expected call\(s\) not found"):
        assert_tool_calls(evidence, tool_call("web_fetch"))
