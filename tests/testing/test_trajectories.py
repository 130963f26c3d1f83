"""assert_tool_calls: the expected calls against the actual trajectory, and the failure's alignment.

The semantics are checked on trajectories written as ``ToolCall`` lists (what
``tool_calls()`` returns); a real pytest run checks the failure a user sees, with a real
agent on a scripted provider through the plugin's fixtures.
"""

from __future__ import annotations

import re
import textwrap

import pytest
from agentloop.transcript import Message, TextPart, ToolCallPart

from agentloop_tools.testing import (
    AgentloopEvidence,
    EvidenceAssertionError,
    assert_tool_calls,
    tool_call,
)
from agentloop_tools.web import ToolCall

SEARCH = ToolCall(name="web_search", arguments={"query": "python 3.14"}, hosted=True)
FETCH = ToolCall(name="web_fetch", arguments={"url": "https://docs.python.org/3/"})
EVIL = ToolCall(
    name="web_fetch",
    arguments={"url": "https://evil.example/"},
    outcome="refused",
    code="blocked-by-policy",
)
LOOKUP = ToolCall(name="lookup", arguments={"term": "x", "count": 3})


def failure(*args: object, **kwargs: object) -> str:
    with pytest.raises(EvidenceAssertionError) as raised:
        assert_tool_calls(*args, **kwargs)  # type: ignore[arg-type]
    return str(raised.value)


def test_in_order_allows_other_calls_between_and_returns_the_matches() -> None:
    trajectory = [SEARCH, EVIL, LOOKUP, FETCH]
    matched = assert_tool_calls(
        trajectory, tool_call("web_search"), tool_call("web_fetch", url=re.compile("docs"))
    )
    assert matched == [SEARCH, FETCH]


def test_in_order_fails_on_calls_out_of_order_and_says_which() -> None:
    message = failure([FETCH, SEARCH], tool_call("web_search"), tool_call("web_fetch"))
    assert message.startswith(
        "assert_tool_calls: 1 of 2 expected call(s) not found (order='in-order': these calls "
        "in this order, other calls allowed)."
    )
    assert "   1. web_fetch(url='https://docs.python.org/3/') -> ok  (message 0)\n" in message
    assert "  == expected 1" in message
    assert "  --  expected 2 not found: tool_call('web_fetch')" in message
    assert (
        "    - call 1 matches, but comes before call 2 (expected 1's match): out of order"
        in message
    )
    assert "If the order does not matter, pass order='any'." in message


def test_in_order_without_extras_fails_on_a_call_between_the_expected_ones() -> None:
    assert_tool_calls([SEARCH, FETCH], "web_search", "web_fetch", allow_extra=False)
    message = failure([SEARCH, LOOKUP, FETCH], "web_search", "web_fetch", allow_extra=False)
    assert "1 call(s) not expected" in message
    assert "one after the other" in message
    assert "   2. lookup(term='x', count=3) -> ok  (message 0)  <- not expected" in message


def test_in_order_without_extras_allows_calls_before_and_after_the_run() -> None:
    # "Between them" is what allow_extra=False forbids; otherwise it would be "exact".
    calls = [LOOKUP, SEARCH, SEARCH, FETCH, LOOKUP]
    matched = assert_tool_calls(calls, "web_search", "web_fetch", allow_extra=False)
    assert matched == [calls[2], calls[3]]  # the run, not the first search
    message = failure([SEARCH, LOOKUP, FETCH, LOOKUP], "web_search", "web_fetch", allow_extra=False)
    assert "   2. lookup(term='x', count=3) -> ok  (message 0)  <- not expected" in message
    assert "   4. lookup(term='x', count=3) -> ok  (message 0)\n" in message + "\n"


def test_exact_is_these_calls_in_this_order_and_nothing_else() -> None:
    assert_tool_calls([SEARCH, FETCH], "web_search", "web_fetch", order="exact")
    # allow_extra does not apply to "exact": an extra call fails either way.
    message = failure([SEARCH, FETCH, LOOKUP], "web_search", "web_fetch", order="exact")
    assert "   3. lookup(term='x', count=3) -> ok  (message 0)  <- not expected" in message
    message = failure(
        [SEARCH, EVIL],
        "web_search",
        tool_call("web_fetch", url=FETCH.arguments["url"]),
        order="exact",
    )
    assert (
        "!= expected 2: url: 'https://evil.example/', expected 'https://docs.python.org/3/'"
        in message
    )
    message = failure([SEARCH], "web_search", "web_fetch", order="exact")
    assert "  --  expected 2 not found: tool_call('web_fetch')" in message
    assert "    - there is no call 2: 1 call(s) were made" in message


