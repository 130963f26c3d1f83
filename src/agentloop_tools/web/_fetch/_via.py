"""``web_fetch(via=tavily(key))`` / ``via=exa(key)``: pages read through a search API.

For a sandbox with no direct egress: the search provider reads the page (Tavily
``POST /extract``, Exa ``POST /contents``), our code does everything else as for
a direct fetch. The URL, the policy and a literal address are checked before any
request; the URL the provider says it read is checked again (as a redirect hop:
the policy, then the address) before its text is shown. The key travels in a
header only and is masked in everything shown of the result (URL, title, text,
errors).
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Callable
from dataclasses import replace
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

from ada_url import parse_url

from agentloop_tools.web._domains._address import parse_address, refusal
from agentloop_tools.web._faults import PAYWALL_TEXT, Fault, page_fault
from agentloop_tools.web._fetch._codes import FetchRefusal, shown
from agentloop_tools.web._fetch._settings import FetchSettings, Page, Requested, needs_javascript
from agentloop_tools.web._fetch._url_check import check_url
from agentloop_tools.web._search._backends_api import ApiPage, PageApi
from agentloop_tools.web._search._backends_builtin import ExaBackend, TavilyBackend

if TYPE_CHECKING:
    # httpx is imported when a page is read, not with agentloop_tools.web.
    import httpx

logger = logging.getLogger("agentloop_tools.web.fetch")

# JSON escapes and the provider's envelope around the text: the body may be larger.
_ENVELOPE_BYTES = 200_000
# Redirects a test's faults may chain, as a direct read follows at most five.
MAX_FAULT_REDIRECTS = 5


def page_api(via: object) -> PageApi:
    """``via`` as a page API, or a ``TypeError`` naming what is accepted."""
    if isinstance(via, TavilyBackend):
        return _Tavily(via)
    if isinstance(via, ExaBackend):
        return _Exa(via)
    if isinstance(via, PageApi):
        return via
    raise TypeError(
        f"web_fetch(via={via!r}) needs a backend that reads pages: "
        "agentloop_tools.web.backends.tavily(key) (Tavily extract) or exa(key) (Exa "
        "contents), or an object with name, build_page_request and parse_page. Brave and "
        "SearXNG have no page API."
    )


class _Tavily:
    def __init__(self, backend: TavilyBackend) -> None:
        self.backend = backend
        self.name = backend.name
        self.secrets = backend.secrets
        self.setup_hint = backend.setup_hint

    def build_page_request(self, url: str, max_chars: int) -> httpx.Request:
        import httpx

        body = {"urls": [url], "extract_depth": "basic", "format": "markdown"}
        headers = {
            "Accept": "application/json",
            "Authorization": f"Bearer {self.backend.api_key}",
        }
        return httpx.Request("POST", self.backend.extract_endpoint, json=body, headers=headers)

    def parse_page(self, payload: Any, url: str) -> ApiPage | str:
        results = _list(_get(payload, "results"))
        if results:
            item = results[0]
            text = _get(item, "raw_content")
            return ApiPage(_text(_get(item, "url")), None, text if isinstance(text, str) else "")
        for failed in _list(_get(payload, "failed_results")):
            error = _get(failed, "error")
            if isinstance(error, str) and error.strip():
                return error
        return "it returned no result for the URL"


class _Exa:
    def __init__(self, backend: ExaBackend) -> None:
        self.backend = backend
        self.name = backend.name
        self.secrets = backend.secrets
        self.setup_hint = backend.setup_hint

    def build_page_request(self, url: str, max_chars: int) -> httpx.Request:
        import httpx

        body = {"ids": [url], "text": {"maxCharacters": max_chars, "includeHtmlTags": False}}
        headers = {"Accept": "application/json", "x-api-key": self.backend.api_key}
        return httpx.Request("POST", self.backend.contents_endpoint, json=body, headers=headers)

    def parse_page(self, payload: Any, url: str) -> ApiPage | str:
        for status in _list(_get(payload, "statuses")):
            if _get(status, "status") == "error":
                error = _get(status, "error")
                tag = _get(error, "tag")
                code = _get(error, "httpStatusCode")
                said = tag if isinstance(tag, str) else "an error"
                return f"it reported {said}" + (f" (HTTP {code})" if isinstance(code, int) else "")
        results = _list(_get(payload, "results"))
        if results:
            item = results[0]
            text = _get(item, "text")
            return ApiPage(
                _text(_get(item, "url")) or _text(_get(item, "id")),
                _text(_get(item, "title")),
                text if isinstance(text, str) else "",
            )
        return "it returned no result for the URL"


def read_via(settings: FetchSettings, api: PageApi, href: str, requested: Requested) -> Page:
    """A page through a search provider's page API: checks before and after."""
    if not settings.allow_private:
        _refuse_private(href, href)
    chain, fault = _fault_hops(settings, href, requested)
    current = chain[-1]
    if fault is not None:
        got = faulted_read(api.name, fault, current, settings.timeout)
    else:
        got = read_through(
            api,
            current,
            client=settings.client,
            max_chars=settings.max_bytes,
            max_bytes=settings.max_bytes,
            deadline=time.monotonic() + settings.timeout,
            timeout=settings.timeout,
        )
    mask = _Mask(api)
    if got.url is not None:
        try:
            final = _final_url(settings, mask, api.name, current, got.url, requested)
        except FetchRefusal as refused:
            # The refusal may quote the URL the provider reported: mask it too.
            raise mask.refusal(refused) from None
        if final != current:
            chain.append(final)
    text = got.text
    notes: list[str] = [f"note: read through the {api.name} API"]
    if len(text) > settings.max_bytes:
        text = text[: settings.max_bytes]
        notes.append(
            f"note: the page is larger than {settings.max_bytes:,} characters; "
            "only its beginning was read"
        )
    if not text.strip() or needs_javascript(text):
        raise FetchRefusal(
            "no-text",
            f"{chain[-1]} has no readable text through the {api.name} API",
            "use another source, such as a static or text version of the page",
        )
    title = mask.text(" ".join(got.title.split())) if got.title else None
    return Page(tuple(chain), title, text, tuple(notes))


