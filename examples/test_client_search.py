"""An OpenRouter agent researching with our client-side web_search, replayed offline.

The cassette (cassettes/examples/test_client_search/<test>.yaml) holds both the
model's traffic and the Brave Search API's. Re-record it live with OPENROUTER_API_KEY
and BRAVE_API_KEY set:
    pytest examples/test_client_search.py --record-mode=rewrite
or without any key, from scripts.py:
    pytest examples/test_client_search.py --record-mode=rewrite --agentloop-from-scripts
"""

from __future__ import annotations

import pytest
from agentloop.transcript import ToolResultPart
from client_search_agent import POLICY, client_search_tools
from scripts import SEARCH_SCRIPTS

from agentloop_tools.testing import (
    AgentFactory,
    AgentloopEvidence,
    ScriptedSearch,
    assert_cited,
    assert_links_grounded,
    assert_no_violations,
    assert_searched,
)


@pytest.mark.vcr
@pytest.mark.domain_policy(policy=POLICY)
def test_an_agent_without_hosted_search_researches_with_web_search(
    agentloop_agent: AgentFactory,
    agentloop_env: dict[str, str],
    agentloop_evidence: AgentloopEvidence,
    agentloop_from_scripts: bool,
    request: pytest.FixtureRequest,
) -> None:
    # In replay, agentloop_env names the backend the cassette shows (Brave) and holds a
    # placeholder key for it; recording from scripts, the search is scripted too.
    scripted = None
    if agentloop_from_scripts:
        scripted = ScriptedSearch("brave", SEARCH_SCRIPTS[request.node.name]).http_client()
    tools = client_search_tools(agentloop_env, http_client=scripted)
    agent = agentloop_agent(tools, provider="openrouter")

    answer = agent.run("What changed in Python 3.13's interactive interpreter?")

    assert "multi-line editing" in answer
    assert_searched(agentloop_evidence, "docs.python.org/3/whatsnew/3.13.html")
    # The model cites by linking: a link to a page the search returned is a citation,
    # and every link it wrote leads to such a page (none made up).
    assert_cited(agentloop_evidence, "docs.python.org/3/whatsnew/3.13.html")
    assert_links_grounded(agentloop_evidence)
    [conversation] = agentloop_evidence.transcripts
    [result] = [
        part
        for message in conversation.messages
        for part in message.content
        if isinstance(part, ToolResultPart) and part.tool_name == "web_search"
    ]
    assert "1 result withheld by the domain policy" in result.content
    assert "medium.com" not in result.content
    assert_no_violations(agentloop_evidence, POLICY)
