"""``DomainPolicy.explain(url_or_text)``: why the policy permits or refuses something.

Built on the readings the policy itself makes (``_url.locate`` and the hosts it carries,
``path_readings``, ``nested_urls``, the text scanner) and never a verdict of its own:
the verdict of a URL and of each reading is the rule index's (``RuleIndex.judge`` and
``RuleIndex.verdict``, as ``policy.permits`` judges), that of a text is whether
``policy.audit`` finds anything in it, so an explanation cannot disagree with the gate.
The per-reading lines say where each host came from and which rule it meets.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Protocol

from agentloop_tools.web._domains._index import NESTING, looks_like_ip
from agentloop_tools.web._domains._url import (
    Location,
    as_url,
    locate,
    look_alikes,
    nested_urls,
    path_readings,
    rfc3986_hosts,
)

if TYPE_CHECKING:
    from collections.abc import Sequence

    from agentloop.transcript import Message

    from agentloop_tools.web._policy._view import PolicyView
    from agentloop_tools.web._policy._violation import Violation
    from agentloop_tools.web._text._finder import Found

# Bounds against hostile input: an explanation stays short whatever it is given.
MAX_ITEMS = 200  # links and mentions explained in one text
MAX_TEXT = 1_000_000  # characters of text read (the rest is not explained, and said so)


class Explained(Protocol):
    """What an explanation reads of the ``DomainPolicy`` itself, besides its view: its
    audit and its ``repr`` (a protocol so the policy can import this module without an
    import cycle)."""

    def audit(self, transcript: Sequence[Message], *, since: int = 0) -> list[Violation]: ...


@dataclass(frozen=True, slots=True)
class Reading:
    """One way a URL or host can be read, and what the policy makes of it.

    Attributes:
        name: which reading: ``"WHATWG"`` (a browser, and web_fetch), ``"RFC 3986"``
            (urllib, httpx, requests, when they read another host), ``"look-alike"``,
            ``"IPv4 in IPv6"``, ``"decoded path"``, ``"nested"`` (a URL carried inside
            another), ``"renderer"`` (another way a markdown renderer ends the link)
            or ``"as written"`` (a bare host name in text).
        text: what was read (the URL, or the nested URL).
        host: the host this reading reaches (None: it names no host).
        rule: the policy rule this reading meets (an allow rule that admits it, or a
            block rule that blocks it), or None.
        permitted: whether this reading alone would pass.
        note: why, in words.
        host_rule: the rule that matches this reading's host itself (None: none does).
            It differs from ``rule`` when another reading of the same request decides:
            ``https://evil.net\\@wikipedia.org/`` under a block of ``wikipedia.org``
            gives the WHATWG reading (host ``evil.net``) the rule ``wikipedia.org``,
            which matches only the RFC 3986 reading's host.
    """

    name: str
    text: str
    host: str | None
    rule: str | None
    permitted: bool
    note: str = ""
    host_rule: str | None = None

    def __str__(self) -> str:
        host = self.host if self.host is not None else "no host"
        if self.rule == self.host_rule or self.host is None:
            rule = f"rule {self.rule!r}" if self.rule else "no rule"
        else:
            # The request's rule is not this host's: say which rule this host meets,
            # never print a rule beside a host it does not match.
            rule = (
                f"rule {self.host_rule!r} matches this host"
                if self.host_rule
                else "no rule matches this host"
            )
        verdict = "permitted" if self.permitted else "refused"
        note = f" ({self.note})" if self.note else ""
        return f"{self.name}: {host}, {rule}, {verdict}{note}"


@dataclass(frozen=True, slots=True)
class Explanation:
    """Why a policy permits or refuses a URL or a text.

    Attributes:
        subject: the URL or text explained.
        permitted: the verdict: ``policy.permits(url)`` for a URL, no ``policy.audit``
            finding for a text.
        readings: each reading made, with its host and matched rule (for a text, those
            of every link and mention found, in text order).
        verdict: the verdict in the words every report uses (``not on the allowlist``,
            ``blocked by 'x'``), or ``"permitted"``.
        items: for a text, one explanation per link or mention found (with ``span``).
        span: for an item of a text, its ``(start, end)`` in the text.
        kind: ``"url"``, ``"mention"`` (a bare host name) or ``"text"``.
        policy: the policy's ``repr``.
        truncated: what was left unexplained, in words ("" when nothing).
    """

    subject: str
    permitted: bool
    readings: tuple[Reading, ...]
    verdict: str
    kind: str
    policy: str
    items: tuple[Explanation, ...] = ()
    span: tuple[int, int] | None = None
    truncated: str = ""
    rule: str | None = field(default=None)

    def __str__(self) -> str:
        from agentloop_tools._visible import visible

        if self.kind == "text":
            found = len(self.items)
            refused = [item for item in self.items if not item.permitted]
            head = (
                f"{self.policy} {'permits' if self.permitted else 'refuses'} this text: "
                f"{found} link(s) and mention(s) found, {len(refused)} refused."
            )
            body = " ".join(_sentence(item) for item in self.items)
            tail = f" {self.truncated}" if self.truncated else ""
            return visible(f"{head} {body}".strip() + tail)
        return visible(_sentence(self, policy=self.policy))


def _sentence(item: Explanation, policy: str | None = None) -> str:
    where = f" at {item.span[0]}-{item.span[1]}" if item.span else ""
    who = f"{policy} " if policy else ""
    verdict = "permits" if item.permitted else "refuses"
    readings = "; ".join(str(reading) for reading in item.readings) or "no reading names a host"
    because = "" if item.permitted else f" ({item.verdict})"
    label = "mention" if item.kind == "mention" else "URL"
    sentence = f"{who}{verdict} {label} {item.subject!r}{where}{because}. Readings: {readings}."
    return sentence[:1].upper() + sentence[1:]


def explain(policy: Explained, view: PolicyView, url_or_text: str) -> Explanation:
    """Explain a URL (one token that names a host) or a text (anything else)."""
    if not isinstance(url_or_text, str):
        raise TypeError(f"explain() takes a URL or a text (str), not {type(url_or_text).__name__}")
    candidate = url_or_text.strip()
    if candidate and not any(ch.isspace() for ch in candidate) and _one_url(candidate):
        return explain_url(policy, view, candidate)
    return explain_text(policy, view, url_or_text)


def _one_url(word: str) -> bool:
    """Whether one word is a URL: it reads as one (a scheme, "//", or a dotted host or IP:
    "the." is a word, "python.org" a host, as permits() reads both), and what the scanner
    finds in it starts where the word does ("[a](https://x.example/)", "<https://x.example/>"
    and "**x.example**" are texts: what a reader follows is inside them)."""
    location = locate(word)
    if location is None or not (
        "//" in word or "\\" in word or "." in location.host or location.is_ip
    ):
        return False
    found = _scan(word)
    return not found or found[0].start == 0


def explain_url(
    policy: Explained,
    view: PolicyView,
    url: str,
    *,
    kind: str = "url",
    span: tuple[int, int] | None = None,
) -> Explanation:
    from agentloop_tools.web._policy._verdict import verdict

    # The gate's own judgement: what permits(url) answers, with match(url)'s rule.
    permitted, rule = view.judge(url)
    readings = tuple(_readings(view, url, "WHATWG", 0))
    refused_by = None if permitted else _refusing_rule(view, readings)
    return Explanation(
        subject=url,
        permitted=permitted,
        readings=readings,
        verdict="permitted" if permitted else verdict(refused_by),
        kind=kind,
        policy=repr(policy),
        span=span,
        rule=rule if permitted else refused_by,
    )


def _refusing_rule(view: PolicyView, readings: tuple[Reading, ...]) -> str | None:
    if view.allow:
        return None  # an allowlist refuses as "not on the allowlist"
    for reading in readings:
        if not reading.permitted and reading.rule:
            return reading.rule
    return None


def _readings(view: PolicyView, url: str, name: str, depth: int) -> list[Reading]:
    allow, index = view.allow, view.index
    location = locate(url)
    if location is None:
        return [Reading(name, url, None, None, index.verdict(None, allow)[0], "names no host")]
    out: list[Reading] = []
    permitted, rule = index.verdict(location, allow)
    own = _own_rule(view, location)
    notes = _notes(view, location, rule, own)
    out.append(Reading(name, url, location.host, rule, permitted, notes, host_rule=own))
    # As locate() reads them: a scheme-relative or bare URL is an http one to RFC 3986 too.
    rfc = set(rfc3986_hosts(as_url(url) or url)) if ("@" in url or "\\" in url) else set()
    alikes = set(look_alikes(location.host))
    for other in location.also_served_as:
        if other in alikes:
            label, why = "look-alike", "the ASCII host this Unicode host passes for"
        elif other in rfc:
            label, why = "RFC 3986", "the host urllib, httpx and requests read"
        elif location.host.startswith("["):
            label, why = "IPv4 in IPv6", "the IPv4 address this IPv6 address reaches"
        else:
            label, why = "other reading", "another host the same request can reach"
        alone = Location(other, location.path, looks_like_ip(other))
        other_permitted, other_rule = index.verdict(alone, allow)
        if allow:
            other_permitted = False  # an allowlist admits only the browser's own host
            why += "; an allowlist admits only the browser's reading"
        out.append(
            Reading(label, url, other, other_rule, other_permitted, why, host_rule=other_rule)
        )
    plain, decoded = path_readings(location.path)
    if decoded != plain and index.has_path_rules:
        alone = Location(location.host, decoded, location.is_ip)
        decoded_permitted, decoded_rule = index.verdict(alone, allow)
        out.append(
            Reading(
                "decoded path",
                decoded,
                location.host,
                decoded_rule,
                decoded_permitted,
                "the path as servers that decode every escape read it",
                host_rule=decoded_rule,
            )
        )
    if depth < NESTING:
        for inner in nested_urls(url):
            out.extend(_readings(view, inner, "nested", depth + 1))
    return out


def _own_rule(view: PolicyView, location: Location) -> str | None:
    """The rule this reading's host meets alone (no other reading of the request)."""
    alone = Location(location.host, location.path, location.is_ip)
    return view.index.verdict(alone, view.allow)[1]


