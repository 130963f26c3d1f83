"""Where a URL or host really points: the browser's reading, not urllib's.

Hosts and paths come from ada, a WHATWG URL parser, so backslashes, userinfo,
percent-encoded hosts, tabs inside URLs, IPv4 in hex or octal and Unicode hosts
(UTS #46) resolve exactly as a browser resolves them. On top of that reading we
add the few normalisations a domain rule needs (trailing dot, ``www.``) and,
for blocklists, the other hosts a URL could be served as.
"""

from __future__ import annotations

import re
import unicodedata
from typing import NamedTuple
from urllib.parse import unquote

from ada_url import HostType, idna_to_ascii, idna_to_unicode, parse_url

from agentloop_tools.web._domains._address import embedded_ipv4, parse_address

_SPECIAL_SCHEMES = frozenset({"http", "https", "ws", "wss", "ftp", "file"})
# Defanged schemes a reader re-fangs by eye: hxxp://, hXXps://, fxp://.
_DEFANGED_SCHEMES = {"hxxp": "http", "hxxps": "https", "fxp": "ftp"}
_SCHEME = re.compile(r"([A-Za-z][A-Za-z0-9+.\-]*):")
_ATTRIBUTES = ("hostname", "pathname", "host_type")
# What a browser strips from both ends of a URL before reading it.
_STRIP = "".join(chr(c) for c in range(0x21))
# A dot written so that no reader links it ("example[.]com"); people re-fang it by eye.
DEFANGED_DOT = re.compile(r"\[\.\]|\(\.\)|\{\.\}|\[dot\]|\(dot\)", re.IGNORECASE)
# The longest URL web_fetch takes, search results show and the text reader reads as one.
MAX_URL_LENGTH = 2048
_ESCAPE = re.compile(r"%([0-9A-Fa-f]{2})")
_UNRESERVED = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")
# URLs whose WHATWG reading is plain to see, so they skip the parser: an http(s)
# scheme or none, an ASCII host whose last label starts with a letter (a number
# there makes it IPv4 to a browser), no userinfo, port, escape or dot segment.
# A property test checks this reading agrees with the parser's.
_PLAIN_URL = re.compile(
    r"(?:[Hh][Tt][Tt][Pp][Ss]?://)?"
    r"((?:[A-Za-z0-9_-]+\.)+[A-Za-z_][A-Za-z0-9_-]*)"
    r"((?:/(?!\.)[A-Za-z0-9\-_~!$&'()*+,;=:@.]*)*)"
    r"(?:[?#][^\x00-\x20\\]*)?"
)
# The host alone, when what follows it ends the authority for a browser (a path,
# query or fragment, or nothing): then nothing later in the URL can change the host.
_PLAIN_HOST_PREFIX = re.compile(
    r"(?:[Hh][Tt][Tt][Pp][Ss]?://)?((?:[A-Za-z0-9_-]+\.)+[A-Za-z_][A-Za-z0-9_-]*)(?=[/?#]|$)"
)
_SLASHES = re.compile(r"/{2,}")
_TAB_NEWLINE = str.maketrans("", "", "\t\n\r")
# RFC 3986: the authority follows "//" and ends at "/", "?" or "#".
_AUTHORITY = re.compile(r"[A-Za-z][A-Za-z0-9+.\-]*://([^/?#]*)")
# The host part of "host[:port]", as httpx reads it: up to ":" or "@", or an IP literal.
_RFC_HOST = re.compile(r"\[[^\]]*\]|[^:@]*")
# An absolute URL inside another one's path, query or fragment, up to the next
# parameter separator.
_NESTED = re.compile(r"(?i)(?<![A-Za-z0-9+.\-])(?:https?|ftp|wss?):[/\\]{2}[^&\s]+")
_SCHEME_SLASHES = re.compile(r"[A-Za-z][A-Za-z0-9+.\-]*:[/\\]*")
# Where a browser ends the authority of a special-scheme URL (a backslash counts).
AUTHORITY_END = re.compile(r"[/\\?#]")
_NESTED_RELATIVE = re.compile(r"(?<==)[/\\]{2}(?![/\\])[^&\s]+")


class Location(NamedTuple):
    """The host and path a URL reaches, as a browser would read them.

    Attributes:
        host: ASCII host, lower case, without trailing dots or one leading ``www.``;
            IPv4 in dotted-decimal, IPv6 in brackets.
        path: the WHATWG path (dot segments resolved, backslashes as slashes).
        is_ip: whether the host is an IP literal (no subdomains).
        valid: ``False`` when a browser would refuse the URL; ``host`` is then a
            best-effort reading, used only to decide whether a blocklist covers it.
        also_served_as: other hosts the same request could reach or pass for: the
            IPv4 behind an IPv4-mapped IPv6 address, the ASCII look-alike of a
            mixed-script host, the host an RFC 3986 client reads when it differs.
        agreed: ``False`` when RFC 3986 clients (urllib, httpx, requests) read another
            host than the browser (``https://good.com\\@evil.com/``); an allowlist
            then admits neither reading.
    """

    host: str
    path: str
    is_ip: bool
    valid: bool = True
    also_served_as: tuple[str, ...] = ()
    agreed: bool = True


