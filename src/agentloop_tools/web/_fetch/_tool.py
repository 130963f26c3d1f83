"""web_fetch: a client-side tool that reads one web page for an agent, safely.

For the URL the model gives, and again for every redirect hop, in this order:

1. parse it as a browser does (the policy's own WHATWG parser) and refuse bad
   URLs, other schemes, userinfo, over-long URLs and single-label hosts;
2. ask the domain policy, before the cache, DNS, robots.txt or any request;
3. resolve the host once and refuse if ANY address is not public (with our
   transport, when its first connection is opened, so a replayed request never
   asks DNS; with the caller's ``http_client``, before the request);
4. connect to an address that was checked (``_fetch_transport``), never to the name;
5. follow at most five redirects by hand, each hop through 1-4 again.

The body is streamed under a byte cap and a total deadline, turned into text by
``_extract``, cached for ``cache_ttl`` seconds and served in pages of
``max_chars`` characters.
"""

from __future__ import annotations

import logging
import socket
import threading
import time
from collections.abc import Callable, Sequence
from contextlib import closing
from dataclasses import dataclass
from typing import Any, Literal

import httpx
from ada_url import join_url, parse_url
from agentloop import ToolSpec, tool
from cachetools import TTLCache

from agentloop_tools import __version__
from agentloop_tools._errors import ExtractionError
from agentloop_tools.web._domains._address import parse_address, refusal
from agentloop_tools.web._fetch._body import declared_length, read_capped
from agentloop_tools.web._fetch._codes import FetchRefusal, shown
from agentloop_tools.web._fetch._extract import EXTRA_HINT, Extracted, extract, kind_of
from agentloop_tools.web._fetch._robots import RobotsRules, robots_url
from agentloop_tools.web._fetch._transport import PinnedBackend, pinned_transport
from agentloop_tools.web._fetch._url_check import check_url
from agentloop_tools.web._fetch._via import PageApi, page_api, read_through
from agentloop_tools.web._policy._policy import DomainPolicy, robots_policy
from agentloop_tools.web._search._describe import fetch_description
from agentloop_tools.web._transcript._fetch_record import header, requested_trailer

type Resolver = Callable[[str], Sequence[str]]
# What was requested after the URL asked for: ("redirect" | "robots", url), in order.
type Requested = list[tuple[Literal["redirect", "robots"], str]]

logger = logging.getLogger("agentloop_tools.web.fetch")

MAX_REDIRECTS = 5
DEFAULT_USER_AGENT = (
    f"agentloop-tools-web_fetch/{__version__} (+https://github.com/based-models/agentloop-tools)"
)
_REDIRECTS = frozenset({301, 302, 303, 307, 308})
_ACCEPT = "text/html,application/xhtml+xml,text/plain;q=0.9,application/pdf;q=0.9,*/*;q=0.5"
# Pages without readable text that say they need JavaScript, in the words sites use.
_NEEDS_JS = ("enable javascript", "javascript is required", "javascript is disabled")
_CACHE_SIZE = 128
_ROBOTS_TTL = 3600.0
_ROBOTS_BYTES = 512_000

_PARAMETERS: dict[str, Any] = {
    "type": "object",
    "properties": {
        "url": {
            "type": "string",
            "description": "The full http(s) URL of the page to read.",
        },
        "start": {
            "type": ["integer", "null"],
            "description": (
                "Character offset to continue a truncated page from (the result says "
                "which); null for the beginning."
            ),
        },
    },
    "required": ["url", "start"],
    "additionalProperties": False,
}
_DESCRIPTION = (
    "Read one web page (HTML, plain text, JSON or PDF) and return its title, final URL "
    "and main text. Long pages come in parts: call again with the same url and the "
    "start offset the result gives. Errors start with a [code] and say what to do."
)