def explain_text(policy: Explained, view: PolicyView, text: str) -> Explanation:
    """Every link and host name the scanner finds, each judged as the audit judges it."""
    from agentloop.transcript import Message, TextPart

    truncated = ""
    # The verdict is the whole text's audit; only the explaining stops at MAX_TEXT.
    violations = policy.audit([Message(role="assistant", content=(TextPart(text=text),))])
    if len(text) > MAX_TEXT:
        truncated = (
            f"Only the first {MAX_TEXT:,} characters were explained; the verdict is the "
            "whole text's."
        )
        text = text[:MAX_TEXT]
    flagged = {
        violation.span: violation
        for violation in violations
        if violation.span and violation.span[1] <= len(text)
    }
    found = _scan(text)
    items, covered, cut = _explain_found(policy, view, found, flagged)
    if cut:
        truncated = (
            f"{truncated} Only the first {MAX_ITEMS} of {len(found)} links and mentions "
            "were explained."
        ).strip()
    items.extend(_explain_decoded(policy, view, flagged, covered, items))
    items.sort(key=lambda item: item.span or (0, 0))
    return Explanation(
        subject=text,
        permitted=not violations,
        readings=tuple(reading for item in items for reading in item.readings),
        verdict="permitted" if not violations else violations[0].verdict,
        kind="text",
        policy=repr(policy),
        items=tuple(items),
        truncated=truncated,
    )


