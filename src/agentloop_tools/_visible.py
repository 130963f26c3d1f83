"""Recorded text shown to a person: control characters as visible escapes, never obeyed.

A URL, a file name or an answer in a cassette is written by whoever recorded it.
Printed raw, ``https://x/\\x1b]0;pwned\\x07\\x1b[2J`` sets the terminal's title and
clears the screen, and a bidirectional override reorders what a reviewer reads.
Every human-readable output (the command line's table, evidence, scan and
``github`` formats, the HTML report, the violation report pytest shows) goes
through :func:`visible`; JSON output stays exact, since ``json`` escapes these
itself. :func:`xml_text` also removes what XML 1.0 cannot carry at all.
"""

from __future__ import annotations

import re

# C0 (but tab and newline, which are layout where text is laid out), DEL, C1, and
# the bidirectional embeddings, overrides and isolates (Trojan Source).
_LAYOUT_KEPT = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")
_ALL = re.compile(r"[\x00-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")
# Characters XML 1.0 forbids even escaped (section 2.2): what is left after visible().
_NOT_XML = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


def visible(text: str, *, layout: bool = False) -> str:
    """``text`` with each control character written as its escape (``\\x1b``, ``\\u202e``).

    Args:
        layout: keep tab and newline (text that is laid out in lines); otherwise
            they are escaped too, so a one-line field (a URL, a path) stays one line.
    """
    pattern = _LAYOUT_KEPT if layout else _ALL
    if pattern.search(text) is None:  # the common case, at C speed
        return text
    return pattern.sub(_escape, text)


def xml_text(text: str, *, layout: bool = False) -> str:
    """:func:`visible` text with what XML 1.0 cannot hold (lone surrogates, U+FFFE,
    U+FFFF) escaped as well, so a document built from it is always well-formed."""
    return _NOT_XML.sub(_escape, visible(text, layout=layout))


def _escape(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code <= 0xFF else f"\\u{code:04x}"
