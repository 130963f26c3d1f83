"""Choosing a search backend from a mapping: the registry behind ``backend_from_env``.

Nothing here reads the environment: :func:`backend_from_env` reads the mapping it is
given (the process environment, or a dict).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from agentloop_tools._errors import NoSearchBackend
from agentloop_tools._providers import (
    BACKEND_VARIABLE,
    SEARCH_APIS,
    SEARXNG_NAME,
    SEARXNG_VARIABLE,
)
from agentloop_tools.web._search._backends_api import SearchBackendLike
from agentloop_tools.web._search._backends_builtin import brave, exa, searxng, tavily

type BackendFactory = Callable[[Mapping[str, str]], SearchBackendLike]


@dataclass(frozen=True, slots=True)
class _Entry:
    factory: BackendFactory
    variable: str | None


_NAME = re.compile(r"[a-z][a-z0-9_-]{0,39}")
# The registrations, in order.
REGISTRY: dict[str, _Entry] = {}


def register_backend(
    name: str, factory: BackendFactory, *, variable: str | None = None, replace: bool = False
) -> None:
    """Make a backend choosable by :func:`backend_from_env`.

    Args:
        name: what ``WEB_SEARCH_BACKEND`` names to choose it (lower case).
        factory: builds the backend from the mapping given to ``backend_from_env``;
            it should raise ``ValueError`` naming the variable that is missing.
        variable: a variable whose presence selects this backend when
            ``WEB_SEARCH_BACKEND`` is not set (like ``BRAVE_API_KEY`` for Brave).
        replace: allow replacing an existing registration of ``name``.

    Raises:
        ValueError: the name is malformed or already registered (without ``replace``).
        TypeError: ``factory`` is not callable.
    """
    if not isinstance(name, str) or not _NAME.fullmatch(name):
        raise ValueError(
            f"register_backend(name={name!r}) is not accepted; use a lower-case name of "
            "letters, digits, '-' and '_', starting with a letter."
        )
    if not callable(factory):
        raise TypeError(
            f"register_backend({name!r}, factory=...) needs a callable, got {factory!r}."
        )
    if name in REGISTRY and not replace:
        raise ValueError(
            f"a search backend named {name!r} is already registered; choose another name "
            "or pass replace=True."
        )
    if variable is not None and (not isinstance(variable, str) or not variable):
        raise ValueError(f"register_backend({name!r}, variable={variable!r}): use a variable name.")
    REGISTRY[name] = _Entry(factory, variable)


def registered_backends() -> dict[str, str | None]:
    """``{name: selecting variable}`` for every registered backend."""
    return {name: entry.variable for name, entry in REGISTRY.items()}


def backend_from_env(mapping: Mapping[str, str]) -> SearchBackendLike:
    """The backend the mapping configures (pass the process environment, or a dict).

    ``WEB_SEARCH_BACKEND`` names the backend; without it, the one backend whose
    variable is present is chosen (``BRAVE_API_KEY``, ``TAVILY_API_KEY``,
    ``EXA_API_KEY``, ``SEARXNG_URL``). Several present is an error, not a guess.

    Raises:
        ValueError: nothing is configured, the choice is ambiguous, the named
            backend is unknown, or its key is empty; the message names the variable.
    """
    if not isinstance(mapping, Mapping):
        raise TypeError(
            "backend_from_env() needs a mapping of environment variables (the process "
            f"environment or a dict), got {type(mapping).__name__}."
        )
    chosen = (mapping.get(BACKEND_VARIABLE) or "").strip().lower()
    if chosen:
        entry = REGISTRY.get(chosen)
        if entry is None:
            raise ValueError(
                f"{BACKEND_VARIABLE}={chosen!r} names no search backend; registered: "
                f"{', '.join(sorted(REGISTRY))}. Fix the value, or register_backend() yours."
            )
        return _build(chosen, entry, mapping)
    present = [
        (name, entry)
        for name, entry in REGISTRY.items()
        if entry.variable is not None and entry.variable in mapping
    ]
    if not present:
        variables = ", ".join(e.variable for e in REGISTRY.values() if e.variable is not None)
        raise NoSearchBackend(
            f"no search backend is configured: set one of {variables}, or set "
            f"{BACKEND_VARIABLE} to one of {', '.join(sorted(REGISTRY))}."
        )
    if len(present) > 1:
        found = ", ".join(f"{entry.variable} ({name})" for name, entry in present)
        raise ValueError(
            f"several search backends are configured: {found}. Set {BACKEND_VARIABLE} to "
            "the one to use."
        )
    name, entry = present[0]
    return _build(name, entry, mapping)


def _build(name: str, entry: _Entry, mapping: Mapping[str, str]) -> SearchBackendLike:
    backend = entry.factory(mapping)
    if not isinstance(backend, SearchBackendLike):
        raise TypeError(
            f"the factory registered for search backend {name!r} returned {backend!r}, "
            "which lacks name, build_request or parse."
        )
    return backend


def _variable(mapping: Mapping[str, str], variable: str) -> str:
    value = mapping.get(variable)
    if not isinstance(value, str) or not value.strip():
        state = "is empty" if value is not None else "is not set"
        raise ValueError(f"{variable} {state}: set it to use this search backend.")
    return value


def _keyed(factory: Callable[[str], SearchBackendLike], variable: str) -> BackendFactory:
    return lambda env: factory(_variable(env, variable))


for _factory in (brave, tavily, exa):  # each factory is named after its API
    _api = SEARCH_APIS[_factory.__name__]
    register_backend(_api.name, _keyed(_factory, _api.key_variable), variable=_api.key_variable)
register_backend(
    SEARXNG_NAME,
    lambda env: searxng(_variable(env, SEARXNG_VARIABLE)),
    variable=SEARXNG_VARIABLE,
)
