"""Our client-side tools' calls and results, read back from a transcript for reports.

Each ``web_search`` or ``web_fetch`` call is paired with its result (the next result
with its id, as the audit pairs them): what the model asked, what the tool showed
(hits, the page read, redirects followed) or why it refused. Everything comes from
the transcript alone, so a saved JSONL or a replayed cassette reads the same as the
live run. The search results the domain policy withheld are known by their count
only: the tool shows the model no more of them, and records nothing else.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from agentloop.transcript import Message, ToolCallPart, ToolResultPart

from agentloop_tools.web._transcript._fetch_format import DEFAULT_NAME as FETCH_NAME
from agentloop_tools.web._transcript._fetch_format import read_result, requested
from agentloop_tools.web._transcript._refusals import asked_was_refused
from agentloop_tools.web._transcript._search_format import MARKER as SEARCH_MARKER
from agentloop_tools.web._transcript._search_format import read_rendered
from agentloop_tools.web._transcript._tool_codes import FETCH_CODES
from agentloop_tools.web._transcript._tool_results import SEARCH_ARGUMENTS

type Tool = Literal["web_search", "web_fetch"]
type Status = Literal["ok", "refused", "failed", "no-result"]

_ERROR = re.compile(r"(?:Error: )?\[([a-z][a-z0-9]*(?:-[a-z0-9]+)*)\] ")
_WITHHELD = re.compile(r"(\d+) results? withheld by the domain policy")


@dataclass(frozen=True, slots=True)
class ToolCall:
    """One call of our web_search or web_fetch and what came of it.

    Attributes:
        tool: which of our tools.
        name: the name the model called it by.
        call_id: the call's id.
        message_index: the message that holds the call.
        result_index: the message that holds its result, or None.
        status: ``"ok"``; ``"refused"`` (web_fetch refused the URL asked for before
            requesting anything of it: nothing was read, as ``Violation.refused`` says);
            ``"failed"`` (any other error result, a refused redirect hop's too: the URL
            asked for answered); ``"no-result"``.
        code: the error's code (``blocked-by-policy``), for an error result.
        error: the error's text, for an error result.
        query: the search query; None for web_fetch.
        hits: ``(url, title)`` of each search result shown to the model.
        withheld: how many search results the domain policy withheld.
        url: the URL web_fetch was asked for.
        read: the final URL web_fetch read, if it read a page.
        title: the page's title.
        redirects: the redirect hops web_fetch followed.
        robots: the robots.txt files web_fetch requested.
        allowed_domains: the domains the model narrowed a search to (it asked for them).
    """

    tool: Tool
    name: str
    call_id: str
    message_index: int
    result_index: int | None
    status: Status
    code: str | None = None
    error: str | None = None
    query: str | None = None
    hits: tuple[tuple[str, str], ...] = ()
    withheld: int = 0
    url: str | None = None
    read: str | None = None
    title: str | None = None
    redirects: tuple[str, ...] = field(default=())
    robots: tuple[str, ...] = field(default=())
    allowed_domains: tuple[str, ...] = field(default=())

    def entry(self) -> dict[str, Any]:
        """The call, JSON-ready."""
        return {
            "tool": self.tool,
            "name": self.name,
            "call_id": self.call_id,
            "message_index": self.message_index,
            "result_index": self.result_index,
            "status": self.status,
            "code": self.code,
            "error": self.error,
            "query": self.query,
            "hits": [{"url": url, "title": title} for url, title in self.hits],
            "withheld": self.withheld,
            "url": self.url,
            "read": self.read,
            "title": self.title,
            "redirects": list(self.redirects),
            "robots": list(self.robots),
        }

    def outcome(self) -> str:
        """What came of the call, in words (one line)."""
        if self.status == "no-result":
            return "no result was recorded"
        if self.status == "refused":
            return f"{self.name} refused it ([{self.code}]): nothing was read"
        if self.status == "failed":
            return f"{self.name} failed ([{self.code}]): no result reached the model"
        if self.tool == "web_search":
            shown = f"{len(self.hits)} result(s) shown"
            if self.withheld:
                shown += f", {self.withheld} withheld by the domain policy"
            return shown
        if self.redirects:
            return f"redirected through {', '.join(self.redirects)} and read {self.read}"
        if self.read is not None and self.url is not None and self.read != self.url.strip():
            return f"redirected, and read {self.read}"
        return f"read {self.read}"


def tool_calls(messages: Sequence[Message]) -> list[ToolCall]:
    """Every call of our client-side tools, in transcript order, with its result."""
    results: dict[str, list[tuple[int, ToolResultPart]]] = {}
    for index, message in enumerate(messages):
        for part in message.content:
            if isinstance(part, ToolResultPart):
                results.setdefault(part.call_id, []).append((index, part))
    found: list[ToolCall] = []
    for index, message in enumerate(messages):
        for part in message.content:
            if not isinstance(part, ToolCallPart):
                continue
            waiting = [pair for pair in results.get(part.id, []) if pair[0] > index]
            result = waiting[0] if waiting else None
            if result is not None:
                results[part.id].remove(result)
            call = _read(part, index, result)
            if call is not None:
                found.append(call)
    return found


def _read(
    call: ToolCallPart, index: int, result: tuple[int, ToolResultPart] | None
) -> ToolCall | None:
    part = result[1] if result is not None else None
    content = part.content if part is not None and isinstance(part.content, str) else ""
    tool = _which(call, content)
    if tool is None:
        return None
    at = result[0] if result is not None else None
    code_match = _ERROR.match(content) if part is not None and part.is_error else None
    code = code_match.group(1) if code_match else None
    error = content.split("\n", 1)[0] if part is not None and part.is_error else None
    if part is None:
        status: Status = "no-result"
    elif not part.is_error:
        status = "ok"
    elif tool == "web_fetch" and asked_was_refused(
        call.arguments.get("url"), content, requested(content)
    ):
        status = "refused"
    else:
        status = "failed"
    if tool == "web_search":
        query = call.arguments.get("query")
        narrowed = call.arguments.get("allowed_domains")
        hits = tuple(read_rendered(content)) if status == "ok" else ()
        withheld = _WITHHELD.search(content.split("\n", 2)[1] if "\n" in content else "")
        return ToolCall(
            tool, call.tool_name, call.id, index, at, status, code, error,
            query=query if isinstance(query, str) else repr(query),
            hits=hits, withheld=int(withheld.group(1)) if withheld else 0,
            allowed_domains=tuple(
                domain.strip() for domain in narrowed if isinstance(domain, str)
            ) if isinstance(narrowed, list) else (),
        )  # fmt: skip
    asked = call.arguments.get("url")
    record = read_result(part) if part is not None else None
    return ToolCall(
        tool, call.tool_name, call.id, index, at, status, code, error,
        url=asked if isinstance(asked, str) else None,
        read=record.url if record is not None else None,
        title=record.title if record is not None else None,
        redirects=record.redirects if record is not None else (),
        robots=record.robots if record is not None else (),
    )  # fmt: skip


def _which(call: ToolCallPart, content: str) -> Tool | None:
    if call.tool_name == FETCH_NAME or content.startswith("[web_fetch] url: "):
        return "web_fetch"
    if call.tool_name == "web_search" or content.startswith(SEARCH_MARKER + "\n"):
        return "web_search"
    if frozenset(call.arguments) in SEARCH_ARGUMENTS:
        return "web_search"
    error = _ERROR.match(content)
    if error is not None and error.group(1) in FETCH_CODES and "url" in call.arguments:
        return "web_fetch"
    return None


def call_for(calls: Sequence[ToolCall], message_index: int, url: str) -> ToolCall | None:
    """The call in message ``message_index`` whose arguments named ``url`` (a tool-call
    violation's call), or None."""
    for call in calls:
        if call.message_index != message_index:
            continue
        if (
            call.tool == "web_fetch"
            and call.url is not None
            and url in (call.url, call.url.strip())
        ):
            return call
        if call.tool == "web_search" and (
            (call.query is not None and url in call.query) or url in call.allowed_domains
        ):
            return call
    return None