def normalize_host(hostname: str) -> str:
    """Trailing dots and one leading ``www.`` never change which site is meant."""
    host = hostname.rstrip(".")
    if host.startswith("www.") and "." in host[4:]:
        host = host[4:]
    return host


def as_url(text: str) -> str | None:
    """Turn a URL, a scheme-relative URL or a bare ``host[:port][/path]`` into a URL.

    Returns None for inputs that name no host: relative paths, ``mailto:``,
    ``javascript:`` and other schemes without an authority.
    """
    candidate = text.strip(_STRIP)
    if not candidate or candidate[0] in "?#":
        return None
    if candidate[0] in "/\\" and candidate[1:2] not in ("/", "\\"):
        return None  # a path: "/\\x" and "\\\\x" are scheme-relative to a browser, "/x" is not
    scheme_match = _SCHEME.match(candidate)
    if scheme_match is None:
        if candidate[:2] in ("//", "\\\\", "/\\", "\\/"):
            return "http:" + candidate
        return "http://" + candidate
    scheme = scheme_match.group(1).lower()
    rest = candidate[scheme_match.end() :]
    scheme = _DEFANGED_SCHEMES.get(scheme, scheme)
    if scheme in _SPECIAL_SCHEMES:
        return scheme + ":" + rest
    if rest[:2] in ("//", "\\\\"):
        # A non-special scheme still names a host; read it as a browser reads http.
        return "http:" + rest
    if "." in scheme or rest[:1].isdigit():
        return "http://" + candidate  # host:port, not a scheme
    return None


def locate(url_or_host: str) -> Location | None:
    """The host and path ``url_or_host`` reaches, or None if it names no host.

    Never raises: anything a browser would refuse comes back with ``valid=False``
    and a best-effort host, or as None when not even that can be read.
    """
    if not isinstance(url_or_host, str):
        return None
    if "\t" in url_or_host or "\n" in url_or_host or "\r" in url_or_host:
        # WHATWG deletes them anywhere, the scheme included: "ht\ttps://evil.com/" is
        # https://evil.com/ to a browser and to ada, which web_fetch requests with.
        url_or_host = url_or_host.translate(_TAB_NEWLINE)
    fast = _PLAIN_URL.fullmatch(url_or_host)
    if fast is not None and not has_punycode(url_or_host):
        return Location(normalize_host(fast.group(1).lower()), fast.group(2) or "/", False)
    return parse(url_or_host)


def has_punycode(text: str) -> bool:
    """Whether ``text`` holds an ``xn--`` label in any case (hosts are case-insensitive:
    ``XN--mnchen-3ya.de`` is münchen.de to a browser)."""
    return "--" in text and "xn--" in text.lower()


def quick_host(url_or_host: str) -> str | None:
    """The host of a plain http(s) URL or bare host, without reading the rest; else None.

    For deciding on host rules only: a property test checks it agrees with ``locate``.
    """
    written = plain_host(url_or_host)
    return None if written is None else host_of_plain(written)


def plain_host(url_or_host: str) -> str | None:
    """The host of a plain http(s) URL or bare host as written, or None.

    What :func:`quick_host` reads, before :func:`host_of_plain`: an audit that meets
    the same host in many links judges it once, keyed by this.
    """
    # No backslash can be in what this reads: the scheme, the host's characters and
    # the "/", "?" or "#" (or the end) that must follow it.
    match = _PLAIN_HOST_PREFIX.match(url_or_host)
    return None if match is None else match.group(1)


def host_of_plain(written: str) -> str | None:
    """The host :func:`quick_host` gives for a host :func:`plain_host` read, or None
    when its look-alikes must be read (an ``xn--`` label)."""
    if has_punycode(written):
        return None
    return normalize_host(written.lower())


