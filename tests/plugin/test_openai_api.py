"""Picking OpenAI's Chat Completions or Responses API: ``agentloop_agent(openai_api=...)``."""

from __future__ import annotations

import pytest

from agentloop_tools._plugin.scope import FROM_SCRIPTS_OPTION

# The first hour: an OpenAI Chat Completions agent with client-side search, chosen by
# search_tool from the same environment, recorded from scripts, then replayed.
COMPLETIONS_PROJECT = """
import pytest
from agentloop_tools.testing import ScriptedSearch, brave_results, chat_completion
from agentloop import HostedTool
from agentloop_tools.web import search_tool

CALL = ("c1", "web_search", {"query": "python docs", "count": None,
                             "allowed_domains": None, "blocked_domains": None})


@pytest.fixture
def agentloop_script():
    return [chat_completion(calls=[CALL]), chat_completion("See https://docs.python.org/3/")]


@pytest.mark.vcr
def test_agent(agentloop_agent, agentloop_env, agentloop_from_scripts):
    search = None
    if agentloop_from_scripts:
        search = ScriptedSearch(
            "brave", [brave_results([("https://docs.python.org/3/", "Docs")])]
        ).http_client()
    env = {**agentloop_env, "LLM_PROVIDER": "openai", "OPENAI_API": "completions"}
    tool = search_tool(env, http_client=search)
    assert not isinstance(tool, HostedTool)
    agent = agentloop_agent([tool], provider="openai", openai_api="completions")
    assert "docs.python.org" in agent.run("Where are the docs?")
"""


def test_openai_api_completions_records_and_replays_chat_completions(
    project: pytest.Pytester,
) -> None:
    project.makeini("[pytest]\nagentloop_search_backend = brave\n")
    project.makepyfile(test_agent=COMPLETIONS_PROJECT)
    project.runpytest("--record-mode=once", FROM_SCRIPTS_OPTION.flag).assert_outcomes(passed=1)
    cassette = (project.path / "cassettes" / "test_agent" / "test_agent.yaml").read_text()
    assert "uri: https://api.openai.com/v1/chat/completions" in cassette
    assert "/v1/responses" not in cassette
    assert "api.search.brave.com" in cassette
    project.runpytest().assert_outcomes(passed=1)


@pytest.mark.parametrize(
    ("call", "expected"),
    [
        (
            'provider="openai", openai_api="chat"',
            "*agentloop_agent(openai_api='chat'): unknown OpenAI API; use one of "
            "'completions', 'responses'*",
        ),
        (
            'provider="anthropic", openai_api="completions"',
            "*agentloop_agent(openai_api='completions') applies to provider 'openai' only, "
            "and this agent's provider is 'anthropic'*",
        ),
    ],
)
def test_an_openai_api_that_would_be_dropped_fails_naming_it(
    project: pytest.Pytester, call: str, expected: str
) -> None:
    project.makepyfile(
        test_agent=f"""
        import httpx

        def test_agent(agentloop_agent):
            agentloop_agent([], {call}, http_client=httpx.Client())
        """
    )
    result = project.runpytest()
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines([expected])
    result.stdout.no_fnmatch_line("*Traceback*")
