"""The project-wide domain list in pyproject.toml, shared by the command line and the plugin.

[tool.agentloop-tools]
allow = ["python.org", "realpython.com"]   # or: block = ["wikipedia.org"]
"""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from agentloop_tools.web import DomainPolicy

TABLE = "tool.agentloop-tools"


class ConfigError(ValueError):
    """The configuration cannot be used; the message names the file and the fix."""


def read_table(path: Path) -> dict[str, Any] | None:
    """``[tool.agentloop-tools]`` of a pyproject.toml, or None if it has no list."""
    data = _toml(path)
    table = data.get("tool", {}).get("agentloop-tools")
    if not isinstance(table, dict) or not ({"allow", "block"} & set(table)):
        return None
    return table


def policy_file(path: Path) -> DomainPolicy:
    """A TOML file holding ``allow``/``block``, at the top level or under the tool table."""
    data = _toml(path)
    table = data.get("tool", {}).get("agentloop-tools") if "tool" in data else data
    return policy_from(table if isinstance(table, dict) else {}, str(path))


def policy_from(table: dict[str, Any], where: str) -> DomainPolicy:
    from agentloop_tools.web import DomainPolicy

    allow, block = table.get("allow"), table.get("block")
    if allow and block:
        raise ConfigError(f"{where}: set allow or block, not both.")
    try:
        if allow:
            return DomainPolicy.allow(allow)
        if block:
            return DomainPolicy.block(block)
    except (ValueError, TypeError) as error:
        raise ConfigError(f"{where}: {error}") from None
    raise ConfigError(f"{where}: no allow = [...] or block = [...] list.")


def nearest_pyproject(start: Path) -> Path | None:
    for folder in [start, *start.parents]:
        candidate = folder / "pyproject.toml"
        if candidate.is_file():
            return candidate
    return None


def _toml(path: Path) -> dict[str, Any]:
    try:
        return tomllib.loads(path.read_text(encoding="utf-8"))
    except OSError as error:
        raise ConfigError(f"{path}: cannot be read ({error.strerror})") from None
    except tomllib.TOMLDecodeError as error:
        raise ConfigError(f"{path}: not TOML ({error})") from None
