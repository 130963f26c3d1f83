"""The connection step of web_fetch: connect to the address that was checked, by a deadline.

The host is resolved once, when the first connection to it is opened, and every
answer is checked; the socket then connects only to those answers, never to the
name, so DNS cannot hand it another address in between (rebinding). A request
that a cassette answers opens no connection, so a replay never asks DNS. httpcore still receives the
original host, so TLS verifies the certificate against the name and the
``Host`` header names it. It stays an ``httpx.HTTPTransport`` whose
``handle_request`` is untouched, so vcrpy records and replays through it.

Every read, write and TLS handshake on the socket is cut to what is left of the
fetch's deadline (``web/_net/_deadline.py``), so a server that drips its headers or
body a byte at a time cannot hold the tool past ``timeout``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence

import httpcore
import httpx

from agentloop_tools.web._net._deadline import DeadlineBackend, transport_over


class PinnedBackend(DeadlineBackend):
    """Opens TCP connections only to addresses checked for that host, by the fetch's deadline.

    Args:
        admit: host (lower case, IPv6 without brackets) to the addresses that may be
            connected to; it raises to refuse. Called once per host per backend, when
            the first connection to it is opened, so a replayed request (which opens
            none) never asks DNS.
        deadline: ``time.monotonic()`` value after which no connect, read or write may wait.

    Attributes:
        refused: the exception ``admit`` raised for the last refused host, so the
            caller can report it (httpx wraps what a backend raises in its own type).
    """

    def __init__(self, admit: Callable[[str], Sequence[str]], deadline: float) -> None:
        super().__init__(lambda: deadline)
        self._admit = admit
        self._pins: dict[str, list[str]] = {}
        self.refused: Exception | None = None

    def addresses(self, host: str) -> Sequence[str]:
        """The checked addresses of ``host``: checked once, then pinned."""
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
        return addresses

    def connect_unix_socket(
        self,
        path: str,
        timeout: float | None = None,
        socket_options: Iterable[httpcore.SOCKET_OPTION] | None = None,
    ) -> httpcore.NetworkStream:
        """Refused: a Unix socket has no address to check."""
        raise httpcore.ConnectError(f"web_fetch never connects to a Unix socket ({path})")


def pinned_transport(
    admit: Callable[[str], Sequence[str]], deadline: float
) -> tuple[httpx.HTTPTransport, PinnedBackend]:
    """An ``httpx.HTTPTransport`` connecting only to what ``admit`` returns, by ``deadline``.

    Returns the transport and its backend (whose ``refused`` says why a host was
    refused). No proxy from the environment is used: a proxy would resolve the name
    itself.
    """
    backend = PinnedBackend(admit, deadline)
    limits = httpx.Limits(max_connections=4, max_keepalive_connections=4, keepalive_expiry=None)
    return transport_over(backend, limits, trust_env=False), backend
