"""Evidence reports from a test run: one JSON document, and a self-contained HTML page.

Per test: its cassette, the policy in force, and per conversation the answer turns
(text, citations), the sources consulted and the violations. The HTML page needs no
network and no JavaScript: cited spans are highlighted and violations marked in place.
"""

from __future__ import annotations

import html
import json
import os
from collections.abc import Sequence
from typing import Any

from agentloop import Transcript
from agentloop.transcript import TextPart

from agentloop_tools._secrets import Cleaner, secret_values
from agentloop_tools.web import DomainPolicy, sources


def test_record(
    nodeid: str,
    transcripts: Sequence[Transcript],
    policy: DomainPolicy | None,
    policy_origin: str | None,
    cassette: dict[str, Any] | None,
) -> dict[str, Any]:
    """The evidence of one test, JSON-ready."""
    conversations = []
    for transcript in transcripts:
        violations = policy.audit(transcript) if policy is not None else []
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
                    cited.append(
                        {
                            "url": citation.url,
                            "title": citation.title,
                            "cited_text": citation.cited_text,
                            "start": None if start is None else len(text) + start,
                            "end": None if end is None else len(text) + end,
                        }
                    )
                text += part.text
            turns.append({"message_index": index, "text": text, "citations": cited})
        conversations.append(
            {
                "turns": turns,
                "sources": [{"url": s.url, "title": s.title} for s in sources(transcript)],
                "violations": [
                    {
                        "where": v.where,
                        "url": v.url,
                        "message_index": v.message_index,
                        "rule": v.rule,
                        "span": list(v.span) if v.span else None,
                    }
                    for v in violations
                ],
            }
        )
    return {
        "test": nodeid,
        "cassette": cassette,
        "policy": None
        if policy is None
        else {"mode": policy.mode, "domains": list(policy.domains), "from": policy_origin},
        "conversations": conversations,
    }


def _span_in_part(part: TextPart, citation: Any) -> tuple[int | None, int | None]:
    """Where a citation sits in its text part: OpenAI gives offsets; Anthropic cites the part."""
    if citation.start is not None and citation.end is not None:
        return citation.start, citation.end
    return 0, len(part.text)


def document(records: Sequence[dict[str, Any]]) -> dict[str, Any]:
    return {
        "tests": list(records),
        "summary": {
            "tests_with_evidence": len(records),
            "violations": sum(
                len(c["violations"]) for record in records for c in record["conversations"]
            ),
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
.failed { color: #a31515; } .answer { white-space: pre-wrap; background: #f7f7f7;
padding: .75em; border-radius: 4px; } mark.cited { background: #fff3a8; }
mark.violation { background: #ffc9c9; outline: 2px solid #a31515; }
ul.violations li { color: #a31515; } .meta { color: #555; font-size: .9em; }
"""


def write_html(path: str, records: Sequence[dict[str, Any]]) -> None:
    records = clean(records)
    summary = document(records)["summary"]
    parts = [
        "<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'>",
        "<title>agentloop-tools evidence report</title>",
        f"<style>{_STYLE}</style></head><body>",
        "<h1>agentloop-tools evidence report</h1>",
        f"<p class='meta' id='summary'>{summary['tests_with_evidence']} test(s) with evidence, "
        f"{summary['violations']} violation(s).</p>",
    ]
    for record in records:
        parts.append(_html_test(record))
    parts.append("</body></html>")
    with open(path, "w", encoding="utf-8") as out:
        out.write("\n".join(parts))


def _html_test(record: dict[str, Any]) -> str:
    outcome = record.get("outcome", "")
    status = html.escape(outcome)
    out = [
        f"<section class='test'><h2>{html.escape(record['test'])} "
        f"<span class='outcome {status}'>{status}</span></h2>"
    ]
    cassette = record.get("cassette")
    if cassette:
        out.append(
            f"<p class='meta'>cassette: {html.escape(str(cassette.get('path')))} "
            f"({html.escape(str(cassette.get('state')))})</p>"
        )
    policy = record.get("policy")
    if policy:
        out.append(
            f"<p class='meta'>policy: {html.escape(policy['mode'])} "
            f"{html.escape(', '.join(policy['domains']))} "
            f"(from {html.escape(str(policy['from']))})</p>"
        )
    for number, conversation in enumerate(record["conversations"]):
        out.append(f"<h3>Conversation {number}</h3>")
        text_violations: dict[int, list[dict[str, Any]]] = {}
        for violation in conversation["violations"]:
            if violation["span"]:
                text_violations.setdefault(violation["message_index"], []).append(violation)
        for turn in conversation["turns"]:
            marks = [
                (c["start"], c["end"], "cited", c["url"])
                for c in turn["citations"]
                if c["start"] is not None
            ] + [
                (v["span"][0], v["span"][1], "violation", v["url"])
                for v in text_violations.get(turn["message_index"], [])
            ]
            out.append(
                f"<div class='answer' data-message='{turn['message_index']}'>"
                f"{_highlight(turn['text'], marks)}</div>"
            )
        out.append(
            f"<h4>Sources consulted ({len(conversation['sources'])})</h4><ul class='sources'>"
        )
        out += [f"<li>{html.escape(s['url'])}</li>" for s in conversation["sources"]]
        out.append("</ul>")
        if conversation["violations"]:
            out.append(
                f"<h4>Violations ({len(conversation['violations'])})</h4><ul class='violations'>"
            )
            for v in conversation["violations"]:
                rule = f"blocked by {v['rule']}" if v["rule"] else "not on the allowlist"
                out.append(
                    f"<li>{html.escape(v['where'])}, message {v['message_index']}: "
                    f"{html.escape(v['url'])} ({html.escape(rule)})</li>"
                )
            out.append("</ul>")
    out.append("</section>")
    return "\n".join(out)


def _highlight(text: str, marks: list[tuple[int, int, str, str]]) -> str:
    """The text with its marks: violations whole, citations around them, never overlapping."""
    chosen: list[tuple[int, int, str, str]] = []
    for start, end, kind, url in sorted(marks, key=lambda m: (m[2] != "violation", m[0])):
        pieces = [(max(start, 0), min(end, len(text)))]
        for taken_start, taken_end, _, _ in chosen:
            pieces = [
                piece
                for low, high in pieces
                for piece in ((low, min(high, taken_start)), (max(low, taken_end), high))
                if piece[0] < piece[1]
            ]
        chosen += [(low, high, kind, url) for low, high in pieces]
    chosen.sort()
    out, position = [], 0
    for start, end, kind, url in chosen:
        out.append(html.escape(text[position:start]))
        out.append(
            f"<mark class='{kind}' title='{html.escape(url, quote=True)}'>"
            f"{html.escape(text[start:end])}</mark>"
        )
        position = end
    out.append(html.escape(text[position:]))
    return "".join(out)
