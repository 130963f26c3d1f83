"""Web faults: a page or a search that fails on purpose, answered before any request is sent.

A test names the pages and queries that fail (``@pytest.mark.web_faults``, or
``ScriptedPages(faults=...)`` and ``ScriptedSearch(faults=...)``); ``web_fetch`` and
``web_search`` ask here before they send anything. A faulted call reaches no
transport, no cassette recorder and no script, and makes no retry or wait; the tool
then answers as it answers the real failure, so the tool result is the same when
recording and on replay. Hosted searches run at the provider and are never asked.

Pure standard library and the policy's rule parser: no pytest, no httpx.
"""

from __future__ import annotations

import re
import threading
import weakref
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Literal, cast

from ada_url import parse_url

from agentloop_tools.web._domains._url import MAX_URL_LENGTH
from agentloop_tools.web._policy._policy import DomainPolicy

type FaultKind = Literal["status", "timeout", "empty", "paywall", "redirect"]

FAULT_WORDS = ("timeout", "empty", "paywall")
REDIRECT_PREFIX = "redirect:"
MIN_STATUS, MAX_STATUS = 400, 599
# A test names a handful; more is a generated mapping gone wrong.
MAX_FAULTS = 100
MAX_PATTERN_CHARS = 500
# What met faults a test keeps for its report (targets cut to this many characters).
MAX_MET = 200
_TARGET_CHARS = 200
_STATUSES = f"an HTTP error status ({MIN_STATUS}-{MAX_STATUS}, e.g. 403, 404, 429, 503)"
ALLOWED = f"{_STATUSES}, 'timeout', 'empty', 'paywall' or, for pages only, 'redirect:<http(s) URL>'"
SEARCH_ALLOWED = f"{_STATUSES}, 'timeout', 'empty' or 'paywall'"
# The page a "paywall" fault serves (plain text, so every extractor reads it alike).
PAYWALL_TEXT = (
    "Subscribe to read\n\n"
    "This article is for subscribers only. Subscribe to read the full story, "
    "or sign in if you already have an account."
)
# What a "paywall" search answers: no results, and this in their place.
SEARCH_PAYWALL_TEXT = (
    "Subscribe to read: these results are for subscribers only. Subscribe to see them, "
    "or sign in if you already have an account."
)
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")


@dataclass(frozen=True, slots=True)
class Fault:
    """One failure a page or a search meets: ``str()`` gives it as the marker writes it."""

    kind: FaultKind
    status: int | None = None
    location: str | None = None

    def __str__(self) -> str:
        if self.kind == "status":
            return str(self.status)
        if self.kind == "redirect":
            return f"{REDIRECT_PREFIX}{self.location}"
        return self.kind


@dataclass(frozen=True, slots=True)
class WebFaults:
    """The faults of one test (or one scripted client), checked: pages first match wins."""

    pages: tuple[tuple[str, DomainPolicy, Fault], ...] = ()
    searches: tuple[tuple[str | re.Pattern[str], Fault], ...] = ()

    def page_fault(self, url: str) -> Fault | None:
        """The fault of the first page pattern (the policy's rule syntax) ``url`` matches."""
        for _, rule, fault in self.pages:
            if rule.permits(url):
                return fault
        return None

    def search_fault(self, query: str) -> Fault | None:
        """The fault of the first query pattern found in ``query`` (a substring, any case)."""
        folded = query.casefold()
        for pattern, fault in self.searches:
            if isinstance(pattern, str):
                if pattern.casefold() in folded:
                    return fault
            elif pattern.search(query):
                return fault
        return None

    def then(self, farther: WebFaults) -> WebFaults:
        """These faults before ``farther``'s (a closer marker's pattern wins)."""
        return WebFaults(self.pages + farther.pages, self.searches + farther.searches)

    def shown(self) -> dict[str, dict[str, str]]:
        """The faults as the marker writes them, for reports."""
        return {
            "pages": {text: str(fault) for text, _, fault in self.pages},
            "searches": {_pattern_text(p): str(fault) for p, fault in self.searches},
        }


def web_faults(pages: object = None, searches: object = None, *, where: str) -> WebFaults:
    """The faults a test wrote, checked; ``where`` names them in every error.

    Raises:
        TypeError: a mapping or pattern of the wrong type.
        ValueError: a pattern or FAULT that cannot be read, each naming what is accepted.
    """
    page_entries = _entries(pages, f"{where} pages=")
    search_entries = _entries(searches, f"{where} searches=")
    checked_pages = []
    for pattern, value in page_entries:
        if not isinstance(pattern, str):
            raise TypeError(
                f"{where} pages=: a page pattern is a rule such as 'docs.python.org/3/*', "
                f"got {type(pattern).__name__} {_shown(pattern)}."
            )
        try:
            rule = DomainPolicy.allow([pattern])
        except ValueError as error:
            raise ValueError(f"{where} pages= pattern {_shown(pattern)}: {error}") from None
        fault = parse_fault(value, pages=True, where=f"{where} pages[{_shown(pattern)}]")
        checked_pages.append((pattern, rule, fault))
    checked_searches: list[tuple[str | re.Pattern[str], Fault]] = []
    for pattern, value in search_entries:
        _check_query_pattern(pattern, where)
        fault = parse_fault(value, pages=False, where=f"{where} searches[{_shown(pattern)}]")
        checked_searches.append((cast("str | re.Pattern[str]", pattern), fault))
    return WebFaults(tuple(checked_pages), tuple(checked_searches))


