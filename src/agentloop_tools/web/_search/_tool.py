"""``web_search``: our own search tool, the domain policy applied before the model reads.

The tool's face: its options checked, its description, its JSON schema, and the
choice between hosted and client-side search (``search_tool``). The work of a call
is the engine's (``_engine.py``): one engine for every backend (``backends.py``);
every failure becomes an ``[code] message — what to do`` error (``_tool_errors.py``).
"""

from __future__ import annotations

import functools
import inspect
import re
import time
import warnings
from collections.abc import Callable, Mapping
from datetime import date
from typing import TYPE_CHECKING, Any, TypedDict, Unpack

from agentloop import HostedTool, tool
from agentloop.tooling import ToolSpec

from agentloop_tools._providers import DEFAULT_PROVIDER, PROVIDERS
from agentloop_tools.web._domains._masked import masked_url
from agentloop_tools.web._policy._policy import DomainPolicy
from agentloop_tools.web._search._backends_api import SearchBackendLike, adopted
from agentloop_tools.web._search._describe import search_description
from agentloop_tools.web._search._engine import (
    DEADLINE_SECONDS,
    DEFAULT_ATTEMPTS,
    DEFAULT_BACKOFF_CAP,
    DEFAULT_MAX_RESULTS,
    MAX_BYTES,
    MAX_COUNT,
    OnFatal,
    SearchEngine,
    SearchSettings,
)
from agentloop_tools.web._search._options import Undated, check_undated, parse_as_of
from agentloop_tools.web._tool_options import number_in, whole_in

if TYPE_CHECKING:
    # httpx is imported when a tool is built, not with agentloop_tools.web: the
    # command line and the plugin read transcripts without it.
    import httpx

PARAMETERS: dict[str, Any] = {
    "type": "object",
    "properties": {
        "query": {
            "type": "string",
            "description": "What to search the web for: plain words, as you would type them.",
        },
        "count": {
            "type": ["integer", "null"],
            "description": "How many results to return (1 to 20); null for the default.",
        },
        "allowed_domains": {
            "type": ["array", "null"],
            "items": {"type": "string"},
            "description": (
                "Only results from these domains (subdomains included), such as "
                '["python.org"]; null for no narrowing. Not together with blocked_domains.'
            ),
        },
        "blocked_domains": {
            "type": ["array", "null"],
            "items": {"type": "string"},
            "description": (
                "No results from these domains (subdomains included); null for none. "
                "Not together with allowed_domains."
            ),
        },
    },
    "required": ["query", "count", "allowed_domains", "blocked_domains"],
    "additionalProperties": False,
}

_TOOL_NAME = re.compile(r"[A-Za-z0-9_-]{1,64}")


