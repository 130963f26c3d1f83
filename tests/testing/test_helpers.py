"""The assertion helpers and the evidence object, on transcripts the real adapters build."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest
from agentloop import Transcript

from agentloop_tools._docs import docs_url
from agentloop_tools.testing import (
    AgentloopEvidence,
    EvidenceAssertionError,
    anthropic_message,
    anthropic_search,
    anthropic_text,
    assert_cited,
    assert_no_violations,
    assert_not_cited,
    assert_searched,
    openai_message,
    openai_response,
)
from agentloop_tools.web import DomainPolicy, Violation
from tests.transcripts import converse

KEY = "sk-ant-api03-" + "S" * 40


@pytest.fixture
def answered() -> Transcript:
    return converse("anthropic", [anthropic_message([
        anthropic_search("python", ["https://docs.python.org/3/library/",
                                    "https://en.wikipedia.org/wiki/Py"]),
        anthropic_text("Python is documented.", cite=["https://docs.python.org/3/library/"]),
        anthropic_text(" More at https://evil.example/page."),
    ])])  # fmt: skip


def message(raised: pytest.ExceptionInfo[EvidenceAssertionError]) -> list[str]:
    return str(raised.value).splitlines()


def test_passing_helpers_return_quietly(answered: Transcript) -> None:
    assert_cited(
        answered, "python.org", "docs.python.org/3/library", "https://docs.python.org/3/library/"
    )
    assert_not_cited(answered, "wikipedia.org")
    assert_searched(answered, "wikipedia.org", "python.org")
    assert_no_violations(answered, DomainPolicy.block(["medium.com"]))


def test_assert_not_cited_lists_the_offending_citations(answered: Transcript) -> None:
    with pytest.raises(EvidenceAssertionError) as raised:
        assert_not_cited(answered, "python.org", "bbc.co.uk")
    assert message(raised) == [
        "assert_not_cited: 1 of 2 target(s) was cited: 'python.org'.",
        "",
        "Looked for: citations the provider attached, and every link in the answers "
        "(to pages the tools returned or not).",
        "",
        "Offending provider citations (1):",
        '  - https://docs.python.org/3/library/  "Python is documented."',
        "",
        "To keep a domain out of answers, filter the search with a DomainPolicy "
        "(web_search(..., policy=...), web_fetch(policy=...) or native_web_search).",
        "",
        f"See {docs_url('assert_not_cited')}.",
    ]


def test_assert_searched_names_the_provider_error() -> None:
    failed = converse("anthropic", [anthropic_message([
        anthropic_search("python news", error="max_uses_exceeded"),
        anthropic_text("No luck."),
    ])])  # fmt: skip
    with pytest.raises(EvidenceAssertionError) as raised:
        assert_searched(failed, "python.org")
    assert message(raised)[:5] == [
        "assert_searched: 1 of 1 target(s) was not among the sources: 'python.org'.",
        "",
        "No sources were consulted.",
        "A web_search call for 'python news' failed with 'max_uses_exceeded'.",
        "A failed search has no sources: see the provider's error code above.",
    ]
    # ...and assert_cited says citations could not be observed, not "not cited".
    with pytest.raises(EvidenceAssertionError) as cited:
        assert_cited(failed, "python.org")
    assert (
        "Citations could not be observed here: every search failed (max_uses_exceeded), so "
        "there was nothing to cite." in message(cited)
    )


def test_no_search_at_all_is_said_plainly() -> None:
    plain = converse("anthropic", [anthropic_message([anthropic_text("From memory.")])])
    with pytest.raises(EvidenceAssertionError) as raised:
        assert_searched(plain, "python.org")
    assert (
        "The agent made no search: is native_web_search() (hosted) or web_search(backend) "
        "(client-side) among its tools?"
    ) in message(raised)
    with pytest.raises(EvidenceAssertionError) as cited:
        assert_cited(plain, "python.org")
    assert any("the agent made no search and fetched no page" in line for line in message(cited))


def test_dynamic_filtering_makes_citations_unobservable() -> None:
    # A search run from code execution (its result has a "caller"): no builder writes it.
    filtered = converse("anthropic", [anthropic_message([
        {"type": "server_tool_use", "id": "c1", "name": "code_execution", "input": {"code": "x"}},
        {"type": "code_execution_tool_result", "tool_use_id": "c1",
         "content": {"type": "code_execution_result", "stdout": "", "stderr": "",
                     "return_code": 0}},
        {"type": "server_tool_use", "id": "s1", "name": "web_search", "input": {"query": "q"}},
        {"type": "web_search_tool_result", "tool_use_id": "s1",
         "content": [{"type": "web_search_result", "url": "https://docs.python.org/3/",
                      "title": "Docs", "encrypted_content": "enc", "page_age": None}],
         "caller": {"tool_id": "c1", "type": "code_execution_20260120"}},
        anthropic_text("Filtered answer."),
    ])])  # fmt: skip
    assert_searched(filtered, "python.org")
    with pytest.raises(EvidenceAssertionError) as raised:
        assert_cited(filtered, "python.org")
    assert any("dynamic filtering" in line for line in message(raised))
    assert "Assert on sources instead: assert_searched(...)." in message(raised)


def test_assert_no_violations_reports_one_line_each_with_an_excerpt(answered: Transcript) -> None:
    with pytest.raises(EvidenceAssertionError) as raised:
        assert_no_violations(answered, DomainPolicy.allow(["python.org"]))
    assert message(raised)[:5] == [
        "assert_no_violations: 2 domain policy violations (DomainPolicy.allow(['python.org'])):",
        "  - source   message 1: https://en.wikipedia.org/wiki/Py  [not on the allowlist]",
        "  - text     message 1: https://evil.example/page  [not on the allowlist]",
        "      ...Python is documented. More at https://evil.example/page....",
        "",
    ]
    with pytest.raises(TypeError, match="needs a DomainPolicy"):
        assert_no_violations(answered, ["python.org"])  # type: ignore[arg-type]


def test_full_url_targets_ignore_tracking_but_keep_their_own_query() -> None:
    text = "See ([python.org](https://docs.python.org/3/?utm_source=openai&v=2))."
    url = "https://docs.python.org/3/?utm_source=openai&v=2"
    cited = converse("openai", [openai_response([openai_message(text, cite=[(url, text[4:-1])])])])
    assert_cited(cited, "https://docs.python.org/3/", "https://docs.python.org/3?v=2")
    with pytest.raises(EvidenceAssertionError):
        assert_cited(cited, "https://docs.python.org/3/?v=3")


@pytest.mark.parametrize(
    ("targets", "error", "text"),
    [
        ((), TypeError, "needs at least one target"),
        (("https://",), ValueError, "is not a valid URL"),
        (("*.python.org",), ValueError, "'*' in the host"),
        ((3,), TypeError, "targets are strings"),
    ],
)
def test_bad_targets_are_refused(
    answered: Transcript, targets: tuple[Any, ...], error: type[Exception], text: str
) -> None:
    with pytest.raises(error, match=text):
        assert_cited(answered, *targets)


def test_secrets_never_reach_a_failure_message() -> None:
    leaky = f"https://evil.example/?key={KEY}"
    # The key is in the citation's URL, its title and its quote (the cited text).
    leaked = converse("anthropic", [anthropic_message([
        anthropic_text(f"quote from {leaky}", cite=[leaky]),
    ])])  # fmt: skip
    with pytest.raises(EvidenceAssertionError) as raised:
        assert_cited(leaked, "python.org")
    assert KEY not in str(raised.value)
    assert "[redacted]" in str(raised.value)


def test_evidence_gathers_every_conversation(answered: Transcript) -> None:
    evidence = AgentloopEvidence()
    evidence.add(answered)
    evidence.add(converse("anthropic", [anthropic_message([
        anthropic_text("y", cite=["https://b.example/"]),
    ])]))  # fmt: skip
    assert repr(evidence) == "<AgentloopEvidence: 2 conversation(s)>"
    assert [s.url for s in evidence.sources()] == [
        "https://docs.python.org/3/library/",
        "https://en.wikipedia.org/wiki/Py",
        "https://b.example/",
    ]
    assert [c.url for c in evidence.citations()] == [
        "https://docs.python.org/3/library/",
        "https://b.example/",
    ]
    policy = DomainPolicy.block(["b.example"])
    audit = evidence.audit(policy)
    # The same shape as policy.audit(transcript); the conversation is on each violation.
    assert all(isinstance(violation, Violation) for violation in audit)
    assert [(v.conversation, v.where, v.url) for v in audit] == [
        (1, "citation", "https://b.example/")
    ]
    assert [replace(v, conversation=0) for v in audit] == policy.audit(evidence.transcripts[1])
    assert str(audit[0]) == (
        "conversation 2, message 1 citation: https://b.example/ (blocked by 'b.example')"
    )
    with pytest.raises(EvidenceAssertionError) as raised:
        assert_not_cited(evidence, "b.example")
    assert message(raised)[0] == "assert_not_cited: 1 of 1 target(s) was cited: 'b.example'."
    with pytest.raises(EvidenceAssertionError) as several:
        assert_no_violations(evidence, DomainPolicy.block(["b.example"]))
    assert (
        "  - citation conversation 2, message 1: https://b.example/  [blocked by 'b.example']"
        in (message(several))
    )


def test_since_reads_one_turn(answered: Transcript) -> None:
    answered.add_user_message("again")
    second = converse("anthropic", [anthropic_message([
        anthropic_text("z", cite=["https://z.example/"]),
    ])])  # fmt: skip
    answered.messages.append(second.messages[-1])
    assert_cited(answered, "z.example", since=-1)
    with pytest.raises(EvidenceAssertionError):
        assert_cited(answered, "python.org", since=-1)
    with pytest.raises(TypeError, match="since must be a message index"):
        assert_cited(answered, "z.example", since="last")  # type: ignore[arg-type]


def test_empty_evidence_says_how_to_capture_conversations() -> None:
    for helper in (assert_cited, assert_searched, assert_not_cited):
        with pytest.raises(EvidenceAssertionError, match="No conversation was captured"):
            helper(AgentloopEvidence(), "python.org")
    with pytest.raises(EvidenceAssertionError, match=r"observer=agentloop_evidence\.observer"):
        assert_no_violations(AgentloopEvidence(), DomainPolicy.allow(["python.org"]))
