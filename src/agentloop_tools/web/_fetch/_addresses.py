"""Step 3 of a fetch: resolve a host once and refuse if ANY of its addresses is not public.

Asked before a request through the caller's client, and by our pinning transport
(``_transport.py``) when it first connects to a host, so a name is looked up once
and the connection goes to an address that was checked.
"""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Sequence

from agentloop_tools.web._domains._address import parse_address, refusal
from agentloop_tools.web._fetch._codes import FetchRefusal, shown
from agentloop_tools.web._fetch._settings import FetchSettings, Resolver


def system_resolver(host: str) -> list[str]:
    """The system's addresses for ``host`` (``getaddrinfo``), each once, in its order."""
    infos = socket.getaddrinfo(host, None, type=socket.SOCK_STREAM)
    return list(dict.fromkeys(str(info[4][0]) for info in infos))


def addresses(settings: FetchSettings, host: str, href: str, deadline: float) -> list[str]:
    """Step 3: resolve once and refuse if ANY address is not public."""
    literal = parse_address(host)
    answers = [str(literal)] if literal is not None else _resolve(settings.resolver, host, deadline)
    addresses = []
    for answer in answers:
        address = parse_address(answer) if isinstance(answer, str) else None
        if address is None:
            raise FetchRefusal(
                "blocked-address",
                f"the resolver answered {shown(answer)} for {host}, which is not an IP address",
                "fix the resolver passed to web_fetch(resolver=...)",
            )
        if not settings.allow_private:
            reason = refusal(address)
            if reason is not None:
                verb = "is" if literal is not None else "resolves to"
                raise FetchRefusal(
                    "blocked-address",
                    f"{href} {verb} {address}, {reason}",
                    "do not retry; only public internet addresses can be fetched",
                )
        addresses.append(str(address))
    return addresses


def _resolve(resolver: Resolver | None, host: str, deadline: float) -> list[str]:
    resolver = resolver or system_resolver
    # getaddrinfo takes no timeout (nor need a custom resolver): run it on a daemon
    # thread and stop waiting at the deadline; a late answer is then unused.
    box: list[Sequence[str] | BaseException] = []

    def lookup() -> None:
        try:
            box.append(resolver(host))
        except BaseException as error:  # handed to the caller's thread below
            box.append(error)

    worker = threading.Thread(target=lookup, daemon=True, name="web_fetch-resolve")
    worker.start()
    worker.join(max(deadline - time.monotonic(), 0))
    if not box:
        raise FetchRefusal(
            "timeout", f"looking up {host} took too long", "try again later or another source"
        )
    result = box[0]
    if isinstance(result, BaseException):
        raise FetchRefusal(
            "fetch-error",
            f"{host} could not be resolved ({type(result).__name__}: {result})",
            "check the domain name; do not retry a name that does not exist",
        )
    try:
        answers = [result] if isinstance(result, str) else list(result)
    except TypeError:
        raise FetchRefusal(
            "blocked-address",
            f"the resolver answered {shown(result)} for {host}, not a list of addresses",
            "fix the resolver passed to web_fetch(resolver=...)",
        ) from None
    if not answers:
        raise FetchRefusal(
            "fetch-error",
            f"{host} has no address",
            "check the domain name; do not retry a name that does not exist",
        )
    return answers
