"""Find the URLs and host names in answer text that a reader could follow.

One pass over the text, independent of any rule list: a C-level regex picks out
the few tokens that could hold a URL or a host (a dot, colon or slash followed by
more of the token, or a defanged dot), and only those are read closely.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from operator import itemgetter
from typing import Literal, NamedTuple

from agentloop_tools.web._domains._url import AUTHORITY_END, DEFANGED_DOT
from agentloop_tools.web._text._extent import link_end, plain_url
from agentloop_tools.web._text._hostlike import DELETED, cjk_free, is_host_like

# Characters that end a token everywhere: whitespace, and what HTML and markdown
# never let into a link (angle brackets, double quotes, backticks).
# A token is worth reading when a dot, colon or slash is followed by something
# that can continue a host or URL (so "end." and "note:" are skipped), or when it
# holds a defanged dot. The match runs on to the end of the token, so later
# anchors in the same token cost nothing. Text without defanged dots (the common
# case) takes a pattern of one character class, ASCII text the cheapest.
_ANCHOR_TAIL = r"[^\s<>\"`]*"
# What cannot follow an anchor's dot, colon or slash: punctuation that ends a sentence
# or closes a bracket. One set for the anchors and for _link_starts' "https:)".
_NOT_AFTER_ANCHOR = "<>\"`.,;:!?'*_~)]"
_CONTINUES = r"(?=[^\s" + re.escape(_NOT_AFTER_ANCHOR) + "])"
_NOT_AFTER_COLON = frozenset(_NOT_AFTER_ANCHOR)
_ANCHOR_PLAIN = re.compile(r"[.:/\\]" + _CONTINUES + _ANCHOR_TAIL)
_ANCHOR_WIDE = re.compile(r"[.\uff0e\u3002\uff61:/\\]" + _CONTINUES + _ANCHOR_TAIL)
# The patterns below open with one character class, which ``re`` scans for at C speed;
# an opening alternation is tried at every position of the text. Where an anchor is
# longer than one character ("www.", "[.]") the class holds its last character and a
# lookbehind the rest: the match starts later in the same token, which yields the
# same token (tests/text/test_finder_speed.py holds them to the alternations).
ANCHOR_ANY = re.compile(
    r"[.\uff0e\u3002\uff61:/\\\])}]"
    r"(?:(?<=[.\uff0e\u3002\uff61:/\\])" + _CONTINUES
    + r"|(?<=\[\.\])|(?<=\[dot\])|(?<=\(\.\))|(?<=\(dot\))|(?<=\{\.\}))"
    + _ANCHOR_TAIL,
    re.IGNORECASE,
)  # fmt: skip
# Where a link can be: what _link_starts looks for ("scheme:", "//", "\\", "www.").
_LINK_ANCHOR = re.compile(r"[:/\\.](?:(?<=[:/\\])|(?<=(?i:www)\.))" + _CONTINUES + _ANCHOR_TAIL)
_DEFANGED_ANYWHERE = re.compile(r"[\[({](?:\.|dot)[\])}]", re.IGNORECASE)

# Where links start inside a token: a scheme (special schemes may omit "//", as
# browsers accept "https:example.com"), "//" after opening punctuation, "www.".
_LINK_SCHEMES = frozenset({"http", "https", "hxxp", "hxxps", "ftp", "ws", "wss", "fxp"})
_UNLINKED_SCHEMES = frozenset({"hxxp", "fxp:"})  # defanged: no renderer links them
_SCHEME_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789+.-")
_BEFORE_SCHEME_RELATIVE = frozenset("([<'=*_~|,")
_NOT_BEFORE_WWW = _SCHEME_CHARS | frozenset("/@\\")
_NOT_AFTER_WWW = frozenset(".,;:!?'*_~)]")
_PLAIN_WORD = re.compile(r"[\w-]*")
_SLASH_RUN = re.compile(r"[/\\]{2,}")
_WWW = re.compile(r"www\.", re.IGNORECASE)
TOKEN_RUN = re.compile(r"[^\s<>\"`]*")

# A host name mentioned in prose: labels joined by dots, full-width dots,
# ideographic full stops or defanged dots ("example[.]com"). It starts after a
# non-label character or after a percent-escape, as in a redirect's
# "?url=https%3A%2F%2Fexample.com". Its labels hold the characters IDNA deletes too.
# Besides word characters: the combining accents ("e\u0301vil.com" is évil.com) and the
# letters that are symbols to Unicode but spell words, which NFKC (and so IDNA) maps to
# ASCII: circled and squared Latin letters ("ⓔⓥⓘⓛ.com" is evil.com). Not signs such as
# "™" or "№", nor the full-width hyphen: after a host in prose they end it, as
# renderers and readers take them ("example.com™", "example.com－官方网站").
_MARKS = "\u0300-\u036f\u1ab0-\u1aff\u1dc0-\u1dff\ufe20-\ufe2f"
_SYMBOL_LETTERS = "\u24b6-\u24e9\U0001f130-\U0001f149"
_LABEL_BODY = rf"\w\-{DELETED}{_MARKS}{_SYMBOL_LETTERS}"
_LABEL_CHARS = rf"[{_LABEL_BODY}]"
# Where GFM's autolinker and linkify-it end a link's domain: punctuation
# ("https://evil.com's", "https://evil.com[1]" link to evil.com) and characters
# other than ASCII, but not the userinfo and port marks or the ASCII symbols
# (+ = $ ~) linkify-it keeps. The cut is a second reading; the link as written is
# read too. Characters UTS #46 deletes do not end it: linkifiers keep them in the host.
_RENDERED_HOST_STOP = re.compile(rf"[^A-Za-z0-9._~:@$+={DELETED}-]")
DELETED_CHAR = re.compile(f"[{DELETED}]")
_DOT = r"(?:[.\uff0e\u3002\uff61]|\[\.\]|\(\.\)|\{\.\}|\[dot\]|\(dot\))"
_MENTION = re.compile(
    # Not inside a label; after "%" only when it starts no escape ("%evil.com" is linked).
    rf"(?:(?<![{_LABEL_BODY}%])|(?<=%[0-9A-Fa-f]{{2}})|(?<=%)(?![0-9A-Fa-f]{{2}}))"
    rf"{_LABEL_CHARS}+(?:{_DOT}{_LABEL_CHARS}+)+",
    re.IGNORECASE,
)
# A mention's path ("/" or "\\" after the host, to the token's end) matters only for
# path rules; capped so that a token of many mentions ("x.com/x.com/...") stays
# linear. Measured to the next character that ends a token, found once for many
# mentions: a regex repeat over the path cost more than reading the host.
_PATH_CAP = 512
_TOKEN_END = re.compile(r"[\s<>\"`]")
_DOT_THEN_LABEL = re.compile(rf"[.\uff0e\u3002\uff61\])}}]{_LABEL_CHARS}")
# The last of them before a stretch's end: a greedy run backs off from the end.
_LAST_DOT_THEN_LABEL = re.compile("(?s:.*)" + _DOT_THEN_LABEL.pattern)
# What link_end reads beyond trailing punctuation: brackets, parentheses, and characters
# other than ASCII (CJK stops, full stops). Where a mention holds none, it only trims.
_LINK_END_READS = re.compile(r"[\[\]()\x80-\U0010ffff]")
_TRAILING_ASCII = ".,:;!?'*_~"
# A Found built without the named tuple's Python-level __new__: one per mention.
_new_found = tuple.__new__
# A mention's (host length, readings) before it is read: no host is -1 characters long.
_NO_READING: tuple[int, tuple[str, ...] | None] = (-1, None)

# What may come before an e-mail address's local part (linkify-it's reading): the
# token's start, an opening quote or parenthesis, or more of the local part. After
# anything else ("#a.com@b.com") the local part is linked as a host of its own.
_EMAIL_NAME = re.compile(r"[A-Za-z0-9_.;:&=+$,-]+")
_LOCAL_BEFORE = frozenset(["", '"', "(", *"-;:&=+$,."])

type Kind = Literal["url", "mention"]


class Found(NamedTuple):
    """A URL or host name in the text, with its span as written."""

    start: int
    end: int
    text: str
    kind: Kind
    # The readings to check, most literal first (a mention glued to CJK text
    # has a second reading without the CJK run).
    readings: tuple[str, ...]


def tokens(text: str) -> Iterator[tuple[int, str]]:
    """``(offset, token)`` for each token that could hold a link or a host, in text order."""
    # Token starts are found by matching backwards on the reversed text: C speed.
    reversed_text = text[::-1]
    length = len(text)
    run_back = TOKEN_RUN.match
    for match in _anchors_for(text).finditer(text):
        # A pattern of one starred class always matches, if only the empty string.
        back = run_back(reversed_text, length - match.start())
        start = length - back.end() if back is not None else match.start()
        yield start, text[start : match.end()]


def link_tokens(text: str) -> list[tuple[int, str]]:
    """The tokens of :func:`tokens` that can hold a link: where a colon, a slash, a
    backslash or ``www.`` is followed by more of the token. Host-like words without one
    ("config.py", "evil.com") are no links, and an allowlist does not read them."""
    # A list, not a generator: the audit reads them all, and resuming costs per token.
    reversed_text = text[::-1]
    length = len(text)
    run_back = TOKEN_RUN.match
    found = []
    for match in _LINK_ANCHOR.finditer(text):
        begin, end = match.span()
        back = run_back(reversed_text, length - begin)
        start = length - back.end() if back is not None else begin
        found.append((start, text[start:end]))
    return found


def _anchors_for(text: str) -> re.Pattern[str]:
    """The cheapest anchor pattern that finds every token worth reading in ``text``."""
    if _DEFANGED_ANYWHERE.search(text) is not None:
        return ANCHOR_ANY
    return _ANCHOR_PLAIN if text.isascii() else _ANCHOR_WIDE


def read_token(token: str, *, mentions: bool) -> list[Found]:
    """The links (and, with ``mentions``, host names) in one token, spans relative to it."""
    found: list[Found] = []
    _read_token(token, mentions, found)
    if len(found) > 1:
        # By start, a link before a mention at the same start: _read_token adds every
        # link before any mention, and the sort is stable. A key in C: 33,000 mentions
        # in one token cost a Python call each otherwise.
        found.sort(key=_START)
    return found


_START = itemgetter(0)


def _read_token(token: str, mentions: bool, found: list[Found]) -> None:
    # A link's own host is checked as the link; mentions are looked for after it.
    authorities: list[tuple[int, int]] = []
    plain = plain_url(token)
    if plain is not None:
        # _add_link's reading, known from the shape: the host is ASCII letters, digits,
        # dots and hyphens (no rendered cut) and ends where plain_url says.
        written = token[plain[0] : plain[1]]
        found.append(Found(plain[0], plain[1], written, "url", (written,)))
        if mentions:
            authorities.append((plain[0], plain[3]))
            _read_mentions_between(token, authorities, found)
        return
    start = _single_url_start(token)
    if start is not None:
        # The common case, one http(s) URL in the token, maybe inside markdown or
        # brackets: skip the general search for link starts.
        end = link_end(token, start)
        rest = token[end:]
        if ":" not in rest and "//" not in rest and "www." not in rest.lower():
            authority_start = token.index(":", start) + 1
            while authority_start < end and token[authority_start] in "/\\":
                authority_start += 1
            if authority_start < end:
                _add_link(token, start, end, authority_start, authorities, found)
            if mentions:
                _read_mentions_between(token, authorities, found)
            return
    if ":" in token or "//" in token or "\\" in token or "www." in token.lower():
        last_end = -1
        for start, authority_start in _link_starts(token):
            if start < last_end:
                continue
            end = link_end(token, start)
            if authority_start >= end:
                continue  # a scheme alone ("https:") is not a link
            if (
                token[start] in "/\\"
                and "\\" not in token[start:authority_start]
                and not _dotted_authority(token, authority_start, end)
            ):
                continue  # "//comment" is not a link to a host named "comment"
            last_end = end
            _add_link(token, start, end, authority_start, authorities, found)
    if mentions:
        _read_mentions_between(token, authorities, found)


def _add_link(
    token: str,
    start: int,
    end: int,
    host_start: int,
    authorities: list[tuple[int, int]],
    found: list[Found],
) -> None:
    """Record a link and where its own host is written.

    The link is read as written and, when its host runs into text that linkifiers end
    a domain at (an emoji, CJK text, a symbol), also as a renderer would link it.
    """
    authority = AUTHORITY_END.search(token, host_start, end)
    host_end = authority.start() if authority else end
    authorities.append((start, host_end))
    written = token[start:end]
    stop = _RENDERED_HOST_STOP.search(token, host_start, host_end)
    if (
        stop is not None
        and (
            "@" in token[stop.start() : host_end]  # userinfo: the host after "@" is linked
            or DEFANGED_DOT.match(token, stop.start())  # defanged: read as refanged instead
            or token[start : start + 4].lower() in _UNLINKED_SCHEMES
        )
    ):
        stop = None
    if stop is None or stop.start() == host_start:
        found.append(Found(start, end, written, "url", (written,)))
    else:
        found.append(Found(start, end, written, "url", (written, token[start : stop.start()])))


def _single_url_start(token: str) -> int | None:
    """Where the token's only link starts, when its shape makes that plain to see.

    That is: the first "://" follows "http" or "https" at a word boundary, and
    nothing before it could start another link.
    """
    colon = token.find("://")
    if colon < 4:
        return None
    if token[colon - 5 : colon].lower() == "https":
        start = colon - 5
    elif token[colon - 4 : colon].lower() == "http":
        start = colon - 4
    else:
        return None
    if start and token[start - 1] in _SCHEME_CHARS:
        return None
    head = token[:start]
    if ":" in head or "//" in head or "www." in head.lower():
        return None
    return start


def mentions_before(token: str, start: int) -> list[Found]:
    """The host names :func:`read_token` finds before a plain link starting at ``start``."""
    found: list[Found] = []
    if start > 2:
        _read_mentions(token, 0, start, found)
    return found


def may_mention(token: str, position: int) -> bool:
    """Whether a host name can start from ``position`` on: a dot (or a defanged dot's
    closing bracket) followed by a label character lies ahead."""
    return _DOT_THEN_LABEL.search(token, position) is not None


def _read_mentions_between(
    token: str, authorities: list[tuple[int, int]], found: list[Found]
) -> None:
    """Mentions in the stretches before, between and after the links' own hosts."""
    position = 0
    for first, last in authorities:
        if first - position > 2:
            _read_mentions(token, position, first, found)
        position = last
    if len(token) - position > 2:
        _read_mentions(token, position, len(token), found)


