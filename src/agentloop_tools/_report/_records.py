"""Evidence reports from a test run: one JSON document, and a self-contained HTML page.

Per test: its outcome and why it failed, its cassette, the policy in force, and per
conversation the questions asked, the answer turns (text, citations flagged as good
or violating), the pages consulted (one entry per page, every URL as written kept)
and the violations (each occurrence, and one line per page). The HTML page needs no
network and no JavaScript: cited spans are highlighted and violations marked in
place, in words as well as colour.
"""

from __future__ import annotations

import html
import json
import os
import zlib
from bisect import bisect_left
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from agentloop import Transcript
from agentloop.transcript import TextPart

from agentloop_tools._report._entries import (
    also_written,
    page_entries,
    questions,
    source_entries,
    violation_entry,
)
from agentloop_tools._secrets import Cleaner, secret_values
from agentloop_tools._visible import visible
from agentloop_tools.web import DomainPolicy, Link, Violation, links
from agentloop_tools.web._domains._identity import page_key
from agentloop_tools.web._transcript._tool_calls import ToolCall, tool_calls


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
        calls = tool_calls(transcript.messages)
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
    entry["outcome"] = call.outcome()
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


def _link_entry(link: Link, found: _TextViolations) -> dict[str, Any]:
    """One link of an answer: consulted or not, and the text violation on it if any."""
    bad = found.on(link)
    return {
        "url": link.url,
        "start": link.start,
        "end": link.end,
        "text": link.text,
        "consulted": link.consulted,
        "violation": bad is not None,
        "verdict": None if bad is None else bad.verdict,
    }


def _turns(transcript: Transcript, violations: Sequence[Violation]) -> list[dict[str, Any]]:
    """The answer turns: text, citations each flagged as a violation or not, and links."""
    bad = {(v.message_index, v.url): v.verdict for v in violations if v.where == "citation"}
    linked: dict[int, list[dict[str, Any]]] = {}
    in_text = _TextViolations(violations)
    for link in links(transcript):
        linked.setdefault(link.message_index, []).append(_link_entry(link, in_text))
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


def document(records: Sequence[dict[str, Any]]) -> dict[str, Any]:
    conversations = [c for record in records for c in record["conversations"]]
    return {
        "tests": list(records),
        "summary": {
            "tests_with_evidence": len(records),
            # A refused cassette fails at teardown: pytest calls that an error.
            "failed": sum(1 for r in records if r.get("outcome") in ("failed", "error")),
            "violations": sum(len(c["violations"]) for c in conversations),
            "pages_with_violations": sum(len(c.get("pages", [])) for c in conversations),
        },
    }


