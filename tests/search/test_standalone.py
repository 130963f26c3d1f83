"""search() and fetch() without an agent: the tools' own results, as objects."""

from __future__ import annotations

import inspect
from collections.abc import Callable

import httpx
import pytest
from agentloop import ToolError

from agentloop_tools.testing import (
    ScriptedPages,
    ScriptedSearch,
    brave_quota_exhausted,
    brave_results,
    tavily_extract,
)
from agentloop_tools.web import (
    DomainPolicy,
    FetchResult,
    PointInTimeWarning,
    SearchResult,
    fetch,
    search,
    web_fetch,
    web_search,
)
from agentloop_tools.web.backends import brave, tavily
from tests.search.helpers import BRAVE_KEY, TAVILY_KEY, call, results, run_agent

DOCS = ("https://docs.python.org/3/whatsnew/3.13.html", "What's New In Python 3.13", "REPL")
EVIL = ("https://evil.example/python", "Mirror", "copy")
POLICY = DomainPolicy.allow(["python.org"])


def test_search_returns_what_the_tool_would_show() -> None:
    script = ScriptedSearch("brave", [brave_results([DOCS, EVIL])] * 2)
    result = search(
        brave(BRAVE_KEY), "python 3.13", policy=POLICY, http_client=script.http_client()
    )
    assert isinstance(result, SearchResult)
    assert result.ok
    assert result.error_code is None
    assert result.error_message is None
    assert [hit.url for hit in result.hits] == [DOCS[0]]
    assert result.hits[0].title == DOCS[1]
    # The same text the model reads from the tool.
    tool = web_search(brave(BRAVE_KEY), policy=POLICY, http_client=script.http_client())
    [seen] = results(run_agent(tool, [call("python 3.13")]))
    assert result.output == seen.content


def test_search_failures_are_results_not_exceptions() -> None:
    script = ScriptedSearch("brave", [brave_quota_exhausted()])
    result = search(brave(BRAVE_KEY), "python", http_client=script.http_client())
    assert not result.ok
    assert result.error_code == "quota-exceeded"
    assert result.output.startswith("Error: [quota-exceeded] ")
    assert result.error_message is not None
    assert "quota is used up" in result.error_message
    assert result.hits == ()
    assert BRAVE_KEY not in result.output


def test_search_takes_the_narrowing_and_the_point_in_time() -> None:
    script = ScriptedSearch("tavily", [(200, {"results": []})])
    conflict = search(
        tavily(TAVILY_KEY), "x y", allowed_domains=["a.example"], blocked_domains=["b.example"]
    )
    assert conflict.error_code == "domain-lists-conflict"
    with pytest.warns(PointInTimeWarning, match="tavily"):
        result = search(
            tavily(TAVILY_KEY),
            "python",
            count=3,
            allowed_domains=["python.org"],
            as_of="2024-06-30",
            http_client=script.http_client(),
        )
    assert result.ok
    [sent] = script.sent()
    assert sent["max_results"] == 3
    assert sent["include_domains"] == ["python.org"]
    assert sent["end_date"] == "2024-06-30"


def test_search_refuses_bad_options_as_the_tool_does() -> None:
    with pytest.raises(ValueError, match="max_results"):
        search(brave(BRAVE_KEY), "python", max_results=0)


PAGE = "https://docs.python.org/3/tutorial/"
HTML = (
    "<html><head><title>Tutorial</title></head><body><p>" + "Read me. " * 40 + "</p></body></html>"
)


def test_fetch_returns_the_page_and_the_text_the_model_would_read() -> None:
    pages = ScriptedPages({PAGE: HTML})
    result = fetch(PAGE, policy=POLICY, max_chars=50, **pages.tool_options())
    assert isinstance(result, FetchResult)
    assert result.ok
    assert result.page is not None
    assert result.page.url == PAGE
    assert result.page.title == "Tutorial"
    assert result.page.text.count("Read me.") == 40  # the whole text
    assert result.output.startswith(f"[web_fetch] url: {PAGE}\n")
    assert "start=50 to continue" in result.output
    later = fetch(PAGE, start=50, max_chars=50, **pages.tool_options())
    assert "[web_fetch] characters: 50-100 of" in later.output


def test_fetch_refusals_are_results_with_their_code() -> None:
    result = fetch("https://evil.example/", policy=POLICY)
    assert not result.ok
    assert result.page is None
    assert result.error_code == "blocked-by-policy"
    assert result.output.startswith("Error: [blocked-by-policy] ")
    assert result.error_message is not None
    assert "evil.example" in result.error_message


def test_fetch_answers_as_the_tool_answers_a_refused_redirect() -> None:
    moved = {PAGE: (302, "", {"location": "https://evil.example/x"})}
    result = fetch(PAGE, policy=POLICY, **ScriptedPages(moved).tool_options())
    assert result.error_code == "blocked-by-policy"
    assert result.output.startswith("Error: [blocked-by-policy] the redirect to https://evil")
    tool = web_fetch(policy=POLICY, **ScriptedPages(moved).tool_options())
    with pytest.raises(ToolError) as raised:
        tool.handler(None, url=PAGE, start=None)
    assert result.output == f"Error: {raised.value}"


def test_fetch_through_a_search_api() -> None:
    script = ScriptedSearch("tavily", [tavily_extract([(PAGE, "Read me. " * 30)])])
    result = fetch(PAGE, via=tavily(TAVILY_KEY), http_client=script.http_client())
    assert result.ok
    assert result.page is not None
    assert "note: read through the tavily API" in result.page.notes
    assert script.sent()[0]["urls"] == [PAGE]


def test_fetch_refuses_bad_options_as_the_tool_does() -> None:
    with pytest.raises(ValueError, match="max_chars"):
        fetch(PAGE, max_chars=0)
    with pytest.raises(TypeError, match="http_client"):
        fetch(PAGE, http_client=httpx.AsyncClient())  # type: ignore[arg-type]


@pytest.mark.parametrize(("standalone", "tool"), [(search, web_search), (fetch, web_fetch)])
def test_the_standalone_functions_default_to_what_the_tools_default_to(
    standalone: Callable[..., object], tool: Callable[..., object]
) -> None:
    mine = inspect.signature(standalone).parameters
    theirs = inspect.signature(tool).parameters
    shared = [name for name in mine if name in theirs and name != "backend"]
    assert len(shared) >= 8
    assert {name: mine[name].default for name in shared} == {
        name: theirs[name].default for name in shared
    }


def test_fetch_refuses_a_bad_limit_once_with_the_tools_message() -> None:
    with pytest.raises(ValueError, match="max_chars") as standalone:
        fetch("https://docs.python.org/3/", max_chars=0)
    with pytest.raises(ValueError, match="max_chars") as tool:
        web_fetch(max_chars=0)
    assert str(standalone.value) == str(tool.value)
