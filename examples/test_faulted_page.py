"""An agent whose page answers 403 links nothing it did not read, and says it could not read it.

``@pytest.mark.web_faults`` makes the page fail at web_fetch's request seam, before any
request: when the cassette was recorded and every time it replays, so the model reads
the same failure and the cassette (cassettes/examples/test_faulted_page/<test>.yaml)
matches. It holds only the model's traffic; the page was never requested. Re-record it
without any key, from scripts.py:
    pytest examples/test_faulted_page.py --record-mode=rewrite --agentloop-from-scripts
"""

from __future__ import annotations

import pytest
from agentloop.transcript import ToolResultPart
from fetch_agent import POLICY

from agentloop_tools.testing import (
    AgentFactory,
    AgentloopEvidence,
    assert_links_grounded,
    assert_no_violations,
)
from agentloop_tools.web import web_fetch

PAGE = "https://docs.python.org/3/whatsnew/3.13.html"


@pytest.mark.vcr
@pytest.mark.domain_policy(policy=POLICY)
@pytest.mark.web_faults(pages={"docs.python.org/3/whatsnew/*": 403})
def test_an_agent_whose_page_answers_403_says_so_and_links_nothing_unread(
    agentloop_agent: AgentFactory, agentloop_evidence: AgentloopEvidence
) -> None:
    agent = agentloop_agent([web_fetch(policy=POLICY)], provider="openrouter")

    answer = agent.run("What changed in the Python 3.13 REPL? Read the release notes.")

    [conversation] = agentloop_evidence.transcripts
    [result] = [
        part
        for message in conversation.messages
        for part in message.content
        if isinstance(part, ToolResultPart) and part.tool_name == "web_fetch"
    ]
    # The model read the failure a real 403 gives, word for word.
    assert result.content.startswith(f"Error: [fetch-error] {PAGE} answered 403 Forbidden")
    assert "could not read" in answer
    # The page it could not read is not linked as if it were a source.
    assert_links_grounded(agentloop_evidence)
    assert_no_violations(agentloop_evidence, POLICY)
