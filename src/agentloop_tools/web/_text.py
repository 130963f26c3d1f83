"""Find the URLs and host names in answer text that a reader could follow.

One pass over the text, independent of any rule list: a C-level regex picks out
the few tokens that could hold a URL or a host (a dot, colon or slash followed by
more of the token, or a defanged dot), and only those are read closely.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from typing import Literal

# Characters that end a token everywhere: whitespace, and what HTML and markdown
# never let into a link (angle brackets, double quotes, backticks).
_DELIMITERS = r"\s<>\"`"
_TOKEN_CHAR = rf"[^{_DELIMITERS}]"
# A token is worth reading when a dot, colon or slash is followed by something
# that can continue a host or URL (so "end." and "note:" are skipped), or when it
# holds a defanged dot.
_CANDIDATE = re.compile(
    rf"(?<!{_TOKEN_CHAR}){_TOKEN_CHAR}*?"
    rf"(?:[.\uff0e\u3002\uff61:/\\](?=[^{_DELIMITERS}.,;:!?'*_~)\]]))"
    rf"{_TOKEN_CHAR}*"
    r"|(?<![^\s<>\"`])[^\s<>\"`]*?(?:\[\.\]|\(\.\)|\{\.\}|\[dot\]|\(dot\))[^\s<>\"`]*",
    re.IGNORECASE,
)

# Where a link starts inside a token: a scheme (special schemes may omit "//",
# as browsers accept "https:example.com"), "//" after an opening punctuation
# mark, or "www.".
_LINK_START = re.compile(
    r"(?<![A-Za-z0-9+.\-])(?:https?|hxxps?|ftp|wss?|fxp):(?=[/\\]*[^\s/\\])"
    r"|(?<![A-Za-z0-9+.\-])[A-Za-z][A-Za-z0-9+.\-]*://(?=[^\s/])"
    r"|(?<![^\s(\[<'=*_~|,])(?=//[^\s/\\])"
    r"|(?<![A-Za-z0-9+.\-/@\\])(?=www\.[^\s.])",
    re.IGNORECASE,
)

# CJK and full-width punctuation ends a link: Chinese and Japanese text puts no
# space between a URL and the next word. Full stops stay: inside a host they
# are label separators to IDNA.
_CJK_STOP = re.compile(r"[\u3001\u3003-\u3011\u3014-\u301f\uff01-\uff0d\uff0f\uff1a-\uff20\uff3b-\uff40\uff5b-\uff60\uff62-\uff65]")
_TRAILING = frozenset(".,:;!?'*_~\u3002\uff0e\uff61")

# A host name mentioned in prose: labels joined by dots, full-width dots,
# ideographic full stops or defanged dots ("example[.]com").
_LABEL_CHARS = r"[\w\-\u00ad\u200b-\u200d\u2060\ufeff]"
_DOT = r"(?:[.\uff0e\u3002\uff61]|\[\.\]|\(\.\)|\{\.\}|\[dot\]|\(dot\))"
_MENTION = re.compile(
    rf"(?<![\w\-\u00ad\u200b-\u200d\u2060\ufeff]){_LABEL_CHARS}+(?:{_DOT}{_LABEL_CHARS}+)+"
    r"(?P<path>[/\\][^\s<>\"`]*)?",
    re.IGNORECASE,
)
_IGNORABLE = dict.fromkeys(map(ord, "\u00ad\u200b\u200c\u200d\u2060\ufeff"))
_DEFANGED_DOT = re.compile(r"\[\.\]|\(\.\)|\{\.\}|\[dot\]|\(dot\)", re.IGNORECASE)
_HREF = re.compile(r"""\b(?:href|src)\s*=\s*(["'])(.*?)\1""", re.IGNORECASE | re.DOTALL)
_CJK_CLASS = r"[\u1100-\u11ff\u2e80-\u2fff\u3040-\u30ff\u3130-\u318f\u3400-\u9fff\uac00-\ud7af\uf900-\ufaff]+"
_CJK_HEAD = re.compile("^" + _CJK_CLASS)
_CJK_TAIL = re.compile(_CJK_CLASS + "$")

type Kind = Literal["url", "mention"]


@dataclass(frozen=True, slots=True)
class Found:
    """A URL or host name in the text, with its span as written."""

    start: int
    end: int
    text: str
    kind: Kind
    # The readings to check, most literal first (a mention glued to CJK text
    # has a second reading without the CJK run).
    readings: tuple[str, ...]


def scan(text: str, *, mentions: bool) -> list[Found]:
    """Every link in ``text`` and, with ``mentions``, every bare host name, in text order."""
    found: list[Found] = []
    for match in _CANDIDATE.finditer(text):
        _read_token(match.group(), match.start(), mentions, found)
    if ("href" in text or "src" in text or "HREF" in text or "SRC" in text) and (
        "\t" in text or "\n" in text or "\r" in text
    ):
        found = _with_split_attributes(text, found)
    found.sort(key=lambda item: (item.start, item.kind != "url"))
    return found


def _read_token(token: str, offset: int, mentions: bool, found: list[Found]) -> None:
    links: list[tuple[int, int]] = []
    for start_match in _LINK_START.finditer(token):
        start = start_match.start()
        if links and start < links[-1][1]:
            continue
        end = _link_end(token, start)
        link = token[start:end]
        if _names_host(link):
            links.append((start, end))
            found.append(Found(offset + start, offset + end, link, "url", (link,)))
    if not mentions:
        return
    for mention in _MENTION.finditer(token):
        start, end = mention.start(), mention.end()
        if end < len(token) and token[end] == "@":
            continue  # an e-mail local part names no host
        end = start + _link_end(token[start:end], 0)
        host_end = mention.start("path") if mention.group("path") else end
        host_end = min(host_end, end)
        host = token[start:host_end]
        if not _is_host_like(host):
            continue
        written = token[start:end]
        readings = [written]
        for variant in _cjk_free(host):
            readings.append(variant + token[host_end:end])
        found.append(Found(offset + start, offset + end, written, "mention", tuple(readings)))


def _link_end(token: str, start: int) -> int:
    """Where a link starting at ``start`` ends: GFM's rules for trailing punctuation."""
    end = len(token)
    stop = _CJK_STOP.search(token, start)
    if stop is not None:
        end = stop.start()
    # Markdown link text ends at "](": "[https://a.example](https://b.example)".
    depth = 0
    for index in range(start, end):
        char = token[index]
        if char == "[":
            depth += 1
        elif char == "]":
            if depth == 0:
                end = index
                break
            depth -= 1
    while end > start:
        last = token[end - 1]
        if last in _TRAILING:
            end -= 1
        elif last == ")" and token.count("(", start, end) < token.count(")", start, end):
            end -= 1
        else:
            break
    return end


def _names_host(link: str) -> bool:
    """A scheme alone ("https:") or an empty authority is not a link."""
    body = link.split(":", 1)[1] if ":" in link[:12] and not link.startswith("//") else link
    return bool(body.strip("/\\"))


def _is_host_like(host: str) -> bool:
    """A dotted word whose last label has a letter, or a dotted-quad IPv4 address.

    "3.14" and "v1.2" are not host names; "config.py" is, and only matters when
    ".py" or "config.py" is on the blocklist.
    """
    plain = _DEFANGED_DOT.sub(".", unicodedata.normalize("NFKC", host.translate(_IGNORABLE)))
    labels = plain.rstrip(".").split(".")
    if len(labels) < 2 or not all(labels):
        return False
    last = labels[-1]
    if any(char.isalpha() for char in last):
        return True
    return len(labels) == 4 and all(label.isdigit() and len(label) <= 3 for label in labels)


def _cjk_free(host: str) -> list[str]:
    """A host glued to CJK text ("example.comを参照"), read without the CJK runs at its ends."""
    trimmed = _CJK_TAIL.sub("", _CJK_HEAD.sub("", host))
    if trimmed and trimmed != host and _is_host_like(trimmed):
        return [trimmed]
    return []


def _with_split_attributes(text: str, found: list[Found]) -> list[Found]:
    """HTML attribute values may hold tabs and newlines; browsers drop them from URLs."""
    extra: list[Found] = []
    for match in _HREF.finditer(text):
        value = match.group(2)
        if not any(char in value for char in "\t\n\r"):
            continue
        joined = value.replace("\t", "").replace("\n", "").replace("\r", "").strip()
        start, end = match.start(2), match.end(2)
        extra.append(Found(start, end, value, "url", (joined,)))
    if not extra:
        return found
    spans = [(item.start, item.end) for item in extra]
    kept = [item for item in found if not _overlaps(spans, item.start, item.end)]
    return kept + extra


def _overlaps(spans: list[tuple[int, int]], start: int, end: int) -> bool:
    return any(start < span_end and span_start < end for span_start, span_end in spans)