def _fault_hops(
    settings: FetchSettings, href: str, requested: Requested
) -> tuple[list[str], Fault | None]:
    """The redirects a test's faults make of ``href``, each hop checked before it is read;
    the chain, and the fault (not a redirect) its last URL meets."""
    chain = [href]
    fault = page_fault(href, settings.client, settings.name)
    while fault is not None and fault.kind == "redirect":
        # The provider follows a page's redirect: each hop is checked as a direct read's.
        target = str(fault.location)
        if len(chain) > MAX_FAULT_REDIRECTS:
            raise FetchRefusal(
                "fetch-error",
                f"{href} redirected more than {MAX_FAULT_REDIRECTS} times",
                "do not retry; the page may be in a redirect loop",
            )
        requested.append(("redirect", target))
        target = check_url(target, settings.policy, hop=target)
        if not settings.allow_private:
            _refuse_private(target, f"the redirect to {target}")
        chain.append(target)
        fault = page_fault(target, settings.client, settings.name)
    return chain, fault


def faulted_read(name: str, fault: Fault, href: str, timeout: float) -> ApiPage:
    """What the page API reports for a page a test faulted, made here: nothing is sent.

    Worded as the provider's own report of that failure is read (see ``_answer``).
    """
    if fault.kind == "timeout":
        raise FetchRefusal(
            "timeout",
            f"the {name} page API did not answer for {href} within {timeout:g} s",
            "try again later, or another source",
        )
    if fault.kind == "status":
        raise FetchRefusal(
            "fetch-error",
            f"{name} could not read {href}: the page answered HTTP {fault.status}",
            "do not retry this URL; use another source",
        )
    return ApiPage(None, None, PAYWALL_TEXT if fault.kind == "paywall" else "")


def _final_url(
    settings: FetchSettings, mask: _Mask, name: str, href: str, reported: str, requested: Requested
) -> str:
    """The URL the provider says it read, checked like a redirect hop, as it is shown.

    Every check judges the URL as reported; what is shown (the header, the
    ``redirect:`` line) has the key masked. A URL whose host would change under the
    mask is withheld whole: shown masked, it would name another site.
    """
    final = check_url(reported, None, hop=reported)
    if final == href:
        return href
    if mask.in_host(final):
        raise FetchRefusal(
            "fetch-error",
            f"the {name} page API reported a final URL whose host holds its key; "
            "it is withheld with its text",
            "do not retry this URL; use another source",
        )
    shown = mask.url(final)
    # The provider's final URL is a hop the audit must see, refused or not.
    requested.append(("redirect", shown))
    check_url(final, settings.policy, hop=final)
    if not settings.allow_private:
        _refuse_private(final, f"the redirect to {shown}")
    return shown


