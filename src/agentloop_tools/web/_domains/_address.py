"""Which IP addresses a fetch may connect to: the public internet and nothing else.

``ipaddress`` knows the special-purpose registries, but its flags are easy to
misread: carrier-grade NAT (100.64.0.0/10, where one cloud serves its metadata)
is neither ``is_private`` nor ``is_global``, and an IPv6 address can carry an
IPv4 address that a dual-stack host or a NAT64 gateway delivers to. So every
address is judged on its own and again by the IPv4 address it embeds.
"""

from __future__ import annotations

from ipaddress import IPv4Address, IPv4Network, IPv6Address, IPv6Network, ip_address

type IPAddress = IPv4Address | IPv6Address

_CGNAT = IPv4Network("100.64.0.0/10")
_METADATA = frozenset({IPv4Address("169.254.169.254"), IPv6Address("fd00:ec2::254")})
# IPv6 ranges whose low 32 bits are an IPv4 address the packet reaches:
# IPv4-compatible (deprecated, still routed by some stacks) and the NAT64
# well-known prefix (RFC 6052). IPv4-mapped, 6to4 and Teredo have their own
# ``ipaddress`` accessors.
_COMPATIBLE = IPv6Network("::/96")
_NAT64 = IPv6Network("64:ff9b::/96")
# Tunnel forms refused whatever public IPv4 address they carry: their relays are
# anyone's (6to4 is deprecated by RFC 7526), and Python 3.12.1 calls 2002::/16
# global while 3.13 calls it private, so the flags alone would disagree by version.
_TUNNELS = (
    (IPv6Network("2002::/16"), "a 6to4 tunnel address"),
    (IPv6Network("2001::/32"), "a Teredo tunnel address"),
    (_COMPATIBLE, "a deprecated IPv4-compatible address"),
)


def parse_address(text: str) -> IPAddress | None:
    """An address string as a resolver or URL gives it (brackets, zone index allowed)."""
    candidate = text.strip()
    if candidate.startswith("[") and candidate.endswith("]"):
        candidate = candidate[1:-1]
    # A zone index (fe80::1%eth0) names an interface, not another address.
    candidate = candidate.split("%", 1)[0]
    try:
        return ip_address(candidate)
    except ValueError:
        return None


def refusal(address: IPAddress) -> str | None:
    """Why a fetch must not connect to ``address``, or None when it is public.

    Judges the address and every IPv4 address it carries (IPv4-mapped,
    IPv4-compatible, NAT64, 6to4, Teredo): any refusal refuses the whole.
    """
    if isinstance(address, IPv6Address) and (address.ipv4_mapped or address in _NAT64):
        # A translation form: the packet goes to the IPv4 address inside, so that
        # address decides (DNS64 networks give every IPv4-only site such a name).
        inner = address.ipv4_mapped or IPv4Address(int(address) & 0xFFFFFFFF)
        inner_reason = _own_refusal(inner)
        return f"{inner_reason} ({inner} inside {shown(address)})" if inner_reason else None
    # The IPv4 address a tunnel form delivers to names the reason first: Python
    # versions disagree on whether the tunnel prefixes themselves are "private".
    for inner in embedded_ipv4(address):
        inner_reason = _own_refusal(inner)
        if inner_reason is not None:
            return f"{inner_reason} ({inner} inside {shown(address)})"
    if isinstance(address, IPv6Address) and int(address) > 1:
        for network, name in _TUNNELS:
            if address in network:
                return f"{name}, refused whatever it carries"
    return _own_refusal(address)


def shown(address: IPAddress) -> str:
    """The address as written in messages, the same on every Python version.

    (``str()`` of an IPv4-mapped IPv6 address is ``::ffff:7f00:1`` before 3.13.)
    """
    if isinstance(address, IPv6Address) and address.ipv4_mapped is not None:
        return f"::ffff:{address.ipv4_mapped}"
    return str(address)


def embedded_ipv4(address: IPAddress) -> tuple[IPv4Address, ...]:
    """The IPv4 addresses an IPv6 address delivers to, if any."""
    if isinstance(address, IPv4Address):
        return ()
    found: list[IPv4Address] = []
    if address.ipv4_mapped is not None:
        found.append(address.ipv4_mapped)
    if address in _NAT64 or (address in _COMPATIBLE and int(address) > 1):
        found.append(IPv4Address(int(address) & 0xFFFFFFFF))
    if address.sixtofour is not None:
        found.append(address.sixtofour)
    if address.teredo is not None:
        found.extend(address.teredo)
    return tuple(found)


def _own_refusal(address: IPAddress) -> str | None:
    if address in _METADATA:
        return "a cloud metadata address"
    if address.is_unspecified:
        return "an unspecified address"
    if address.is_loopback:
        return "a loopback address"
    if address.is_link_local:
        return "a link-local address"
    if isinstance(address, IPv4Address) and address in _CGNAT:
        return "a carrier-grade NAT address"
    if address.is_multicast:
        return "a multicast address"
    if isinstance(address, IPv6Address) and address.is_site_local:
        return "a site-local address"
    if address.is_private:
        return "a private-network address"
    if address.is_reserved:
        return "a reserved address"
    if not address.is_global:
        return "an address that is not publicly routable"
    return None
