"""One web_search attempt's bytes: a whole-time deadline and a capped, decoded body.

httpx's timeouts bound each socket operation, not an attempt: a server that
sends one byte every two seconds never trips a 15 s read timeout. So:

- the default client's connections (``attempt_client``) cut every connect, TLS
  handshake, read and write to what is left of the attempt's deadline, held in a
  thread-local because agentloop runs parallel calls in threads over one pool;
- with any client, the request's own timeouts are set to the attempt's deadline
  and the body is read here, read by read, stopping at the deadline (with a
  caller's ``http_client`` one read can still wait up to ``deadline``, and the
  headers are bounded by that client's own transport);
- the body is decompressed here with an output limit (``zlib`` ``max_length``),
  so a small gzip body cannot expand past ``max_bytes`` in memory, and a body
  that expands more than ``MAX_RATIO`` times is refused on the way.
"""

from __future__ import annotations

import ssl
import threading
import time
import typing
import zlib
from collections.abc import Iterable, Iterator

import httpcore
import httpx

from agentloop_tools._errors import ResponseTooLarge

# Decoded bytes per compressed byte past the first ``_RATIO_FREE`` bytes: JSON
# compresses about 5-20 times; far more is a decompression bomb, not a result list.
MAX_RATIO = 100
_RATIO_FREE = 65_536
_ENCODINGS = ("identity", "", "gzip", "x-gzip", "deflate")

_attempt = threading.local()


class Overtime(httpx.TimeoutException):
    """The attempt's deadline passed while the response was still arriving."""


def start_attempt(deadline: float) -> None:
    """Bind this thread's attempt deadline (``time.monotonic()``) for the default client."""
    _attempt.deadline = deadline


def end_attempt() -> None:
    _attempt.deadline = None


def _left(timeout: float | None) -> float | None:
    deadline: float | None = getattr(_attempt, "deadline", None)
    if deadline is None:
        return timeout
    left = deadline - time.monotonic()
    if left <= 0:
        raise httpcore.ReadTimeout("the search attempt ran out of time")
    return left if timeout is None else min(left, timeout)


class _Backend(httpcore.NetworkBackend):
    def __init__(self) -> None:
        self._plain = httpcore.SyncBackend()

    def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[httpcore.SOCKET_OPTION] | None = None,
    ) -> httpcore.NetworkStream:
        stream = self._plain.connect_tcp(
            host,
            port,
            timeout=_left(timeout),
            local_address=local_address,
            socket_options=socket_options,
        )
        return _Stream(stream)

    def connect_unix_socket(
        self,
        path: str,
        timeout: float | None = None,
        socket_options: Iterable[httpcore.SOCKET_OPTION] | None = None,
    ) -> httpcore.NetworkStream:
        return _Stream(
            self._plain.connect_unix_socket(path, _left(timeout), socket_options=socket_options)
        )

    def sleep(self, seconds: float) -> None:
        time.sleep(seconds)


class _Stream(httpcore.NetworkStream):
    """A socket whose every operation waits at most until this thread's attempt deadline."""

    def __init__(self, inner: httpcore.NetworkStream) -> None:
        self._inner = inner

    def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        return self._inner.read(max_bytes, timeout=_left(timeout))

    def write(self, buffer: bytes, timeout: float | None = None) -> None:
        self._inner.write(buffer, timeout=_left(timeout))

    def close(self) -> None:
        self._inner.close()

    def start_tls(
        self,
        ssl_context: ssl.SSLContext,
        server_hostname: str | None = None,
        timeout: float | None = None,
    ) -> httpcore.NetworkStream:
        return _Stream(self._inner.start_tls(ssl_context, server_hostname, timeout=_left(timeout)))

    def get_extra_info(self, info: str) -> typing.Any:
        return self._inner.get_extra_info(info)


def attempt_client(timeout: httpx.Timeout) -> httpx.Client:
    """The default client: httpx's transport over connections bound by the attempt deadline."""
    transport = httpx.HTTPTransport()
    # httpx takes no network backend; its pool does, so the pool is rebuilt with
    # httpx's own defaults and ours (as web_fetch's transport does).
    transport._pool = httpcore.ConnectionPool(
        ssl_context=httpx.create_ssl_context(),
        max_connections=100,
        max_keepalive_connections=20,
        keepalive_expiry=5.0,
        http1=True,
        http2=False,
        network_backend=_Backend(),
    )
    return httpx.Client(transport=transport, timeout=timeout, follow_redirects=False)


def read_body(response: httpx.Response, limit: int, deadline: float) -> bytes:
    """The decoded body, at most ``limit`` bytes, by ``deadline`` (``time.monotonic()``).

    Raises:
        Overtime: the deadline passed first (a timeout: the attempt may be retried).
        ResponseTooLarge: over ``limit``, over ``MAX_RATIO``, or an encoding we do not decode.
    """
    try:
        # Already in memory and decoded by httpx (a response built with content=...).
        ready: bytes | None = response.content
    except httpx.ResponseNotRead:
        ready = None
    if ready is not None:
        if len(ready) > limit:
            raise ResponseTooLarge(f"a response over {limit:,} bytes")
        return ready
    encoding = response.headers.get("content-encoding", "identity").strip().lower()
    if encoding not in _ENCODINGS:
        raise ResponseTooLarge(f"a response in content-encoding {encoding!r}, which is not read")
    inflate = None
    if encoding in ("gzip", "x-gzip"):
        inflate = zlib.decompressobj(16 + zlib.MAX_WBITS)
    elif encoding == "deflate":
        inflate = zlib.decompressobj()
    body = bytearray()
    taken = 0
    for raw in _chunks(response, deadline):
        taken += len(raw)
        if inflate is None:
            body += raw
        else:
            try:
                # One byte over the cap is enough to know it is over.
                body += inflate.decompress(inflate.unconsumed_tail + raw, limit + 1 - len(body))
            except zlib.error:
                raise ResponseTooLarge(f"a {encoding} response that does not decompress") from None
            if len(body) > _RATIO_FREE and len(body) > MAX_RATIO * taken:
                raise ResponseTooLarge(
                    f"a {encoding} response that expands over {MAX_RATIO} times its size"
                )
        if len(body) > limit:
            raise ResponseTooLarge(f"a response over {limit:,} bytes")
    return bytes(body)


def _chunks(response: httpx.Response, deadline: float) -> Iterator[bytes]:
    # No chunk size: httpx would gather 16 KB before yielding, past the deadline.
    for raw in response.iter_raw():
        if time.monotonic() > deadline:
            raise Overtime("the response was still arriving at the attempt's deadline")
        yield raw
