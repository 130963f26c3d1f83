"""A deadline on every socket operation, not only a timeout on each.

httpx's timeouts bound each socket operation, not an exchange: a server that sends
one byte every two seconds never trips a 15 s read timeout. A ``DeadlineStream``
asks, before each read, write and TLS handshake, when the exchange must end, and
waits at most until then. Where that time comes from is the caller's:

- fixed, for ``web_fetch``: the whole fetch ends by its ``timeout``;
- bound to this thread (``start_attempt``), for one ``web_search`` attempt and one
  page-API request of ``web_fetch(via=...)``: agentloop runs parallel tool calls in
  threads over one connection pool, so a pooled connection serves whichever attempt
  reads from it (``attempt_client`` builds that client).
"""

from __future__ import annotations

import ssl
import threading
import time
import typing
from collections.abc import Callable, Iterable, Sequence

import httpcore
import httpx

type Deadline = Callable[[], float | None]
"""The ``time.monotonic()`` value an operation must end by, asked at each one; None: none."""

_attempt = threading.local()


def start_attempt(deadline: float) -> None:
    """Bind this thread's attempt deadline (``time.monotonic()``) for ``attempt_client``."""
    _attempt.deadline = deadline


def end_attempt() -> None:
    """Unbind it: a connection used outside an attempt waits only for its own timeouts."""
    _attempt.deadline = None


def attempt_deadline() -> float | None:
    """This thread's attempt deadline, or None outside an attempt."""
    deadline: float | None = getattr(_attempt, "deadline", None)
    return deadline


def time_left(deadline: float, timeout: float | None) -> float:
    """Seconds until ``deadline``, at most ``timeout``; zero or less once it has passed."""
    left = deadline - time.monotonic()
    return left if timeout is None else min(left, timeout)


def _wait(deadline: Deadline, timeout: float | None) -> float | None:
    ends = deadline()
    if ends is None:
        return timeout
    left = time_left(ends, timeout)
    if left <= 0:
        # A read timeout whatever the operation: web_search names the type in its result
        # (which sits in users' cassettes), and it has always said ReadTimeout.
        raise httpcore.ReadTimeout("the deadline passed before the exchange ended")
    return left


class DeadlineStream(httpcore.NetworkStream):
    """A network stream whose every operation waits at most until ``deadline()``."""

    def __init__(self, inner: httpcore.NetworkStream, deadline: Deadline) -> None:
        self._inner = inner
        self._deadline = deadline

    def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        """Read, giving up at the deadline."""
        return self._inner.read(max_bytes, timeout=_wait(self._deadline, timeout))

    def write(self, buffer: bytes, timeout: float | None = None) -> None:
        """Write, giving up at the deadline."""
        self._inner.write(buffer, timeout=_wait(self._deadline, timeout))

    def close(self) -> None:
        """Close the socket."""
        self._inner.close()

    def start_tls(
        self,
        ssl_context: ssl.SSLContext,
        server_hostname: str | None = None,
        timeout: float | None = None,
    ) -> httpcore.NetworkStream:
        """TLS over this stream, by the same deadline (``server_hostname`` is the URL's host)."""
        left = _wait(self._deadline, timeout)
        return DeadlineStream(
            self._inner.start_tls(ssl_context, server_hostname, timeout=left), self._deadline
        )

    def get_extra_info(self, info: str) -> typing.Any:
        """What the inner stream says (httpcore asks for the SSL object and the socket)."""
        return self._inner.get_extra_info(info)


class DeadlineBackend(httpcore.NetworkBackend):
    """httpcore's own connections, each connect and every later operation cut to ``deadline()``.

    A subclass chooses where a host is connected (``addresses``): web_fetch connects
    only to the addresses it checked; by default the name itself is handed to the socket.
    """

    def __init__(self, deadline: Deadline) -> None:
        self._deadline = deadline
        self._plain = httpcore.SyncBackend()

    def addresses(self, host: str) -> Sequence[str]:
        """Where to connect for ``host``, in order; raise ``httpcore.ConnectError`` to refuse."""
        return [host]

    def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[httpcore.SOCKET_OPTION] | None = None,
    ) -> httpcore.NetworkStream:
        """Connect to the first of ``addresses(host)`` that answers, by the deadline."""
        last_error: Exception | None = None
        for address in self.addresses(host):
            try:
                stream = self._plain.connect_tcp(
                    address,
                    port,
                    timeout=_wait(self._deadline, timeout),
                    local_address=local_address,
                    socket_options=socket_options,
                )
            except (httpcore.ConnectError, httpcore.ConnectTimeout) as error:
                last_error = error
                continue
            return DeadlineStream(stream, self._deadline)
        raise last_error or httpcore.ConnectError(f"{host} has no address to connect to")

    def connect_unix_socket(
        self,
        path: str,
        timeout: float | None = None,
        socket_options: Iterable[httpcore.SOCKET_OPTION] | None = None,
    ) -> httpcore.NetworkStream:
        """Connect to a Unix socket, by the deadline."""
        left = _wait(self._deadline, timeout)
        stream = self._plain.connect_unix_socket(path, left, socket_options=socket_options)
        return DeadlineStream(stream, self._deadline)

    def sleep(self, seconds: float) -> None:
        """Sleep, as httpcore's own backend does (used between connection retries)."""
        time.sleep(seconds)


def transport_over(
    backend: httpcore.NetworkBackend, limits: httpx.Limits, *, trust_env: bool
) -> httpx.HTTPTransport:
    """An ``httpx.HTTPTransport`` whose connections ``backend`` opens.

    ``handle_request`` stays httpx's own, so vcrpy records and replays through it.
    """
    # One SSL context for both pools: loading the CA bundle is most of a transport's cost.
    ssl_context = httpx.create_ssl_context(trust_env=trust_env)
    transport = httpx.HTTPTransport(verify=ssl_context, trust_env=trust_env)
    # httpx has no public way to hand HTTPTransport a network backend; its pool takes one
    # as a constructor argument, so the pool is rebuilt with the settings given.
    transport._pool = httpcore.ConnectionPool(
        ssl_context=ssl_context,
        max_connections=limits.max_connections,
        max_keepalive_connections=limits.max_keepalive_connections,
        keepalive_expiry=limits.keepalive_expiry,
        http1=True,
        http2=False,
        network_backend=backend,
    )
    return transport


def attempt_client(timeout: httpx.Timeout) -> httpx.Client:
    """A client whose every connect, TLS handshake, read and write ends by the attempt's
    deadline (``start_attempt``); httpx's default pool limits, redirects never followed."""
    limits = httpx.Limits(max_connections=100, max_keepalive_connections=20, keepalive_expiry=5.0)
    transport = transport_over(DeadlineBackend(attempt_deadline), limits, trust_env=True)
    return httpx.Client(transport=transport, timeout=timeout, follow_redirects=False)
