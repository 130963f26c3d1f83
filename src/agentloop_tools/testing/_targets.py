"""The targets the assertion helpers take: a domain, a path rule or a full URL."""

from __future__ import annotations

from dataclasses import dataclass

from ada_url import parse_url

from agentloop_tools.web._domains._index import RuleIndex
from agentloop_tools.web._domains._rules import parse_rule
from agentloop_tools.web._domains._url import locate


@dataclass(frozen=True, slots=True)
class Target:
    """One target as written, and how it matches a URL."""

    text: str
    index: RuleIndex | None = None
    host: str = ""
    path: str = ""
    query: tuple[tuple[str, str], ...] = ()

    def matches(self, url: str) -> bool:
        location = locate(url)
        if location is None:
            return False
        if self.index is not None:
            return self.index.admitting(location) is not None
        if location.host != self.host or location.path.rstrip("/") != self.path.rstrip("/"):
            return False
        return set(self.query) <= set(_query(url))


def read_targets(written: tuple[str, ...], helper: str, *, empty_ok: bool = False) -> list[Target]:
    """The targets a helper was given, each checked (a ``TypeError`` or ``ValueError``)."""
    if not written and not empty_ok:
        raise TypeError(f"{helper}() needs at least one target, such as 'python.org'.")
    matchers = []
    for target in written:
        if not isinstance(target, str):
            raise TypeError(f"{helper}() targets are strings, got {target!r}.")
        if "://" in target:
            location = locate(target)
            if location is None or not location.valid:
                raise ValueError(f"{helper}() target {target!r} is not a valid URL.")
            matchers.append(Target(target, None, location.host, location.path, _query(target)))
        else:
            rule = parse_rule(target, argument=f"{helper}() target")
            matchers.append(Target(target, RuleIndex([rule])))
    return matchers


def _query(url: str) -> tuple[tuple[str, str], ...]:
    try:
        search = parse_url(url, attributes=("search",))["search"]
    except ValueError:
        return ()
    pairs = []
    for item in search.lstrip("?").split("&"):
        if item:
            key, _, value = item.partition("=")
            pairs.append((key, value))
    return tuple(pairs)
