"""String literals as the programs that read them decode them: JSON, JS, Python, YAML, RTF.

An answer that shows code or data shows strings a program decodes before it opens
them. ``"https:\\/\\/evil\\u002ecom/x"`` is https://evil.com/x to every JSON parser,
``"https://evil\\x2ecom/"`` the same to JavaScript, Python and YAML, and RTF's
``evil\\'2ecom`` is evil.com to a word processor. Each reading here is a
:class:`~agentloop_tools.web._text._markup.Decoded` of the whole text: the scanner reads it
like any other rendering and reports findings with the span of the text as written.

Escapes are decoded only inside a string literal (a ``"..."``, ``'...'`` or
triple-quoted string; not a raw string such as ``r"..."``), as a tokenizer pairs the
quotes, and RTF control words only in an RTF document (from ``{\\rtf`` on): a
Windows path in prose (``C:\\x2e\\tools``) or a regular expression is left as written.
Every pass is linear: a literal that does not close on its line stops the search for
more of its kind on that line, as a tokenizer gives up on it.
"""

from __future__ import annotations

import re
import unicodedata
from bisect import bisect_left

from agentloop_tools.web._text._markup import Decoded


class Replacement:
    """A decoder's reading of the text, and the regions it reads (string literals, an RTF
    document, attribute references): there the decoded text replaces the text as written."""

    __slots__ = ("_reach", "_starts", "reading")

    def __init__(self, reading: Decoded, regions: list[tuple[int, int]]) -> None:
        self.reading = reading
        regions = sorted(regions)
        self._starts = [start for start, _ in regions]
        self._reach: list[int] = []
        furthest = -1
        for _, end in regions:
            furthest = max(furthest, end)
            self._reach.append(furthest)

    def laid_out(self, text: str) -> Replacement:
        """The same replacement, its decoded text replaced by ``text`` (of equal length)."""
        copy = Replacement(self.reading._replace(text=text), [])
        copy._starts, copy._reach = self._starts, self._reach
        return copy

    def holds(self, start: int, end: int) -> bool:
        """Whether ``text[start:end]`` overlaps a region this decoder reads (log time)."""
        before = bisect_left(self._starts, max(end, start + 1)) - 1
        return before >= 0 and self._reach[before] > start


# Where a literal may open: a quote, with the letters of a Python string prefix before it.
_QUOTE = re.compile(r"""(?P<prefix>(?<![\w\\])[rRbBuUfF]{1,2})?(?P<quote>"|')""")
# A literal's body up to its closing quote: possessive, so an unclosed one costs one pass.
_BODY = {
    '"': re.compile(r'(?:[^"\\\n]++|\\(?:\r\n|[\s\S]))*+'),
    "'": re.compile(r"(?:[^'\\\n]++|\\(?:\r\n|[\s\S]))*+"),
    '"""': re.compile(r'(?:[^"\\]++|\\[\s\S]|"(?!""))*+'),
    "'''": re.compile(r"(?:[^'\\]++|\\[\s\S]|'(?!''))*+"),
}
# The escapes JSON, JavaScript, Python and YAML double-quoted scalars decode (their
# union: a blocklist flags every spelling). An escaped line break joins the lines and,
# as in YAML, drops the next line's indentation.
_ESCAPE = re.compile(
    r"\\(?:(?P<newline>\r\n|[\n\r])[ \t]*"
    r"|x(?P<hex>[0-9A-Fa-f]{2})"
    r"|u\{(?P<brace>[0-9A-Fa-f]{1,6})\}"
    r"|u(?P<high>[dD][89abAB][0-9A-Fa-f]{2})\\u(?P<low>[dD][c-fC-F][0-9A-Fa-f]{2})"
    r"|u(?P<unit>[0-9A-Fa-f]{4})"
    r"|U(?P<wide>[0-9A-Fa-f]{8})"
    r"|N\{(?P<name>[A-Za-z0-9 \-]{1,88})\}"
    r"|(?P<octal>[0-3][0-7]{0,2}|[4-7][0-7]?)"
    # An escaped backslash before a dot is a regular expression's "\.": a pattern
    # matches the host it spells ("^https://example\\.com/" in a JavaScript string).
    r"|\\(?P<pattern>[./:-])"
    r"|(?P<simple>[\\\"'/bfnrtvae _NLP.:-]))"
)
# In a raw string, the escapes of a regular expression: "https://example\.com/" matches
# a URL of example.com, whatever a browser makes of the text as written.
_RAW_ESCAPE = re.compile(r"\\(?P<simple>[\\./:-])")
_TAG_WINDOW = 2048
_SIMPLE = {
    "\\": "\\", '"': '"', "'": "'", "/": "/", "b": "\b", "f": "\f", "n": "\n", "r": "\r",
    "t": "\t", "v": "\v", "a": "\a", "e": "\x1b", " ": " ", "_": "\xa0", "N": "\x85",
    "L": "\u2028", "P": "\u2029", ".": ".", ":": ":", "-": "-",
}  # fmt: skip
# A URL parser deletes tabs and newlines anywhere in a URL: the second reading.
_DELETED_BY_URL_PARSERS = frozenset("nrt")

