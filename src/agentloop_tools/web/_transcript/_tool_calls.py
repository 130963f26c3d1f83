"""Tool calls read back from a transcript: the type, and our client-side tools' calls.

``ToolCall`` is one call of any tool: a provider-hosted search or fetch, our client-side
``web_search`` / ``web_fetch``, or another client tool (``_trajectory`` reads them all,
in order). For our two tools it also holds what the tool showed, for the reports and
the violation messages: each call is paired with its result (the next result with its
id, as the audit pairs them), the hits, the page read, the redirects followed, or why
it refused. Everything comes from the transcript alone, so a saved JSONL or a replayed
cassette reads the same as the live run. The search results the domain policy withheld
are known by their count only: the tool shows the model no more of them.
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
type Outcome = Literal["ok", "refused", "failed", "no-result"]

_ERROR = re.compile(r"(?:Error: )?\[([a-z][a-z0-9]*(?:-[a-z0-9]+)*)\] ")
_WITHHELD = re.compile(r"(\d+) results? withheld by the domain policy")
_SHOWN = 60  # characters of one argument's value in a call's one-line form


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolCall:
    """One tool call of a conversation and what came of it.

    Attributes:
        name: the tool's name as the model called it (a hosted search and our
            client-side search are both ``web_search``: ``hosted`` tells them apart).
        arguments: what the model passed (a copy). A hosted call's are the provider's
            own: Anthropic's ``input`` (``query``, ``url``); an OpenAI ``web_search_call``'s
            action, as ``action`` (``search``, ``open_page``, ``find_in_page``) with its
            ``query``, ``queries``, ``url`` or ``pattern``. Empty when the transcript holds
            only the result (the call was made in a request it does not show).
        hosted: whether the provider ran the tool (``HostedToolPart``), not the client.
        outcome: ``"ok"``; ``"refused"`` (the tool declined before reading anything: our
            web_fetch refused the URL asked for, or the provider answered
            ``url_not_allowed`` / ``url_not_in_prior_context``); ``"failed"`` (any other
            error result: a refused redirect hop's too, since the URL asked for
            answered); ``"no-result"`` (no result was recorded).
        code: the error's code: ours (``blocked-by-policy``, ``fetch-error``) or the
            provider's (``max_uses_exceeded``; an OpenAI call's ``status``); None if it
            did not fail, or a client tool not ours gave no code.
        conversation: the conversation's index in the evidence (0 for one transcript).
        message_index: the message that holds the call.
        call_id: the call's id (the provider's for a hosted call), if it has one.
        result_index: the message that holds its result, or None.
        tool: which of our client-side tools it is; None for a hosted call or a
            client tool not ours.
        error: the error's text, for an error result.
        query: the search query.
        hits: ``(url, title)`` of each search result shown to the model.
        withheld: how many search results the domain policy withheld (ours).
        url: the URL asked for (a fetch, an opened page).
        read: the final URL a fetch read, if it read a page.
        title: the page's title.
        redirects: the redirect hops our web_fetch followed.
        robots: the robots.txt files our web_fetch requested.
        allowed_domains: the domains the model narrowed our search to.
    """

    name: str
    arguments: dict[str, Any] = field(default_factory=dict, hash=False)
    hosted: bool = False
    outcome: Outcome = "ok"
    code: str | None = None
    conversation: int = 0
    message_index: int = 0
    call_id: str | None = None
    result_index: int | None = None
    tool: Tool | None = None
    error: str | None = None
    query: str | None = None
    hits: tuple[tuple[str, str], ...] = ()
    withheld: int = 0
    url: str | None = None
    read: str | None = None
    title: str | None = None
    redirects: tuple[str, ...] = ()
    robots: tuple[str, ...] = ()
    allowed_domains: tuple[str, ...] = ()

    def __str__(self) -> str:
        shown = ", ".join(f"{key}={shown_value(value)}" for key, value in self.arguments.items())
        if len(shown) > 2 * _SHOWN:
            shown = shown[: 2 * _SHOWN - 3] + "..."
        where = " (hosted)" if self.hosted else ""
        code = f" [{self.code}]" if self.code else ""
        return f"{self.name}({shown}){where} -> {self.outcome}{code}"

    def entry(self) -> dict[str, Any]:
        """The call, JSON-ready (the report's form: ``status`` is the outcome)."""
        return {
            "tool": self.tool,
            "name": self.name,
            "call_id": self.call_id,
            "message_index": self.message_index,
            "result_index": self.result_index,
            "status": self.outcome,
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

    def describe(self) -> str:
        """What came of the call, in words (one line)."""
        if self.outcome == "no-result":
            return "no result was recorded"
        if self.outcome == "refused":
            return f"{self.name} refused it ([{self.code}]): nothing was read"
        if self.outcome == "failed":
            if self.tool is None:
                return f"{self.name} failed" + (f" ([{self.code}])" if self.code else "")
            return f"{self.name} failed ([{self.code}]): no result reached the model"
        if self.tool is None:
            if self.read is not None:
                return f"read {self.read}"
            return f"{len(self.hits)} result(s)" if self.hits else "ok"
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


def shown_value(value: object, width: int = _SHOWN) -> str:
    """``repr(value)`` cut at ``width``; a value too deep or hostile to print says so."""
    try:
        text = repr(value)
    except Exception:  # RecursionError on a deeply nested argument, a hostile __repr__
        return f"<{type(value).__name__} that cannot be shown>"
    return text if len(text) <= width else text[: width - 3] + "..."


def our_tool_calls(messages: Sequence[Message]) -> list[ToolCall]:
    """Every call of our client-side tools, in transcript order, with its result."""
    found: list[ToolCall] = []
    for part, index, result in client_calls(messages):
        call = read_ours(part, index, result)
        if call is not None:
            found.append(call)
    return found


type Paired = tuple[ToolCallPart, int, tuple[int, ToolResultPart] | None]


def client_calls(messages: Sequence[Message], start: int = 0) -> list[Paired]:
    """Every client-side call from message ``start`` on, with its message and its result
    (the next result with its id; the message that holds it)."""
    results: dict[str, list[tuple[int, ToolResultPart]]] = {}
    for index, message in enumerate(messages):
        for part in message.content:
            if isinstance(part, ToolResultPart):
                results.setdefault(part.call_id, []).append((index, part))
    found: list[Paired] = []
    for index in range(start, len(messages)):
        for part in messages[index].content:
            if not isinstance(part, ToolCallPart):
                continue
            waiting = [pair for pair in results.get(part.id, []) if pair[0] > index]
            result = waiting[0] if waiting else None
            if result is not None:
                results[part.id].remove(result)
            found.append((part, index, result))
    return found


def read_ours(
    call: ToolCallPart, index: int, result: tuple[int, ToolResultPart] | None
) -> ToolCall | None:
    """The call, if it is one of our tools' (by name, result or arguments); else None."""
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
        outcome: Outcome = "no-result"
    elif not part.is_error:
        outcome = "ok"
    elif tool == "web_fetch" and asked_was_refused(
        call.arguments.get("url"), content, requested(content)
    ):
        outcome = "refused"
    else:
        outcome = "failed"
    common: dict[str, Any] = {
        "name": call.tool_name,
        "arguments": dict(call.arguments),
        "outcome": outcome,
        "code": code,
        "message_index": index,
        "call_id": call.id,
        "result_index": at,
        "tool": tool,
        "error": error,
    }
    if tool == "web_search":
        query = call.arguments.get("query")
        narrowed = call.arguments.get("allowed_domains")
        hits = tuple(read_rendered(content)) if outcome == "ok" else ()
        withheld = _WITHHELD.search(content.split("\n", 2)[1] if "\n" in content else "")
        return ToolCall(
            **common,
            query=query if isinstance(query, str) else repr(query),
            hits=hits, withheld=int(withheld.group(1)) if withheld else 0,
            allowed_domains=tuple(
                domain.strip() for domain in narrowed if isinstance(domain, str)
            ) if isinstance(narrowed, list) else (),
        )  # fmt: skip
    asked = call.arguments.get("url")
    record = read_result(part) if part is not None else None
    return ToolCall(
        **common,
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
