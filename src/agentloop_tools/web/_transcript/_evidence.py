"""Read what hosted tools consulted and what the answer cited, from agentloop transcripts.

agentloop models web-search results (``HostedToolPart.sources``) and citations
(``TextPart.citations``). Pages it does not model stay in ``Message.origin.raw``,
the provider's own blocks: Anthropic web-fetch results and OpenAI ``open_page`` /
``find_in_page`` actions. We read both, in the order the provider wrote them.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any, Literal

from agentloop import Citation, HostedToolPart, Source, Transcript
from agentloop.transcript import Message, TextPart

from agentloop_tools.web._domains._identity import page_key, without_tracking
from agentloop_tools.web._transcript._fetch_format import pages_read
from agentloop_tools.web._transcript._messages import messages_of, start_index
from agentloop_tools.web._transcript._tool_results import search_sources

type _Kind = Literal["consulted", "cited"]


def sources(
    transcript: Transcript | Sequence[Message],
    *,
    since: int = 0,
    per_page: bool = False,
    raw: bool | None = None,
) -> list[Source]:
    """Every page a provider-run tool consulted, deduplicated by URL, first appearance first.

    Includes search results, fetched pages, pages opened or searched in, pages cited
    in the answer (a citation can only point at a page the tool read), the pages our
    client-side ``web_fetch`` read (their final URL), and the pages our client-side
    ``web_search`` showed the model (never the ones the domain policy withheld). Each
    distinct URL is one entry, with the first title given.

    Args:
        transcript: an agentloop ``Transcript`` or a sequence of messages.
        since: index of the first message to read; negative counts from the end.
        per_page: one entry per page instead: URLs that differ only in ``utm_*``
            parameters (OpenAI adds ``?utm_source=openai``), the fragment, the scheme,
            ``www.`` or the host's case name the same page. The entry shows the first
            URL without tracking parameters if one appeared, and the first title given.
        raw: deprecated; ``raw=True`` is the default now, ``raw=False`` is
            ``per_page=True``. Accepted, with a ``DeprecationWarning``, for one release.
    """
    if raw is not None:
        if per_page:
            raise TypeError("sources() takes per_page= or the deprecated raw=, not both.")
        warnings.warn(
            "sources(raw=...) is deprecated: one entry per distinct URL is the default "
            "now; for one entry per page pass per_page=True.",
            DeprecationWarning,
            stacklevel=2,
        )
        per_page = not raw
    key: Callable[[str], str] = page_key if per_page else str
    pages: dict[str, list[Source]] = {}
    for message in _from(transcript, since):
        for _, source in _evidence(message):
            pages.setdefault(key(source.url), []).append(source)
        for source in [*pages_read(message), *search_sources(message)]:
            pages.setdefault(key(source.url), []).append(source)
    return [_one_page(seen) for seen in pages.values()]


def _one_page(seen: list[Source]) -> Source:
    first = seen[0]
    if len(seen) == 1:
        return first
    url = next((s.url for s in seen if without_tracking(s.url) == s.url), first.url)
    title = next((s.title for s in seen if s.title), None)
    if url == first.url and title == first.title:
        return first
    return Source(url=url, title=title)


def citations(transcript: Transcript | Sequence[Message], *, since: int = 0) -> list[Citation]:
    """Every citation attached to answer text, in transcript order, duplicates kept."""
    return [
        citation
        for message in _from(transcript, since)
        for part in message.content
        if isinstance(part, TextPart)
        for citation in part.citations
    ]


def message_sources(message: Message) -> list[Source]:
    """The pages hosted tools consulted in one message, one entry per occurrence."""
    return [source for kind, source in _evidence(message) if kind == "consulted"]


def _from(transcript: Transcript | Sequence[Message], since: int) -> Sequence[Message]:
    messages = messages_of(transcript)
    return messages[start_index(since, len(messages)) :]


def _evidence(message: Message) -> Iterator[tuple[_Kind, Source]]:
    """Consulted and cited pages of one message, in the provider's order.

    The provider's raw blocks give the order and the pages agentloop does not
    model; the parts are read too, so nothing in them is lost when raw is absent
    or shaped differently.
    """
    from_raw: list[tuple[_Kind, Source]] = []
    if message.origin is not None:
        for block in message.origin.raw:
            from_raw.extend(_from_block(block))
    yield from from_raw
    seen = {(kind, source.url) for kind, source in from_raw}
    for part in message.content:
        if isinstance(part, HostedToolPart):
            for source in part.sources:
                if ("consulted", source.url) not in seen:
                    yield "consulted", source
        elif isinstance(part, TextPart):
            for citation in part.citations:
                if ("cited", citation.url) not in seen:
                    yield "cited", Source(url=citation.url, title=citation.title)


def _from_block(block: object) -> Iterator[tuple[_Kind, Source]]:
    """One provider block or output item. Anything unrecognised yields nothing."""
    if not isinstance(block, Mapping):
        return
    kind = block.get("type")
    if not isinstance(kind, str):
        return
    if kind == "text":  # Anthropic text block
        for citation in _mappings(block.get("citations")):
            yield from _page("cited", citation.get("url"), citation.get("title"))
    elif kind.endswith("_tool_result"):  # Anthropic web_search / web_fetch results
        content = block.get("content")
        if isinstance(content, Mapping):
            document = content.get("content")
            title = document.get("title") if isinstance(document, Mapping) else None
            yield from _page("consulted", content.get("url"), title or content.get("title"))
        else:
            for item in _mappings(content):
                yield from _page("consulted", item.get("url"), item.get("title"))
    elif kind == "web_search_call":  # OpenAI Responses
        action = block.get("action")
        if isinstance(action, Mapping):
            for source in _mappings(action.get("sources")):
                yield from _page("consulted", source.get("url"), source.get("title"))
            if action.get("type") in ("open_page", "find_in_page"):
                yield from _page("consulted", action.get("url"), None)
    elif kind == "message":  # OpenAI Responses
        for content in _mappings(block.get("content")):
            for annotation in _mappings(content.get("annotations")):
                if annotation.get("type") == "url_citation":
                    yield from _page("cited", annotation.get("url"), annotation.get("title"))


def _mappings(value: object) -> Iterator[Mapping[str, Any]]:
    if isinstance(value, list | tuple):
        for item in value:
            if isinstance(item, Mapping):
                yield item


def _page(kind: _Kind, url: object, title: object) -> Iterator[tuple[_Kind, Source]]:
    if isinstance(url, str) and url:
        yield kind, Source(url=url, title=title if isinstance(title, str) else None)
