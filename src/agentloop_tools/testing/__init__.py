"""Test agentloop agents on recorded provider traffic: evidence, assertions, scripts.

Importable without pytest (for typing and for use outside a test run); the pytest
plugin (``agentloop_tools.pytest_plugin``) provides the fixtures that fill these.
"""

from agentloop_tools.testing._assertions import (
    EvidenceAssertionError,
    assert_cited,
    assert_links_grounded,
    assert_no_violations,
    assert_not_cited,
    assert_searched,
)
from agentloop_tools.testing._budget import assert_within_budget
from agentloop_tools.testing._evidence import AgentloopEvidence, EvidenceObserver
from agentloop_tools.testing._factory import AgentFactory
from agentloop_tools.testing._pages import ScriptedPages
from agentloop_tools.testing._scripted import (
    ScriptedProvider,
    anthropic_message,
    anthropic_search,
    anthropic_text,
    chat_completion,
    openai_message,
    openai_response,
    openai_search,
)
from agentloop_tools.testing._scripted_search import (
    ScriptedSearch,
    brave_invalid_key,
    brave_quota_exhausted,
    brave_rate_limited,
    brave_results,
    exa_contents,
    exa_results,
    not_json,
    searxng_results,
    tavily_extract,
    tavily_quota_exhausted,
    tavily_results,
    unauthorized,
)
from agentloop_tools.testing._summary import ConversationEvidence, EvidenceSummary
from agentloop_tools.testing._trajectories import (
    ExpectedToolCall,
    assert_tool_calls,
    tool_call,
)

__all__ = [
    "AgentFactory",
    "AgentloopEvidence",
    "ConversationEvidence",
    "EvidenceAssertionError",
    "EvidenceObserver",
    "EvidenceSummary",
    "ExpectedToolCall",
    "ScriptedPages",
    "ScriptedProvider",
    "ScriptedSearch",
    "anthropic_message",
    "anthropic_search",
    "anthropic_text",
    "assert_cited",
    "assert_links_grounded",
    "assert_no_violations",
    "assert_not_cited",
    "assert_searched",
    "assert_tool_calls",
    "assert_within_budget",
    "brave_invalid_key",
    "brave_quota_exhausted",
    "brave_rate_limited",
    "brave_results",
    "chat_completion",
    "exa_contents",
    "exa_results",
    "not_json",
    "openai_message",
    "openai_response",
    "openai_search",
    "searxng_results",
    "tavily_extract",
    "tavily_quota_exhausted",
    "tavily_results",
    "tool_call",
    "unauthorized",
]
