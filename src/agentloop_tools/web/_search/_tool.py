"""``web_search``: our own search tool, the domain policy applied before the model reads.

One engine for every backend (see ``backends.py``): it validates the model's
arguments, spaces calls to the backend's rate across agentloop's parallel tool
threads, retries transient failures with tenacity, drops every hit the policy does
not permit, renders the rest (``_render.py``) and turns every failure into an
``[code] message — what to do`` error (``_tool_errors.py``).
"""

from __future__ import annotations

import email.utils
import logging
import re
import threading
import time
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, date, datetime
from typing import TYPE_CHECKING, Any, Literal

from agentloop import HostedTool, tool
from agentloop.tooling import ToolSpec

from agentloop_tools.web._policy._policy import DomainPolicy
from agentloop_tools.web._search._describe import search_description
from agentloop_tools.web._search._filter import Filtered, filter_hits
from agentloop_tools.web._search._options import (
    Narrowing,
    Undated,
    allowed_hosts,
    check_undated,
    narrowing,
    parse_as_of,
)
from agentloop_tools.web._search._render import SearchHit, render_results
from agentloop_tools.web._tool_errors import SEARCH_CODES, ToolFailure
from agentloop_tools.web.backends import SearchBackend

if TYPE_CHECKING:
    # httpx and tenacity are imported when a tool is built, not with agentloop_tools.web:
    # the command line and the plugin read transcripts without them.
    import httpx
    from tenacity import RetryCallState

logger = logging.getLogger("agentloop_tools.web.search")

type OnFatal = Literal["error", "raise"]

MAX_COUNT = 20
MIN_QUERY_CHARS = 2
# No search API wants more; a longer "query" is a pasted document, refused unsent.
MAX_QUERY_CHARS = 2000
RETRY_STATUSES = frozenset({429, 500, 502, 503, 504})
TIMEOUT_SECONDS = 15.0
CONNECT_TIMEOUT_SECONDS = 5.0
# One attempt's whole time, connect to last byte, and its decoded body: a result
# page of 20 hits is 10-100 KB of JSON.
DEADLINE_SECONDS = 15.0
MAX_BYTES = 2_000_000
# A Retry-After longer than this many digits is not a delay anyone means.
_RETRY_AFTER = re.compile(r"[0-9]{1,9}")

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
_SPACE = re.compile(r"\s+")
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")


