"""What a search backend is: the protocols ``web_search`` and ``web_fetch(via=...)`` read.

Public through :mod:`agentloop_tools.web.backends`; here so the built-in backends, the
engine and the page reader share them without importing one another.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from agentloop_tools.web._search._render import SearchHit

if TYPE_CHECKING:
    # httpx is imported when a request is built, not with agentloop_tools.web.
    import httpx

    from agentloop_tools.web._policy._policy import DomainPolicy


@runtime_checkable
class SearchBackend(Protocol):
    """What :func:`web_search` needs from a search API.

    Required: ``name``, ``build_request`` and ``parse``. Optional attributes the
    engine reads when present (defaults in brackets):

    - ``requests_per_second: float | None`` [None]: the rate the API allows; the
      tool spaces calls (across threads) to stay under it.
    - ``classify(status: int, payload: object) -> str | None`` [None]: an error code
      that overrides the engine's reading of a failed response (for example
      ``"quota-exceeded"`` for a 429 whose body says the monthly quota is spent).
    - ``secrets: tuple[str, ...]`` [()]: strings (keys) that must never appear in
      what the tool returns or raises; they are replaced with ``***``.
    - ``max_query_chars: int | None`` [None]: longer queries are refused before sending.
    - ``setup_hint: str`` [""]: what an operator should check when the API rejects
      the credentials (a variable to set, a setting to enable).
    - ``build_search_request(query, count, policy, options) -> httpx.Request``
      [None]: used instead of ``build_request`` when present, with the call's
      :class:`SearchOptions` (the model's domain list, the tool's ``as_of``) to push
      down. Our code enforces both on the results whatever the backend does.
    - ``exact_as_of: bool`` [False]: the backend honours ``as_of`` exactly (a frozen
      crawl, a backdated corpus), so the tool may tell the model its results are
      bounded. ``SearchBackend.exact_as_of`` is False; a subclass sets it to True.
    """

    @property
    def name(self) -> str:
        """A short name for messages, e.g. ``"brave"``."""
        ...

    def build_request(self, query: str, count: int, policy: DomainPolicy | None) -> httpx.Request:
        """The request for ``count`` (1..20) results, the policy pushed down if possible."""
        ...

    def parse(self, payload: Any) -> list[SearchHit]:
        """The hits in a decoded JSON body. Tolerate odd shapes: skip, never raise."""
        ...


# Not a protocol member (a backend written before it must still match): a default
# that subclasses inherit and the engine reads with getattr(..., False).
setattr(SearchBackend, "exact_as_of", False)  # noqa: B010


@dataclass(frozen=True, slots=True)
class ApiPage:
    """What a page API gave back for one URL.

    Attributes:
        url: the URL the provider says it read (its final URL), or None if it named none.
        title: the page's title, if the API gives one.
        text: the page's text (Tavily's ``raw_content``, Exa's ``text``).
    """

    url: str | None
    title: str | None
    text: str


@runtime_checkable
class PageApi(Protocol):
    """A backend that can read pages: the built-in ``tavily`` and ``exa`` ones, or yours."""

    @property
    def name(self) -> str: ...

    def build_page_request(self, url: str, max_chars: int) -> httpx.Request:
        """The request that reads ``url`` (at most ``max_chars`` characters of text)."""
        ...

    def parse_page(self, payload: Any, url: str) -> ApiPage | str:
        """The page for ``url`` in a decoded JSON body, or why the provider failed it."""
        ...
