"""The connection step of web_fetch: connect to the address that was checked, by a deadline.

The host is resolved once, when the first connection to it is opened, and every
answer is checked; the socket then connects only to those answers, never to the
name, so DNS cannot hand it another address in between (rebinding). A request
that a cassette answers opens no connection, so a replay never asks DNS. httpcore still receives the
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
from collections.abc import Callable, Iterable, Sequence

import httpcore
import httpx


class PinnedBackend(httpcore.NetworkBackend):
    """Opens TCP connections only to addresses checked for that host.

    Args:
        admit: host (lower case, IPv6 without brackets) to the addresses that may be
            connected to; it raises to refuse. Called once per host per backend, when
            the first connection to it is opened, so a replayed request (which opens
            none) never asks DNS.
        deadline: ``time.monotonic()`` value after which no read or write may wait.

    Attributes:
        refused: the exception ``admit`` raised for the last refused host, so the
            caller can report it (httpx wraps what a backend raises in its own type).
    """

    def __init__(self, admit: Callable[[str], Sequence[str]], deadline: float) -> None:
        self._admit = admit
        self._pins: dict[str, list[str]] = {}
        self._deadline = deadline
        self._plain = httpcore.SyncBackend()
        self.refused: Exception | None = None

    def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[httpcore.SOCKET_OPTION] | None = None,
    ) -> httpcore.NetworkStream:
        """Check ``host`` once, then connect to the first checked address that answers."""
        key = host.lower().strip("[]")
        addresses = self._pins.get(key)
        if addresses is None:
            try:
                addresses = self._pins[key] = list(self._admit(key))
            except Exception as error:
                self.refused = error
                raise httpcore.ConnectError(f"{host} refused before connecting: {error}") from error
        if not addresses:
            raise httpcore.ConnectError(f"{host} has no checked address; refused")
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


def pinned_transport(
    admit: Callable[[str], Sequence[str]], deadline: float
) -> tuple[httpx.HTTPTransport, PinnedBackend]:
    """An ``httpx.HTTPTransport`` connecting only to what ``admit`` returns, by ``deadline``.

    Returns the transport and its backend (whose ``refused`` says why a host was
    refused). No proxy from the environment is used: a proxy would resolve the name
    itself.
    """
    backend = PinnedBackend(admit, deadline)
    transport = httpx.HTTPTransport(trust_env=False)
    # httpx has no public way to hand HTTPTransport a network backend; the pool takes
    # one as a constructor argument, so the pool is rebuilt with the same settings.
    transport._pool = httpcore.ConnectionPool(
        ssl_context=httpx.create_ssl_context(trust_env=False),
        max_connections=4,
        max_keepalive_connections=4,
        http1=True,
        http2=False,
        network_backend=backend,
    )
    return transport, backend


def _remaining(deadline: float, timeout: float | None) -> float:
    left = deadline - time.monotonic()
    return left if timeout is None else min(left, timeout)
