"""The run's own settings, read once when the plugin starts: a bad value stops the run
before any test, never half-way through it (the policies are read in ``policies``)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from agentloop_tools._plugin import messages
from agentloop_tools._plugin.scope import PROVIDER_OPTION, REFUSED_ATTEMPTS_OPTION

if TYPE_CHECKING:
    from agentloop_tools._config import ProjectPolicy


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
