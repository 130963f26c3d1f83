"""What the model reads from a client-side search: one renderer for every backend.

The text is stable and documented (docs/client-search.md), and it starts with a
fixed marker line, so the pages it showed can be read back from a transcript alone
(a saved JSONL, a replayed cassette) whatever name the tool was given::

    Web search results (agentloop-tools)
    2 results; 1 result withheld by the domain policy.

    Links:
    1. [What's New In Python 3.13](https://docs.python.org/3/whatsnew/3.13.html)
       The new interactive interpreter ... (published 2024-10-07)
    2. ...

    Cite the URLs of the results you use, as markdown links.
"""

from __future__ import annotations

import html
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import date
from typing import TYPE_CHECKING

from agentloop_tools.web._domains._url import MAX_URL_LENGTH
from agentloop_tools.web._policy._policy import audit_text
from agentloop_tools.web._text._destinations import link_destinations, shown_link
from agentloop_tools.web._transcript._search_format import MARKER

if TYPE_CHECKING:
    from agentloop_tools.web._policy._policy import DomainPolicy

WITHHELD_LINK = "[link withheld by the domain policy]"
MAX_TITLE_CHARS = 200
MAX_SNIPPET_CHARS = 500

_TAG = re.compile(r"<!--.*?-->|</?[A-Za-z][^<>]*>", re.DOTALL)
# Control and format characters that could hide text or reorder it in a terminal;
# whitespace itself is collapsed by str.split(), which is many times faster than a regex.
_INVISIBLE = re.compile(
    r"[\x00-\x08\x0e-\x1f\x7f-\x9f\u200b-\u200f\u202a-\u202e\u2066-\u2069\ufeff]"
)
_MARKDOWN_TITLE = re.compile(r"([\\\[\]])")
_URL_FORBIDDEN = re.compile(r"[\s\x00-\x1f\x7f]")
_C0_AND_SPACE = "".join(chr(c) for c in range(0x21))


@dataclass(frozen=True, slots=True)
class SearchHit:
    """One search result, as a backend returned it.

    Attributes:
        title: the page title (may hold tags and entities; the renderer cleans it).
        url: the page's URL; only ``http`` and ``https`` URLs are ever shown.
        snippet: the provider's extract of the page.
        published: when the page was published, as the provider wrote it, or None.
    """

    title: str
    url: str
    snippet: str
    published: str | None = None


def clean_text(value: object, limit: int, scrub: Callable[[str], str] | None = None) -> str:
    """Tags stripped, entities unescaped, whitespace collapsed, cut at ``limit`` characters.

    ``scrub`` (the backend's secrets masked) runs on the cleaned text before the cut:
    a key the cut split in two would no longer be found whole. Anything that is not
    a string (a provider's payload changed shape) reads as "".
    """
    if not isinstance(value, str) or not value:
        return ""
    text = _TAG.sub("", value) if "<" in value else value
    if "&" in text:
        # Twice: providers double-escape ("&amp;quot;"); a third level is left as written.
        text = html.unescape(text)
        if "&" in text:
            text = html.unescape(text)
        if "<" in text:
            text = _TAG.sub("", text)
    if not text.isprintable():  # a C-speed check; the regex runs only when needed
        text = _INVISIBLE.sub(" ", text)
    text = " ".join(text.split())
    if scrub is not None:
        text = scrub(text)
    if len(text) > limit:
        text = text[: limit - 1].rstrip() + "…"
    return text


def shown_url(url: object) -> str | None:
    """The URL as it will be shown (and checked), or None when it cannot be shown as a link.

    What would end a markdown link destination early or change it (``(``, ``)``,
    ``<``, ``>``, ``\\``, an ``&`` that starts an entity) is percent-encoded, so the
    rendered ``[title](URL)`` links to exactly this string; a host no DNS name can
    have (``evil.com)`` to a browser) is no link at all. The encoding can move the
    host: the filter shows it only on the host the given URL names.
    """
    if not isinstance(url, str):
        return None
    # Only what a browser strips itself (C0 controls and space): the URL shown must
    # be read as the one given.
    url = url.strip(_C0_AND_SPACE)
    if _URL_FORBIDDEN.search(url) or not url.lower().startswith(("http://", "https://")):
        return None
    if len(url) <= len("https://") or len(url) > MAX_URL_LENGTH:
        return None
    return shown_link(url)


