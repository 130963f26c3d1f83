"""The plugin on a pytest it does not support: silent unless the run asks for it.

The entry point loads in every run of the environment, and the core install does not
pin pytest, so a project on an older pytest must run exactly as without us; a run that
does use the plugin (its ini keys, options, project table, fixtures or marker) stops
with the version it needs, before any test.
"""

from __future__ import annotations

import pytest

from agentloop_tools._plugin.scope import configured, in_scope, needs_pytest


class Inert:
    def __init__(self, config: pytest.Config) -> None:
        self.config = config
        used = configured(config)
        if used:
            raise pytest.UsageError(f"{needs_pytest()} (the run asks for it: {used})")

    def pytest_collection_modifyitems(self, items: list[pytest.Item]) -> None:
        """A test that uses the plugin stops the run, naming the pytest it needs.

        https://docs.pytest.org/en/stable/reference/reference.html#pytest.hookspec.pytest_collection_modifyitems
        """
        asking = [item.nodeid for item in items if in_scope(item)]
        if asking:
            more = f" and {len(asking) - 3} more" if len(asking) > 3 else ""
            shown = ", ".join(asking[:3]) + more
            raise pytest.UsageError(f"{needs_pytest()} (used by {shown})")
