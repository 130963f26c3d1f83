"""One domain list, used twice: as the provider's filter, and to audit what came back.

Prevention is the provider's; the audit is ours. Providers differ in what they
enforce (OpenAI may reject or ignore a blocklist, Anthropic matches fetches by
domain only), and answer text can name any URL, so every finished turn is
checked against the same list the provider was given.
"""

from __future__ import annotations

import re
from bisect import bisect_left
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, Literal

from agentloop import HostedTool, Transcript
from agentloop.transcript import Message, TextPart, join_text

from agentloop_tools.web._domains._index import RuleIndex
from agentloop_tools.web._domains._rules import Rule, parse_rules
from agentloop_tools.web._domains._url import Location, locate, nested_urls, quick_host
from agentloop_tools.web._hosted_search import native_web_search
from agentloop_tools.web._policy._verdict import verdict
from agentloop_tools.web._text._commands import command_targets
from agentloop_tools.web._text._docformats import asciidoc_reading, rst_targets
from agentloop_tools.web._text._finder import (
    Found,
    has_deleted,
    link_tokens,
    linked_reading,
    read_token,
    split_attributes,
    tokens,
)
from agentloop_tools.web._text._literals import Replacement, literal_readings, rtf_reading
from agentloop_tools.web._text._markup import Decoded, decode, layout
from agentloop_tools.web._text._prefilter import RuleFinder
from agentloop_tools.web._transcript._evidence import message_sources, messages_of
from agentloop_tools.web._transcript._fetch_format import reached
from agentloop_tools.web._transcript._tool_results import search_call_urls, search_sources

if TYPE_CHECKING:
    from agentloop_tools.web._policy._explain import Explanation

type Mode = Literal["allow", "block"]
type Where = Literal["source", "citation", "text", "tool-call", "tool-result", "redirect", "robots"]


@dataclass(frozen=True, slots=True)
class Violation:
    """One place a finished turn reached a domain the policy does not permit.

    Attributes:
        url: the URL or host as it appears (a source or citation URL, or the text as
            written in the answer).
        where: ``"source"`` (a page a hosted tool consulted), ``"citation"`` or
            ``"text"`` (a link or a mention in the answer); for our client-side
            tools, ``"tool-call"`` (a URL, or a ``site:`` host, in the arguments the
            model passed: a page ``web_fetch`` was asked for, a search's query),
            ``"redirect"`` (a redirect hop ``web_fetch`` followed), ``"robots"`` (a
            robots.txt ``web_fetch`` read, or its redirect hop: judged by its host, see
            :func:`robots_policy`) or
            ``"tool-result"`` (a URL our tool's output showed the model: the final
            URL ``web_fetch`` read, a ``web_search`` result).
        message_index: index of the message in the transcript.
        rule: the block rule that matched, or None for "not on the allowlist".
        span: for ``where="text"``, the ``(start, end)`` offsets of ``url`` in the
            message's text (its text parts joined without separators); else None.
        conversation: which conversation of several it was found in: the index
            ``AgentloopEvidence.audit`` gives; ``DomainPolicy.audit`` reads one
            conversation and leaves it 0. Text shows it numbered from 1
            (``str(violation)`` says "conversation 2" for index 1).
    """

    url: str
    where: Where
    message_index: int
    rule: str | None
    span: tuple[int, int] | None = None
    conversation: int = 0

    @property
    def verdict(self) -> str:
        """Why it is a violation, worded as every report and message words it."""
        return verdict(self.rule)

    def __str__(self) -> str:
        place = f"conversation {self.conversation + 1}, " if self.conversation else ""
        return f"{place}message {self.message_index} {self.where}: {self.url} ({self.verdict})"


