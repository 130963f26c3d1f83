"""Which bare host names a linkifier renders as links: ``evil.com`` and ``setup.py`` are.

An allowlist with ``bare_hosts=True`` judges exactly these; everything else that looks
like a host (``example.community``, ``example。com``, ``example[.]com``) is prose.
"""

from __future__ import annotations

import re
import unicodedata

from agentloop_tools.web._text._extent import CJK_FULL_STOP
from agentloop_tools.web._text._finder import DELETED_CHAR, Found

# The top-level domains linkify-it (markdown-it's linkifier, and many chat UIs built
# on it) links without a scheme: "evil.com" and "setup.py" render as links.
_FUZZY_TLDS = frozenset(
    ["biz", "com", "edu", "gov", "net", "org", "pro", "web", "xxx", "aero", "asia", "coop",
     "info", "museum", "name", "shop", "рф"]
    + [
        first + second
        for first, seconds in (
            ("a", "cdefgilmnoqrstuwxz"), ("b", "abdefghijmnorstvwyz"),
            ("c", "acdfghiklmnoruvwxyz"), ("d", "ejkmoz"), ("e", "cegrstu"), ("f", "ijkmor"),
            ("g", "abdefghilmnpqrstuwy"), ("h", "kmnrtu"), ("i", "delmnoqrst"), ("j", "emop"),
            ("k", "eghimnprwyz"), ("l", "abcikrstuvy"), ("m", "acdeghklmnopqrstuvwxyz"),
            ("n", "acefgilopruz"), ("o", "m"), ("p", "aefghklmnrstwy"), ("q", "a"),
            ("r", "eosuw"), ("s", "abcdeghijklmnortuvxyz"), ("t", "cdfghjklmnortvwz"),
            ("u", "agksyz"), ("v", "aceginu"), ("w", "fs"), ("y", "et"), ("z", "amw"),
        )
        for second in seconds
    ]
)  # fmt: skip
_HOST_PART_END = re.compile(r"[/\\?#:]")


def linkable(mention: str) -> bool:
    """Whether a linkifier renders this bare host (with its path) as a link.

    Its last label must be a top-level domain linkify-it knows (or punycode), joined
    by ASCII dots: "evil.com" and "setup.py" are links, "example.community",
    "example。com" and "example[.]com" are not.
    """
    end = _HOST_PART_END.search(mention)
    host = DELETED_CHAR.sub("", mention[: end.start()] if end else mention).rstrip(".")
    body = host.replace(".", "").replace("-", "").replace("_", "")
    if not (body.isalnum() if body.isascii() else _pseudo_letters(body)):
        return False  # defanged or full-width dots, brackets, CJK stops: not linked
    last = host[host.rfind(".") + 1 :].lower()
    return last in _FUZZY_TLDS or last.startswith("xn--")


def _pseudo_letters(text: str) -> bool:
    """What linkify-it takes into a host: no separator, punctuation or control character.

    Symbols and combining marks are in ("ⓔⓥⓘⓛ.com" is linked), full-width dots are not.
    """
    return bool(text) and all(unicodedata.category(char)[0] not in "ZPC" for char in text)


def linked_reading(found: Found) -> str | None:
    """The reading of a bare host a linkifier renders as a link, or None if it links none.

    A linkifier takes CJK text glued before a host into the link ("访问example.com" is
    one punycode host) and stops at an ideographic full stop; without such a link, the
    host read without the CJK text is tried.
    """
    glued = CJK_FULL_STOP.split(found.readings[0], maxsplit=1)[0]
    return next((reading for reading in (glued, *found.readings[1:]) if linkable(reading)), None)


def has_deleted(text: str) -> bool:
    """Whether ``text`` holds a character UTS #46 deletes from hosts.

    Browsers delete it, markdown-it keeps it in the punycode of the link it renders:
    the readings disagree.
    """
    return DELETED_CHAR.search(text) is not None
