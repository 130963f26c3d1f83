"""What web_fetch writes into a transcript, and how to read it back from the transcript alone.

A tool result is plain text (agentloop has no metadata field), so the page's
final URL and each redirect hop followed go into a fixed header whatever name
the tool was given::

    [web_fetch] url: https://example.com/final
    [web_fetch] redirect: https://example.com/moved
    [web_fetch] robots: https://example.com/robots.txt
    [web_fetch] title: The page title
    [web_fetch] characters: 0-100000 of 250000

    The page text...

Every URL the tool requested is in it: the redirect hops, and with
``respect_robots=True`` each robots.txt and its own redirect hops (``robots:``).
An error result (a refusal, or a crash caught as ``[fetch-error]``) carries the
same lines after its message, so a failure hides no request either.

The header ends at the first blank line, so nothing in a page's text can pass
for a header line. Saved JSONL or a replayed cassette therefore gives the audit
and the evidence readers the same answer as the live run.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Literal

from agentloop import Source
from agentloop.transcript import Message, ToolCallPart, ToolResultPart

from agentloop_tools.web._transcript._refusals import asked_was_refused, hop_was_refused
from agentloop_tools.web._transcript._tool_codes import FETCH_CODES as CODES

MARKER = "[web_fetch] "
DEFAULT_NAME = "web_fetch"
_ERROR = re.compile(r"Error: \[([a-z-]+)\] ")

type Reach = Literal["tool-call", "tool-result", "redirect", "robots"]


@dataclass(frozen=True, slots=True)
class FetchRecord:
    """The header of one web_fetch result.

    Attributes:
        url: the final URL read (after redirects); None for an error result.
        redirects: the hops followed before it, in order (the requested URL excluded).
        title: the document title, if it had one.
        is_error: whether the result was a soft error.
        robots: each robots.txt requested, and its redirect hops, in order.
    """

    url: str | None
    redirects: tuple[str, ...]
    title: str | None
    is_error: bool
    robots: tuple[str, ...] = ()


def header(
    url: str,
    redirects: Sequence[str],
    title: str | None,
    notes: Sequence[str],
    robots: Sequence[str] = (),
) -> str:
    """The header lines of a page result (no trailing blank line)."""
    lines = [f"{MARKER}url: {url}"]
    lines.extend(f"{MARKER}redirect: {hop}" for hop in redirects)
    lines.extend(f"{MARKER}robots: {hop}" for hop in robots)
    if title:
        lines.append(f"{MARKER}title: {' '.join(title.split())}")
    lines.extend(f"{MARKER}{' '.join(note.split())}" for note in notes)
    return "\n".join(lines)


def redirect_trailer(redirects: Sequence[str]) -> str:
    """Lines added to an error raised after redirects were followed: those hops were reached."""
    return "".join(f"\n{MARKER}redirect: {hop}" for hop in redirects)


def requested_trailer(requested: Sequence[tuple[Literal["redirect", "robots"], str]]) -> str:
    """Lines added to an error: every URL requested after the one asked for, in order."""
    return "".join(f"\n{MARKER}{kind}: {url}" for kind, url in requested)


def read_result(part: ToolResultPart) -> FetchRecord | None:
    """The record of a web_fetch result, or None when ``part`` is not one."""
    content = part.content
    if content.startswith(MARKER + "url: "):
        head = content.split("\n\n", 1)[0]
        url: str | None = None
        redirects: list[str] = []
        robots: list[str] = []
        title: str | None = None
        for line in head.split("\n"):
            if not line.startswith(MARKER):
                break
            key, _, value = line[len(MARKER) :].partition(": ")
            if key == "url" and url is None:
                url = value.strip()
            elif key == "redirect":
                redirects.append(value.strip())
            elif key == "robots":
                robots.append(value.strip())
            elif key == "title" and title is None:
                title = value.strip() or None
        return FetchRecord(
            url or None, tuple(redirects), title, is_error=False, robots=tuple(robots)
        )
    match = _ERROR.match(content)
    if match is None or match.group(1) not in CODES:
        return None
    # An error's first line is the message; later marker lines are URLs requested.
    lines = content.split("\n")[1:]
    return FetchRecord(
        None,
        tuple(_values(lines, "redirect")),
        None,
        is_error=True,
        robots=tuple(_values(lines, "robots")),
    )


def requested(content: str) -> list[tuple[str, str]]:
    """The ``redirect:``/``robots:`` lines after an error's first line: ``(kind, url)`` of
    each URL requested after the one asked for, in the order they were sent."""
    found = []
    for line in content.split("\n")[1:]:
        if line.startswith(MARKER):
            kind, colon, url = line[len(MARKER) :].partition(": ")
            if colon and kind in ("redirect", "robots"):
                found.append((kind, url.strip()))
    return found


def _values(lines: Sequence[str], key: str) -> Iterator[str]:
    prefix = f"{MARKER}{key}: "
    for line in lines:
        if line.startswith(prefix):
            yield line[len(prefix) :].strip()


def reached(messages: Sequence[Message]) -> dict[int, list[tuple[Reach, str, bool]]]:
    """Per message index, the URLs web_fetch was asked for, redirected through and read.

    Each with whether the tool refused it before anything of it was sent
    (``_refusals``: an attempt the policy held). A call counts as web_fetch's when the
    tool is named ``web_fetch`` or its own result (the next result with its id)
    carries web_fetch's header or one of its error codes (a custom ``name=``). Pairing
    by position, not by id alone, keeps transcripts that reuse an id (merged
    conversations) apart.
    """
    ours: set[tuple[int, int]] = set()  # (message index, part index) of web_fetch calls
    records: dict[tuple[int, int], tuple[FetchRecord, str]] = {}
    answers: dict[tuple[int, int], str] = {}  # a call's error result, as text
    waiting: dict[str, list[tuple[int, int]]] = {}
    for index, message in enumerate(messages):
        for position, part in enumerate(message.content):
            if isinstance(part, ToolCallPart):
                waiting.setdefault(part.id, []).append((index, position))
                if part.tool_name == DEFAULT_NAME:
                    ours.add((index, position))
            elif isinstance(part, ToolResultPart):
                record = read_result(part)
                calls = waiting.get(part.call_id)
                call = calls.pop(0) if calls else None
                text = part.content if isinstance(part.content, str) else ""
                if call is not None and part.is_error:
                    answers[call] = text
                if record is not None:
                    records[(index, position)] = (record, text)
                    if call is not None:
                        ours.add(call)
    found: dict[int, list[tuple[Reach, str, bool]]] = {}
    for index, message in enumerate(messages):
        for position, part in enumerate(message.content):
            if isinstance(part, ToolCallPart) and (index, position) in ours:
                url = part.arguments.get("url")
                if isinstance(url, str) and url.strip():
                    text = answers.get((index, position), "")
                    held = asked_was_refused(url, text, requested(text))
                    found.setdefault(index, []).append(("tool-call", url, held))
            elif (entry := records.get((index, position))) is not None:
                record, text = entry
                entries = found.setdefault(index, [])
                sent = requested(text) if record.is_error else []
                kinds: tuple[tuple[Reach, tuple[str, ...]], ...] = (
                    ("robots", record.robots),
                    ("redirect", record.redirects),
                )
                for kind, hops in kinds:
                    entries.extend(
                        (kind, hop, bool(sent) and hop_was_refused(hop, text, sent)) for hop in hops
                    )
                if record.url is not None:
                    entries.append(("tool-result", record.url, False))
    return found


def pages_read(message: Message) -> Iterator[Source]:
    """The pages web_fetch read in one message (the final URL of each successful result)."""
    for part in message.content:
        if isinstance(part, ToolResultPart) and not part.is_error:
            record = read_result(part)
            if record is not None and record.url is not None:
                yield Source(url=record.url, title=record.title)