@dataclass(frozen=True, slots=True)
class _Page:
    """One fetched document, as cached: everything needed to serve any part of it."""

    chain: tuple[str, ...]  # the requested URL, each redirect hop, the final URL last
    title: str | None
    text: str
    notes: tuple[str, ...]
    robots: tuple[str, ...] = ()  # each robots.txt requested and its redirect hops


def web_fetch(
    *,
    policy: DomainPolicy | None = None,
    name: str = "web_fetch",
    max_chars: int = 100_000,
    max_bytes: int = 5_000_000,
    timeout: float = 15.0,
    cache_ttl: float = 900,
    respect_robots: bool = False,
    user_agent: str = DEFAULT_USER_AGENT,
    allow_private_networks: bool = False,
    http_client: httpx.Client | None = None,
    resolver: Resolver | None = None,
    via: object = None,
) -> ToolSpec:
    """A local agentloop tool that reads a web page: policy first, SSRF-proof, bounded, cached.

    Args:
        policy: the domain policy every URL and redirect hop must pass; None for none.
        name: the tool's name as the model sees it.
        max_chars: characters of text per result; longer pages are served in parts.
        max_bytes: most bytes of body ever read (after decompression).
        timeout: seconds the whole fetch may take, redirects and robots.txt included.
        cache_ttl: seconds a fetched page is served again without a request (0: no cache).
        respect_robots: fetch the site's robots.txt and obey it for ``user_agent``.
        user_agent: the User-Agent header, and the name robots.txt rules are read for.
        allow_private_networks: connect to loopback, private and link-local addresses
            too (for intranet tools); never the default.
        http_client: an ``httpx.Client`` to send requests through (a test seam, or a
            proxy). The URL, policy, address and redirect checks still run here; only
            the connection is the client's.
        resolver: host name to IP address strings (default: the system resolver).
        via: read pages through a search API instead of directly: the same backend
            object ``web_search`` takes, ``backends.tavily(key)`` (Tavily extract) or
            ``backends.exa(key)`` (Exa contents). The URL and policy checks run
            before any request, and the URL the provider read is checked as a
            redirect hop; ``http_client`` then sends to the provider's API. Not with
            ``respect_robots`` or ``resolver`` (the provider connects, not us).

    Returns:
        An ``agentloop.ToolSpec`` taking ``url`` and ``start``.

    Raises:
        ValueError: a limit that is not a positive number, an empty ``name`` or a
            ``user_agent`` that cannot be a header.
        TypeError: an option of the wrong type (``policy``, ``http_client``, ``resolver``).
    """
    fetcher = build_fetcher(
        policy=policy,
        name=name,
        max_chars=max_chars,
        max_bytes=max_bytes,
        timeout=timeout,
        cache_ttl=cache_ttl,
        respect_robots=respect_robots,
        user_agent=user_agent,
        allow_private_networks=allow_private_networks,
        http_client=http_client,
        resolver=resolver,
        via=via,
    )
    description = fetch_description(policy=policy, via=fetcher.via_name)

    def fetch(url: str, start: int | None = None) -> str:
        return fetcher.fetch(url, start)

    fetch.__doc__ = description
    # agentloop abandons a call past timeout_seconds but cannot stop its thread; the
    # fetch stops itself at ``timeout``, so the loop's bound is only a backstop.
    return tool(_PARAMETERS, name=name, description=description, timeout_seconds=timeout + 15)(
        fetch
    )


