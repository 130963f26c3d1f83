"""The built-in search backends: Brave, Tavily, Exa and SearXNG, and their factories.

Each knows one search API: how to ask (an ``httpx.Request``), how to read the answer
(a list of :class:`SearchHit`) and which failures are final. Their hosts and key
variables come from ``_providers.SEARCH_APIS``, the package's one table of them.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal
from urllib.parse import urlencode

from agentloop_tools._providers import SEARCH_APIS, SEARXNG_NAME, SEARXNG_VARIABLE
from agentloop_tools.web._domains._masked import masked_url, masked_within
from agentloop_tools.web._search._backends_api import SearchBackend
from agentloop_tools.web._search._options import SearchOptions, allowed_hosts, blocked_hosts
from agentloop_tools.web._search._render import SearchHit
from agentloop_tools.web._tool_options import is_number, number_in

if TYPE_CHECKING:
    # httpx is imported when a request is built, not with agentloop_tools.web.
    import httpx

    from agentloop_tools.web._policy._policy import DomainPolicy

# The start of the absolute range Brave's freshness gets for as_of.
BRAVE_EARLIEST = "1970-01-01"

type SafeSearch = Literal["off", "moderate", "strict"]
type TavilyDepth = Literal["basic", "advanced", "fast", "ultra-fast"]

_BRAVE, _TAVILY, _EXA = SEARCH_APIS["brave"], SEARCH_APIS["tavily"], SEARCH_APIS["exa"]


class _KeyedBackend(SearchBackend):
    """A backend whose one secret is its API key."""

    __slots__ = ()
    api_key: str

    @property
    def secrets(self) -> tuple[str, ...]:  # type: ignore[override]  # derived from the key
        return (self.api_key,)


@dataclass(frozen=True, slots=True)
class BraveBackend(_KeyedBackend):
    """Brave Search API (``brave(...)`` builds one). The key travels in ``X-Subscription-Token``."""

    api_key: str = field(repr=False)
    country: str | None = None
    safesearch: SafeSearch = "moderate"
    requests_per_second: float | None = 1.0
    endpoint: str = f"https://{_BRAVE.host}/res/v1/web/search"
    name: str = _BRAVE.name
    max_query_chars: int | None = 400
    setup_hint: str = f"check the Brave Search API key ({_BRAVE.key_variable}) and its plan"

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
            if is_number(limit) and is_number(used) and limit > 0 and used >= limit:
                return "quota-exceeded"
            detail = _get(error, "detail")
            if code == "QUOTA_LIMITED" or (isinstance(detail, str) and "quota" in detail.lower()):
                return "quota-exceeded"
        return None


@dataclass(frozen=True, slots=True)
class TavilyBackend(_KeyedBackend):
    """Tavily Search API (``tavily(...)`` builds one). The key travels as a bearer token."""

    api_key: str = field(repr=False)
    depth: TavilyDepth = "basic"
    requests_per_second: float | None = None
    endpoint: str = f"https://{_TAVILY.host}/search"
    # web_fetch(via=tavily(key)) reads pages here.
    extract_endpoint: str = f"https://{_TAVILY.host}/extract"
    name: str = _TAVILY.name
    max_query_chars: int | None = None
    setup_hint: str = f"check the Tavily API key ({_TAVILY.key_variable}) and its plan"
    # Tavily returns nothing for long lists (reports at 100+ domains): stay below.
    max_domains: int = 99

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
class ExaBackend(_KeyedBackend):
    """Exa search API (``exa(...)`` builds one). The key travels in ``x-api-key``."""

    api_key: str = field(repr=False)
    requests_per_second: float | None = 5.0
    endpoint: str = f"https://{_EXA.host}/search"
    # web_fetch(via=exa(key)) reads pages here.
    contents_endpoint: str = f"https://{_EXA.host}/contents"
    name: str = _EXA.name
    max_query_chars: int | None = None
    setup_hint: str = f"check the Exa API key ({_EXA.key_variable}) and its credits"
    max_domains: int = 100

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


@dataclass(frozen=True, slots=True)
class SearxngBackend(SearchBackend):
    """A SearXNG instance (``searxng(...)`` builds one); its JSON format must be enabled."""

    base_url: str
    requests_per_second: float | None = None
    name: str = SEARXNG_NAME
    max_query_chars: int | None = None
    setup_hint: str = (
        f"check {SEARXNG_VARIABLE}, and that the instance enables the JSON format "
        "(search.formats: [html, json] in its settings.yml)"
    )

    def __repr__(self) -> str:
        # Built directly (not through searxng()), base_url may carry a password.
        return f"SearxngBackend(base_url={_quoted(self.base_url)})"

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
    key = _api_key(api_key, _BRAVE.name, _BRAVE.key_variable)
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
        requests_per_second=_rate(requests_per_second, _BRAVE.name),
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
    key = _api_key(api_key, _TAVILY.name, _TAVILY.key_variable)
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
    return ExaBackend(_api_key(api_key, _EXA.name, _EXA.key_variable))


def searxng(base_url: str) -> SearxngBackend:
    """A SearXNG instance at ``base_url`` (``GET {base_url}/search?format=json``).

    Raises:
        ValueError: ``base_url`` (``SEARXNG_URL``) is empty or not an http(s) URL
            without query or fragment.
    """
    if not isinstance(base_url, str) or not base_url.strip():
        raise ValueError(
            f"searxng(base_url={_quoted(base_url)}): the instance URL is empty; set SEARXNG_URL "
            "(for example http://localhost:8080) and pass it."
        )
    import httpx

    text = base_url.strip().rstrip("/")
    try:
        url = httpx.URL(text)
    except (httpx.InvalidURL, ValueError, TypeError) as exc:
        # httpx's complaint may quote a part of the URL (a port that was a password).
        detail = masked_within(str(exc), base_url)
        raise ValueError(
            f"searxng(base_url={_quoted(base_url)}) is not a URL ({detail})."
        ) from None
    if url.userinfo:
        raise ValueError(
            "searxng(base_url=...) carries credentials in the URL; they would be recorded "
            "with it. Pass them as http_client=httpx.Client(auth=...) to web_search instead."
        )
    if url.scheme not in ("http", "https") or not url.host or url.query or url.fragment:
        raise ValueError(
            f"searxng(base_url={_quoted(base_url)}) is not accepted; use the instance's http(s) "
            "address without query or fragment, such as http://localhost:8080."
        )
    return SearxngBackend(text)


# --- helpers -----------------------------------------------------------------------


def _quoted(base_url: object) -> str:
    """A configured URL as a message quotes it: through the one masking helper."""
    if isinstance(base_url, str):
        return repr(masked_url(base_url))
    return masked_url(repr(base_url))  # bytes, or an object whose repr shows a URL


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
    return number_in(
        backend,
        "requests_per_second",
        value,
        lambda rate: rate > 0,
        "use a positive number, or None for no spacing",
    )


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