def test_exact_with_no_expected_call_asserts_no_tool_was_called() -> None:
    assert assert_tool_calls([], order="exact") == []
    message = failure([LOOKUP], order="exact")
    assert "  (no tool was called)" not in message
    assert "1 call(s) not expected" in message


def test_any_order_finds_a_matching_a_greedy_pass_would_miss() -> None:
    strict = ToolCall(name="web_search", arguments={"query": "python 3.14"})
    loose = ToolCall(name="web_search", arguments={"query": "other"})
    # The loose expectation comes first and matches both; only one assignment works.
    matched = assert_tool_calls(
        [strict, loose],
        tool_call("web_search"),
        tool_call("web_search", query=re.compile("python")),
        order="any",
    )
    assert matched == [loose, strict]


def test_any_order_without_extras_is_exactly_this_multiset() -> None:
    calls = [SEARCH, FETCH, SEARCH]
    assert_tool_calls(
        calls, "web_fetch", "web_search", "web_search", order="any", allow_extra=False
    )
    message = failure(calls, "web_fetch", "web_search", order="any", allow_extra=False)
    assert "1 call(s) not expected" in message
    message = failure(calls, "web_search", "web_search", "web_search", order="any")
    assert "    - call 1 matches, but it is expected 1's match" in message


def test_each_argument_is_a_value_a_pattern_or_a_predicate_and_others_are_ignored() -> None:
    assert_tool_calls([LOOKUP], tool_call("lookup", count=3))
    assert_tool_calls([LOOKUP], tool_call("lookup", count=re.compile(r"^\d$")))  # on str(value)
    assert_tool_calls([LOOKUP], tool_call("lookup", count=lambda n: n > 2, term="x"))
    message = failure(
        [LOOKUP],
        tool_call("lookup", count=lambda n: n > 5, term=re.compile("y"), missing=1),
    )
    assert (
        "    - call 1 lookup: count: 3 fails <predicate test_each_argument_is_a_value_a_pattern"
        in message
    )
    assert "term: 'x' does not match re.compile('y')" in message
    assert "missing: not given (arguments given: term, count)" in message


def test_a_predicate_that_raises_is_a_mismatch_shown_with_its_error() -> None:
    def strict(value: object) -> bool:
        raise ValueError("cannot judge")

    message = failure([LOOKUP], tool_call("lookup", term=strict))
    assert "term: <predicate test_a_predicate_that_raises" in message
    assert "raised ValueError: 'cannot judge'" in message


def test_a_tool_never_called_names_the_tools_that_were() -> None:
    message = failure([SEARCH, LOOKUP], tool_call("web_fetch"))
    assert "    - no call is named 'web_fetch'; the tools called: 'web_search', 'lookup'" in message


def test_a_transcript_or_messages_are_read_with_tool_calls() -> None:
    messages = [
        Message(role="user", content=(TextPart(text="Go."),)),
        Message(
            role="assistant",
            content=(ToolCallPart(id="a", tool_name="lookup", arguments={"term": "x"}),),
        ),
    ]
    [call] = assert_tool_calls(messages, tool_call("lookup", term="x"))
    assert (call.outcome, call.message_index) == ("no-result", 1)


def test_evidence_with_no_conversation_fails_loudly() -> None:
    message = failure(AgentloopEvidence(), "web_search")
    assert message.startswith("No conversation was captured in agentloop_evidence")


@pytest.mark.parametrize(
    ("call", "error", "says"),
    [
        (lambda: assert_tool_calls([SEARCH], "web_search", order="in_order"),  # type: ignore[arg-type]
         ValueError,
         "order must be one of 'exact', 'in-order', 'any', got 'in_order'"),
        (lambda: assert_tool_calls([SEARCH], "web_search", allow_extra="no"),  # type: ignore[arg-type]
         TypeError,
         "allow_extra must be True or False"),
        (lambda: assert_tool_calls([SEARCH]), TypeError, "was given no expected call"),
        (lambda: assert_tool_calls([SEARCH], ("web_search",)),  # type: ignore[arg-type]
         TypeError,
         "takes expected calls built with tool_call"),
        (lambda: tool_call(""), TypeError, "needs a tool name"),
        (lambda: tool_call("lookup", count=int), TypeError, "count=lambda value: isinstance"),
        (lambda: tool_call("lookup", term=re.compile(b"x")), TypeError, "a bytes pattern"),
        (lambda: assert_tool_calls("web_search", "web_search"), TypeError,
         "expected an agentloop Transcript"),
    ],
)  # fmt: skip
def test_misuse_fails_early_and_names_the_fix(call: object, error: type, says: str) -> None:
    with pytest.raises(error, match=re.escape(says)):
        call()  # type: ignore[operator]


