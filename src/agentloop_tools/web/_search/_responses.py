"""What a search API's answer means: its failure code, its stated reason, its Retry-After.

The engine (``_engine.py``) sends; this module reads what came back, the same way for
every backend, and words each failure as the model reads it.
"""

from __future__ import annotations

import email.utils
import re
from collections.abc import Callable
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from agentloop_tools.web._tool_errors import SEARCH_CODES, ToolFailure

if TYPE_CHECKING:
    import httpx

RETRY_STATUSES = frozenset({429, 500, 502, 503, 504})
# The codes a backend's classify() may answer with; anything else is ignored.
BACKEND_CODES = frozenset(
    {"not-configured", "quota-exceeded", "query-rejected", "search-failed", "rate-limited"}
)
# The failures that end search for the run (see ``on_fatal``).
FATAL_CODES = frozenset({"not-configured", "quota-exceeded"})
# Every code web_search can answer with (the table is in _tool_errors).
CODES = SEARCH_CODES
UNPARSEABLE: Any = object()
STOP = "stop calling this tool for the rest of this turn and answer without it"
UNAVAILABLE = "do not call this tool again; answer without web search and say it was unavailable"

# A Retry-After longer than this many digits is not a delay anyone means.
_RETRY_AFTER = re.compile(r"[0-9]{1,9}")
_SPACE = re.compile(r"\s+")


def code_for(status: int) -> str:
    """The engine's own reading of a failed HTTP status."""
    if status in (401, 403):
        return "not-configured"
    if status == 402:
        return "quota-exceeded"
    if status in (400, 422):
        return "query-rejected"
    if status == 429:
        return "rate-limited"
    return "search-failed"


def failure(
    code: str, backend: str, status: int, detail: str, made: int, setup_hint: str
) -> ToolFailure:
    """The failure the model reads for a failed response classified as ``code``."""
    said = f": {detail}" if detail else ""
    if code == "not-configured":
        hint = setup_hint or "check the search backend's key"
        return ToolFailure(
            "not-configured",
            f"{backend} rejected the credentials (HTTP {status}); search is unavailable "
            f"for this run (operator: {hint})",
            UNAVAILABLE,
        )
    if code == "quota-exceeded":
        return ToolFailure(
            "quota-exceeded", f"the {backend} quota is used up (HTTP {status}){said}", UNAVAILABLE
        )
    if code == "query-rejected":
        return ToolFailure(
            "query-rejected",
            f"{backend} rejected the query (HTTP {status}){said}",
            "shorten the query, drop search operators and quotes, and try once more",
        )
    if code == "rate-limited":
        return ToolFailure(
            "rate-limited",
            f"{backend} is still rate limiting after {made} attempt(s) (HTTP {status})",
            "stop calling this tool for the rest of this turn and answer with what you have",
        )
    return ToolFailure(
        "search-failed",
        f"{backend} failed (HTTP {status}"
        + (f", after {made} attempt(s)" if status in RETRY_STATUSES else "")
        + f"){said}",
        STOP,
    )


def json_of(response: httpx.Response) -> Any:
    """The decoded JSON body, or ``UNPARSEABLE``."""
    try:
        return response.json()
    # RecursionError: a body of 100 KB of "[" nests deeper than the parser goes.
    except (ValueError, RecursionError):
        return UNPARSEABLE


def detail(response: httpx.Response, scrub: Callable[[str], str]) -> str:
    """A short, printable reason from an error body, if the API gave one.

    Scrubbed before the cut, so a key echoed in it is masked whole.
    """
    payload = json_of(response)
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


def transport_reason(error: BaseException | None) -> str:
    """What went wrong on the way, in words, for a request that got no response."""
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
