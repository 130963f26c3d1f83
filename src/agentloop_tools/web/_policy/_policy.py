"""One domain list, used twice: as the provider's filter, and to audit what came back.

Prevention is the provider's; the audit is ours. Providers differ in what they
enforce (OpenAI may reject or ignore a blocklist, Anthropic matches fetches by
domain only), and answer text can name any URL, so every finished turn is
checked against the same list the provider was given.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

from agentloop_tools.web._domains._rules import Rule, parse_rules
from agentloop_tools.web._policy._view import policy_view
from agentloop_tools.web._policy._violation import Mode, Violation, Where

__all__ = ["DomainPolicy", "Mode", "Violation", "Where", "audit_text", "robots_policy"]

# agentloop and the transcript readers load when a policy audits or builds a tool, not
# when it is built: the plugin builds every marker's policy while collecting.
if TYPE_CHECKING:
    from agentloop import HostedTool, Transcript
    from agentloop.transcript import Message

    from agentloop_tools.web._policy._explain import Explanation


class DomainPolicy:
    """A domain allowlist or blocklist: the provider filter and the audit of its result.

    Build one with :meth:`allow` or :meth:`block`; the constructor is private.
    """

    # _view: what explain and audit_text read (the index, the text audit), so that no
    # module reads the policy's other private attributes.
    __slots__ = ("_bare_hosts", "_domains", "_mode", "_view")

    def __init__(
        self,
        mode: Mode,
        rules: tuple[Rule, ...] = (),
        *,
        bare_hosts: bool = False,
        _private: object = None,
    ) -> None:
        if _private is not _TOKEN:
            raise TypeError(_constructor_hint(mode))
        self._mode: Mode = mode
        self._bare_hosts = bare_hosts
        self._domains = tuple(rule.text for rule in rules)
        self._view = policy_view(mode, rules, bare_hosts=bare_hosts)

    @classmethod
    def allow(cls, domains: Iterable[str], *, bare_hosts: bool = False) -> DomainPolicy:
        """Only these domains (with their subdomains) and path prefixes are permitted.

        Args:
            domains: the rules.
            bare_hosts: also judge the bare host names in prose that linkify-it renders
                as links (``evil.com``, but also ``config.py``: ``.py`` is a top-level
                domain). Off by default: the audit then judges URLs, links and the
                hosts commands in the answer contact, never a host-like word.
        """
        if not isinstance(bare_hosts, bool):
            raise TypeError(f"bare_hosts must be True or False, got {bare_hosts!r}.")
        rules = _nonempty(domains, "DomainPolicy.allow")
        return cls("allow", rules, bare_hosts=bare_hosts, _private=_TOKEN)

    @classmethod
    def block(cls, domains: Iterable[str]) -> DomainPolicy:
        """Everything is permitted except these domains (with subdomains) and paths."""
        return cls("block", _nonempty(domains, "DomainPolicy.block"), _private=_TOKEN)

    @property
    def mode(self) -> Mode:
        """``"allow"`` or ``"block"``."""
        return self._mode

    @property
    def domains(self) -> tuple[str, ...]:
        """The entries as given, in order; what the provider is sent."""
        return self._domains

    @property
    def bare_hosts(self) -> bool:
        """Whether an allowlist judges the bare hosts a linkifier links (``bare_hosts=True``)."""
        return self._bare_hosts

    def __repr__(self) -> str:
        shown = ", ".join(repr(domain) for domain in self._domains[:5])
        more = f", ... ({len(self._domains)} in all)" if len(self._domains) > 5 else ""
        option = ", bare_hosts=True" if self._bare_hosts else ""
        return f"DomainPolicy.{self._mode}([{shown}{more}]{option})"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, DomainPolicy):
            return NotImplemented
        return (self._mode, self._domains, self._bare_hosts) == (
            other._mode,
            other._domains,
            other._bare_hosts,
        )

    def __hash__(self) -> int:
        return hash((self._mode, self._domains, self._bare_hosts))

    def __reduce__(self) -> tuple[Any, tuple[str, tuple[str, ...], bool, bytes | None]]:
        # Rebuilt from its list (the rule finder is a native object, built when needed),
        # with the blocklist's Hyperscan database if compiled: a worker does not compile it
        # again (serialized, never a file: a database is built for one CPU).
        return (_rebuild, (self._mode, self._domains, self._bare_hosts, self._view.compiled()))

    def native_web_search(self, **options: Any) -> HostedTool:
        """A hosted web search filtered by this policy's list.

        Takes every option of :func:`native_web_search` except the domain lists,
        which come from the policy.
        """
        from agentloop_tools.web._hosted_search import native_web_search

        for key in ("allowed_domains", "blocked_domains"):
            if key in options:
                raise ValueError(
                    f"{key}= cannot be passed to DomainPolicy.native_web_search(): the "
                    f"policy's own list ({self._mode} {len(self._domains)} domains) is used. "
                    "Build another DomainPolicy to search with a different list."
                )
        if self._mode == "allow":
            return native_web_search(allowed_domains=self._domains, **options)
        return native_web_search(blocked_domains=self._domains, **options)

    def match(self, url_or_host: str) -> str | None:
        """The rule that covers ``url_or_host``, as written in the list, or None.

        In an allowlist, the rule that admits it; in a blocklist, the rule that
        blocks it. Accepts full URLs, scheme-relative URLs and bare hosts with an
        optional port and path. Never raises.
        """
        if not isinstance(url_or_host, str):
            return None
        permitted, rule = self._view.judge(url_or_host)
        return rule if permitted is self._view.allow else None

    def permits(self, url_or_host: str) -> bool:
        """Whether the policy lets an agent reach ``url_or_host``. Never raises.

        An allowlist permits only what a rule clearly names; anything unreadable is
        refused. A blocklist refuses anything any rule could cover. Where readers
        disagree on the host (``https://good.com\\@evil.com/`` is good.com to a browser,
        evil.com to urllib and httpx), an allowlist refuses and a blocklist refuses if
        either host is blocked. A URL carried inside another (a redirector's
        ``?url=https://...``) is judged too.
        """
        if not isinstance(url_or_host, str):
            return self._mode == "block"
        return self._view.judge(url_or_host)[0]

    def explain(self, url_or_text: str) -> Explanation:
        """Why this policy permits or refuses a URL, or each link and mention in a text.

        Returns an ``Explanation``: ``.permitted`` (``permits(url)`` for a URL; no
        ``audit`` finding for a text), ``.readings`` (each with its name, host and
        matched rule) and a ``str()`` that reads as a short paragraph.
        """
        from agentloop_tools.web._policy._explain import explain

        return explain(self, self._view, url_or_text)

    def audit(
        self, transcript: Transcript | Sequence[Message], *, since: int = 0
    ) -> list[Violation]:
        """Every place the messages from ``since`` on reached a domain not permitted.

        Checks the sources hosted tools consulted, the URLs in the model's calls of
        our client-side tools (``web_search``, ``web_fetch``), the redirects
        ``web_fetch`` followed and the results they showed, the citations on answer
        text, and
        the answer text itself: links in every form a renderer or reader follows
        and, for a blocklist, bare mentions of blocked hosts. One record per
        occurrence, in transcript order. Never raises on text, never mutates.
        """
        from agentloop.transcript import TextPart

        from agentloop_tools.web._transcript._evidence import message_sources
        from agentloop_tools.web._transcript._fetch_format import reached
        from agentloop_tools.web._transcript._messages import messages_of, start_index
        from agentloop_tools.web._transcript._tool_results import (
            search_call_urls,
            search_sources,
        )

        messages = messages_of(transcript)
        start = start_index(since, len(messages))
        violations: list[Violation] = []
        fetched = reached(messages)
        robots: DomainPolicy | None = None
        # Messages repeat links: what one message's text judged, the next reuses.
        memo = self._view.text_audit.memo()

        def judge(policy: DomainPolicy, url: str, where: Where, refused: bool = False) -> None:
            permitted, rule = policy._view.judge(url)
            if not permitted:
                violations.append(Violation(url, where, index, rule, refused=refused))

        for index in range(start, len(messages)):
            message = messages[index]
            for source in message_sources(message):
                judge(self, source.url, "source")
            for where, url, refused in fetched.get(index, ()):
                if where == "robots":
                    robots = robots or robots_policy(self)
                    judge(robots, url, where, refused)
                else:
                    judge(self, url, where, refused)
            for url in search_call_urls(message):
                judge(self, url, "tool-call")
            for source in search_sources(message):
                judge(self, source.url, "tool-result")
            for part in message.content:
                if isinstance(part, TextPart):
                    for citation in part.citations:
                        judge(self, citation.url, "citation")
            if message.role == "assistant":
                texts = [part.text for part in message.content if isinstance(part, TextPart)]
                violations.extend(self._view.text_audit.parts(texts, index, memo))
        return violations


_TOKEN = object()


def audit_text(policy: DomainPolicy, text: str, index: int = 0) -> list[Violation]:
    """Every link (and, for a blocklist, mention) in ``text`` the policy refuses, with spans.

    One text, as ``DomainPolicy.audit`` reads an answer's joined text parts; the
    violations say ``where="text"`` and ``message_index=index``.
    """
    return policy._view.text_audit.text(text, index)


def prepare_audit(policy: DomainPolicy, size: int) -> None:
    """Readies ``policy`` to audit about ``size`` characters before it is sent to other
    processes: a blocklist whose Hyperscan compile that much text pays for compiles once
    here and sends the database in its pickle, instead of each process compiling, or none
    (each reading too little of the text for its own compile to pay)."""
    policy._view.prepare(size)


def robots_policy(policy: DomainPolicy) -> DomainPolicy:
    """What a robots.txt request must pass: the policy with path rules widened to their host.

    robots.txt lives at ``/robots.txt``, outside any path an allowlist names
    (``docs.example.com/guide``), yet the rules for the guide are in it. So an
    allowlist admits the robots.txt of every host it admits a path of; a
    blocklist is kept whole (a rule naming ``/robots.txt`` itself still blocks it).
    """
    if policy.mode == "block":
        return policy
    hosts = dict.fromkeys(rule.host for rule in parse_rules(policy.domains, argument="robots"))
    return DomainPolicy.allow(hosts)


def _constructor_hint(given: object) -> str:
    """What to write instead of calling the private constructor."""
    if given in ("allow", "block"):
        return f"use DomainPolicy.{given}([...]): the constructor is private"
    domains = [given] if isinstance(given, str) else given
    if isinstance(domains, list | tuple | set | frozenset) and all(
        isinstance(domain, str) for domain in domains
    ):
        shown = repr(list(domains)[:3])[:-1] + (", ...]" if len(domains) > 3 else "]")
        return (
            f"DomainPolicy({given!r}) is not how a policy is built: write "
            f"DomainPolicy.allow({shown}) to permit only these domains, or "
            f"DomainPolicy.block({shown}) to permit all but these."
        )[:400]
    return "use DomainPolicy.allow([...]) or DomainPolicy.block([...])"


def _rebuild(
    mode: Mode, domains: tuple[str, ...], bare_hosts: bool = False, compiled: bytes | None = None
) -> DomainPolicy:
    if mode == "allow":
        return DomainPolicy.allow(domains, bare_hosts=bare_hosts)
    policy = DomainPolicy.block(domains)
    policy._view.receive_compiled(compiled)
    return policy


def _nonempty(domains: Iterable[str], name: str) -> tuple[Rule, ...]:
    rules = parse_rules(domains, argument=name)
    if not rules:
        raise ValueError(
            f"{name}() needs at least one domain, got an empty list. An empty allowlist "
            "would refuse everything and an empty blocklist would refuse nothing: "
            "pass the domains, or do not set a policy."
        )
    return rules
