"""Links that HTML attributes, reStructuredText and AsciiDoc make of text that reads otherwise.

* A browser drops tabs and newlines from an ``href`` or ``src`` value:
  :func:`split_attributes` gives each such value joined, as a finding that replaces
  what the token scan read of it.

* docutils removes whitespace from an external target's URI: the embedded
  `` `guide <https://evil. com/setup>`_ `` and a ``.. _guide:`` target continued on the
  next, indented, line both link to https://evil.com/setup. :func:`rst_targets` gives
  each such URI with its whitespace removed, as a finding that replaces what the token
  scan read of it (as a browser's reading of an ``href`` with a newline does).
* AsciiDoc replaces an attribute reference (``{host}``) with the value an
  ``:host: evil.com`` line defines: :func:`asciidoc_reading` is the text with the
  references to attributes defined in the same text replaced.
"""

from __future__ import annotations

import re

from agentloop_tools.web._text._finder import Found
from agentloop_tools.web._text._literals import Replacement, build

# A link in an HTML attribute, which may span lines.
_HREF = re.compile(r"""\b(?:href|src)\s*=\s*(["'])(.*?)\1""", re.IGNORECASE | re.DOTALL)
# `text <uri>`_ (or __ for an anonymous reference); the text may span lines.
_EMBEDDED = re.compile(r"`(?:[^`\\<]|\\[\s\S]){0,2048}<(?P<uri>[^<>`]{1,4096})>`__?")
# .. _name: uri, .. __: uri and __ uri, the URI continued on indented lines.
_TARGET = re.compile(
    r"^[ \t]*(?:\.\.[ \t]+_(?:[^:\n\\]|\\.){0,256}:|__)"
    r"(?P<uri>[ \t]*[^\n]*+(?:\n[ \t]+\S[^\n]*+)*+)",
    re.MULTILINE,
)
_WHITESPACE = re.compile(r"\s+")
# Only a URI with a scheme (or "//", "www.") reaches a host: relative targets and
# "name_" references to other targets do not.
_ABSOLUTE = re.compile(r"(?:[A-Za-z][A-Za-z0-9+.-]{0,31}:|[/\\]{2}|www\.)", re.IGNORECASE)

_DEFINITION = re.compile(
    r"^:(?P<name>[A-Za-z0-9_][A-Za-z0-9_-]{0,63}):[ \t]+(?P<value>[^\n]*?)[ \t]*$",
    re.MULTILINE,
)
_REFERENCE = re.compile(r"\{(?P<name>[A-Za-z0-9_][A-Za-z0-9_-]{0,63})\}")
_MAX_VALUE = 4096


def rst_targets(text: str) -> list[Found]:
    """External targets whose URI docutils reads without the whitespace written in it."""
    # Cheap tests first: a search for one character costs a twentieth of one for two.
    embedded = "`" in text and "<" in text and "`_" in text
    # A named or anonymous target starts ".. _" (the short "__ uri" form only counts
    # where one does: a search of the whole text costs more than the rest of this).
    targets = "_" in text and ".. _" in text
    if not (embedded or targets):
        return []
    found: list[Found] = []
    candidates: list[re.Match[str]] = []
    if embedded:
        candidates.extend(_EMBEDDED.finditer(text))
    if targets:
        candidates.extend(_TARGET.finditer(text))
    for match in candidates:
        written = match.group("uri")
        stripped = written.strip()
        if not _WHITESPACE.search(stripped):
            continue  # one token: the scan reads it as it is
        joined = _WHITESPACE.sub("", stripped)
        if not _ABSOLUTE.match(joined) or joined.endswith("_"):
            continue
        start = match.start("uri") + (len(written) - len(written.lstrip()))
        end = start + len(stripped)
        found.append(Found(start, end, text[start:end], "url", (joined,)))
    found.sort(key=lambda item: item.start)
    return found


def asciidoc_reading(text: str) -> Replacement | None:
    """The text with references to the AsciiDoc attributes it defines replaced, or None."""
    if "{" not in text or ":" not in text:
        return None
    values: dict[str, str] = {}
    for definition in _DEFINITION.finditer(text):
        # A value may use the attributes defined before it.
        value = _REFERENCE.sub(
            lambda reference: values.get(reference.group("name").lower(), reference.group()),
            definition.group("value"),
        )
        values[definition.group("name").lower()] = value[:_MAX_VALUE]
    if not values:
        return None
    replaced = [
        (reference.start(), reference.end(), values[reference.group("name").lower()])
        for reference in _REFERENCE.finditer(text)
        if reference.group("name").lower() in values
    ]
    if not replaced:
        return None
    return Replacement(build(text, replaced), [(start, end) for start, end, _ in replaced])


def split_attributes(text: str) -> list[Found]:
    """Links in HTML attributes that hold tabs or newlines, which browsers drop from URLs."""
    if not ("href" in text or "src" in text or "HREF" in text or "SRC" in text) or not (
        "\t" in text or "\n" in text or "\r" in text
    ):
        return []
    extra: list[Found] = []
    for match in _HREF.finditer(text):
        value = match.group(2)
        if not any(char in value for char in "\t\n\r"):
            continue
        joined = value.replace("\t", "").replace("\n", "").replace("\r", "").strip()
        extra.append(Found(match.start(2), match.end(2), value, "url", (joined,)))
    return extra
