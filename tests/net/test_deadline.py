"""The one deadline stream (web/_net/_deadline.py): every socket operation ends by the deadline."""

from __future__ import annotations

import socket
import ssl
import threading
import time
import typing
from collections.abc import Callable

import httpcore
import pytest

from agentloop_tools.web._net import _deadline
from agentloop_tools.web._net._deadline import DeadlineBackend, DeadlineStream, time_left


class _Inner(httpcore.NetworkStream):
    """Records the timeout each operation was given."""

    def __init__(self) -> None:
        self.waits: list[tuple[str, float | None]] = []

    def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        self.waits.append(("read", timeout))
        return b"x"

    def write(self, buffer: bytes, timeout: float | None = None) -> None:
        self.waits.append(("write", timeout))

    def close(self) -> None:
        self.waits.append(("close", None))

    def start_tls(
        self,
        ssl_context: ssl.SSLContext,
        server_hostname: str | None = None,
        timeout: float | None = None,
    ) -> httpcore.NetworkStream:
        self.waits.append(("tls", timeout))
        return self

    def get_extra_info(self, info: str) -> typing.Any:
        return info


def test_every_operation_waits_at_most_until_the_deadline() -> None:
    inner = _Inner()
    ends = time.monotonic() + 2.0
    stream = DeadlineStream(inner, lambda: ends)
    stream.read(10, timeout=30.0)
    stream.write(b"x", timeout=0.5)
    tls = stream.start_tls(ssl.create_default_context(), "a.example", timeout=None)
    assert isinstance(tls, DeadlineStream)
    tls.read(10)
    read, write, handshake, tls_read = (wait or 99.0 for _, wait in inner.waits)
    assert 1.0 < read <= 2.0
    assert write == 0.5
    assert handshake <= 2.0
    assert tls_read <= 2.0
    assert stream.get_extra_info("socket") == "socket"


@pytest.mark.parametrize("operation", ["read", "write", "tls"])
def test_past_the_deadline_every_operation_is_a_read_timeout_before_it_waits(
    operation: str,
) -> None:
    inner = _Inner()
    stream = DeadlineStream(inner, lambda: time.monotonic() - 1)
    run: dict[str, Callable[[], object]] = {
        "read": lambda: stream.read(10),
        "write": lambda: stream.write(b"x"),
        "tls": lambda: stream.start_tls(ssl.create_default_context(), "a.example"),
    }
    # ReadTimeout whatever the operation: web_search names the type in its result.
    with pytest.raises(httpcore.ReadTimeout):
        run[operation]()
    assert inner.waits == []


def test_without_a_deadline_the_timeouts_are_passed_through() -> None:
    inner = _Inner()
    stream = DeadlineStream(inner, _deadline.attempt_deadline)
    stream.read(10, timeout=7.0)
    stream.write(b"x")
    assert inner.waits == [("read", 7.0), ("write", None)]


def test_the_attempt_deadline_is_bound_to_its_thread() -> None:
    seen: list[float | None] = []
    _deadline.start_attempt(123.0)
    try:
        other = threading.Thread(target=lambda: seen.append(_deadline.attempt_deadline()))
        other.start()
        other.join()
        assert _deadline.attempt_deadline() == 123.0
    finally:
        _deadline.end_attempt()
    assert seen == [None]
    assert _deadline.attempt_deadline() is None


def test_time_left_is_capped_by_the_timeout_and_goes_below_zero_once_past() -> None:
    now = time.monotonic()
    assert time_left(now + 100, 5.0) == 5.0
    assert time_left(now - 1, None) < 0


def test_the_backend_connects_to_the_first_address_that_answers_and_cuts_its_reads() -> None:
    closed = socket.create_server(("127.0.0.1", 0))
    dead_port = closed.getsockname()[1]
    closed.close()
    with socket.create_server(("127.0.0.1", 0)) as listener:
        port = listener.getsockname()[1]

        class TwoAddresses(DeadlineBackend):
            def addresses(self, host: str) -> list[str]:
                return ["127.0.0.2", host]  # nothing listens there: refused at once

        ends = time.monotonic() + 0.5
        stream = TwoAddresses(lambda: ends).connect_tcp("127.0.0.1", port, timeout=5.0)
        assert isinstance(stream, DeadlineStream)
        began = time.monotonic()
        # The peer never writes: the read ends at the deadline, not at its 30 s timeout.
        with pytest.raises(httpcore.ReadTimeout):
            stream.read(10, timeout=30.0)
        assert time.monotonic() - began < 5
        stream.close()
        with pytest.raises(httpcore.ConnectError):
            DeadlineBackend(lambda: None).connect_tcp("127.0.0.1", dead_port, timeout=5.0)