def _explain_found(
    policy: Explained,
    view: PolicyView,
    found: Sequence[Found],
    flagged: dict[tuple[int, int], Violation],
) -> tuple[list[Explanation], set[tuple[int, int]], bool]:
    """The scanner's links and mentions explained; whether the list was cut at MAX_ITEMS."""
    from agentloop_tools.web._policy._verdict import verdict

    items: list[Explanation] = []
    covered: set[tuple[int, int]] = set()
    link_end = -1
    for item in found:
        if item.kind == "mention" and item.start < link_end:
            continue  # the host of a link already explained
        if item.kind == "url":
            link_end = max(link_end, item.end)
        if len(items) >= MAX_ITEMS:
            return items, covered, True
        span = (item.start, item.end)
        hit = _overlapping(flagged, span)
        readings = _found_readings(view, item, hit is None)
        if hit is not None:
            covered.add(hit.span or span)
        items.append(
            Explanation(
                subject=item.text,
                permitted=hit is None,
                readings=tuple(readings),
                verdict="permitted" if hit is None else verdict(hit.rule),
                kind=item.kind,
                policy=repr(policy),
                span=span,
                rule=hit.rule if hit is not None else None,
            )
        )
    return items, covered, False


def _found_readings(view: PolicyView, item: Found, unflagged: bool) -> list[Reading]:
    readings: list[Reading] = []
    for number, reading in enumerate(item.readings):
        first = "as written" if item.kind == "mention" else "WHATWG"
        readings.extend(_readings(view, reading, first if number == 0 else "renderer", 0))
    if unflagged and item.kind == "mention" and view.allow:
        note = (
            "a bare host name that is no link: an allowlist judges links and the hosts a "
            "linkifier renders (bare_hosts=True judges every one)"
        )
        readings = [
            replace(r, permitted=True, note=note) if not r.permitted else r for r in readings
        ]
    return readings