# RTF: a hex escape (a byte of the document's code page, Windows-1252 unless it says
# otherwise), a Unicode escape with its fallback, a control word, a control symbol, a brace.
_RTF_START = re.compile(r"\{\\rtf", re.IGNORECASE)
_RTF_HEX = re.compile(r"\\'([0-9A-Fa-f]{2})")
_RTF_TOKEN = re.compile(
    r"\\'(?P<hex>[0-9A-Fa-f]{2})"
    r"|\\u(?P<unicode>-?[0-9]{1,5}) ?(?:\\'[0-9A-Fa-f]{2}|[^\\{}])?"
    r"|\\(?P<word>[A-Za-z]{1,32})-?[0-9]{0,10} ?"
    r"|\\(?P<symbol>[\\{}~_-])"
    r"|\\\*"
    r"|[{}]"
)
_RTF_BRACE = re.compile(r"\\[\\{}]|[{}]")
_RTF_BREAKS = frozenset({"par", "line", "tab", "sect", "page", "cell", "row", "pard"})
_RTF_SYMBOLS = {"\\": "\\", "{": "{", "}": "}", "~": "\xa0", "_": "-", "-": ""}


def literal_readings(text: str) -> list[Replacement]:
    """The text with every string literal's escapes decoded, or nothing to read.

    Two readings when a literal holds ``\\n``, ``\\r`` or ``\\t``: with the whitespace
    the decoder produces (a line break ends a host in prose), and with it deleted, as a
    URL parser deletes it when the string is opened (``"https://ev\\til.com"``).
    """
    if "\\" not in text:
        return []
    document = _RTF_START.search(text)  # RTF has no string literals: its quotes are text
    skip = (document.start(), _group_end(text, document.start())) if document else (-1, -1)
    regions: list[tuple[int, int]] = []
    pieces = _literal_escapes(text, skip, regions)
    if not pieces:
        return []
    readings = [Replacement(_assemble(text, pieces, url=False), regions)]
    if any(match.group("simple") in _DELETED_BY_URL_PARSERS for match in pieces):
        readings.append(Replacement(_assemble(text, pieces, url=True), regions))
    return readings


def rtf_reading(text: str) -> Replacement | None:
    """The text as RTF reads it: in an RTF document, its text with control words removed
    and escapes decoded; elsewhere, ``\\'hh`` hex escapes (no other syntax writes them)."""
    if "\\" not in text:
        return None
    document = _RTF_START.search(text)
    end = document.start() if document is not None else len(text)
    segments: list[tuple[int, int, str]] = [
        (match.start(), match.end(), _byte(match.group(1)))
        for match in _RTF_HEX.finditer(text, 0, end)
    ]
    if document is not None:
        for match in _RTF_TOKEN.finditer(text, end, _group_end(text, end)):
            segments.append((match.start(), match.end(), _rtf_value(match)))
    if not segments:
        return None
    regions = [(start, end) for start, end, _ in segments]
    if document is not None:
        regions.append((document.start(), _group_end(text, document.start())))
    return Replacement(build(text, segments), regions)


def _literal_escapes(
    text: str, skip: tuple[int, int], regions: list[tuple[int, int]]
) -> list[re.Match[str]]:
    """The escapes inside the string literals outside ``text[skip[0]:skip[1]]`` (an RTF
    document), in text order; the bodies of the literals holding them go to ``regions``."""
    escapes: list[re.Match[str]] = []
    position = 0
    blocked: dict[str, int] = {}  # quote -> the end of the line where one did not close
    unclosable: set[str] = set()  # triple quotes that found no closing triple
    while True:
        opening = _QUOTE.search(text, position)
        if opening is None:
            return escapes
        if skip[0] <= opening.start() < skip[1]:
            position = skip[1]
            continue
        quote_at = opening.start("quote")
        char = text[quote_at]
        triple = text.startswith(char * 3, quote_at) and char * 3 not in unclosable
        quote = char * 3 if triple else char
        if not triple and blocked.get(char, -1) > quote_at:
            position = quote_at + 1
            continue
        prefix = opening.group("prefix") or ""
        if not prefix and char == "'" and quote_at and _word_before(text, quote_at):
            position = quote_at + 1  # an apostrophe: "it's", "don't"
            continue
        body_start = quote_at + len(quote)
        body = _BODY[quote].match(text, body_start)
        body_end = body.end() if body is not None else body_start  # a starred body always matches
        if not text.startswith(quote, body_end):
            if triple:
                unclosable.add(quote)
            else:
                blocked[char] = body_end  # the line's end: no later one on it closes
            position = body_start
            continue
        if "\\" in text[body_start:body_end] and not _in_tag(text, quote_at):
            pattern = _RAW_ESCAPE if "r" in prefix.lower() else _ESCAPE
            found = [
                match
                for match in pattern.finditer(text, body_start, body_end)
                if _escape_value(match, url=False) is not None
            ]
            if found:
                escapes.extend(found)
                regions.append((body_start, body_end))
        position = body_end + len(quote)


