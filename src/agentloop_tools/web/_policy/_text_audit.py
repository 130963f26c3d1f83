"""The text audit: where an answer links to or names a host, and which of those a policy refuses.

The scanner behind ``DomainPolicy.audit``: the text is read as renderers lay it
out (GFM tables, code), as a browser and CommonMark decode it, and as programs
decode it (string literals, RTF, AsciiDoc attributes); attribute values that
span lines and reST targets replace the token scan's reading of them; where
readings of one link overlap, the widest is reported. ``join_text`` seams
between text parts are read both ways.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from agentloop_tools.web._domains._index import RuleIndex, is_permitted
from agentloop_tools.web._domains._url import host_of_plain, locate, nested_urls, plain_host
from agentloop_tools.web._policy._findings import (
    Spans,
    cut_at_letter,
    in_destination,
    mapped,
    replaced,
    respelled,
    unless_admitted_as_decoded,
    widest_first,
)
from agentloop_tools.web._policy._memo import AuditMemo, Flagged, Ruling
from agentloop_tools.web._policy._seams import seam_windows
from agentloop_tools.web._policy._violation import (
    Mode,
    Violation,
    add_text_violations,
    moved,
    text_violation,
)
from agentloop_tools.web._text._commands import command_targets
from agentloop_tools.web._text._docformats import asciidoc_reading, rst_targets, split_attributes
from agentloop_tools.web._text._extent import plain_host_link
from agentloop_tools.web._text._finder import (
    Found,
    link_tokens,
    may_mention,
    mentions_before,
    read_token,
    tokens,
)
from agentloop_tools.web._text._linkable import has_deleted, linked_reading
from agentloop_tools.web._text._literals import Replacement, literal_readings, rtf_reading
from agentloop_tools.web._text._markup import Decoded, decode, layout
from agentloop_tools.web._text._prefilter import RuleFinder


class TextAudit:
    """The text audit of one policy: its mode and its rules, which judge each URL found.

    ``commands=False`` leaves out the hosts shell commands contact (an allowlist
    judges them by default): :func:`links` reads links only.
    """

    __slots__ = ("_allow", "_bare_hosts", "_commands", "_compiled", "_finder", "_index", "_mode")

    def __init__(
        self,
        mode: Mode,
        index: RuleIndex,
        *,
        bare_hosts: bool = False,
        commands: bool = True,
        compiled: bytes | None = None,
    ) -> None:
        self._mode: Mode = mode
        self._allow = mode == "allow"
        self._index = index
        self._bare_hosts = bare_hosts
        self._commands = commands
        self._finder: RuleFinder | None = None  # built at the first audit that needs it
        # A blocklist's Hyperscan database compiled in another process (the policy's pickle).
        self._compiled = compiled

    def _rule_finder(self) -> RuleFinder:
        if self._finder is None:
            self._finder = RuleFinder(
                self._index.domain_hosts(),
                cjk=not self._index.has_punycode,
                compiled=self._compiled,
            )
            self._compiled = None
        return self._finder

    def compiled(self) -> bytes | None:
        """The rule finder's compiled database (or the one received, unused), or None."""
        return self._finder.compiled() if self._finder is not None else self._compiled

    def memo(self) -> AuditMemo:
        """A memo for one audit of several texts under this policy (see :meth:`parts`)."""
        return AuditMemo()

    def parts(self, texts: list[str], index: int, memo: AuditMemo | None = None) -> list[Violation]:
        """The text parts as stored (joined) and as agentloop displays them (``join_text``).

        ``join_text`` puts a space at some seams between parts: "see" + "evil.example"
        shows as "see evil.example". Only tokens touching such a seam can read
        differently, so only those are read again. ``memo``: what this audit has
        judged already (a new one when None).
        """
        memo = AuditMemo() if memo is None else memo
        text = "".join(texts)
        violations = self.text(text, index, memo)
        seen: set[tuple[str, tuple[int, int] | None]] | None = None  # built when first needed
        added = False
        for left, seam, right in seam_windows(texts):
            window = text[left:seam] + " " + text[seam:right]
            for violation in self.text(window, index, memo):
                assert violation.span is not None
                if seen is None:
                    seen = {(violation.url, violation.span) for violation in violations}
                start, end = violation.span
                shift = left if end <= seam - left else left - 1
                span = (start + shift, end + shift)
                if (violation.url, span) not in seen:
                    seen.add((violation.url, span))
                    violations.append(moved(violation, violation.url, span))
                    added = True
        if added:
            violations.sort(key=lambda violation: violation.span or (0, 0))
        return violations

    def text(self, text: str, index: int, memo: AuditMemo | None = None) -> list[Violation]:
        """Findings in the text as renderers lay it out, and in the text they decode.

        A finding in the decoded text is reported with the span and spelling of the
        text as written, unless the written text already gave a finding there. An
        allowlist drops a finding in the written text whose decoded reading it admits
        (``https://python&#46;org/`` goes to python.org); a blocklist keeps both.
        """
        memo = AuditMemo() if memo is None else memo
        shown, code = layout(text)
        # Linkifiers never link inside code: an allowlist reads bare hosts elsewhere only.
        prose: Callable[[int, int], bool] = lambda start, end: not code.holds(start, end)  # noqa: E731
        violations = self._scan(shown, index, prose, memo)
        if shown is not text:
            violations = [respelled(violation, text) for violation in violations]
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
                scanned = self._scan(reading.text, index, mapped(prose, reading), memo)
                found[id(reading)] = (reading, scanned)
        if not found:
            return violations
        if self._mode == "allow":
            violations = unless_admitted_as_decoded(
                violations, text, found.get(id(browser)), found.get(id(commonmark))
            )
        return self._widest(text, violations, found, replacements)

    def _widest(
        self,
        text: str,
        violations: list[Violation],
        found: dict[int, tuple[Decoded, list[Violation]]],
        replacements: list[Replacement],
    ) -> list[Violation]:
        """One finding per link: where readings overlap, the one that covers the most text.

        The decoded "&#104;ttps://evil.example/" rather than "evil.example/". A
        decoded reading's findings are moved to the span and spelling of the text as
        written.
        """
        candidates = [(violation, 0) for violation in violations]
        replaced_by: list[tuple[Replacement, Spans]] = []
        replacing_ids = {id(replacement.reading): replacement for replacement in replacements}
        for rank, (reading, extra) in enumerate(found.values(), start=1):
            moved_all = []
            for violation in extra:
                assert violation.span is not None
                start, end = reading.span(*violation.span)
                written = moved(violation, text[start:end], (start, end))
                if id(reading) not in replacing_ids:
                    candidates.append((written, rank))
                elif replacing_ids[id(reading)].holds(start, end):
                    # Elsewhere the text is as written: its reading of that is judged.
                    candidates.append((written, -rank))
                moved_all.append(written)
            if id(reading) in replacing_ids:
                replaced_by.append((replacing_ids[id(reading)], Spans(moved_all)))
        if self._mode == "allow" and replaced_by:
            # An allowlist judges the decoded link: "https://m\\u00fcnchen.de/" in a JSON
            # string goes to münchen.de, not to the host "m" a browser reads as written.
            candidates = [
                (violation, rank)
                for violation, rank in candidates
                if rank < 0 or not replaced(violation, replaced_by)
            ]
        candidates.sort(key=widest_first)
        kept: list[Violation] = []
        reach = -1
        for violation, _ in candidates:
            assert violation.span is not None
            start, end = violation.span
            if start >= reach:  # overlapping readings of one link are one finding
                kept.append(violation)
                reach = end
        return kept

    def _scan(
        self, text: str, index: int, prose: Callable[[int, int], bool], memo: AuditMemo
    ) -> list[Violation]:
        """Findings in ``text``; ``prose(start, end)`` says whether a span is outside code."""
        # Answers repeat links: judge each distinct token once.
        judged = memo.tokens
        violations: list[Violation] = []
        allow = self._allow
        # An allowlist judges links, and bare hosts only when asked to.
        mentions = self._mode == "block" or self._bare_hosts
        if self._mode == "block" and not self._index.has_ip_rules:
            # A blocklist of domain names rules most tokens out without reading them.
            to_read = self._rule_finder().tokens_to_read(text)
        elif not mentions:
            to_read = link_tokens(text)
        else:
            to_read = list(tokens(text))
        # Host rules only: a plain link's host decides, read at once (a blocklist reads
        # the hosts named around it too; an allowlist's bare hosts take the full reading).
        plain = not self._index.has_path_rules and (not mentions or not allow)
        bare_hosts = allow and self._bare_hosts  # only they can be left out in code
        for offset, token in to_read:
            flagged = judged.get(token)
            if flagged is None:
                flagged = self._plain_refused(token, memo) if plain else None
                if flagged is None:
                    flagged = self._refused(token, read_token(token, mentions=mentions), memo)
                judged[token] = flagged
            if not flagged:
                continue
            if not bare_hosts:
                add_text_violations(violations, flagged, index, offset)
                continue
            for start, end, written, rule, bare in flagged:
                start += offset
                end += offset
                if bare and allow and not prose(start, end):
                    continue
                violations.append(text_violation(written, index, rule, (start, end)))
        extra = split_attributes(text) + rst_targets(text)
        if extra:
            violations = self._merge_attributes(violations, extra, index, memo)
        if allow and self._commands:
            # A blocklist flags these hosts as mentions already.
            commands = command_targets(text)
            if commands:
                violations = self._add_commands(violations, commands, index, memo)
        return violations

    def _add_commands(
        self,
        violations: list[Violation],
        commands: list[Found],
        index: int,
        memo: AuditMemo,
    ) -> list[Violation]:
        """The hosts commands contact, where no link already reported covers them."""
        spans = Spans(violations)
        added = [
            text_violation(written, index, rule, (start, end))
            for start, end, written, rule, _ in self._refused("", commands, memo)
            if not spans.overlaps(start, end)
        ]
        if not added:
            return violations
        return sorted(violations + added, key=lambda violation: violation.span or (0, 0))

    def _refused(
        self,
        token: str,
        finds: list[Found],
        memo: AuditMemo,
    ) -> list[Flagged]:
        """(start, end, text, rule, is a bare host) of each finding the policy refuses.

        A blocklist judges every host named; an allowlist judges links and the bare
        hosts a linkifier renders as links (``evil.com``, not ``admin@evil.com``).
        """
        flagged: list[Flagged] = []
        link_start, link_end = -1, -1
        allow = self._allow
        verdicts = memo.readings
        last_readings: tuple[str, ...] | None = None
        verdict: Ruling = False
        for found in finds:
            if found.kind == "mention" and link_start <= found.start < link_end:
                continue  # the host of a link already reported, or (allowlist) in a link
            if allow and found.kind == "mention":
                if not self._bare_hosts:
                    continue  # a host-like word is no link: config.py, README.md, evil.com
                if in_destination(token, found.start):
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
            # A repeated path's mentions share one readings tuple: judged once, not hashed.
            if found.readings is not last_readings:
                last_readings = found.readings
                verdict = verdicts.get(last_readings, _UNSEEN)
                if verdict is _UNSEEN:
                    verdict = verdicts[last_readings] = self._ruling(found, memo.hosts)
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
        memo: AuditMemo,
    ) -> list[Violation]:
        """Attribute values with newlines replace what the token scan read of them."""
        spans = Spans(
            [text_violation("", index, None, (found.start, found.end)) for found in extra]
        )
        kept = [
            violation
            for violation in violations
            if violation.span is None or not spans.overlaps(*violation.span)
        ]
        for start, end, written, rule, _ in self._refused("", extra, memo):
            kept.append(text_violation(written, index, rule, (start, end)))
        kept.sort(key=lambda violation: violation.span or (0, 0))
        return kept

    def _plain_refused(self, token: str, memo: AuditMemo) -> list[Flagged] | None:
        """What _refused flags in a token of one plain link, read by its host alone.

        A blocklist also judges the hosts named before the link (its markdown text);
        after it, the full reading (None) when a host may be named there.
        """
        plain = plain_host_link(token)
        if plain is None:
            return None
        start, end, written, host = plain
        ruling = self._host_ruling(host, memo.hosts)
        if ruling is _FULL:
            return None
        if self._allow:
            return [] if ruling is False else [(start, end, written, ruling, False)]
        # A refused link's own path names no host of its own (its finding covers it);
        # a permitted link's path does, from its host's end.
        host_start = token.find(host, start)  # "http://" holds no dot: the host's place
        after = end if ruling is not False else host_start + len(host)
        if may_mention(token, after):
            return None
        flagged = self._named_before(token, start, host_start, memo) if start > 2 else []
        if ruling is not False:
            flagged = [*flagged, (start, end, written, ruling, False)]
        return flagged

    def _named_before(
        self, token: str, start: int, host_start: int, memo: AuditMemo
    ) -> list[Flagged]:
        """What _refused flags before a plain link at ``start``: hosts named in its
        markdown text or in the CJK text before it. Neither shape holds "/", "\\" or
        "@", so those mentions read nothing past the link's scheme: judged once per
        head (the token up to the link's host), which markdown links repeat."""
        head = token[:host_start]
        flagged = memo.heads.get(head)
        if flagged is None:
            before = mentions_before(token, start)
            flagged = memo.heads[head] = self._refused(token, before, memo) if before else []
        return flagged

    def _ruling(self, found: Found, hosts: dict[str, Any]) -> Ruling:
        """The violation's rule (None: not allowlisted), or False when permitted."""
        if (
            len(found.readings) == 1
            and not self._index.has_path_rules
            and not nested_urls(found.readings[0])
        ):
            # Host rules only: a plain URL's host decides, whatever follows it.
            written = plain_host(found.readings[0])
            if written is not None:
                ruling = self._host_ruling(written, hosts)
                if ruling is not _FULL:
                    return ruling  # type: ignore[no-any-return]
        if self._allow:
            # Every reading must be admitted: "https://evil.net'.python.org/" is a
            # python.org host to a browser and a link to evil.net to a renderer.
            written = found.readings[0]
            for reading in found.readings:
                if cut_at_letter(written, reading):
                    continue  # no renderer ends a host at "ü": "https://münchen.de/" is whole
                if locate(reading) is None:
                    continue  # relative links and mailto: reach no host
                if has_deleted(reading):
                    return None  # browsers delete it from the host, markdown-it keeps it
                if not self._index.judge(reading, True)[0]:
                    return None
            return False
        for reading in found.readings:
            # A redirect's target counts, however it is escaped ("?to=https%253A%252F...").
            permitted, rule = self._index.judge(reading, False)
            if not permitted:
                return rule
        return False

    def _host_ruling(self, written: str, hosts: dict[str, Any]) -> Any:
        """The ruling of a plain URL by its host as written, or _FULL when the URL must
        be read in full (its look-alikes). ``hosts``: the rulings this audit made."""
        ruling = hosts.get(written, _UNSEEN)
        if ruling is _UNSEEN:
            host = host_of_plain(written)
            rule = None if host is None else self._index.domain_rule(host)
            ruling = _FULL if host is None else False if is_permitted(rule, self._allow) else rule
            hosts[written] = ruling
        return ruling


_UNSEEN: Any = object()
_FULL: Any = object()