def build_fetcher(
    *,
    policy: DomainPolicy | None,
    name: str,
    max_chars: int,
    max_bytes: int,
    timeout: float,
    cache_ttl: float,
    respect_robots: bool,
    user_agent: str,
    allow_private_networks: bool,
    http_client: httpx.Client | None,
    resolver: Resolver | None,
    via: object,
) -> Fetcher:
    """Every option checked, and the engine ``web_fetch`` (and ``fetch()``) runs on."""
    _check_options(policy, name, user_agent, http_client, resolver)
    api = page_api(via) if via is not None else None
    if api is not None and respect_robots:
        raise ValueError(
            "web_fetch(via=..., respect_robots=True) cannot obey robots.txt: the provider "
            "reads the page, not us. Leave respect_robots out with via=, or fetch directly."
        )
    if api is not None and resolver is not None:
        raise ValueError(
            "web_fetch(via=..., resolver=...): the provider resolves and connects, so a "
            "resolver would never be asked. Leave resolver out with via=."
        )
    return Fetcher(
        policy=policy,
        max_chars=_positive_int(max_chars, "max_chars"),
        max_bytes=_positive_int(max_bytes, "max_bytes"),
        timeout=_positive_number(timeout, "timeout"),
        cache_ttl=_non_negative(cache_ttl, "cache_ttl"),
        respect_robots=respect_robots,
        user_agent=user_agent,
        allow_private_networks=allow_private_networks,
        http_client=http_client,
        resolver=resolver,
        name=name,
        via=api,
    )