class DomainPolicy:
    """A domain allowlist or blocklist: the provider filter and the audit of its result.

    Build one with :meth:`allow` or :meth:`block`; the constructor is private.
    """

    __slots__ = ("_bare_hosts", "_domains", "_index", "_mode", "_rule_finder")

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
        self._index = RuleIndex(rules)
        self._rule_finder: RuleFinder | None = None  # built at the first audit that needs it

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

    def __reduce__(self) -> tuple[Any, tuple[str, tuple[str, ...], bool]]:
        # Rebuilt from its list: the rule finder is a native object, built when needed.
        return (_rebuild, (self._mode, self._domains, self._bare_hosts))

    def _finder(self) -> RuleFinder:
        if self._rule_finder is None:
            self._rule_finder = RuleFinder(
                self._index.domain_hosts(), cjk=not self._index.has_punycode
            )
        return self._rule_finder

    def native_web_search(self, **options: Any) -> HostedTool:
        """A hosted web search filtered by this policy's list.

        Takes every option of :func:`native_web_search` except the domain lists,
        which come from the policy.
        """
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
        permitted, rule = self._judge_url(url_or_host)
        return rule if permitted is (self._mode == "allow") else None

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
        return self._judge_url(url_or_host)[0]

    def explain(self, url_or_text: str) -> Explanation:
        """Why this policy permits or refuses a URL, or each link and mention in a text.

        Returns an ``Explanation``: ``.permitted`` (``permits(url)`` for a URL; no
        ``audit`` finding for a text), ``.readings`` (each with its name, host and
        matched rule) and a ``str()`` that reads as a short paragraph.
        """
        from agentloop_tools.web._policy._explain import explain

        return explain(self, url_or_text)

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
        messages = messages_of(transcript)
        start = _start_index(since, len(messages))
        violations: list[Violation] = []
        fetched = reached(messages)
        robots: DomainPolicy | None = None
        for index in range(start, len(messages)):
            message = messages[index]
            for source in message_sources(message):
                self._check_url(source.url, "source", index, violations)
            for where, url in fetched.get(index, ()):
                if where == "robots":
                    robots = robots or robots_policy(self)
                    robots._check_url(url, where, index, violations)
                else:
                    self._check_url(url, where, index, violations)
            for url in search_call_urls(message):
                self._check_url(url, "tool-call", index, violations)
            for source in search_sources(message):
                self._check_url(source.url, "tool-result", index, violations)
            for part in message.content:
                if isinstance(part, TextPart):
                    for citation in part.citations:
                        self._check_url(citation.url, "citation", index, violations)
            if message.role == "assistant":
                texts = [part.text for part in message.content if isinstance(part, TextPart)]
                violations.extend(self._audit_parts(texts, index))
        return violations

    def _audit_parts(self, texts: list[str], index: int) -> list[Violation]:
        """The text parts as stored (joined) and as agentloop displays them (``join_text``).

        ``join_text`` puts a space at some seams between parts: "see" + "evil.example"
        shows as "see evil.example". Only tokens touching such a seam can read
        differently, so only those are read again.
        """
        text = "".join(texts)
        violations = self._audit_text(text, index)
        seen = {(violation.url, violation.span) for violation in violations}
        added = False
        for seam in _spaced_seams(texts):
            left = max(_last_space(text, seam), seam - _SEAM_WINDOW)
            right = min(_next_space(text, seam), seam + _SEAM_WINDOW)
            window = text[left:seam] + " " + text[seam:right]
            for violation in self._audit_text(window, index):
                assert violation.span is not None
                start, end = violation.span
                shift = left if end <= seam - left else left - 1
                span = (start + shift, end + shift)
                if (violation.url, span) not in seen:
                    seen.add((violation.url, span))
                    violations.append(replace(violation, span=span))
                    added = True
        if added:
            violations.sort(key=lambda violation: violation.span or (0, 0))
        return violations

    def _rule_for(self, location: Location | None) -> str | None:
        if location is None:
            return None
        if self._mode == "allow":
            return self._index.admitting(location)
        return self._index.blocking(location)

    def _verdict(self, location: Location | None) -> tuple[bool, str | None]:
        """(permitted, the rule that admits or blocks it) for one location."""
        rule = self._rule_for(location)
        return (rule is not None) if self._mode == "allow" else (rule is None), rule

    def _judge_url(self, url: str, depth: int = 0) -> tuple[bool, str | None]:
        """(permitted, rule) for a URL and the URLs it carries (a redirector's target)."""
        permitted, rule = self._verdict(locate(url))
        if depth >= _NESTING or (not permitted and self._mode == "block"):
            return permitted, rule
        for inner in nested_urls(url):
            inner_permitted, inner_rule = self._judge_url(inner, depth + 1)
            if not inner_permitted:
                return False, inner_rule
        return permitted, rule

    def _check_url(self, url: str, where: Where, index: int, out: list[Violation]) -> None:
        permitted, rule = self._judge_url(url)
        if not permitted:
            out.append(Violation(url, where, index, rule))

    def _audit_text(self, text: str, index: int) -> list[Violation]:
        """Findings in the text as renderers lay it out, and in the text they decode.

        A finding in the decoded text is reported with the span and spelling of the
        text as written, unless the written text already gave a finding there. An
        allowlist drops a finding in the written text whose decoded reading it admits
        (``https://python&#46;org/`` goes to python.org); a blocklist keeps both.
        """
        shown, code = layout(text)
        # Linkifiers never link inside code: an allowlist reads bare hosts elsewhere only.
        prose: Callable[[int, int], bool] = lambda start, end: not code.holds(start, end)  # noqa: E731
        violations = self._scan_text(shown, index, prose)
        if shown is not text:
            violations = [_respelled(violation, text) for violation in violations]
        # A browser decodes HTML (every reference, backslashes kept); CommonMark decodes
        # markdown (escapes, references ending in ";"). The same text is scanned once.
        browser = decode(shown, commonmark=False)
        commonmark = decode(shown, commonmark=True)
        if commonmark is not None and browser is not None and commonmark.text == browser.text:
            commonmark = browser
        # What a program decodes: string literals, RTF, AsciiDoc attributes. The decoded
        # text replaces the text as written, which no one opens as it is.
        # They are read from the text as written (laying code out first would cut
        # "\\x2f/" apart), and laid out after decoding.
        replacements = [
            replacement.laid_out(layout(replacement.reading.text)[0])
            for replacement in (
                *literal_readings(text),
                rtf_reading(text),
                asciidoc_reading(text),
            )
            if replacement is not None
        ]
        replacing = [replacement.reading for replacement in replacements]
        found: dict[int, tuple[Decoded, list[Violation]]] = {}
        for reading in (browser, commonmark, *replacing):
            if reading is not None and id(reading) not in found:
                scanned = self._scan_text(reading.text, index, _mapped(prose, reading))
                found[id(reading)] = (reading, scanned)
        if not found:
            return violations
        if self._mode == "allow":
            violations = _unless_admitted_as_decoded(
                violations, text, found.get(id(browser)), found.get(id(commonmark))
            )
        # Where readings overlap, the one that covers the most of the text is reported:
        # the decoded "&#104;ttps://evil.example/" rather than "evil.example/".
        candidates = [(violation, 0) for violation in violations]
        replaced_by: list[tuple[Replacement, _Spans]] = []
        replacing_ids = {
            id(reading): replacement
            for reading, replacement in zip(replacing, replacements, strict=True)
        }
        for rank, (reading, extra) in enumerate(found.values(), start=1):
            moved_all = []
            for violation in extra:
                assert violation.span is not None
                start, end = reading.span(*violation.span)
                moved = replace(violation, url=text[start:end], span=(start, end))
                if id(reading) not in replacing_ids:
                    candidates.append((moved, rank))
                elif replacing_ids[id(reading)].holds(start, end):
                    # Elsewhere the text is as written: its reading of that is judged.
                    candidates.append((moved, -rank))
                moved_all.append(moved)
            if id(reading) in replacing_ids:
                replaced_by.append((replacing_ids[id(reading)], _Spans(moved_all)))
        if self._mode == "allow" and replaced_by:
            # An allowlist judges the decoded link: "https://m\\u00fcnchen.de/" in a JSON
            # string goes to münchen.de, not to the host "m" a browser reads as written.
            candidates = [
                (violation, rank)
                for violation, rank in candidates
                if rank < 0 or not _replaced(violation, replaced_by)
            ]
        candidates.sort(key=_widest_first)
        kept: list[Violation] = []
        reach = -1
        for violation, _ in candidates:
            assert violation.span is not None
            start, end = violation.span
            if start >= reach:  # overlapping readings of one link are one finding
                kept.append(violation)
                reach = end
        return kept

    def _scan_text(
        self, text: str, index: int, prose: Callable[[int, int], bool]
    ) -> list[Violation]:
        """Findings in ``text``; ``prose(start, end)`` says whether a span is outside code."""
        verdicts: dict[tuple[str, ...], str | Literal[False] | None] = {}
        # Answers repeat links: judge each distinct token once.
        judged: dict[str, list[tuple[int, int, str, str | None, bool]]] = {}
        violations: list[Violation] = []
        # An allowlist judges links, and bare hosts only when asked to.
        mentions = self._mode == "block" or self._bare_hosts
        if self._mode == "block" and not self._index.has_ip_rules:
            # A blocklist of domain names rules most tokens out without reading them.
            to_read = self._finder().tokens_to_read(text)
        elif not mentions:
            to_read = list(link_tokens(text))
        else:
            to_read = list(tokens(text))
        for offset, token in to_read:
            flagged = judged.get(token)
            if flagged is None:
                flagged = judged[token] = self._judge(
                    token, read_token(token, mentions=mentions), verdicts
                )
            for start, end, written, rule, bare in flagged:
                span = (start + offset, end + offset)
                if bare and self._mode == "allow" and not prose(*span):
                    continue
                violations.append(Violation(written, "text", index, rule, span=span))
        extra = split_attributes(text) + rst_targets(text)
        if extra:
            violations = self._merge_attributes(violations, extra, index, verdicts)
        if self._mode == "allow":
            # A blocklist flags these hosts as mentions already.
            commands = command_targets(text)
            if commands:
                violations = self._add_commands(violations, commands, index, verdicts)
        return violations

    def _add_commands(
        self,
        violations: list[Violation],
        commands: list[Found],
        index: int,
        verdicts: dict[tuple[str, ...], str | Literal[False] | None],
    ) -> list[Violation]:
        """The hosts commands contact, where no link already reported covers them."""
        spans = _Spans(violations)
        added = [
            Violation(written, "text", index, rule, span=(start, end))
            for start, end, written, rule, _ in self._judge("", commands, verdicts)
            if not spans.overlaps(start, end)
        ]
        if not added:
            return violations
        return sorted(violations + added, key=lambda violation: violation.span or (0, 0))

    def _judge(
        self,
        token: str,
        finds: list[Found],
        verdicts: dict[tuple[str, ...], str | Literal[False] | None],
    ) -> list[tuple[int, int, str, str | None, bool]]:
        """(start, end, text, rule, is a bare host) of each finding the policy refuses.

        A blocklist judges every host named; an allowlist judges links and the bare
        hosts a linkifier renders as links (``evil.com``, not ``admin@evil.com``).
        """
        flagged: list[tuple[int, int, str, str | None, bool]] = []
        link_start, link_end = -1, -1
        allow = self._mode == "allow"
        for found in finds:
            if found.kind == "mention" and link_start <= found.start < link_end:
                continue  # the host of a link already reported, or (allowlist) in a link
            if allow and found.kind == "mention":
                if not self._bare_hosts:
                    continue  # a host-like word is no link: config.py, README.md, evil.com
                if _in_destination(token, found.start):
                    continue  # a relative link target: [Contributing](../CONTRIBUTING.md)
                if token[found.start - 1 : found.start] == "@":
                    continue  # an e-mail address: a mailto: link, no web host
                if token.startswith("](", found.end):
                    continue  # link text: renderers link the destination, not the text
                shown = linked_reading(found)
                if shown is None:
                    continue
                found = found._replace(readings=(shown,))
            if allow and found.kind == "url":
                link_start, link_end = found.start, found.end
            verdict = verdicts.get(found.readings, _UNSEEN)
            if verdict is _UNSEEN:
                verdict = verdicts[found.readings] = self._text_verdict(found)
            if verdict is False:
                continue
            if found.kind == "url":
                link_start, link_end = found.start, found.end
            flagged.append((found.start, found.end, found.text, verdict, found.kind == "mention"))
        return flagged

    def _merge_attributes(
        self,
        violations: list[Violation],
        extra: list[Found],
        index: int,
        verdicts: dict[tuple[str, ...], str | Literal[False] | None],
    ) -> list[Violation]:
        """Attribute values with newlines replace what the token scan read of them."""
        spans = _Spans(
            [Violation("", "text", index, None, (found.start, found.end)) for found in extra]
        )
        kept = [
            violation
            for violation in violations
            if violation.span is None or not spans.overlaps(*violation.span)
        ]
        for start, end, written, rule, _ in self._judge("", extra, verdicts):
            kept.append(Violation(written, "text", index, rule, span=(start, end)))
        kept.sort(key=lambda violation: violation.span or (0, 0))
        return kept

    def _text_verdict(self, found: Found) -> str | Literal[False] | None:
        """The violation's rule (None: not allowlisted), or False when permitted."""
        if (
            len(found.readings) == 1
            and not self._index.has_path_rules
            and not nested_urls(found.readings[0])
        ):
            # Host rules only: a plain URL's host decides, whatever follows it.
            host = quick_host(found.readings[0])
            if host is not None:
                rule = self._index.domain_rule(host)
                if self._mode == "allow":
                    return False if rule is not None else None
                return rule if rule is not None else False
        if self._mode == "allow":
            # Every reading must be admitted: "https://evil.net'.python.org/" is a
            # python.org host to a browser and a link to evil.net to a renderer.
            written = found.readings[0]
            for reading in found.readings:
                if _cut_at_letter(written, reading):
                    continue  # no renderer ends a host at "ü": "https://münchen.de/" is whole
                if locate(reading) is None:
                    continue  # relative links and mailto: reach no host
                if has_deleted(reading):
                    return None  # browsers delete it from the host, markdown-it keeps it
                if not self._judge_url(reading)[0]:
                    return None
            return False
        for reading in found.readings:
            # A redirect's target counts, however it is escaped ("?to=https%253A%252F...").
            permitted, rule = self._judge_url(reading)
            if not permitted:
                return rule
        return False


