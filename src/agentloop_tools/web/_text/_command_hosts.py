"""How each command names the host it contacts: its options, and where the host is in them.

``curl``/``wget``, HTTPie, ``ssh``/``scp``/``rsync``/``mosh``, ``git``, container
images, ``go``, ``pip``: which options take a value, which values are hosts, and the
URLs that name the host of a target (``http://evil.com/i.sh``). ``_commands.py``
finds the commands and their arguments; this module reads the arguments.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator

# "[user@]host[:port]" at the start of a target, as curl, ssh or docker read it.
_HOST = re.compile(
    r"(?:[^\s@/:]+@)?(?P<host>\[[0-9A-Fa-f:.]+\]|[^\s@/:?#\[\]\\]+)(?::(?P<port>[0-9]*))?"
)
_LABEL = re.compile(r"[\w-]+")
_COLON_OUTSIDE_BRACKETS = re.compile(r":(?![^\[]*\])")
_METHOD = re.compile(r"[A-Z]+")
_WORD = re.compile(r"[A-Za-z]+")
# "[user@]host:path", the form scp, rsync and git use for ssh.
_SCP_LIKE = re.compile(r"(?:(?P<user>[^\s@/:]+)@)?(?P<host>\[[0-9A-Fa-f:.]+\]|[^\s@/:\\]+):")


def _names(text: str) -> list[str]:
    return text.split()


# Options that take a value, per command, and which of those values are hosts.
_CURL_VALUES = frozenset("AbcCdDeEFhHKmoPQrtTuUwxXyYz")
_CURL_LONG_VALUES = frozenset(
    _names(
        """
    abstract-unix-socket alt-svc aws-sigv4 cacert capath cert cert-type ciphers config
    connect-timeout continue-at cookie cookie-jar create-file-mode crlfile curves data
    data-ascii data-binary data-raw data-urlencode delegation dns-interface
    dns-ipv4-addr dns-ipv6-addr dns-servers dump-header egd-file engine etag-compare
    etag-save expect100-timeout form form-string ftp-account ftp-alternative-to-user
    ftp-method ftp-port ftp-ssl-ccc-mode happy-eyeballs-timeout-ms header help
    hostpubmd5 hostpubsha256 hsts interface ip-tos json keepalive-time key key-type krb
    libcurl limit-rate local-port login-options mail-auth mail-from mail-rcpt
    max-filesize max-redirs max-time netrc-file noproxy oauth2-bearer output output-dir
    parallel-max pass pinnedpubkey proto proto-default proto-redir proxy-cacert
    proxy-capath proxy-cert proxy-cert-type proxy-ciphers proxy-crlfile proxy-header
    proxy-key proxy-key-type proxy-pass proxy-pinnedpubkey proxy-service-name
    proxy-tls13-ciphers proxy-tlsauthtype proxy-tlspassword proxy-tlsuser proxy-user
    pubkey quote random-file range rate referer request request-target retry retry-delay
    retry-max-time sasl-authzid service-name socks5-gssapi-service speed-limit
    speed-time stderr telnet-option tftp-blksize time-cond tls-max tls13-ciphers
    tlsauthtype tlspassword tlsuser trace trace-ascii trace-config unix-socket
    upload-file url-query user user-agent variable vlan-priority write-out
        """
    )
)
_CURL_HOSTS = frozenset(
    _names(
        """
    url proxy preproxy socks4 socks4a socks5 socks5-hostname doh-url connect-to resolve
        """
    )
)
_WGET_VALUES = frozenset("oaeiBtOTwQPUlARDIX")
_WGET_LONG_VALUES = frozenset(
    _names(
        """
    output-file append-output execute input-file base tries output-document timeout wait
    quota directory-prefix user-agent level accept reject domains exclude-domains
    include-directories exclude-directories header user password post-data post-file
    body-data body-file method referer load-cookies save-cookies limit-rate
    ca-certificate ca-directory certificate private-key bind-address dns-timeout
    connect-timeout read-timeout waitretry ftp-user ftp-password http-user http-password
    proxy-user proxy-password
        """
    )
)
_SSH_VALUES = frozenset("BbcDEeFIiJLlmOopQRSWw")
_SCP_VALUES = frozenset("cFiJloPSX")
_RSYNC_LONG_VALUES = frozenset(
    _names(
        """
    rsh rsync-path exclude include exclude-from include-from files-from filter
    password-file port log-file partial-dir temp-dir compare-dest copy-dest link-dest
    chmod chown timeout contimeout bwlimit backup-dir suffix
        """
    )
)
_RSYNC_VALUES = frozenset("eBfT")
_HTTPIE_VALUES = frozenset("aAospv")
_HTTPIE_LONG_VALUES = frozenset(
    _names(
        """
    auth auth-type session session-read-only output print style pretty format-options
    timeout max-redirects cert cert-key cert-key-pass ssl ciphers boundary
    default-scheme response-charset response-mime verify
        """
    )
)
_PIP_HOSTS = frozenset(["i", "f", "index-url", "extra-index-url", "find-links", "trusted-host"])

type Target = tuple[str, int, tuple[str, ...]]  # (as written, start, readings)


def _options(
    words: list[tuple[str, int]],
    short_values: frozenset[str],
    long_values: frozenset[str],
    hosts: frozenset[str] = frozenset(),
) -> Iterator[tuple[str | None, str, int]]:
    """``(option, value, offset)`` for option values and ``(None, word, offset)`` for the rest.

    Only options named in ``hosts`` have their values yielded; other values are skipped.
    """
    index = 0
    while index < len(words):
        word, start = words[index]
        index += 1
        if word == "--" or not word.startswith("-") or word == "-":
            yield None, word, start
            continue
        if word.startswith("--"):
            name, equals, value = word[2:].partition("=")
            if name not in long_values and name not in hosts:
                continue
            if not equals:
                if index >= len(words):
                    continue
                value, start = words[index]
                index += 1
            else:
                start += 3 + len(name)
            if name in hosts:
                yield name, value, start
            continue
        for position, letter in enumerate(word[1:], start=1):
            if letter in short_values or letter in hosts:
                value = word[position + 1 :]
                if value:
                    start += position + 1
                elif index < len(words):
                    value, start = words[index]
                    index += 1
                if letter in hosts and value:
                    yield letter, value, start
                break


def host_target(value: str, default_scheme: str = "http") -> tuple[str, ...]:
    """The reading of ``[scheme://][user@]host[:port][/path]``, if it names a host."""
    if "://" in value:
        return ()  # a URL: the URL scan reads it
    match = _HOST.match(value)
    if match is None or not is_host(match.group("host")):
        return ()
    return (f"{default_scheme}://{value}",)


def is_host(host: str) -> bool:
    """A name a resolver would look up: dotted labels ending in a letter, an IP, localhost."""
    if host.startswith("["):
        return host.endswith("]")
    if host.lower() == "localhost":
        return True
    labels = host.rstrip(".").split(".")
    if len(labels) < 2 or not all(_LABEL.fullmatch(label) for label in labels):
        return False
    last = labels[-1]
    return any(char.isalpha() for char in last) or (
        len(labels) == 4 and all(label.isdigit() for label in labels)
    )


def scp_readings(value: str) -> tuple[str, ...]:
    """``ssh://user@host/path`` for an scp-like ``[user@]host:path``; () for other words."""
    if "://" in value:
        return ()
    match = _SCP_LIKE.match(value)
    if match is None or not is_host(match.group("host")):
        return ()
    if len(match.group("host")) == 1:
        return ()  # "C:\\path": a drive letter
    user = match.group("user")
    path = value[match.end() :].lstrip("/")
    return (f"ssh://{user + '@' if user else ''}{match.group('host')}/{path}",)


def _curl(word: str, words: list[tuple[str, int]]) -> Iterator[Target]:
    if word == "wget":
        options = _options(words, _WGET_VALUES, _WGET_LONG_VALUES)
    else:
        options = _options(words, _CURL_VALUES, _CURL_LONG_VALUES, _CURL_HOSTS | {"x"})
    for option, value, start in options:
        if option is None and _WORD.fullmatch(value):
            return  # "use curl to fetch it": prose, not arguments
        if option in ("resolve", "connect-to"):
            readings = _connection_readings(option, value)
        else:
            readings = host_target(value)
        if readings:
            yield value, start, readings


def _connection_readings(option: str, value: str) -> tuple[str, ...]:
    """The addresses curl connects to: ``--resolve host:port:addr[,addr]``, ``--connect-to
    host:port:host2:port2``."""
    if option == "resolve":
        # The addresses follow the second colon; IPv6 ones are bracketed.
        parts = value.lstrip("+-").split(":", 2)
        addresses = parts[2].split(",") if len(parts) == 3 else []
    else:
        pieces = _COLON_OUTSIDE_BRACKETS.split(value)
        addresses = pieces[2:3] if len(pieces) >= 3 else []
    readings = []
    for address in addresses:
        address = address.strip()
        if address and (address.startswith("[") or is_host(address)):
            readings.append(f"http://{address}/")
    return tuple(readings)


def _httpie(word: str, words: list[tuple[str, int]]) -> Iterator[Target]:
    positional = [
        (value, start)
        for option, value, start in _options(words, _HTTPIE_VALUES, _HTTPIE_LONG_VALUES)
        if option is None
    ]
    if positional and _METHOD.fullmatch(positional[0][0]):
        positional = positional[1:]  # http POST evil.com/api
    if not positional:
        return
    value, start = positional[0]
    if value.startswith(":"):
        return  # ":3000/api" is localhost
    readings = host_target(value, "https" if word in ("https", "xhs") else "http")
    if readings:
        yield value, start, readings


def _ssh(word: str, words: list[tuple[str, int]]) -> Iterator[Target]:
    if word in ("scp", "rsync"):
        short = _SCP_VALUES if word == "scp" else _RSYNC_VALUES
        long = frozenset() if word == "scp" else _RSYNC_LONG_VALUES
        for option, value, start in _options(words, short, long, frozenset("J")):
            if option == "J":
                yield from _jump_targets(value, start)
            elif option is None:
                readings = scp_readings(value)
                if readings:
                    yield value, start, readings
        return
    for option, value, start in _options(words, _SSH_VALUES, frozenset(), frozenset("J")):
        if option == "J":
            yield from _jump_targets(value, start)
            continue
        if option is None:
            # The destination; what follows it is the remote command.
            readings = host_target(value.split(":", 1)[0] if word == "sftp" else value, "ssh")
            if readings:
                yield value, start, readings
            return


def _jump_targets(value: str, start: int) -> Iterator[Target]:
    readings = tuple(
        reading for hop in value.split(",") for reading in host_target(hop.strip(), "ssh")
    )
    if readings:
        yield value, start, readings


def _git(word: str, words: list[tuple[str, int]]) -> Iterator[Target]:
    for option, value, start in _options(words, frozenset("bcjou"), frozenset()):
        if option is None:
            readings = scp_readings(value)
            if readings:
                yield value, start, readings


def _image(word: str, words: list[tuple[str, int]]) -> Iterator[Target]:
    for option, value, start in _options(words, frozenset(), frozenset({"platform"})):
        if option is None:
            readings = registry(value)
            if readings:
                yield value, start, readings
            return


def registry(image: str) -> tuple[str, ...]:
    """The registry an image reference names (``evil.com/img:1``), if it names one."""
    first, slash, _ = image.partition("/")
    if not slash:
        return ()  # "python:3.12" is on the default registry
    host = first.rsplit(":", 1)[0] if not first.startswith("[") else first
    if "." not in host and host.lower() != "localhost" and not host.startswith("["):
        return ()  # "library/python": a namespace, not a host
    if not is_host(host):
        return ()
    return (f"https://{first}/",)


def _go(word: str, words: list[tuple[str, int]]) -> Iterator[Target]:
    for option, value, start in _options(words, frozenset(), frozenset({"tags"})):
        if option is None:
            module = value.split("@", 1)[0]
            first = module.split("/", 1)[0]
            if "." in first and is_host(first):
                yield value, start, (f"https://{module}",)


def _pip(word: str, words: list[tuple[str, int]]) -> Iterator[Target]:
    for option, value, start in _options(words, frozenset("ecr"), frozenset(), _PIP_HOSTS):
        if option is not None:
            readings = host_target(value, "https")
            if readings:
                yield value, start, readings


def ssh_hosts(value: str) -> tuple[str, ...]:
    return tuple(reading for hop in value.split(",") for reading in host_target(hop, "ssh"))


def rewritten(value: str) -> tuple[str, ...]:
    return scp_readings(value) or host_target(value)


HANDLERS: dict[str, Callable[[str, list[tuple[str, int]]], Iterator[Target]]] = {
    "word": lambda word, words: (
        _ssh(word, words) if word not in ("curl", "wget") else _curl(word, words)
    ),
    "git": _git,
    "image": _image,
    "go": _go,
    "pip": _pip,
    "httpie": _httpie,
}
