"""What a search backend is: the base class and protocols ``web_search`` and ``web_fetch`` read.

Public through :mod:`agentloop_tools.web.backends`; here so the built-in backends, the
engine and the page reader share them without importing one another.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from agentloop_tools.web._search._options import SearchOptions
from agentloop_tools.web._search._render import SearchHit

if TYPE_CHECKING:
    # httpx is imported when a request is built, not with agentloop_tools.web.
    import httpx

    from agentloop_tools.web._policy._policy import DomainPolicy


@runtime_checkable
class SearchBackendLike(Protocol):
    """What :func:`web_search` accepts: ``name``, ``build_request`` and ``parse``.

    For typing, and for backends that do not subclass :class:`SearchBackend`: the
    tool reads the optional members of such an object when present, and takes the
    base class's defaults for the rest.
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


class SearchBackend:
    """The base class of a search backend: what :func:`web_search` needs from a search API.

    A subclass sets ``name`` and writes ``parse`` and one of ``build_request`` or
    ``build_search_request``; everything else has a default here:

    - ``requests_per_second: float | None`` [None]: the rate the API allows; the
      tool spaces calls (across threads) to stay under it.
    - ``classify(status, payload) -> str | None`` [None]: an error code that
      overrides the engine's reading of a failed response (for example
      ``"quota-exceeded"`` for a 429 whose body says the monthly quota is spent).
    - ``secrets: tuple[str, ...]`` [()]: strings (keys) that must never appear in
      what the tool returns or raises; they are replaced with ``***``.
    - ``max_query_chars: int | None`` [None]: longer queries are refused before sending.
    - ``setup_hint: str`` [""]: what an operator should check when the API rejects
      the credentials (a variable to set, a setting to enable).
    - ``build_search_request(query, count, policy, options) -> httpx.Request``
      [``build_request``]: the request with the call's :class:`SearchOptions` (the
      model's domain list, the tool's ``as_of``) to push down. Our code enforces
      both on the results whatever the backend does.
    - ``exact_as_of: bool`` [False]: the backend honours ``as_of`` exactly (a frozen
      crawl, a backdated corpus), so the tool may tell the model its results are
      bounded. ``SearchBackend.exact_as_of`` is False; a subclass sets it to True.

    An object that does not subclass it but has ``name``, ``build_request`` and
    ``parse`` (:class:`SearchBackendLike`) is accepted too.
    """

    __slots__ = ()

    name: str
    requests_per_second: float | None = None
    secrets: tuple[str, ...] = ()
    max_query_chars: int | None = None
    setup_hint: str = ""
    exact_as_of: bool = False

    def build_request(self, query: str, count: int, policy: DomainPolicy | None) -> httpx.Request:
        """The request for ``count`` (1..20) results, the policy pushed down if possible."""
        if type(self).build_search_request is SearchBackend.build_search_request:
            raise NotImplementedError(
                f"{type(self).__name__} defines neither build_request nor build_search_request"
            )
        return self.build_search_request(query, count, policy, SearchOptions())

    def build_search_request(
        self, query: str, count: int, policy: DomainPolicy | None, options: SearchOptions
    ) -> httpx.Request:
        """The request, with the call's narrowing and ``as_of`` to push down if possible."""
        return self.build_request(query, count, policy)

    def parse(self, payload: Any) -> list[SearchHit]:
        """The hits in a decoded JSON body. Tolerate odd shapes: skip, never raise."""
        raise NotImplementedError(f"{type(self).__name__} does not define parse")

    def classify(self, status: int, payload: Any) -> str | None:
        """An error code for a failed response, or None for the engine's own reading."""
        return None


# The optional members an adopted backend may have (data, then methods).
_DATA = frozenset(
    {"requests_per_second", "secrets", "max_query_chars", "setup_hint", "exact_as_of"}
)
_METHODS = frozenset({"classify", "build_search_request"})
_ABSENT = object()


class _Adopted(SearchBackend):
    """A backend that satisfies the protocol without subclassing: its members where it
    has them, read at each use as before, the base class's defaults for the rest."""

    __slots__ = ("inner",)

    def __init__(self, inner: SearchBackendLike) -> None:
        self.inner = inner

    def __getattribute__(self, member: str) -> Any:
        if member in _DATA or member in _METHODS:
            found = getattr(object.__getattribute__(self, "inner"), member, _ABSENT)
            if found is not _ABSENT and (member in _DATA or callable(found)):
                return found
        return object.__getattribute__(self, member)

    @property
    def name(self) -> str:  # type: ignore[override]  # read-only here, as on the inner one
        return self.inner.name

    def build_request(self, query: str, count: int, policy: DomainPolicy | None) -> httpx.Request:
        return self.inner.build_request(query, count, policy)

    def parse(self, payload: Any) -> list[SearchHit]:
        return self.inner.parse(payload)

    def __repr__(self) -> str:
        return repr(self.inner)


def adopted(backend: SearchBackendLike) -> SearchBackend:
    """``backend`` as a :class:`SearchBackend`: itself, or wrapped to take the defaults."""
    return backend if isinstance(backend, SearchBackend) else _Adopted(backend)


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