def _read_mentions(token: str, position: int, finish: int, found: list[Found]) -> None:
    # A mention is looked for while a dot followed by a label lies ahead in the stretch:
    # the last such dot, found once, says until when.
    last_dot = _LAST_DOT_THEN_LABEL.match(token, position, finish)
    if last_dot is None:
        return
    last = last_dot.end() - 2
    length = len(token)
    stop = -1  # where the token ends after the last mention's host
    special = -1  # the next character at or after a mention that link_end must read
    seen: dict[str, tuple[int, tuple[str, ...] | None]] = {}
    written, known = "", _NO_READING  # the last mention's text and readings
    add = found.append
    for mention in _MENTION.finditer(token, position):
        if position > last:
            return
        start, host_end = mention.span()
        if start >= finish:
            return
        # Hosts named later in this one's path are mentions of their own.
        position = end = host_end
        has_path = host_end < length and token[host_end] in "/\\"
        if has_path:
            if stop <= host_end:
                token_end = _TOKEN_END.search(token, host_end + 1)
                stop = token_end.start() if token_end is not None else length
            end = host_end + 1 + _PATH_CAP
            if stop < end:
                end = stop
        if end < length and token[end] == "@" and _local_part(token, start, end):
            continue  # an e-mail local part names no host
        if has_path or not token[end - 1].isalnum():
            if special < start:
                next_special = _LINK_END_READS.search(token, start)
                special = next_special.start() if next_special is not None else length
            if special < end:
                end = link_end(token, start, end)
            else:
                # No bracket, parenthesis or other than ASCII: link_end only trims (here,
                # not on a copy of the path: a mention's path is up to 512 characters).
                while end > start and token[end - 1] in _TRAILING_ASCII:
                    end -= 1
            if end < host_end:
                host_end = end
        # Paths repeat ("b.com/b.com/..."): each reading is made, and judged, once. The
        # last one is compared in place, without copying the path.
        if not (
            end - start == len(written)
            and host_end - start == known[0]
            and token.startswith(written, start)
        ):
            written = token[start:end]
            known = seen.get(written, _NO_READING)
            if known[0] != host_end - start:
                known = seen[written] = _mention_readings(written, host_end - start)
        if known[1] is not None:
            add(_new_found(Found, (start, end, known[1][0], "mention", known[1])))