_SEAM_WINDOW = 2048
# What comes just before a URL that only a browser or a markdown renderer reads: an
# href or src attribute value, or a markdown link destination.
_DESTINATION_BEFORE = re.compile(r"""(?:\b(?:href|src)\s*=\s*["']?|\]\(\s*<?)$""", re.IGNORECASE)
# How deep URLs carried inside URLs are followed (a redirector to a redirector...).
_NESTING = 3


class _Spans:
    """Which stretches of text already hold a finding: overlap tests in log time."""

    def __init__(self, violations: list[Violation]) -> None:
        spans = sorted(violation.span for violation in violations if violation.span)
        self._starts = [start for start, _ in spans]
        self._reach: list[int] = []
        furthest = -1
        for _, end in spans:
            furthest = max(furthest, end)
            self._reach.append(furthest)

    def overlaps(self, start: int, end: int) -> bool:
        before = bisect_left(self._starts, max(end, start + 1)) - 1
        return before >= 0 and self._reach[before] > start


def _cut_at_letter(written: str, reading: str) -> bool:
    """Whether ``reading`` is ``written`` cut before a character other than ASCII.

    A reader may end a host there ("https://evil.com中文" names evil.com), so a
    blocklist judges that reading; GFM and linkify-it keep the whole host, so it is
    not a link an allowlist must refuse.
    """
    return (
        len(reading) < len(written)
        and written.startswith(reading)
        and not written[len(reading)].isascii()
    )