class Fetcher:
    """The engine behind one web_fetch tool (its caches live as long as the tool)."""

    def __init__(
        self,
        *,
        policy: DomainPolicy | None,
        max_chars: int,
        max_bytes: int,
        timeout: float,
        cache_ttl: float,
        respect_robots: bool,
        user_agent: str,
        allow_private_networks: bool,
        http_client: httpx.Client | None,
        resolver: Resolver | None,
        name: str = "web_fetch",
        via: PageApi | None = None,
    ) -> None:
        self._via = via
        # The cache is namespaced per way of reading: a page read through one API
        # is never served as another's (or as a direct read).
        self._namespace = f"via:{via.name}" if via is not None else "direct"
        self._policy = policy
        self._robots_policy = robots_policy(policy) if policy is not None else None
        self._max_chars = max_chars
        self._max_bytes = max_bytes
        self._timeout = timeout
        self._respect_robots = respect_robots
        self._user_agent = user_agent
        self._allow_private = allow_private_networks
        self._client = http_client
        self._resolver = resolver
        self._name = name
        self._lock = threading.Lock()
        self._pages: TTLCache[tuple[str, str, int], _Page] | None = (
            TTLCache(maxsize=_CACHE_SIZE, ttl=cache_ttl) if cache_ttl > 0 else None
        )
        self._robots: TTLCache[str, RobotsRules] = TTLCache(maxsize=_CACHE_SIZE, ttl=_ROBOTS_TTL)

    def fetch(self, url: object, start: object = None) -> str:
        """One tool call: the page text (a part of it), or a ``ToolError``.

        Every URL requested is in the result, a failure's included, so the audit
        sees each one whatever the tool is named.
        """
        requested: Requested = []
        try:
            return self._render(self.page(url, start, requested), _start(start))
        except FetchRefusal as refused:
            raise refused.tool_error(requested_trailer(requested)) from None
        except Exception as error:
            # A bug, or a library failing on hostile bytes: still a coded result that
            # names what was requested (agentloop's own "Error: Type" would not).
            logger.exception("web_fetch failed unexpectedly on %r", url)
            crash = FetchRefusal(
                "fetch-error",
                f"reading {shown(url)} failed unexpectedly ({type(error).__name__})",
                "do not retry this URL; use another source",
            )
            raise crash.tool_error(requested_trailer(requested)) from None

    @property
    def via_name(self) -> str | None:
        """The page API pages are read through, or None for a direct read."""
        return self._via.name if self._via is not None else None

    def page(self, url: object, start: object, requested: Requested) -> _Page:
        """The whole document for one call (from the cache, or read), or a ``FetchRefusal``."""
        _start(start)
        href = self.check_url(url, hop=None)
        page = self._cached(href)
        if page is None:
            if self._via is not None:
                page = self._read_via(self._via, href, requested)
            else:
                page = self._download(href, requested)
        return page

    def _read_via(self, api: PageApi, href: str, requested: Requested) -> _Page:
        """A page through a search provider's page API: checks before and after."""
        if not self._allow_private:
            host = str(parse_url(href, attributes=("hostname",))["hostname"]).strip("[]")
            literal = parse_address(host)
            reason = refusal(literal) if literal is not None else None
            if reason is not None:
                raise FetchRefusal(
                    "blocked-address",
                    f"{href} names {host}, {reason}",
                    "do not retry; only public sites can be read",
                )
        deadline = time.monotonic() + self._timeout
        got = read_through(
            api,
            href,
            client=self._client,
            max_chars=self._max_bytes,
            max_bytes=self._max_bytes,
            deadline=deadline,
            timeout=self._timeout,
        )
        chain = [href]
        if got.url is not None:
            final = check_url(got.url, None, hop=got.url)
            if final != href:
                # The provider's final URL is a hop the audit must see, refused or not.
                requested.append(("redirect", final))
                chain.append(self.check_url(final, hop=final))
        text = got.text
        notes: list[str] = [f"note: read through the {api.name} API"]
        if len(text) > self._max_bytes:
            text = text[: self._max_bytes]
            notes.append(
                f"note: the page is larger than {self._max_bytes:,} characters; "
                "only its beginning was read"
            )
        if not text.strip() or _needs_javascript(text):
            raise FetchRefusal(
                "no-text",
                f"{chain[-1]} has no readable text through the {api.name} API",
                "use another source, such as a static or text version of the page",
            )
        title = " ".join(got.title.split()) if got.title else None
        page = _Page(tuple(chain), title, text, tuple(notes))
        self._remember(page)
        return page

    # Steps 1 and 2 ---------------------------------------------------------------

    def check_url(self, url: object, *, hop: str | None) -> str:
        """Steps 1 and 2 for one URL under this tool's policy (see ``_fetch_url``)."""
        return check_url(url, self._policy, hop=hop)

    # The cache -------------------------------------------------------------------

    def _cached(self, href: str) -> _Page | None:
        if self._pages is None:
            return None
        with self._lock:
            page = self._pages.get((self._namespace, href, self._max_bytes))
        if page is None:
            return None
        # A hit is served only if every hop that produced it passes the policy now,
        # so the cache can never answer with a page the policy refuses.
        for hop in page.chain[1:]:
            self.check_url(hop, hop=hop)
        return page

    def _remember(self, page: _Page) -> None:
        if self._pages is not None:
            with self._lock:
                self._pages[(self._namespace, page.chain[0], self._max_bytes)] = page

    # Steps 3 to 5 ----------------------------------------------------------------

    def _download(self, href: str, requested: Requested) -> _Page:
        trip = self._trip(time.monotonic() + self._timeout, requested)
        chain = [href]
        try:
            current = href
            for hops in range(MAX_REDIRECTS + 1):
                self._admit(trip, current)
                if self._respect_robots:
                    self._obey_robots(trip, current)
                kind: Literal["redirect"] | None = "redirect" if hops else None
                with closing(self._send(trip, current, kind)) as response:
                    location = response.headers.get("location")
                    if response.status_code in _REDIRECTS and location:
                        if hops == MAX_REDIRECTS:
                            raise FetchRefusal(
                                "fetch-error",
                                f"{href} redirected more than {MAX_REDIRECTS} times "
                                f"(last to {shown(location)})",
                                "do not retry; the page may be in a redirect loop",
                            )
                        current = self._follow(current, location)
                        chain.append(current)
                        continue
                    self._refuse_status(response, current)
                    page = self._read(response, tuple(chain), trip.deadline)
                    robots = tuple(url for what, url in requested if what == "robots")
                    page = _Page(page.chain, page.title, page.text, page.notes, robots)
                    self._remember(page)
                    return page
            raise AssertionError("unreachable: the loop returns or raises")  # pragma: no cover
        finally:
            if trip.backend is not None:
                trip.client.close()

    def _trip(self, deadline: float, requested: Requested) -> _Trip:
        """The connection state of one fetch: its own pinned client, or the caller's."""
        if self._client is not None:
            return _Trip(deadline, self._client, None, requested)

        def admit(host: str) -> list[str]:
            # ``trip`` is bound below, before any request can reach this.
            return self._addresses(host, trip.url, deadline)

        transport, backend = pinned_transport(admit, deadline)
        client = httpx.Client(transport=transport, follow_redirects=False, trust_env=False)
        trip = _Trip(deadline, client, backend, requested)
        return trip

    def _follow(self, current: str, location: str, *, robots: bool = False) -> str:
        try:
            target = join_url(current, location.strip())
        except ValueError:
            raise FetchRefusal(
                "fetch-error",
                f"{current} redirected to {shown(location)}, which is not a valid URL",
                "do not retry; the site's redirect is broken",
            ) from None
        if robots:
            return check_url(target, self._robots_policy, hop=target)
        return self.check_url(target, hop=target)

    def _admit(self, trip: _Trip, href: str) -> None:
        """Step 3 before the request, when the caller's client does the connecting.

        With our own transport the same check runs when the connection is opened
        (``PinnedBackend``), before any byte is sent, and pins the answers.
        """
        host = str(parse_url(href, attributes=("hostname",))["hostname"]).strip("[]").lower()
        if trip.backend is not None:
            # An address literal needs no DNS: checked here too, so a request that a
            # cassette would answer (no connection, so no connect-time check) is
            # refused as the live tool refuses it. Names are checked only on connect.
            if parse_address(host) is not None:
                self._addresses(host, href, trip.deadline)
            return
        if host not in trip.checked:  # one lookup per host per fetch, never a second
            trip.checked[host] = self._addresses(host, href, trip.deadline)

    def _addresses(self, host: str, href: str, deadline: float) -> list[str]:
        """Step 3: resolve once and refuse if ANY address is not public."""
        literal = parse_address(host)
        answers = [str(literal)] if literal is not None else self._resolve(host, deadline)
        addresses = []
        for answer in answers:
            address = parse_address(answer) if isinstance(answer, str) else None
            if address is None:
                raise FetchRefusal(
                    "blocked-address",
                    f"the resolver answered {shown(answer)} for {host}, which is not an IP address",
                    "fix the resolver passed to web_fetch(resolver=...)",
                )
            if not self._allow_private:
                reason = refusal(address)
                if reason is not None:
                    verb = "is" if literal is not None else "resolves to"
                    raise FetchRefusal(
                        "blocked-address",
                        f"{href} {verb} {address}, {reason}",
                        "do not retry; only public internet addresses can be fetched",
                    )
            addresses.append(str(address))
        return addresses

    def _resolve(self, host: str, deadline: float) -> list[str]:
        resolver = self._resolver or _system_resolver
        # getaddrinfo takes no timeout (nor need a custom resolver): run it on a daemon
        # thread and stop waiting at the deadline; a late answer is then unused.
        box: list[Sequence[str] | BaseException] = []

        def lookup() -> None:
            try:
                box.append(resolver(host))
            except BaseException as error:  # handed to the caller's thread below
                box.append(error)

        worker = threading.Thread(target=lookup, daemon=True, name="web_fetch-resolve")
        worker.start()
        worker.join(max(deadline - time.monotonic(), 0))
        if not box:
            raise FetchRefusal(
                "timeout", f"looking up {host} took too long", "try again later or another source"
            )
        result = box[0]
        if isinstance(result, BaseException):
            raise FetchRefusal(
                "fetch-error",
                f"{host} could not be resolved ({type(result).__name__}: {result})",
                "check the domain name; do not retry a name that does not exist",
            )
        try:
            answers = [result] if isinstance(result, str) else list(result)
        except TypeError:
            raise FetchRefusal(
                "blocked-address",
                f"the resolver answered {shown(result)} for {host}, not a list of addresses",
                "fix the resolver passed to web_fetch(resolver=...)",
            ) from None
        if not answers:
            raise FetchRefusal(
                "fetch-error",
                f"{host} has no address",
                "check the domain name; do not retry a name that does not exist",
            )
        return answers

    def _send(
        self, trip: _Trip, href: str, kind: Literal["redirect", "robots"] | None
    ) -> httpx.Response:
        """Request ``href``, recording it as ``kind`` first (None: the URL asked for)."""
        remaining = trip.deadline - time.monotonic()
        if remaining <= 0:
            raise FetchRefusal(
                "timeout",
                f"no time left to request {href} within {self._timeout:g} s",
                "try again later, or another source",
            )
        trip.url = href
        if kind is not None:
            trip.requested.append((kind, href))
        request = trip.client.build_request(
            "GET",
            href,
            headers={
                "User-Agent": self._user_agent,
                "Accept": _ACCEPT,
                "Accept-Encoding": "gzip, deflate",
            },
            timeout=httpx.Timeout(remaining),
        )
        try:
            return trip.client.send(request, stream=True, follow_redirects=False)
        except httpx.InvalidURL:
            # httpx reads a Location even when not following it (``next_request``), and
            # refuses some that browsers accept (``data:,x``, ``http:\\host\``).
            raise FetchRefusal(
                "fetch-error",
                f"{href} answered with a redirect whose Location cannot be followed",
                "do not retry; the site's redirect is broken",
            ) from None
        except httpx.HTTPError as error:
            # A host refused at connect time: report the refusal, not httpx's wrapper.
            refused = trip.backend.refused if trip.backend is not None else None
            if isinstance(refused, FetchRefusal):
                raise refused from None
            if isinstance(error, httpx.TimeoutException):
                raise FetchRefusal(
                    "timeout",
                    f"{href} did not answer within {self._timeout:g} s",
                    "try again later, or another source",
                ) from None
            raise FetchRefusal(
                "fetch-error",
                f"{href} could not be reached ({type(error).__name__}: {error})",
                "try again later, or another source",
            ) from None

    def _refuse_status(self, response: httpx.Response, href: str) -> None:
        status = response.status_code
        if status < 400 and status not in _REDIRECTS:
            return
        if status in _REDIRECTS:
            message = f"{href} answered {status} without a Location to follow"
            remedy = "do not retry; the site's redirect is broken"
        elif status in (404, 410):
            message = f"{href} answered {status} {response.reason_phrase}: there is no such page"
            remedy = "do not retry this URL; search for the page's current address"
        elif status in (401, 403, 451):
            message = f"{href} answered {status} {response.reason_phrase}"
            remedy = "do not retry; the page is not public. Use another source"
        elif status == 429 or status >= 500:
            message = f"{href} answered {status} {response.reason_phrase}"
            remedy = "it may be temporary: retry later, or use another source"
        else:
            message = f"{href} answered {status} {response.reason_phrase}"
            remedy = "do not retry the same request; use another source"
        raise FetchRefusal("fetch-error", message, remedy)

    def _obey_robots(self, trip: _Trip, href: str) -> None:
        where = robots_url(href)
        with self._lock:
            rules = self._robots.get(where)
        if rules is None:
            rules = self._read_robots(trip, where)
            with self._lock:
                self._robots[where] = rules
        if not rules.permits(href, self._user_agent):
            raise FetchRefusal(
                "disallowed-by-robots",
                f"{where} does not let {self._user_agent.split('/')[0]} fetch {href}",
                "do not retry; the site asks crawlers not to read this page",
            )

    def _read_robots(self, trip: _Trip, where: str) -> RobotsRules:
        """robots.txt through steps 1-4 and at most five redirects; 4xx means no rules.

        Judged by the policy widened to hosts (``robots_policy``): a path allowlist
        names pages, and every page's rules are in ``/robots.txt``.
        """
        reason = "it redirected more than five times"
        try:
            current = check_url(where, self._robots_policy, hop=where)
            for _ in range(MAX_REDIRECTS + 1):
                self._admit(trip, current)
                with closing(self._send(trip, current, "robots")) as response:
                    location = response.headers.get("location")
                    if response.status_code in _REDIRECTS and location:
                        current = self._follow(current, location, robots=True)
                        continue
                    if 400 <= response.status_code < 500:
                        return RobotsRules(None)
                    if response.status_code >= 400:
                        reason = f"it answered {response.status_code}"
                        break
                    body = b"".join(read_capped(response, _ROBOTS_BYTES, trip.deadline))
                    return RobotsRules(body.decode("utf-8", errors="replace"))
        except FetchRefusal as refused:
            if refused.code in ("blocked-by-policy", "blocked-address"):
                raise
            reason = refused.failure.message
        # Unreachable or erroring robots.txt: crawlers treat that as "stay out".
        raise FetchRefusal(
            "disallowed-by-robots",
            f"{where} could not be read ({reason}), so the site's rules are unknown",
            "try again later, or use another source",
        )

    # Reading the body ------------------------------------------------------------

    def _read(self, response: httpx.Response, chain: tuple[str, ...], deadline: float) -> _Page:
        final = chain[-1]
        content_type = response.headers.get("content-type")
        declared = declared_length(response)
        chunks = read_capped(response, self._max_bytes + 1, deadline)
        first = next(chunks, b"")
        kind = kind_of(content_type, first)
        if kind is None:
            raise FetchRefusal(
                "unsupported-content",
                f"{final} is {content_type or 'of an unknown type'}, not a page with text",
                "web_fetch reads HTML, text, JSON and PDF; use another source",
            )
        if kind == "pdf" and declared is not None and declared > self._max_bytes:
            raise FetchRefusal(
                "too-large",
                f"{final} is a {declared:,}-byte PDF, over the {self._max_bytes:,}-byte limit",
                "a cut PDF cannot be read: use another source or a smaller document",
            )
        body = bytearray(first)
        for chunk in chunks:
            body += chunk
        truncated = len(body) > self._max_bytes
        del body[self._max_bytes :]
        try:
            extracted = extract(kind, bytes(body), content_type, deadline=deadline)
        except ExtractionError as error:
            if truncated:
                raise FetchRefusal(
                    "too-large",
                    f"{final} is larger than {self._max_bytes:,} bytes and its first part "
                    f"could not be read ({error})",
                    "use another source or a smaller document",
                ) from None
            raise FetchRefusal(
                "unsupported-content",
                f"{final} could not be read: {error}",
                "use another source" if "pypdf" not in str(error) else EXTRA_HINT,
            ) from None
        return self._page(extracted, chain, kind, truncated)

    def _page(self, extracted: Extracted, chain: tuple[str, ...], kind: str, cut: bool) -> _Page:
        final = chain[-1]
        text = extracted.text
        if not text.strip() or _needs_javascript(text):
            if cut:
                raise FetchRefusal(
                    "too-large",
                    f"{final} is larger than {self._max_bytes:,} bytes and its first part "
                    "has no readable text",
                    "use another source",
                )
            raise FetchRefusal(
                "no-text",
                f"{final} has no readable text; the page may need JavaScript to show it",
                "use another source, such as a static or text version of the page",
            )
        notes: list[str] = list(extracted.notes)
        if cut:
            notes.append(
                f"note: the page is larger than {self._max_bytes:,} bytes; "
                "only its beginning was read"
            )
        if kind == "html" and extracted.extractor == "basic":
            notes.append(
                f"note: plain HTML reading; {EXTRA_HINT} for main-text extraction and PDFs"
            )
        return _Page(chain, extracted.title, text, tuple(notes))

    # The result ------------------------------------------------------------------

    def render(self, page: _Page, offset: int) -> str:
        """The text the model reads for one part of ``page`` (``start=offset``)."""
        return self._render(page, offset)

    def _render(self, page: _Page, offset: int) -> str:
        total = len(page.text)
        if offset > 0 and offset >= total:
            raise FetchRefusal(
                "invalid-start",
                f"start={offset} is past the end of {page.chain[-1]} ({total:,} characters)",
                f"use a start between 0 and {max(total - 1, 0)}",
            )
        end = min(offset + self._max_chars, total)
        notes = [*page.notes, f"characters: {offset}-{end} of {total}"]
        text = page.text[offset:end]
        if end < total:
            text += (
                f"\n\n[truncated: {total - end:,} more characters; call {self._name} again "
                f"with the same url and start={end} to continue]"
            )
        head = header(page.chain[-1], page.chain[1:-1], page.title, notes, page.robots)
        return f"{head}\n\n{text}"