def _mention_readings(written: str, host_length: int) -> tuple[int, tuple[str, ...] | None]:
    """``(host_length, the readings)`` of a mention, None when its host is no host name."""
    host = written[:host_length]
    if not is_host_like(host):
        return host_length, None
    return host_length, (written,) if host.isascii() else (written, *cjk_free(host))


def _local_part(token: str, start: int, end: int) -> bool:
    """Whether the mention before "@" at ``end`` is an e-mail address's local part."""
    return (
        token[end + 1 : end + 2].isalnum()
        and token[start - 1 : start] in _LOCAL_BEFORE
        and _EMAIL_NAME.fullmatch(token, start, end) is not None
    )


def _link_starts(token: str) -> list[tuple[int, int]]:
    """(link start, authority start) of every place a link could start, in order."""
    starts: list[tuple[int, int]] = []
    length = len(token)
    colon = token.find(":")
    while colon != -1:
        begin = colon
        while begin > 0 and colon - begin < 32 and token[begin - 1] in _SCHEME_CHARS:
            begin -= 1
        while begin < colon and not token[begin].isalpha():
            begin += 1
        scheme = token[begin:colon].lower()
        after = colon + 1
        if scheme in _LINK_SCHEMES:
            while after < length and token[after] in "/\\":
                after += 1
            # "https:)" starts no link: what link_tokens' anchor refuses after a colon.
            if after < length and (after > colon + 1 or token[after] not in _NOT_AFTER_COLON):
                starts.append((begin, after))
        elif scheme and token.startswith("//", after) and token[after + 2 : after + 3] not in "/":
            starts.append((begin, after + 2))
        colon = token.find(":", colon + 1)
    # Scheme-relative: browsers read "\\evil.com", "/\\evil.com" and "///evil.com" in an
    # href as "//evil.com" (WHATWG treats "\\" as "/" and skips any run of them).
    for slashes in _SLASH_RUN.finditer(token):
        slash = slashes.start()
        if (slash == 0 or token[slash - 1] in _BEFORE_SCHEME_RELATIVE) and slashes.end() < length:
            starts.append((slash, slashes.end()))
    # Matched on the token itself: lower() can change its length ("İ" becomes two).
    for www_match in _WWW.finditer(token):
        www = www_match.start()
        before_ok = www == 0 or token[www - 1] not in _NOT_BEFORE_WWW
        # GFM links "www." only before a domain: "www.)" and "www.," are words.
        following = token[www + 4 : www + 5]
        if before_ok and following and following not in _NOT_AFTER_WWW:
            starts.append((www, www))
    starts.sort()
    return starts


def _dotted_authority(token: str, start: int, end: int) -> bool:
    """Whether the authority after "//" is more than one plain word ("//comment").

    "localhost" is the one word linkifiers link after "//".
    """
    authority = AUTHORITY_END.search(token, start, end)
    host = token[start : authority.start() if authority else end]
    if "@" in host:
        return True  # userinfo: the host follows it
    if authority is not None and token[authority.start()] == "\\" and authority.end() < end:
        # "//good\.example.com": the escape a markdown writer meant is no escape in an
        # href, and a browser links the host "good". Comments are not written so.
        return True
    host = host.partition(":")[0]  # "//TODO:fix" is a comment too
    return _PLAIN_WORD.fullmatch(host) is None or host.lower() == "localhost"