def web_search(
    backend: SearchBackendLike,
    *,
    policy: DomainPolicy | None = None,
    name: str = "web_search",
    max_results: int = DEFAULT_MAX_RESULTS,
    attempts: int = DEFAULT_ATTEMPTS,
    backoff_cap: float = DEFAULT_BACKOFF_CAP,
    deadline: float = DEADLINE_SECONDS,
    max_bytes: int = MAX_BYTES,
    http_client: httpx.Client | None = None,
    on_fatal: OnFatal = "error",
    sleep: Callable[[float], None] | None = None,
    clock: Callable[[], float] | None = None,
    as_of: date | str | None = None,
    undated: Undated | None = None,
    fetch_tool: str | ToolSpec | None = None,
) -> ToolSpec:
    """A client-side web search tool for an agentloop agent.

    Our code calls the search API, drops every hit ``policy`` does not permit, and
    only then hands the results to the model. Works with any provider, including
    those without hosted search.

    Args:
        backend: a :class:`~agentloop_tools.web.backends.SearchBackend`, such as
            ``backends.brave(key)``, or any object with its ``name``,
            ``build_request`` and ``parse`` (``SearchBackendLike``).
        policy: the domain policy; refused hits are withheld and counted.
        name: the tool's name as the model sees it.
        max_results: results when the model passes no ``count`` (1..20). A
            ``count`` the model passes is clamped to 1..20.
        attempts: requests per call at most, the first included (1..20); 429, 500,
            502, 503, 504 and transport errors are retried.
        backoff_cap: longest wait between attempts, in seconds (full-jitter
            exponential backoff; a ``Retry-After`` is honoured up to this cap).
        deadline: seconds one attempt may take, from connecting to the body's last
            byte (0 < deadline <= 600); a slower answer counts as a timeout, and is
            retried. A call's worst case is about ``attempts * (deadline +
            backoff_cap)``, plus the rate spacing.
        max_bytes: most bytes of response body read, after decompression (1 KB to
            100 MB); a larger body, or one that expands more than 100 times, is a
            ``search-failed`` error, not retried.
        http_client: the ``httpx.Client`` to send with (a test transport, a proxy);
            by default one is made with a 15 s timeout. Redirects are never followed.
        on_fatal: what a rejected key or an exhausted quota does: ``"error"`` tells
            the model once to stop and answers every later call with the same error,
            without a request; ``"raise"`` ends the conversation with
            :class:`~agentloop_tools.web.FatalToolError`.
        sleep: waits between attempts and for the rate (default ``time.sleep``); tests
            pass their own.
        clock: a monotonic clock for the rate spacing (default ``time.monotonic``).
        as_of: a point in time (an ISO date or a ``datetime.date``): pushed down to
            backends whose API takes an absolute upper bound, and every hit published
            after it is dropped in our code. A live index filters by the date a page
            *claims*: no leakage-free guarantee (a ``PointInTimeWarning`` says so),
            unless the backend sets ``exact_as_of = True``.
        undated: what happens to hits without a readable date when ``as_of`` is set:
            ``"drop"`` (the default, the safe reading) or ``"keep"``.
        fetch_tool: the name of the agent's fetch tool (or the tool itself), so the
            description tells the model to read the most promising results with it.

    Raises:
        TypeError, ValueError: an argument is not accepted; the message names it.
    """
    fetch_name = _fetch_name(fetch_tool)
    engine = build_engine(
        backend,
        policy=policy,
        name=name,
        max_results=max_results,
        attempts=attempts,
        backoff_cap=backoff_cap,
        deadline=deadline,
        max_bytes=max_bytes,
        http_client=http_client,
        on_fatal=on_fatal,
        sleep=sleep,
        clock=clock,
        as_of=as_of,
        undated=undated,
        caller="web_search",
    )
    description = search_description(
        policy=policy,
        fetch_tool=fetch_name,
        as_of=engine.settings.as_of,
        exact_as_of=engine.settings.exact_as_of,
    )

    # query defaults to None so a call without it gets our missing-query error.
    def search(
        query: str | None = None,
        count: int | None = None,
        allowed_domains: list[str] | None = None,
        blocked_domains: list[str] | None = None,
    ) -> str:
        return engine.search(query, count, allowed_domains, blocked_domains)

    return tool(PARAMETERS, name=name, description=description)(search)


class PointInTimeWarning(UserWarning):
    """``as_of`` on a backend that filters by claimed publish dates: no leakage-free bound."""


def build_engine(
    backend: SearchBackendLike,
    *,
    policy: DomainPolicy | None,
    name: str,
    max_results: int,
    attempts: int,
    backoff_cap: float,
    deadline: float,
    max_bytes: int,
    http_client: httpx.Client | None,
    on_fatal: OnFatal,
    sleep: Callable[[float], None] | None,
    clock: Callable[[], float] | None,
    as_of: object,
    undated: object,
    caller: str,
) -> SearchEngine:
    """Every option checked, and the engine the tool (or ``search()``) runs on."""
    _check_parts(backend, policy, name)
    whole_in("web_search", "max_results", max_results, 1, MAX_COUNT)
    whole_in("web_search", "attempts", attempts, 1, 20)
    whole_in("web_search", "max_bytes", max_bytes, 1_000, 100_000_000)
    number_in(
        "web_search", "deadline", deadline, lambda s: 0 < s <= 600, "use seconds above 0, up to 600"
    )
    number_in(
        "web_search",
        "backoff_cap",
        backoff_cap,
        lambda s: 0 <= s <= 3600,
        "use seconds from 0 to 3600",
    )
    _check_seams(http_client, on_fatal, sleep, clock)
    point = parse_as_of(as_of, caller=caller)
    kept: Undated = check_undated(undated, point, caller=caller)
    chosen = adopted(backend)
    exact = chosen.exact_as_of is True
    if point is not None and not exact:
        _warn_not_exact(caller, point, chosen.name)
    return SearchEngine(
        chosen,
        SearchSettings(
            policy=policy,
            name=name,
            max_results=max_results,
            attempts=attempts,
            backoff_cap=float(backoff_cap),
            deadline=float(deadline),
            max_bytes=max_bytes,
            on_fatal=on_fatal,
            as_of=point,
            undated=kept,
            exact_as_of=exact,
        ),
        http_client=http_client,
        sleep=sleep if sleep is not None else _default_sleep,
        clock=clock or _monotonic,
    )


