"""Violations grouped by page: one page, one line of a report.

OpenAI appends ``?utm_source=openai`` to the URLs it cites, so one page shows up with
and without it; an answer often names a page as a source, a citation, a link and a
mention of its host. Reports list pages, and keep every URL as written underneath.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from agentloop_tools.web._domains._identity import page_key, without_tracking
from agentloop_tools.web._domains._url import locate
from agentloop_tools.web._policy._verdict import verdict

if TYPE_CHECKING:
    from agentloop_tools.web._policy._violation import Violation, Where


@dataclass(frozen=True, slots=True)
class PageViolation:
    """Every violation that concerns one page, as one line of a report.

    Attributes:
        url: the page, as first written without tracking parameters.
        rule: the block rule that matched, or None for "not on the allowlist".
        where: where the page was reached, distinct and in order of first appearance.
        message_index: the first message that reached it.
        occurrences: every violation, as ``DomainPolicy.audit`` reported it (raw URLs,
            spans).
    """

    url: str
    rule: str | None
    where: tuple[Where, ...]
    message_index: int
    occurrences: tuple[Violation, ...]

    @property
    def urls(self) -> tuple[str, ...]:
        """Every distinct URL or text as written, in order."""
        return tuple(dict.fromkeys(violation.url for violation in self.occurrences))

    def __str__(self) -> str:
        count = len(self.occurrences)
        times = f", {count} occurrences" if count > 1 else ""
        shown = f"{self.url} ({verdict(self.rule)}{times})"
        return f"message {self.message_index} {'/'.join(self.where)}: {shown}"


def per_page(violations: Iterable[Violation]) -> list[PageViolation]:
    """Group violations by page, in order of first appearance.

    A page reached with and without ``?utm_source=openai`` is one page. A bare mention
    of a host (``medium.com``, no path) joins a page on that host reached in the same
    message, the link it most likely names; otherwise it is a line of its own.
    """
    groups: dict[str, list[Violation]] = {}
    pending: list[tuple[str, Violation]] = []
    hosts: dict[tuple[int, str], str] = {}
    order: dict[int, int] = {}
    for position, violation in enumerate(violations):
        order[id(violation)] = position
        location = locate(violation.url)
        if location is not None and _host_only(violation):
            pending.append((location.host, violation))
            groups.setdefault(f"mention:{location.host}:{violation.message_index}", [])
            continue
        key = page_key(violation.url)
        groups.setdefault(key, []).append(violation)
        if location is not None:
            hosts.setdefault((violation.message_index, location.host), key)
    for host, violation in pending:
        own = f"mention:{host}:{violation.message_index}"
        groups[hosts.get((violation.message_index, host), own)].append(violation)
    return [
        _page(sorted(members, key=lambda violation: order[id(violation)]))
        for members in groups.values()
        if members
    ]


def _page(ordered: Sequence[Violation]) -> PageViolation:
    clean = [without_tracking(violation.url) for violation in ordered]
    shown = next((url for url, v in zip(clean, ordered, strict=True) if url == v.url), clean[0])
    where = tuple(dict.fromkeys(violation.where for violation in ordered))
    rule = next((violation.rule for violation in ordered if violation.rule), None)
    return PageViolation(shown, rule, where, ordered[0].message_index, tuple(ordered))


def _host_only(violation: Violation) -> bool:
    """A mention in text of a host alone: no scheme, path, query or fragment."""
    return violation.where == "text" and not any(char in violation.url for char in ":/?#\\")
