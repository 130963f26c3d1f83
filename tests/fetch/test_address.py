"""The address table: what a fetch may connect to, including the forms ipaddress misreads."""

from __future__ import annotations

import pytest

from agentloop_tools.web._domains._address import parse_address, refusal


@pytest.mark.parametrize(
    ("address", "reason"),
    [
        ("127.0.0.1", "a loopback address"),
        ("10.1.2.3", "a private-network address"),
        ("169.254.169.254", "a cloud metadata address"),
        ("fd00:ec2::254", "a cloud metadata address"),
        ("169.254.1.1", "a link-local address"),
        ("100.100.100.200", "a carrier-grade NAT address"),
        ("100.127.255.255", "a carrier-grade NAT address"),
        ("224.0.0.251", "a multicast address"),
        ("ff02::1", "a multicast address"),
        ("0.0.0.0", "an unspecified address"),
        ("::", "an unspecified address"),
        ("240.0.0.1", "a private-network address"),
        ("fe80::1", "a link-local address"),
        ("fec0::1", "a site-local address"),
        ("::ffff:127.0.0.1", "a loopback address (127.0.0.1 inside ::ffff:127.0.0.1)"),
        ("::ffff:100.64.0.1", "a carrier-grade NAT address (100.64.0.1 inside ::ffff:100.64.0.1)"),
        (
            "64:ff9b::a9fe:a9fe",
            "a cloud metadata address (169.254.169.254 inside 64:ff9b::a9fe:a9fe)",
        ),
        ("::7f00:1", "a loopback address (127.0.0.1 inside ::7f00:1)"),  # IPv4-compatible
        ("::8.8.8.8", "a deprecated IPv4-compatible address, refused whatever it carries"),
        ("2002:7f00:1::", "a loopback address (127.0.0.1 inside 2002:7f00:1::)"),  # 6to4
        ("192.0.2.10", "a private-network address"),  # documentation range
    ],
)
def test_refused_addresses_say_why(address: str, reason: str) -> None:
    parsed = parse_address(address)
    assert parsed is not None
    assert refusal(parsed) == reason


@pytest.mark.parametrize(
    "address",
    [
        "93.184.215.14",
        "8.8.8.8",
        "100.63.255.255",
        "100.128.0.1",
        "2606:2800:220:1::1",
        "::ffff:8.8.8.8",
        "64:ff9b::808:808",
    ],
)
def test_public_addresses_and_their_translations_pass(address: str) -> None:
    parsed = parse_address(address)
    assert parsed is not None
    assert refusal(parsed) is None


def test_parse_address_reads_brackets_and_zones_and_refuses_names() -> None:
    assert str(parse_address("[::1]")) == "::1"
    assert str(parse_address("fe80::1%eth0")) == "fe80::1"
    assert parse_address("example.com") is None
    assert parse_address("127.1") is None  # a resolver answer must be a plain address
