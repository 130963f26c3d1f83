"""The engine behind ``web_search`` and ``search()``: one call, from the model's words to the text.

It validates the model's arguments, spaces calls to the backend's rate across
agentloop's parallel tool threads, retries transient failures with tenacity, drops
every hit the policy does not permit and renders the rest (``_render.py``). What an
answer means (codes, reasons, Retry-After) is read in ``_responses.py``.
"""

from __future__ import annotations

import logging
import re
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import date
from typing import TYPE_CHECKING, Any, Literal

from agentloop_tools.web._faults import SEARCH_PAYWALL_TEXT, Fault, search_fault
from agentloop_tools.web._policy._policy import DomainPolicy
from agentloop_tools.web._search._filter import Filtered, filter_hits
from agentloop_tools.web._search._options import Narrowing, Undated, allowed_hosts, narrowing
from agentloop_tools.web._search._render import SearchHit, render_results
from agentloop_tools.web._search._responses import (
    BACKEND_CODES,
    FATAL_CODES,
    RETRY_STATUSES,
    STOP,
    UNPARSEABLE,
    code_for,
    detail,
    failure,
    json_of,
    retry_after,
    transport_reason,
)
from agentloop_tools.web._tool_errors import ToolFailure

if TYPE_CHECKING:
    # httpx and tenacity are imported when a tool is built, not with agentloop_tools.web:
    # the command line and the plugin read transcripts without them.
    import httpx
    from tenacity import RetryCallState

    from agentloop_tools.web._search._backends_api import SearchBackend

logger = logging.getLogger("agentloop_tools.web.search")

type OnFatal = Literal["error", "raise"]

MAX_COUNT = 20
# web_search's and search()'s defaults, written once (DEADLINE_SECONDS, MAX_BYTES below too).
DEFAULT_MAX_RESULTS = 5
DEFAULT_ATTEMPTS = 6
DEFAULT_BACKOFF_CAP = 30.0
MIN_QUERY_CHARS = 2
# No search API wants more; a longer "query" is a pasted document, refused unsent.
MAX_QUERY_CHARS = 2000
TIMEOUT_SECONDS = 15.0
CONNECT_TIMEOUT_SECONDS = 5.0
# One attempt's whole time, connect to last byte, and its decoded body: a result
# page of 20 hits is 10-100 KB of JSON.
DEADLINE_SECONDS = 15.0
MAX_BYTES = 2_000_000

_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")
# The real clock, bound at import: the deadline bounds the wait on a server even when
# a replay harness replaces ``time`` in ``_tool.py`` to skip the waits.
_monotonic = time.monotonic


def _last_outcome(state: RetryCallState) -> Any:
    return state.outcome.result() if state.outcome is not None else None


@dataclass(frozen=True, slots=True)
class Outcome:
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


class Spacer:
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


@dataclass(frozen=True, slots=True)
class SearchSettings:
    """One tool's options, checked (``build_engine``), as the engine reads them."""

    policy: DomainPolicy | None
    name: str
    max_results: int
    attempts: int
    backoff_cap: float
    deadline: float
    max_bytes: int
    on_fatal: OnFatal
    as_of: date | None = None
    undated: Undated = "drop"
    exact_as_of: bool = False


