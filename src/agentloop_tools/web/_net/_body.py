"""A response body read by us: decompressed under a byte cap, by a deadline.

httpx would decompress a whole network chunk at once, so a small gzip body could
expand far past any cap in memory; here ``zlib`` gets an output limit instead
(``max_length``). One reader, two modes:

- ``truncate`` (``web_fetch``): hand out at most ``limit`` bytes, then stop reading;
  the body is read in pieces of 16 KB, the first of which fetch tells a page's type by.
- ``refuse`` (``web_search``, ``web_fetch(via=...)``): a body over ``limit``, one that
  expands more than ``MAX_RATIO`` times, or one that does not decompress is refused
  (``ResponseTooLarge``); pieces are taken as they arrive, so the deadline is checked
  at every read even through a caller's client.

Either way the deadline (``time.monotonic()``) is checked before each piece, and a body
httpx already holds decoded in memory (a response built with ``content=``) is read as is.
"""

from __future__ import annotations

import time
import zlib
from collections.abc import Iterator
from typing import Literal

import httpx

from agentloop_tools._errors import ResponseTooLarge

type Mode = Literal["truncate", "refuse"]

# The content encodings decoded here, and the Accept-Encoding that asks for no other.
ENCODINGS = ("identity", "", "gzip", "x-gzip", "deflate")
ACCEPT_ENCODING = "gzip, deflate"

# Decoded bytes per compressed byte past the first ``_RATIO_FREE`` bytes: JSON
# compresses about 5-20 times; far more is a decompression bomb, not a result list.
MAX_RATIO = 100
_RATIO_FREE = 65_536
_PIECE = 16_384


class Overtime(httpx.TimeoutException):
    """The deadline passed while the body was still arriving.

    An ``httpx.TimeoutException`` on purpose: the retry logic and each tool's wording
    catch httpx timeouts, and must see this one as one.
    """


def content_encoding(response: httpx.Response) -> str:
    """The encoding of the body still to be read: ``identity`` once httpx holds it decoded."""
    if _in_memory(response) is not None:
        return "identity"
    encoding: str = response.headers.get("content-encoding", "identity")
    return encoding.strip().lower()


def read_body(response: httpx.Response, limit: int, deadline: float) -> bytes:
    """The whole decoded body in ``refuse`` mode.

    Raises:
        Overtime: the deadline passed first (a timeout: an attempt may be retried).
        ResponseTooLarge: over ``limit``, over ``MAX_RATIO``, not decompressible, or in
            an encoding that is not decoded.
    """
    return b"".join(read_capped(response, limit, deadline, mode="refuse"))


def read_capped(
    response: httpx.Response, limit: int, deadline: float, *, mode: Mode = "truncate"
) -> Iterator[bytes]:
    """The decoded body in pieces, by ``deadline``, held to ``limit`` bytes as ``mode`` says.

    Raises:
        Overtime: the deadline passed before the last piece.
        ResponseTooLarge: an encoding not in ``ENCODINGS``; in ``refuse`` mode also a
            body over ``limit``, over ``MAX_RATIO``, or one that does not decompress.
        zlib.error: in ``truncate`` mode, a body that does not decompress.
        httpx.HTTPError: the connection failed while reading.
    """
    refuse = mode == "refuse"
    ready = _in_memory(response)
    if ready is not None and refuse:
        # It has arrived: nothing is waited for, only its size is judged.
        _check_size(len(ready), limit)
        yield ready
        return
    encoding = content_encoding(response)
    if encoding not in ENCODINGS:
        raise ResponseTooLarge(f"a response in content-encoding {encoding!r}, which is not read")
    inflate = _inflater(encoding)
    pieces = iter([ready]) if ready is not None else response.iter_raw(None if refuse else _PIECE)
    # Refusing, one byte over the cap is enough to know it is over.
    room = limit + 1 if refuse else limit
    taken = given = 0
    for raw in pieces:
        if time.monotonic() > deadline:
            raise Overtime("the response was still arriving at the deadline")
        taken += len(raw)
        data = raw
        if inflate is not None:
            data = _inflated(inflate, raw, room - given, encoding if refuse else None)
        data = data[: room - given]
        if not data:
            continue
        given += len(data)
        if refuse:
            if inflate is not None and given > _RATIO_FREE and given > MAX_RATIO * taken:
                raise ResponseTooLarge(
                    f"a {encoding} response that expands over {MAX_RATIO} times its size"
                )
            _check_size(given, limit)
        yield data
        if given >= room:
            return


def _check_size(size: int, limit: int) -> None:
    if size > limit:
        raise ResponseTooLarge(f"a response over {limit:,} bytes")


def _inflater(encoding: str) -> zlib._Decompress | None:
    if encoding in ("gzip", "x-gzip"):
        return zlib.decompressobj(16 + zlib.MAX_WBITS)
    if encoding == "deflate":
        return zlib.decompressobj()
    return None


def _inflated(inflate: zlib._Decompress, raw: bytes, room: int, refused_as: str | None) -> bytes:
    """At most ``room`` more decoded bytes; a broken stream is refused when ``refused_as``
    names its encoding (``refuse`` mode), else its ``zlib.error`` is the caller's."""
    try:
        return inflate.decompress(inflate.unconsumed_tail + raw, room)
    except zlib.error:
        if refused_as is None:
            raise
        raise ResponseTooLarge(f"a {refused_as} response that does not decompress") from None


def _in_memory(response: httpx.Response) -> bytes | None:
    try:
        # Already in memory and decoded by httpx (a response built with content=...).
        return response.content
    except httpx.ResponseNotRead:
        return None
