"""The policies a run audits with: the project's default and each test's marker.

All of them go through one loader (``agentloop_tools._config.build_policy``), the one
the command line uses, and are read when the run starts: a bad entry stops the run
with a usage error naming it, never half-way through with some tests unaudited.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, NamedTuple

import pytest

if TYPE_CHECKING:
    from agentloop_tools.web import DomainPolicy

INI_KEYS = ("agentloop_allow_domains", "agentloop_block_domains")
MARKER_FIELDS = ("allow", "block", "policy")


class Marker(NamedTuple):
    """A test's ``domain_policy`` marker, read."""

    policy: DomainPolicy
    require_evidence: bool


class DefaultPolicy(NamedTuple):
    """The project-wide policy (None: none set) and where it was written."""

    policy: DomainPolicy | None
    origin: str

    def summary(self) -> str:
        if self.policy is None:
            return "none"
        where = " from pyproject.toml" if self.origin.startswith("pyproject") else ""
        return f"{self.policy.mode} {len(self.policy.domains)} domain(s){where}"


def default_policy(config: pytest.Config) -> DefaultPolicy:
    """The ini keys' policy, else ``[tool.agentloop-tools]`` in the rootdir's pyproject.toml."""
    from agentloop_tools._config import ConfigError, build_policy, policy_from, read_table

    lists = [ini_domains(config, key) for key in INI_KEYS]
    inifile = config.inipath.name if config.inipath else "the ini file"
    if any(lists):
        set_keys = [key for key, domains in zip(INI_KEYS, lists, strict=True) if domains]
        where = f"ini key {set_keys[0]} in {inifile}" if len(set_keys) == 1 else inifile
        try:
            policy = build_policy(
                where,
                allow=lists[0] or None,
                block=lists[1] or None,
                names=(*INI_KEYS, "policy"),
            )
        except ConfigError as error:
            raise pytest.UsageError(str(error)) from None
        return DefaultPolicy(policy, inifile)
    pyproject = config.rootpath / "pyproject.toml"
    if not pyproject.is_file():
        return DefaultPolicy(None, "none")
    try:
        table = read_table(pyproject)
        if table is None:
            return DefaultPolicy(None, "none")
        policy = policy_from(table, f"{pyproject} [tool.agentloop-tools]")
    except ConfigError as error:
        raise pytest.UsageError(str(error)) from None
    return DefaultPolicy(policy, f"{pyproject.name} [tool.agentloop-tools]")


def ini_domains(config: pytest.Config, key: str) -> list[str]:
    """One domain per line, or several separated by commas: both read the same."""
    lines = config.getini(key)
    return [entry.strip() for line in lines for entry in line.split(",") if entry.strip()]


def read_marker(item: pytest.Item) -> Marker:
    """The test's ``domain_policy`` marker, or a usage error naming the test and the fix."""
    from agentloop_tools._config import ConfigError, build_policy

    marker = item.get_closest_marker("domain_policy")
    assert marker is not None
    where = f"@pytest.mark.domain_policy on {item.nodeid}"
    example = "e.g. @pytest.mark.domain_policy(allow=['python.org'])"
    if marker.args:
        raise pytest.UsageError(
            f"{where}: pass keyword arguments only (allow=[...], block=[...] or policy=...); "
            f"{example}."
        )
    options = dict(marker.kwargs)
    require_evidence = options.pop("require_evidence", True)
    unknown = set(options) - set(MARKER_FIELDS)
    if unknown:
        raise pytest.UsageError(
            f"{where}: unknown argument(s) {', '.join(sorted(unknown))}; pass exactly one of "
            f"allow=[...], block=[...] or policy=DomainPolicy ({example})."
        )
    if not isinstance(require_evidence, bool):
        raise pytest.UsageError(
            f"{where}: require_evidence must be True or False, got {require_evidence!r}."
        )
    try:
        policy = build_policy(
            where,
            allow=options.get("allow"),
            block=options.get("block"),
            policy=options.get("policy"),
            names=("allow=", "block=", "policy="),
        )
    except ConfigError as error:
        raise pytest.UsageError(str(error)) from None
    if policy is None:
        raise pytest.UsageError(
            f"{where}: pass exactly one of allow=[...], block=[...] or policy=DomainPolicy "
            f"({example})."
        )
    return Marker(policy, require_evidence)
