"""Read our ``web_search`` from a transcript: the pages it showed, the URLs the model asked for.

Everything comes from the transcript alone (a saved JSONL or a replayed cassette
reads the same as the live run). A result is ours when its text starts with the
renderer's marker line, whatever name the tool was given; error results show no
pages. A call is ours when it is named ``web_search`` or when its arguments are
exactly ours (``query`` and ``count``, with ``allowed_domains`` and
``blocked_domains`` since 0.2).
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from agentloop import Source
from agentloop.transcript import Message, ToolCallPart, ToolResultPart

from agentloop_tools.web._transcript._search_format import read_rendered

# The argument sets our web_search is called with (without and with the narrowing): how
# a call of it is known under a name the team chose.
SEARCH_ARGUMENTS = (
    frozenset({"query", "count"}),
    frozenset({"query", "count", "allowed_domains", "blocked_domains"}),
)
# A link in the query, or the host of a site: operator (site:example.com/path).
_QUERY_URL = re.compile(r"(?i)\bhttps?://[^\s\"'<>()]+|(?<![\w-])site:([^\s\"'<>()]+)")


def search_sources(message: Message) -> Iterator[Source]:
    """Every page our web_search showed the model in ``message``, one per occurrence."""
    for part in message.content:
        if isinstance(part, ToolResultPart) and not part.is_error:
            for url, title in read_rendered(part.content):
                yield Source(url=url, title=title or None)


def search_call_urls(message: Message) -> Iterator[str]:
    """URLs and ``site:`` hosts in the queries the model passed to our web_search.

    The domains of an ``allowed_domains`` narrowing count as ``site:`` hosts: the
    model asked for results from them. ``blocked_domains`` are not reached.
    """
    for part in message.content:
        if not isinstance(part, ToolCallPart):
            continue
        if part.tool_name != "web_search" and frozenset(part.arguments) not in SEARCH_ARGUMENTS:
            continue
        query = part.arguments.get("query")
        if isinstance(query, str):
            for match in _QUERY_URL.finditer(query):
                yield match[1] if match[1] is not None else match[0]
        allowed = part.arguments.get("allowed_domains")
        if isinstance(allowed, list):
            for domain in allowed:
                if isinstance(domain, str) and domain.strip():
                    yield domain.strip()
