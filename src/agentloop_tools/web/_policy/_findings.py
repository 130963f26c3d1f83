"""The text audit's readings of its findings: overlaps, decoded forms, spellings."""

from __future__ import annotations

import re
from bisect import bisect_left
from collections.abc import Callable

from agentloop_tools.web._domains._url import locate
from agentloop_tools.web._policy._seams import WINDOW
from agentloop_tools.web._policy._violation import Violation, moved
from agentloop_tools.web._text._literals import Replacement
from agentloop_tools.web._text._markup import Decoded

# What comes just before a URL that only a browser or a markdown renderer reads: an
# href or src attribute value, or a markdown link destination.
_DESTINATION_BEFORE = re.compile(r"""(?:\b(?:href|src)\s*=\s*["']?|\]\(\s*<?)$""", re.IGNORECASE)


class Spans:
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


def cut_at_letter(written: str, reading: str) -> bool:
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


def in_destination(token: str, position: int) -> bool:
    """Whether ``position`` is inside a markdown link destination that starts in ``token``.

    A bare host there is a relative path ("[up](../README.md)"), never a host.
    """
    opened = token.rfind("](", max(position - WINDOW, 0), position)  # bounded: linear
    return opened != -1 and ")" not in token[opened + 2 : position]


def mapped(prose: Callable[[int, int], bool], reading: Decoded) -> Callable[[int, int], bool]:
    """``prose`` for spans of the decoded text."""
    return lambda start, end: prose(*reading.span(start, end))


def unless_admitted_as_decoded(
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
        kind: (reading, Spans([moved(v, v.url, reading.span(*v.span or (0, 0))) for v in extra]))
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


def widest_first(candidate: tuple[Violation, int]) -> tuple[int, int, int]:
    violation, rank = candidate
    start, end = violation.span or (0, 0)
    return start, -end, abs(rank)


def replaced(violation: Violation, readings: list[tuple[Replacement, Spans]]) -> bool:
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


def respelled(violation: Violation, text: str) -> Violation:
    """The violation with its URL as written (layout put spaces where pipes were)."""
    if violation.span is None:
        return violation
    start, end = violation.span
    written = text[start:end]
    return violation if written == violation.url else moved(violation, written, violation.span)