def parse_fault(value: object, *, pages: bool, where: str) -> Fault:
    """One FAULT value (``403``, ``"timeout"``, ``"redirect:https://..."``), checked."""
    allowed = ALLOWED if pages else SEARCH_ALLOWED
    if isinstance(value, str) and value.strip().isdigit() and len(value.strip()) == 3:
        value = int(value.strip())
    if isinstance(value, int) and not isinstance(value, bool):
        if MIN_STATUS <= value <= MAX_STATUS:
            return Fault("status", status=value)
        raise ValueError(f"{where}: {value} is not an HTTP error status; use {allowed}.")
    if isinstance(value, str) and value in FAULT_WORDS:
        return Fault(value)  # type: ignore[arg-type]
    if isinstance(value, str) and value.startswith(REDIRECT_PREFIX):
        if not pages:
            raise ValueError(
                f"{where}: a search has no redirect to follow; 'redirect:<url>' is for "
                f"pages only. Use {SEARCH_ALLOWED}."
            )
        return Fault("redirect", location=_redirect_target(value[len(REDIRECT_PREFIX) :], where))
    raise ValueError(f"{where}: {_shown(value)} is not a fault; use {allowed}.")


def _redirect_target(target: str, where: str) -> str:
    problem = None
    if not target or len(target) > MAX_URL_LENGTH or _CONTROL.search(target) or " " in target:
        problem = f"one absolute http(s) URL of at most {MAX_URL_LENGTH} characters"
    else:
        try:
            parts = parse_url(target, attributes=("protocol", "hostname"))
        except ValueError:
            parts = {}
        if parts.get("protocol") not in ("http:", "https:") or not parts.get("hostname"):
            problem = "an absolute http(s) URL"
    if problem is not None:
        raise ValueError(
            f"{where}: redirect:{_shown(target)} needs {problem}, "
            "e.g. 'redirect:https://example.com/moved'."
        )
    return target


def _entries(value: object, where: str) -> list[tuple[object, object]]:
    if value is None:
        return []
    if not isinstance(value, Mapping):
        raise TypeError(
            f"{where} takes a mapping of pattern to FAULT, e.g. {{'docs.python.org/3/*': 403}}, "
            f"got {type(value).__name__}."
        )
    if len(value) > MAX_FAULTS:
        raise ValueError(f"{where} holds {len(value)} patterns; at most {MAX_FAULTS} are read.")
    return list(value.items())


def _check_query_pattern(pattern: object, where: str) -> None:
    if isinstance(pattern, re.Pattern):
        if not isinstance(pattern.pattern, str):
            raise TypeError(f"{where} searches=: a compiled pattern must be of str, not bytes.")
        return
    if not isinstance(pattern, str):
        raise TypeError(
            f"{where} searches=: a query pattern is a substring or a compiled re pattern, "
            f"got {type(pattern).__name__} {_shown(pattern)}."
        )
    if not pattern.strip() or len(pattern) > MAX_PATTERN_CHARS or _CONTROL.search(pattern):
        raise ValueError(
            f"{where} searches=: the query pattern {_shown(pattern)} must be words of the "
            f"query (1-{MAX_PATTERN_CHARS} printable characters), or a compiled re pattern."
        )


def _pattern_text(pattern: str | re.Pattern[str]) -> str:
    return pattern if isinstance(pattern, str) else f"re:{pattern.pattern}"


def _shown(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 120 else text[:116] + "...'"


# Where the tools look -------------------------------------------------------------


@dataclass(slots=True)
class _Injected:
    faults: WebFaults
    met: list[dict[str, str]] = field(default_factory=list)


# The test's faults are process-wide while it runs: agentloop runs tool calls in
# threads of its own, which a context variable would not reach.
_lock = threading.Lock()
_active: list[_Injected] = []
_by_client: weakref.WeakKeyDictionary[object, WebFaults] = weakref.WeakKeyDictionary()


@contextmanager
def injected(faults: WebFaults) -> Iterator[list[dict[str, str]]]:
    """Every client-side tool meets ``faults`` inside the block; yields the faults met."""
    entry = _Injected(faults)
    with _lock:
        _active.append(entry)
    try:
        yield entry.met
    finally:
        with _lock:
            _active.remove(entry)


def attach(client: object, faults: WebFaults) -> None:
    """The tools meet ``faults`` on requests sent through ``client`` (a scripted client)."""
    if faults.pages or faults.searches:
        _by_client[client] = faults


def any_for(client: object) -> bool:
    """Whether any fault could apply to a request through ``client`` (None: the tool's own)."""
    return bool(_active) or (client is not None and client in _by_client)


def page_fault(url: str, client: object, tool: str = "web_fetch") -> Fault | None:
    """The fault a page request meets: the running test's first, then ``client``'s."""
    return _find(lambda faults: faults.page_fault(url), url, client, tool)


def search_fault(query: str, client: object, tool: str = "web_search") -> Fault | None:
    """The fault a search meets: the running test's first, then ``client``'s."""
    return _find(lambda faults: faults.search_fault(query), query, client, tool)


def _find(
    find: Callable[[WebFaults], Fault | None], target: str, client: object, tool: str
) -> Fault | None:
    if not _active and (client is None or client not in _by_client):
        return None  # the common case: nothing injected, nothing looked up
    with _lock:
        active = list(_active)
    for entry in reversed(active):
        fault = find(entry.faults)
        if fault is not None:
            _note(entry, tool, target, fault)
            return fault
    attached = _by_client.get(client) if client is not None else None
    fault = find(attached) if attached is not None else None
    if fault is not None and active:
        _note(active[-1], tool, target, fault)
    return fault


def _note(entry: _Injected, tool: str, target: str, fault: Fault) -> None:
    if len(entry.met) < MAX_MET:
        shown = target if len(target) <= _TARGET_CHARS else target[: _TARGET_CHARS - 3] + "..."
        entry.met.append({"tool": tool, "target": shown, "fault": str(fault)})