def _refuse_private(url: str, subject: str) -> None:
    """The address check of a direct fetch, for a literal host (names are not resolved:
    the provider connects, not us)."""
    host = str(parse_url(url, attributes=("hostname",))["hostname"]).strip("[]")
    literal = parse_address(host)
    reason = refusal(literal) if literal is not None else None
    if reason is not None:
        raise FetchRefusal(
            "blocked-address",
            f"{subject} names {host}, {reason}",
            "do not retry; only public sites can be read",
        )


def read_through(
    api: PageApi,
    href: str,
    *,
    client: httpx.Client | None,
    max_chars: int,
    max_bytes: int,
    deadline: float,
    timeout: float,
) -> ApiPage:
    """One page through ``api``: the page, or a ``FetchRefusal`` with the fetch codes."""
    secrets = tuple(s for s in getattr(api, "secrets", ()) if isinstance(s, str) and len(s) >= 4)
    scrub = _scrubber(secrets)
    remaining = deadline - time.monotonic()
    if remaining <= 0:
        raise FetchRefusal(
            "timeout", f"no time left to read {href}", "try again later, or another source"
        )
    try:
        request = api.build_page_request(href, max_chars)
    except Exception as error:  # a user's backend: a coded result, never a traceback
        logger.exception("page API %s could not build a request", api.name)
        raise FetchRefusal(
            "fetch-error",
            f"the {api.name} page API could not build the request ({type(error).__name__})",
            "do not retry; use another source",
        ) from None
    status, body = _exchange(api, request, client, href, max_bytes, (remaining, deadline), timeout)
    page = _answer(api, status, body, href, scrub)
    return ApiPage(page.url, page.title, scrub(page.text) if secrets else page.text)


def _exchange(
    api: PageApi,
    request: httpx.Request,
    client: httpx.Client | None,
    href: str,
    max_bytes: int,
    time_left: tuple[float, float],
    timeout: float,
) -> tuple[int, bytes]:
    """Send ``request`` once; its status and (capped) body, or a ``FetchRefusal``."""
    import httpx

    from agentloop_tools._errors import ResponseTooLarge
    from agentloop_tools.web._net import _deadline
    from agentloop_tools.web._net._body import read_body

    remaining, deadline = time_left
    request.extensions["timeout"] = httpx.Timeout(remaining).as_dict()
    owned = client is None
    if client is None:
        client = _deadline.attempt_client(httpx.Timeout(remaining))
    _deadline.start_attempt(deadline)
    try:
        streamed = client.send(request, stream=True, follow_redirects=False)
        try:
            body = read_body(streamed, max_bytes + _ENVELOPE_BYTES, deadline)
        finally:
            streamed.close()
    except ResponseTooLarge as error:
        raise FetchRefusal(
            "too-large",
            f"the {api.name} answer for {href} was {error}, over the limit",
            "use another source or a smaller document",
        ) from None
    except httpx.TimeoutException:
        raise FetchRefusal(
            "timeout",
            f"the {api.name} page API did not answer for {href} within {timeout:g} s",
            "try again later, or another source",
        ) from None
    except httpx.HTTPError as error:
        raise FetchRefusal(
            "fetch-error",
            f"the {api.name} page API could not be reached ({type(error).__name__})",
            "try again later, or another source",
        ) from None
    finally:
        _deadline.end_attempt()
        if owned:
            client.close()
    return streamed.status_code, body


