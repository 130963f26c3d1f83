"""Scripted search backends for the client-side ``web_search``: provider-shaped bodies.

A ``ScriptedSearch`` serves the search-API responses you give it, in order, through an
in-memory httpx transport; the builders below write each backend's documented bodies
(Brave, Tavily, Exa, SearXNG) and its unhappy paths (rate limits, spent quotas,
rejected keys, a body that is not JSON).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from agentloop_tools._providers import SEARCH_APIS, SEARXNG_NAME
from agentloop_tools.testing._scripted import scripted_id

type SearchReply = (
    tuple[int, dict[str, Any] | str] | tuple[int, dict[str, Any] | str, dict[str, str]]
)

SEARCH_BACKENDS = (*SEARCH_APIS, SEARXNG_NAME)


class ScriptedSearch:
    """Serves scripted search-API responses, in order, to ``web_search(http_client=...)``.

    Args:
        backend: ``"brave"``, ``"tavily"``, ``"exa"`` or ``"searxng"`` (for messages
            and the default script-exhausted answer; the bodies are yours).
        responses: each ``(status, body)`` or ``(status, body, headers)``; build them
            with :func:`brave_results`, :func:`tavily_results`, :func:`exa_results`,
            :func:`searxng_results` and the unhappy-path builders. An exception
            instance (``httpx.ReadTimeout("...")``) is raised instead: a timeout can be
            scripted for a test, though a cassette cannot record one.
        faults: ``{QUERY_PATTERN: FAULT}``, as ``@pytest.mark.web_faults(searches=...)``
            takes them: a substring of the query (any case) or a compiled pattern, and
            an HTTP error status (``429``), ``"timeout"``, ``"empty"`` or ``"paywall"``.
            ``web_search`` answers a matching query itself, before any request (no
            response of the script is used) and without a retry or wait.

    vcrpy records this traffic like any other, so with ``--record-mode=once`` an
    agent that calls ``web_search`` is recorded without a search key; the
    cassette then replays without the script.
    """

    def __init__(
        self,
        backend: str,
        responses: Iterable[SearchReply | BaseException],
        *,
        faults: Mapping[object, object] | None = None,
    ) -> None:
        from agentloop_tools.web._faults import web_faults

        self._faults = web_faults(searches=faults, where="ScriptedSearch(faults=...)")
        if backend not in SEARCH_BACKENDS:
            raise ValueError(
                f"ScriptedSearch(backend={backend!r}): use one of {', '.join(SEARCH_BACKENDS)}."
            )
        self.backend = backend
        self.responses = list(responses)
        self.requests: list[Any] = []

    def __repr__(self) -> str:
        return f"ScriptedSearch({self.backend!r}, {len(self.responses)} response(s) left)"

    def http_client(self) -> Any:
        """An ``httpx.Client`` answering from the script; pass it to ``web_search``."""
        import httpx

        def answer(request: httpx.Request) -> httpx.Response:
            self.requests.append(request)
            if not self.responses:
                message = (
                    f"ScriptedSearch({self.backend!r}) has no response left for request "
                    f"{len(self.requests)}: add one to the script."
                )
                return httpx.Response(500, json={"error": message})
            reply = self.responses.pop(0)
            if isinstance(reply, BaseException):
                raise reply
            status, body, *rest = reply
            # The script's headers replace the default whatever their case.
            headers = httpx.Headers({"content-type": "application/json"})
            headers.update(rest[0] if rest else {})
            content = body if isinstance(body, str) else json.dumps(body)
            return httpx.Response(status, content=content.encode(), headers=headers)

        client = httpx.Client(transport=httpx.MockTransport(answer))
        from agentloop_tools.web._faults import attach

        attach(client, self._faults)
        return client

    def sent(self) -> list[dict[str, Any]]:
        """What each request asked, in order: a GET's query parameters, a POST's JSON body.

        The request shape a backend pushes down (Brave's ``freshness``, Tavily's
        ``include_domains`` and ``end_date``, Exa's ``endPublishedDate``, the
        ``urls`` of an extract) without parsing requests in every test. Also
        ``path``: the request's path (``/search``, ``/extract``, ``/contents``).
        """
        shown: list[dict[str, Any]] = []
        for request in self.requests:
            entry: dict[str, Any]
            if request.method == "GET":
                entry = dict(request.url.params.multi_items())
            else:
                try:
                    body = json.loads(request.content or b"null")
                except ValueError:
                    body = None
                entry = dict(body) if isinstance(body, dict) else {"body": body}
            entry["path"] = request.url.path
            shown.append(entry)
        return shown


# (url, title), (url, title, snippet), or (url, title, snippet, published): a
# published of None makes an undated hit.
type Hit = tuple[str, str] | tuple[str, str, str] | tuple[str, str, str, str | None]

_DEFAULT_DATE = object()


def _hit(item: Hit) -> tuple[str, str, str]:
    url, title, *rest = item
    snippet = rest[0] if rest else ""
    return url, title, snippet if isinstance(snippet, str) else ""


def _published(item: Hit) -> object:
    """The hit's published value, ``_DEFAULT_DATE`` when the tuple gives none."""
    return item[3] if len(item) > 3 else _DEFAULT_DATE


