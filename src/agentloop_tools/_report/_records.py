"""Evidence records from a test run: one per test, and the JSON document of them.

Per test: its outcome and why it failed, its cassette, the policy in force, and per
conversation the questions asked, the answer turns (text, citations flagged as good
or violating), the pages consulted (one entry per page, every URL as written kept)
and the violations (each occurrence, and one line per page). The JSON document is
written here; the HTML page by ``_html`` (both re-exported here).
"""

from __future__ import annotations

import json
from bisect import bisect_left
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from agentloop import Transcript
from agentloop.transcript import TextPart

from agentloop_tools._report._document import clean, document
from agentloop_tools._report._entries import (
    page_entries,
    questions,
    source_entries,
    violation_entry,
)
from agentloop_tools._report._html import html_page, write_html
from agentloop_tools.web import DomainPolicy, Link, Violation, links
from agentloop_tools.web._domains._identity import page_key
from agentloop_tools.web._transcript._tool_calls import ToolCall, our_tool_calls


def test_record(
    nodeid: str,
    transcripts: Sequence[Transcript],
    policy: DomainPolicy | None,
    policy_origin: str | None,
    cassette: dict[str, Any] | None,
    *,
    outcome: str,
    failure: dict[str, Any] | None,
) -> dict[str, Any]:
    """The evidence of one test, JSON-ready.

    Args:
        nodeid: the test.
        transcripts: its conversations, in order.
        policy: the policy it was audited with, if any; ``policy_origin`` says where
            it was written.
        cassette: the cassette's path and state, if it used one.
        outcome: pytest's outcome of the test's call.
        failure: why it failed (``_evidence_record.failure_entry``), if it did.
    """
    conversations = []
    for number, transcript in enumerate(transcripts):
        violations = (
            [replace(v, conversation=number) for v in policy.audit(transcript)]
            if policy is not None
            else []
        )
        calls = our_tool_calls(transcript.messages)
        conversations.append(
            {
                "questions": questions(transcript),
                "turns": _turns(transcript, violations),
                "tool_calls": [_call_entry(call, violations) for call in calls],
                "sources": _sources(transcript, violations),
                "violations": [_violation(v, calls) for v in violations],
                "pages": page_entries(violations),
            }
        )
    return {
        "test": nodeid,
        "outcome": outcome,
        "failure": failure,
        "cassette": cassette,
        "policy": None
        if policy is None
        else {"mode": policy.mode, "domains": list(policy.domains), "from": policy_origin},
        "conversations": conversations,
    }


def _call_entry(call: ToolCall, violations: Sequence[Violation]) -> dict[str, Any]:
    """One client-side tool call, with the violations it caused (where it is their call)."""
    entry = call.entry()
    entry["outcome"] = call.describe()
    entry["violations"] = [violation_entry(v) for v in violations if _call_of(v, [call]) is call]
    return entry


def _violation(violation: Violation, calls: Sequence[ToolCall]) -> dict[str, Any]:
    """A violation, JSON-ready; one a client-side tool call caused names that call."""
    call = _call_of(violation, calls)
    if call is None:
        return violation_entry(violation)
    return violation_entry(
        violation, call={"call_id": call.call_id, "message_index": call.message_index}
    )


def _call_of(violation: Violation, calls: Sequence[ToolCall]) -> ToolCall | None:
    """The call of our tools a ``tool-*``, ``redirect`` or ``robots`` violation comes from."""
    where = violation.where
    if where not in ("tool-call", "tool-result", "redirect", "robots"):
        return None
    for call in calls:
        at = call.message_index if where == "tool-call" else call.result_index
        if at != violation.message_index:
            continue
        if where == "tool-call":
            named = [call.url or "", (call.url or "").strip()]
            if violation.url in named or (call.query is not None and violation.url in call.query):
                return call
        elif violation.url in (
            call.read,
            *call.redirects,
            *call.robots,
            *(url for url, _ in call.hits),
        ):
            return call
    return None


