"""Choosing a backend from a mapping, registering one, and choosing hosted or client-side search."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from agentloop import Agent, HostedTool
from agentloop.providers.fake import FakeClient
from agentloop.tooling import ToolSpec

from agentloop_tools.testing import ScriptedSearch, brave_results
from agentloop_tools.web import DomainPolicy, SearchHit, search_tool, sources, web_search
from agentloop_tools.web._search._backends_registry import REGISTRY
from agentloop_tools.web.backends import (
    BraveBackend,
    SearxngBackend,
    TavilyBackend,
    backend_from_env,
    brave,
    register_backend,
)
from tests.search.helpers import BRAVE_KEY, call, results, run_agent


@pytest.fixture
def registry() -> Iterator[None]:
    """Registrations made by a test are undone after it."""
    saved = dict(REGISTRY)
    yield
    REGISTRY.clear()
    REGISTRY.update(saved)


def test_the_one_configured_backend_is_chosen() -> None:
    assert isinstance(backend_from_env({"BRAVE_API_KEY": BRAVE_KEY}), BraveBackend)
    assert isinstance(backend_from_env({"TAVILY_API_KEY": "tvly-x"}), TavilyBackend)
    chosen = backend_from_env({"SEARXNG_URL": "http://searx.local:8080"})
    assert isinstance(chosen, SearxngBackend)
    assert chosen.base_url == "http://searx.local:8080"


def test_the_named_backend_wins_and_names_its_missing_variable() -> None:
    env = {"WEB_SEARCH_BACKEND": "Tavily", "BRAVE_API_KEY": BRAVE_KEY, "TAVILY_API_KEY": "tvly-1"}
    assert isinstance(backend_from_env(env), TavilyBackend)
    with pytest.raises(ValueError, match="EXA_API_KEY is not set"):
        backend_from_env({"WEB_SEARCH_BACKEND": "exa"})


@pytest.mark.parametrize(
    ("env", "message"),
    [
        ({}, "no search backend is configured: set one of BRAVE_API_KEY"),
        ({"BRAVE_API_KEY": ""}, "BRAVE_API_KEY is empty"),
        ({"BRAVE_API_KEY": "a", "EXA_API_KEY": "b"}, "several search backends are configured"),
        ({"WEB_SEARCH_BACKEND": "bing"}, "WEB_SEARCH_BACKEND='bing' names no search backend"),
    ],
)
def test_an_unusable_mapping_is_refused_with_the_remedy(env: dict[str, str], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        backend_from_env(env)


def test_a_registered_backend_runs_in_the_same_engine(registry: None) -> None:
    class Mine:
        name = "mine"

        def build_request(self, query: str, count: int, policy: Any) -> httpx.Request:
            return httpx.Request("GET", "https://search.mine.example/", params={"q": query})

        def parse(self, payload: Any) -> list[SearchHit]:
            return [SearchHit(title=r["t"], url=r["u"], snippet="") for r in payload["rows"]]

    register_backend("mine", lambda env: Mine(), variable="MINE_URL")
    backend = backend_from_env({"MINE_URL": "x"})
    body = {
        "rows": [{"t": "Py", "u": "https://python.org/"}, {"t": "No", "u": "https://no.example/"}]
    }
    client = httpx.Client(transport=httpx.MockTransport(lambda r: httpx.Response(200, json=body)))
    policy = DomainPolicy.allow(["python.org"])
    transcript = run_agent(web_search(backend, policy=policy, http_client=client), [call("python")])
    assert [s.url for s in sources(transcript)] == ["https://python.org/"]
    with pytest.raises(ValueError, match="already registered"):
        register_backend("mine", lambda env: Mine())
    with pytest.raises(ValueError, match="lower-case"):
        register_backend("My Backend", lambda env: Mine())


def test_a_factory_that_returns_no_backend_is_named(registry: None) -> None:
    register_backend("broken", lambda env: object())  # type: ignore[arg-type,return-value]
    with pytest.raises(TypeError, match="'broken' returned"):
        backend_from_env({"WEB_SEARCH_BACKEND": "broken"})


def test_a_backend_that_raises_is_a_search_failed_not_a_traceback() -> None:
    class Crashing:
        name = "crashing"

        def build_request(self, query: str, count: int, policy: Any) -> httpx.Request:
            return httpx.Request("GET", "https://crash.example/")

        def parse(self, payload: Any) -> list[SearchHit]:
            raise KeyError("rows")

    client = httpx.Client(transport=httpx.MockTransport(lambda r: httpx.Response(200, json={})))
    [result] = results(run_agent(web_search(Crashing(), http_client=client), [call("python")]))
    assert result.content.startswith(
        "Error: [search-failed] the crashing response could not be read"
    )


# --- hosted or client-side ---------------------------------------------------------


@pytest.mark.parametrize(
    "env",
    [
        {"LLM_PROVIDER": "anthropic"},
        {"LLM_PROVIDER": "anthropic", "ANTHROPIC_BASE_URL": "https://api.anthropic.com"},
        {"LLM_PROVIDER": "openai"},
        {"LLM_PROVIDER": "openai", "OPENAI_API": "responses"},
    ],
)
def test_hosted_search_where_the_endpoint_hosts_it(env: dict[str, str]) -> None:
    chosen = search_tool(env, backend=brave(BRAVE_KEY))
    assert isinstance(chosen, HostedTool)
    assert chosen.kind == "web_search"
    policy = DomainPolicy.allow(["python.org"])
    with_policy = search_tool(env, policy=policy)
    assert isinstance(with_policy, HostedTool)
    assert with_policy.options == {"allowed_domains": ["python.org"]}


@pytest.mark.parametrize(
    "env",
    [
        {},
        {"LLM_PROVIDER": "openrouter"},
        {"LLM_PROVIDER": "modal"},
        {"LLM_PROVIDER": "openai", "OPENAI_API": "completions"},
        {"LLM_PROVIDER": "anthropic", "ANTHROPIC_BASE_URL": "https://api.z.example/anthropic"},
    ],
)
def test_client_side_search_elsewhere_and_an_error_without_a_backend(env: dict[str, str]) -> None:
    chosen = search_tool(env, backend=brave(BRAVE_KEY), policy=DomainPolicy.allow(["python.org"]))
    assert isinstance(chosen, ToolSpec)
    assert chosen.name == "web_search"
    with pytest.raises(ValueError, match="and no search backend is configured: set one of"):
        search_tool(env)


def test_an_unknown_provider_is_refused() -> None:
    with pytest.raises(ValueError, match="LLM_PROVIDER='bedrock'"):
        search_tool({"LLM_PROVIDER": "bedrock"}, backend=brave(BRAVE_KEY))


def test_hosted_and_client_side_search_cannot_share_an_agent() -> None:
    hosted = search_tool({"LLM_PROVIDER": "anthropic"})
    client_side = web_search(brave(BRAVE_KEY))
    with pytest.raises(Exception, match="web_search"):
        Agent([hosted, client_side], client=FakeClient(hosted_tools=["web_search"]))


CLIENT_SIDE = [
    {"LLM_PROVIDER": "openai", "OPENAI_API": "completions"},
    {"LLM_PROVIDER": "openrouter"},
    {"LLM_PROVIDER": "anthropic", "ANTHROPIC_BASE_URL": "https://api.z.example/anthropic"},
]


@pytest.mark.parametrize("env", CLIENT_SIDE)
def test_client_side_search_runs_on_the_backend_the_environment_configures(
    env: dict[str, str],
) -> None:
    # The first hour: a chat-completions agent with BRAVE_API_KEY set, and web_search's
    # own keyword arguments (a test transport, the fetch tool's name) passed through.
    script = ScriptedSearch("brave", [brave_results([("https://docs.python.org/3/", "Docs")])])
    chosen = search_tool(
        {**env, "BRAVE_API_KEY": BRAVE_KEY},
        policy=DomainPolicy.allow(["python.org"]),
        http_client=script.http_client(),
        fetch_tool="web_fetch",
        max_results=3,
        name="find",
    )
    assert isinstance(chosen, ToolSpec)
    assert chosen.name == "find"
    assert "web_fetch" in chosen.description
    [result] = results(run_agent(chosen, [call("python docs", name="find")]))
    assert "https://docs.python.org/3/" in result.content
    [sent] = script.sent()
    assert sent["count"] == "3"  # max_results reached the request Brave was sent


@pytest.mark.parametrize(
    "options",
    [
        {"http_client": httpx.Client()},
        {"fetch_tool": "web_fetch"},
        {"max_results": 3},
        {"as_of": "2024-01-01"},
    ],
)
def test_a_client_only_argument_where_hosted_search_is_chosen_is_refused_by_name(
    options: dict[str, Any],
) -> None:
    [name] = options
    for env in ({"LLM_PROVIDER": "anthropic"}, {"LLM_PROVIDER": "openai"}):
        with pytest.raises(ValueError, match=rf"search_tool\(env, {name}=\.\.\.\).*no {name}"):
            search_tool(env, **options)


def test_web_search_defaults_where_hosted_search_is_chosen_change_nothing() -> None:
    # `http_client=None` is what a test passes in replay: nothing is dropped, no error.
    chosen = search_tool(
        {"LLM_PROVIDER": "anthropic"}, http_client=None, name="web_search", max_results=5
    )
    assert isinstance(chosen, HostedTool)


def test_an_argument_web_search_does_not_take_is_a_type_error_on_every_provider() -> None:
    for env in ({"LLM_PROVIDER": "anthropic"}, {"LLM_PROVIDER": "openrouter"}):
        with pytest.raises(TypeError, match="got max_result=, which web_search does not take"):
            search_tool(env, backend=brave(BRAVE_KEY), max_result=3)  # type: ignore[call-arg]
