"""Configuration for the example suite: where its cassettes live, and their scripts.

Cassettes live in the repository's cassettes/examples/<test module>/. To re-record
them without a provider key, run with --agentloop-from-scripts and
--record-mode=rewrite: agentloop_agent then answers from the script the
agentloop_script fixture below gives (scripts.py). With real keys, leave the option out
and record live instead.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from scripts import SCRIPTS

CASSETTES = Path(__file__).resolve().parents[1] / "cassettes" / "examples"


@pytest.fixture(scope="module")
def vcr_cassette_dir(request: pytest.FixtureRequest) -> str:
    """cassettes/examples/<test module>/ at the repository root."""
    return str(CASSETTES / request.module.__name__)


@pytest.fixture
def agentloop_script(request: pytest.FixtureRequest) -> object:
    """The provider responses each example records from under --agentloop-from-scripts."""
    return SCRIPTS.get(request.node.name)
