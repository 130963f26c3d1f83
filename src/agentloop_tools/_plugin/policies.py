"""The policies a run audits with: the project's default and each test's marker; and
the run's other settings read with them (provider, refused attempts, cassette age).

All of them go through one loader (``agentloop_tools._config.build_policy``), the one
the command line uses, and are read when the run starts: a bad entry stops the run
with a usage error naming it, never half-way through with some tests unaudited.
"""

from __future__ import annotations

import contextlib
from typing import TYPE_CHECKING, Any, NamedTuple

import pytest

from agentloop_tools._plugin import messages
from agentloop_tools._plugin.markers import Placed, on_path
from agentloop_tools._plugin.scope import (
    MARKER_NAME,
    PLUGIN_INI_KEYS,
    PROVIDER_OPTION,
    REFUSED_ATTEMPTS_OPTION,
    ini_keys_written,
)

if TYPE_CHECKING:
    from agentloop_tools._config import ProjectPolicy
    from agentloop_tools.web import DomainPolicy, Violation

_WRITTEN = pytest.StashKey[set[str]]()


class MarkerOptions:
    """The ``domain_policy`` marker's arguments, keyword-only, as the test wrote them.

    Values are checked where they are read (the policy by the one loader); an unknown
    name is refused before this is built, naming every one of them.
    """

    FIELDS = ("allow", "block", "policy", "require_evidence", "replace", "refused_attempts")

    def __init__(
        self,
        *,
        allow: object = None,
        block: object = None,
        policy: object = None,
        require_evidence: object = True,
        replace: object = False,
        refused_attempts: object = "report",
    ) -> None:
        self.allow = allow
        self.block = block
        self.policy = policy
        self.require_evidence = require_evidence
        self.replace = replace
        self.refused_attempts = refused_attempts


_FIELDS = frozenset(MarkerOptions.FIELDS)


class Layer(NamedTuple):
    """One policy a test is held to, and where it was written."""

    policy: DomainPolicy
    origin: str


class Marker(NamedTuple):
    """A test's ``domain_policy`` markers, read: every layer on its path, closest first."""

    layers: tuple[Layer, ...]
    require_evidence: bool
    replace: bool  # a marker with replace=True is (with any closer one) the whole policy
    refused_attempts: str = "report"  # "fail" when any marker on the path says so
    refused_from: str | None = None  # which marker said "fail"

    @property
    def policy(self) -> DomainPolicy:
        """The closest marker's policy."""
        return self.layers[0].policy


class PolicyLayers:
    """Several policies a URL must pass, each: reads as one ``DomainPolicy`` to the audit.

    ``audit`` gives every violation of any layer once (a URL two layers refuse is one
    violation, as the closest layer words it); ``mode`` and ``domains`` are the closest
    layer's, for the records that name one policy (they list the layers too).
    """

    def __init__(self, layers: tuple[Layer, ...]) -> None:
        self.layers = layers
        self.mode = layers[0].policy.mode
        self.domains = layers[0].policy.domains

    def audit(self, transcript: Any, *args: Any, **kwargs: Any) -> list[Violation]:
        seen: set[tuple[object, ...]] = set()
        found = []
        for layer in self.layers:
            for violation in layer.policy.audit(transcript, *args, **kwargs):
                key = (violation.message_index, violation.where, violation.url, violation.span)
                if key not in seen:
                    seen.add(key)
                    found.append(violation)
        return sorted(found, key=lambda v: (v.message_index, v.span or (0, 0)))

    def __repr__(self) -> str:
        return " and ".join(repr(layer.policy) for layer in self.layers)


def default_policy(config: pytest.Config) -> ProjectPolicy:
    """The project's policy, read where pytest reads its own configuration.

    The ini keys (an ``-o`` override counts), the file ``agentloop_policy_file`` names,
    and ``[tool.agentloop-tools]`` in pytest's pyproject.toml (its configuration file,
    else the rootdir's); never a parent folder's. Two of them at once is an error.
    """
    from agentloop_tools._config import (
        INI_POLICY_KEYS,
        POLICY_FILE_KEY,
        REFUSED_INI_KEY,
        project_policy,
    )
    from agentloop_tools._errors import ConfigError

    settings = {
        key: [str(line) for line in config.getini(key) or ()]
        for key in INI_POLICY_KEYS
        if ini_is_set(config, key)
    }
    for key in (POLICY_FILE_KEY, REFUSED_INI_KEY):
        if ini_is_set(config, key):
            settings[key] = [str(config.getini(key) or "")]
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
    # What pytest parsed, and the file read again by our reader: pytest's record of a
    # key written empty differs between releases, the file's does not.
    keys = ini_keys_written(config)
    if config.inipath is not None:
        # (A file pytest read and our reader cannot: the keys pytest parsed stand.)
        with contextlib.suppress(ConfigError):
            keys.update(pytest_settings(config.inipath) or {})
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


