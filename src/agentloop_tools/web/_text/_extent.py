"""Where a link in a token ends, and the tokens whose one link is plain to see.

``link_end`` is GFM's reading of a link's end (trailing punctuation, brackets,
parentheses, CJK stops). ``plain_link`` answers for the common shapes of a token at
once, with one regex instead of the general search for link starts: a test holds
its answer to the general reading for every token it answers for.
"""

from __future__ import annotations

import re

from agentloop_tools.web._domains._url import nested_urls

# CJK and full-width punctuation ends a link: Chinese and Japanese text puts no
# space between a URL and the next word. Full stops stay: inside a host they
# are label separators to IDNA.
_CJK_STOP = re.compile(
    r"[\u3001\u3003-\u3011\u3014-\u301f\uff01-\uff0d\uff0f\uff1a-\uff20\uff3b-\uff40\uff5b-\uff60\uff62-\uff65]"
)
_BRACKET = re.compile(r"[\[\]]")
# Text whose brackets are balanced, nested at most twice: runs without brackets, and
# groups. Possessive: each character allows one way on, and a run is taken at once.
_BALANCED = re.compile(r"[^\[\]]*+(?:\[[^\[\]]*+(?:\[[^\[\]]*+\][^\[\]]*+)*+\][^\[\]]*+)*+")
_PAREN = re.compile(r"[()]")
_RFC_AUTHORITY_END = re.compile(r"[/?#]")
_PATH_START = re.compile(r"(?:^|[^/\\:])[/\\](?=[^/\\]|$)")
CJK_FULL_STOP = re.compile("[\u3002\uff61]")
_TRAILING = frozenset(".,:;!?'*_~\u3002\uff0e\uff61")

# The plain shapes: an http(s) URL or a "www." host of ASCII letters, digits, dots and
# hyphens, a path without ":", "\\", brackets or characters other than ASCII, and
# trailing punctuation. Before an http(s) URL: nothing, "(", or markdown link text
# ("[a.example](") with no ":", "/" or "www." in it, or (with a path) CJK text; an
# ideographic full stop may end the URL. Nothing in these shapes can start a second
# link, and each step of link_end is plain: that is what lets the shapes skip it.
# Possessive repeats: the trailing punctuation is also a path character, and a regex
# free to split a run of it between the two would try every split (quadratic).
_HOST = r"[A-Za-z0-9][A-Za-z0-9.-]*+"
_PATH_CHARS = r"A-Za-z0-9/?#=&%+_~.,;!*'@$-"
_TAIL = r"[).,;!?'*_~]*"
_HTTP = r"[Hh][Tt][Tt][Pp][Ss]?://"
# Parentheses in the path only where none opens before the link (link_end's counts).
_PLAIN_BARE = re.compile(
    rf"(?:{_HTTP}(?P<host>{_HOST})|(?P<www>[Ww]{{3}}\.{_HOST}))(?:[/?#][{_PATH_CHARS}()]*+)?{_TAIL}"
)
_PLAIN_AFTER_OPENING = re.compile(
    rf"(?:\(|\[[A-Za-z0-9._-]*\]\(){_HTTP}(?P<host>{_HOST})(?:[/?#][{_PATH_CHARS}]*+)?{_TAIL}"
)
_PLAIN_AFTER_CJK = re.compile(
    rf"[^\x00-\x7f]+{_HTTP}(?P<host>{_HOST})/[{_PATH_CHARS}]*+[\u3002\uff61]?[.,;!?'*_~]*"
)


def plain_link(token: str) -> tuple[int, int, int] | None:
    """``(start, end, host start)`` of the token's one link when its shape is plain.

    None when the token needs the general reading (which then gives the answer).
    """
    plain = plain_url(token)
    return None if plain is None else plain[:3]


def plain_url(token: str) -> tuple[int, int, int, int] | None:
    """:func:`plain_link`'s answer and where the link's host ends (at "/", "?", "#" or
    the link's end): ``(start, end, host start, host end)``."""
    # Each shape opens with its own characters: try only the one that can match.
    first = token[:1]
    if first == "(" or first == "[":
        match = _PLAIN_AFTER_OPENING.fullmatch(token)
    elif first.isascii():
        match = _PLAIN_BARE.fullmatch(token)
    else:
        match = _PLAIN_AFTER_CJK.fullmatch(token)
    if match is None:
        return None
    if match.re is _PLAIN_BARE:
        # A "www." host starts at its "www."; later link starts ("=//", "=www.") lie
        # inside this link, which the general reading skips over.
        host = match.start("host")
        if host == -1:
            host, host_end = 0, match.end("www")
        else:
            host_end = match.end("host")
        end = _trim(token, 0, len(token))
        return 0, end, host, min(host_end, end)
    host, host_end = match.span("host")
    colon = host - 3  # "://" before the host
    start = colon - 5 if token[colon - 1] in "sS" else colon - 4
    if "www." in token[:start].lower():
        return None  # "www." before the link may start one
    end = token.find(")", host) if token[start - 1] == "(" else -1
    if end == -1:
        full_stop = CJK_FULL_STOP.search(token, host)
        end = full_stop.start() if full_stop is not None else len(token)
    end = _trim(token, start, end)
    return start, end, host, min(host_end, end)