def _explain_decoded(
    policy: Explained,
    view: PolicyView,
    flagged: dict[tuple[int, int], Violation],
    covered: set[tuple[int, int]],
    items: list[Explanation],
) -> list[Explanation]:
    """What only the decoded text or a command showed (an entity-escaped link, ``curl``)."""
    extra: list[Explanation] = []
    for span, violation in sorted(flagged.items()):
        shown = [*items, *extra]
        if span in covered or any(_overlaps(span, other.span) for other in shown if other.span):
            continue
        if len(shown) >= MAX_ITEMS:
            break
        extra.append(
            Explanation(
                subject=violation.url,
                permitted=False,
                readings=tuple(_readings(view, _decoded(violation.url), "decoded", 0)),
                verdict=violation.verdict,
                kind="url",
                policy=repr(policy),
                span=span,
                rule=violation.rule,
            )
        )
    return extra


def _notes(view: PolicyView, location: Location, rule: str | None, own: str | None) -> str:
    """Why the browser's reading got its verdict, in words (``own``: the rule its host
    meets alone)."""
    allow = view.allow
    notes = []
    if not location.valid:
        notes.append("a browser refuses this URL; the host is a best-effort reading")
    if not location.agreed:
        notes.append(
            "other clients read another host: an allowlist admits neither"
            if allow
            else "other clients read another host: each is judged"
        )
    if allow and rule is None and location.valid and location.agreed:
        notes.append(
            "an allow rule names this host, but not this path"
            if _names_host(view, location.host)
            else "no allow rule names this host"
        )
    if not allow and rule is not None and own is None:
        other = next(
            (
                host
                for host in location.also_served_as
                if view.index.verdict(Location(host, location.path, looks_like_ip(host)), allow)[1]
                == rule
            ),
            None,
        )
        matched = f"{other} matches rule {rule!r}" if other else f"blocked by {rule!r}"
        notes.append(f"another reading of the same request is blocked: {matched}")
    return "; ".join(notes)


def _names_host(view: PolicyView, host: str) -> bool:
    """Whether a path rule of the allowlist is for ``host`` (or a domain above it)."""
    return any(
        host == ruled or host.endswith("." + ruled) for ruled in view.index.path_rule_hosts()
    )


def _decoded(written: str) -> str:
    """The link a reader follows for one the audit found only in the decoded text: its
    references decoded as a browser decodes an attribute, else as CommonMark does."""
    from agentloop_tools.web._text._markup import decode

    decoded = decode(written, commonmark=False) or decode(written, commonmark=True)
    return decoded.text if decoded is not None else written


def _overlaps(one: tuple[int, int], other: tuple[int, int]) -> bool:
    return one[0] < other[1] and other[0] < one[1]


def _overlapping(
    flagged: dict[tuple[int, int], Violation], span: tuple[int, int]
) -> Violation | None:
    for other, violation in flagged.items():
        if _overlaps(other, span):
            return violation
    return None


def _scan(text: str) -> list[Found]:
    """Every link and bare host name in ``text``, in text order, as the scanner reads them
    (HTML attribute values read whole, instead of the tokens that overlap them)."""
    from agentloop_tools.web._text._docformats import split_attributes
    from agentloop_tools.web._text._finder import read_token, tokens

    found: list[Found] = []
    read: dict[str, list[Found]] = {}
    for offset, token in tokens(text):
        in_token = read.get(token)
        if in_token is None:
            in_token = read[token] = read_token(token, mentions=True)
        found.extend(
            item._replace(start=item.start + offset, end=item.end + offset) for item in in_token
        )
    extra = split_attributes(text)
    if not extra:
        return found
    kept = [
        item
        for item in found
        if not any(_overlaps((item.start, item.end), (e.start, e.end)) for e in extra)
    ]
    return sorted(kept + extra, key=lambda item: (item.start, item.kind != "url"))
