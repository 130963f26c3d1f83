"""Hypothesis: no URL both passes web_fetch's checks and connects to a refused address."""

from __future__ import annotations

import ipaddress
from collections.abc import Sequence
from typing import Any

import httpcore
import pytest
from agentloop import ToolError
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from agentloop_tools.web._fetch._tool import build_fetcher

REFUSED_V4 = [
    *("127.0.0.1", "10.0.0.1", "169.254.169.254", "100.100.100.200", "0.0.0.0"),
    *("192.168.0.1", "172.16.0.1", "224.0.0.1", "255.255.255.255", "100.64.0.1"),
]
PUBLIC_V4 = ["93.184.215.14", "8.8.8.8", "1.1.1.1"]
PUBLIC_V6 = ["2606:2800:220:1::1", "2001:4860:4860::8888"]


def _v4_forms(address: str) -> list[str]:
    number = int(ipaddress.IPv4Address(address))
    a, b, c, d = (int(part) for part in address.split("."))
    return [
        address,
        str(number),
        hex(number),
        f"0{a:o}.{b}.{c}.{d}",
        f"0x{a:x}.{b}.{c}.{d}",
        f"{a}.{(b << 16) | (c << 8) | d}",
        f"{address}.",
        "".join(chr(0xFF10 + int(ch)) if ch.isdigit() else ch for ch in address),  # fullwidth
    ]


def _v6_forms(address: str) -> list[str]:
    forms = [f"[::ffff:{address}]", f"[::{address}]", f"[64:ff9b::{address}]"]
    packed = int(ipaddress.IPv4Address(address))
    forms.append(f"[::ffff:{packed >> 16:x}:{packed & 0xFFFF:x}]")
    return forms


hosts = st.one_of(
    st.sampled_from(REFUSED_V4 + PUBLIC_V4).flatmap(
        lambda address: st.sampled_from(_v4_forms(address) + _v6_forms(address))
    ),
    st.sampled_from(
        [
            "[::1]",
            "[::]",
            "[fe80::1]",
            "[fd00:ec2::254]",
            "[2002:7f00:1::]",
            "[2001:0:4136:e378:8000:63bf:80ff:fffe]",
        ]
        + [f"[{a}]" for a in PUBLIC_V6]
    ),
    st.sampled_from(
        [
            "localhost",
            "intranet",
            "example.com",
            "a.example",
            "xn--bcher-kva.example",
            "rebind.example",
            "LOCALHOST.",
            "127.0.0.1.nip.io",
            "%31%32%37.0.0.1",
            "ex%61mple.com",
        ]
    ),
)
urls = st.builds(
    lambda scheme, slashes, userinfo, host, port, path: (
        f"{scheme}{slashes}{userinfo}{host}{port}{path}"
    ),
    st.sampled_from(
        [
            "http:",
            "https:",
            "HTTP:",
            "hTtPs:",
            "ftp:",
            "file:",
            "ws:",
            "gopher:",
            "javascript:",
            "hxxp:",
            "",
        ]
    ),
    st.sampled_from(["//", "/", "\\\\", "///", "/\\", ""]),
    st.sampled_from(["", "user@", "user:pw@", "@", ":@", "a%40b@", "example.com@"]),
    hosts,
    st.sampled_from(["", ":80", ":443", ":8080", ":0", ":65536"]),
    st.sampled_from(["", "/", "/a/../b", "/%2e%2e/", "?q=1", "#f", "/\t/x"]),
)
answers = st.lists(
    st.sampled_from(REFUSED_V4 + PUBLIC_V4 + PUBLIC_V6 + ["::1", "::ffff:10.0.0.1"]),
    min_size=1,
    max_size=3,
)


def _refused_by_oracle(address: str) -> bool:
    """An independent reading of "not the public internet" (no code shared with the tool)."""
    ip = ipaddress.ip_address(address)
    if isinstance(ip, ipaddress.IPv6Address):
        if ip.ipv4_mapped is not None:
            return _refused_by_oracle(str(ip.ipv4_mapped))
        if ip in ipaddress.IPv6Network("64:ff9b::/96") or ip in ipaddress.IPv6Network("::/96"):
            return (
                True
                if int(ip) <= 1
                else _refused_by_oracle(str(ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF)))
            )
    if isinstance(ip, ipaddress.IPv4Address) and ip in ipaddress.IPv4Network("100.64.0.0/10"):
        return True
    return not ip.is_global or ip.is_multicast