def parse(url_or_host: str) -> Location | None:
    """``locate`` without the shortcut for plain URLs: always through the WHATWG parser."""
    url = as_url(refang(url_or_host.translate(_TAB_NEWLINE)))
    if url is None:
        return None
    try:
        parts = parse_url(url, attributes=_ATTRIBUTES)
    except ValueError:
        lenient = _lenient(url)
        if lenient is None:
            # Nothing a browser reads; an HTTP client may still read a host.
            hosts = rfc3986_hosts(url)
            if not hosts:
                return None
            is_ip = hosts[0].startswith("[") or hosts[0].replace(".", "").isdigit()
            return Location(hosts[0], "/", is_ip, False, tuple(hosts[1:]))
        return _with_other_readings(lenient, url)
    hostname = parts["hostname"]
    if not hostname:
        return None
    host_type = parts["host_type"]
    if host_type == HostType.IPV4:
        return _with_other_readings(Location(hostname, parts["pathname"], is_ip=True), url)
    if host_type == HostType.IPV6:
        mapped = _mapped_ipv4(hostname)
        location = Location(hostname, parts["pathname"], is_ip=True, also_served_as=mapped)
        return _with_other_readings(location, url)
    host = normalize_host(hostname)
    location = Location(host, parts["pathname"], is_ip=False, also_served_as=look_alikes(host))
    return _with_other_readings(location, url)


def _with_other_readings(location: Location, url: str) -> Location:
    """Add the hosts RFC 3986 clients read in ``url`` when they differ from the browser's."""
    if "@" not in url and "\\" not in url:
        return location  # without userinfo or a backslash every reader agrees
    others = tuple(
        host for host in rfc3986_hosts(url) if host not in (location.host, *location.also_served_as)
    )
    if not others:
        return location
    return location._replace(also_served_as=location.also_served_as + others, agreed=False)


def rfc3986_hosts(url: str) -> list[str]:
    """The hosts an RFC 3986 client (urllib, httpx, requests) reads in an absolute URL.

    Such clients end the authority at "/", "?" or "#" only (a backslash is data) and
    split userinfo at the first "@" (the grammar's reading, httpx) or the last
    (urllib, urllib3): both are returned when they differ. Hosts are normalised as
    the browser's are, so only a real difference counts.
    """
    match = _AUTHORITY.match(url)
    if match is None:
        return []
    authority = match.group(1)
    hosts: list[str] = []
    for host_port in {authority.split("@", 1)[-1], authority.rsplit("@", 1)[-1]}:
        raw = _RFC_HOST.match(host_port)
        host = raw.group() if raw is not None else ""
        if not host or "\\" in host:
            continue  # no host, or one no resolver accepts
        try:
            parsed = parse_url("http://" + host + "/", attributes=("hostname", "host_type"))
        except ValueError:
            continue
        name = parsed["hostname"]
        if name and name not in hosts:
            hosts.append(name if parsed["host_type"] != HostType.DEFAULT else normalize_host(name))
    return hosts


def nested_urls(url: str) -> list[str]:
    """Absolute URLs carried after the authority of ``url``, as redirectors carry them.

    ``https://good.com/r?to=https%3A%2F%2Fevil.com%2F`` carries ``https://evil.com/``:
    escapes are decoded (twice at most, for double-encoded targets).
    """
    scheme = _SCHEME_SLASHES.match(url)
    if (
        "%" not in url
        and "=/" not in url
        and "=\\" not in url
        # A ':' after the URL's own scheme, if it has one ("a.com/r?to=https://..." has not).
        and url.find(":", scheme.end() if scheme is not None else 0) == -1
    ):
        return []  # no scheme or scheme-relative target carried, escaped or not
    authority_end = AUTHORITY_END.search(url, scheme.end() if scheme is not None else 0)
    if authority_end is None:
        return []
    tail = url[authority_end.start() :]
    for _ in range(2):
        if "%" in tail and _ESCAPE.search(tail):
            tail = unquote(tail, errors="replace")
    carried = [nested.group() for nested in _NESTED.finditer(tail)]
    # "?next=//evil.com": a redirector sends the browser there on its own scheme.
    carried += ["https:" + nested.group() for nested in _NESTED_RELATIVE.finditer(tail)]
    return carried


def refang(text: str) -> str:
    """Undo the defanging people use to make links unclickable (``example[.]com``)."""
    if "[" in text or "(" in text or "{" in text:
        return DEFANGED_DOT.sub(".", text)
    return text


def _mapped_ipv4(hostname: str) -> tuple[str, ...]:
    """The IPv4 hosts an IPv6 literal also delivers to (the fetch refuses by the same)."""
    address = parse_address(hostname)
    if address is None:
        return ()
    return tuple(str(inner) for inner in embedded_ipv4(address))