def test_a_hostile_trajectory_gives_a_bounded_terminal_safe_message() -> None:
    key = "sk-ant-api03-" + "A1b2C3d4" * 6
    hostile = ToolCall(name="web_fetch", arguments={"url": f"https://x.example/\x1b[2J{key}"})
    many = [LOOKUP] * 500
    message = failure([hostile, *many], tool_call("web_fetch", url="https://docs.python.org/"))
    assert "\x1b" not in message
    assert key not in message
    assert "  ... and 461 more call(s)" in message
    assert len(message.splitlines()) < 70


def test_an_argument_too_deep_to_print_is_named_not_a_crash() -> None:
    deep: list[object] = []
    for _ in range(100_000):
        deep = [deep]
    call = ToolCall(name="lookup", arguments={"term": deep})
    assert str(call) == "lookup(term=<list that cannot be shown>) -> ok"
    message = failure([call], tool_call("lookup", term=re.compile("x")))
    assert "term: <list that cannot be shown> does not match re.compile('x')" in message


def test_the_expected_call_reads_as_written() -> None:
    expected = tool_call("web_fetch", url=re.compile("docs"), start=0)
    assert repr(expected) == "tool_call('web_fetch', url=re.compile('docs'), start=0)"


AGENT_TEST = """
import re
from agentloop_tools.testing import (
    ScriptedProvider, anthropic_message, anthropic_search, anthropic_text,
    assert_tool_calls, tool_call,
)
from agentloop_tools.web import native_web_search

SCRIPT = [anthropic_message([
    anthropic_search("python release", ["https://www.python.org/downloads/"]),
    anthropic_search("python 3.14 changes", [], error="max_uses_exceeded"),
    anthropic_text("Python 3.14 is out."),
])]

def test_agent(agentloop_agent, agentloop_evidence):
    client = ScriptedProvider("anthropic", SCRIPT).http_client()
    agent = agentloop_agent([native_web_search()], provider="anthropic", http_client=client)
    agent.run("What is new in Python?")
    assert_tool_calls(
        agentloop_evidence,
        tool_call("web_search", query=re.compile("python")),
        tool_call("web_fetch", url="https://docs.python.org/3/whatsnew/"),
    )
"""


@pytest.mark.agentloop_06
@pytest.mark.parametrize("assertions", ["rewrite", "plain"])
def test_a_failing_run_shows_the_trajectory_aligned_against_the_expected_calls(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, assertions: str
) -> None:
    monkeypatch.delenv("CI", raising=False)
    monkeypatch.delenv("LLM_PROVIDER", raising=False)
    pytester.makepyfile(test_agent=textwrap.dedent(AGENT_TEST))
    result = pytester.runpytest_subprocess(f"--assert={assertions}", "-p", "no:cacheprovider")
    result.assert_outcomes(failed=1)
    expected = [
        "assert_tool_calls: 1 of 2 expected call(s) not found (order='in-order': these "
        "calls in this order, other calls allowed).",
        "",
        "Actual trajectory (2 calls), aligned against the expected calls:",
        "   1. web_search(query='python release') (hosted) -> ok  (message 1)  == expected 1",
        "  --  expected 2 not found: tool_call('web_fetch', "
        "url='https://docs.python.org/3/whatsnew/')",
        "   2. web_search(query='python 3.14 changes') (hosted) -> failed "
        "[max_uses_exceeded]  (message 1)",
        "",
        "Why each expected call matched none:",
        "  expected 2: tool_call('web_fetch', url='https://docs.python.org/3/whatsnew/')",
        "    - no call is named 'web_fetch'; the tools called: 'web_search'",
    ]
    result.stdout.fnmatch_lines(
        ["E   *EvidenceAssertionError: " + expected[0]]
        + [f"E       {line}" if line else "E*" for line in expected[1:]],
        consecutive=True,
    )
    result.stdout.fnmatch_lines(["E       See *testing*#trajectories."])
