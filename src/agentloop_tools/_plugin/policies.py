"""The policies a run audits with: the project's default and each test's marker.

All of them go through one loader (``agentloop_tools._config.build_policy``), the one
the command line uses, and are read when the run starts: a bad entry stops the run
with a usage error naming it, never half-way through with some tests unaudited.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, NamedTuple

import pytest

from agentloop_tools._plugin import messages
from agentloop_tools._plugin.scope import MARKER_NAME

if TYPE_CHECKING:
    from _pytest.nodes import Node

    from agentloop_tools._config import ProjectPolicy
    from agentloop_tools.web import DomainPolicy

# Every ini key the plugin registers: a near miss of one, or any other agentloop_* key,
# is a usage error (an unknown key is only a warning to pytest, and a lost policy).
PLUGIN_INI_KEYS = (
    "agentloop_provider",
    "agentloop_allow_domains",
    "agentloop_block_domains",
    "agentloop_policy_file",
    "agentloop_search_backend",
    "agentloop_max_cassette_age",
    "agentloop_cassette_age_action",
    "agentloop_volatile_fields",
)


_WRITTEN = pytest.StashKey[set[str]]()


class MarkerOptions:
    """The ``domain_policy`` marker's arguments, keyword-only, as the test wrote them.

    Values are checked where they are read (the policy by the one loader); an unknown
    name is refused before this is built, naming every one of them.
    """

    FIELDS = ("allow", "block", "policy", "require_evidence")

    def __init__(
        self,
        *,
        allow: object = None,
        block: object = None,
        policy: object = None,
        require_evidence: object = True,
    ) -> None:
        self.allow = allow
        self.block = block
        self.policy = policy
        self.require_evidence = require_evidence


class Marker(NamedTuple):
    """A test's ``domain_policy`` marker, read."""

    policy: DomainPolicy
    require_evidence: bool


def default_policy(config: pytest.Config) -> ProjectPolicy:
    """The project's policy, read where pytest reads its own configuration.

    The ini keys (an ``-o`` override counts), the file ``agentloop_policy_file`` names,
    and ``[tool.agentloop-tools]`` in pytest's pyproject.toml (its configuration file,
    else the rootdir's); never a parent folder's. Two of them at once is an error.
    """
    from agentloop_tools._config import INI_POLICY_KEYS, POLICY_FILE_KEY, project_policy
    from agentloop_tools._errors import ConfigError

    settings = {
        key: [str(line) for line in config.getini(key) or ()]
        for key in INI_POLICY_KEYS
        if ini_is_set(config, key)
    }
    if ini_is_set(config, POLICY_FILE_KEY):
        settings[POLICY_FILE_KEY] = [str(config.getini(POLICY_FILE_KEY) or "")]
    try:
        found = project_policy(config.inipath, config.rootpath, settings)
    except ConfigError as error:
        raise pytest.UsageError(str(error)) from None
    return found


def ini_is_set(config: pytest.Config, key: str) -> bool:
    """Whether the key is written in pytest's configuration file or given with ``-o``.

    Read from the file itself: ``getini`` answers a registered default for an unset
    key, which older pytest releases cannot tell from a key written empty.
    """
    return key in written_ini_keys(config)


def written_ini_keys(config: pytest.Config) -> set[str]:
    """Every key in pytest's configuration file and its ``-o/--override-ini`` options."""
    from agentloop_tools._config import pytest_settings
    from agentloop_tools._errors import ConfigError

    cached = config.stash.get(_WRITTEN, None)
    if cached is not None:
        return cached
    keys: set[str] = set()
    for entry in config.getoption("override_ini", None) or ():
        name, equals, _ = str(entry).partition("=")
        if equals:
            keys.add(name.strip())
    if config.inipath is not None:
        try:
            keys.update(pytest_settings(config.inipath) or {})
        except ConfigError:
            # pytest read a file our reader cannot: take the keys pytest parsed, so a
            # typo in it is never missed (``_inicfg`` on pytest 9, ``inicfg`` before).
            import warnings

            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                parsed = getattr(config, "_inicfg", None) or getattr(config, "inicfg", {})
            keys.update(str(key) for key in parsed)
    config.stash[_WRITTEN] = keys
    return keys