def render_results(
    hits: Sequence[SearchHit],
    *,
    withheld: int = 0,
    unusable: int = 0,
    policy: DomainPolicy | None = None,
    scrub: Callable[[str], str] | None = None,
    narrowed_out: int = 0,
    after: int = 0,
    undated: int = 0,
    as_of: date | None = None,
    narrowed: str = "",
    hint: str = "",
) -> str:
    """The text the model reads. ``hits`` must already be filtered by the policy.

    Titles and snippets are cleaned (``scrub`` masking secrets before any cut), and
    any link in them the policy refuses is replaced with a notice, so the text never
    shows the model a refused URL.
    """
    summary = _summary(len(hits), withheld, unusable)
    dropped = []
    if narrowed_out:
        dropped.append(f"{_count(narrowed_out, 'result')} outside the call's domain list withheld")
    if after and as_of is not None:
        dropped.append(f"{_count(after, 'result')} published after {as_of.isoformat()} dropped")
    if undated:
        dropped.append(f"{_count(undated, 'result')} without a publish date dropped")
    if dropped:
        summary = summary[:-1] + "; " + "; ".join(dropped) + "."
    lines = [MARKER, summary]
    if narrowed:
        lines.append(narrowed + ".")
    if not hits:
        lines.append(
            hint
            or "Try a different query"
            + (" aimed at sites the domain policy permits." if withheld else ".")
        )
        return "\n".join(lines)
    # Three cleaned fields per hit, redacted together: one scan of the text, not sixty.
    fields: list[str] = []
    for hit in hits:
        fields += [
            clean_text(hit.title, MAX_TITLE_CHARS, scrub),
            clean_text(hit.snippet, MAX_SNIPPET_CHARS, scrub),
            clean_text(hit.published, 40, scrub),
        ]
    fields = _redact(fields, policy)
    lines += ["", "Links:"]
    for number, hit in enumerate(hits, 1):
        title, snippet, published = fields[3 * number - 3 : 3 * number]
        title = _MARKDOWN_TITLE.sub(r"\\\1", title or hit.url)
        lines.append(f"{number}. [{title}]({hit.url})")
        if published:
            snippet = f"{snippet} (published {published})" if snippet else f"Published {published}."
        if snippet:
            lines.append(f"   {snippet}")
    lines += ["", "Cite the URLs of the results you use, as markdown links."]
    return "\n".join(lines)


def _summary(shown: int, withheld: int, unusable: int) -> str:
    parts = [_count(shown, "result")]
    if withheld:
        parts.append(f"{_count(withheld, 'result')} withheld by the domain policy")
    if unusable:
        parts.append(f"{_count(unusable, 'result')} without a usable http(s) URL skipped")
    return "; ".join(parts) + "."


def _count(number: int, noun: str) -> str:
    return f"{number} {noun}" if number == 1 else f"{number} {noun}s"


def _redact(fields: list[str], policy: DomainPolicy | None) -> list[str]:
    """``fields`` with every link (and, for a blocklist, mention) the policy refuses replaced.

    The fields are scanned as one text joined by blank lines (a token never crosses
    whitespace); a reading that spans two fields redacts its part of each.
    """
    if policy is None:
        return fields
    joined = "\n\n".join(fields)
    spans = [
        violation.span for violation in audit_text(policy, joined) if violation.span is not None
    ]
    # Link destinations as CommonMark reads them: a link glued to the one before it
    # ("[a](https://ok/)[b](//evil.com/)") is a link of its own.
    spans += [
        (start, end)
        for start, end, target in link_destinations(joined)
        if target is not None and not policy.permits(target)
    ]
    spans.sort()
    if not spans:
        return fields
    redacted: list[str] = []
    offset = 0
    for text in fields:
        end = offset + len(text)
        local = [
            (max(start, offset) - offset, min(stop, end) - offset)
            for start, stop in spans
            if start < end and stop > offset
        ]
        redacted.append(_replace(text, local))
        offset = end + 2
    return redacted


def _replace(text: str, spans: list[tuple[int, int]]) -> str:
    if not spans:
        return text
    pieces: list[str] = []
    end = 0
    for start, stop in spans:
        if start < end:  # overlapping readings of one token
            if stop > end:
                end = stop
            continue
        pieces += [text[end:start], WITHHELD_LINK]
        end = stop
    pieces.append(text[end:])
    return "".join(pieces)
