"""A configured URL as an error message may quote it: its credentials masked.

Configured URLs (``SEARXNG_URL``, ``ANTHROPIC_BASE_URL``) can carry a password in
their userinfo, a token in their query or fragment. The messages that quote them
are read by people and logs, so every one quotes them through :func:`masked_url`.
It reads the text by hand, not with a URL parser: the URL quoted is often the one
that did not parse (a typo in the port), and its secret must still be masked.
"""

from __future__ import annotations

import re

MASK = "***"
# "scheme:" followed by at least one slash: the authority starts after the slashes.
_SCHEME_SLASHES = re.compile(r"[A-Za-z][A-Za-z0-9+.\-]*:[/\\]+")


def masked_url(text: str) -> str:
    """``text`` with its userinfo, each query value and its fragment replaced by ``***``.

    Works on any string, parsable or not: ``https://admin:pw@host:8O80`` becomes
    ``https://***@host:8O80``, ``https://host/?token=t#frag`` becomes
    ``https://host/?token=***#***``. Parameter names, the host, the port and the
    path stay, so the message still says which URL is meant.
    """
    start, userinfo_end, query, fragment = _parts(text)
    userinfo = MASK + "@" if userinfo_end - 1 > start else text[start:userinfo_end]
    head = text[:start] + userinfo + text[userinfo_end:query]
    if query < fragment:  # text[query] is "?"
        head += "?" + "&".join(_masked_param(p) for p in text[query + 1 : fragment].split("&"))
    if fragment < len(text):  # text[fragment] is "#"
        head += "#" + (MASK if fragment + 1 < len(text) else "")
    return head


def masked_within(message: str, url: str) -> str:
    """``message`` (say, a parser's complaint about ``url``) with ``url``'s secrets masked."""
    for secret in sorted(url_secrets(url), key=len, reverse=True):
        message = message.replace(secret, MASK)
    return message


def url_secrets(text: str) -> set[str]:
    """The pieces of ``text`` that :func:`masked_url` masks (3 characters or more)."""
    start, userinfo_end, query, fragment = _parts(text)
    pieces: list[str] = []
    if userinfo_end > start:
        userinfo = text[start : userinfo_end - 1]
        pieces += [userinfo, *re.split(r"[:@/?#\\]", userinfo)]
    if query < fragment:
        for param in text[query + 1 : fragment].split("&"):
            pieces.append(param.partition("=")[2] if "=" in param else param)
    if fragment < len(text):
        pieces.append(text[fragment + 1 :])
    return {piece for piece in pieces if len(piece) >= 3}


def _parts(text: str) -> tuple[int, int, int, int]:
    """Where the authority starts, where its userinfo (with its ``@``) ends, and
    where the query (``?``) and the fragment (``#``) start (``len(text)`` if absent).

    The userinfo runs to the last ``@`` before the path; when the part before the
    first slash holds a ``:`` that is no port (``u:pa/ss@host``), to the last ``@``
    before the query: a typed password may hold ``/``, ``?`` or ``#``.
    """
    scheme = _SCHEME_SLASHES.match(text)
    start = scheme.end() if scheme is not None else 0
    slash = _first(text, "/\\", start)
    at = text.rfind("@", start, slash)
    if at < 0:
        authority = text[start:slash]
        tail = authority.rpartition(":")[2]
        if ":" in authority and "[" not in authority and not tail.isdigit():
            at = text.rfind("@", start, _first(text, "?#", start))
    userinfo_end = at + 1 if at >= 0 else start
    fragment = text.find("#", userinfo_end)
    fragment = len(text) if fragment < 0 else fragment
    query = text.find("?", userinfo_end, fragment)
    return start, userinfo_end, fragment if query < 0 else query, fragment


def _first(text: str, stops: str, start: int) -> int:
    found = [i for i in (text.find(stop, start) for stop in stops) if i >= 0]
    return min(found, default=len(text))


def _masked_param(param: str) -> str:
    if not param:
        return param
    name, equals, value = param.partition("=")
    if not equals:
        return MASK
    return f"{name}={MASK if value else ''}"
