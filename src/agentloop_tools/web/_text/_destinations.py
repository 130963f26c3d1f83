"""Markdown link destinations, both ways: writing a URL so it is one, reading them back.

``shown_link`` writes a search hit's URL so that the rendered ``[title](URL)`` links
to exactly the string our policy checked. ``link_destinations`` reads every inline
link destination in a text as CommonMark does, one per ``](``, so a link glued to
the one before it (``[a](https://ok.example/)[b](//evil.example/)``) is read too.
"""

from __future__ import annotations

import html
import re
from collections.abc import Iterator

from ada_url import HostType, parse_url

from agentloop_tools.web._domains._url import MAX_URL_LENGTH

# What ends a link destination, or is decoded inside one (a backslash escape, an
# entity reference): percent-encoded, so the destination is the string as checked.
_ENCODE = {"(": "%28", ")": "%29", "<": "%3C", ">": "%3E", "\\": "%5C", " ": "%20"}
_ENTITY = r"&(?=#[0-9]{1,7};|#[xX][0-9a-fA-F]{1,6};|[A-Za-z][A-Za-z0-9]{0,31};)"
_ENCODED = re.compile(r"[()<>\\ ]|" + _ENTITY)
_ENCODED_NOT_PARENS = re.compile(r"[<>\\ ]|" + _ENTITY)
# cmark stops reading nested parentheses in a destination past this depth.
_MAX_DEPTH = 32
# The names a DNS label can hold (LDH, and "_" as in service names), 1-63 octets.
_DNS_LABEL = re.compile(r"[a-z0-9_](?:[a-z0-9_-]{0,61}[a-z0-9_])?")
# An http(s) URL whose host is plain lower-case LDH (no userinfo, no IP, no escapes):
# WHATWG reads exactly that host, so the parser is not needed to judge it.
_PLAIN_HOST = re.compile(
    r"https?://(?P<host>[a-z0-9_-]+(?:\.[a-z0-9_-]+)*\.[a-z_-][a-z0-9_-]*\.?)(?::[0-9]{1,5})?(?=[/?#]|$)"
)
_SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+.\-]*:")
_ESCAPABLE = re.compile(r"\\([!-/:-@\[-`{-~])")


def shown_link(url: str) -> str | None:
    """``url`` percent-encoded to be one markdown link destination, or None.

    None when the result is not an http(s) URL with a host a DNS name (or an IP
    address) can be, or is over 2,048 characters. The encoding can move the host
    (``https://a.example\\@b.example/`` is a.example to a browser, b.example with its
    backslash encoded): check :func:`same_host` before showing it.
    """
    parens = "(" in url or ")" in url
    if parens and not _balanced(url):
        shown = _ENCODED.sub(_encode, url)
    elif _ENCODED_NOT_PARENS.search(url) is not None:
        # Balanced parentheses stay in one destination (Wikipedia's "_(language)").
        shown = _ENCODED_NOT_PARENS.sub(_encode, url)
    else:
        shown = url
    if len(shown) > MAX_URL_LENGTH:
        return None
    plain = _PLAIN_HOST.match(shown)
    if plain is not None:
        # The common case, without the URL parser: a lower-case LDH host as written.
        return shown if is_dns_name(plain["host"]) else None
    try:
        parts = parse_url(shown, attributes=("protocol", "hostname", "host_type"))
    except ValueError:
        return None
    if parts["protocol"] not in ("http:", "https:"):
        return None
    if parts["host_type"] == HostType.DEFAULT and not is_dns_name(str(parts["hostname"])):
        return None
    return shown


def same_host(given: str, shown: str) -> bool:
    """Whether a browser opens ``shown`` on the host (and port) it opens ``given`` on."""
    if shown == given:
        return True
    try:
        hosts = [parse_url(url, attributes=("host",))["host"] for url in (given, shown)]
    except ValueError:
        return False
    return hosts[0] == hosts[1]


def _encode(match: re.Match[str]) -> str:
    return _ENCODE.get(match[0], "%26")


def _balanced(url: str) -> bool:
    depth = 0
    for char in url:
        if char == "(":
            depth += 1
            if depth > _MAX_DEPTH:
                return False
        elif char == ")":
            depth -= 1
            if depth < 0:
                return False
    return depth == 0


def is_dns_name(host: str) -> bool:
    """Whether ``host`` (ASCII, as a WHATWG parser gives it) is a name DNS can hold."""
    name = host[:-1] if host.endswith(".") else host
    if not name or len(name) > 253:
        return False
    return all(_DNS_LABEL.fullmatch(label) for label in name.split("."))


def link_destinations(text: str) -> Iterator[tuple[int, int, str | None]]:
    """``(start, end, url)`` of each inline link destination in ``text``.

    ``url`` is the absolute http(s) URL a renderer would link to (a scheme-relative
    destination read as https), or None for a relative or other-scheme one.
    """
    position = text.find("](")
    while position != -1:
        start = position + 2
        end = _destination_end(text, start)
        if end > start:
            yield start, end, _absolute(text[start:end])
        position = text.find("](", start)


def _destination_end(text: str, start: int) -> int:
    if start < len(text) and text[start] == "<":
        close = text.find(">", start)
        newline = text.find("\n", start)
        if close == -1 or (newline != -1 and newline < close):
            return start
        return close + 1
    depth = 0
    index = start
    while index < len(text):
        char = text[index]
        if char == "\\" and index + 1 < len(text) and not text[index + 1].isspace():
            index += 2
            continue
        if char.isspace() or ord(char) < 0x20:
            break
        if char == "(":
            depth += 1
        elif char == ")":
            if depth == 0:
                break
            depth -= 1
        index += 1
    return index


def _absolute(destination: str) -> str | None:
    if destination.startswith("<") and destination.endswith(">"):
        destination = destination[1:-1]
    target = html.unescape(_ESCAPABLE.sub(r"\1", destination)).strip()
    if target[:2] in ("//", "\\\\", "/\\", "\\/"):
        return "https:" + target
    scheme = _SCHEME.match(target)
    if scheme is not None and scheme[0].lower() in ("http:", "https:"):
        return target
    return None