def read_marker(item: pytest.Item) -> Marker:
    """The test's markers: every one on its path (function, class, module), each checked.

    Every marker applies with the project policy, so a URL must pass each: a marker
    narrows, it never lifts. A marker with ``replace=True`` is the test's whole policy
    with the markers closer to the test than it; those farther away, and the project
    policy, do not apply. Two markers on one node (stacked decorators, a decorator and
    ``pytest.param(marks=...)``) are refused: which one was meant is not the plugin's
    guess to make. ``require_evidence`` is the closest marker's that says it.
    ``refused_attempts`` is ``"fail"`` when any marker on the path says so, beyond a
    ``replace=True`` one too (that replaces the lists, not this): it narrows, never lifts.
    """
    placed = on_path(item, MARKER_NAME, messages.stacked_markers)
    assert placed, "read_marker is only called for marked tests"
    read = [(one, _read_one(one)) for one in placed]
    layers: list[Layer] = []
    require: bool | None = None
    replace = False
    for one, (policy, require_evidence, replaces, _) in read:
        on = "" if len(read) == 1 else f" on {one.place}"
        layers.append(Layer(policy, f"the domain_policy marker{on}"))
        if require is None and "require_evidence" in one.mark.kwargs:
            require = require_evidence
        if replaces:
            replace = True
            break
    failing = [one for one, read_one in read if read_one[3] == "fail"]
    refused_from = (
        f"refused_attempts='fail' on the domain_policy marker of {failing[0].place}"
        if failing
        else None
    )
    return Marker(
        tuple(layers),
        True if require is None else require,
        replace,
        "fail" if failing else "report",
        refused_from,
    )


def _read_one(placed: Placed) -> tuple[DomainPolicy, bool, bool, str]:
    """One ``domain_policy`` marker, or a usage error naming the test, the marker and the fix."""
    from agentloop_tools._config import build_policy
    from agentloop_tools._errors import ConfigError

    where, marker = placed.where, placed.mark
    example = "e.g. @pytest.mark.domain_policy(allow=['python.org'])"
    if marker.args:
        raise pytest.UsageError(
            f"{where}: pass keyword arguments only (allow=[...], block=[...] or policy=...); "
            f"{example}."
        )
    unknown = marker.kwargs.keys() - _FIELDS
    if unknown:
        raise pytest.UsageError(
            f"{where}: unknown argument(s) {', '.join(sorted(unknown))}; pass exactly one of "
            f"allow=[...], block=[...] or policy=DomainPolicy ({example})."
        )
    options = MarkerOptions(**marker.kwargs)
    for name in ("require_evidence", "replace"):
        value = getattr(options, name)
        if not isinstance(value, bool):
            raise pytest.UsageError(f"{where}: {name} must be True or False, got {value!r}.")
    from agentloop_tools.web._policy._violation import refused_attempts_value

    try:
        refused = refused_attempts_value(options.refused_attempts, f"{where}: refused_attempts")
    except ValueError as error:
        raise pytest.UsageError(str(error)) from None
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
    return policy, bool(options.require_evidence), bool(options.replace), refused


# The run's other settings, read with the policies when it starts -----------------------


def default_provider(config: pytest.Config) -> str | None:
    option = config.getoption(PROVIDER_OPTION.dest)
    # Given empty (``--agentloop-provider=$UNSET``) is a mistake, not "unset".
    provider = option if option is not None else config.getini("agentloop_provider")
    if not provider and option is None:
        return None  # nothing to check: the providers' table is not loaded for it
    from agentloop_tools._providers import PROVIDERS

    if provider not in PROVIDERS:
        where = PROVIDER_OPTION.flag if option is not None else "ini key agentloop_provider"
        raise pytest.UsageError(messages.unknown_provider_setting(where, provider, list(PROVIDERS)))
    return str(provider) if provider else None


def cassette_age(config: pytest.Config) -> tuple[str, str]:
    """The age limit for replayed cassettes and what passing it does, checked now."""
    max_age = str(config.getini("agentloop_max_cassette_age") or "").strip()
    action = str(config.getini("agentloop_cassette_age_action") or "warn").strip().lower()
    if action not in ("warn", "fail"):
        raise pytest.UsageError(
            f"ini key agentloop_cassette_age_action = {action!r}: use warn or fail."
        )
    if max_age:
        from agentloop_tools.cassettes._provenance import parse_age

        try:
            parse_age(max_age)
        except ValueError as error:
            raise pytest.UsageError(f"ini key agentloop_max_cassette_age: {error}") from None
    return max_age, action


def refused_from(config: pytest.Config, project: ProjectPolicy) -> str | None:
    """Where the run's configuration sets refused attempts to fail, or None (report).

    The flag, the ini key and the project table: "fail" in any of them wins (a flag of
    ``report`` does not lift a project's ``fail``). Bad values stopped the run already
    (the flag's choices, the ini key and table as the project policy was read).
    """
    places = []
    if config.getoption(REFUSED_ATTEMPTS_OPTION.dest) == "fail":
        places.append(f"{REFUSED_ATTEMPTS_OPTION.flag} fail")
    if project.refused_from is not None:
        places.append(project.refused_from)
    return "; ".join(places) or None