def _lenient(url: str) -> Location | None:
    """Read a host out of a URL a browser refuses (bad port, bad escape, odd bytes).

    Only a blocklist uses this reading: a person may still retype such a URL.
    """
    rest = url.split(":", 1)[1].lstrip("/\\")
    for stop in "/\\?#":
        rest = rest.split(stop, 1)[0]
    authority = rest.rsplit("@", 1)[-1]
    if authority.startswith("["):
        raw_host = authority.split("]", 1)[0] + "]"
    else:
        raw_host = authority.split(":", 1)[0]
    raw_host = unicodedata.normalize("NFKC", unquote(raw_host, errors="replace"))
    raw_host = "".join(ch for ch in raw_host if ch.isprintable() and not ch.isspace())
    if not raw_host:
        return None
    try:
        reparsed = parse_url("http://" + raw_host, attributes=_ATTRIBUTES)
        host = reparsed["hostname"] or raw_host.lower()
    except ValueError:
        try:
            host = idna_to_ascii(raw_host).decode("ascii", "replace") or raw_host.lower()
        except (ValueError, UnicodeError):
            host = raw_host.lower()
    host = normalize_host(host)
    return Location(host, "/", is_ip=False, valid=False, also_served_as=look_alikes(host))


# Letters from other scripts that render like Latin letters in a host name. The
# list is the common homograph set (Cyrillic, Greek, Armenian and Latin
# variants); diacritics are handled separately by stripping combining marks.
_CONFUSABLE = str.maketrans(
    {
        # Cyrillic
        "а": "a", "в": "b", "е": "e", "ё": "e", "к": "k", "м": "m", "н": "h", "о": "o",
        "р": "p", "с": "c", "т": "t", "у": "y", "х": "x", "ѕ": "s", "і": "i", "ї": "i",
        "ј": "j", "һ": "h", "ԁ": "d", "ԛ": "q", "ԝ": "w", "ӏ": "l", "ɡ": "g", "ь": "b",
        "ѵ": "v", "ԍ": "g", "ү": "y", "ұ": "y", "ҡ": "k", "ӄ": "k", "ԗ": "x",
        # Greek
        "α": "a", "β": "b", "ε": "e", "η": "n", "ι": "i", "κ": "k", "ν": "v", "ο": "o",
        "ρ": "p", "τ": "t", "υ": "u", "χ": "x", "γ": "y", "ω": "w", "ϲ": "c", "ϳ": "j",
        # Armenian
        "օ": "o", "ս": "u", "ց": "g", "հ": "h", "ո": "n", "ռ": "n", "ք": "p",
        # Latin variants and symbols
        "ı": "i", "ȷ": "j", "ɑ": "a", "ʏ": "y", "ɩ": "i", "ɪ": "i", "ℓ": "l", "ø": "o",
        "ð": "d", "đ": "d", "ħ": "h", "ŀ": "l", "ł": "l", "ß": "ss", "æ": "ae", "œ": "oe",
    }
)  # fmt: skip


def look_alikes(host: str) -> tuple[str, ...]:
    """The ASCII host a Unicode host passes for, when it differs (``xn--exmple-4nf.com``).

    Only labels in ``xn--`` form can hide a look-alike, so ASCII hosts cost nothing.
    """
    if "xn--" not in host:
        return ()
    labels = []
    for label in host.split("."):
        if label.startswith("xn--"):
            try:
                label = idna_to_unicode(label)
            except (ValueError, UnicodeError):
                return ()
            stripped = "".join(
                ch
                for ch in unicodedata.normalize("NFKD", label.lower())
                if not unicodedata.combining(ch)
            )
            label = stripped.translate(_CONFUSABLE)
        labels.append(label)
    skeleton = ".".join(labels)
    if not skeleton.isascii() or skeleton == host:
        return ()
    return (normalize_host(skeleton),)


def path_readings(path: str) -> tuple[str, str]:
    """Two readings of a path a server may serve: the WHATWG one, and fully decoded.

    The first decodes only escapes of unreserved characters (RFC 3986 §6.2.2.2,
    ``/%64ocs`` is ``/docs``). The second decodes every escape (``%2F`` included),
    merges repeated slashes and resolves dot segments again, as many servers and
    proxies do (nginx merges slashes by default).
    """
    if "%" not in path and "//" not in path:
        return path, path
    plain = _ESCAPE.sub(_decode_unreserved, path) if "%" in path else path
    decoded = unquote(path, errors="replace").replace("\\", "/")
    decoded = remove_dot_segments(_SLASHES.sub("/", decoded))
    return plain, decoded


def _decode_unreserved(match: re.Match[str]) -> str:
    char = chr(int(match.group(1), 16))
    return char if char in _UNRESERVED else "%" + match.group(1).upper()


def remove_dot_segments(path: str) -> str:
    """RFC 3986 §5.2.4, on an absolute path."""
    output: list[str] = []
    segments = path.split("/")
    for index, segment in enumerate(segments[1:], start=1):
        last = index == len(segments) - 1
        if segment == "..":
            if output:
                output.pop()
            if last:
                output.append("")
        elif segment == ".":
            if last:
                output.append("")
        else:
            output.append(segment)
    return "/" + "/".join(output)
