"""Compute a test's ``EvidenceSummary`` from its transcripts and the raw provider answers.

The transcript gives what the agent did (tool calls, sources, citations, links, the
hosted calls its blocks show); the provider's raw responses, when the plugin saw them
(recorded or replayed), give what it cost (usage, billed searches). Without raw
responses usage is unknown, and hosted counts come from the blocks where the API has
them (Anthropic Messages, OpenAI Responses).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from agentloop_tools.testing._summary import (
    CitationRecord,
    ConversationEvidence,
    HostedCall,
    LinkRecord,
    ToolCallRecord,
    Verdict,
)

if TYPE_CHECKING:
    from agentloop import Transcript

    from agentloop_tools.cassettes._reading._usage import Exchange
    from agentloop_tools.testing._summary import EvidenceSummary
    from agentloop_tools.web import DomainPolicy

_BLOCK_APIS = ("messages", "responses")  # agentloop's Origin.api of APIs with hosted blocks
_USAGE = ("input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens")


def conversation_record(
    index: int,
    transcript: Transcript,
    exchanges: Sequence[Exchange] | None,
    requests: int | None,
    policy: DomainPolicy | None,
) -> ConversationEvidence:
    """One conversation's record.

    ``exchanges``: the raw model responses the plugin saw for it (None: not seen);
    ``requests``: the model requests the observer saw (None: not observed).
    """
    hosted, blocks_known = _hosted(transcript)
    counters: dict[str, int | None] = dict.fromkeys(_USAGE)
    if exchanges:
        counters = _usage(exchanges)
        counters["model_requests"] = len(exchanges)
    else:
        counters["model_requests"] = requests
        counters["searches"] = _shown(hosted, "search") if blocks_known else None
        counters["fetches"] = len(hosted) - _shown(hosted, "search") if blocks_known else None
    calls = _tool_calls(transcript)
    verdict: Verdict = "not-audited"
    violations = 0
    if policy is not None:
        violations = len(policy.audit(transcript))
        verdict = "fail" if violations else "pass"
    sources = _sources(transcript)
    return ConversationEvidence(
        index=index,
        **counters,
        hosted=tuple(hosted),
        tool_calls=calls,
        sources=sources,
        citations=_citations(transcript),
        links=_links(transcript),
        domains=_domains(sources, hosted, transcript),
        verdict=verdict,
        violations=violations,
    )


def _usage(exchanges: Sequence[Exchange]) -> dict[str, int | None]:
    """Each counter summed over the answered requests; None if any answer lacks it."""
    names = (*_USAGE, "searches", "fetches")
    totals: dict[str, int | None] = dict.fromkeys(names, 0)
    for exchange in exchanges:
        if not exchange.ok:
            continue  # a failed request is not billed
        for name in names:
            value = getattr(exchange, name) if exchange.readable else None
            current = totals[name]
            totals[name] = None if value is None or current is None else current + value
    return totals


def _shown(hosted: Sequence[HostedCall], kind: str) -> int:
    return sum(1 for call in hosted if call.kind == kind)


def _hosted(transcript: Transcript) -> tuple[list[HostedCall], bool]:
    """The hosted calls the assistant messages' blocks show, and whether every answer
    came from an API that shows them (else a count of them is unknown)."""
    from agentloop.transcript import HostedToolPart

    from agentloop_tools.cassettes._reading._usage import blocks_of

    found: list[HostedCall] = []
    known = True
    for message in transcript.messages:
        if message.role != "assistant":
            continue
        origin = message.origin
        if origin is not None and origin.api in _BLOCK_APIS:
            uses = blocks_of(origin.api, origin.raw)
            found.extend(HostedCall(use.kind, use.target) for use in uses)
            continue
        known = False
        found.extend(
            HostedCall("search" if part.kind == "web_search" else part.kind, part.query or "")
            for part in message.content
            if isinstance(part, HostedToolPart) and part.query is not None
        )
    return found, known


def _tool_calls(transcript: Transcript) -> tuple[ToolCallRecord, ...]:
    """Every client-side tool call with its outcome code, ours read as the audit reads them."""
    from agentloop.transcript import ToolCallPart, ToolResultPart

    from agentloop_tools.web._transcript._tool_calls import our_tool_calls

    ours = {call.call_id: call for call in our_tool_calls(transcript.messages)}
    results: dict[str, ToolResultPart] = {}
    for message in transcript.messages:
        for part in message.content:
            if isinstance(part, ToolResultPart):
                results.setdefault(part.call_id, part)
    found = []
    for message in transcript.messages:
        for part in message.content:
            if not isinstance(part, ToolCallPart):
                continue
            known = ours.get(part.id)
            if known is not None:
                outcome = known.code or ("ok" if known.outcome == "ok" else known.outcome)
                if known.outcome == "failed" and known.code is None:
                    outcome = "error"
                refused = known.outcome == "refused"
                tool: str | None = known.tool
            else:
                result = results.get(part.id)
                outcome = "no-result" if result is None else _outcome(result)
                refused = False
                tool = None
            found.append(
                ToolCallRecord(part.tool_name, dict(part.arguments), outcome, refused, tool)
            )
    return tuple(found)


def _outcome(result: Any) -> str:
    import re

    if not result.is_error:
        return "ok"
    code = re.match(r"(?:Error: )?\[([a-z][a-z0-9]*(?:-[a-z0-9]+)*)\] ", result.content)
    return code.group(1) if code else "error"


def _sources(transcript: Transcript) -> tuple[str, ...]:
    from agentloop_tools.web import sources

    return tuple(dict.fromkeys(source.url for source in sources(transcript)))


def _citations(transcript: Transcript) -> tuple[CitationRecord, ...]:
    from agentloop_tools.web import citations

    return tuple(CitationRecord(c.url, c.cited_text, c.title) for c in citations(transcript))


def _links(transcript: Transcript) -> tuple[LinkRecord, ...]:
    from agentloop_tools.web import links

    return tuple(LinkRecord(link.url, link.consulted) for link in links(transcript))


def _domains(
    sources: Sequence[str], hosted: Sequence[HostedCall], transcript: Transcript
) -> tuple[str, ...]:
    """The hosts the agent reached: its sources' and the pages hosted fetches read."""
    urls = [*sources, *(call.target for call in hosted if call.kind != "search")]
    hosts = set()
    for url in urls:
        try:
            host = (urlsplit(url.strip()).hostname or "").rstrip(".").lower()
        except ValueError:
            continue
        if host:
            hosts.add(host)
    return tuple(sorted(hosts))


def summarize(
    transcripts: Sequence[Transcript],
    exchanges: Sequence[Sequence[Exchange] | None],
    policy: DomainPolicy | None = None,
    *,
    requests: Sequence[int | None] = (),
    test: str | None = None,
    policy_origin: str | None = None,
    notes: Sequence[str] = (),
    attribution: str = "cassette",
) -> EvidenceSummary:
    """The record of ``transcripts``, each with the raw answers of its model calls
    (``exchanges[i]``; None: not seen) and the requests an observer saw (``requests``)."""
    from agentloop_tools.testing._summary import EvidenceSummary

    conversations = tuple(
        conversation_record(
            index,
            transcript,
            exchanges[index] if index < len(exchanges) else None,
            requests[index] if index < len(requests) else None,
            policy,
        )
        for index, transcript in enumerate(transcripts)
    )
    return EvidenceSummary(
        conversations=conversations,
        test=test,
        policy=policy_origin if policy is not None else None,
        notes=tuple(notes),
        attribution=attribution,
    )