def _in_tag(text: str, position: int) -> bool:
    """Whether ``position`` is inside an HTML tag: an attribute value, where a backslash
    is a backslash (a browser reads it as a slash in a URL)."""
    opened = text.rfind("<", max(position - _TAG_WINDOW, 0), position)
    return (
        opened != -1
        and text[opened + 1 : opened + 2].isalpha()
        and ">" not in text[opened:position]
    )


def _word_before(text: str, position: int) -> bool:
    before = text[position - 1]
    return before.isalnum() or before == "_"


def _escape_value(match: re.Match[str], *, url: bool) -> str | None:
    """What the escape decodes to, or None if no decoder reads it (a lone surrogate)."""
    simple = match.group("simple")
    if simple is not None:
        return "" if url and simple in _DELETED_BY_URL_PARSERS else _SIMPLE[simple]
    pattern = match.group("pattern")
    if pattern is not None:
        return pattern
    if match.group("newline") is not None:
        return ""
    if match.group("high") is not None:
        high, low = int(match.group("high"), 16), int(match.group("low"), 16)
        return chr(0x10000 + ((high - 0xD800) << 10) + (low - 0xDC00))
    name = match.group("name")
    if name is not None:
        try:
            return unicodedata.lookup(name)
        except KeyError:
            return None
    octal = match.group("octal")
    if octal is not None:
        return chr(int(octal, 8))
    number = int(match.group("hex") or match.group("brace") or match.group("unit")
                 or match.group("wide"), 16)  # fmt: skip
    if number > 0x10FFFF or 0xD800 <= number <= 0xDFFF:
        return None
    return chr(number)


def _assemble(text: str, escapes: list[re.Match[str]], *, url: bool) -> Decoded:
    segments = []
    for match in escapes:
        value = _escape_value(match, url=url)
        assert value is not None  # filtered when found
        segments.append((match.start(), match.end(), value))
    return build(text, segments)


def build(text: str, replaced: list[tuple[int, int, str]]) -> Decoded:
    """A :class:`Decoded` of ``text`` with each ``(start, end, value)`` replaced."""
    pieces: list[str] = []
    starts: list[int] = []
    segments: list[tuple[int, int, bool]] = []
    position = 0
    length = 0
    for start, end, value in replaced:
        if start > position:
            starts.append(length)
            segments.append((position, start, True))
            pieces.append(text[position:start])
            length += start - position
        starts.append(length)
        segments.append((start, end, False))
        pieces.append(value)
        length += len(value)
        position = end
    if position < len(text):
        starts.append(length)
        segments.append((position, len(text), True))
        pieces.append(text[position:])
    origins = [origin_start for origin_start, _, _ in segments]
    return Decoded("".join(pieces), starts, origins, segments)


def _group_end(text: str, start: int) -> int:
    """Where the RTF group opened at ``start`` closes (after its "}"), or the text's end."""
    depth = 0
    for brace in _RTF_BRACE.finditer(text, start):
        if brace.group() == "{":
            depth += 1
        elif brace.group() == "}":
            depth -= 1
            if depth == 0:
                return brace.end()
    return len(text)


def _byte(digits: str) -> str:
    return bytes([int(digits, 16)]).decode("cp1252", errors="replace")


def _rtf_value(match: re.Match[str]) -> str:
    if match.group("hex") is not None:
        return _byte(match.group("hex"))
    unicode = match.group("unicode")
    if unicode is not None:
        number = int(unicode) % 0x10000  # a signed 16-bit number
        return "" if 0xD800 <= number <= 0xDFFF else chr(number)
    word = match.group("word")
    if word is not None:
        return "\n" if word in _RTF_BREAKS else ""
    symbol = match.group("symbol")
    return _RTF_SYMBOLS[symbol] if symbol is not None else ""
