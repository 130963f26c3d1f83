"""The one pytester project of the plugin's tests: an inner run with a clean environment.

The outer run's CI flag, provider choice, keys and search backend must not leak into the
inner runs (a developer's ``ANTHROPIC_API_KEY`` would turn a replay test into a live one).
A module that needs files in the project overrides ``project`` and builds on this one.
"""

from __future__ import annotations

import pytest

from agentloop_tools._providers import PROVIDER_SECRET_VARIABLES, SEARCH_KEY_VARIABLES

CLEARED = ("CI", "LLM_PROVIDER", "WEB_SEARCH_BACKEND", "SEARXNG_URL")


@pytest.fixture
def project(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> pytest.Pytester:
    for name in (*CLEARED, *PROVIDER_SECRET_VARIABLES, *SEARCH_KEY_VARIABLES):
        monkeypatch.delenv(name, raising=False)
    return pytester
