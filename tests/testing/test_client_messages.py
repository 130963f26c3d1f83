"""Messages about client-side tools say what the tool did: refused, read, withheld."""

from __future__ import annotations

import pytest

from agentloop_tools.testing import EvidenceAssertionError, assert_no_violations
from agentloop_tools.web import DomainPolicy
from tests.testing.client_agent import research

POLICY = DomainPolicy.allow(["python.org"])


def test_a_fetch_the_tool_refused_says_nothing_was_read() -> None:
    transcript = research(
        "I could not read that page.", fetch=["https://evil.example/page"], policy=POLICY
    )
    with pytest.raises(EvidenceAssertionError) as raised:
        assert_no_violations(transcript, POLICY)
    lines = str(raised.value).splitlines()
    assert lines[1] == (
        "  - tool-call message 3: https://evil.example/page  [not on the allowlist]"
    )
    assert lines[2] == "      web_fetch refused it ([blocked-by-policy]): nothing was read"
    assert lines[4].startswith(
        "Each line is a URL the model asked web_fetch for; the tool refused it, so nothing "
        "was requested or read"
    )
    assert "search filter" not in str(raised.value)


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
