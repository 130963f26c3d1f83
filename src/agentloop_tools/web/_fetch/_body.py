"""The body of a page, read under web_fetch's byte cap and deadline, refused in its words.

The reading is the network room's (``web/_net/_body.py``, ``truncate`` mode: a body
over the cap is cut, never refused for its size or its expansion); what is here is how
web_fetch names each way it can fail.
"""

from __future__ import annotations

import zlib
from collections.abc import Iterator

import httpx

from agentloop_tools.web._fetch._codes import FetchRefusal
from agentloop_tools.web._net import _body


def read_capped(response: httpx.Response, limit: int, deadline: float) -> Iterator[bytes]:
    """The decoded body, at most ``limit`` bytes, stopping at ``deadline``."""
    encoding = _body.content_encoding(response)
    if encoding not in _body.ENCODINGS:
        raise FetchRefusal(
            "unsupported-content",
            f"{response.request.url} is sent with content-encoding {encoding!r}",
            "use another source",
        )
    try:
        yield from _body.read_capped(response, limit, deadline, mode="truncate")
    except httpx.TimeoutException:
        raise FetchRefusal(
            "timeout",
            f"{response.request.url} was still sending when the time ran out",
            "try again later, or another source",
        ) from None
    except (httpx.HTTPError, zlib.error) as error:
        raise FetchRefusal(
            "fetch-error",
            f"reading {response.request.url} failed ({type(error).__name__}: {error})",
            "try again later, or another source",
        ) from None


def declared_length(response: httpx.Response) -> int | None:
    value = response.headers.get("content-length", "")
    return int(value) if value.isdigit() else None
