"""Point-in-time search: what each backend is asked, what we drop, what the model is told."""

from __future__ import annotations

import warnings
from datetime import date
from typing import Any

import httpx
import pytest

from agentloop_tools.testing import (
    ScriptedSearch,
    brave_results,
    exa_results,
    searxng_results,
    tavily_results,
)
from agentloop_tools.web import PointInTimeWarning, SearchHit, SearchOptions, sources, web_search
from agentloop_tools.web.backends import (
    SearchBackend,
    SearchBackendLike,
    brave,
    exa,
    searxng,
    tavily,
)
from tests.search.helpers import (
    BRAVE_KEY,
    EXA_KEY,
    TAVILY_KEY,
    call,
    results,
    run_agent,
    scripted_tool,
)

OLD = ("https://docs.python.org/3/whatsnew/3.12.html", "3.12", "old", "2023-10-02T00:00:00")
NEW = ("https://docs.python.org/3/whatsnew/3.13.html", "3.13", "new", "2024-10-07T00:00:00")
UNDATED = ("https://docs.python.org/3/", "Docs", "undated", None)
SAME_DAY = ("https://docs.python.org/3/x", "X", "same day", "2024-06-30T23:30:00")


def _tool(script: ScriptedSearch, backend: Any, **options: Any) -> Any:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PointInTimeWarning)
        return scripted_tool(script, backend, **options)


def test_brave_gets_an_absolute_freshness_range() -> None:
    script = ScriptedSearch("brave", [brave_results([OLD, NEW])])
    run_agent(_tool(script, brave(BRAVE_KEY), as_of="2024-06-30"), [call("python")])
    assert script.sent()[0]["freshness"] == "1970-01-01to2024-06-30"


def test_exa_gets_end_published_date() -> None:
    script = ScriptedSearch("exa", [exa_results([OLD, NEW])])
    run_agent(_tool(script, exa(EXA_KEY), as_of=date(2024, 6, 30)), [call("python")])
    assert script.sent()[0]["endPublishedDate"] == "2024-06-30"


def test_tavily_gets_end_date() -> None:
    script = ScriptedSearch("tavily", [tavily_results([OLD, NEW])])
    run_agent(_tool(script, tavily(TAVILY_KEY), as_of="2024-06-30"), [call("python")])
    assert script.sent()[0]["end_date"] == "2024-06-30"


def test_searxng_has_only_relative_ranges_so_nothing_is_pushed_down() -> None:
    script = ScriptedSearch("searxng", [searxng_results([OLD, NEW])])
    transcript = run_agent(
        _tool(script, searxng("http://127.0.0.1:8080"), as_of="2024-06-30"), [call("python")]
    )
    sent = script.sent()[0]
    assert "time_range" not in sent
    assert not any("date" in key.lower() for key in sent)
    # Still enforced here.
    assert [s.url for s in sources(transcript)] == [OLD[0]]


@pytest.mark.parametrize("backend", ["brave", "tavily", "exa", "searxng"])
def test_hits_after_as_of_and_undated_hits_are_dropped_in_our_code(backend: str) -> None:
    hits = [NEW, OLD, UNDATED, SAME_DAY]
    replies = {
        "brave": (brave_results, brave(BRAVE_KEY)),
        "tavily": (tavily_results, tavily(TAVILY_KEY)),
        "exa": (exa_results, exa(EXA_KEY)),
        "searxng": (searxng_results, searxng("http://127.0.0.1:8080")),
    }
    build, chosen = replies[backend]
    # The backend ignored the bound (a claimed date is no guarantee): we drop anyway.
    script = ScriptedSearch(backend, [build(hits)])
    transcript = run_agent(_tool(script, chosen, as_of="2024-06-30"), [call("python")])
    [result] = results(transcript)
    assert [s.url for s in sources(transcript)] == [OLD[0], SAME_DAY[0]]
    assert "1 result published after 2024-06-30 dropped" in result.content
    assert "1 result without a publish date dropped" in result.content


def test_undated_keep_keeps_undated_hits() -> None:
    script = ScriptedSearch("brave", [brave_results([NEW, UNDATED])])
    tool = _tool(script, brave(BRAVE_KEY), as_of="2024-06-30", undated="keep")
    transcript = run_agent(tool, [call("python")])
    assert [s.url for s in sources(transcript)] == [UNDATED[0]]


def test_without_as_of_no_date_is_checked_or_sent() -> None:
    script = ScriptedSearch("brave", [brave_results([NEW, UNDATED])])
    transcript = run_agent(scripted_tool(script), [call("python")])
    assert "freshness" not in script.sent()[0]
    assert [s.url for s in sources(transcript)] == [NEW[0], UNDATED[0]]


