"""The evidence record: ``agentloop_evidence.summary()``, kept in the cassette it recorded.

Real pytest runs: recorded from scripts (no key, no network), then replayed; the record
a replay computes is what the test reads, the one stored is what the cassette keeps.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from agentloop_tools._plugin.scope import FROM_SCRIPTS_OPTION

CONFTEST = """
import pytest
from agentloop_tools.testing import (
    anthropic_message, anthropic_search, anthropic_text, chat_completion,
)


def billed(message, **usage):
    message["usage"] = {**message["usage"], **usage}
    return message


def first(request):
    return billed(
        anthropic_message(
            [anthropic_search("python docs", ["https://docs.python.org/3/"]),
             anthropic_search("python tutorial", ["https://docs.python.org/3/tutorial/"])],
            stop_reason="pause_turn",
        ),
        input_tokens=1200, output_tokens=30, cache_read_input_tokens=7,
        cache_creation_input_tokens=0, server_tool_use={"web_search_requests": 1},
    )


def second(request):
    # The paused turn's second search is billed in its continuation: counted once.
    return billed(
        anthropic_message([anthropic_text(
            "See https://docs.python.org/3/ and https://example.org/x",
            cite=["https://docs.python.org/3/"],
        )]),
        input_tokens=1500, output_tokens=80, cache_read_input_tokens=0,
        cache_creation_input_tokens=5, server_tool_use={"web_search_requests": 1},
    )


SCRIPTS = {
    "test_search": lambda request: [first(request), second(request)],
    "test_two": lambda request: [
        billed(anthropic_message([anthropic_text("one")]), input_tokens=10, output_tokens=1),
        billed(anthropic_message([anthropic_text("two")]), input_tokens=20, output_tokens=2),
    ],
    "test_chat": lambda request: [chat_completion("See https://docs.python.org/3/")],
}


@pytest.fixture
def agentloop_script(request):
    return SCRIPTS[request.node.name](request)
"""

TESTS = """
import json
import pytest
from agentloop_tools.testing import EvidenceSummary
from agentloop_tools.web import native_web_search


def keep(evidence, name):
    summary = evidence.summary()
    assert EvidenceSummary.from_json(summary.to_json()) == summary
    with open(f"{name}.summary.json", "w") as file:
        file.write(summary.to_json())


@pytest.mark.vcr
@pytest.mark.domain_policy(block=["example.org"])
def test_search(agentloop_agent, agentloop_evidence):
    agent = agentloop_agent([native_web_search()], provider="anthropic")
    agent.run("Python docs?")
    keep(agentloop_evidence, "test_search")


@pytest.mark.vcr
def test_two(agentloop_agent, agentloop_evidence):
    agent = agentloop_agent([], provider="anthropic")
    agent.run("one?")
    agent.run("two?")
    keep(agentloop_evidence, "test_two")


@pytest.mark.vcr
def test_chat(agentloop_agent, agentloop_evidence):
    agentloop_agent([], provider="openrouter").run("Python docs?")
    keep(agentloop_evidence, "test_chat")