def _in_destination(token: str, position: int) -> bool:
    """Whether ``position`` is inside a markdown link destination that starts in ``token``.

    A bare host there is a relative path ("[up](../README.md)"), never a host.
    """
    opened = token.rfind("](", max(position - _SEAM_WINDOW, 0), position)  # bounded: linear
    return opened != -1 and ")" not in token[opened + 2 : position]


def _mapped(prose: Callable[[int, int], bool], reading: Decoded) -> Callable[[int, int], bool]:
    """``prose`` for spans of the decoded text."""
    return lambda start, end: prose(*reading.span(start, end))


def _unless_admitted_as_decoded(
    violations: list[Violation],
    text: str,
    browser: tuple[Decoded, list[Violation]] | None,
    commonmark: tuple[Decoded, list[Violation]] | None,
) -> list[Violation]:
    """Drop a link only its decoded form of which is followed, when that form is admitted.

    In an ``href``/``src`` value the browser decodes every reference; in a markdown link
    destination CommonMark decodes escapes and references ending in ";". Elsewhere the
    text as written is a reading of its own: markdown-it ends a bare link at a
    reference, and leaves references in autolinks alone.
    """
    readers = {
        kind: (reading, _Spans([replace(v, span=reading.span(*v.span or (0, 0))) for v in extra]))
        for kind, pair in (("attribute", browser), ("destination", commonmark))
        if pair is not None
        for reading, extra in (pair,)
    }
    kept = []
    for violation in violations:
        if violation.span is not None:
            start, end = violation.span
            before = _DESTINATION_BEFORE.search(text, max(start - 64, 0), start)
            kind = (
                None
                if before is None
                else "destination"
                if before.group()[0] == "]"
                else "attribute"
            )
            reader = readers.get(kind) if kind is not None else None
            if (
                reader is not None
                and reader[0].changes(start, end)
                and not reader[1].overlaps(start, end)
            ):
                continue
        kept.append(violation)
    return kept