class _TextViolations:
    """The text violations of each message by where they start: overlap found in log time."""

    def __init__(self, violations: Sequence[Violation]) -> None:
        spans: dict[int, list[tuple[int, int, Violation]]] = {}
        for v in violations:
            if v.where == "text" and v.span is not None:
                spans.setdefault(v.message_index, []).append((v.span[0], v.span[1], v))
        self._spans = {
            index: sorted(found, key=lambda item: item[:2]) for index, found in spans.items()
        }
        self._starts = {index: [item[0] for item in found] for index, found in self._spans.items()}

    def on(self, link: Link) -> Violation | None:
        spans = self._spans.get(link.message_index)
        if not spans:
            return None
        starts = self._starts[link.message_index]
        position = max(bisect_left(starts, link.start) - 1, 0)
        while position < len(spans) and spans[position][0] < link.end:
            start, end, violation = spans[position]
            if start < link.end and link.start < end:
                return violation
            position += 1
        return None


def link_entries(
    transcript: Transcript, violations: Sequence[Violation] | None
) -> dict[int, list[dict[str, Any]]]:
    """The links of each answer, by message: consulted or not (``links()``, read over the
    whole conversation, as ``assert_cited`` reads them), and with ``violations`` given
    the text violation on each. The report and ``agentloop-tools evidence`` both list
    links from here."""
    linked: dict[int, list[dict[str, Any]]] = {}
    in_text = _TextViolations(violations or ())
    for link in links(transcript):
        entry: dict[str, Any] = {
            "url": link.url,
            "start": link.start,
            "end": link.end,
            "text": link.text,
            "consulted": link.consulted,
        }
        if violations is not None:
            bad = in_text.on(link)
            entry["violation"] = bad is not None
            entry["verdict"] = None if bad is None else bad.verdict
        linked.setdefault(link.message_index, []).append(entry)
    return linked


def _turns(transcript: Transcript, violations: Sequence[Violation]) -> list[dict[str, Any]]:
    """The answer turns: text, citations each flagged as a violation or not, and links."""
    bad = {(v.message_index, v.url): v.verdict for v in violations if v.where == "citation"}
    linked = link_entries(transcript, violations)
    turns = []
    for index, message in enumerate(transcript.messages):
        if message.role != "assistant":
            continue
        text = ""
        cited = []
        for part in message.content:
            if not isinstance(part, TextPart):
                continue
            for citation in part.citations:
                start, end = _span_in_part(part, citation)
                why = bad.get((index, citation.url))
                cited.append(
                    {
                        "url": citation.url,
                        "title": citation.title,
                        "cited_text": citation.cited_text,
                        "start": None if start is None else len(text) + start,
                        "end": None if end is None else len(text) + end,
                        "violation": why is not None,
                        "verdict": why,
                    }
                )
            text += part.text
        turns.append(
            {
                "message_index": index,
                "text": text,
                "citations": cited,
                "links": linked.get(index, []),
            }
        )
    return turns


def _sources(transcript: Transcript, violations: Sequence[Violation]) -> list[dict[str, Any]]:
    """The pages consulted, each flagged if consulting it was a violation."""
    bad = {page_key(v.url): v.verdict for v in violations if v.where == "source"}
    entries = source_entries(transcript)
    for entry in entries:
        why = next((bad[key] for key in map(page_key, entry["urls"]) if key in bad), None)
        entry["violation"] = why is not None
        entry["verdict"] = why
    return entries


def _span_in_part(part: TextPart, citation: Any) -> tuple[int | None, int | None]:
    """Where a citation sits in its text part: OpenAI gives offsets; Anthropic cites the part."""
    if citation.start is not None and citation.end is not None:
        return citation.start, citation.end
    return 0, len(part.text)


def write_json(path: str, records: Sequence[dict[str, Any]]) -> None:
    records = clean(records)
    with open(path, "w", encoding="utf-8") as out:
        json.dump(document(records), out, indent=2)
        out.write("\n")


__all__ = [
    "clean",
    "document",
    "html_page",
    "link_entries",
    "test_record",
    "write_html",
    "write_json",
]
