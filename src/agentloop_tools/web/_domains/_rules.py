"""Domain rules: what a list entry like ``example.com/docs`` means, and what it may not be.

One validator serves both the provider filter (``native_web_search``) and the audit
(``DomainPolicy``), so a list is accepted or refused the same way in both places.
The accepted form follows the providers' documented rules: no scheme, ASCII only,
``*`` only in the path, subdomains included.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from urllib.parse import unquote

from ada_url import HostType, idna_to_ascii, parse_url

from agentloop_tools.web._domains._url import normalize_host, path_readings

# Plain lower-case LDH names skip the URL parser: building a policy from 100,000
# domains must stay well under a second. A numeric last label is an IPv4 address
# to a browser, so it takes the slow path.
_PLAIN_DOMAIN = re.compile(r"(?:[a-z0-9_](?:[a-z0-9_-]*[a-z0-9_])?\.)*[a-z_][a-z0-9_-]*\.?")
_LABEL = re.compile(r"[a-z0-9_](?:[a-z0-9_-]*[a-z0-9_])?")
_SCHEME_PREFIX = re.compile(r"^[A-Za-z][A-Za-z0-9+.\-]*://")
_NO_PORT = "Rules cover every port: remove ':<port>'."
_ACCEPTED = (
    "Write a bare domain such as 'example.com' (subdomains are included), a path "
    "rule such as 'example.com/docs' ('*' allowed in the path), or an IP address."
)


type _Refuse = Callable[..., ValueError]


@dataclass(frozen=True, slots=True)
class Rule:
    """One validated list entry.

    Attributes:
        text: the entry exactly as the user wrote it; what reports name.
        host: the normalised ASCII host it covers (with every subdomain, unless an IP).
        path: the normalised path prefix, or None when the rule covers the whole host.
    """

    text: str
    host: str
    path: str | None = None
    is_ip: bool = False
    # Patterns for the rule's two readings (as written, fully decoded): see path_readings.
    _allow: tuple[re.Pattern[str], re.Pattern[str]] | None = field(
        default=None, repr=False, compare=False
    )
    _block: tuple[re.Pattern[str], re.Pattern[str]] | None = field(
        default=None, repr=False, compare=False
    )

    def admits_path(self, path: str) -> bool:
        """Allowlist reading: each reading of the path is under the rule's same reading,
        segment by segment (the WHATWG path under the rule as written, the decoded path
        under the rule decoded)."""
        if self._allow is None:
            return True
        plain, decoded = path_readings(path)
        return bool(self._allow[0].match(plain) and self._allow[1].match(decoded))

    def blocks_path(self, path: str) -> bool:
        """Blocklist reading: any reading of the path starts with any reading of the rule,
        in any case."""
        if self._block is None:
            return True
        return any(
            pattern.match(reading.lower())
            for reading in path_readings(path)
            for pattern in self._block
        )


def parse_rules(entries: object, *, argument: str) -> tuple[Rule, ...]:
    """Validate a domain list. ``argument`` names it in error messages."""
    if isinstance(entries, str | bytes):
        raise TypeError(
            f"{argument} must be a list of domains, not a single string {entries!r}; "
            f"write {_as_list(argument, entries)}."
        )
    if not isinstance(entries, Iterable):
        raise TypeError(
            f"{argument} must be a list of domain strings, got {type(entries).__name__}."
        )
    return tuple(parse_rule(entry, argument=argument) for entry in entries)


def _as_list(argument: str, entry: str | bytes) -> str:
    # "DomainPolicy.allow" is a call, "allowed_domains" a keyword: show valid Python.
    return f"{argument}([{entry!r}])" if "." in argument else f"{argument}=[{entry!r}]"


def parse_rule(entry: object, *, argument: str = "domain") -> Rule:
    """Validate one entry and build its rule, or raise ValueError/TypeError naming it."""
    if not isinstance(entry, str):
        raise TypeError(
            f"{argument} entries must be strings, got {entry!r} ({type(entry).__name__})."
        )
    if _PLAIN_DOMAIN.fullmatch(entry) and "xn--" not in entry and not entry.startswith("."):
        return Rule(entry, normalize_host(entry))
    return _parse_unusual(entry, argument)


def _parse_unusual(entry: str, argument: str) -> Rule:
    def refuse(problem: str, remedy: str = _ACCEPTED) -> ValueError:
        return ValueError(f"{argument} entry {entry!r} {problem}. {remedy}")

    if not entry.strip():
        raise refuse("is empty", "Remove it, or write a domain such as 'example.com'.")
    if any(ch.isspace() or not ch.isprintable() for ch in entry):
        raise refuse("contains whitespace or control characters", "Remove them.")
    if not entry.isascii():
        try:
            ascii_form = idna_to_ascii(entry).decode("ascii", "replace")
        except (ValueError, UnicodeError):  # pragma: no cover - ada maps, never raises
            ascii_form = ""
        hint = ""
        if ascii_form and ascii_form.isascii():
            hint = f" If you mean the internationalised domain, write it as {ascii_form!r}."
        raise refuse(
            "contains non-ASCII characters; Unicode look-alike domains can bypass filters, "
            "so lists must be ASCII",
            f"Write the domain in ASCII (punycode).{hint}",
        )
    if _SCHEME_PREFIX.match(entry) or entry.lower().startswith(("http:", "https:")):
        bare = _SCHEME_PREFIX.sub("", entry)
        raise refuse("has a scheme", f"Write it without one: {bare!r}.")
    if "?" in entry or "#" in entry:
        raise refuse("has a query or fragment", "Rules match hosts and paths only.")
    host_part, slash, path_part = entry.partition("/")
    if "*" in host_part:
        raise refuse(
            "has '*' in the host",
            "Subdomains are already included: write 'example.com' to cover "
            "'*.example.com'. '*' is allowed only in the path, as in 'example.com/*/docs'.",
        )
    if "@" in host_part or "\\" in entry:
        raise refuse("has userinfo or a backslash")
    if host_part.startswith("."):
        raise refuse(
            "starts with a dot",
            f"Subdomains are already included: write {host_part.lstrip('.')!r}.",
        )
    if not host_part:
        raise refuse("has no host")
    host, is_ip = _parse_host(host_part, refuse)
    if not slash:
        return Rule(entry, host, is_ip=is_ip)
    return _with_path(entry, host, is_ip, "/" + path_part, refuse)


def _parse_host(host_part: str, refuse: _Refuse) -> tuple[str, bool]:
    if host_part.startswith("["):
        if not host_part.endswith("]") or host_part.count("]") != 1:
            raise refuse("has a port or text after the IPv6 address", _NO_PORT)
    elif ":" in host_part:
        if host_part.count(":") == 1:
            raise refuse("has a port", _NO_PORT)
        raise refuse("is an IPv6 address without brackets", "Write it as '[2001:db8::1]'.")
    try:
        parsed = parse_url("http://" + host_part + "/", attributes=("hostname", "host_type"))
    except ValueError:
        raise refuse("is not a valid host name") from None
    hostname: str = parsed["hostname"]
    if parsed["host_type"] != HostType.DEFAULT:
        return hostname, True
    labels = hostname.rstrip(".").split(".")
    if not all(_LABEL.fullmatch(label) for label in labels):
        raise refuse("has an empty or malformed label")
    return normalize_host(hostname), False


def _with_path(entry: str, host: str, is_ip: bool, path: str, refuse: _Refuse) -> Rule:
    if "//" in path:
        raise refuse("has an empty path segment ('//')", "Write the path with single slashes.")
    written = unquote(path, errors="replace").replace("\\", "/")
    if any(segment in (".", "..") for segment in written.split("/")):
        raise refuse("has '.' or '..' path segments", "Write the path it means.")
    plain, decoded = path_readings(path)
    if plain == "/":
        return Rule(entry, host, is_ip=is_ip)
    return Rule(
        entry,
        host,
        path=plain,
        is_ip=is_ip,
        _allow=(re.compile(_allow_pattern(plain)), re.compile(_allow_pattern(decoded))),
        _block=(re.compile(_block_pattern(plain)), re.compile(_block_pattern(decoded))),
    )


def _allow_pattern(path: str) -> str:
    """``/docs`` admits ``/docs``, ``/docs/...``, not ``/docs-internal``; ``*`` is one segment."""
    pattern = "".join("[^/]*" if ch == "*" else re.escape(ch) for ch in path)
    if path.endswith("/"):
        return pattern
    return pattern + "(?:/|$)"


def _block_pattern(path: str) -> str:
    """``/docs`` blocks anything that starts with it, in any case; ``*`` spans segments."""
    trimmed = path.rstrip("/") or "/"
    return "".join(".*" if ch == "*" else re.escape(ch) for ch in trimmed.lower())