@pytest.fixture
def connects(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every address the real transport tries to connect to (none is really opened)."""
    attempts: list[str] = []

    def connect_tcp(self: object, host: str, port: int, *args: Any, **kwargs: Any) -> Any:
        attempts.append(host)
        raise httpcore.ConnectError("not in tests")

    monkeypatch.setattr(httpcore.SyncBackend, "connect_tcp", connect_tcp)
    return attempts


@settings(
    max_examples=400, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(url=urls, answer=answers)
@example(url="http://0x7f.1/", answer=["93.184.215.14"])
@example(url="http://2130706433/", answer=["93.184.215.14"])
@example(url="http://[::ffff:127.0.0.1]/", answer=["93.184.215.14"])
@example(url="http://rebind.example/", answer=["93.184.215.14", "127.0.0.1"])
@example(url="http://ex%61mple.com/", answer=["100.100.100.200"])
def test_no_url_passes_the_checks_and_connects_to_a_refused_address(
    url: str, answer: list[str], connects: list[str]
) -> None:
    looked_up: list[str] = []

    def resolver(host: str) -> Sequence[str]:
        looked_up.append(host)
        return answer

    fetcher = build_fetcher(
        policy=None, name="web_fetch", max_chars=1000, max_bytes=10_000, timeout=2.0,
        cache_ttl=0, respect_robots=False, user_agent="test", allow_private_networks=False,
        http_client=None, via=None, resolver=resolver,
    )  # fmt: skip
    connects.clear()
    with pytest.raises(ToolError) as refused:
        fetcher.fetch(url)
    for address in connects:
        assert not _refused_by_oracle(address), (url, answer, address)
    if connects:
        # It connected: so every address the name had was public, and it was checked.
        assert refused.value.args[0].startswith("[fetch-error] ")
        if looked_up:
            assert not any(_refused_by_oracle(a) for a in answer), (url, answer)


def test_the_property_is_not_vacuous_a_public_name_connects_to_its_checked_address(
    connects: list[str],
) -> None:
    fetcher = build_fetcher(
        policy=None, name="web_fetch", max_chars=1000, max_bytes=10_000, timeout=2.0,
        cache_ttl=0, respect_robots=False, user_agent="test", allow_private_networks=False,
        http_client=None, via=None, resolver=lambda host: ["2606:2800:220:1::1", "93.184.215.14"],
    )  # fmt: skip
    with pytest.raises(ToolError, match=r"^\[fetch-error\] https://site\.example/ could not be"):
        fetcher.fetch("https://site.example/")
    assert connects == ["2606:2800:220:1::1", "93.184.215.14"]  # each checked answer, in order


@settings(
    max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    url=st.one_of(
        st.text(max_size=60),
        st.builds(
            lambda head, tail: head + tail,
            st.sampled_from(["http://", "https://", "http:\\\\", "HTTP://[", "http://0x", ""]),
            st.text(st.characters(codec="utf-8", exclude_categories=["Cs"]), max_size=40),
        ),
    )
)
def test_any_text_is_a_soft_error_or_a_public_connection(url: str, connects: list[str]) -> None:
    fetcher = build_fetcher(
        policy=None, name="web_fetch", max_chars=1000, max_bytes=10_000, timeout=2.0,
        cache_ttl=0, respect_robots=False, user_agent="test", allow_private_networks=False,
        http_client=None, via=None,
        resolver=lambda host: ["127.0.0.1"] if "7" in host else ["8.8.8.8"],
    )  # fmt: skip
    connects.clear()
    with pytest.raises(ToolError) as refused:
        fetcher.fetch(url)
    assert refused.value.args[0].startswith("[")
    for address in connects:
        assert not _refused_by_oracle(address), (url, address)