@pytest.mark.parametrize(
    ("published", "kept"),
    [
        ("2024-06-30", True),
        ("2024-07-01", False),
        ("2024-06-30T22:00:00-05:00", False),  # 03:00 UTC on July 1st
        ("Sun, 30 Jun 2024 10:00:00 GMT", True),
        ("Mon, 01 Jul 2024 10:00:00 GMT", False),
        ("June 30, 2024", True),
        ("July 1, 2024", False),
        ("2 days ago", None),
        ("2024-13-45", None),
    ],
)
def test_publish_dates_as_providers_write_them(published: str, kept: bool | None) -> None:
    hit = ("https://docs.python.org/3/", "Docs", "s", published)
    script = ScriptedSearch("brave", [brave_results([hit])])
    transcript = run_agent(_tool(script, brave(BRAVE_KEY), as_of="2024-06-30"), [call("xy")])
    [result] = results(transcript)
    if kept is None:
        assert "1 result without a publish date dropped" in result.content
    else:
        assert (len(sources(transcript)) == 1) is kept


def test_as_of_on_a_live_index_warns_and_the_model_is_not_told_it_is_bounded() -> None:
    with pytest.warns(PointInTimeWarning, match="no leakage-free guarantee"):
        tool = web_search(brave(BRAVE_KEY), as_of="2024-06-30")
    assert "2024-06-30" not in tool.description
    assert "published on or before" not in tool.description


def _empty(request: httpx.Request) -> httpx.Response:
    return httpx.Response(200, json={})


class FrozenCorpus:
    """A backdated corpus: it honours as_of exactly."""

    name = "frozen"
    exact_as_of = True

    def __init__(self) -> None:
        self.options: list[SearchOptions] = []

    def build_request(self, query: str, count: int, policy: object) -> httpx.Request:
        raise AssertionError("build_search_request is used when present")

    def build_search_request(
        self, query: str, count: int, policy: object, options: SearchOptions
    ) -> httpx.Request:
        self.options.append(options)
        return httpx.Request("GET", "https://corpus.example/search", params={"q": query})

    def parse(self, payload: Any) -> list[SearchHit]:
        return [SearchHit("Old", "https://corpus.example/a", "s", "2020-01-01")]


def test_a_backend_that_honours_as_of_exactly_says_so_and_does_not_warn() -> None:
    backend = FrozenCorpus()
    assert isinstance(backend, SearchBackendLike)
    with warnings.catch_warnings():
        warnings.simplefilter("error", PointInTimeWarning)
        tool = web_search(
            backend,
            as_of="2024-06-30",
            http_client=httpx.Client(
                transport=httpx.MockTransport(lambda r: httpx.Response(200, json={}))
            ),
        )
    assert "Results are limited to pages published on or before 2024-06-30." in tool.description
    run_agent(tool, [call("python")])
    assert backend.options == [SearchOptions(as_of=date(2024, 6, 30))]


def test_exact_as_of_defaults_to_false_and_old_backends_still_work() -> None:
    assert SearchBackend.exact_as_of is False

    class Subclassed(SearchBackend):
        name = "sub"
        exact_as_of = True

        def build_request(self, query: str, count: int, policy: object) -> httpx.Request:
            return httpx.Request("GET", "https://corpus.example/search")

        def parse(self, payload: Any) -> list[SearchHit]:
            return []

    class Plain:
        """A backend written before exact_as_of and build_search_request existed."""

        name = "plain"

        def build_request(self, query: str, count: int, policy: object) -> httpx.Request:
            return httpx.Request("GET", "https://plain.example/search", params={"q": query})

        def parse(self, payload: Any) -> list[SearchHit]:
            return [SearchHit("T", "https://plain.example/a", "s", "2030-01-01")]

    assert Subclassed.exact_as_of is True
    assert isinstance(Plain(), SearchBackendLike)
    seen: list[httpx.Request] = []

    def answer(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return httpx.Response(200, json={})

    with pytest.warns(PointInTimeWarning):
        tool = web_search(
            Plain(),
            as_of="2024-06-30",
            http_client=httpx.Client(transport=httpx.MockTransport(answer)),
        )
    [result] = results(run_agent(tool, [call("python")]))
    assert "1 result published after 2024-06-30 dropped" in result.content
    assert seen[0].url.params["q"] == "python"


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"as_of": "June 2024"}, "as_of='June 2024'"),
        ({"as_of": 20240630}, "as_of=20240630"),
        ({"as_of": "2024-06-30", "undated": "maybe"}, "undated='maybe'"),
        ({"undated": "keep"}, "no effect without as_of"),
    ],
)
def test_bad_point_in_time_options_fail_when_the_tool_is_built(
    options: dict[str, Any], message: str
) -> None:
    with pytest.raises(ValueError, match=message):
        web_search(brave(BRAVE_KEY), **options)
