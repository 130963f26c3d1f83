"""Shared test configuration: pytester, and the heavy dependencies imported once.

pytester restores ``sys.modules`` after each inner run, so a module first imported
inside one is imported again by the next (over a second for the provider SDKs), and
objects made by the first no longer match classes of the second. Importing them here
keeps one copy. The core's tests also run without the testing extra (agentloop 0.4
and 0.5, in .ci/lowest), so only what is installed is preloaded.
"""

import importlib
from types import ModuleType

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
