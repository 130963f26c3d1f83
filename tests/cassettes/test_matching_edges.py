"""Matching a live request to a recorded one at the edges, and how a miss is explained."""

from __future__ import annotations

import json

import pytest
from vcr.request import Request

from agentloop_tools.cassettes import BodyMatcher, closest, summary
from agentloop_tools.cassettes._matching import describe_difference

MESSAGES = "https://api.anthropic.com/v1/messages"
RESPONSES = "https://api.openai.com/v1/responses"


def request(body: object, uri: str = MESSAGES, method: str = "POST") -> Request:
    data = body if body is None or isinstance(body, str | bytes) else json.dumps(body)
    return Request(method, uri, data, {"content-type": "application/json"})


def asking(text: str, model: str = "claude-x") -> dict[str, object]:
    return {"model": model, "messages": [{"role": "user", "content": text}]}


def test_a_body_that_is_not_json_is_compared_as_written() -> None:
    matcher = BodyMatcher()
    matcher(request("q=python&page=1"), request("q=python&page=1"))
    with pytest.raises(AssertionError, match="request bodies differ"):
        matcher(request("q=python&page=1"), request("q=python&page=2"))
    assert matcher.comparable(b"q=python") == "q=python"


def test_the_parsed_bodies_kept_for_reuse_are_bounded() -> None:
    # A long replay compares thousands of bodies: the cache of parsed ones must not grow.
    matcher = BodyMatcher()
    bodies = [json.dumps(asking(f"question {number}")).encode() for number in range(300)]
    for body in bodies:
        matcher.comparable(body)
    assert len(matcher._seen) == 256
    assert bodies[0] not in matcher._seen
    assert bodies[-1] in matcher._seen
    # An evicted body still compares as itself.
    assert matcher.comparable(bodies[0]) == asking("question 0")


def test_a_nested_volatile_path_whose_parent_is_absent_changes_nothing() -> None:
    matcher = BodyMatcher(("metadata.trace", "messages.*.id"))
    # No metadata, and a message that is a plain string: nothing to remove, still compared.
    plain = {"model": "m", "messages": ["hi"]}
    matcher(request(plain), request(plain))
    with pytest.raises(AssertionError):
        matcher(request(plain), request({"model": "m", "messages": ["bye"]}))
    # Where the parent is there, only the named field is set aside.
    matcher(
        request({**plain, "metadata": {"trace": "a", "team": "x"}}),
        request({**plain, "metadata": {"trace": "b", "team": "x"}}),
    )
    with pytest.raises(AssertionError):
        matcher(
            request({**plain, "metadata": {"trace": "a", "team": "x"}}),
            request({**plain, "metadata": {"trace": "a", "team": "y"}}),
        )


def test_no_recorded_request_means_no_closest_one() -> None:
    assert closest(request(asking("hi")), [], BodyMatcher()) is None


def test_the_closest_recorded_request_shares_the_endpoint_then_the_most_text() -> None:
    live = request(asking("What is new in Python 3.13?"))
    recorded = [
        request(asking("What is new in Python 3.13?"), uri=RESPONSES),  # same body, other API
        request(asking("Something else entirely, about the weather in Lisbon today")),
        request(asking("What is new in Python 3.12?")),
    ]
    assert closest(live, recorded, BodyMatcher()) == 2


def test_a_different_method_and_url_are_named_and_an_equal_body_is_not() -> None:
    body = asking("hi")
    lines = describe_difference(
        request(body, uri=MESSAGES + "?beta=true", method="PUT"), request(body), BodyMatcher()
    )
    assert lines == [
        "method: recorded POST, now PUT",
        f"URL: recorded {MESSAGES}",
        f"     now      {MESSAGES}?beta=true",
    ]


def test_a_request_without_a_body_shows_as_no_body_in_the_diff() -> None:
    lines = describe_difference(request(None), request(asking("hi")), BodyMatcher())
    assert "+(no body)" in lines
    assert '-  "model": "claude-x"' in lines


def test_a_text_body_is_diffed_line_by_line() -> None:
    lines = describe_difference(
        request("first\nsecond now\nthird"), request("first\nsecond\nthird"), BodyMatcher()
    )
    assert "-second" in lines
    assert "+second now" in lines


def test_a_long_body_diff_is_cut_and_says_how_much_was_left_out() -> None:
    recorded = {f"field{number:03}": "old" for number in range(60)}
    live = {f"field{number:03}": "new" for number in range(60)}
    full = describe_difference(request(live), request(recorded), BodyMatcher())
    # 125 lines in all: 2 file headers, 1 hunk header, "{" and "}", 60 removed, 60 added.
    assert len(full) == 41
    assert full[-1] == "... (85 more diff lines)"
    # The lines kept are the start of the diff: headers, then the first changes.
    assert full[:2] == ["--- recorded body", "+++ this request's body"]


def test_a_summary_of_a_body_that_is_not_json_names_the_method_and_url_only() -> None:
    assert summary(request("q=python")) == f"POST {MESSAGES}"
    assert summary(request(b"\xff\xfe not json")) == f"POST {MESSAGES}"


def test_a_path_ending_in_a_star_makes_every_element_volatile_but_not_their_count() -> None:
    # "tools.*" used to reach into the list and ignore nothing there.
    matcher = BodyMatcher(("tools.*", "metadata.*"))
    recorded = {"tools": [{"name": "a"}, {"name": "b"}], "metadata": {"run": 1}, "model": "m"}
    matcher(request(recorded), request({**recorded, "tools": [{"name": "x"}, {"name": "y"}]}))
    matcher(request(recorded), request({**recorded, "metadata": {"run": 2}}))
    with pytest.raises(AssertionError, match="request bodies differ"):
        matcher(request(recorded), request({**recorded, "tools": [{"name": "a"}]}))
    with pytest.raises(AssertionError, match="request bodies differ"):
        matcher(request(recorded), request({**recorded, "metadata": {"run": 1, "more": 2}}))
    with pytest.raises(AssertionError, match="request bodies differ"):
        matcher(request(recorded), request({**recorded, "model": "other"}))
