"""Steps 3 to 5 of a direct read: addresses checked, connections pinned, redirects by hand.

For the URL asked for and again for every redirect hop: its addresses are checked
(``_addresses.py``) before the request through the caller's client, or when our
pinning transport first connects (``_transport.py``); at most five redirects are
followed, each hop checked as the URL was (``_url_check.py``); robots.txt is read
and obeyed when the tool asks for it. The final response's body is read by
``_reading.py``.
"""

from __future__ import annotations

import threading
import time
from contextlib import closing
from typing import Literal

import httpx
from ada_url import join_url, parse_url
from cachetools import TTLCache

from agentloop_tools.web._domains._address import parse_address
from agentloop_tools.web._faults import PAYWALL_TEXT, Fault, page_fault
from agentloop_tools.web._fetch._addresses import addresses
from agentloop_tools.web._fetch._body import read_capped
from agentloop_tools.web._fetch._codes import FetchRefusal, shown
from agentloop_tools.web._fetch._reading import read_page
from agentloop_tools.web._fetch._robots import RobotsRules, robots_url
from agentloop_tools.web._fetch._settings import FetchSettings, Page, Requested
from agentloop_tools.web._fetch._transport import PinnedBackend, pinned_transport
from agentloop_tools.web._fetch._url_check import check_url
from agentloop_tools.web._net._body import ACCEPT_ENCODING

MAX_REDIRECTS = 5
_REDIRECTS = frozenset({301, 302, 303, 307, 308})
_ACCEPT = "text/html,application/xhtml+xml,text/plain;q=0.9,application/pdf;q=0.9,*/*;q=0.5"
_CACHE_SIZE = 128
_ROBOTS_TTL = 3600.0
_ROBOTS_BYTES = 512_000


class DirectReader:
    """Steps 3 to 5 for one tool; its robots.txt cache lives as long as the tool."""

    def __init__(self, settings: FetchSettings) -> None:
        self._settings = settings
        self._robots_lock = threading.Lock()
        self._robots: TTLCache[str, RobotsRules] = TTLCache(maxsize=_CACHE_SIZE, ttl=_ROBOTS_TTL)

    def download(self, href: str, requested: Requested) -> Page:
        trip = self._trip(time.monotonic() + self._settings.timeout, requested)
        chain = [href]
        try:
            current = href
            for hops in range(MAX_REDIRECTS + 1):
                self._admit(trip, current)
                if self._settings.respect_robots:
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
                    page = read_page(
                        response, tuple(chain), trip.deadline, self._settings.max_bytes
                    )
                    robots = tuple(url for what, url in requested if what == "robots")
                    return Page(page.chain, page.title, page.text, page.notes, robots)
            raise AssertionError("unreachable: the loop returns or raises")  # pragma: no cover
        finally:
            if trip.backend is not None:
                trip.client.close()

    def _trip(self, deadline: float, requested: Requested) -> Trip:
        """The connection state of one fetch: its own pinned client, or the caller's."""
        if self._settings.client is not None:
            return Trip(deadline, self._settings.client, None, requested)

        def admit(host: str) -> list[str]:
            # ``trip`` is bound below, before any request can reach this.
            return addresses(self._settings, host, trip.url, deadline)

        transport, backend = pinned_transport(admit, deadline)
        client = httpx.Client(transport=transport, follow_redirects=False, trust_env=False)
        trip = Trip(deadline, client, backend, requested)
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
            return check_url(target, self._settings.robots_policy, hop=target)
        return check_url(target, self._settings.policy, hop=target)

    def _admit(self, trip: Trip, href: str) -> None:
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
                addresses(self._settings, host, href, trip.deadline)
            return
        if host not in trip.checked:  # one lookup per host per fetch, never a second
            trip.checked[host] = addresses(self._settings, host, href, trip.deadline)

    def _send(
        self, trip: Trip, href: str, kind: Literal["redirect", "robots"] | None
    ) -> httpx.Response:
        """Request ``href``, recording it as ``kind`` first (None: the URL asked for)."""
        remaining = trip.deadline - time.monotonic()
        if remaining <= 0:
            raise FetchRefusal(
                "timeout",
                f"no time left to request {href} within {self._settings.timeout:g} s",
                "try again later, or another source",
            )
        trip.url = href
        if kind is not None:
            trip.requested.append((kind, href))
        if kind != "robots":
            fault = page_fault(href, self._settings.client, self._settings.name)
            if fault is not None:
                return self._faulted(fault, href)
        request = trip.client.build_request(
            "GET",
            href,
            headers={
                "User-Agent": self._settings.user_agent,
                "Accept": _ACCEPT,
                "Accept-Encoding": ACCEPT_ENCODING,
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
                    f"{href} did not answer within {self._settings.timeout:g} s",
                    "try again later, or another source",
                ) from None
            raise FetchRefusal(
                "fetch-error",
                f"{href} could not be reached ({type(error).__name__}: {error})",
                "try again later, or another source",
            ) from None

    def _faulted(self, fault: Fault, href: str) -> httpx.Response:
        """The answer a test's fault gives for ``href``, made here: nothing is sent.

        Read by the same steps as a real answer (redirect, status, body), so the model
        reads what the real failure would give it; a timeout costs no wait.
        """
        if fault.kind == "timeout":
            raise FetchRefusal(
                "timeout",
                f"{href} did not answer within {self._settings.timeout:g} s",
                "try again later, or another source",
            )
        request = httpx.Request("GET", href)
        if fault.kind == "redirect":
            return httpx.Response(302, headers={"location": str(fault.location)}, request=request)
        if fault.kind == "status":
            return httpx.Response(fault.status or 500, request=request)
        text = PAYWALL_TEXT if fault.kind == "paywall" else ""
        headers = {"content-type": "text/plain; charset=utf-8"}
        return httpx.Response(200, headers=headers, content=text.encode(), request=request)

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

    def _obey_robots(self, trip: Trip, href: str) -> None:
        where = robots_url(href)
        with self._robots_lock:
            rules = self._robots.get(where)
        if rules is None:
            rules = self._read_robots(trip, where)
            with self._robots_lock:
                self._robots[where] = rules
        if not rules.permits(href, self._settings.user_agent):
            raise FetchRefusal(
                "disallowed-by-robots",
                f"{where} does not let {self._settings.user_agent.split('/')[0]} fetch {href}",
                "do not retry; the site asks crawlers not to read this page",
            )

    def _read_robots(self, trip: Trip, where: str) -> RobotsRules:
        """robots.txt through steps 1-4 and at most five redirects; 4xx means no rules.

        Judged by the policy widened to hosts (``robots_policy``): a path allowlist
        names pages, and every page's rules are in ``/robots.txt``.
        """
        reason = "it redirected more than five times"
        try:
            current = check_url(where, self._settings.robots_policy, hop=where)
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


class Trip:
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
