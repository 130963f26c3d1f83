"""The policies a run audits with: the project's default and each test's marker.

All of them go through one loader (``agentloop_tools._config.build_policy``), the one
the command line uses, and are read when the run starts: a bad entry stops the run
with a usage error naming it, never half-way through with some tests unaudited.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, NamedTuple

import pytest

from agentloop_tools._plugin import messages

if TYPE_CHECKING:
    from _pytest.nodes import Node

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
    """The ini keys' policy, else ``[tool.agentloop-tools]`` in the nearest pyproject.toml.

    The nearest pyproject.toml at or above the rootdir: the file the command line reads
    when run from there.
    """
    from agentloop_tools._config import (
        TABLE,
        ConfigError,
        build_policy,
        nearest_pyproject,
        policy_from,
        read_table,
    )

    lists = [ini_domains(config, key) for key in INI_KEYS]
    inifile = config.inipath.name if config.inipath else "the ini file"
    set_keys = [key for key, domains in zip(INI_KEYS, lists, strict=True) if domains is not None]
    if set_keys:
        for key in set_keys:
            if not lists[INI_KEYS.index(key)]:
                raise pytest.UsageError(messages.empty_ini_key(key, inifile))
        where = f"ini key {set_keys[0]} in {inifile}" if len(set_keys) == 1 else inifile
        try:
            policy = build_policy(
                where, allow=lists[0], block=lists[1], names=(*INI_KEYS, "policy")
            )
        except ConfigError as error:
            raise pytest.UsageError(str(error)) from None
        return DefaultPolicy(policy, inifile)
    pyproject = nearest_pyproject(config.rootpath)
    if pyproject is None:
        return DefaultPolicy(None, "none")
    try:
        table = read_table(pyproject)
        if table is None:
            return DefaultPolicy(None, "none")
        policy = policy_from(table, f"{pyproject} [{TABLE}]")
    except ConfigError as error:
        raise pytest.UsageError(str(error)) from None
    return DefaultPolicy(policy, f"{pyproject.name} [{TABLE}]")


def ini_domains(config: pytest.Config, key: str) -> list[str] | None:
    """The key's domains (one per line, or separated by commas), or None if it is not set.

    The keys are registered with no default, so a key written empty reads as ``[]``.
    """
    lines = config.getini(key)
    if lines is None:
        return None
    return [entry.strip() for line in lines for entry in line.split(",") if entry.strip()]


def read_marker(item: pytest.Item) -> Marker:
    """The test's policy: its closest ``domain_policy`` marker, every one checked.

    The closest marker (function, then class, then module) is the policy; the others
    are checked all the same, so a bad one is never hidden by a nearer one. Two markers
    on one node (stacked decorators, a decorator and ``pytest.param(marks=...)``) are
    refused: which one should win is not the plugin's guess to make.
    """
    marked = list(item.iter_markers_with_node("domain_policy"))
    assert marked, "read_marker is only called for marked tests"
    read = [_read_one(item, node, marker) for node, marker in marked]
    nodes = [node for node, _ in marked]
    for node in nodes:
        if nodes.count(node) > 1:
            raise pytest.UsageError(messages.stacked_markers(item.nodeid, _node_name(item, node)))
    return read[0]


def _read_one(item: pytest.Item, node: Node, marker: pytest.Mark) -> Marker:
    """One ``domain_policy`` marker, or a usage error naming the test, the marker and the fix."""
    from agentloop_tools._config import ConfigError, build_policy

    on = "" if node is item else f" (on {_node_name(item, node)})"
    where = f"@pytest.mark.domain_policy on {item.nodeid}{on}"
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


def _node_name(item: pytest.Item, node: Node) -> str:
    if node is item:
        return "the test"
    if isinstance(node, pytest.Class):
        return f"its class {node.name}"
    if isinstance(node, pytest.Module):
        return f"its module {node.name}"
    return f"{node.nodeid}"