def plain_host_link(token: str) -> tuple[int, int, str, str] | None:
    """``(start, end, link, host)`` as written, when the token's one link is plain and
    its host alone decides under host rules: the host :func:`plain_host` reads (labels,
    the last one starting with a letter), and no URL carried in the link."""
    plain = plain_url(token)
    if plain is None:
        return None
    start, end, host_start, host_end = plain
    host = token[host_start:host_end]  # ASCII letters, digits, dots and hyphens
    dot = host.rfind(".")
    if dot < 1 or dot + 1 == len(host) or not host[dot + 1].isalpha() or ".." in host:
        return None
    link = token[start:end]
    if ("%" in link or "=/" in link) and nested_urls(link):  # no ":" or "\\" after the host
        return None
    return start, end, link, host


def link_end(token: str, start: int, limit: int | None = None) -> int:
    """Where a link starting at ``start`` ends: GFM's rules for trailing punctuation.

    Every step is bounded by this link's own extent, so reading a token stays linear
    however many links it holds. ``limit``: a mention's extent, read as a text of its
    own (what comes before it is not looked at).
    """
    end = len(token) if limit is None else limit
    if limit is None and start and token[start - 1] == "(" and token.find(")", start) != -1:
        # A link destination ("](https://a.example/)", or a URL in parentheses) ends at
        # its first unbalanced ")": "[a](https://a.example/)[b](//b.example/)" is two links.
        closing = _unbalanced_close(token, start, end)
        if closing is not None:
            end = closing
    # Markdown link text ends at "](": "[https://a.example](https://b.example)".
    if token.find("]", start, end) != -1:
        # Balanced brackets are skipped in C ("b[.]com/" repeated); the walk goes on
        # from the first "]" or from a bracket nested deeper or left open.
        skipped = _BALANCED.match(token, start, end)
        position = skipped.end() if skipped is not None else start
        if position < end:
            end = position if token[position] == "]" else _first_unmatched(token, position, end)
    if not token.isascii() and not token[start:end].isascii():  # linear in the token
        end = _cjk_end(token, start, end)
    return _trim(token, start, end)


def _first_unmatched(token: str, start: int, end: int) -> int:
    """Where the first "]" that closes no "[" opened after ``start`` is, else ``end``."""
    depth = 0
    for bracket in _BRACKET.finditer(token, start, end):
        if bracket.group() == "[":
            depth += 1
        elif depth == 0:
            return bracket.start()
        else:
            depth -= 1
    return end


def _cjk_end(token: str, start: int, end: int) -> int:
    stop = _CJK_STOP.search(token, start, end)
    if stop is not None:
        end = stop.start()
    # In the path, an ideographic full stop ends the sentence, not a label: where
    # every reader agrees it is the path. After a "\\" WHATWG reads the path, but an
    # RFC 3986 reader (urllib, httpx, curl) still reads the authority up to "/", "?"
    # or "#": "https://a.example\\@python。org/" is one link, to python.org for them.
    path_start = _PATH_START.search(token, start, end)
    if path_start is not None:
        path = path_start.end()
        if token[path - 1] == "\\":
            authority_end = _RFC_AUTHORITY_END.search(token, path, end)
            if "@" in token[path : authority_end.start() if authority_end else end]:
                path = authority_end.end() if authority_end else end
        full_stop = CJK_FULL_STOP.search(token, path, end)
        if full_stop is not None:
            end = full_stop.start()
    return end


def _trim(token: str, start: int, end: int) -> int:
    """``end`` moved back over trailing punctuation and ")" that closes nothing."""
    opened = closed = -1  # counted at the first ")": most links end without one
    while end > start:
        last = token[end - 1]
        if last in _TRAILING:
            end -= 1
        elif last == ")":
            if opened == -1:
                # What was trimmed so far holds no parenthesis: the counts are the span's.
                opened, closed = token.count("(", start, end), token.count(")", start, end)
            if opened >= closed:
                break
            closed -= 1
            end -= 1
        else:
            break
    return end


def _unbalanced_close(token: str, start: int, end: int) -> int | None:
    """Where the first ")" that closes no "(" opened after ``start`` is, or None."""
    depth = 0
    for paren in _PAREN.finditer(token, start, end):
        if paren.group() == "(":
            depth += 1
        elif depth == 0:
            return paren.start()
        else:
            depth -= 1
    return None
