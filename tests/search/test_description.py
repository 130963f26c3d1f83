"""What the model is told follows what the agent actually has."""

from __future__ import annotations

import warnings

import pytest

from agentloop_tools.testing import ScriptedPages
from agentloop_tools.web import DomainPolicy, PointInTimeWarning, web_fetch, web_search
from agentloop_tools.web.backends import brave, tavily
from tests.search.helpers import BRAVE_KEY, TAVILY_KEY


def test_the_guidance_is_in_every_description() -> None:
    text = web_search(brave(BRAVE_KEY)).description
    assert "the search provider's opinion, not the truth" in text
    assert "never for quoting" in text
    assert "do not call this tool again this turn" in text
    assert "allowed_domains or blocked_domains" in text


def test_fetching_is_mentioned_only_with_a_fetch_tool() -> None:
    without = web_search(brave(BRAVE_KEY)).description
    assert "fetch" not in without.lower()
    named = web_search(brave(BRAVE_KEY), fetch_tool="read_page").description
    assert "call read_page with its URL" in named
    assert "one or two most promising results, never all of them" in named
    fetch = web_fetch(**ScriptedPages({}).tool_options())
    assert (
        "call web_fetch with its URL" in web_search(brave(BRAVE_KEY), fetch_tool=fetch).description
    )


@pytest.mark.parametrize("bad", ["", "has space", 3])
def test_a_bad_fetch_tool_fails_when_built(bad: object) -> None:
    with pytest.raises(ValueError, match="fetch_tool="):
        web_search(brave(BRAVE_KEY), fetch_tool=bad)  # type: ignore[arg-type]


def test_the_policy_sentence_only_with_a_policy() -> None:
    assert "domain policy" not in web_search(brave(BRAVE_KEY)).description
    with_policy = web_search(brave(BRAVE_KEY), policy=DomainPolicy.allow(["python.org"]))
    assert "outside the domain policy are withheld" in with_policy.description


def test_no_point_in_time_promise_on_a_live_index() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PointInTimeWarning)
        text = web_search(tavily(TAVILY_KEY), as_of="2024-06-30").description
    assert "2024-06-30" not in text


def test_web_fetch_says_how_it_reads() -> None:
    direct = web_fetch().description
    assert "through the" not in direct
    via = web_fetch(via=tavily(TAVILY_KEY), policy=DomainPolicy.allow(["python.org"]))
    assert "Pages are read through the tavily API" in via.description
    assert "outside the domain policy are refused" in via.description
