"""The agent under test in the examples: a research assistant that searches the web.

In a real project this is your code; the tests in this folder show how to test it.
"""

from __future__ import annotations

from agentloop import HostedTool, tool
from agentloop.tooling import ToolSpec

from agentloop_tools.web import DomainPolicy

# The one list the agent may search, used twice: as the provider's filter here, and
# by the tests' domain_policy marker to audit what each answer really reached.
POLICY = DomainPolicy.allow(["python.org", "realpython.com"])

RELEASES = {"3.12": "2023-10-02", "3.13": "2024-10-07", "3.14": "2025-10-07"}


@tool(
    {
        "type": "object",
        "properties": {"version": {"type": "string", "description": "e.g. 3.13"}},
        "required": ["version"],
    }
)
def python_release_date(version: str) -> str:
    """The release date of a Python version, from the project's own records."""
    return RELEASES.get(version, "unknown")


def research_tools() -> list[ToolSpec | HostedTool]:
    return [POLICY.native_web_search(max_uses=3), python_release_date]
