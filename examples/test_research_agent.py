"""Agent tests on recorded provider traffic: the way the README shows.

Each test replays its cassette (cassettes/examples/test_research_agent/<test>.yaml)
through the real SDK and agentloop, offline, in milliseconds. Record or re-record a
cassette with real keys: pytest examples/test_research_agent.py::<test> --record-mode=rewrite
"""

from __future__ import annotations

import pytest
from research_agent import POLICY, research_tools

from agentloop_tools.testing import (
    AgentFactory,
    AgentloopEvidence,
    assert_cited,
    assert_no_violations,
    assert_not_cited,
    assert_searched,
)

QUESTION = "What changed in Python 3.13's interactive interpreter?"


@pytest.mark.vcr
@pytest.mark.domain_policy(policy=POLICY)
@pytest.mark.parametrize("provider", ["anthropic", "openai"])
def test_the_answer_cites_the_python_docs(
    provider: str, agentloop_agent: AgentFactory, agentloop_evidence: AgentloopEvidence
) -> None:
    agent = agentloop_agent(research_tools(), provider=provider)
    answer = agent.run(QUESTION)
    assert "REPL" in answer or "interpreter" in answer
    assert_cited(agentloop_evidence, "docs.python.org")
    assert_not_cited(agentloop_evidence, "wikipedia.org")


@pytest.mark.vcr
@pytest.mark.domain_policy(policy=POLICY)
def test_a_local_tool_between_searches(
    agentloop_agent: AgentFactory, agentloop_evidence: AgentloopEvidence
) -> None:
    agent = agentloop_agent(research_tools(), provider="anthropic")
    answer = agent.run("When was Python 3.13 released, and what did it change?")
    assert "2024-10-07" in answer
    [conversation] = agentloop_evidence.transcripts
    assert len(conversation.messages) == 4  # question, tool call, tool result, answer
    assert_cited(agentloop_evidence, "https://docs.python.org/3/whatsnew/3.13.html")


@pytest.mark.vcr
def test_a_paused_search_is_resumed_in_one_turn(
    agentloop_agent: AgentFactory, agentloop_evidence: AgentloopEvidence
) -> None:
    agent = agentloop_agent(research_tools(), provider="anthropic")
    agent.run("Compare the Python 3.12 and 3.13 release notes.")
    [conversation] = agentloop_evidence.transcripts
    assert [message.role for message in conversation.messages] == ["user", "assistant"]
    assert_searched(agentloop_evidence, "docs.python.org/3/whatsnew/3.12.html")
    assert_searched(agentloop_evidence, "docs.python.org/3/whatsnew/3.13.html")
    assert_no_violations(agentloop_evidence, POLICY)


@pytest.mark.vcr
def test_a_failed_search_is_reported_with_the_provider_error(
    agentloop_agent: AgentFactory, agentloop_evidence: AgentloopEvidence
) -> None:
    agent = agentloop_agent(research_tools(), provider="anthropic")
    answer = agent.run(QUESTION)
    assert "could not search" in answer
    with pytest.raises(AssertionError, match="failed with 'max_uses_exceeded'"):
        assert_searched(agentloop_evidence, "docs.python.org")


@pytest.mark.vcr
@pytest.mark.domain_policy(policy=POLICY)
@pytest.mark.xfail(
    strict=True, raises=pytest.fail.Exception, reason="a breach fails the build: it links Wikipedia"
)
def test_a_leaked_domain_fails_the_build(agentloop_agent: AgentFactory) -> None:
    agent = agentloop_agent(research_tools(), provider="anthropic")
    agent.run("Who created Python?")
