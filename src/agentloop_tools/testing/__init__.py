"""Test agentloop agents on recorded provider traffic: evidence and assertion helpers.

Importable without pytest (for typing and for use outside a test run); the pytest
plugin (``agentloop_tools.pytest_plugin``) provides the fixtures that fill these.
"""

from agentloop_tools.testing._assertions import (
    EvidenceAssertionError,
    assert_cited,
    assert_no_violations,
    assert_not_cited,
    assert_searched,
)
from agentloop_tools.testing._evidence import AgentloopEvidence, EvidenceObserver

__all__ = [
    "AgentloopEvidence",
    "EvidenceAssertionError",
    "EvidenceObserver",
    "assert_cited",
    "assert_no_violations",
    "assert_not_cited",
    "assert_searched",
]
