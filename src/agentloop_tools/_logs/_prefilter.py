"""Lines of a log a blocklist need not audit: their raw JSON cannot name a blocked host.

A blocklist of domain names refuses a host only where the host ends with a rule's host.
Written in printable ASCII without the forms that hide a host from a substring (the
text audit's own list, ``web/_text/_prefilter.HIDING``: escapes, backslashes, punycode,
defanged dots; and here ``&`` for character references and ``{name`` for AsciiDoc
attribute references, which build text out of pieces), such a host is a substring of
the lower-cased line with whitespace removed (URL parsers delete tabs and newlines,
attribute values and reST targets span lines). JSON escapes hide text from a byte
search (``\\u002e`` is a dot): a line with any escape but ``\\"``, ``\\/`` and the
whitespace ones is audited. The only text the audit joins from several strings is an
answer's text parts, so those are searched joined as well. A line that passes all of
this holds no violation: ``audit_log_piece`` skips its audit (never its reading, which
counts it and words its problems); a differential test holds the two to each other.
"""

from __future__ import annotations

import re
import threading
from bisect import bisect_left
from typing import Any

from agentloop_tools.web._text._literal_search import LiteralSearch
from agentloop_tools.web._text._prefilter import HIDING

# Besides HIDING: character references, and AsciiDoc attribute references ("{" then a
# name's first character; JSON's own braces are followed by a quote or a brace).
_PIECED = ("&", *(f"{{{first}" for first in "abcdefghijklmnopqrstuvwxyz0123456789_"))
# An escape other than these hides what it stands for from the search ("\\\\" included:
# the first backslash of a pair is followed by one that is not in the class).
_UNSAFE_ESCAPE = re.compile(rb'\\[^"/fnrt]')
_WHITESPACE = b" \t\n\r\x0b\x0c"
_WHITESPACE_NOT_NEWLINE = b" \t\r\x0b\x0c"
_NEWLINE = re.compile("\n")
_LOWER = bytes.maketrans(b"ABCDEFGHIJKLMNOPQRSTUVWXYZ", b"abcdefghijklmnopqrstuvwxyz")
# The whitespace escapes, deleted with the whitespace; "\b" is no whitespace (it would
# be a character the search cannot speak for), so a line with one is audited.
_ESCAPES = ((b"\\n", b""), (b"\\r", b""), (b"\\t", b""), (b"\\f", b""), (b'\\"', b'"'))


class LinePrefilter:
    """The literals of one blocklist (its rules' hosts and the hiding forms), searched at once."""

    __slots__ = ("_search",)

    def __init__(self, hosts: list[str]) -> None:
        self._search = LiteralSearch(sorted({*hosts, *HIDING, *_PIECED}))

    def skips(self, raw: bytes, transcript: Any) -> bool:
        """Whether the line ``raw`` (read as ``transcript``) names no host a rule blocks."""
        return self.clear([raw])[0] and self.clear_texts(transcript)

    def clear(self, lines: list[bytes | None]) -> list[bool]:
        """For each raw line, whether it cannot name a blocked host (its answers' text
        parts joined aside: ``clear_texts``). The lines are searched as one text, a
        line's newline kept as the border no literal crosses: one search, not one a line."""
        data = _whole(lines)
        if data is not None:  # the usual batch: nothing in it to look at a line at a time
            cleared = [True] * len(lines)
        else:
            cleared = [False] * len(lines)
            data = b"".join(self._kept(lines, cleared))
        # Lower-cased and whitespace deleted in one pass; newlines kept as the borders.
        text = data.translate(_LOWER, _WHITESPACE_NOT_NEWLINE).decode("ascii")
        starts = self._search.starts(text)
        if starts:
            ends = [match.start() for match in _NEWLINE.finditer(text)]
            for start in starts:
                cleared[bisect_left(ends, start)] = False
        return cleared

    @staticmethod
    def _kept(lines: list[bytes | None], cleared: list[bool]) -> list[bytes]:
        """Each line as searched (``cleared`` set where it may be), one line each."""
        kept: list[bytes] = []
        for number, raw in enumerate(lines):
            if raw is not None and raw.isascii() and b"\x7f" not in raw:
                unescaped = _unescaped(raw)
                if unescaped is not None:
                    cleared[number] = True
                    kept.append(unescaped if unescaped.endswith(b"\n") else unescaped + b"\n")
                    continue
            kept.append(b"\n")  # read in full anyway: an empty line keeps the numbers
        return kept

    def clear_texts(self, transcript: Any) -> bool:
        """Whether no answer's text parts, joined, name a blocked host across a seam."""
        return not any(self._names("".join(texts).encode()) for texts in _joined(transcript))

    def _names(self, data: bytes) -> bool:
        text = data.lower().translate(None, _WHITESPACE).decode("ascii")
        return bool(self._search.starts(text))


def _whole(lines: list[bytes | None]) -> bytes | None:
    """The lines joined, safe escapes decoded, when each ends with its newline and
    together they are printable ASCII with only safe escapes (no escape spans a line's
    end); else None."""
    if not all(line is not None and line.endswith(b"\n") for line in lines):
        return None
    data = b"".join(lines)  # type: ignore[arg-type]
    if not data.isascii() or b"\x7f" in data:
        return None
    return _unescaped(data)


def _unescaped(raw: bytes) -> bytes | None:
    """``raw`` with its safe escapes decoded, or None when it holds another."""
    if b"\\" not in raw:
        return raw
    if _UNSAFE_ESCAPE.search(raw) is not None:
        return None
    for escape, meaning in _ESCAPES:
        raw = raw.replace(escape, meaning)
    return raw.replace(b"\\/", b"/")


def _joined(transcript: Any) -> list[list[str]]:
    """The text parts of each answer with more than one: the audit reads them joined."""
    from agentloop.transcript import TextPart

    found = []
    for message in transcript.messages:
        if message.role != "assistant" or len(message.content) < 2:
            continue
        texts = [part.text for part in message.content if isinstance(part, TextPart)]
        if len(texts) > 1:
            found.append(texts)
    return found


_MADE: dict[Any, LinePrefilter | None] = {}
_LOCK = threading.Lock()


def line_prefilter(policy: Any) -> LinePrefilter | None:
    """The prefilter of ``policy``: a ``DomainPolicy`` blocklist of domain names only
    (an IP has too many spellings for a substring), else None. Made once per policy."""
    from agentloop_tools.web import DomainPolicy

    if type(policy) is not DomainPolicy or policy.mode != "block":
        return None
    with _LOCK:
        if policy in _MADE:
            return _MADE[policy]
        from agentloop_tools.web._domains._index import RuleIndex
        from agentloop_tools.web._domains._rules import parse_rules

        index = RuleIndex(parse_rules(policy.domains, argument="block"))
        made = None if index.has_ip_rules else LinePrefilter(index.domain_hosts())
        _MADE.clear()  # one policy per run: never a growing cache
        _MADE[policy] = made
        return made
