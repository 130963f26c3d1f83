"""The evidence report as one self-contained HTML page.

The page needs no network and no JavaScript: cited spans are highlighted and violations
marked in place, in words as well as colour; recorded text is shown with control
characters as visible escapes, then escaped.
"""

from __future__ import annotations

import html
import zlib
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from agentloop_tools._report._document import clean, document
from agentloop_tools._report._entries import also_written
from agentloop_tools._visible import visible

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
.drift { border: 2px solid #b26b00; padding: .5em .75em; border-radius: 4px; }
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


# Both as every other output has them: str(Violation) says "conversation 2, message 3".
NUMBERING = (
    "Conversations are numbered from 1. Messages are named by their index in the "
    "conversation's transcript, counted from 0: message index 3 is its fourth message "
    "(message_index in the JSON report, &ldquo;message 3&rdquo; in pytest's failures)."
)


def write_html(path: str, records: Sequence[dict[str, Any]]) -> None:
    """The page of the records, written to ``path``."""
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
        f"{summary['pages_with_violations']} page(s)"
        + _refused_summary(summary.get("refused_attempts", 0))
        + ".</p>",
        f"<p class='meta' id='numbering'>{NUMBERING}</p>",
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
        scripted = (
            ", scripted: no live provider answered" if cassette.get("source") == "scripts" else ""
        )
        out.append(
            f"<p class='meta'>cassette: {_h(str(cassette.get('path')))} "
            f"({_h(str(cassette.get('state')))}{scripted})</p>"
        )
    policy = record.get("policy")
    if policy:
        out.append(
            f"<p class='meta'>policy: {_h(policy['mode'])} "
            f"{_h(', '.join(policy['domains']))} "
            f"(from {_h(str(policy['from']))})</p>"
        )
    out += _html_faults(record.get("web_faults"))
    out += _html_drift(record.get("drift"))
    out += _html_budget(record.get("budget"))
    for number, conversation in enumerate(record["conversations"], start=1):
        out.append(
            f"<h3 id='{_h(_anchor(record['test'], number), quote=True)}'>Conversation {number}</h3>"
        )
        out += _html_conversation(conversation, _anchor(record["test"], number))
    out.append("</section>")
    return "\n".join(out)


def _html_faults(faults: object) -> list[str]:
    """The faults the test injected (``web_faults``), and each one its tools met."""
    if not isinstance(faults, dict):
        return []
    written = [
        f"{kind} {pattern} &rarr; {fault}"
        for kind in ("pages", "searches")
        for pattern, fault in (
            (_h(str(p)), _h(str(f))) for p, f in dict(faults.get(kind) or {}).items()
        )
    ]
    met = [entry for entry in faults.get("met") or () if isinstance(entry, dict)]
    out = [
        f"<p class='meta web-faults'><span class='label'>Web faults injected:</span> "
        f"{'; '.join(written)} ({len(met)} met)</p>"
    ]
    if met:
        out.append("<ul class='faults-met'>")
        out += [
            f"<li>{_h(str(e.get('tool')))} {_h(str(e.get('target')))} &rarr; "
            f"{_h(str(e.get('fault')))}</li>"
            for e in met
        ]
        out.append("</ul>")
    return out


def _html_drift(entry: object) -> list[str]:
    """What the test's re-recording changed in its evidence (``--agentloop-drift``)."""
    if not isinstance(entry, dict) or not isinstance(entry.get("drift"), dict):
        return []
    from agentloop_tools.testing._drift import headline, lines

    drift = entry["drift"]
    return [
        f"<div class='drift' data-level='{_h(str(drift.get('level')), quote=True)}'>"
        f"<p><span class='label'>Evidence drift (re-recorded):</span> {_h(headline(drift))}</p>"
        f"<pre class='message'>{_h(chr(10).join(lines(drift, indent='')))}</pre></div>"
    ]


def _html_budget(budget: object) -> list[str]:
    """The test's budget (``agent_budget``, ``agentloop_budget``) and what it spent."""
    if not isinstance(budget, dict) or not isinstance(budget.get("limits"), dict):
        return []
    given = budget.get("spent")
    spent: dict[str, Any] = given if isinstance(given, dict) else {}
    over = set(budget.get("over") or ())
    shown = []
    for name, limit in budget["limits"].items():
        value = spent.get(name)
        used = "unknown" if value is None else str(value)
        mark = " (over)" if name in over and value is not None else ""
        mark = " (unknown)" if name in over and value is None else mark
        shown.append(f"{_h(str(name))} {_h(used)} of {_h(str(limit))}{mark}")
    return [
        f"<p class='meta budget'><span class='label'>Budget:</span> {'; '.join(shown)} "
        f"(from {_h(str(budget.get('from')))})</p>"
    ]


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
            out.append(_html_question(asked.pop(0)))
        out += _html_turn(turn, text_violations.get(turn["message_index"], []), by_message)
        for number, call in by_message.get(turn["message_index"], []):
            out.append(_html_call(call, number, call_ids[(call["call_id"], call["message_index"])]))
    out += [_html_question(question) for question in asked]
    out += _html_sources(conversation["sources"])
    out += _html_violations(conversation, call_ids)
    return out


def _html_question(question: dict[str, Any]) -> str:
    return (
        f"<blockquote class='question' data-message='{question['message_index']}'>"
        f"<span class='label'>Asked:</span> {_h(question['text'])}</blockquote>"
    )


def _html_turn(
    turn: dict[str, Any],
    in_text: list[dict[str, Any]],
    by_message: dict[int, list[tuple[int, dict[str, Any]]]],
) -> list[str]:
    """One answer turn, its cited spans and text violations marked, then its citations."""
    out = []
    marks = [
        _Mark(c["start"], c["end"], "cited-violation" if c["violation"] else "cited",
              c["url"], number, c["verdict"])
        for number, c in enumerate(turn["citations"], 1)
        if c["start"] is not None
    ] + [
        _Mark(v["span"][0], v["span"][1], "violation", v["url"], 0, v["verdict"])
        for v in in_text
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
    return out


def _html_sources(sources: list[dict[str, Any]]) -> list[str]:
    out = [f"<h4>Sources consulted ({len(sources)})</h4><ul class='sources'>"]
    for source in sources:
        written = _h(also_written(source))
        if source.get("violation"):
            out.append(
                f"<li class='violating'><span class='flag'>VIOLATION</span> "
                f"{_h(source['url'])}{written} ({_h(source['verdict'])})</li>"
            )
        else:
            out.append(f"<li>{_h(source['url'])}{written}</li>")
    out.append("</ul>")
    return out


# A refused attempt, in words: the tool refused the URL, so the policy held.
REFUSED_NOTE = "; refused by the tool, nothing read: the policy held"


def _refused_summary(count: int) -> str:
    return f", of which {count} refused attempt(s) (the policy held)" if count else ""


def _html_violations(
    conversation: dict[str, Any], call_ids: dict[tuple[str, int], str]
) -> list[str]:
    """The violations one line per page, then those a tool call caused, each linked to it."""
    pages = conversation.get("pages", [])
    if not pages:
        return []
    occurrences = len(conversation["violations"])
    out = [
        f"<h4>Violations ({len(pages)} page(s), {occurrences} occurrence(s))</h4>"
        "<ul class='violations'>"
    ]
    out += [f"<li>{_h(_indexed(page['line']) + also_written(page))}</li>" for page in pages]
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
            held = REFUSED_NOTE if violation.get("refused") else ""
            out.append(
                f"<li>{_h(violation['where'])} message index {violation['message_index']}: "
                f"{_h(violation['url'])} ({_h(violation['verdict'])}{held}){pointer}</li>"
            )
        out.append("</ul>")
    return out


def _indexed(line: str) -> str:
    """A page's line (``message 3 source: ...``, as ``str(PageViolation)`` words it) with
    its message labelled an index, beside conversations counted from 1."""
    return "message index " + line[len("message ") :] if line.startswith("message ") else line


def _html_answer(turn: dict[str, Any], marks: list[_Mark]) -> str:
    """The answer rendered as its reader sees it, links marked; the raw text one click away."""
    from agentloop_tools._report import _answer_html

    raw = (
        f"<div class='answer raw' data-message='{turn['message_index']}'>"
        f"{_highlight(turn['text'], marks)}</div>"
    )
    missing = _answer_html.unavailable()
    if missing is not None:
        return f"{raw}<p class='meta'>{_h(missing)}</p>"
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
        flag = "REFUSED ATTEMPT" if violation.get("refused") else "VIOLATION"
        held = REFUSED_NOTE if violation.get("refused") else ""
        out.append(
            f"<p class='flag'>{flag} ({_h(violation['where'])}): {_h(violation['url'])} "
            f"({_h(violation['verdict'])}{held})</p>"
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