def _widest_first(candidate: tuple[Violation, int]) -> tuple[int, int, int]:
    violation, rank = candidate
    start, end = violation.span or (0, 0)
    return start, -end, abs(rank)


def _replaced(violation: Violation, readings: list[tuple[Replacement, _Spans]]) -> bool:
    """Whether a decoder reads this text (a string literal...) and admits what it reads.

    Not when RFC 3986 clients read another host in the text as written: a shell passes
    ``"https://good.com\\x2f@evil.com/"`` to curl undecoded, and curl goes to evil.com.
    """
    assert violation.span is not None
    start, end = violation.span
    if not any(
        replacement.holds(start, end) and not flagged.overlaps(start, end)
        for replacement, flagged in readings
    ):
        return False
    location = locate(violation.url)
    return location is None or location.agreed


def _respelled(violation: Violation, text: str) -> Violation:
    """The violation with its URL as written (layout put spaces where pipes were)."""
    if violation.span is None:
        return violation
    start, end = violation.span
    written = text[start:end]
    return violation if written == violation.url else replace(violation, url=written)


def _spaced_seams(texts: list[str]) -> list[int]:
    """Offsets in the joined text where ``join_text`` shows a space that is not there."""
    seams = []
    offset = 0
    previous = ""
    for text in texts:
        if previous and text:
            pair = join_text([TextPart(text=previous[-1]), TextPart(text=text[0])])
            if len(pair) == 3:
                seams.append(offset)
        if text:
            previous = text
        offset += len(text)
    return seams


