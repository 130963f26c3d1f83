"""Shared test configuration: pytester, and the heavy dependencies imported once.

pytester restores ``sys.modules`` after each inner run, so a module first imported
inside one is imported again by the next (over a second for the provider SDKs), and
objects made by the first no longer match classes of the second. Importing them here
keeps one copy. The core's tests also run without the testing extra (agentloop 0.4
and 0.5, in .ci/lowest), so only what is installed is preloaded.

Extension modules built with older PyO3 (nh3 0.2.14, the testing extra's floor) cannot
be initialised twice in one process: imported again after a pytester run removed them,
they raise ImportError, and the HTML report falls back to raw text. Preloaded here,
they are never removed.
"""

import importlib
from pathlib import Path
from types import ModuleType

import pytest

HEAVY = (
    "agentloop",
    "agentloop.providers.anthropic",
    "agentloop.providers.openai",
    "anthropic",
    "httpx",
    "httpx2",
    "pytest_recording.plugin",
    "vcr",
    "yaml",
    "nh3",
    "markdown_it",
    "agentloop_tools.cassettes",
    "agentloop_tools.pytest_plugin",
    "agentloop_tools.testing",
)


def _preload(names: tuple[str, ...]) -> tuple[ModuleType, ...]:
    loaded = []
    for name in names:
        try:
            loaded.append(importlib.import_module(name))
        except ImportError:
            continue
    return tuple(loaded)


PRELOADED = _preload(HEAVY)

pytest_plugins = ["pytester"]


@pytest.fixture
def real_cassettes() -> Path:
    """The folder of real recordings (read in place, never copied); skips the test when absent."""
    from tests.real_cassettes import ABSENT, PRESENT, REAL_CASSETTES

    if not PRESENT:
        pytest.skip(ABSENT)
    return REAL_CASSETTES
