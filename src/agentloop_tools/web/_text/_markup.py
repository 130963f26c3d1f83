"""Answer text as renderers see it: GFM table cells and code, character references, escapes.

The scanner in ``_text`` reads plain text. Renderers do more before a link exists:
GFM splits table rows into cells on unescaped ``|`` before any inline parsing, code
(fenced blocks and code spans) is never linkified, and both HTML and CommonMark decode
character references (``&#46;``, ``&period;``, ``&#46`` without a semicolon) and
CommonMark decodes backslash escapes (``evil\\.com``) before a destination is followed.

Two rewritings follow from that:

* :func:`layout` keeps every offset: table-cell pipes and, inside code, runs of slashes
  that are not part of ``scheme://`` become spaces. ``//config.json`` in a code block is
  a comment, not a scheme-relative link (a blocklist still sees the host named there).
* :func:`decode` changes lengths and keeps a map back to the text as written, so a
  finding in the decoded text is reported with the span and spelling of the original.
"""

from __future__ import annotations

import html
import re
from bisect import bisect_right
from html.entities import html5
from typing import NamedTuple

# A CommonMark backslash escape (any ASCII punctuation), or an HTML character reference
# in the shape Python's html.unescape reads: the HTML5 table, numeric references with or
# without ";" and the legacy names browsers accept without ";" (``&amp``, ``&not``).
_REFERENCE = re.compile(r"()&(?:#[0-9]+;?|#[xX][0-9a-fA-F]+;?|[A-Za-z][A-Za-z0-9]{0,31};?)")
# CommonMark: a backslash escape, or a reference that ends in ";" (numeric ones of at
# most 7 decimal or 6 hexadecimal digits, named ones from the HTML5 table).
_ESCAPE_OR_REFERENCE = re.compile(
    r"\\([!-/:-@\[-`{-~])|&(?:#[0-9]{1,7}|#[xX][0-9a-fA-F]{1,6}|([A-Za-z][A-Za-z0-9]{0,31}));"
)
# URL parsers delete tabs and newlines anywhere in a URL, so a reference that decodes
# to one (``&#x0A;`` inside a host) joins what is around it.
_URL_DELETES = str.maketrans("", "", "\t\n\r")

# A GFM delimiter row: cells of dashes with optional colons, at least one pipe.
_CELL = r"[ \t]*:?-+:?[ \t]*"
_DELIMITER_ROW = re.compile(rf"^ {{0,3}}\|?{_CELL}(?:\|{_CELL})*(?:\|[ \t]*)?\r?$", re.MULTILINE)
_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})(.*)$", re.MULTILINE)
_BACKTICKS = re.compile(r"`+")
_BLANK_LINE = re.compile(r"\n[ \t]*\n")
# In code, slashes that could start a scheme-relative link: two or more, not after ":".
_CODE_SLASHES = re.compile(r"(?<![:\\/])[/\\]{2,}")
_UNESCAPED_PIPE = re.compile(r"(?<!\\)\|")


class Decoded(NamedTuple):
    """Text with references and escapes decoded, and the way back to the original.

    Attributes:
        text: the decoded text.
        starts: where each segment starts in ``text``.
        origins: where each segment starts in the original text.
        segments: per segment, ``(start in the original, end in the original, literal)``;
            a literal segment maps character by character, a decoded one as a whole.
    """

    text: str
    starts: list[int]
    origins: list[int]
    segments: list[tuple[int, int, bool]]

    def span(self, start: int, end: int) -> tuple[int, int]:
        """The span in the original text that ``text[start:end]`` was decoded from."""
        first = bisect_right(self.starts, start) - 1
        origin_start, origin_end, literal = self.segments[first]
        begin = origin_start + (start - self.starts[first]) if literal else origin_start
        last = bisect_right(self.starts, max(end - 1, start)) - 1
        origin_start, origin_end, literal = self.segments[last]
        finish = origin_start + (end - self.starts[last]) if literal else origin_end
        return begin, max(finish, begin)

    def changes(self, start: int, end: int) -> bool:
        """Whether decoding changed anything in ``original[start:end]``."""
        first = bisect_right(self.origins, start) - 1
        for number in range(max(first, 0), len(self.segments)):
            origin_start, origin_end, literal = self.segments[number]
            if origin_start >= end:
                return False
            if not literal and origin_end > start:
                return True
        return False


def decode(text: str, *, commonmark: bool) -> Decoded | None:
    """``text`` with character references decoded, or None if decoding changes nothing.

    Args:
        text: the text as written.
        commonmark: decode as CommonMark does markdown text (backslash escapes, and
            only references that end in ";"), else as a browser does HTML (every
            reference ``html.unescape`` reads, backslashes kept: a browser reads them
            as slashes in a URL).

    Decoding happens everywhere, code included: a copied snippet is decoded by whatever
    renders it next.
    """
    if "&" not in text and not (commonmark and "\\" in text):
        return None
    pieces: list[str] = []
    starts: list[int] = []
    segments: list[tuple[int, int, bool]] = []
    position = 0
    length = 0
    for match in (_ESCAPE_OR_REFERENCE if commonmark else _REFERENCE).finditer(text):
        escaped = match.group(1)
        if escaped:
            value = escaped
        elif commonmark and match.group(2) and match.group()[1:] not in html5:
            continue  # CommonMark decodes only names in the table, with their ";"
        else:
            value = html.unescape(match.group())
            if value == match.group():
                continue  # "&word" that names no reference
            value = value.translate(_URL_DELETES)
        if match.start() > position:
            starts.append(length)
            segments.append((position, match.start(), True))
            pieces.append(text[position : match.start()])
            length += match.start() - position
        starts.append(length)
        segments.append((match.start(), match.end(), False))
        pieces.append(value)
        length += len(value)
        position = match.end()
    if not segments:
        return None
    if position < len(text):
        starts.append(length)
        segments.append((position, len(text), True))
        pieces.append(text[position:])
    origins = [origin_start for origin_start, _, _ in segments]
    return Decoded("".join(pieces), starts, origins, segments)