class _Trip:
    """One fetch's connection state.

    Attributes:
        deadline: ``time.monotonic()`` value the whole fetch must end by.
        client: the client requests go through (ours, or the caller's).
        backend: our pinning backend, when the client is ours; it checks each host
            when it first connects to it.
        checked: hosts checked before their request (the caller's client), so each
            is looked up once per fetch.
        url: the URL being requested, to name it in a refusal raised at connect time.
        requested: every URL requested after the one asked for, as it is sent.
    """

    def __init__(
        self,
        deadline: float,
        client: httpx.Client,
        backend: PinnedBackend | None,
        requested: Requested,
    ) -> None:
        self.deadline = deadline
        self.client = client
        self.backend = backend
        self.requested = requested
        self.checked: dict[str, list[str]] = {}
        self.url = ""


def _needs_javascript(text: str) -> bool:
    """A short text that only asks for JavaScript is a page that did not render."""
    return len(text) < 400 and any(phrase in text.lower() for phrase in _NEEDS_JS)


def _start(start: object) -> int:
    if start is None:
        return 0
    if isinstance(start, bool) or not isinstance(start, int) or start < 0:
        raise FetchRefusal(
            "invalid-start",
            f"start={shown(start)} is not a character offset",
            "pass null for the beginning, or the start value a truncated result gave",
        )
    return start


