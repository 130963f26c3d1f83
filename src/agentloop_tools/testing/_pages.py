"""Pages for ``web_fetch`` served from memory: record an agent that reads the web, offline."""

from __future__ import annotations

import mimetypes
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import httpx

type PageBody = str | bytes | tuple[int, str | bytes, Mapping[str, str]]

# A public address for every scripted host: web_fetch refuses private ones, and the
# in-memory transport never connects anywhere (documentation range of RFC 5737 is
# refused as reserved, so a routable one it is; nothing is ever sent to it).
PUBLIC_ADDRESS = "93.184.215.14"


class ScriptedPages:
    """Serves ``web_fetch`` pages from a mapping, with no network and no resolver.

    Args:
        pages: ``{url: body}``. A ``str`` body is HTML; ``bytes`` get a content type
            guessed from the URL's path (``.pdf``: ``application/pdf``; unknown:
            ``application/octet-stream``); a ``(status, body, headers)`` tuple sets all
            three (a redirect is ``(302, "", {"location": "https://..."})``).
        faults: ``{URL_PATTERN: FAULT}``, as ``@pytest.mark.web_faults(pages=...)``
            takes them: a pattern in the policy's rule syntax (``docs.python.org/3/*``)
            and an HTTP error status (``403``), ``"timeout"``, ``"empty"``,
            ``"paywall"`` or ``"redirect:<url>"``. ``web_fetch`` answers a matching
            page itself, before any request (so neither this mapping nor a cassette
            sees it) and without a wait.

    ``web_fetch(**pages.tool_options())`` then fetches offline: the URL, policy and
    address checks all run as in production (every host resolves to one public
    address), only the bytes come from here. vcrpy records this traffic like any
    other, so a test that records with it needs no network; its cassette then replays
    without the pages. ``.requests`` lists the requests made, in order. A URL the
    mapping lacks answers 404 with a body saying which URL to add (robots.txt too).
    """

    def __init__(
        self, pages: Mapping[str, PageBody], *, faults: Mapping[str, object] | None = None
    ) -> None:
        import httpx

        from agentloop_tools.web._faults import web_faults

        self._faults = web_faults(pages=faults, where="ScriptedPages(faults=...)")
        if not isinstance(pages, Mapping):
            raise TypeError(
                f"ScriptedPages needs a mapping of URL to body, got {type(pages).__name__}."
            )
        self._pages: dict[str, PageBody] = {}
        for url, body in pages.items():
            key = _key(httpx.URL(url))
            self._pages[key] = _checked(url, body)
        self.requests: list[httpx.Request] = []

    def __repr__(self) -> str:
        return f"ScriptedPages({len(self._pages)} page(s), {len(self.requests)} request(s) made)"

    def resolver(self, host: str) -> list[str]:
        """Every host resolves to one public address (``web_fetch(resolver=...)``)."""
        return [PUBLIC_ADDRESS]

    def http_client(self) -> httpx.Client:
        """An ``httpx.Client`` answering from the mapping (``web_fetch(http_client=...)``)."""
        import httpx

        def answer(request: httpx.Request) -> httpx.Response:
            self.requests.append(request)
            body = self._pages.get(_key(request.url))
            if body is None:
                message = (
                    f"ScriptedPages has no page for {request.url}: add it to the mapping "
                    "(a redirect is (302, '', {'location': URL}))."
                )
                return httpx.Response(404, text=message, headers={"content-type": "text/plain"})
            status, content, headers = _reply(str(request.url), body)
            return httpx.Response(status, content=content, headers=headers)

        client = httpx.Client(transport=httpx.MockTransport(answer))
        from agentloop_tools.web._faults import attach

        attach(client, self._faults)
        return client

    def tool_options(self) -> dict[str, Any]:
        """The keyword arguments that make ``web_fetch`` read from here."""
        return {"http_client": self.http_client(), "resolver": self.resolver}


def _key(url: httpx.URL) -> str:
    # The fragment never reaches a server; everything else must match.
    return str(url.copy_with(fragment=None))


def _checked(url: str, body: object) -> PageBody:
    if isinstance(body, str | bytes):
        return body
    if (
        isinstance(body, tuple)
        and len(body) == 3
        and isinstance(body[0], int)
        and isinstance(body[1], str | bytes)
        and isinstance(body[2], Mapping)
    ):
        return body
    raise TypeError(
        f"ScriptedPages: the body for {url} must be a str (HTML), bytes, or a "
        f"(status, body, headers) tuple, got {body!r:.80}."
    )


def _reply(url: str, body: PageBody) -> tuple[int, bytes, dict[str, str]]:
    if isinstance(body, str):
        return 200, body.encode(), {"content-type": "text/html; charset=utf-8"}
    if isinstance(body, bytes):
        guessed, _ = mimetypes.guess_type(url.split("?", 1)[0])
        return 200, body, {"content-type": guessed or "application/octet-stream"}
    status, content, headers = body
    raw = content.encode() if isinstance(content, str) else content
    given = {name.lower(): value for name, value in headers.items()}
    if "content-type" not in given and raw:
        given["content-type"] = (
            "text/html; charset=utf-8"
            if isinstance(content, str)
            else (mimetypes.guess_type(url.split("?", 1)[0])[0] or "application/octet-stream")
        )
    return status, raw, given
