"""What one text audit has read and judged already, shared by the texts it reads."""

from __future__ import annotations

from typing import Any, Literal

# A finding's rule (None: not on the allowlist), or False when the policy permits it.
type Ruling = str | Literal[False] | None
type Flagged = tuple[int, int, str, str | None, bool]


class AuditMemo:
    """What one audit has read and judged already: answers repeat links and hosts.

    Each entry depends on what it is keyed by alone (under one policy), so the texts
    an audit reads (the answer, its decoded readings, the seams between its parts,
    the other messages) share one memo. It lives as long as the audit.
    """

    __slots__ = ("heads", "hosts", "readings", "tokens")

    def __init__(self) -> None:
        self.tokens: dict[str, list[Flagged]] = {}  # token -> what it flags
        self.readings: dict[tuple[str, ...], Ruling] = {}  # a finding's readings -> ruling
        # A plain URL's host as written -> ruling, or _FULL: its look-alikes must be read.
        self.hosts: dict[str, Any] = {}
        # A plain link token up to its host -> what a blocklist flags before the link.
        self.heads: dict[str, list[Flagged]] = {}
