"""docs/testing.md's options table lists every option and ini key the plugin registers.

The plugin's two tables (``scope.OPTIONS``, ``scope.INI_KEYS``) are what it registers,
what it reads and what the docs must list: one list of names, checked both ways here.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, cast

import pytest

from agentloop_tools import pytest_plugin
from agentloop_tools._plugin.scope import INI_KEYS, OPTIONS, PLUGIN_INI_KEYS

TESTING = Path(__file__).resolve().parents[2] / "docs" / "testing.md"


class _Registrations:
    """Stands in for pytest's parser: keeps the names the plugin registers."""

    def __init__(self) -> None:
        self.flags: list[str] = []
        self.ini_keys: list[str] = []

    def getgroup(self, *args: Any, **kwargs: Any) -> _Registrations:
        return self

    def addoption(self, *flags: str, **kwargs: Any) -> None:
        self.flags += flags

    def addini(self, name: str, *args: Any, **kwargs: Any) -> None:
        self.ini_keys.append(name)


def _table_rows() -> list[list[str]]:
    """The rows of the one table under "### Options and ini keys", as Markdown renders it:
    the table ends at its first line that is not a row (a blank line cuts it)."""
    lines = TESTING.read_text(encoding="utf-8").splitlines()
    start = lines.index("### Options and ini keys")
    while not lines[start].startswith("|"):
        start += 1
    rows = []
    for line in lines[start:]:
        if not line.startswith("|"):
            break
        rows.append([cell.strip() for cell in line.strip("|").split("|")])
    return rows[2:]  # the header and its rule


def _names_in_table() -> tuple[set[str], set[str]]:
    rows = _table_rows()
    flags = {re.sub(r"=.*", "", name) for row in rows for name in re.findall(r"`([^`]+)`", row[0])}
    keys = {name for row in rows for name in re.findall(r"`([^`]+)`", row[1])}
    return flags, keys


def test_the_plugin_registers_exactly_the_options_and_ini_keys_of_its_tables() -> None:
    registered = _Registrations()
    pytest_plugin.pytest_addoption(cast(pytest.Parser, registered))
    assert registered.flags == [option.flag for option in OPTIONS]
    assert registered.ini_keys == [key.name for key in INI_KEYS]
    # A near miss of one of these keys is refused: the list is the table's.
    assert tuple(registered.ini_keys) == PLUGIN_INI_KEYS


def test_every_option_and_ini_key_of_the_plugin_is_a_row_of_the_options_table() -> None:
    flags, keys = _names_in_table()
    assert sorted({option.flag for option in OPTIONS} - flags) == []
    assert sorted({key.name for key in INI_KEYS} - keys) == []
