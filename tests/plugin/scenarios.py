"""Test files the plugin tests write into their pytester projects."""

LEAKY_TEST = """
import pytest
from agentloop_tools.testing import (
    ScriptedProvider, anthropic_message, anthropic_search, anthropic_text,
)
from agentloop_tools.web import native_web_search

SCRIPT = [
    anthropic_message([
        anthropic_search("python", ["https://docs.python.org/3/", "https://en.wikipedia.org/wiki/Python"]),
        anthropic_text("See https://en.wikipedia.org/wiki/Python for history.",
                       cite=["https://docs.python.org/3/"]),
    ])
]


@pytest.mark.vcr
{marker}
def test_agent(agentloop_agent):
    agent = agentloop_agent([native_web_search()], provider="anthropic",
                            http_client=ScriptedProvider("anthropic", SCRIPT).http_client())
    agent.run("Tell me about Python")
"""
