"""``search()`` and ``fetch()``: the tools' work without an agent, for scripts and notebooks.

Each builds the same engine the tool builds and runs one call on it, so the
checks, the policy, the rendering and the error codes are the tool's own; the
difference is the return value: a result object instead of a string or a raised
``ToolError``.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from datetime import date
from typing import TYPE_CHECKING

from agentloop_tools.web._fetch._settings import (
    DEFAULT_MAX_BYTES,
    DEFAULT_MAX_CHARS,
    DEFAULT_TIMEOUT,
)
from agentloop_tools.web._fetch._tool import DEFAULT_USER_AGENT
from agentloop_tools.web._policy._policy import DomainPolicy
from agentloop_tools.web._search._engine import (
    DEADLINE_SECONDS,
    DEFAULT_ATTEMPTS,
    DEFAULT_BACKOFF_CAP,
    DEFAULT_MAX_RESULTS,
    MAX_BYTES,
)
from agentloop_tools.web._search._options import Undated
from agentloop_tools.web._search._render import SearchHit

if TYPE_CHECKING:
    import httpx

    from agentloop_tools.web._fetch._fetcher import Fetcher
    from agentloop_tools.web._fetch._settings import Resolver
    from agentloop_tools.web._search._backends_api import PageApi, SearchBackendLike
    from agentloop_tools.web._search._backends_builtin import ExaBackend, TavilyBackend

logger = logging.getLogger("agentloop_tools.web")


@dataclass(frozen=True, slots=True)
class SearchResult:
    """One search, as :func:`search` ran it.

    Attributes:
        ok: whether the search succeeded (zero hits is a success).
        output: the text the model would read: the results, or ``Error: [code] ...``.
        hits: the hits shown, in order, their URLs as shown (and checked); empty on error.
        error_code: the error's code (``"rate-limited"``, ``"invalid-domain"``, ...), or None.
        error_message: what happened, or None.
    """

    ok: bool
    output: str
    hits: tuple[SearchHit, ...] = ()
    error_code: str | None = None
    error_message: str | None = None


@dataclass(frozen=True, slots=True)
class FetchedPage:
    """The document :func:`fetch` read.

    Attributes:
        url: the final URL read (after redirects, or the one the page API reported).
        title: the document's title, if it had one.
        text: the whole text (``FetchResult.output`` holds the part asked for).
        redirects: the hops followed before ``url``, in order.
        notes: what the reader noted (a cut body, the extractor used, the API read through).
    """

    url: str
    title: str | None
    text: str
    redirects: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class FetchResult:
    """One fetch, as :func:`fetch` ran it.

    Attributes:
        ok: whether the page was read.
        output: the text the model would read: the header and the part asked for, or
            ``Error: [code] ...`` with every URL requested.
        page: the whole document and its metadata; None on error.
        error_code: the error's code (``"blocked-by-policy"``, ``"timeout"``, ...), or None.
        error_message: what happened, or None.
    """

    ok: bool
    output: str
    page: FetchedPage | None = None
    error_code: str | None = None
    error_message: str | None = None


def search(
    backend: SearchBackendLike,
    query: str,
    *,
    policy: DomainPolicy | None = None,
    count: int | None = None,
    allowed_domains: list[str] | None = None,
    blocked_domains: list[str] | None = None,
    as_of: date | str | None = None,
    undated: Undated | None = None,
    max_results: int = DEFAULT_MAX_RESULTS,
    attempts: int = DEFAULT_ATTEMPTS,
    backoff_cap: float = DEFAULT_BACKOFF_CAP,
    deadline: float = DEADLINE_SECONDS,
    max_bytes: int = MAX_BYTES,
    http_client: httpx.Client | None = None,
    sleep: Callable[[float], None] | None = None,
    clock: Callable[[], float] | None = None,
) -> SearchResult:
    """One web search, on the same code path as the ``web_search`` tool.

    Args:
        backend: a search backend, such as ``backends.brave(key)``.
        query: what to search for.
        policy: the domain policy; hits it refuses are withheld.
        count: how many results (clamped to 1..20); None for ``max_results``.
        allowed_domains, blocked_domains: a narrowing, as the model may pass it.
        as_of, undated: a point in time, as for ``web_search``.
        max_results, attempts, backoff_cap, deadline, max_bytes, http_client, sleep,
            clock: as for ``web_search``.

    Returns:
        A :class:`SearchResult`; a failure the model would be told about is a result
        with ``ok=False``, never an exception.

    Raises:
        TypeError, ValueError: an option is not accepted (as ``web_search`` raises).
    """
    from agentloop_tools.web._search._engine import Answer
    from agentloop_tools.web._search._tool import build_engine

    engine = build_engine(
        backend,
        policy=policy,
        name="web_search",
        max_results=max_results,
        attempts=attempts,
        backoff_cap=backoff_cap,
        deadline=deadline,
        max_bytes=max_bytes,
        http_client=http_client,
        on_fatal="error",
        sleep=sleep,
        clock=clock,
        as_of=as_of,
        undated=undated,
        caller="search",
    )
    answer = engine.answer(query, count, allowed_domains, blocked_domains)
    if isinstance(answer, Answer):
        return SearchResult(True, answer.text, answer.hits)
    return SearchResult(
        False,
        f"Error: {answer}",
        (),
        answer.code,
        answer.message,
    )


def fetch(
    url: str,
    *,
    start: int | None = None,
    policy: DomainPolicy | None = None,
    via: PageApi | TavilyBackend | ExaBackend | None = None,
    max_chars: int = DEFAULT_MAX_CHARS,
    max_bytes: int = DEFAULT_MAX_BYTES,
    timeout: float = DEFAULT_TIMEOUT,
    respect_robots: bool = False,
    user_agent: str | None = DEFAULT_USER_AGENT,
    allow_private_networks: bool = False,
    http_client: httpx.Client | None = None,
    resolver: Resolver | None = None,
) -> FetchResult:
    """One page read, on the same code path as the ``web_fetch`` tool (no cache).

    Args:
        url: the http(s) URL to read.
        start: the character offset of the part in ``output`` (None: the beginning).
        policy, via, max_chars, max_bytes, timeout, respect_robots, user_agent,
            allow_private_networks, http_client, resolver: as for ``web_fetch``
            (``user_agent=None`` is its default too).

    Returns:
        A :class:`FetchResult`; a refusal or a failure is a result with ``ok=False``.

    Raises:
        TypeError, ValueError: an option is not accepted (as ``web_fetch`` raises).
    """
    from agentloop_tools.web._fetch._tool import build_fetcher

    fetcher = build_fetcher(
        policy=policy,
        name="web_fetch",
        max_chars=max_chars,
        max_bytes=max_bytes,
        timeout=timeout,
        cache_ttl=0.0,
        respect_robots=respect_robots,
        user_agent=user_agent if user_agent is not None else DEFAULT_USER_AGENT,
        allow_private_networks=allow_private_networks,
        http_client=http_client,
        resolver=resolver,
        via=via,
    )
    return _fetch_once(fetcher, url, start)


def _fetch_once(fetcher: Fetcher, url: str, start: int | None) -> FetchResult:
    """One call on ``fetcher``, every outcome a :class:`FetchResult`."""
    from agentloop_tools.web._fetch._codes import FetchRefusal
    from agentloop_tools.web._fetch._settings import Requested, start_offset
    from agentloop_tools.web._transcript._fetch_format import requested_trailer

    requested: Requested = []
    try:
        document = fetcher.page(url, start, requested)
        output = fetcher.render(document, start_offset(start))
    except FetchRefusal as refused:
        return FetchResult(
            False,
            f"Error: {refused.failure}{requested_trailer(requested)}",
            None,
            refused.code,
            refused.failure.message,
        )
    except Exception as error:  # the tool's own answer to a bug: a coded result
        logger.exception("fetch failed unexpectedly on %r", url)
        message = f"reading {url!r} failed unexpectedly ({type(error).__name__})"
        return FetchResult(
            False,
            f"Error: [fetch-error] {message} — do not retry this URL; use another source"
            + requested_trailer(requested),
            None,
            "fetch-error",
            message,
        )
    page = FetchedPage(
        document.chain[-1], document.title, document.text, document.chain[1:-1], document.notes
    )
    return FetchResult(True, output, page)