class Code:
    """Where code is in a text (fenced blocks, code spans): nothing there is linkified."""

    def __init__(self, ranges: list[tuple[int, int]]) -> None:
        ranges.sort()
        self._starts = [start for start, _ in ranges]
        self._ends = [end for _, end in ranges]

    def __bool__(self) -> bool:
        return bool(self._starts)

    def holds(self, start: int, end: int) -> bool:
        """Whether ``text[start:end]`` lies inside code."""
        index = bisect_right(self._starts, start) - 1
        return index >= 0 and end <= self._ends[index]


def layout(text: str) -> tuple[str, Code]:
    """``text`` with table-cell pipes and slashes in code turned into spaces (same
    length), and where its code is."""
    maybe_table = "|" in text and "-" in text and _DELIMITER_ROW.search(text) is not None
    # One-character tests first: on text other than ASCII a substring search costs
    # ten times a character search.
    maybe_span = "`" in text
    maybe_fence = (maybe_span and "```" in text) or ("~" in text and "~~~" in text)
    if not (maybe_table or maybe_fence or maybe_span):
        return text, Code([])
    chars = list(text)
    if maybe_table:
        _split_table_cells(text, chars)
    code = _code_ranges(text, maybe_fence)
    for start, end in code:
        for slashes in _CODE_SLASHES.finditer(text, start, end):
            chars[slashes.start() : slashes.end()] = " " * (slashes.end() - slashes.start())
    return "".join(chars), Code(code)


def _split_table_cells(text: str, chars: list[str]) -> None:
    """Unescaped pipes in GFM tables (header, delimiter and body rows) become spaces."""
    lines = text.splitlines(keepends=True)
    offsets = []
    offset = 0
    for line in lines:
        offsets.append(offset)
        offset += len(line)
    index = 1
    while index < len(lines):
        if "|" in lines[index] and _DELIMITER_ROW.fullmatch(lines[index].rstrip("\r\n")):
            header = lines[index - 1]
            if "|" in header and header.strip():
                row = index - 1
                while row < len(lines) and lines[row].strip():
                    for pipe in _UNESCAPED_PIPE.finditer(lines[row]):
                        chars[offsets[row] + pipe.start()] = " "
                    row += 1
                index = row
        index += 1


def _code_ranges(text: str, maybe_fence: bool) -> list[tuple[int, int]]:
    """Spans of fenced code blocks and code spans (CommonMark's pairing, approximately)."""
    ranges: list[tuple[int, int]] = []
    fences: list[tuple[int, int]] = []
    if maybe_fence:
        position = 0
        while True:
            opening = _FENCE.search(text, position)
            if opening is None:
                break
            fence = opening.group(1)
            if fence[0] == "`" and "`" in opening.group(2):
                position = opening.end()  # a backtick fence's info string has no backtick
                continue
            closing = re.compile(
                rf"^ {{0,3}}{re.escape(fence[0])}{{{len(fence)},}}[ \t]*\r?$", re.MULTILINE
            ).search(text, opening.end())
            end = closing.end() if closing is not None else len(text)
            ranges.append((opening.end(), end))
            fences.append((opening.start(), end))
            position = end
    if "`" in text:
        ranges.extend(_code_spans(text, fences))
    return ranges


def _inside(ranges: list[tuple[int, int]], starts: list[int], position: int) -> bool:
    index = bisect_right(starts, position) - 1
    return index >= 0 and position < ranges[index][1]


def _code_spans(text: str, fences: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """Code spans: a backtick run closed by the next run of the same length in the same
    paragraph (fenced blocks and blank lines end paragraphs)."""
    bounds = sorted(
        [edge for fence in fences for edge in fence]
        + [blank.start() for blank in _BLANK_LINE.finditer(text)]
    )
    fence_starts = [start for start, _ in fences]
    runs = [
        run for run in _BACKTICKS.finditer(text) if not _inside(fences, fence_starts, run.start())
    ]
    paragraph = [bisect_right(bounds, run.start()) for run in runs]
    spans: list[tuple[int, int]] = []
    # For each length, the runs of that length in order: pairing stays linear.
    by_length: dict[int, list[int]] = {}
    for number, run in enumerate(runs):
        by_length.setdefault(len(run.group()), []).append(number)
    cursor = dict.fromkeys(by_length, 0)
    number = 0
    while number < len(runs):
        run = runs[number]
        same = by_length[len(run.group())]
        position = cursor[len(run.group())]
        while position < len(same) and same[position] <= number:
            position += 1
        cursor[len(run.group())] = position
        if position == len(same):
            number += 1
            continue
        closer = same[position]
        if paragraph[closer] != paragraph[number]:
            number += 1
            continue
        spans.append((run.end(), runs[closer].start()))
        number = closer + 1
    return spans