class SearchEngine:
    def __init__(
        self,
        backend: SearchBackend,
        settings: SearchSettings,
        *,
        http_client: httpx.Client | None,
        sleep: Callable[[float], None],
        clock: Callable[[], float],
    ) -> None:
        self.backend = backend
        self.settings = settings
        self._client = http_client
        self._client_lock = threading.Lock()
        self._sleep = sleep
        self._fatal: ToolFailure | None = None
        self._fatal_lock = threading.Lock()
        # A user's backend may hold anything: what is not usable counts as unset.
        rate = backend.requests_per_second
        self._spacer = (
            Spacer(1.0 / rate, clock) if isinstance(rate, int | float) and rate > 0 else None
        )
        self._secrets = tuple(s for s in backend.secrets if isinstance(s, str) and len(s) >= 4)
        limit = backend.max_query_chars
        self._max_query = limit if isinstance(limit, int) and limit > 0 else None
        from tenacity import Retrying, retry_if_result, stop_after_attempt
        from tenacity.wait import wait_random_exponential

        self._jitter = wait_random_exponential(multiplier=1, max=settings.backoff_cap)
        # One Retrying for every call: tenacity keeps each call's state apart (its
        # statistics are thread-local), and building it costs more than the search's
        # own work.
        self._retrying = Retrying(
            stop=stop_after_attempt(settings.attempts),
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
        if answer.code in FATAL_CODES and self.settings.on_fatal == "raise":
            raise answer.fatal(self.settings.name)
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
            name = self.settings.name
            return ToolFailure(
                "missing-query",
                f"{name} needs a query of at least {MIN_QUERY_CHARS} characters, got {query!r}"
                if isinstance(query, str)
                else f"{name} needs the query as a string, got {type(query).__name__}",
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
        narrowed = narrowing(allowed, blocked, self.settings.as_of)
        if isinstance(narrowed, ToolFailure):
            return narrowed
        if (
            narrowed.options.allowed_domains is not None
            and allowed_hosts(self.settings.policy, narrowed.options) == []
        ):
            # Nothing the model named is inside the tool's allowlist: no request.
            return Answer(
                render_results(
                    [],
                    policy=self.settings.policy,
                    narrowed=narrowed.describe(),
                    hint="None of the allowed_domains given is permitted by the domain "
                    "policy; search again without them or with permitted sites.",
                ),
                (),
            )
        fault = search_fault(text, self._client, self.settings.name)
        if fault is not None:
            return self._faulted(fault, wanted, narrowed)
        try:
            request = self.backend.build_search_request(
                text, wanted, self.settings.policy, narrowed.options
            )
        except Exception as exc:  # a user's backend: report it, never a traceback to the model
            logger.exception("search backend %s could not build a request", self.backend.name)
            return ToolFailure(
                "search-failed",
                f"the {self.backend.name} backend could not build the request "
                f"({type(exc).__name__})",
                STOP,
            )
        outcome, made = self._send(request)
        return self._read(outcome, wanted, made, narrowed)

    def _faulted(self, fault: Fault, wanted: int, narrowed: Narrowing) -> Answer | ToolFailure:
        """A test's fault, read as the backend's answer would be, in one attempt: nothing is
        sent, nothing retried, no wait."""
        import httpx

        if fault.kind == "timeout":
            timeout = httpx.ReadTimeout("a fault the test injected")
            return self._read(Outcome(None, timeout, retry_error=True), wanted, 1, narrowed)
        if fault.kind == "status":
            answer = httpx.Response(fault.status or 500, json={})
            return self._read(Outcome(answer), wanted, 1, narrowed)
        hint = SEARCH_PAYWALL_TEXT if fault.kind == "paywall" else ""
        text = render_results(
            [], policy=self.settings.policy, narrowed=narrowed.describe(), hint=hint
        )
        return Answer(text, ())

    def _count(self, count: object) -> int:
        if count is None or isinstance(count, bool):
            return self.settings.max_results
        if isinstance(count, float) and count.is_integer():
            count = int(count)
        if not isinstance(count, int):
            return self.settings.max_results
        return min(max(count, 1), MAX_COUNT)

    def _send(self, request: httpx.Request) -> tuple[Outcome, int]:
        """The last attempt's outcome, and how many attempts were made."""
        outcome: Outcome = self._retrying(self._attempt, self._http(), request)
        # tenacity keeps statistics per thread, so this is this call's count.
        made = self._retrying.statistics.get("attempt_number", self.settings.attempts)
        return outcome, made if isinstance(made, int) else self.settings.attempts

    def _attempt(self, client: httpx.Client, request: httpx.Request) -> Outcome:
        import httpx

        from agentloop_tools._errors import ResponseTooLarge
        from agentloop_tools.web._net import _deadline
        from agentloop_tools.web._net._body import read_body

        if self._spacer is not None:
            delay = self._spacer.delay()
            if delay > 0:
                self._sleep(delay)
        # The real clock, not ``clock``: the deadline bounds the wait on a server.
        ends = _monotonic() + self.settings.deadline
        request.extensions["timeout"] = {
            "connect": min(CONNECT_TIMEOUT_SECONDS, self.settings.deadline),
            "read": self.settings.deadline,
            "write": self.settings.deadline,
            "pool": self.settings.deadline,
        }
        _deadline.start_attempt(ends)
        try:
            streamed = client.send(request, stream=True, follow_redirects=False)
            try:
                body = read_body(streamed, self.settings.max_bytes, ends)
            finally:
                streamed.close()
        except (ResponseTooLarge, httpx.InvalidURL) as exc:
            # InvalidURL: httpx reads a redirect's Location even when not following it.
            logger.info("%s: %s", self.backend.name, exc)
            return Outcome(None, exc)
        except (httpx.HTTPError, httpx.StreamError) as exc:
            logger.info("%s: %s", self.backend.name, type(exc).__name__)
            return Outcome(None, exc, retry_error=isinstance(exc, httpx.TransportError))
        finally:
            _deadline.end_attempt()
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
        return Outcome(response)

    def _should_retry(self, outcome: Outcome) -> bool:
        if not outcome.transient:
            return False
        if outcome.response is not None:
            # A used-up quota answers 429 too; waiting does not bring it back.
            return self._classify(outcome.response) is None
        return True

    def _wait(self, state: RetryCallState) -> float:
        outcome = state.outcome.result() if state.outcome is not None else None
        if isinstance(outcome, Outcome) and outcome.response is not None:
            after = retry_after(outcome.response.headers.get("retry-after"))
            if after is not None:
                return min(after, self.settings.backoff_cap)
        return float(self._jitter(state))

    def _classify(self, response: httpx.Response) -> str | None:
        try:
            code = self.backend.classify(response.status_code, json_of(response))
        except Exception:  # a user's backend: fall back to the engine's reading
            logger.exception("search backend %s could not classify a response", self.backend.name)
            return None
        return code if code in BACKEND_CODES else None

    def _read(
        self, outcome: Outcome, wanted: int, made: int, narrowed: Narrowing
    ) -> Answer | ToolFailure:
        from agentloop_tools._errors import ResponseTooLarge

        backend = self.backend.name
        if isinstance(outcome.error, ResponseTooLarge):
            return ToolFailure(
                "search-failed",
                f"{backend} sent {outcome.error} (max_bytes={self.settings.max_bytes:,}); "
                "it was not read",
                STOP,
            )
        if outcome.response is None:
            error = type(outcome.error).__name__
            return ToolFailure(
                "search-failed",
                f"{backend} could not be reached after {made} attempt(s); "
                f"the last failure was {transport_reason(outcome.error)} ({error})",
                STOP,
            )
        response = outcome.response
        status = response.status_code
        # Success is read as success: classify() judges only failed responses.
        code = None if 200 <= status < 300 else self._classify(response)
        if code is None and 200 <= status < 300:
            payload = json_of(response)
            if payload is UNPARSEABLE:
                return ToolFailure(
                    "search-failed",
                    f"{backend} sent an unparseable response (HTTP {status})",
                    STOP,
                )
            return self._render(payload, wanted, narrowed)
        if code is None:
            code = code_for(status)
        return self._failure(code, status, response, made)

    def _render(self, payload: Any, wanted: int, narrowed: Narrowing) -> Answer | ToolFailure:
        try:
            hits = list(self.backend.parse(payload))
        except Exception as exc:  # a user's backend: report it, never a traceback to the model
            logger.exception("search backend %s could not read its response", self.backend.name)
            return ToolFailure(
                "search-failed",
                f"the {self.backend.name} response could not be read ({type(exc).__name__})",
                STOP,
            )
        filtered = filter_hits(
            hits,
            wanted,
            self.settings.policy,
            narrowing=narrowed.policy,
            as_of=self.settings.as_of,
            undated=self.settings.undated,
        )
        text = render_filtered(
            filtered, self.settings.policy, narrowed, self.settings.as_of, scrub=self._scrub
        )
        return Answer(text, filtered.shown)

    def _failure(self, code: str, status: int, response: httpx.Response, made: int) -> ToolFailure:
        hint = self.backend.setup_hint
        said = detail(response, self._scrub)
        answer = failure(code, self.backend.name, status, said, made, hint or "")
        if code not in FATAL_CODES:
            return answer
        with self._fatal_lock:
            if self._fatal is None:
                self._fatal = answer
            return self._fatal

    def _http(self) -> httpx.Client:
        if self._client is None:
            with self._client_lock:
                if self._client is None:
                    import httpx

                    from agentloop_tools.web._net._deadline import attempt_client

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
