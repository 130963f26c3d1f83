"""The engine behind one ``web_fetch`` tool (and ``fetch()``): the steps of a call, in order.

Steps 1 and 2 (the URL read as a browser reads it, then the policy) run here for the
URL asked for, before the cache; a cached page is served only if every hop that
made it still passes. A miss is read directly (``_direct.py``: addresses, pinned
connections, redirects, robots.txt, then ``_reading.py`` for the body) or through a
page API (``_via.py``). The result is the part of the page asked for, with the
header our transcript readers parse back (``web/_transcript/_fetch_format.py``).
"""

from __future__ import annotations

import logging
import threading
from typing import TYPE_CHECKING

from cachetools import TTLCache

from agentloop_tools.web._faults import any_for
from agentloop_tools.web._fetch._codes import FetchRefusal, shown
from agentloop_tools.web._fetch._direct import DirectReader
from agentloop_tools.web._fetch._settings import (
    FetchSettings,
    Page,
    Requested,
    start_offset,
)
from agentloop_tools.web._fetch._url_check import check_url
from agentloop_tools.web._fetch._via import read_via
from agentloop_tools.web._transcript._fetch_format import header, requested_trailer

if TYPE_CHECKING:
    from agentloop_tools.web._search._backends_api import PageApi

logger = logging.getLogger("agentloop_tools.web.fetch")

_CACHE_SIZE = 128


class Fetcher:
    """The engine behind one web_fetch tool (its caches live as long as the tool)."""

    def __init__(
        self, settings: FetchSettings, *, cache_ttl: float, via: PageApi | None = None
    ) -> None:
        self._via = via
        # The cache is namespaced per way of reading: a page read through one API
        # is never served as another's (or as a direct read).
        self._namespace = f"via:{via.name}" if via is not None else "direct"
        self._settings = settings
        self._direct = DirectReader(self._settings)
        self._lock = threading.Lock()
        self._pages: TTLCache[tuple[str, str, int], Page] | None = (
            TTLCache(maxsize=_CACHE_SIZE, ttl=cache_ttl) if cache_ttl > 0 else None
        )

    def fetch(self, url: object, start: object = None) -> str:
        """One tool call: the page text (a part of it), or a ``ToolError``.

        Every URL requested is in the result, a failure's included, so the audit
        sees each one whatever the tool is named.
        """
        requested: Requested = []
        try:
            return self.render(self.page(url, start, requested), start_offset(start))
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

    def page(self, url: object, start: object, requested: Requested) -> Page:
        """The whole document for one call (from the cache, or read), or a ``FetchRefusal``."""
        start_offset(start)
        href = self.check_url(url, hop=None)
        # While a test injects faults the cache is left alone both ways: a faulted page
        # is never served later, nor a page read before the fault served past it.
        faulted = any_for(self._settings.client)
        page = None if faulted else self._cached(href)
        if page is None:
            if self._via is not None:
                page = read_via(self._settings, self._via, href, requested)
            else:
                page = self._direct.download(href, requested)
            if not faulted:
                self._remember(page)
        return page

    def check_url(self, url: object, *, hop: str | None) -> str:
        """Steps 1 and 2 for one URL under this tool's policy (see ``_url_check``)."""
        return check_url(url, self._settings.policy, hop=hop)

    # The cache -------------------------------------------------------------------

    def _cached(self, href: str) -> Page | None:
        if self._pages is None:
            return None
        with self._lock:
            page = self._pages.get((self._namespace, href, self._settings.max_bytes))
        if page is None:
            return None
        # A hit is served only if every hop that produced it passes the policy now,
        # so the cache can never answer with a page the policy refuses.
        for hop in page.chain[1:]:
            self.check_url(hop, hop=hop)
        return page

    def _remember(self, page: Page) -> None:
        if self._pages is not None:
            with self._lock:
                self._pages[(self._namespace, page.chain[0], self._settings.max_bytes)] = page

    # The result ------------------------------------------------------------------

    def render(self, page: Page, offset: int) -> str:
        """The text the model reads for one part of ``page`` (``start=offset``)."""
        total = len(page.text)
        if offset > 0 and offset >= total:
            raise FetchRefusal(
                "invalid-start",
                f"start={offset} is past the end of {page.chain[-1]} ({total:,} characters)",
                f"use a start between 0 and {max(total - 1, 0)}",
            )
        end = min(offset + self._settings.max_chars, total)
        notes = [*page.notes, f"characters: {offset}-{end} of {total}"]
        text = page.text[offset:end]
        if end < total:
            text += (
                f"\n\n[truncated: {total - end:,} more characters; call {self._settings.name} "
                f"again with the same url and start={end} to continue]"
            )
        head = header(page.chain[-1], page.chain[1:-1], page.title, notes, page.robots)
        return f"{head}\n\n{text}"
