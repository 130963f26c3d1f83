"""Search backends for :func:`agentloop_tools.web.web_search`: Brave, Tavily, Exa, SearXNG, yours.

A backend knows one search API: how to ask (an ``httpx.Request``), how to read the
answer (a list of :class:`SearchHit`), and which failures are final. The engine
does everything else the same way for every backend: validation, retries, spacing
of calls, the domain policy, rendering and errors.

Nothing here reads the environment: :func:`backend_from_env` reads the mapping you
pass it (the process environment, or a dict).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, Protocol, runtime_checkable
from urllib.parse import urlencode

from agentloop_tools.web._fetch._via import ApiPage
from agentloop_tools.web._search._options import SearchOptions, allowed_hosts, blocked_hosts
from agentloop_tools.web._search._render import SearchHit

if TYPE_CHECKING:
    # httpx is imported when a request is built, not with agentloop_tools.web.
    import httpx

    from agentloop_tools.web._policy._policy import DomainPolicy

__all__ = [
    "BACKEND_VARIABLE",
    "ApiPage",
    "SearchBackend",
    "SearchOptions",
    "backend_from_env",
    "brave",
    "exa",
    "register_backend",
    "registered_backends",
    "searxng",
    "tavily",
]

BACKEND_VARIABLE = "WEB_SEARCH_BACKEND"
# The start of the absolute range Brave's freshness gets for as_of.
BRAVE_EARLIEST = "1970-01-01"

type SafeSearch = Literal["off", "moderate", "strict"]
type TavilyDepth = Literal["basic", "advanced", "fast", "ultra-fast"]


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


# --- built-in backends -------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class BraveBackend:
    """Brave Search API (``brave(...)`` builds one). The key travels in ``X-Subscription-Token``."""

    api_key: str = field(repr=False)
    country: str | None = None
    safesearch: SafeSearch = "moderate"
    requests_per_second: float | None = 1.0
    endpoint: str = "https://api.search.brave.com/res/v1/web/search"
    name: str = "brave"
    max_query_chars: int | None = 400
    setup_hint: str = "check the Brave Search API key (BRAVE_API_KEY) and its plan"

    @property
    def secrets(self) -> tuple[str, ...]:
        return (self.api_key,)

    def build_request(self, query: str, count: int, policy: DomainPolicy | None) -> httpx.Request:
        return self.build_search_request(query, count, policy, SearchOptions())

    def build_search_request(
        self, query: str, count: int, policy: DomainPolicy | None, options: SearchOptions
    ) -> httpx.Request:
        import httpx

        params: dict[str, str | int] = {"q": query, "count": count, "safesearch": self.safesearch}
        if self.country is not None:
            params["country"] = self.country
        if options.as_of is not None:
            # An absolute range (Brave's freshness takes YYYY-MM-DDtoYYYY-MM-DD).
            params["freshness"] = f"{BRAVE_EARLIEST}to{options.as_of.isoformat()}"
        headers = {"Accept": "application/json", "X-Subscription-Token": self.api_key}
        # One URL parse instead of two (httpx re-parses a URL to merge params).
        return httpx.Request("GET", f"{self.endpoint}?{urlencode(params)}", headers=headers)

    def parse(self, payload: Any) -> list[SearchHit]:
        web = _get(payload, "web")
        return [
            SearchHit(
                title=_str(item.get("title")),
                url=_str(item.get("url")),
                snippet=_str(item.get("description")),
                published=_opt(item.get("page_age")) or _opt(item.get("age")),
            )
            for item in _items(_get(web, "results"))
        ]

    def classify(self, status: int, payload: Any) -> str | None:
        error = _get(payload, "error")
        code = _get(error, "code")
        if code == "SUBSCRIPTION_TOKEN_INVALID":
            return "not-configured"
        if status == 429:
            meta = _get(error, "meta")
            limit, used = _get(meta, "quota_limit"), _get(meta, "quota_current")
            if _number(limit) and _number(used) and limit > 0 and used >= limit:
                return "quota-exceeded"
            detail = _get(error, "detail")
            if code == "QUOTA_LIMITED" or (isinstance(detail, str) and "quota" in detail.lower()):
                return "quota-exceeded"
        return None


@dataclass(frozen=True, slots=True)
class TavilyBackend:
    """Tavily Search API (``tavily(...)`` builds one). The key travels as a bearer token."""

    api_key: str = field(repr=False)
    depth: TavilyDepth = "basic"
    requests_per_second: float | None = None
    endpoint: str = "https://api.tavily.com/search"
    # web_fetch(via=tavily(key)) reads pages here.
    extract_endpoint: str = "https://api.tavily.com/extract"
    name: str = "tavily"
    max_query_chars: int | None = None
    setup_hint: str = "check the Tavily API key (TAVILY_API_KEY) and its plan"
    # Tavily returns nothing for long lists (reports at 100+ domains): stay below.
    max_domains: int = 99

    @property
    def secrets(self) -> tuple[str, ...]:
        return (self.api_key,)

    def build_request(self, query: str, count: int, policy: DomainPolicy | None) -> httpx.Request:
        return self.build_search_request(query, count, policy, SearchOptions())

    def build_search_request(
        self, query: str, count: int, policy: DomainPolicy | None, options: SearchOptions
    ) -> httpx.Request:
        body: dict[str, Any] = {"query": query, "search_depth": self.depth, "max_results": count}
        body |= _push_down(policy, options, "include_domains", "exclude_domains", self.max_domains)
        if options.as_of is not None:
            body["end_date"] = options.as_of.isoformat()
        return _post_json(self.endpoint, body, {"Authorization": f"Bearer {self.api_key}"})

    def parse(self, payload: Any) -> list[SearchHit]:
        return [
            SearchHit(
                title=_str(item.get("title")),
                url=_str(item.get("url")),
                snippet=_str(item.get("content")),
                published=_opt(item.get("published_date")),
            )
            for item in _items(_get(payload, "results"))
        ]

    def classify(self, status: int, payload: Any) -> str | None:
        # 432: the plan's credits are used up; 433: the pay-as-you-go limit is reached.
        return "quota-exceeded" if status in (432, 433) else None


@dataclass(frozen=True, slots=True)
class ExaBackend:
    """Exa search API (``exa(...)`` builds one). The key travels in ``x-api-key``."""

    api_key: str = field(repr=False)
    requests_per_second: float | None = 5.0
    endpoint: str = "https://api.exa.ai/search"
    # web_fetch(via=exa(key)) reads pages here.
    contents_endpoint: str = "https://api.exa.ai/contents"
    name: str = "exa"
    max_query_chars: int | None = None
    setup_hint: str = "check the Exa API key (EXA_API_KEY) and its credits"
    max_domains: int = 100

    @property
    def secrets(self) -> tuple[str, ...]:
        return (self.api_key,)

    def build_request(self, query: str, count: int, policy: DomainPolicy | None) -> httpx.Request:
        return self.build_search_request(query, count, policy, SearchOptions())

    def build_search_request(
        self, query: str, count: int, policy: DomainPolicy | None, options: SearchOptions
    ) -> httpx.Request:
        body: dict[str, Any] = {
            "query": query,
            "type": "auto",
            "numResults": count,
            "contents": {"highlights": {"numSentences": 3, "highlightsPerUrl": 1}},
        }
        body |= _push_down(policy, options, "includeDomains", "excludeDomains", self.max_domains)
        if options.as_of is not None:
            body["endPublishedDate"] = options.as_of.isoformat()
        return _post_json(self.endpoint, body, {"x-api-key": self.api_key})

    def parse(self, payload: Any) -> list[SearchHit]:
        hits = []
        for item in _items(_get(payload, "results")):
            highlights = item.get("highlights")
            snippet = (
                highlights[0]
                if isinstance(highlights, list) and highlights and isinstance(highlights[0], str)
                else _str(item.get("text")) or _str(item.get("summary"))
            )
            hits.append(
                SearchHit(
                    title=_str(item.get("title")),
                    url=_str(item.get("url")),
                    snippet=snippet,
                    published=_opt(item.get("publishedDate")),
                )
            )
        return hits

    def classify(self, status: int, payload: Any) -> str | None:
        return None


@dataclass(frozen=True, slots=True)
class SearxngBackend:
    """A SearXNG instance (``searxng(...)`` builds one); its JSON format must be enabled."""

    base_url: str
    requests_per_second: float | None = None
    name: str = "searxng"
    max_query_chars: int | None = None
    setup_hint: str = (
        "check SEARXNG_URL, and that the instance enables the JSON format "
        "(search.formats: [html, json] in its settings.yml)"
    )
    secrets: tuple[str, ...] = ()

    def build_request(self, query: str, count: int, policy: DomainPolicy | None) -> httpx.Request:
        import httpx

        params = {"q": query, "format": "json", "pageno": "1"}
        return httpx.Request(
            "GET",
            f"{self.base_url}/search?{urlencode(params)}",
            headers={"Accept": "application/json"},
        )

    def parse(self, payload: Any) -> list[SearchHit]:
        return [
            SearchHit(
                title=_str(item.get("title")),
                url=_str(item.get("url")),
                snippet=_str(item.get("content")),
                published=_opt(item.get("publishedDate")),
            )
            for item in _items(_get(payload, "results"))
        ]

    def classify(self, status: int, payload: Any) -> str | None:
        return None


def brave(
    api_key: str,
    *,
    country: str | None = None,
    safesearch: SafeSearch = "moderate",
    requests_per_second: float | None = 1.0,
) -> BraveBackend:
    """The Brave Search API (``GET /res/v1/web/search``).

    Args:
        api_key: the subscription token (``BRAVE_API_KEY``).
        country: a two-letter country code (or ``"ALL"``) to search from.
        safesearch: ``"off"``, ``"moderate"`` or ``"strict"``.
        requests_per_second: the plan's rate (free tier: 1). Raise it for a paid plan.

    Raises:
        ValueError: the key is empty or malformed, or an option is not accepted.
    """
    key = _api_key(api_key, "brave", "BRAVE_API_KEY")
    if country is not None and not (
        isinstance(country, str)
        and (
            country.upper() == "ALL"
            or (len(country) == 2 and country.isascii() and country.isalpha())
        )
    ):
        raise ValueError(
            f"brave(country={country!r}) is not accepted; use a two-letter country code "
            "such as 'US', or 'ALL'."
        )
    if safesearch not in ("off", "moderate", "strict"):
        raise ValueError(
            f"brave(safesearch={safesearch!r}) is not accepted; use 'off', 'moderate' or 'strict'."
        )
    return BraveBackend(
        key,
        country=country.upper() if country is not None else None,
        safesearch=safesearch,
        requests_per_second=_rate(requests_per_second, "brave"),
    )


def tavily(api_key: str, *, depth: TavilyDepth = "basic") -> TavilyBackend:
    """The Tavily Search API (``POST /search``), with the policy's domains pushed down.

    Args:
        api_key: the API key (``TAVILY_API_KEY``, ``tvly-...``).
        depth: ``search_depth``: ``"basic"`` (1 credit), ``"advanced"`` (2 credits),
            ``"fast"`` or ``"ultra-fast"``.

    Raises:
        ValueError: the key is empty or malformed, or ``depth`` is not accepted.
    """
    key = _api_key(api_key, "tavily", "TAVILY_API_KEY")
    if depth not in ("basic", "advanced", "fast", "ultra-fast"):
        raise ValueError(
            f"tavily(depth={depth!r}) is not accepted; use 'basic', 'advanced', 'fast' "
            "or 'ultra-fast'."
        )
    return TavilyBackend(key, depth=depth)


def exa(api_key: str) -> ExaBackend:
    """The Exa search API (``POST /search``), with the policy's domains pushed down.

    Raises:
        ValueError: the key (``EXA_API_KEY``) is empty or malformed.
    """
    return ExaBackend(_api_key(api_key, "exa", "EXA_API_KEY"))


def searxng(base_url: str) -> SearxngBackend:
    """A SearXNG instance at ``base_url`` (``GET {base_url}/search?format=json``).

    Raises:
        ValueError: ``base_url`` (``SEARXNG_URL``) is empty or not an http(s) URL
            without query or fragment.
    """
    if not isinstance(base_url, str) or not base_url.strip():
        raise ValueError(
            f"searxng(base_url={base_url!r}): the instance URL is empty; set SEARXNG_URL "
            "(for example http://localhost:8080) and pass it."
        )
    import httpx

    text = base_url.strip().rstrip("/")
    try:
        url = httpx.URL(text)
    except (httpx.InvalidURL, ValueError, TypeError) as exc:
        raise ValueError(f"searxng(base_url={base_url!r}) is not a URL ({exc}).") from None
    if url.userinfo:
        raise ValueError(
            "searxng(base_url=...) carries credentials in the URL; they would be recorded "
            "with it. Pass them as http_client=httpx.Client(auth=...) to web_search instead."
        )
    if url.scheme not in ("http", "https") or not url.host or url.query or url.fragment:
        raise ValueError(
            f"searxng(base_url={base_url!r}) is not accepted; use the instance's http(s) "
            "address without query or fragment, such as http://localhost:8080."
        )
    return SearxngBackend(text)


# --- choosing a backend from a mapping ---------------------------------------------

type BackendFactory = Callable[[Mapping[str, str]], SearchBackend]


@dataclass(frozen=True, slots=True)
class _Entry:
    factory: BackendFactory
    variable: str | None


_NAME = re.compile(r"[a-z][a-z0-9_-]{0,39}")
_REGISTRY: dict[str, _Entry] = {}


def register_backend(
    name: str, factory: BackendFactory, *, variable: str | None = None, replace: bool = False
) -> None:
    """Make a backend choosable by :func:`backend_from_env`.

    Args:
        name: what ``WEB_SEARCH_BACKEND`` names to choose it (lower case).
        factory: builds the backend from the mapping given to ``backend_from_env``;
            it should raise ``ValueError`` naming the variable that is missing.
        variable: a variable whose presence selects this backend when
            ``WEB_SEARCH_BACKEND`` is not set (like ``BRAVE_API_KEY`` for Brave).
        replace: allow replacing an existing registration of ``name``.

    Raises:
        ValueError: the name is malformed or already registered (without ``replace``).
        TypeError: ``factory`` is not callable.
    """
    if not isinstance(name, str) or not _NAME.fullmatch(name):
        raise ValueError(
            f"register_backend(name={name!r}) is not accepted; use a lower-case name of "
            "letters, digits, '-' and '_', starting with a letter."
        )
    if not callable(factory):
        raise TypeError(
            f"register_backend({name!r}, factory=...) needs a callable, got {factory!r}."
        )
    if name in _REGISTRY and not replace:
        raise ValueError(
            f"a search backend named {name!r} is already registered; choose another name "
            "or pass replace=True."
        )
    if variable is not None and (not isinstance(variable, str) or not variable):
        raise ValueError(f"register_backend({name!r}, variable={variable!r}): use a variable name.")
    _REGISTRY[name] = _Entry(factory, variable)


def registered_backends() -> dict[str, str | None]:
    """``{name: selecting variable}`` for every registered backend."""
    return {name: entry.variable for name, entry in _REGISTRY.items()}


def backend_from_env(mapping: Mapping[str, str]) -> SearchBackend:
    """The backend the mapping configures (pass the process environment, or a dict).

    ``WEB_SEARCH_BACKEND`` names the backend; without it, the one backend whose
    variable is present is chosen (``BRAVE_API_KEY``, ``TAVILY_API_KEY``,
    ``EXA_API_KEY``, ``SEARXNG_URL``). Several present is an error, not a guess.

    Raises:
        ValueError: nothing is configured, the choice is ambiguous, the named
            backend is unknown, or its key is empty; the message names the variable.
    """
    if not isinstance(mapping, Mapping):
        raise TypeError(
            "backend_from_env() needs a mapping of environment variables (the process "
            f"environment or a dict), got {type(mapping).__name__}."
        )
    chosen = (mapping.get(BACKEND_VARIABLE) or "").strip().lower()
    if chosen:
        entry = _REGISTRY.get(chosen)
        if entry is None:
            raise ValueError(
                f"{BACKEND_VARIABLE}={chosen!r} names no search backend; registered: "
                f"{', '.join(sorted(_REGISTRY))}. Fix the value, or register_backend() yours."
            )
        return _build(chosen, entry, mapping)
    present = [
        (name, entry)
        for name, entry in _REGISTRY.items()
        if entry.variable is not None and entry.variable in mapping
    ]
    if not present:
        variables = ", ".join(e.variable for e in _REGISTRY.values() if e.variable is not None)
        raise ValueError(
            f"no search backend is configured: set one of {variables}, or set "
            f"{BACKEND_VARIABLE} to one of {', '.join(sorted(_REGISTRY))}."
        )
    if len(present) > 1:
        found = ", ".join(f"{entry.variable} ({name})" for name, entry in present)
        raise ValueError(
            f"several search backends are configured: {found}. Set {BACKEND_VARIABLE} to "
            "the one to use."
        )
    name, entry = present[0]
    return _build(name, entry, mapping)


def _build(name: str, entry: _Entry, mapping: Mapping[str, str]) -> SearchBackend:
    backend = entry.factory(mapping)
    if not isinstance(backend, SearchBackend):
        raise TypeError(
            f"the factory registered for search backend {name!r} returned {backend!r}, "
            "which lacks name, build_request or parse."
        )
    return backend


def _variable(mapping: Mapping[str, str], variable: str) -> str:
    value = mapping.get(variable)
    if not isinstance(value, str) or not value.strip():
        state = "is empty" if value is not None else "is not set"
        raise ValueError(f"{variable} {state}: set it to use this search backend.")
    return value


register_backend(
    "brave", lambda env: brave(_variable(env, "BRAVE_API_KEY")), variable="BRAVE_API_KEY"
)
register_backend(
    "tavily", lambda env: tavily(_variable(env, "TAVILY_API_KEY")), variable="TAVILY_API_KEY"
)
register_backend("exa", lambda env: exa(_variable(env, "EXA_API_KEY")), variable="EXA_API_KEY")
register_backend(
    "searxng", lambda env: searxng(_variable(env, "SEARXNG_URL")), variable="SEARXNG_URL"
)


# --- helpers -----------------------------------------------------------------------

_KEY_FORBIDDEN = re.compile(r"[\s\x00-\x1f\x7f]")


def _api_key(value: object, backend: str, variable: str) -> str:
    if value is None:
        raise ValueError(
            f"{backend}(api_key=None): the key is missing; set {variable} and pass its value."
        )
    if not isinstance(value, str):
        raise TypeError(
            f"{backend}(api_key=...) needs the key as a string (from {variable}), "
            f"got {type(value).__name__}."
        )
    key = value.strip()
    if not key:
        raise ValueError(
            f"{backend}(api_key=...) got an empty key: set {variable} and pass its value."
        )
    if _KEY_FORBIDDEN.search(key):
        # Never echo the key itself.
        raise ValueError(
            f"{backend}(api_key=...) holds whitespace or control characters: check {variable}."
        )
    return key


def _rate(value: object, backend: str) -> float | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float) or not value > 0:
        raise ValueError(
            f"{backend}(requests_per_second={value!r}) is not accepted; use a positive "
            "number, or None for no spacing."
        )
    return float(value)


def _post_json(endpoint: str, body: dict[str, Any], auth: dict[str, str]) -> httpx.Request:
    """A JSON search request to ``endpoint``, authenticated by the ``auth`` headers."""
    import httpx

    headers = {"Accept": "application/json", **auth}
    return httpx.Request("POST", endpoint, json=body, headers=headers)


def _push_down(
    policy: DomainPolicy | None, options: SearchOptions, include: str, exclude: str, limit: int
) -> dict[str, list[str]]:
    """The policy's and the model's hosts as the provider's own filter, when they fit.

    An allowlist (the tool's intersected with the model's) is sent whole or not at
    all (a cut list would hide permitted sites); a blocklist (the tool's and the
    model's) sends its first ``limit`` host-only rules (a path rule would block the
    whole host). Either way our own filter still checks every hit.
    """
    pushed: dict[str, list[str]] = {}
    hosts = allowed_hosts(policy, options)
    if hosts and len(hosts) <= limit:
        pushed[include] = hosts
    blocked = blocked_hosts(policy, options)[:limit]
    if blocked:
        pushed[exclude] = blocked
    return pushed


def _get(value: Any, key: str) -> Any:
    return value.get(key) if isinstance(value, Mapping) else None


def _items(value: Any) -> Iterator[Mapping[str, Any]]:
    if isinstance(value, list):
        for item in value:
            if isinstance(item, Mapping):
                yield item


def _str(value: Any) -> str:
    return value if isinstance(value, str) else ""


def _opt(value: Any) -> str | None:
    return value if isinstance(value, str) and value.strip() else None


def _number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)
