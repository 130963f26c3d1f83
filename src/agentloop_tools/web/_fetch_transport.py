"""The connection step of web_fetch: connect to the address that was checked, by a deadline.

The tool resolves a host once and checks every answer; this transport then
connects only to those answers, never to the name, so DNS cannot hand the
socket another address in between (rebinding). httpcore still receives the
original host, so TLS verifies the certificate against the name and the
``Host`` header names it. It stays an ``httpx.HTTPTransport`` whose
``handle_request`` is untouched, so vcrpy records and replays through it.

Every read and write on the socket is cut to what is left of the fetch's
deadline, so a server that drips its headers or body a byte at a time cannot
hold the tool past ``timeout``.
"""

from __future__ import annotations

import ssl
import time
import typing
from collections.abc import Iterable, Mapping, Sequence

import httpcore
import httpx


class PinnedBackend(httpcore.NetworkBackend):
    """Opens TCP connections only to addresses the tool checked for that host.

    Args:
        pins: host (as httpcore sees it, lower case, IPv6 without brackets) to the
            checked addresses; the tool adds a host before it sends a request to it.
        deadline: ``time.monotonic()`` value after which no read or write may wait.
    """

    def __init__(self, pins: Mapping[str, Sequence[str]], deadline: float) -> None:
        self._pins = pins
        self._deadline = deadline
        self._plain = httpcore.SyncBackend()

    def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[httpcore.SOCKET_OPTION] | None = None,
    ) -> httpcore.NetworkStream:
        """Connect to the first checked address of ``host`` that answers."""
        addresses = self._pins.get(host.lower().strip("[]"))
        if not addresses:
            # Fail closed: a host the tool did not check is never looked up here.
            raise httpcore.ConnectError(f"{host} was not checked before connecting; refused")
        last_error: Exception | None = None
        for address in addresses:
            remaining = _remaining(self._deadline, timeout)
            if remaining <= 0:
                raise httpcore.ConnectTimeout(f"no time left to connect to {host}")
            try:
                stream = self._plain.connect_tcp(
                    address,
                    port,
                    timeout=remaining,
                    local_address=local_address,
                    socket_options=socket_options,
                )
            except (httpcore.ConnectError, httpcore.ConnectTimeout) as error:
                last_error = error
                continue
            return DeadlineStream(stream, self._deadline)
        assert last_error is not None
        raise last_error

    def connect_unix_socket(
        self,
        path: str,
        timeout: float | None = None,
        socket_options: Iterable[httpcore.SOCKET_OPTION] | None = None,
    ) -> httpcore.NetworkStream:
        """Refused: a Unix socket has no address to check."""
        raise httpcore.ConnectError(f"web_fetch never connects to a Unix socket ({path})")

    def sleep(self, seconds: float) -> None:
        """Sleep, as httpcore's own backend does (used between connection retries)."""
        time.sleep(seconds)


class DeadlineStream(httpcore.NetworkStream):
    """A network stream whose every operation waits at most until the fetch's deadline."""

    def __init__(self, inner: httpcore.NetworkStream, deadline: float) -> None:
        self._inner = inner
        self._deadline = deadline

    def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        """Read, giving up at the deadline."""
        remaining = _remaining(self._deadline, timeout)
        if remaining <= 0:
            raise httpcore.ReadTimeout("the fetch ran out of time while reading")
        return self._inner.read(max_bytes, timeout=remaining)

    def write(self, buffer: bytes, timeout: float | None = None) -> None:
        """Write, giving up at the deadline."""
        remaining = _remaining(self._deadline, timeout)
        if remaining <= 0:
            raise httpcore.WriteTimeout("the fetch ran out of time while writing")
        self._inner.write(buffer, timeout=remaining)

    def close(self) -> None:
        """Close the socket."""
        self._inner.close()

    def start_tls(
        self,
        ssl_context: ssl.SSLContext,
        server_hostname: str | None = None,
        timeout: float | None = None,
    ) -> httpcore.NetworkStream:
        """TLS over the pinned socket; ``server_hostname`` is the URL's host, not the address."""
        remaining = _remaining(self._deadline, timeout)
        if remaining <= 0:
            raise httpcore.ConnectTimeout("the fetch ran out of time during the TLS handshake")
        inner = self._inner.start_tls(ssl_context, server_hostname, timeout=remaining)
        return DeadlineStream(inner, self._deadline)

    def get_extra_info(self, info: str) -> typing.Any:
        """What the inner stream says (httpcore asks for the SSL object and the socket)."""
        return self._inner.get_extra_info(info)


def pinned_transport(pins: Mapping[str, Sequence[str]], deadline: float) -> httpx.HTTPTransport:
    """An ``httpx.HTTPTransport`` that connects only to ``pins`` and stops at ``deadline``.

    No proxy from the environment is used (a proxy would resolve the name itself).
    """
    transport = httpx.HTTPTransport(trust_env=False)
    # httpx has no public way to hand HTTPTransport a network backend; the pool takes
    # one as a constructor argument, so the pool is rebuilt with the same settings.
    transport._pool = httpcore.ConnectionPool(
        ssl_context=httpx.create_ssl_context(trust_env=False),
        max_connections=4,
        max_keepalive_connections=4,
        http1=True,
        http2=False,
        network_backend=PinnedBackend(pins, deadline),
    )
    return transport


def _remaining(deadline: float, timeout: float | None) -> float:
    left = deadline - time.monotonic()
    return left if timeout is None else min(left, timeout)
