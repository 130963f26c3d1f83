"""The plugin on a pytest it does not support: silent unless the run asks for it.

The entry point loads in every run of the environment, and the core install does not
pin pytest, so a project on an older pytest must run exactly as without us; a run that
does use the plugin (its ini keys, options, project table, fixtures or marker) stops
with the version it needs, before any test.
"""

from __future__ import annotations

import pytest

from agentloop_tools._plugin.scope import (
    MIN_PYTEST,
    OPTIONS,
    in_scope,
    needs_pytest,
    pytest_version,
)

# The plugin's options, by dest, and the value each has when not given.


class Inert:
    def __init__(self, config: pytest.Config) -> None:
        self.config = config
        used = self._used_by_configuration()
        if used:
            raise pytest.UsageError(f"{needs_pytest()} (the run asks for it: {used})")

    def _used_by_configuration(self) -> str | None:
        from agentloop_tools._config import TABLE, pyproject_for, read_table
        from agentloop_tools._errors import ConfigError
        from agentloop_tools._plugin.policies import PLUGIN_INI_KEYS, written_ini_keys

        for option in OPTIONS:
            if self.config.getoption(option.dest, option.default) != option.default:
                return option.flag
        written = sorted(
            key
            for key in written_ini_keys(self.config)
            if key in PLUGIN_INI_KEYS or key.startswith("agentloop")
        )
        if written:
            return f"ini key {written[0]}"
        pyproject = pyproject_for(self.config.inipath, self.config.rootpath)
        try:
            table = read_table(pyproject) if pyproject.is_file() else None
        except ConfigError:
            return f"{pyproject} [{TABLE}]"
        return f"{pyproject} [{TABLE}]" if table is not None else None

    def pytest_report_header(self, config: pytest.Config) -> str | None:
        if config.getoption("verbose", 0) > 0:
            running = ".".join(map(str, pytest_version()))
            floor = ".".join(map(str, MIN_PYTEST))
            return f"agentloop-tools: inactive: pytest {running} is older than {floor}, its floor"
        return None

    def pytest_collection_modifyitems(self, items: list[pytest.Item]) -> None:
        asking = [item.nodeid for item in items if in_scope(item)]
        if asking:
            more = f" and {len(asking) - 3} more" if len(asking) > 3 else ""
            shown = ", ".join(asking[:3]) + more
            raise pytest.UsageError(f"{needs_pytest()} (used by {shown})")
