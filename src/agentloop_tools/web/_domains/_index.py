"""Where a URL is judged against the rules: the rule index and its one verdict.

:meth:`RuleIndex.judge` is the judgement every reader of a policy uses (``permits``,
``match``, ``audit``, ``explain``, the text audit): an allowlist permits what an allow
rule admits, a blocklist what no block rule covers, and the URLs a URL carries are
judged too, down to :data:`NESTING`.

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
from agentloop_tools.web._domains._url import Location, locate, nested_urls

# How deep URLs carried inside URLs are followed (a redirector to a redirector...).
NESTING = 3


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
                rule = self._find(other, looks_like_ip(other), location.path, admitting=False)
                if rule is not None:
                    break
        return rule

    def verdict(self, location: Location | None, allow: bool) -> tuple[bool, str | None]:
        """(permitted, the rule that admits or blocks it) of one reading of a URL.

        Permitted if an allow rule matched (allowlist), or if no block rule matched
        (blocklist). ``None`` (a URL that names no host) meets no rule.
        """
        if location is None:
            rule = None
        elif allow:
            rule = self.admitting(location)
        else:
            rule = self.blocking(location)
        return is_permitted(rule, allow), rule

    def judge(self, url: str, allow: bool, depth: int = 0) -> tuple[bool, str | None]:
        """(permitted, the rule that admits or blocks it) for a URL and the URLs it carries.

        A redirector's target (``?url=https://...``) is judged too, to :data:`NESTING`
        levels; the first refused one gives the verdict.
        """
        permitted, rule = self.verdict(locate(url), allow)
        if depth >= NESTING or (not permitted and not allow):
            return permitted, rule
        for inner in nested_urls(url):
            inner_permitted, inner_rule = self.judge(inner, allow, depth + 1)
            if not inner_permitted:
                return False, inner_rule
        return permitted, rule

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


def is_permitted(rule: str | None, allow: bool) -> bool:
    """The verdict of a match: an allowlist permits what an allow rule matched, a
    blocklist what no block rule matched."""
    return (rule is not None) == allow


def looks_like_ip(host: str) -> bool:
    """Whether another reading's host is an IP literal (an IPv6 one is bracketed)."""
    return host.startswith("[") or host.replace(".", "").isdigit()