def _answer(
    api: PageApi, status: int, body: bytes, href: str, scrub: Callable[[str], str]
) -> ApiPage:
    """The page in the API's answer, or a ``FetchRefusal`` saying why there is none."""
    try:
        payload = json.loads(body) if body else None
    except (ValueError, RecursionError):
        payload = None
    if not 200 <= status < 300:
        raise _status_refusal(api, status, payload, href, scrub)
    if payload is None:
        raise FetchRefusal(
            "fetch-error",
            f"the {api.name} page API sent an unparseable answer for {href} (HTTP {status})",
            "try again later, or another source",
        )
    try:
        page = api.parse_page(payload, href)
    except Exception as error:  # a user's backend
        logger.exception("page API %s could not read its answer", api.name)
        raise FetchRefusal(
            "fetch-error",
            f"the {api.name} answer for {href} could not be read ({type(error).__name__})",
            "do not retry; use another source",
        ) from None
    if isinstance(page, str):
        reason = scrub(" ".join(page.split()))[:200]
        raise FetchRefusal(
            "fetch-error",
            f"{api.name} could not read {href}: {reason}",
            "do not retry this URL; use another source",
        )
    return page


def _status_refusal(
    api: PageApi, status: int, payload: Any, href: str, scrub: Callable[[str], str]
) -> FetchRefusal:
    detail = _detail(payload, scrub)
    said = f": {detail}" if detail else ""
    if status in (401, 403):
        hint = getattr(api, "setup_hint", "") or "check the API key"
        return FetchRefusal(
            "fetch-error",
            f"{api.name} rejected the credentials (HTTP {status}); pages cannot be read "
            f"for this run (operator: {hint})",
            "do not call this tool again; answer without it and say pages were unavailable",
        )
    if status in (402, 432, 433):
        return FetchRefusal(
            "fetch-error",
            f"the {api.name} quota is used up (HTTP {status}){said}",
            "do not call this tool again; answer without it and say pages were unavailable",
        )
    if status == 429 or status >= 500:
        return FetchRefusal(
            "fetch-error",
            f"the {api.name} page API answered {status} for {href}{said}",
            "it may be temporary: retry later, or use another source",
        )
    return FetchRefusal(
        "fetch-error",
        f"the {api.name} page API answered {status} for {shown(href)}{said}",
        "do not retry the same request; use another source",
    )


def _scrubber(secrets: tuple[str, ...]) -> Callable[[str], str]:
    def scrub(text: str) -> str:
        for secret in secrets:
            text = text.replace(secret, "***")
        return text

    return scrub


class _Mask:
    """The page API's keys masked in what the model is shown of its result."""

    def __init__(self, api: PageApi) -> None:
        secrets = getattr(api, "secrets", ())
        self.secrets = tuple(s for s in secrets if isinstance(s, str) and len(s) >= 4)
        self.text = _scrubber(self.secrets)
        # A URL may carry the key percent-encoded (a custom key's "+", "/", "=").
        encoded = {quote(s, safe=safe) for s in self.secrets for safe in ("", "/")}
        self.url = _scrubber(tuple(sorted(set(self.secrets) | encoded, key=len, reverse=True)))

    def in_host(self, url: str) -> bool:
        """Whether the key is in the host a browser reads (lower-cased, decoded) or the
        mask would change that host."""
        host = _host(url)
        if any(secret.lower() in host for secret in self.secrets):
            return True
        return _host(self.url(url)) != host

    def refusal(self, refused: FetchRefusal) -> FetchRefusal:
        refused.failure = replace(refused.failure, message=self.url(refused.failure.message))
        refused.args = (str(refused.failure),)
        return refused


def _host(url: str) -> str:
    try:
        return str(parse_url(url, attributes=("hostname",))["hostname"]).lower()
    except ValueError:
        return ""


def _detail(payload: Any, scrub: Callable[[str], str]) -> str:
    candidates: list[Any] = []
    if isinstance(payload, dict):
        error, detail = payload.get("error"), payload.get("detail")
        candidates += [
            error.get("message") if isinstance(error, dict) else error,
            detail.get("error") if isinstance(detail, dict) else detail,
            payload.get("message"),
        ]
    for candidate in candidates:
        if isinstance(candidate, str) and candidate.strip():
            return scrub(" ".join(candidate.split()))[:200]
    return ""


def _get(value: Any, key: str) -> Any:
    return value.get(key) if isinstance(value, dict) else None


def _list(value: Any) -> list[Any]:
    return [item for item in value if isinstance(item, dict)] if isinstance(value, list) else []


def _text(value: Any) -> str | None:
    return value.strip() if isinstance(value, str) and value.strip() else None