def clean(records: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """The records with every credential replaced, as cassettes are scrubbed.

    A model's answer can repeat a key it was shown: the environment's credentials
    become their placeholders, any other key shape ``[redacted]``.
    """
    cleaner = Cleaner(secret_values(os.environ))
    cleaned: list[dict[str, Any]] = cleaner.data(list(records))
    return cleaned


def write_json(path: str, records: Sequence[dict[str, Any]]) -> None:
    records = clean(records)
    with open(path, "w", encoding="utf-8") as out:
        json.dump(document(records), out, indent=2)
        out.write("\n")


_STYLE = """
body { font: 15px/1.5 system-ui, sans-serif; margin: 2em auto; max-width: 60em; color: #222; }
h1 { font-size: 1.4em; } h2 { font-size: 1.1em; margin-top: 2em; border-top: 1px solid #ccc;
padding-top: 1em; } .outcome { font-weight: bold; } .passed { color: #176117; }
.failed, .error { color: #a31515; } .answer { white-space: pre-wrap; background: #f7f7f7;
padding: .75em; border-radius: 4px; } mark.cited { background: #fff3a8; }
mark.violation, mark.cited-violation { background: #ffc9c9; outline: 2px solid #a31515; }
sup.ref { color: #555; } .flag, sup.flag { color: #a31515; font-weight: bold; font-size: .85em; }
blockquote.question { margin: .5em 0; padding: .5em .75em; border-left: 4px solid #6b8cc7;
background: #eef3fb; white-space: pre-wrap; } .label { font-weight: bold; }
.failure { border: 2px solid #a31515; padding: .5em .75em; border-radius: 4px; }
pre.message { white-space: pre-wrap; font-size: .85em; background: #fbeaea; padding: .5em; }
ul.violations li, ol.citations li.violating, ul.sources li.violating { color: #a31515; }
.meta { color: #555; font-size: .9em; }
.answer.rendered { white-space: normal; } .answer.rendered p { margin: .3em 0; }
.answer.rendered h1, .answer.rendered h2, .answer.rendered h3, .answer.rendered h4 {
border: 0; margin: .4em 0 .2em; padding: 0; font-size: 1.05em; }
a.link-consulted { color: #176117; } a.link-unconsulted { color: #8a5a00; }
a.link-violating { color: #a31515; background: #ffc9c9; outline: 2px solid #a31515; }
sup.ok { color: #176117; } sup.unconsulted { color: #8a5a00; }
details.raw summary { cursor: pointer; color: #555; font-size: .9em; }
.tool-call { border-left: 4px solid #999; background: #f3f3f3; margin: .5em 0;
padding: .4em .75em; font-size: .92em; } .tool-call.violating { border-left-color: #a31515; }
.tool-call p { margin: .2em 0; } .tool-call:target { outline: 2px solid #6b8cc7; }
"""


def write_html(path: str, records: Sequence[dict[str, Any]]) -> None:
    text = html_page(records)
    with open(path, "w", encoding="utf-8") as out:
        out.write(text)


def html_page(records: Sequence[dict[str, Any]]) -> str:
    """The self-contained HTML page of the records (credentials replaced)."""
    records = clean(records)
    summary = document(records)["summary"]
    parts = [
        "<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'>",
        "<title>agentloop-tools evidence report</title>",
        f"<style>{_STYLE}</style></head><body>",
        "<h1>agentloop-tools evidence report</h1>",
        f"<p class='meta' id='summary'>{summary['tests_with_evidence']} test(s) with evidence, "
        f"{summary['failed']} failed, {summary['violations']} violation(s) on "
        f"{summary['pages_with_violations']} page(s).</p>",
    ]
    for record in records:
        parts.append(_html_test(record))
    parts.append("</body></html>")
    return "\n".join(parts)


def _html_test(record: dict[str, Any]) -> str:
    outcome = record.get("outcome", "")
    status = _h(outcome)
    out = [
        f"<section class='test'><h2>{_h(record['test'])} "
        f"<span class='outcome {status}'>{status}</span></h2>"
    ]
    failure = record.get("failure")
    if failure:
        out.append(
            f"<div class='failure' data-kind='{_h(failure['kind'], quote=True)}'>"
            f"<p><span class='label'>Why it failed ({_h(failure['kind'])}):</span> "
            f"{_h(failure['reason'])}.</p>"
            f"<pre class='message'>{_h(failure['message'])}</pre></div>"
        )
    cassette = record.get("cassette")
    if cassette:
        out.append(
            f"<p class='meta'>cassette: {_h(str(cassette.get('path')))} "
            f"({_h(str(cassette.get('state')))})</p>"
        )
    policy = record.get("policy")
    if policy:
        out.append(
            f"<p class='meta'>policy: {_h(policy['mode'])} "
            f"{_h(', '.join(policy['domains']))} "
            f"(from {_h(str(policy['from']))})</p>"
        )
    for number, conversation in enumerate(record["conversations"], start=1):
        out.append(
            f"<h3 id='{_h(_anchor(record['test'], number), quote=True)}'>Conversation {number}</h3>"
        )
        out += _html_conversation(conversation, _anchor(record["test"], number))
    out.append("</section>")
    return "\n".join(out)


def _anchor(test: str, number: int) -> str:
    """An id for a conversation of a test, unique in the page, safe in an attribute."""
    return f"t{zlib.crc32(test.encode('utf-8', 'replace')):08x}-c{number}"


def _html_conversation(conversation: dict[str, Any], anchor: str = "c") -> list[str]:
    """The questions and answers in message order with the tool calls between them, then
    the pages and the violations."""
    out = []
    text_violations: dict[int, list[dict[str, Any]]] = {}
    for violation in conversation["violations"]:
        if violation["span"]:
            text_violations.setdefault(violation["message_index"], []).append(violation)
    calls = conversation.get("tool_calls", [])
    call_ids = {
        (call["call_id"], call["message_index"]): f"{anchor}-call{number}"
        for number, call in enumerate(calls, 1)
    }
    by_message: dict[int, list[tuple[int, dict[str, Any]]]] = {}
    for number, call in enumerate(calls, 1):
        by_message.setdefault(call["message_index"], []).append((number, call))
    asked = list(conversation.get("questions", []))
    for turn in conversation["turns"]:
        while asked and asked[0]["message_index"] < turn["message_index"]:
            question = asked.pop(0)
            out.append(
                f"<blockquote class='question' data-message='{question['message_index']}'>"
                f"<span class='label'>Asked:</span> {_h(question['text'])}</blockquote>"
            )
        marks = [
            _Mark(c["start"], c["end"], "cited-violation" if c["violation"] else "cited",
                  c["url"], number, c["verdict"])
            for number, c in enumerate(turn["citations"], 1)
            if c["start"] is not None
        ] + [
            _Mark(v["span"][0], v["span"][1], "violation", v["url"], 0, v["verdict"])
            for v in text_violations.get(turn["message_index"], [])
        ]  # fmt: skip
        if turn["text"] or turn["citations"] or turn["message_index"] not in by_message:
            out.append(_html_answer(turn, marks))
        if turn["citations"]:
            out.append("<ol class='citations'>")
            for citation in turn["citations"]:
                if citation["violation"]:
                    out.append(
                        f"<li class='violating'><span class='flag'>VIOLATION</span> "
                        f"{_h(citation['url'])} ({_h(citation['verdict'])})</li>"
                    )
                else:
                    out.append(f"<li class='good'>{_h(citation['url'])}</li>")
            out.append("</ol>")
        for number, call in by_message.get(turn["message_index"], []):
            out.append(_html_call(call, number, call_ids[(call["call_id"], call["message_index"])]))
    out += [
        f"<blockquote class='question' data-message='{q['message_index']}'>"
        f"<span class='label'>Asked:</span> {_h(q['text'])}</blockquote>"
        for q in asked
    ]
    out.append(f"<h4>Sources consulted ({len(conversation['sources'])})</h4><ul class='sources'>")
    for source in conversation["sources"]:
        written = _h(also_written(source))
        if source.get("violation"):
            out.append(
                f"<li class='violating'><span class='flag'>VIOLATION</span> "
                f"{_h(source['url'])}{written} ({_h(source['verdict'])})</li>"
            )
        else:
            out.append(f"<li>{_h(source['url'])}{written}</li>")
    out.append("</ul>")
    pages = conversation.get("pages", [])
    if pages:
        occurrences = len(conversation["violations"])
        out.append(
            f"<h4>Violations ({len(pages)} page(s), {occurrences} occurrence(s))</h4>"
            "<ul class='violations'>"
        )
        out += [f"<li>{_h(page['line'] + also_written(page))}</li>" for page in pages]
        out.append("</ul>")
        caused = [v for v in conversation["violations"] if v.get("call")]
        if caused:
            out.append("<ul class='call-violations'>")
            for violation in caused:
                key = (violation["call"]["call_id"], violation["call"]["message_index"])
                target = call_ids.get(key)
                pointer = (
                    f" <a href='#{_h(target, quote=True)}'>see tool call "
                    f"{list(call_ids).index(key) + 1}</a>"
                    if target
                    else ""
                )
                out.append(
                    f"<li>{_h(violation['where'])} message {violation['message_index']}: "
                    f"{_h(violation['url'])} ({_h(violation['verdict'])}){pointer}</li>"
                )
            out.append("</ul>")
    return out


def _html_answer(turn: dict[str, Any], marks: list[_Mark]) -> str:
    """The answer rendered as its reader sees it, links marked; the raw text one click away."""
    from agentloop_tools._report import _answer_html

    raw = (
        f"<div class='answer raw' data-message='{turn['message_index']}'>"
        f"{_highlight(turn['text'], marks)}</div>"
    )
    if not _answer_html.available():
        return (
            raw + "<p class='meta'>Install the testing extra (markdown-it-py, nh3) to see "
            "answers rendered as markdown.</p>"
        )
    shown = _answer_html.render(visible(turn["text"], layout=True), turn.get("links", []))
    return (
        f"<div class='answer rendered' data-message='{turn['message_index']}'>{shown}</div>"
        f"<details class='raw'><summary>Raw text</summary>{raw}</details>"
    )


def _html_call(call: dict[str, Any], number: int, anchor: str) -> str:
    """One client-side tool call: what was asked, what came of it, what it caused."""
    violating = " violating" if call["violations"] else ""
    if call["tool"] == "web_search":
        asked = f"query <span class='query'>&ldquo;{_h(call['query'] or '')}&rdquo;</span>"
    else:
        asked = f"<code>{_h(call['url'] or '')}</code>"
    out = [
        f"<div class='tool-call{violating}' id='{_h(anchor, quote=True)}' "
        f"data-message='{call['message_index']}' data-status='{_h(call['status'], quote=True)}'>",
        f"<p><span class='label'>Tool call {number}: {_h(call['name'])}</span> {asked} "
        f"&rarr; {_h(_call_outcome(call))}</p>",
    ]
    if call["hits"]:
        out.append("<ol class='hits'>")
        out += [
            f"<li>{_h(hit['url'])}" + (f" ({_h(hit['title'])})" if hit["title"] else "") + "</li>"
            for hit in call["hits"]
        ]
        out.append("</ol>")
    steps = [("robots.txt", url) for url in call["robots"]] + [
        ("redirected through", url) for url in call["redirects"]
    ]
    if call["read"]:
        steps.append(("read", call["read"]))
    if steps:
        out.append("<ul class='fetched'>")
        out += [f"<li>{_h(kind)}: {_h(url)}</li>" for kind, url in steps]
        out.append("</ul>")
    if call["status"] in ("refused", "failed") and call["error"]:
        out.append(f"<pre class='message'>{_h(call['error'])}</pre>")
    for violation in call["violations"]:
        out.append(
            f"<p class='flag'>VIOLATION ({_h(violation['where'])}): {_h(violation['url'])} "
            f"({_h(violation['verdict'])})</p>"
        )
    out.append("</div>")
    return "\n".join(out)


def _call_outcome(call: dict[str, Any]) -> str:
    outcome = str(call["outcome"])
    if call["tool"] == "web_search" and call["withheld"]:
        outcome += " (which hosts, and by which rule, the transcript does not record)"
    return outcome


@dataclass(frozen=True, slots=True)
class _Mark:
    start: int
    end: int
    kind: str
    url: str
    number: int  # the citation's number in the turn's list; 0 for a mention in the text
    verdict: str | None


def _highlight(text: str, marks: list[_Mark]) -> str:
    """The text with its marks: violations whole, citations around them, never overlapping.

    Each mark is followed by its label in words: ``[1]`` for a good citation,
    ``[2: VIOLATION]`` for a violating one, ``[VIOLATION: verdict]`` for a link or
    mention in the text, so the page reads the same without colour.
    """
    chosen: list[tuple[int, int, _Mark]] = []
    for mark in sorted(marks, key=lambda m: (m.kind != "violation", m.start)):
        pieces = [(max(mark.start, 0), min(mark.end, len(text)))]
        for taken_start, taken_end, _ in chosen:
            pieces = [
                piece
                for low, high in pieces
                for piece in ((low, min(high, taken_start)), (max(low, taken_end), high))
                if piece[0] < piece[1]
            ]
        chosen += [(low, high, mark) for low, high in pieces]
    chosen.sort(key=lambda piece: (piece[0], piece[1]))
    last = {id(mark): end for _, end, mark in chosen}
    out, position = [], 0
    for start, end, mark in chosen:
        out.append(_h(text[position:start]))
        out.append(
            f"<mark class='{mark.kind}' title='{_h(mark.url, quote=True)}'>"
            f"{_h(text[start:end])}</mark>"
        )
        if end == last[id(mark)]:
            out.append(_label(mark))
        position = end
    out.append(_h(text[position:]))
    return "".join(out)


def _h(text: str, quote: bool = True) -> str:
    """Recorded text for the HTML page: control characters as visible escapes, then escaped."""
    return html.escape(visible(text, layout=True), quote=quote)


def _label(mark: _Mark) -> str:
    if mark.kind == "violation":
        return f"<span class='flag'>[VIOLATION: {_h(mark.verdict or '')}]</span>"
    if mark.kind == "cited-violation":
        return f"<sup class='ref flag'>[{mark.number}: VIOLATION]</sup>"
    return f"<sup class='ref'>[{mark.number}]</sup>"
