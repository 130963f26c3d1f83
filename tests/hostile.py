"""Hostile loopback servers and a watchdog: a hang or a memory blow-up fails, never stalls.

The servers listen on 127.0.0.1 only and speak raw HTTP/1.1 from a socket, so a
test can drip bytes, lie about lengths or send any header bytes it likes.
"""

from __future__ import annotations

import socket
import threading
import tracemalloc
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

import pytest

# Generous: a healthy call takes well under a second; these only catch hangs.
WATCHDOG_SECONDS = 90.0
WATCHDOG_MEGABYTES = 400


def bounded[T](
    call: Callable[[], T],
    *,
    seconds: float = WATCHDOG_SECONDS,
    megabytes: int = WATCHDOG_MEGABYTES,
) -> T:
    """``call()`` on a daemon thread; fails the test if it outlives ``seconds`` or its
    Python allocations peak over ``megabytes`` (tracemalloc)."""
    box: list[T] = []
    errors: list[BaseException] = []

    def run() -> None:
        try:
            box.append(call())
        except BaseException as error:  # handed to the test's thread below
            errors.append(error)

    started = tracemalloc.is_tracing()
    if not started:
        tracemalloc.start()
    tracemalloc.reset_peak()
    try:
        worker = threading.Thread(target=run, daemon=True, name="watchdog")
        worker.start()
        worker.join(seconds)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        if not started:
            tracemalloc.stop()
    if worker.is_alive():
        pytest.fail(f"the call was still running after {seconds:g} s (a hang)", pytrace=False)
    if peak > megabytes * 1_000_000:
        pytest.fail(f"the call peaked at {peak / 1e6:.0f} MB (over {megabytes} MB)", pytrace=False)
    if errors:
        raise errors[0]
    return box[0]


@dataclass
class Served:
    """What a raw server received: each request's first line."""

    base: str
    requests: list[str] = field(default_factory=list)


type Respond = Callable[[socket.socket, str], None]


@contextmanager
def raw_server(respond: Respond) -> Iterator[Served]:
    """A loopback server: ``respond(connection, request_line)`` writes the raw answer."""
    listener = socket.create_server(("127.0.0.1", 0))
    listener.settimeout(0.2)
    port = listener.getsockname()[1]
    served = Served(f"http://127.0.0.1:{port}")
    stop = threading.Event()

    def handle(connection: socket.socket) -> None:
        with connection:
            connection.settimeout(30)
            data = b""
            try:
                while b"\r\n\r\n" not in data:
                    chunk = connection.recv(65_536)
                    if not chunk:
                        return
                    data += chunk
                line = data.split(b"\r\n", 1)[0].decode("latin-1")
                served.requests.append(line)
                respond(connection, line)
            except OSError:
                return

    def accept() -> None:
        while not stop.is_set():
            try:
                connection, _ = listener.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            threading.Thread(target=handle, args=(connection,), daemon=True).start()

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    try:
        yield served
    finally:
        stop.set()
        thread.join(5)
        listener.close()


def head(status: str = "200 OK", headers: dict[str, str] | None = None) -> bytes:
    """A status line and headers (no body); ``Connection: close`` unless given."""
    lines = [f"HTTP/1.1 {status}"]
    fields = {"Connection": "close", **(headers or {})}
    lines += [f"{key}: {value}" for key, value in fields.items()]
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")


def answer(body: bytes, status: str = "200 OK", **headers: str) -> Respond:
    """A whole response with ``Content-Length``; header names use ``_`` for ``-``."""
    fields = {key.replace("_", "-"): value for key, value in headers.items()}
    fields.setdefault("Content-Length", str(len(body)))

    def respond(connection: socket.socket, line: str) -> None:
        connection.sendall(head(status, fields) + body)

    return respond
