"""Messages about client-side tools say what the tool did: refused, read, withheld."""

from __future__ import annotations

import pytest

from agentloop_tools.testing import EvidenceAssertionError, assert_no_violations
from agentloop_tools.web import DomainPolicy
from tests.testing.client_agent import research

POLICY = DomainPolicy.allow(["python.org"])


def test_a_fetch_the_tool_refused_passes_by_default_the_policy_held() -> None:
    transcript = research(
        "I could not read that page.", fetch=["https://evil.example/page"], policy=POLICY
    )
    [found] = POLICY.audit(transcript)  # still returned, marked
    assert found.refused
    assert_no_violations(transcript, POLICY)


def test_a_refused_fetch_fails_when_asked_and_says_nothing_was_read() -> None:
    transcript = research(
        "I could not read that page.", fetch=["https://evil.example/page"], policy=POLICY
    )
    with pytest.raises(EvidenceAssertionError) as raised:
        assert_no_violations(transcript, POLICY, refused_attempts="fail")
    lines = str(raised.value).splitlines()
    assert lines[0].startswith("assert_no_violations: 1 domain policy violation, refused by the")
    assert lines[1] == (
        "  - tool-call message 3: https://evil.example/page  [not on the allowlist]"
    )
    assert lines[2] == (
        "      refused by web_fetch ([blocked-by-policy]): the policy held, nothing was read"
    )
    assert lines[4].startswith(
        "Each line is a URL web_fetch refused before requesting it: nothing was read and "
        "the policy held. It fails this test because refused attempts are set to fail "
        "(assert_no_violations(refused_attempts='fail'))."
    )
    assert "search filter" not in str(raised.value)


def test_a_refused_fetch_beside_a_real_violation_is_shown_and_said_not_to_fail() -> None:
    transcript = research(
        "See [this](https://evil.example/other).",
        fetch=["https://evil.example/page"],
        policy=POLICY,
    )
    with pytest.raises(EvidenceAssertionError) as raised:
        assert_no_violations(transcript, POLICY)
    text = str(raised.value)
    assert "2 domain policy violations, 1 of them refused by the tool" in text
    assert "refused by web_fetch ([blocked-by-policy]): the policy held" in text
    assert 'does not fail the test (refused_attempts="report")' in text
    assert "keep the model from asking" not in text


def test_a_bad_refused_attempts_value_names_the_allowed_ones() -> None:
    with pytest.raises(ValueError, match="use 'report' or 'fail'"):
        assert_no_violations([], POLICY, refused_attempts="warn")


def test_a_fetch_that_read_a_page_says_what_it_read() -> None:
    transcript = research("Read it.", fetch=["https://docs.python.org/3/old-tutorial.html"])
    policy = DomainPolicy.block(["docs.python.org/3/old-tutorial.html"])
    with pytest.raises(EvidenceAssertionError) as raised:
        assert_no_violations(transcript, policy)
    lines = str(raised.value).splitlines()
    assert lines[1:3] == [
        "  - tool-call message 3: https://docs.python.org/3/old-tutorial.html  "
        "[blocked by 'docs.python.org/3/old-tutorial.html']",
        "      redirected, and read https://docs.python.org/3/tutorial/",
    ]
    assert lines[4].startswith("Each line is a place a finished turn reached a domain")


@pytest.mark.parametrize(
    ("given", "shown"),
    [
        (["python.org"], "['python.org']"),
        ("python.org", "['python.org']"),
        (
            ("a.example", "b.example", "c.example", "d.example"),
            "['a.example', 'b.example', 'c.example', ...]",
        ),
    ],
)
def test_the_constructor_points_at_allow_and_block(given: object, shown: str) -> None:
    with pytest.raises(TypeError) as raised:
        DomainPolicy(given)  # type: ignore[arg-type]
    assert str(raised.value) == (
        f"DomainPolicy({given!r}) is not how a policy is built: write DomainPolicy.allow({shown}) "
        f"to permit only these domains, or DomainPolicy.block({shown}) to permit all but these."
    )
