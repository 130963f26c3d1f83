"""Configuration for the example suite: where its cassettes live, and scripted recording.

Cassettes live in the repository's cassettes/examples/<test module>/. To re-record
them without a provider key, run with AGENTLOOP_EXAMPLES_FROM_SCRIPT=1 and
--record-mode=rewrite: agentloop_agent then answers from scripts.py. With real keys,
leave the variable unset and record live instead.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from scripts import SCRIPTS

from agentloop_tools.testing import AgentFactory, ScriptedProvider

CASSETTES = Path(__file__).resolve().parents[1] / "cassettes" / "examples"


@pytest.fixture(scope="module")
def vcr_cassette_dir(request: pytest.FixtureRequest) -> str:
    """cassettes/examples/<test module>/ at the repository root."""
    return str(CASSETTES / request.module.__name__)


@pytest.fixture
def agentloop_agent(agentloop_agent: AgentFactory, request: pytest.FixtureRequest) -> AgentFactory:
    """The plugin's factory; answering from scripts.py when recording from a script."""
    if not os.environ.get("AGENTLOOP_EXAMPLES_FROM_SCRIPT"):
        return agentloop_agent
    script = SCRIPTS[request.node.name]

    def build(tools: Any = (), **options: Any) -> Any:
        provider = options.get("provider", "anthropic")
        options.setdefault("http_client", ScriptedProvider(provider, script).http_client())
        return agentloop_agent(tools, **options)

    return build