def refuse_unknown_ini_keys(config: pytest.Config) -> None:
    """An ``agentloop_*`` key the plugin does not know, or a near miss of one, stops the run."""
    registered = set(getattr(getattr(config, "_parser", None), "_inidict", {}) or ())
    registered.update(PLUGIN_INI_KEYS)
    where = config.inipath.name if config.inipath is not None else "-o"
    unknown = sorted(written_ini_keys(config) - registered)
    if not unknown:
        return
    import difflib

    for key in unknown:
        near = difflib.get_close_matches(key, PLUGIN_INI_KEYS, n=1, cutoff=0.8)
        if key.startswith("agentloop") or near:
            raise pytest.UsageError(
                messages.ini_key_near_miss(key, where, near[0] if near else None, PLUGIN_INI_KEYS)
            )


def marker_near_miss(name: str, registered: set[str]) -> bool:
    """An unregistered marker name one or two typos from ``domain_policy``."""
    if name == MARKER_NAME or name in registered:
        return False
    import difflib

    if difflib.get_close_matches(name, [MARKER_NAME], n=1, cutoff=0.8):
        return True
    return _edits(name.lower(), MARKER_NAME) <= 2


def _edits(a: str, b: str) -> int:
    """Edit distance with adjacent transpositions (optimal string alignment)."""
    if abs(len(a) - len(b)) > 2:
        return 3
    previous2: list[int] = []
    previous = list(range(len(b) + 1))
    for i, char in enumerate(a, 1):
        current = [i]
        for j, other in enumerate(b, 1):
            cost = char != other
            best = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + cost)
            if i > 1 and j > 1 and char == b[j - 2] and a[i - 2] == other:
                best = min(best, previous2[j - 2] + 1)
            current.append(best)
        previous2, previous = previous, current
    return previous[-1]


def read_marker(item: pytest.Item) -> Marker:
    """The test's policy: its closest ``domain_policy`` marker, every one checked.

    The closest marker (function, then class, then module) is the policy; the others
    are checked all the same, so a bad one is never hidden by a nearer one. Two markers
    on one node (stacked decorators, a decorator and ``pytest.param(marks=...)``) are
    refused: which one should win is not the plugin's guess to make.
    """
    marked = list(item.iter_markers_with_node(MARKER_NAME))
    assert marked, "read_marker is only called for marked tests"
    read = [_read_one(item, node, marker) for node, marker in marked]
    nodes = [node for node, _ in marked]
    for node in nodes:
        if nodes.count(node) > 1:
            raise pytest.UsageError(messages.stacked_markers(item.nodeid, _node_name(item, node)))
    return read[0]


def _read_one(item: pytest.Item, node: Node, marker: pytest.Mark) -> Marker:
    """One ``domain_policy`` marker, or a usage error naming the test, the marker and the fix."""
    from agentloop_tools._config import build_policy
    from agentloop_tools._errors import ConfigError

    on = "" if node is item else f" (on {_node_name(item, node)})"
    where = f"@pytest.mark.domain_policy on {item.nodeid}{on}"
    example = "e.g. @pytest.mark.domain_policy(allow=['python.org'])"
    if marker.args:
        raise pytest.UsageError(
            f"{where}: pass keyword arguments only (allow=[...], block=[...] or policy=...); "
            f"{example}."
        )
    unknown = set(marker.kwargs) - set(MarkerOptions.FIELDS)
    if unknown:
        raise pytest.UsageError(
            f"{where}: unknown argument(s) {', '.join(sorted(unknown))}; pass exactly one of "
            f"allow=[...], block=[...] or policy=DomainPolicy ({example})."
        )
    options = MarkerOptions(**marker.kwargs)
    if not isinstance(options.require_evidence, bool):
        raise pytest.UsageError(
            f"{where}: require_evidence must be True or False, got {options.require_evidence!r}."
        )
    try:
        policy = build_policy(
            where,
            allow=options.allow,
            block=options.block,
            policy=options.policy,
            names=("allow=", "block=", "policy="),
        )
    except ConfigError as error:
        raise pytest.UsageError(str(error)) from None
    if policy is None:
        raise pytest.UsageError(
            f"{where}: pass exactly one of allow=[...], block=[...] or policy=DomainPolicy "
            f"({example})."
        )
    return Marker(policy, options.require_evidence)


def _node_name(item: pytest.Item, node: Node) -> str:
    if node is item:
        return "the test"
    if isinstance(node, pytest.Class):
        return f"its class {node.name}"
    if isinstance(node, pytest.Module):
        return f"its module {node.name}"
    return f"{node.nodeid}"
