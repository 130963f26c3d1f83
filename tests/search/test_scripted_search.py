"""ScriptedSearch: every backend's documented shapes and unhappy paths, through a real Agent."""

from __future__ import annotations

import httpx
import pytest

from agentloop_tools.testing import (
    ScriptedSearch,
    brave_invalid_key,
    brave_quota_exhausted,
    brave_rate_limited,
    brave_results,
    exa_results,
    not_json,
    searxng_results,
    tavily_quota_exhausted,
    tavily_results,
    unauthorized,
)
from agentloop_tools.web import sources
from agentloop_tools.web.backends import SearchBackend, brave, exa, searxng, tavily
from tests.search.helpers import (
    BRAVE_KEY,
    EXA_KEY,
    TAVILY_KEY,
    Clock,
    call,
    results,
    run_agent,
    scripted_tool,
)

DOCS = ("https://docs.python.org/3/", "Python <strong>docs</strong>", "The &quot;docs&quot;")


@pytest.mark.parametrize(
    ("backend", "body"),
    [
        (brave(BRAVE_KEY), brave_results([DOCS], query="python")),
        (tavily(TAVILY_KEY), tavily_results([DOCS])),
        (exa(EXA_KEY), exa_results([DOCS])),
        (searxng("http://localhost:8888"), searxng_results([DOCS])),
    ],
)
def test_every_backend_renders_the_same_cleaned_result(
    backend: SearchBackend, body: tuple[int, dict[str, object]]
) -> None:
    script = ScriptedSearch(backend.name, [body])
    transcript = run_agent(scripted_tool(script, backend), [call("python docs")])
    [result] = results(transcript)
    assert "1. [Python docs](https://docs.python.org/3/)" in result.content
    assert 'The "docs"' in result.content
    assert [s.url for s in sources(transcript)] == ["https://docs.python.org/3/"]
    assert len(script.requests) == 1


def test_a_429_with_retry_after_then_results() -> None:
    script = ScriptedSearch("brave", [brave_rate_limited(retry_after=3), brave_results([DOCS])])
    clock = Clock()
    tool = scripted_tool(script, brave(BRAVE_KEY, requests_per_second=None), clock=clock)
    [result] = results(run_agent(tool, [call("python")]))
    assert not result.is_error
    assert clock.waits == [3.0]


@pytest.mark.parametrize(
    ("backend", "reply", "code"),
    [
        (brave(BRAVE_KEY), brave_invalid_key(), "not-configured"),
        (brave(BRAVE_KEY), brave_quota_exhausted(), "quota-exceeded"),
        (tavily(TAVILY_KEY), tavily_quota_exhausted(433), "quota-exceeded"),
        (exa(EXA_KEY), unauthorized(403), "not-configured"),
        (searxng("http://localhost:8888"), unauthorized(403), "not-configured"),
        (brave(BRAVE_KEY), not_json(), "search-failed"),
    ],
)
def test_unhappy_paths_end_with_their_code(
    backend: SearchBackend, reply: tuple[int, object], code: str
) -> None:
    script = ScriptedSearch(backend.name, [reply])  # type: ignore[list-item]
    [result] = results(run_agent(scripted_tool(script, backend), [call("python")]))
    assert result.content.startswith(f"Error: [{code}] ")


def test_searxng_without_json_names_the_setting() -> None:
    script = ScriptedSearch("searxng", [unauthorized(403)])
    tool = scripted_tool(script, searxng("http://localhost:8888"))
    [result] = results(run_agent(tool, [call("python")]))
    assert "search.formats" in result.content


def test_a_scripted_timeout_and_an_exhausted_script() -> None:
    script = ScriptedSearch("brave", [httpx.ReadTimeout("slow")])
    clock = Clock()
    tool = scripted_tool(script, clock=clock, attempts=2)
    [result] = results(run_agent(tool, [call("python")]))
    assert result.content.startswith("Error: [search-failed] brave failed (HTTP 500, after 2")
    assert "has no response left for request 2" in result.content
    assert len(script.requests) == 2


def test_an_unknown_scripted_backend_is_refused() -> None:
    with pytest.raises(ValueError, match="ScriptedSearch"):
        ScriptedSearch("bing", [])
