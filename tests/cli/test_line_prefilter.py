"""A blocklist skips the audit of log lines that cannot name a blocked host: never a finding.

The line prefilter (``_logs._prefilter``) is a speed-up only. Each test audits the same
log with it and without it (the oracle: every line audited) and compares the pieces
whole: violations (every field, in order), problems, counts; and the rendered report.
Hypothesis builds lines from the text prefilter's fragments (hosts, escapes, unicode,
defanged dots, percent-encoding), in text parts, sources and citations, and spells the
raw JSON with escapes (``\\u002e``, ``\\/``); the corpora are the text and policy
speed tests' and the real recordings' transcripts.
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest
from agentloop import Transcript
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from agentloop_tools._logs import _pieces
from agentloop_tools._logs._pieces import Unit, audit_log_piece
from agentloop_tools._logs._prefilter import line_prefilter
from agentloop_tools.web import DomainPolicy
from tests.real_cassettes import FILES, needs_real_cassettes
from tests.text.test_prefilter import FRAGMENTS, RULES

TEXTS = st.lists(FRAGMENTS, max_size=20).map("".join)
URLS = st.builds(lambda host, rest: f"https://{host}/{rest}", TEXTS, TEXTS)


def _message(role: str, texts: list[str], sources: list[str], cites: list[str]) -> dict[str, Any]:
    content: list[dict[str, Any]] = []
    if sources:
        content.append(
            {
                "type": "hosted_tool",
                "kind": "web_search",
                "call_id": "srvtoolu_1",
                "query": "q",
                "sources": [{"url": url, "title": url} for url in sources],
            }
        )
    for number, text in enumerate(texts):
        citations = [{"url": url, "title": "t", "cited_text": "c"} for url in cites]
        content.append({"type": "text", "text": text, "citations": citations if number else []})
    return {"role": role, "content": content}


MESSAGES = st.builds(
    _message,
    st.sampled_from(["assistant", "assistant", "user"]),
    st.lists(TEXTS, min_size=1, max_size=3),
    st.lists(URLS, max_size=2),
    st.lists(URLS, max_size=2),
)
LINES = st.lists(MESSAGES, min_size=1, max_size=3).map(
    lambda messages: Transcript.model_validate({"messages": messages}).model_dump_json()
)


def _respelled(line: str, draw: random.Random) -> str:
    """The same JSON, some characters written as the escapes a parser decodes."""
    out = []
    for char in line:
        if char in "./:" and draw.random() < 0.3:
            out.append(f"\\u{ord(char):04x}" if char != "/" or draw.random() < 0.5 else "\\/")
        else:
            out.append(char)
    return "".join(out)


def _same(tmp_path: Path, lines: list[str], rules: list[str]) -> _pieces.Part:
    log = tmp_path / "log.jsonl"
    log.write_text("".join(f"{line}\n" for line in lines), encoding="utf-8")
    policy = DomainPolicy.block(rules)
    unit = Unit(str(log), 0, None, log.stat().st_size)
    fast = audit_log_piece(unit, policy)
    full = audit_log_piece(unit, policy, prefiltered=False)
    assert fast == full
    return fast


_SPLIT = (
    '{"messages":[{"role":"assistant","content":[{"type":"text","text":"evil."},'
    '{"type":"text","text":"com"}]}]}'
)
_ATTRIBUTE = (
    '{"messages":[{"role":"assistant","content":[{"type":"text","text":'
    '":h: evil\\n\\nhttps://{h}.com/"}]}]}'
)


@settings(
    max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(lines=st.lists(LINES, min_size=1, max_size=4), rules=RULES, seed=st.integers(0, 2**16))
@example(lines=[_SPLIT], rules=["evil.com"], seed=0)
@example(lines=[_ATTRIBUTE], rules=["evil.com"], seed=0)
def test_generated_logs_audit_as_without_the_prefilter(
    tmp_path: Path, lines: list[str], rules: list[str], seed: int
) -> None:
    draw = random.Random(seed)
    spelled = [_respelled(line, draw) if draw.random() < 0.5 else line for line in lines]
    _same(tmp_path, spelled, rules)


@pytest.mark.parametrize("batch", [1024, 2, 1])
def test_a_host_split_across_text_parts_or_escaped_is_still_found(
    tmp_path: Path, batch: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_pieces, "_BATCH_LINES", batch)  # lines searched at once
    lines = [
        '{"messages":[{"role":"assistant","content":[{"type":"text","text":"see evil."},'
        '{"type":"text","text":"com now"}]}]}',
        '{"messages":[{"role":"assistant","content":[{"type":"text","text":"evil\\u002ecom"}]}]}',
        '{"messages":[{"role":"assistant","content":[{"type":"text","text":"evil\\/.com x"}]}]}',
        '{"messages":[{"role":"assistant","content":[{"type":"text","text":"ev\\til.com"}]}]}',
        '{"messages":[{"role":"assistant","content":[{"type":"text","text":"https://EVIL.com/"}]}]}',
        '{"messages":[{"role":"assistant","content":[{"type":"text","text":"no host here"}]}]}',
        "not json",
        "",
        '{"messages":[{"role":"assistant","content":[{"type":"text","text":"evil.com"}]}]}',
    ]
    part = _same(tmp_path, lines, ["evil.com"])
    assert {violation["line"] for violation in part.violations} == {0, 1, 4, 8}
    assert part.transcripts == 7
    assert len(part.problems) == 1


def test_only_a_blocklist_of_domain_names_is_prefiltered() -> None:
    assert line_prefilter(DomainPolicy.block(["evil.com"])) is not None
    assert line_prefilter(DomainPolicy.block(["evil.com", "10.0.0.1"])) is None
    assert line_prefilter(DomainPolicy.allow(["python.org"])) is None
    assert line_prefilter(object()) is None


def _corpus_lines() -> list[str]:
    from tests.policy.test_hot_path import CORPUS as HOT_PATH
    from tests.text.test_finder_speed import CORPUS as FINDER

    lines = []
    for number, text in enumerate([*HOT_PATH, *FINDER]):
        texts = [text] if number % 2 else [text[: len(text) // 2], text[len(text) // 2 :]]
        lines.append(
            Transcript.model_validate(
                {"messages": [_message("assistant", texts, [], [])]}
            ).model_dump_json()
        )
    return lines


CORPUS_RULES = [
    ["evil.com"],
    ["evil.example", "b.com", "abc.com"],
    ["example.com", "wikipedia.org", "medium.com", "github.com", "python.org"],
]


@pytest.mark.parametrize("rules", CORPUS_RULES, ids=["one", "three", "five"])
def test_the_text_corpora_audit_as_without_the_prefilter(tmp_path: Path, rules: list[str]) -> None:
    _same(tmp_path, _corpus_lines(), rules)


@needs_real_cassettes
@pytest.mark.parametrize("rules", CORPUS_RULES, ids=["one", "three", "five"])
def test_the_real_recordings_audit_as_without_the_prefilter(
    tmp_path: Path, rules: list[str]
) -> None:
    from agentloop_tools.cassettes import Reader

    lines = [
        transcript.model_dump_json()
        for path in FILES
        for transcript in Reader().read(path).transcripts
    ]
    assert lines
    hosts = sorted({json.loads(line)["messages"] and h for line in lines for h in _hosts(line)})
    _same(tmp_path, lines, rules)
    _same(tmp_path, lines, hosts[:50] or rules)


def _hosts(line: str) -> list[str]:
    import re

    return re.findall(r"https?://([a-z0-9.-]+\.[a-z]{2,})", line)


def test_the_report_is_the_same_byte_for_byte(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from agentloop_tools.cli import main

    log = tmp_path / "log.jsonl"
    log.write_text("".join(f"{line}\n" for line in _corpus_lines()), encoding="utf-8")
    reports = {}
    for prefiltered in (True, False):
        if not prefiltered:
            monkeypatch.setattr(_pieces, "line_prefilter", lambda policy: None)
        for form in ("json", "table", "sarif"):
            out = tmp_path / f"{prefiltered}.{form}"
            main(["audit", str(log), "--block", "evil.example", "--format", form, "-o", str(out)])
            reports[prefiltered, form] = out.read_text(encoding="utf-8")
    for form in ("json", "table", "sarif"):
        assert reports[True, form] == reports[False, form], form
    assert json.loads(reports[True, "json"])["summary"]["violations"] > 0