def brave_results(hits: Sequence[Hit], *, query: str = "") -> tuple[int, dict[str, Any]]:
    """A Brave ``/res/v1/web/search`` 200 body; hits are ``(url, title[, description])``.

    Descriptions may carry Brave's ``<strong>`` decorations and entities, as the real
    API sends by default.
    """
    results = []
    for item in hits:
        url, title, description = _hit(item)
        host = url.split("/")[2] if url.count("/") >= 2 else url
        result: dict[str, Any] = {
            "type": "search_result",
            "title": title,
            "url": url,
            "description": description,
            "is_source_local": False,
            "is_source_both": False,
            "page_age": "2024-10-07T00:00:00",
            "age": "October 7, 2024",
            "language": "en",
            "family_friendly": True,
            "profile": {"name": host, "url": url, "long_name": host},
            "meta_url": {"scheme": "https", "netloc": host, "path": ""},
        }
        published = _published(item)
        if published is None:
            del result["page_age"], result["age"]
        elif isinstance(published, str):
            result["page_age"] = published
            result["age"] = published[:10]
        results.append(result)
    return 200, {
        "type": "search",
        "query": {"original": query, "more_results_available": False},
        "web": {"type": "search", "results": results, "family_friendly": True},
    }


def brave_rate_limited(*, retry_after: int = 1) -> tuple[int, dict[str, Any], dict[str, str]]:
    """Brave's per-second 429 (``RATE_LIMITED``, quota not used up), with ``Retry-After``."""
    return (
        429,
        _brave_error(429, "RATE_LIMITED", quota=(2000, 12)),
        {
            "Retry-After": str(retry_after),
            "X-RateLimit-Limit": "1, 2000",
            "X-RateLimit-Remaining": "0, 1988",
        },
    )


def brave_quota_exhausted() -> tuple[int, dict[str, Any]]:
    """Brave's 429 once the monthly quota is used up: not retried by web_search."""
    return 429, _brave_error(429, "RATE_LIMITED", quota=(2000, 2000))


def brave_invalid_key() -> tuple[int, dict[str, Any]]:
    """Brave's answer to a rejected subscription token."""
    return 422, _brave_error(422, "SUBSCRIPTION_TOKEN_INVALID")


def tavily_results(hits: Sequence[Hit], *, query: str = "") -> tuple[int, dict[str, Any]]:
    """A Tavily ``/search`` 200 body; hits are ``(url, title[, content[, published_date]])``.

    Tavily dates results only on some topics: no ``published_date`` unless given.
    """
    results = []
    for item in hits:
        url, title, content = _hit(item)
        result: dict[str, Any] = {
            "title": title,
            "url": url,
            "content": content,
            "score": 0.9,
            "raw_content": None,
        }
        published = _published(item)
        if isinstance(published, str):
            result["published_date"] = published
        results.append(result)
    return 200, {
        "query": query,
        "answer": None,
        "images": [],
        "results": results,
        "response_time": 0.8,
        "request_id": "scripted",
    }


