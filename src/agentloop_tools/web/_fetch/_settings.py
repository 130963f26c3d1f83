"""What every step of one ``web_fetch`` tool shares: its checked options and the page it makes.

Light on purpose (no transport, cache or extraction library): the tool's face
(``_tool.py``) imports it with ``agentloop_tools.web``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from agentloop_tools.web._fetch._codes import FetchRefusal, shown

if TYPE_CHECKING:
    import httpx

    from agentloop_tools.web._policy._policy import DomainPolicy

type Resolver = Callable[[str], Sequence[str]]
# What was requested after the URL asked for: ("redirect" | "robots", url), in order.
type Requested = list[tuple[Literal["redirect", "robots"], str]]

# web_fetch's and fetch()'s defaults, written once.
DEFAULT_MAX_CHARS = 100_000
DEFAULT_MAX_BYTES = 5_000_000
DEFAULT_TIMEOUT = 15.0
DEFAULT_CACHE_TTL = 900

# Pages without readable text that say they need JavaScript, in the words sites use.
_NEEDS_JS = ("enable javascript", "javascript is required", "javascript is disabled")


@dataclass(frozen=True, slots=True)
class FetchSettings:
    """One tool's options, checked (``build_fetcher``), as every step reads them.

    ``robots_policy`` is ``policy`` widened to hosts (see ``robots_policy``), for
    robots.txt; ``allow_private`` is ``allow_private_networks``.
    """

    policy: DomainPolicy | None
    robots_policy: DomainPolicy | None
    max_chars: int
    max_bytes: int
    timeout: float
    respect_robots: bool
    user_agent: str
    allow_private: bool
    client: httpx.Client | None
    resolver: Resolver | None
    name: str


@dataclass(frozen=True, slots=True)
class Page:
    """One fetched document, as cached: everything needed to serve any part of it."""

    chain: tuple[str, ...]  # the requested URL, each redirect hop, the final URL last
    title: str | None
    text: str
    notes: tuple[str, ...]
    robots: tuple[str, ...] = ()  # each robots.txt requested and its redirect hops


def needs_javascript(text: str) -> bool:
    """A short text that only asks for JavaScript is a page that did not render."""
    return len(text) < 400 and any(phrase in text.lower() for phrase in _NEEDS_JS)


def start_offset(start: object) -> int:
    """The model's ``start`` as a character offset, or an ``invalid-start`` refusal."""
    if start is None:
        return 0
    if isinstance(start, bool) or not isinstance(start, int) or start < 0:
        raise FetchRefusal(
            "invalid-start",
            f"start={shown(start)} is not a character offset",
            "pass null for the beginning, or the start value a truncated result gave",
        )
    return start
