"""The body of a response, read under a byte cap and a deadline, decompressed by us.

httpx would decompress a whole network chunk at once, so a small gzip body could
expand far past any cap in memory; here ``zlib`` gets an output limit instead.
"""

from __future__ import annotations

import time
import zlib
from collections.abc import Iterator

import httpx

from agentloop_tools.web._fetch._codes import FetchRefusal

_CHUNK = 16_384


def read_capped(response: httpx.Response, limit: int, deadline: float) -> Iterator[bytes]:
    """The decoded body, at most ``limit`` bytes, stopping at ``deadline``.

    Decompression is ours (``iter_raw`` plus ``max_length``) so a small compressed
    body can never expand past ``limit`` in memory.
    """
    try:
        # Already in memory and decoded by httpx (a response built with content=...).
        read: Iterator[bytes] | None = iter([response.content])
    except httpx.ResponseNotRead:
        read = None
    encoding = response.headers.get("content-encoding", "identity").strip().lower()
    if read is not None:
        encoding = "identity"
    if encoding not in ("identity", "", "gzip", "x-gzip", "deflate"):
        raise FetchRefusal(
            "unsupported-content",
            f"{response.request.url} is sent with content-encoding {encoding!r}",
            "use another source",
        )
    inflate = None
    if encoding in ("gzip", "x-gzip"):
        inflate = zlib.decompressobj(16 + zlib.MAX_WBITS)
    elif encoding == "deflate":
        inflate = zlib.decompressobj()
    left = limit
    try:
        for raw in read if read is not None else response.iter_raw(_CHUNK):
            if time.monotonic() > deadline:
                raise FetchRefusal(
                    "timeout",
                    f"{response.request.url} was still sending when the time ran out",
                    "try again later, or another source",
                )
            data = raw
            if inflate is not None:
                data = inflate.decompress(inflate.unconsumed_tail + raw, left)
            if not data:
                continue
            data = data[:left]
            left -= len(data)
            yield data
            if left <= 0:
                return
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