def tavily_quota_exhausted(status: int = 432) -> tuple[int, dict[str, Any]]:
    """Tavily's 432 (plan limit) or 433 (pay-as-you-go limit)."""
    return status, {"detail": {"error": "This request exceeds your plan's set usage limit."}}


def exa_results(hits: Sequence[Hit]) -> tuple[int, dict[str, Any]]:
    """An Exa ``/search`` 200 body; hits are ``(url, title[, highlight[, publishedDate]])``."""
    results = []
    for item in hits:
        url, title, highlight = _hit(item)
        published = _published(item)
        results.append(
            {
                "id": url,
                "url": url,
                "title": title,
                "publishedDate": "2024-10-07T00:00:00.000Z"
                if published is _DEFAULT_DATE
                else published,
                "author": None,
                "highlights": [highlight] if highlight else [],
            }
        )
    return 200, {
        "requestId": "scripted",
        "resolvedSearchType": "neural",
        "results": results,
        "costDollars": {"total": 0.005},
    }


def searxng_results(hits: Sequence[Hit], *, query: str = "") -> tuple[int, dict[str, Any]]:
    """A SearXNG ``/search?format=json`` 200 body; hits are ``(url, title[, content[, date]])``."""
    results = []
    for item in hits:
        url, title, content = _hit(item)
        result: dict[str, Any] = {
            "url": url,
            "title": title,
            "content": content,
            "engine": "duckduckgo",
            "score": 1.0,
        }
        published = _published(item)
        if isinstance(published, str):
            result["publishedDate"] = published
        results.append(result)
    return 200, {
        "query": query,
        "number_of_results": 0,
        "results": results,
        "answers": [],
        "suggestions": [],
        "unresponsive_engines": [],
    }


def tavily_extract(
    pages: Sequence[tuple[str, str]], *, failed: Sequence[tuple[str, str]] = ()
) -> tuple[int, dict[str, Any]]:
    """A Tavily ``/extract`` 200 body: ``pages`` are ``(url, raw_content)``, ``failed``
    ``(url, error)`` (``failed_results``)."""
    return 200, {
        "results": [{"url": url, "raw_content": text, "images": []} for url, text in pages],
        "failed_results": [{"url": url, "error": error} for url, error in failed],
        "response_time": 0.4,
        "request_id": "scripted",
    }


def exa_contents(
    pages: Sequence[tuple[str, str, str]], *, errors: Sequence[tuple[str, str, int]] = ()
) -> tuple[int, dict[str, Any]]:
    """An Exa ``/contents`` 200 body: ``pages`` are ``(url, title, text)``, ``errors``
    ``(url, tag, http_status)`` (a ``statuses`` entry such as ``CRAWL_NOT_FOUND``, 404)."""
    statuses: list[dict[str, Any]] = [{"id": url, "status": "success"} for url, _, _ in pages]
    statuses += [
        {"id": url, "status": "error", "error": {"tag": tag, "httpStatusCode": status}}
        for url, tag, status in errors
    ]
    return 200, {
        "requestId": "scripted",
        "results": [
            {
                "id": url,
                "url": url,
                "title": title,
                "text": text,
                "publishedDate": "2024-10-07T00:00:00.000Z",
                "author": None,
            }
            for url, title, text in pages
        ],
        "statuses": statuses,
        "costDollars": {"total": 0.001},
    }


def unauthorized(status: int = 401) -> tuple[int, dict[str, Any]]:
    """A rejected key (401 or 403): web_search's ``not-configured``."""
    return status, {"error": "Unauthorized: the API key is missing or invalid."}


def not_json(status: int = 200) -> tuple[int, str]:
    """A body that is not JSON (a captive portal, a proxy's error page)."""
    return status, "<html><body>Please complete the security check</body></html>"


def _brave_error(status: int, code: str, *, quota: tuple[int, int] | None = None) -> dict[str, Any]:
    error: dict[str, Any] = {
        "id": scripted_id("err"),
        "status": status,
        "code": code,
        "detail": code,
    }
    if quota is not None:
        error["meta"] = {
            "plan": "Free",
            "rate_limit": 1,
            "rate_current": 1,
            "quota_limit": quota[0],
            "quota_current": quota[1],
        }
    return {"type": "ErrorResponse", "error": error, "time": 1700000000}