def _system_resolver(host: str) -> list[str]:
    infos = socket.getaddrinfo(host, None, type=socket.SOCK_STREAM)
    return list(dict.fromkeys(str(info[4][0]) for info in infos))


def _check_options(
    policy: object, name: object, user_agent: object, http_client: object, resolver: object
) -> None:
    if policy is not None and not isinstance(policy, DomainPolicy):
        raise TypeError(
            f"policy must be a DomainPolicy (DomainPolicy.allow([...]) or .block([...])) "
            f"or None, got {type(policy).__name__}."
        )
    if not isinstance(name, str) or not name.strip():
        raise ValueError(f"name must be a non-empty tool name, got {name!r}.")
    if (
        not isinstance(user_agent, str)
        or not user_agent.strip()
        or any(ch in user_agent for ch in "\r\n\x00")
    ):
        raise ValueError(
            f"user_agent must be a non-empty one-line header value, got {user_agent!r}."
        )
    if http_client is not None and not isinstance(http_client, httpx.Client):
        raise TypeError(
            "http_client must be an httpx.Client (a synchronous client: tools run in "
            f"threads), got {type(http_client).__name__}."
        )
    if resolver is not None and not callable(resolver):
        raise TypeError(
            "resolver must be a callable taking a host name and returning IP address "
            f"strings, got {type(resolver).__name__}."
        )


def _positive_int(value: int, name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        raise ValueError(f"{name} must be a positive whole number, got {value!r}.")
    return value


def _positive_number(value: float, name: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not value > 0:
        raise ValueError(f"{name} must be a positive number of seconds, got {value!r}.")
    return float(value)


def _non_negative(value: float, name: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not value >= 0:
        raise ValueError(f"{name} must be zero or a positive number of seconds, got {value!r}.")
    return float(value)
