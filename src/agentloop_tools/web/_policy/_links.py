"""The links in the answers, read as the audit reads them under an allowlist.

With client-side tools the model cites by writing markdown links. :func:`links`
lists them with their place in the message and whether a tool of the same
conversation showed that page (a hosted source, a ``web_search`` hit, a page
``web_fetch`` read). The reading is the audit's own (``DomainPolicy.audit`` under an
allowlist), so a link the audit would judge is a link here and nothing else is:
markdown and HTML destinations, autolinks, URLs with a scheme, ``www.`` autolinks;
not bare host names, not the hosts of shell commands, not relative links.
"""

from __future__ import annotations

import html
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from agentloop_tools.web._domains._identity import page_key
from agentloop_tools.web._domains._index import RuleIndex
from agentloop_tools.web._policy._text_audit import TextAudit

# agentloop and the transcript readers load when links are read, not with the face
# (``agentloop_tools.web``), which the plugin imports while collecting.
if TYPE_CHECKING:
    from agentloop import Transcript
    from agentloop.transcript import Message

# What comes right before a destination: a markdown "](" (optionally "<"), or an
# HTML href/src attribute.
_MARKDOWN_BEFORE = re.compile(r"\]\(\s*<?$")
_HTML_BEFORE = re.compile(r"""<a\b[^<>]*?\bhref\s*=\s*["']?""", re.IGNORECASE)
_TAG = re.compile(r"<[^<>]*>")
_URL_DELETES = str.maketrans("", "", "\t\n\r")
# How far back a markdown link text or an <a> tag is looked for: bounded, so a long
# answer is read in linear time.
_TEXT_WINDOW = 1024


@dataclass(frozen=True, slots=True)
class Link:
    """One link in an assistant answer.

    Attributes:
        url: where the link goes, as a reader follows it (character references
            decoded, tabs and newlines a URL parser deletes removed).
        message_index: index of the message in the transcript.
        start: where the link's URL starts in the message text (its text parts
            joined without separators, as ``Violation.span`` counts).
        end: where it ends (exclusive).
        text: the link text of a markdown or HTML link (``[text](url)``,
            ``<a href="url">text</a>``); None for a bare URL or an autolink.
        consulted: whether a hosted source, a ``web_search`` hit or a page ``web_fetch``
            read in the same conversation is this page (page identity as
            :func:`per_page` defines it: fragment, ``utm_*`` parameters, scheme,
            ``www.`` and the host's case do not matter).
    """

    url: str
    message_index: int
    start: int
    end: int
    text: str | None
    consulted: bool


# An allowlist that admits nothing and judges links only (not the hosts of commands):
# every link the allowlist audit would judge is then a finding, with its span.
_READER = TextAudit("allow", RuleIndex(()), commands=False)


def links(transcript: Transcript | Sequence[Message], *, since: int = 0) -> list[Link]:
    """Every link in the assistant answers from message ``since`` on, in order.

    Args:
        transcript: an agentloop ``Transcript``, a ``ConversationResult`` or a list of
            messages (one conversation).
        since: index of the first message to read; negative counts from the end. The
            pages that make a link consulted are read from the whole conversation.
    """
    from agentloop_tools.web._transcript._messages import messages_of, start_index

    messages = messages_of(transcript)
    start = start_index(since, len(messages))
    consulted = consulted_pages(messages)
    found: list[Link] = []
    for index in range(start, len(messages)):
        message = messages[index]
        if message.role != "assistant":
            continue
        for url, first, last, text in read_links(_texts(message), index):
            found.append(Link(url, index, first, last, text, page_key(url) in consulted))
    return found


def read_links(texts: list[str], index: int = 0) -> Iterator[tuple[str, int, int, str | None]]:
    """``(url, start, end, link text)`` of each link in the joined ``texts``."""
    joined = "".join(texts)
    for violation in _READER.parts(texts, index):
        if violation.span is None:
            continue
        first, last = violation.span
        yield _followed(joined[first:last]), first, last, link_text(joined, first, last)


def given_pages(messages: Sequence[Message]) -> set[str]:
    """The page keys of the links in every message that is not the model's (user prompts)."""
    keys: set[str] = set()
    for index, message in enumerate(messages):
        if message.role == "assistant":
            continue
        texts = _texts(message)
        if texts:
            keys.update(page_key(url) for url, *_ in read_links(texts, index))
    return keys


def consulted_pages(messages: Sequence[Message]) -> set[str]:
    """The page keys of every page a tool of this conversation showed or read.

    Hosted sources and cited pages, ``web_search`` hits and the pages ``web_fetch``
    read: the final URL, and the URL asked for and each redirect hop on the way to
    it (a reader following them lands on the page read).
    """
    from agentloop_tools.web._transcript._evidence import sources

    keys = {page_key(source.url) for source in sources(messages)}
    keys.update(page_key(url) for url in _fetched_on_the_way(messages))
    return keys


def _fetched_on_the_way(messages: Sequence[Message]) -> Iterator[str]:
    """The URLs asked for and redirected through of each web_fetch that read a page."""
    from agentloop.transcript import ToolCallPart, ToolResultPart

    from agentloop_tools.web._transcript._fetch_format import read_result

    waiting: dict[str, list[ToolCallPart]] = {}
    for message in messages:
        for part in message.content:
            if isinstance(part, ToolCallPart):
                waiting.setdefault(part.id, []).append(part)
            elif isinstance(part, ToolResultPart):
                calls = waiting.get(part.call_id)
                call = calls.pop(0) if calls else None
                if part.is_error:
                    continue
                record = read_result(part)
                if record is None or record.url is None:
                    continue
                yield from record.redirects
                asked = call.arguments.get("url") if call is not None else None
                if isinstance(asked, str) and asked.strip():
                    yield asked.strip()


def link_text(text: str, start: int, end: int) -> str | None:
    """The text of the markdown or HTML link whose destination is ``text[start:end]``."""
    window = max(start - _TEXT_WINDOW, 0)
    before = text[window:start]
    if _MARKDOWN_BEFORE.search(before):
        closing = before.rfind("](")
        return _markdown_text(before, closing)
    opened = before.lower().rfind("<a")
    if opened != -1 and _HTML_BEFORE.fullmatch(before, opened):
        tag_end = text.find(">", end, end + _TEXT_WINDOW)
        if tag_end == -1:
            return None
        after = text[tag_end + 1 : tag_end + 1 + _TEXT_WINDOW]
        close = after.lower().find("</a")
        if close == -1:
            return None
        inner = html.unescape(_TAG.sub("", after[:close]))
        return " ".join(inner.split())
    return None


def _markdown_text(before: str, closing: int) -> str | None:
    """The link text ending at ``before[closing]`` (its "]"): brackets balanced, escapes kept."""
    depth = 0
    position = closing - 1
    while position >= 0:
        char = before[position]
        escaped = position > 0 and before[position - 1] == "\\"
        if not escaped:
            if char == "]":
                depth += 1
            elif char == "[":
                if depth == 0:
                    return before[position + 1 : closing]
                depth -= 1
        position -= 1
    return None


def _followed(written: str) -> str:
    """The URL a reader follows for a link as written."""
    url = written.translate(_URL_DELETES)
    return html.unescape(url) if "&" in url else url


def _texts(message: Message) -> list[str]:
    from agentloop.transcript import TextPart

    return [part.text for part in message.content if isinstance(part, TextPart)]
