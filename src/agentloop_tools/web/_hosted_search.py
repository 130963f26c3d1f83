"""``native_web_search``: a provider-run web search, validated before any request is made."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, Never

from agentloop import HostedTool

from agentloop_tools.web._domains._rules import parse_rules

CONTEXT_SIZES = ("low", "medium", "high")
_UNSET: tuple[str, ...] = ()
LOCATION_KEYS = ("type", "city", "region", "country", "timezone")
OPTION_NAMES = (
    "allowed_domains",
    "blocked_domains",
    "max_uses",
    "user_location",
    "dynamic_filtering",
    "search_context_size",
)


def native_web_search(
    *,
    allowed_domains: Iterable[str] = _UNSET,
    blocked_domains: Iterable[str] = _UNSET,
    max_uses: int | None = None,
    user_location: Mapping[str, str] | None = None,
    dynamic_filtering: bool = False,
    search_context_size: str | None = None,
    **unknown: Never,
) -> HostedTool:
    """A web search the provider runs (Anthropic Messages, OpenAI Responses).

    Every argument is checked here, before any request, and ``options`` carries
    only what was set: an unconfigured search is ``HostedTool("web_search", {})``.

    Args:
        allowed_domains: search only these domains (subdomains included) or path
            prefixes such as ``"example.com/docs"``. ASCII, no scheme, ``*`` only in
            the path. An empty list is an error (it would lift the restriction); leave
            the argument out for an unfiltered search.
        blocked_domains: never search these. Not together with ``allowed_domains``.
            OpenAI does not document blocklists: audit the result.
        max_uses: at most this many searches per request (Anthropic only; others
            log and ignore it).
        user_location: approximate location, keys among ``type`` (``"approximate"``),
            ``city``, ``region``, ``country`` (two letters) and ``timezone``.
        dynamic_filtering: let the model filter results with code (Anthropic,
            Claude 4.6+). Citations are then usually absent.
        search_context_size: ``"low"``, ``"medium"`` or ``"high"`` (OpenAI only).

    Raises:
        ValueError: a value is not accepted; the message names it and what is.
        TypeError: an argument has the wrong type.
    """
    if unknown:
        raise TypeError(
            f"native_web_search() got unknown option(s) {sorted(unknown)}; accepted: "
            f"{', '.join(OPTION_NAMES)}."
        )
    allowed = parse_rules(allowed_domains, argument="allowed_domains")
    blocked = parse_rules(blocked_domains, argument="blocked_domains")
    for name, given, rules in (
        ("allowed_domains", allowed_domains, allowed),
        ("blocked_domains", blocked_domains, blocked),
    ):
        # The default is the empty tuple; an empty list passed on purpose is most
        # likely a computed list that came out empty, and would lift the restriction.
        if not rules and given is not _UNSET and not isinstance(given, tuple):
            raise ValueError(
                f"{name} is an empty {type(given).__name__}: an empty list would search "
                f"every domain. Pass the domains, or leave {name} out for an unfiltered search."
            )
    if allowed and blocked:
        raise ValueError(
            "native_web_search() takes allowed_domains or blocked_domains, not both "
            f"(got {len(allowed)} allowed and {len(blocked)} blocked). Providers reject "
            "a request with both: keep the allowlist, or the blocklist."
        )
    options: dict[str, Any] = {}
    if allowed:
        options["allowed_domains"] = [rule.text for rule in allowed]
    if blocked:
        options["blocked_domains"] = [rule.text for rule in blocked]
    if max_uses is not None:
        options["max_uses"] = _max_uses(max_uses)
    if user_location is not None:
        options["user_location"] = _user_location(user_location)
    if dynamic_filtering is not False:
        if dynamic_filtering is not True:
            raise TypeError(f"dynamic_filtering must be True or False, got {dynamic_filtering!r}.")
        options["dynamic_filtering"] = True
    if search_context_size is not None:
        if search_context_size not in CONTEXT_SIZES:
            raise ValueError(
                f"search_context_size={search_context_size!r} is not accepted; "
                f"use one of {', '.join(map(repr, CONTEXT_SIZES))}."
            )
        options["search_context_size"] = search_context_size
    return HostedTool(kind="web_search", options=options)


def _max_uses(value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"max_uses must be an int, got {value!r} ({type(value).__name__}).")
    if value < 1:
        raise ValueError(
            f"max_uses={value!r} is not accepted; use 1 or more, or None for the "
            "provider's default."
        )
    return value


def _user_location(value: object) -> dict[str, str]:
    if not isinstance(value, Mapping):
        raise TypeError(
            f"user_location must be a mapping such as {{'country': 'US', 'city': 'Boston'}}, "
            f"got {value!r}."
        )
    unknown = sorted(str(key) for key in value if key not in LOCATION_KEYS)
    if unknown:
        raise ValueError(
            f"user_location has unknown key(s) {unknown}; accepted keys are "
            f"{', '.join(LOCATION_KEYS)}."
        )
    location: dict[str, str] = {}
    for key, item in value.items():
        if not isinstance(item, str) or not item.strip():
            raise ValueError(
                f"user_location[{key!r}]={item!r} is not accepted; use a non-empty string."
            )
        location[key] = item
    if "type" in location and location["type"] != "approximate":
        raise ValueError(
            f"user_location['type']={location['type']!r} is not accepted; the only "
            "location type is 'approximate' (or leave it out)."
        )
    country = location.get("country")
    if country is not None and not (len(country) == 2 and country.isascii() and country.isalpha()):
        raise ValueError(
            f"user_location['country']={country!r} is not accepted; use a two-letter "
            "ISO 3166-1 code such as 'US' or 'GB'."
        )
    return location
