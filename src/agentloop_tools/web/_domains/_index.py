"""Find the rule that covers a host in time independent of how many rules there are.

Rules are filed under their host. A lookup walks the host's label suffixes
(``a.b.example.com``, ``b.example.com``, ``example.com``, ``com``): one hash
lookup per label, whatever the size of the list.

Whole-host rules are kept as plain strings in a dict: a list of 100,000 domains is
then a few objects for the garbage collector, not 100,000, so a policy's size does
not slow down the audits that run next to it.
"""

from __future__ import annotations

from collections.abc import Iterable

from agentloop_tools.web._domains._rules import Rule
from agentloop_tools.web._domains._url import Location


class _Table:
    """Rules for one kind of host (domain names, or IP addresses)."""

    __slots__ = ("paths", "whole")

    def __init__(self) -> None:
        self.whole: dict[str, str] = {}  # host -> the rule's text
        self.paths: dict[str, list[Rule]] = {}  # host -> its path rules


class RuleIndex:
    """Rules filed by host, with the allowlist and blocklist readings of a match."""

    __slots__ = (
        "_domains",
        "_ips",
        "_longest",
        "has_ip_rules",
        "has_path_rules",
        "has_punycode",
    )

    def __init__(self, rules: Iterable[Rule]) -> None:
        self._domains = _Table()
        self._ips = _Table()
        # No suffix longer than the longest rule can match: a 200,000-character host
        # costs a handful of lookups, not one per label.
        self._longest = 0
        self.has_path_rules = False
        self.has_ip_rules = False
        self.has_punycode = False
        for rule in rules:
            self.has_ip_rules |= rule.is_ip
            self.has_punycode |= "xn--" in rule.host
            self._longest = max(self._longest, len(rule.host))
            table = self._ips if rule.is_ip else self._domains
            if rule.path is None:
                # The first of two equal rules is the one reported.
                table.whole.setdefault(rule.host, rule.text)
            else:
                table.paths.setdefault(rule.host, []).append(rule)
                self.has_path_rules = True

    def admitting(self, location: Location) -> str | None:
        """The allow rule that clearly names this location, or None.

        Only the browser's own reading counts: no look-alike, no mapped address,
        and a path rule must hold for every reading of the path. A URL that other
        clients read as another host is admitted by no rule.
        """
        if not location.valid or not location.agreed:
            return None
        return self._find(location.host, location.is_ip, location.path, admitting=True)

    def blocking(self, location: Location) -> str | None:
        """The block rule that covers any reading of this location, or None."""
        rule = self._find(location.host, location.is_ip, location.path, admitting=False)
        if rule is None and location.also_served_as:
            for other in location.also_served_as:
                rule = self._find(other, _looks_like_ip(other), location.path, admitting=False)
                if rule is not None:
                    break
        return rule

    def domain_rule(self, host: str) -> str | None:
        """The whole-host rule covering a plain domain name, or None (no path rules exist)."""
        return self._find(host, False, "/", admitting=False)

    def path_rule_hosts(self) -> list[str]:
        """The hosts (and IPs) that have path rules, as the rules were parsed."""
        return [*self._domains.paths, *self._ips.paths]

    def domain_hosts(self) -> list[str]:
        """The hosts the domain-name rules are filed under (whole-host and path rules)."""
        return [*self._domains.whole, *self._domains.paths]

    def _find(self, host: str, is_ip: bool, path: str, *, admitting: bool) -> str | None:
        """The most specific rule for ``host`` (then its parent domains) covering ``path``."""
        table = self._ips if is_ip else self._domains
        whole, paths = table.whole, table.paths
        suffix, dot = (host, -1) if len(host) <= self._longest else self._first_suffix(host)
        while True:
            rule = whole.get(suffix)
            if rule is not None:
                return rule
            if paths:
                for path_rule in paths.get(suffix, ()):
                    covers = path_rule.admits_path if admitting else path_rule.blocks_path
                    if covers(path):
                        return path_rule.text
            if is_ip:
                return None
            dot = host.find(".", dot + 1)
            if dot == -1:
                return None
            suffix = host[dot + 1 :]

    def _first_suffix(self, host: str) -> tuple[str, int]:
        """The longest suffix of ``host`` a rule could name, and the dot before it."""
        dot = host.find(".", len(host) - self._longest - 1)
        if dot == -1:
            return "", len(host)  # no label boundary close enough to the end
        return host[dot + 1 :], dot


def _looks_like_ip(host: str) -> bool:
    return host.startswith("[") or host.replace(".", "").isdigit()
