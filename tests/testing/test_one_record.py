"""One evidence record: a violation reads the same in every place that shows one.

``str(Violation)``, the page grouping, the assertion helpers, the plugin's reports and
every ``agentloop-tools audit`` format word a verdict through ``Violation.verdict``.
"""

from __future__ import annotations

import html
import json
from pathlib import Path

import pytest
from agentloop import Transcript
from agentloop.transcript import to_jsonl

from agentloop_tools._report import _records as _report
from agentloop_tools._report._entries import page_entries, violation_entry
from agentloop_tools.cli import main
from agentloop_tools.testing import (
    AgentloopEvidence,
    EvidenceAssertionError,
    anthropic_message,
    anthropic_search,
    anthropic_text,
    assert_no_violations,
)
from agentloop_tools.web import DomainPolicy, per_page
from tests.transcripts import converse

PAGE = "https://b.example/page"
POLICIES = {
    "blocked by 'b.example'": DomainPolicy.block(["b.example"]),
    "not on the allowlist": DomainPolicy.allow(["python.org"]),
}


@pytest.fixture(scope="module")
def transcript() -> Transcript:
    return converse("anthropic", [anthropic_message([
        anthropic_search("b", [PAGE]),
        anthropic_text(f"Read {PAGE} now.", cite=[PAGE]),
    ])], prompt="What does b say?")  # fmt: skip


@pytest.mark.parametrize("expected", list(POLICIES))
def test_every_place_words_the_verdict_the_same(
    transcript: Transcript, expected: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    policy = POLICIES[expected]
    violations = policy.audit(transcript)
    assert [v.where for v in violations] == ["source", "citation", "text"]
    assert {v.verdict for v in violations} == {expected}
    assert all(str(v).endswith(f": {PAGE} ({expected})") for v in violations)
    [page] = per_page(violations)
    assert f"({expected}, 3 occurrences)" in str(page)
    [entry] = page_entries(violations)
    assert entry["line"] == str(page)
    assert {violation_entry(v)["verdict"] for v in violations} == {expected}

    with pytest.raises(EvidenceAssertionError) as raised:
        assert_no_violations(transcript, policy)
    assert str(raised.value).count(f"[{expected}]") == 3

    record = _report.test_record(
        "t", [transcript], policy, "here", None, outcome="passed", failure=None
    )
    [conversation] = record["conversations"]
    assert {v["verdict"] for v in conversation["violations"]} == {expected}
    assert [c["verdict"] for c in conversation["turns"][0]["citations"]] == [expected]
    page_html = tmp_path / "r.html"
    _report.write_html(str(page_html), [record])
    assert f"[VIOLATION: {html.escape(expected)}]" in page_html.read_text()

    saved = tmp_path / "run.jsonl"
    saved.write_text(to_jsonl(transcript.messages))
    flag = ["--block", "b.example"] if policy.mode == "block" else ["--allow", "python.org"]
    for fmt in ("table", "github", "junit", "json"):
        assert main(["audit", str(saved), *flag, "--format", fmt]) == 1
        out = capsys.readouterr().out
        if fmt == "json":
            found = json.loads(out)["files"][0]["violations"]
            assert {v["verdict"] for v in found} == {expected}
        else:
            assert out.count(expected) == 3, (fmt, out)


def test_evidence_audit_has_the_shape_of_policy_audit(transcript: Transcript) -> None:
    evidence = AgentloopEvidence()
    evidence.add(transcript)
    evidence.add(transcript)
    policy = POLICIES["not on the allowlist"]
    once = policy.audit(transcript)
    found = evidence.audit(policy)
    assert found[: len(once)] == once, "the first conversation is conversation 0"
    assert [v.conversation for v in found] == [0] * len(once) + [1] * len(once)
    assert str(found[-1]).startswith("conversation 2, message 1 text: ")