def _check_parts(backend: object, policy: object, name: object) -> None:
    if not isinstance(backend, SearchBackendLike):
        raise TypeError(
            f"web_search(backend={backend!r}) needs a search backend (name, build_request, "
            "parse), such as agentloop_tools.web.backends.brave(key)."
        )
    if policy is not None and not isinstance(policy, DomainPolicy):
        raise TypeError(
            f"web_search(policy={policy!r}) needs a DomainPolicy (DomainPolicy.allow([...]) "
            "or DomainPolicy.block([...])) or None."
        )
    if not isinstance(name, str) or not _TOOL_NAME.fullmatch(name):
        raise ValueError(
            f"web_search(name={name!r}) is not accepted; use 1 to 64 letters, digits, "
            "'_' or '-' (what providers accept as a tool name)."
        )


def _check_seams(http_client: object, on_fatal: object, sleep: object, clock: object) -> None:
    import httpx

    if http_client is not None and not isinstance(http_client, httpx.Client):
        raise TypeError(
            f"web_search(http_client={http_client!r}) needs an httpx.Client (synchronous: "
            "agentloop runs tool handlers in threads)."
        )
    if on_fatal not in ("error", "raise"):
        raise ValueError(
            f"web_search(on_fatal={on_fatal!r}) is not accepted; use 'error' or 'raise'."
        )
    for label, function in (("sleep", sleep), ("clock", clock)):
        if function is not None and not callable(function):
            raise TypeError(f"web_search({label}={function!r}) needs a callable.")


def _warn_not_exact(caller: str, point: date, backend: str) -> None:
    # Python's default filter shows it once per place; pytest.warns sees each.
    warnings.warn(
        f"{caller}(as_of={point.isoformat()!r}) on {backend}: a live index filters "
        "by the publish date a page claims, so this is no leakage-free guarantee (pages "
        "updated later keep their old date). Hits dated after it are dropped in our code; "
        "only a backend with exact_as_of = True (a frozen corpus) can promise 'nothing "
        "after'. The model is not told the results are bounded.",
        PointInTimeWarning,
        stacklevel=4,
    )


def _fetch_name(fetch_tool: object) -> str | None:
    if fetch_tool is None:
        return None
    name = fetch_tool.name if isinstance(fetch_tool, ToolSpec) else fetch_tool
    if not isinstance(name, str) or not _TOOL_NAME.fullmatch(name):
        raise ValueError(
            f"web_search(fetch_tool={fetch_tool!r}) is not accepted; pass the fetch tool's "
            "name (such as 'web_fetch') or the tool itself."
        )
    return name


class SearchToolOptions(TypedDict, total=False):
    """The keyword arguments of :func:`web_search` that :func:`search_tool` passes on."""

    name: str
    max_results: int
    attempts: int
    backoff_cap: float
    deadline: float
    max_bytes: int
    http_client: httpx.Client | None
    on_fatal: OnFatal
    sleep: Callable[[float], None] | None
    clock: Callable[[], float] | None
    as_of: date | str | None
    undated: Undated | None
    fetch_tool: str | ToolSpec | None


def search_tool(
    env: Any,
    *,
    backend: SearchBackendLike | None = None,
    policy: DomainPolicy | None = None,
    **options: Unpack[SearchToolOptions],
) -> ToolSpec | HostedTool:
    """The search an agent built by ``Agent.from_env(env, ...)`` can really run.

    The provider's hosted search where the endpoint hosts it (Anthropic's own API,
    OpenAI Responses), else :func:`web_search` on ``backend``, or on the backend
    ``backend_from_env(env)`` configures (``WEB_SEARCH_BACKEND``, ``BRAVE_API_KEY``,
    ...). Reads the same variables as ``Agent.from_env``: ``LLM_PROVIDER``,
    ``OPENAI_API`` and ``ANTHROPIC_BASE_URL`` (a third-party Anthropic-compatible
    endpoint). ``policy`` serves both; ``options`` are :func:`web_search`'s keyword
    arguments (``http_client=``, ``fetch_tool=``, ``max_results=``, ...), for
    client-side search only.

    Raises:
        ValueError: the endpoint has no hosted search and ``env`` configures no
            backend (none given); an option other than its default is given where
            hosted search is chosen (the message names it); ``LLM_PROVIDER`` is unknown.
        TypeError: ``env`` is not a mapping, or an option is not one of
            :func:`web_search`'s.
    """
    from collections.abc import Mapping

    if not isinstance(env, Mapping):
        raise TypeError(
            "search_tool(env=...) needs a mapping of environment variables (the process "
            f"environment or a dict), got {type(env).__name__}."
        )
    if backend is not None and not isinstance(backend, SearchBackendLike):
        raise TypeError(f"search_tool(backend={backend!r}) needs a search backend or None.")
    defaults = _option_defaults()
    unknown = sorted(set(options) - set(defaults))
    if unknown:
        raise TypeError(
            f"search_tool() got {', '.join(f'{name}=' for name in unknown)}, which "
            f"web_search does not take; its keyword arguments: {', '.join(defaults)}."
        )
    provider = (env.get("LLM_PROVIDER") or DEFAULT_PROVIDER).strip()
    hosted, why = _hosts_search(provider, env)
    if hosted:
        _refuse_client_options(provider, env, options, defaults)
        if policy is not None:
            return policy.native_web_search()
        from agentloop_tools.web._hosted_search import native_web_search

        return native_web_search()
    if backend is None:
        backend = _backend_of(env, why)
    return web_search(backend, policy=policy, **options)