def web_search(
    backend: SearchBackend,
    *,
    policy: DomainPolicy | None = None,
    name: str = "web_search",
    max_results: int = 5,
    attempts: int = 6,
    backoff_cap: float = 30.0,
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
            ``backends.brave(key)``.
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
        as_of=engine.as_of,
        exact_as_of=engine.exact_as_of,
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
    backend: SearchBackend,
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
) -> _SearchEngine:
    """Every option checked, and the engine the tool (or ``search()``) runs on."""
    if not isinstance(backend, SearchBackend):
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
    _int_in("max_results", max_results, 1, MAX_COUNT)
    _int_in("attempts", attempts, 1, 20)
    _int_in("max_bytes", max_bytes, 1_000, 100_000_000)
    if (
        isinstance(deadline, bool)
        or not isinstance(deadline, int | float)
        or not 0 < deadline <= 600
    ):
        raise ValueError(
            f"web_search(deadline={deadline!r}) is not accepted; use seconds above 0, up to 600."
        )
    if (
        isinstance(backoff_cap, bool)
        or not isinstance(backoff_cap, int | float)
        or not 0 <= backoff_cap <= 3600
    ):
        raise ValueError(
            f"web_search(backoff_cap={backoff_cap!r}) is not accepted; use seconds from 0 to 3600."
        )
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
    point = parse_as_of(as_of, caller=caller)
    kept: Undated = check_undated(undated, point, caller=caller)
    exact = getattr(backend, "exact_as_of", False) is True
    if point is not None and not exact:
        # Python's default filter shows it once per place; pytest.warns sees each.
        warnings.warn(
            f"{caller}(as_of={point.isoformat()!r}) on {backend.name}: a live index filters "
            "by the publish date a page claims, so this is no leakage-free guarantee (pages "
            "updated later keep their old date). Hits dated after it are dropped in our code; "
            "only a backend with exact_as_of = True (a frozen corpus) can promise 'nothing "
            "after'. The model is not told the results are bounded.",
            PointInTimeWarning,
            stacklevel=3,
        )
    return _SearchEngine(
        backend,
        policy=policy,
        name=name,
        max_results=max_results,
        attempts=attempts,
        backoff_cap=float(backoff_cap),
        deadline=float(deadline),
        max_bytes=max_bytes,
        http_client=http_client,
        on_fatal=on_fatal,
        sleep=sleep,
        clock=clock or _monotonic,
        as_of=point,
        undated=kept,
        exact_as_of=exact,
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


def search_tool(
    env: Any, *, backend: SearchBackend | None = None, policy: DomainPolicy | None = None
) -> ToolSpec | HostedTool:
    """The search an agent built by ``Agent.from_env(env, ...)`` can really run.

    The provider's hosted search where the endpoint hosts it (Anthropic's own API,
    OpenAI Responses), else :func:`web_search` with ``backend``. Reads the same
    variables as ``Agent.from_env``: ``LLM_PROVIDER``, ``OPENAI_API`` and
    ``ANTHROPIC_BASE_URL`` (a third-party Anthropic-compatible endpoint).

    Raises:
        ValueError: the endpoint has no hosted search and no ``backend`` was given,
            or ``LLM_PROVIDER`` is unknown.
    """
    from collections.abc import Mapping

    if not isinstance(env, Mapping):
        raise TypeError(
            "search_tool(env=...) needs a mapping of environment variables (the process "
            f"environment or a dict), got {type(env).__name__}."
        )
    if backend is not None and not isinstance(backend, SearchBackend):
        raise TypeError(f"search_tool(backend={backend!r}) needs a search backend or None.")
    provider = (env.get("LLM_PROVIDER") or "openrouter").strip()
    hosted, why = _hosts_search(provider, env)
    if hosted:
        if policy is not None:
            return policy.native_web_search()
        from agentloop_tools.web._hosted_search import native_web_search

        return native_web_search()
    if backend is None:
        raise ValueError(
            f"{why}, and no search backend was given: pass "
            "search_tool(env, backend=agentloop_tools.web.backends.backend_from_env(env)) "
            "(set BRAVE_API_KEY, TAVILY_API_KEY, EXA_API_KEY or SEARXNG_URL), or use a "
            "provider that hosts web search (LLM_PROVIDER=anthropic on api.anthropic.com, "
            "or openai with OPENAI_API=responses)."
        )
    return web_search(backend, policy=policy)


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
        if host == "api.anthropic.com":
            return True, ""
        return False, (
            f"ANTHROPIC_BASE_URL={base!r} is a third-party Anthropic-compatible endpoint, "
            "which does not run Anthropic's hosted web search"
        )
    if provider == "openai":
        api = (env.get("OPENAI_API") or "responses").strip()
        if api == "responses":
            return True, ""
        return False, f"OPENAI_API={api!r} (Chat Completions) has no hosted web search"
    if provider in ("openrouter", "modal"):
        return False, f"LLM_PROVIDER={provider!r} has no hosted web search agentloop can request"
    raise ValueError(
        f"LLM_PROVIDER={provider!r} is not a provider agentloop knows; use anthropic, "
        "openai, openrouter or modal."
    )


# --- the engine --------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Outcome:
    """One attempt: a response, or the transport error that replaced it."""

    response: httpx.Response | None
    error: Exception | None = None
    # Timeouts and connection failures; not a body that cannot be decoded.
    retry_error: bool = False

    @property
    def transient(self) -> bool:
        return self.retry_error or (
            self.response is not None and self.response.status_code in RETRY_STATUSES
        )


class _Spacer:
    """Spaces requests to a rate across threads: each caller reserves the next free slot."""

    def __init__(self, interval: float, clock: Callable[[], float]) -> None:
        self._interval = interval
        self._clock = clock
        self._lock = threading.Lock()
        self._next = float("-inf")

    def delay(self) -> float:
        """Seconds the caller must wait before sending (its slot is reserved)."""
        with self._lock:
            now = self._clock()
            slot = max(now, self._next)
            self._next = slot + self._interval
        return slot - now


class _SearchEngine:
    def __init__(
        self,
        backend: SearchBackend,
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
        clock: Callable[[], float],
        as_of: date | None = None,
        undated: Undated = "drop",
        exact_as_of: bool = False,
    ) -> None:
        self.backend = backend
        self.as_of = as_of
        self.undated: Undated = undated
        self.exact_as_of = exact_as_of
        self.policy = policy
        self.name = name
        self.max_results = max_results
        self.attempts = attempts
        self.backoff_cap = backoff_cap
        self.deadline = deadline
        self.max_bytes = max_bytes
        self.on_fatal = on_fatal
        self._client = http_client
        self._client_lock = threading.Lock()
        self._sleep = sleep if sleep is not None else _default_sleep
        self._fatal: ToolFailure | None = None
        self._fatal_lock = threading.Lock()
        rate = getattr(backend, "requests_per_second", None)
        self._spacer = (
            _Spacer(1.0 / rate, clock) if isinstance(rate, int | float) and rate > 0 else None
        )
        secrets = getattr(backend, "secrets", ())
        self._secrets = tuple(s for s in secrets if isinstance(s, str) and len(s) >= 4)
        limit = getattr(backend, "max_query_chars", None)
        self._max_query = limit if isinstance(limit, int) and limit > 0 else None
        from tenacity import Retrying, retry_if_result, stop_after_attempt
        from tenacity.wait import wait_random_exponential

        self._jitter = wait_random_exponential(multiplier=1, max=backoff_cap)
        # One Retrying for every call: tenacity keeps each call's state apart (its
        # statistics are thread-local), and building it costs more than the search's
        # own work.
        self._retrying = Retrying(
            stop=stop_after_attempt(attempts),
            wait=self._wait,
            retry=retry_if_result(self._should_retry),
            sleep=self._sleep,
            retry_error_callback=_last_outcome,
        )

    # The handler. Everything the model can cause ends as a ToolError (or the fatal
    # BaseException); an unexpected bug is left to agentloop, which logs it.
    def search(
        self, query: object, count: object, allowed: object = None, blocked: object = None
    ) -> str:
        answer = self.answer(query, count, allowed, blocked)
        if isinstance(answer, Answer):
            return answer.text
        if answer.code in _FATAL and self.on_fatal == "raise":
            raise answer.fatal(self.name)
        raise answer.tool_error()

    def answer(
        self, query: object, count: object, allowed: object = None, blocked: object = None
    ) -> Answer | ToolFailure:
        """One call's outcome: the text and hits shown, or the failure (secrets masked)."""
        answer = self._run(query, count, allowed, blocked)
        if isinstance(answer, Answer):
            return Answer(self._scrub(answer.text), answer.hits)
        return ToolFailure(answer.code, self._scrub(answer.message), answer.remedy)

    def _run(
        self, query: object, count: object, allowed: object, blocked: object
    ) -> Answer | ToolFailure:
        with self._fatal_lock:
            if self._fatal is not None:
                return self._fatal
        # Control characters become spaces, runs of whitespace one space.
        text = " ".join(_CONTROL.sub(" ", query).split()) if isinstance(query, str) else ""
        if len(text) < MIN_QUERY_CHARS:
            return ToolFailure(
                "missing-query",
                f"{self.name} needs a query of at least {MIN_QUERY_CHARS} characters, got {query!r}"
                if isinstance(query, str)
                else f"{self.name} needs the query as a string, got {type(query).__name__}",
                "call it again with the words to search for",
            )
        limit = min(self._max_query or MAX_QUERY_CHARS, MAX_QUERY_CHARS)
        if len(text) > limit:
            return ToolFailure(
                "query-rejected",
                f"the query is {len(text)} characters; {self.backend.name} accepts at most {limit}",
                "shorten the query to a few key words and drop search operators",
            )
        wanted = self._count(count)
        narrowed = narrowing(allowed, blocked, self.as_of)
        if isinstance(narrowed, ToolFailure):
            return narrowed
        if (
            narrowed.options.allowed_domains is not None
            and allowed_hosts(self.policy, narrowed.options) == []
        ):
            # Nothing the model named is inside the tool's allowlist: no request.
            return Answer(
                render_results(
                    [],
                    policy=self.policy,
                    narrowed=narrowed.describe(),
                    hint="None of the allowed_domains given is permitted by the domain "
                    "policy; search again without them or with permitted sites.",
                ),
                (),
            )
        try:
            build = getattr(self.backend, "build_search_request", None)
            if callable(build):
                request = build(text, wanted, self.policy, narrowed.options)
            else:
                request = self.backend.build_request(text, wanted, self.policy)
        except Exception as exc:  # a user's backend: report it, never a traceback to the model
            logger.exception("search backend %s could not build a request", self.backend.name)
            return ToolFailure(
                "search-failed",
                f"the {self.backend.name} backend could not build the request "
                f"({type(exc).__name__})",
                "stop calling this tool for the rest of this turn and answer without it",
            )
        outcome, made = self._send(request)
        return self._read(outcome, wanted, made, narrowed)

    def _count(self, count: object) -> int:
        if count is None or isinstance(count, bool):
            return self.max_results
        if isinstance(count, float) and count.is_integer():
            count = int(count)
        if not isinstance(count, int):
            return self.max_results
        return min(max(count, 1), MAX_COUNT)

    def _send(self, request: httpx.Request) -> tuple[_Outcome, int]:
        """The last attempt's outcome, and how many attempts were made."""
        outcome: _Outcome = self._retrying(self._attempt, self._http(), request)
        # tenacity keeps statistics per thread, so this is this call's count.
        made = self._retrying.statistics.get("attempt_number", self.attempts)
        return outcome, made if isinstance(made, int) else self.attempts

    def _attempt(self, client: httpx.Client, request: httpx.Request) -> _Outcome:
        import httpx

        from agentloop_tools._errors import ResponseTooLarge
        from agentloop_tools.web._search import _http as _search_http

        if self._spacer is not None:
            delay = self._spacer.delay()
            if delay > 0:
                self._sleep(delay)
        # The real clock, not ``clock``: the deadline bounds the wait on a server.
        ends = _monotonic() + self.deadline
        request.extensions["timeout"] = {
            "connect": min(CONNECT_TIMEOUT_SECONDS, self.deadline),
            "read": self.deadline,
            "write": self.deadline,
            "pool": self.deadline,
        }
        _search_http.start_attempt(ends)
        try:
            streamed = client.send(request, stream=True, follow_redirects=False)
            try:
                body = _search_http.read_body(streamed, self.max_bytes, ends)
            finally:
                streamed.close()
        except (ResponseTooLarge, httpx.InvalidURL) as exc:
            # InvalidURL: httpx reads a redirect's Location even when not following it.
            logger.info("%s: %s", self.backend.name, exc)
            return _Outcome(None, exc)
        except (httpx.HTTPError, httpx.StreamError) as exc:
            logger.info("%s: %s", self.backend.name, type(exc).__name__)
            return _Outcome(None, exc, retry_error=isinstance(exc, httpx.TransportError))
        finally:
            _search_http.end_attempt()
        # The body as read (decoded) in a response of its own, so nothing decodes it twice.
        headers = [
            (key, value)
            for key, value in streamed.headers.raw
            if key.lower() not in (b"content-encoding", b"content-length", b"transfer-encoding")
        ]
        response = httpx.Response(
            streamed.status_code, headers=headers, content=body, request=request
        )
        if response.status_code in RETRY_STATUSES:
            logger.info("%s: HTTP %s", self.backend.name, response.status_code)
        return _Outcome(response)

    def _should_retry(self, outcome: _Outcome) -> bool:
        if not outcome.transient:
            return False
        if outcome.response is not None:
            # A used-up quota answers 429 too; waiting does not bring it back.
            return self._classify(outcome.response) is None
        return True

    def _wait(self, state: RetryCallState) -> float:
        outcome = state.outcome.result() if state.outcome is not None else None
        if isinstance(outcome, _Outcome) and outcome.response is not None:
            after = retry_after(outcome.response.headers.get("retry-after"))
            if after is not None:
                return min(after, self.backoff_cap)
        return float(self._jitter(state))

    def _classify(self, response: httpx.Response) -> str | None:
        classify = getattr(self.backend, "classify", None)
        if not callable(classify):
            return None
        try:
            code = classify(response.status_code, _json(response))
        except Exception:  # a user's backend: fall back to the engine's reading
            logger.exception("search backend %s could not classify a response", self.backend.name)
            return None
        return code if code in _CODES else None

    def _read(
        self, outcome: _Outcome, wanted: int, made: int, narrowed: Narrowing
    ) -> Answer | ToolFailure:
        from agentloop_tools._errors import ResponseTooLarge

        backend = self.backend.name
        if isinstance(outcome.error, ResponseTooLarge):
            return ToolFailure(
                "search-failed",
                f"{backend} sent {outcome.error} (max_bytes={self.max_bytes:,}); it was not read",
                "stop calling this tool for the rest of this turn and answer without it",
            )
        if outcome.response is None:
            error = type(outcome.error).__name__
            return ToolFailure(
                "search-failed",
                f"{backend} could not be reached after {made} attempt(s); "
                f"the last failure was {_transport_reason(outcome.error)} ({error})",
                "stop calling this tool for the rest of this turn and answer without it",
            )
        response = outcome.response
        status = response.status_code
        # Success is read as success: classify() judges only failed responses.
        code = None if 200 <= status < 300 else self._classify(response)
        if code is None and 200 <= status < 300:
            payload = _json(response)
            if payload is _UNPARSEABLE:
                return ToolFailure(
                    "search-failed",
                    f"{backend} sent an unparseable response (HTTP {status})",
                    "stop calling this tool for the rest of this turn and answer without it",
                )
            return self._render(payload, wanted, narrowed)
        if code is None:
            code = _code_for(status)
        return self._failure(code, status, response, made)

    def _render(self, payload: Any, wanted: int, narrowed: Narrowing) -> Answer | ToolFailure:
        try:
            hits = list(self.backend.parse(payload))
        except Exception as exc:  # a user's backend: report it, never a traceback to the model
            logger.exception("search backend %s could not read its response", self.backend.name)
            return ToolFailure(
                "search-failed",
                f"the {self.backend.name} response could not be read ({type(exc).__name__})",
                "stop calling this tool for the rest of this turn and answer without it",
            )
        filtered = filter_hits(
            hits,
            wanted,
            self.policy,
            narrowing=narrowed.policy,
            as_of=self.as_of,
            undated=self.undated,
        )
        text = render_filtered(filtered, self.policy, narrowed, self.as_of, scrub=self._scrub)
        return Answer(text, filtered.shown)

    def _failure(self, code: str, status: int, response: httpx.Response, made: int) -> ToolFailure:
        backend = self.backend.name
        detail = _detail(response, self._scrub)
        said = f": {detail}" if detail else ""
        if code == "not-configured":
            hint = getattr(self.backend, "setup_hint", "") or "check the search backend's key"
            failure = ToolFailure(
                "not-configured",
                f"{backend} rejected the credentials (HTTP {status}); search is unavailable "
                f"for this run (operator: {hint})",
                "do not call this tool again; answer without web search and say it was unavailable",
            )
        elif code == "quota-exceeded":
            failure = ToolFailure(
                "quota-exceeded",
                f"the {backend} quota is used up (HTTP {status}){said}",
                "do not call this tool again; answer without web search and say it was unavailable",
            )
        elif code == "query-rejected":
            return ToolFailure(
                "query-rejected",
                f"{backend} rejected the query (HTTP {status}){said}",
                "shorten the query, drop search operators and quotes, and try once more",
            )
        elif code == "rate-limited":
            return ToolFailure(
                "rate-limited",
                f"{backend} is still rate limiting after {made} attempt(s) (HTTP {status})",
                "stop calling this tool for the rest of this turn and answer with what you have",
            )
        else:
            return ToolFailure(
                "search-failed",
                f"{backend} failed (HTTP {status}"
                + (f", after {made} attempt(s)" if status in RETRY_STATUSES else "")
                + f"){said}",
                "stop calling this tool for the rest of this turn and answer without it",
            )
        with self._fatal_lock:
            if self._fatal is None:
                self._fatal = failure
            return self._fatal

    def _http(self) -> httpx.Client:
        if self._client is None:
            with self._client_lock:
                if self._client is None:
                    import httpx

                    from agentloop_tools.web._search._http import attempt_client

                    timeout = httpx.Timeout(TIMEOUT_SECONDS, connect=CONNECT_TIMEOUT_SECONDS)
                    self._client = attempt_client(timeout)
        return self._client

    def _scrub(self, text: str) -> str:
        for secret in self._secrets:
            text = text.replace(secret, "***")
        return text


@dataclass(frozen=True, slots=True)
class Answer:
    """One successful call: the text the model reads and the hits it shows."""

    text: str
    hits: tuple[SearchHit, ...]


def filter_and_render(
    hits: list[SearchHit],
    wanted: int,
    policy: DomainPolicy | None,
    *,
    scrub: Callable[[str], str] | None = None,
) -> str:
    """The policy's filter, then the renderer: the tool's work on one response.

    ``scrub`` masks the backend's secrets in every text before it is cut.
    """
    filtered = filter_hits(hits, wanted, policy)
    return render_filtered(filtered, policy, None, None, scrub=scrub)


def render_filtered(
    filtered: Filtered,
    policy: DomainPolicy | None,
    narrowed: Narrowing | None,
    as_of: date | None,
    *,
    scrub: Callable[[str], str] | None = None,
) -> str:
    return render_results(
        filtered.shown,
        withheld=filtered.withheld,
        unusable=filtered.unusable,
        narrowed_out=filtered.narrowed_out,
        after=filtered.after,
        undated=filtered.undated,
        as_of=as_of,
        policy=policy,
        narrowed=narrowed.describe() if narrowed is not None else "",
        scrub=scrub,
    )


# --- helpers -----------------------------------------------------------------------

_FATAL = frozenset({"not-configured", "quota-exceeded"})
_CODES = frozenset(
    {"not-configured", "quota-exceeded", "query-rejected", "search-failed", "rate-limited"}
)
# Every code web_search can answer with (the table is in _tool_errors).
CODES = SEARCH_CODES
_UNPARSEABLE: Any = object()


def _last_outcome(state: RetryCallState) -> Any:
    return state.outcome.result() if state.outcome is not None else None


# Bound at import: a replay harness may replace ``time`` below (see _default_sleep).
_monotonic = time.monotonic


def _default_sleep(seconds: float) -> None:
    # Looked up on the module at call time, so a test harness replaying recorded
    # traffic can replace ``time`` here and skip the waits (as for agentloop's own).
    time.sleep(seconds)


def _code_for(status: int) -> str:
    if status in (401, 403):
        return "not-configured"
    if status == 402:
        return "quota-exceeded"
    if status in (400, 422):
        return "query-rejected"
    if status == 429:
        return "rate-limited"
    return "search-failed"


def _json(response: httpx.Response) -> Any:
    try:
        return response.json()
    # RecursionError: a body of 100 KB of "[" nests deeper than the parser goes.
    except (ValueError, RecursionError):
        return _UNPARSEABLE


def _detail(response: httpx.Response, scrub: Callable[[str], str]) -> str:
    """A short, printable reason from an error body, if the API gave one.

    Scrubbed before the cut, so a key echoed in it is masked whole.
    """
    payload = _json(response)
    candidates: list[Any] = []
    if isinstance(payload, dict):
        error = payload.get("error")
        detail = payload.get("detail")
        candidates += [
            error.get("detail") if isinstance(error, dict) else error,
            error.get("message") if isinstance(error, dict) else None,
            detail.get("error") if isinstance(detail, dict) else detail,
            payload.get("message"),
        ]
    for candidate in candidates:
        if isinstance(candidate, str) and candidate.strip():
            text = scrub(_SPACE.sub(" ", candidate).strip())
            return text[:200]
    return ""


def _transport_reason(error: BaseException | None) -> str:
    import httpx

    if isinstance(error, httpx.TimeoutException):
        return "a timeout"
    if isinstance(error, httpx.ConnectError):
        return "a connection error"
    if isinstance(error, httpx.DecodingError):
        return "a response that could not be decoded"
    if isinstance(error, httpx.InvalidURL):
        return "a redirect to a URL that cannot be read (redirects are never followed)"
    return "a transport error"


def retry_after(value: str | None, *, now: datetime | None = None) -> float | None:
    """Seconds a ``Retry-After`` header asks for (an integer or an HTTP-date), or None."""
    if value is None:
        return None
    text = value.strip()
    if _RETRY_AFTER.fullmatch(text):
        return float(text)
    # "²" is a digit to str.isdigit(), 400 digits overflow a float, 5,000 digits are
    # past int()'s limit: none is a delay, so the header is treated as absent.
    if not text.isascii() or text.isdigit():
        return None
    try:
        when = email.utils.parsedate_to_datetime(text)
    except (TypeError, ValueError, IndexError, OverflowError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return max((when - (now or datetime.now(UTC))).total_seconds(), 0.0)


def _int_in(label: str, value: object, low: int, high: int) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise ValueError(
            f"web_search({label}={value!r}) is not accepted; use an integer from {low} to {high}."
        )