"""


@pytest.fixture
def recorded(project: pytest.Pytester) -> pytest.Pytester:
    project.makeconftest(CONFTEST)
    project.makepyfile(test_agent=TESTS)
    result = project.runpytest("--record-mode=once", FROM_SCRIPTS_OPTION.flag, "-p", "no:randomly")
    # test_search's answer links a blocked domain: the policy fails it, as it should.
    result.assert_outcomes(passed=2, failed=1)
    return project


def cassette(project: pytest.Pytester, test: str) -> Path:
    return project.path / "cassettes" / "test_agent" / f"{test}.yaml"


def summary_of(project: pytest.Pytester, test: str) -> dict[str, Any]:
    found: dict[str, Any] = json.loads((project.path / f"{test}.summary.json").read_text())
    return found


def stored(project: pytest.Pytester, test: str) -> dict[str, Any]:
    data = yaml.safe_load(cassette(project, test).read_text())
    record: dict[str, Any] = data["evidence"]["tests"][f"test_agent.py::{test}"]
    return record


def test_the_record_counts_what_the_provider_billed_and_shows_what_it_searched(
    recorded: pytest.Pytester,
) -> None:
    summary = summary_of(recorded, "test_search")
    assert summary["schema"] == 1
    assert summary["test"] == "test_agent.py::test_search"
    assert summary["verdict"] == "fail"
    [conversation] = summary["conversations"]
    counters = conversation["counters"]
    assert counters["model_requests"] == 2
    assert (counters["input_tokens"], counters["output_tokens"]) == (2700, 110)
    assert (counters["cache_read_tokens"], counters["cache_write_tokens"]) == (7, 5)
    assert counters["searches"] == 2  # billed: 1 + 1, not the 2 blocks and then 2 again
    assert counters["fetches"] == 0
    assert [h["target"] for h in conversation["hosted"]] == ["python docs", "python tutorial"]
    assert conversation["citations"][0]["url"] == "https://docs.python.org/3/"
    assert {link["url"]: link["consulted"] for link in conversation["links"]} == {
        "https://docs.python.org/3/": True,
        "https://example.org/x": False,
    }
    assert conversation["domains"] == ["docs.python.org"]
    assert summary["totals"]["searches"] == 2


def test_each_conversation_is_counted_and_the_test_total_is_their_sum(
    recorded: pytest.Pytester,
) -> None:
    summary = summary_of(recorded, "test_two")
    inputs = [c["counters"]["input_tokens"] for c in summary["conversations"]]
    assert inputs == [10, 20]
    assert summary["totals"]["input_tokens"] == 30
    assert summary["totals"]["model_requests"] == 2
    assert summary["verdict"] == "not-audited"


def test_a_counter_the_provider_does_not_report_is_unknown_never_zero(
    recorded: pytest.Pytester,
) -> None:
    summary = summary_of(recorded, "test_chat")
    # Chat Completions shows no hosted call: how many searches it ran is not known.
    assert summary["totals"]["searches"] is None
    assert summary["totals"]["fetches"] is None
    assert summary["totals"]["model_requests"] == 1


def test_the_cassette_keeps_the_record_after_its_interactions(recorded: pytest.Pytester) -> None:
    text = cassette(recorded, "test_search").read_text()
    keys = [line.split(":")[0] for line in text.splitlines() if line[:1].isalpha()]
    assert keys.index("provenance") < keys.index("interactions") < keys.index("evidence")
    record = stored(recorded, "test_search")
    assert record == summary_of(recorded, "test_search")


def test_a_replay_recomputes_the_record_and_its_assertions_read_that_one(
    recorded: pytest.Pytester,
) -> None:
    path = cassette(recorded, "test_two")
    data = yaml.safe_load(path.read_text())
    record = data["evidence"]["tests"]["test_agent.py::test_two"]
    record["conversations"][0]["counters"]["input_tokens"] = 999_999  # a stale stored one
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    (recorded.path / "test_two.summary.json").unlink()
    recorded.runpytest("-k", "test_two").assert_outcomes(passed=1, deselected=2)
    assert summary_of(recorded, "test_two")["totals"]["input_tokens"] == 30


def test_an_unchanged_re_recording_keeps_the_file_byte_for_byte(recorded: pytest.Pytester) -> None:
    before = cassette(recorded, "test_two").read_bytes()
    result = recorded.runpytest("-k", "test_two", "--record-mode=rewrite", FROM_SCRIPTS_OPTION.flag)
    result.assert_outcomes(passed=1, deselected=2)
    assert cassette(recorded, "test_two").read_bytes() == before


def test_a_cassette_without_a_record_replays_and_gains_one_when_re_recorded(
    recorded: pytest.Pytester,
) -> None:
    path = cassette(recorded, "test_two")
    data = yaml.safe_load(path.read_text())
    del data["evidence"]
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    recorded.runpytest("-k", "test_two").assert_outcomes(passed=1, deselected=2)
    assert "evidence" not in yaml.safe_load(path.read_text())  # a replay writes nothing
    result = recorded.runpytest("-k", "test_two", "--record-mode=rewrite", FROM_SCRIPTS_OPTION.flag)
    result.assert_outcomes(passed=1, deselected=2)
    again = yaml.safe_load(path.read_text())
    # The same interactions: provenance (and so the age) kept, the record added.
    assert again["provenance"] == data["provenance"]
    assert again["evidence"]["tests"]["test_agent.py::test_two"]["totals"]["input_tokens"] == 30


SHARED = """
import pytest
from agentloop_tools.testing import anthropic_message, anthropic_text


@pytest.fixture
def agentloop_script(request):
    return [anthropic_message([anthropic_text(request.node.name)])]


@pytest.fixture
def default_cassette_name():
    return "shared"


@pytest.mark.vcr
def test_a(agentloop_agent, agentloop_evidence):
    agentloop_agent([], provider="anthropic").run("a?")


@pytest.mark.vcr
def test_b(agentloop_agent, agentloop_evidence):
    agentloop_agent([], provider="anthropic").run("b?")
"""


def test_a_cassette_shared_by_several_tests_holds_one_record_per_test(
    project: pytest.Pytester,
) -> None:
    project.makepyfile(test_shared=SHARED)
    result = project.runpytest(
        "--record-mode=new_episodes", FROM_SCRIPTS_OPTION.flag, "-p", "no:randomly"
    )
    result.assert_outcomes(passed=2)
    data = yaml.safe_load((project.path / "cassettes" / "test_shared" / "shared.yaml").read_text())
    assert sorted(data["evidence"]["tests"]) == ["test_shared.py::test_a", "test_shared.py::test_b"]


def test_the_secret_guard_covers_the_record(
    project: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    key = "sk-ant-api03-" + "Zq7" * 30
    monkeypatch.setenv("ANTHROPIC_API_KEY", key)
    project.makepyfile(
        test_secret=f"""
import pytest
from agentloop_tools.testing import anthropic_message, anthropic_text


@pytest.fixture
def agentloop_script(request):
    # The model repeats the key in a link: the record lists links.
    return [anthropic_message([anthropic_text("See https://example.org/p?k={key}")])]


@pytest.mark.vcr
def test_tool(agentloop_agent, agentloop_evidence):
    agentloop_agent([], provider="anthropic").run("hello")
    assert agentloop_evidence.summary().conversations[0].links
"""
    )
    result = project.runpytest("--record-mode=once", FROM_SCRIPTS_OPTION.flag)
    result.assert_outcomes(passed=1)
    text = (project.path / "cassettes" / "test_secret" / "test_tool.yaml").read_text()
    assert key not in text
    link = yaml.safe_load(text)["evidence"]["tests"]["test_secret.py::test_tool"]
    assert link["conversations"][0]["links"][0]["url"].endswith(
        "k=agentloop-tools-placeholder-ANTHROPIC_API_KEY"
    )