@functools.cache
def _option_defaults() -> dict[str, object]:
    """web_search's keyword arguments that search_tool passes on, with their defaults."""
    parameters = inspect.signature(web_search).parameters
    return {
        name: parameter.default
        for name, parameter in parameters.items()
        if parameter.kind is inspect.Parameter.KEYWORD_ONLY and name != "policy"
    }


def _refuse_client_options(
    provider: str, env: Any, options: Mapping[str, object], defaults: Mapping[str, object]
) -> None:
    # A setting hosted search cannot honour would be dropped unseen; its default is not.
    given = [name for name, value in options.items() if value != defaults[name]]
    if not given:
        return
    api = ""
    if provider == "openai":
        api = f", OPENAI_API={(env.get('OPENAI_API') or 'responses').strip()!r}"
    raise ValueError(
        f"search_tool(env, {', '.join(f'{name}=...' for name in given)}): "
        f"LLM_PROVIDER={provider!r}{api} runs the provider's hosted web search, which "
        f"takes no {' or '.join(given)} (client-side search only). Leave "
        f"{'it' if len(given) == 1 else 'them'} out for hosted search, or build the "
        "client-side tool yourself: web_search(backend_from_env(env), ...)."
    )


def _backend_of(env: Any, why: str) -> SearchBackendLike:
    from agentloop_tools._errors import NoSearchBackend
    from agentloop_tools.web._search._backends_registry import backend_from_env

    try:
        return backend_from_env(env)
    except NoSearchBackend as error:
        raise NoSearchBackend(
            f"{why}, so search_tool chooses client-side search, and {error} Or pass "
            "search_tool(env, backend=...), or use a provider that hosts web search "
            "(LLM_PROVIDER=anthropic on api.anthropic.com, or openai with "
            "OPENAI_API=responses)."
        ) from None


def _hosts_search(provider: str, env: Any) -> tuple[bool, str]:
    import httpx

    if provider == "anthropic":
        base = (env.get("ANTHROPIC_BASE_URL") or "").strip()
        if not base:
            return True, ""
        try:
            host = httpx.URL(base).host
        except (httpx.InvalidURL, ValueError, TypeError):
            host = ""
        if host in PROVIDERS["anthropic"].hosts:
            return True, ""
        return False, (
            f"ANTHROPIC_BASE_URL={masked_url(base)!r} is a third-party Anthropic-compatible "
            "endpoint, which does not run Anthropic's hosted web search"
        )
    if provider == "openai":
        api = (env.get("OPENAI_API") or "responses").strip()
        if api == "responses":
            return True, ""
        return False, f"OPENAI_API={api!r} (Chat Completions) has no hosted web search"
    if provider in PROVIDERS:
        return False, f"LLM_PROVIDER={provider!r} has no hosted web search agentloop can request"
    *names, last = PROVIDERS
    raise ValueError(
        f"LLM_PROVIDER={provider!r} is not a provider agentloop knows; use {', '.join(names)} "
        f"or {last}."
    )


# Bound at import: a replay harness may replace ``time`` below (see _default_sleep).
_monotonic = time.monotonic


def _default_sleep(seconds: float) -> None:
    # Looked up on this module at call time, so a test harness replaying recorded
    # traffic can replace ``time`` here and skip the waits (as for agentloop's own).
    time.sleep(seconds)
