"""Whether a word read as a host name is one: its labels, IPv4 shapes, CJK glued to it."""

from __future__ import annotations

import re
import unicodedata

from agentloop_tools.web._domains._url import DEFANGED_DOT

# Code points UTS #46 deletes from a host (soft hyphen, zero-width and joiner
# characters, variation selectors, invisible operators, fillers): "evil\ufe0f.com" is
# evil.com to a browser. ZWJ and ZWNJ are kept by newer IDNA but deleted by the
# transitional mapping some readers still apply.
DELETED = (
    "\u00ad\u034f\u115f\u1160\u17b4\u17b5\u180b-\u180f\u200b-\u200d\u2060-\u2064"
    "\u206a-\u206f\u3164\ufe00-\ufe0f\ufeff\uffa0\U0001bca0-\U0001bca3"
    "\U0001d173-\U0001d17a\U000e0100-\U000e01ef"
)
_DELETED_RANGES = [
    (match.group(1), match.group(2) or match.group(1))
    for match in re.finditer(r"(.)(?:-(.))?", DELETED, re.DOTALL)
]
_IPV4_PART = re.compile(r"0[xX][0-9A-Fa-f]*|[0-9]+")
# Characters IDNA deletes, and dots it maps to ".", for judging a mention's shape.
_TO_PLAIN: dict[int, str | None] = {
    **dict.fromkeys(
        code for first, last in _DELETED_RANGES for code in range(ord(first), ord(last) + 1)
    ),
    **dict.fromkeys(map(ord, "\u3002\uff0e\uff61"), "."),
}
_CJK_CLASS = (
    r"[\u1100-\u11ff\u2e80-\u2fff\u3040-\u30ff\u3130-\u318f"
    r"\u3400-\u9fff\uac00-\ud7af\uf900-\ufaff]+"
)
_CJK_RUN = re.compile(_CJK_CLASS)
_DOT_CHARS = ".\u3002\uff0e\uff61"


def is_host_like(host: str) -> bool:
    """A dotted word whose last label has a letter, or a dotted-quad IPv4 address.

    "3.14" and "v1.2" are not host names; "config.py" is, and only matters when
    ".py" or "config.py" is on the blocklist.
    """
    if host.isascii() and "(" not in host and "[" not in host and "{" not in host:
        plain = host.rstrip(".")
        last = plain[plain.rfind(".") + 1 :]
        if ".." not in plain and not plain.startswith(".") and last.lower() != last.upper():
            return True  # the common case: the last label has a letter
    elif host.isascii():
        plain = DEFANGED_DOT.sub(".", host)
    else:
        plain = DEFANGED_DOT.sub(".", unicodedata.normalize("NFKC", host.translate(_TO_PLAIN)))
    labels = plain.rstrip(".").split(".")
    if len(labels) < 2 or not all(labels):
        return False
    last = labels[-1]
    if not last.isdigit() and any(char.isalpha() for char in last):
        return True
    return _ipv4_like(labels)


def _ipv4_like(labels: list[str]) -> bool:
    """Labels a browser (and curl, and ``inet_aton``) read as an IPv4 address.

    Four numbers, or fewer in octal (``0251.0376.43518``) or with a last part too big
    for one byte (``169.254.43518``); "3.14" and "1.2.3" stay version numbers.
    """
    if not 2 <= len(labels) <= 4 or not all(_IPV4_PART.fullmatch(label) for label in labels):
        return False
    if len(labels) == 4:
        return True
    last = labels[-1]
    return any(len(label) > 1 and label[0] == "0" for label in labels) or (
        last.isdigit() and len(last) <= 10 and int(last) > 255
    )


def cjk_free(host: str) -> list[str]:
    """Hosts inside a run glued to CJK text ("以及example.comを参照"), read without the CJK."""
    if _CJK_RUN.search(host) is None:
        return []
    pieces = (piece.strip(_DOT_CHARS) for piece in _CJK_RUN.split(host))
    return [piece for piece in pieces if piece and is_host_like(piece)]