def _last_space(text: str, position: int) -> int:
    for index in range(position - 1, max(position - _SEAM_WINDOW, 0) - 1, -1):
        if text[index].isspace():
            return index + 1
    return max(position - _SEAM_WINDOW, 0)


def _next_space(text: str, position: int) -> int:
    for index in range(position, min(position + _SEAM_WINDOW, len(text))):
        if text[index].isspace():
            return index
    return min(position + _SEAM_WINDOW, len(text))


_TOKEN = object()
_UNSEEN: Any = object()


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


def _rebuild(mode: Mode, domains: tuple[str, ...], bare_hosts: bool = False) -> DomainPolicy:
    if mode == "allow":
        return DomainPolicy.allow(domains, bare_hosts=bare_hosts)
    return DomainPolicy.block(domains)


def _nonempty(domains: Iterable[str], name: str) -> tuple[Rule, ...]:
    rules = parse_rules(domains, argument=name)
    if not rules:
        raise ValueError(
            f"{name}() needs at least one domain, got an empty list. An empty allowlist "
            "would refuse everything and an empty blocklist would refuse nothing: "
            "pass the domains, or do not set a policy."
        )
    return rules


def _start_index(since: int, length: int) -> int:
    if isinstance(since, bool) or not isinstance(since, int):
        raise TypeError(f"since must be a message index (int), got {since!r}.")
    if since < 0:
        return max(length + since, 0)
    return since
