"""The project-wide domain list in pyproject.toml, shared by the command line and the plugin.

[tool.agentloop-tools]
allow = ["python.org", "realpython.com"]   # or: block = ["wikipedia.org"]
"""

from __future__ import annotations

import difflib
import tomllib
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from agentloop_tools.web import DomainPolicy

TABLE = "tool.agentloop-tools"
TABLE_KEYS = ("allow", "block")


class ConfigError(ValueError):
    """The configuration cannot be used; the message names the file and the fix."""


def read_table(path: Path) -> dict[str, Any] | None:
    """``[tool.agentloop-tools]`` of a pyproject.toml, or None if the file has none.

    A table that is there but cannot be a policy (no list, an unknown key, a misspelled
    table name) is a :class:`ConfigError`: a typo must not read as "no policy".
    """
    tools = _toml(path).get("tool", {})
    if not isinstance(tools, dict):
        return None
    table = tools.get("agentloop-tools")
    if table is None:
        _refuse_near_miss(path, tools)
        return None
    where = f"{path} [{TABLE}]"
    if not isinstance(table, dict):
        raise ConfigError(f"{where}: must be a table holding allow = [...] or block = [...].")
    unknown = sorted(set(table) - set(TABLE_KEYS))
    if unknown:
        raise ConfigError(
            f"{where}: unknown key(s) {', '.join(unknown)}; the table takes "
            f"allow = [...] or block = [...]."
        )
    if not table:
        raise ConfigError(f"{where}: no allow = [...] or block = [...] list.")
    return table


def _refuse_near_miss(path: Path, tools: dict[str, Any]) -> None:
    """A table named almost like ours (``[tool.agentloop_tools]``) is a typo, not no policy."""
    near = difflib.get_close_matches(
        "agentloop-tools", [str(key) for key in tools], n=1, cutoff=0.8
    )
    if near:
        raise ConfigError(
            f"{path}: [tool.{near[0]}] is not read; the domain list goes in [{TABLE}] "
            f"(with a hyphen). Rename the table."
        )


def policy_file(path: Path) -> DomainPolicy:
    """A TOML file holding ``allow``/``block``, at the top level or under the tool table."""
    data = _toml(path)
    table = data.get("tool", {}).get("agentloop-tools") if "tool" in data else data
    return policy_from(table if isinstance(table, dict) else {}, str(path))


def policy_from(table: dict[str, Any], where: str) -> DomainPolicy:
    """The policy of a ``[tool.agentloop-tools]``-style table (``allow`` or ``block``)."""
    policy = build_policy(where, allow=table.get("allow"), block=table.get("block"))
    if policy is None:
        raise ConfigError(f"{where}: no allow = [...] or block = [...] list.")
    return policy


def build_policy(
    where: str,
    *,
    allow: object = None,
    block: object = None,
    policy: object = None,
    names: tuple[str, str, str] = ("allow", "block", "policy"),
) -> DomainPolicy | None:
    """The one way configuration becomes a policy: ini keys, pyproject, marker, command line.

    ``None`` means "not given"; nothing given at all is ``None`` (no policy). Anything
    else that is not exactly one valid list raises :class:`ConfigError` naming ``where``,
    the entry and the fix, so a mistake can never leave a run without its policy.

    Args:
        where: how the user names this place ("ini key agentloop_block_domains", ...).
        allow: an allowlist as given. block: a blocklist. policy: a DomainPolicy.
        names: how ``where`` spells the three settings, for messages.
    """
    from agentloop_tools.web import DomainPolicy

    settings = zip(("allow", "block", "policy"), names, (allow, block, policy), strict=True)
    given = [(kind, name, value) for kind, name, value in settings if value is not None]
    if not given:
        return None
    if len(given) > 1:
        both = " and ".join(name for _, name, _ in given)
        raise ConfigError(
            f"{where}: {both} are both set; a policy is an allowlist or a blocklist. Keep one."
        )
    [(kind, name, value)] = given
    if kind == "policy":
        if not isinstance(value, DomainPolicy):
            raise ConfigError(
                f"{where}: {name} must be a DomainPolicy such as "
                f"DomainPolicy.allow(['python.org']), got {value!r}."
            )
        return value
    if isinstance(value, str | bytes):
        raise ConfigError(
            f"{where}: {name} must be a list of domains, not the single string {value!r}; "
            f"write {name if name.endswith('=') else ''}[{value!r}]."
        )
    build = DomainPolicy.allow if kind == "allow" else DomainPolicy.block
    try:
        return build(value)  # type: ignore[arg-type]
    except (ValueError, TypeError) as error:
        raise ConfigError(f"{where}: {_in_our_words(str(error))}") from None


def _in_our_words(message: str) -> str:
    # DomainPolicy's messages name its own API; here the user wrote a setting.
    for api in ("DomainPolicy.allow()", "DomainPolicy.block()"):
        message = message.replace(api, "the list")
    for api in ("DomainPolicy.allow", "DomainPolicy.block"):
        message = message.replace(f"{api} entry", "entry").replace(f"{api} entries", "entries")
    return message


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
