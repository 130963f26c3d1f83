"""Recording with no key or network: --agentloop-from-scripts, and agentloop_env in replay."""

from __future__ import annotations

import json

import pytest

from agentloop_tools._plugin.scope import FROM_SCRIPTS_OPTION

SCRIPTED_PROJECT = """
import pytest
from agentloop_tools.testing import (
    ScriptedPages, ScriptedSearch, anthropic_message, anthropic_text, brave_results,
)
from agentloop_tools.web import native_web_search, web_fetch, web_search
from agentloop_tools.web.backends import backend_from_env

SCRIPT = [anthropic_message([anthropic_text("The docs: https://docs.python.org/3/")])]


@pytest.fixture
def agentloop_script():
    return SCRIPT


@pytest.mark.vcr
@pytest.mark.domain_policy(allow=["python.org"])
def test_agent(agentloop_agent, agentloop_env, agentloop_from_scripts):
    search, fetch = None, {}
    if agentloop_from_scripts:
        search = ScriptedSearch(
            "brave", [brave_results([("https://docs.python.org/3/", "Docs")])]
        ).http_client()
        fetch = ScriptedPages({"https://docs.python.org/3/": "<p>docs</p>"}).tool_options()
    tools = [web_search(backend_from_env(agentloop_env), http_client=search)]
    searched = tools[0].handler(None, query="python docs", count=None)
    assert "docs.python.org" in searched
    page = web_fetch(**fetch).handler(None, url="https://docs.python.org/3/")
    assert "docs" in page
    agent = agentloop_agent([native_web_search()], provider="anthropic")
    assert "docs.python.org" in agent.run("Where are the docs?")
"""


def test_a_test_records_from_its_scripts_then_replays_without_them(
    project: pytest.Pytester,
) -> None:
    project.makeini("[pytest]\nagentloop_search_backend = brave\n")
    project.makepyfile(test_agent=SCRIPTED_PROJECT)
    recorded = project.runpytest("--record-mode=once", FROM_SCRIPTS_OPTION.flag)
    recorded.assert_outcomes(passed=1)
    cassette = (project.path / "cassettes" / "test_agent" / "test_agent.yaml").read_text()
    assert "api.search.brave.com" in cassette
    assert "api.anthropic.com" in cassette
    assert "docs.python.org/3/" in cassette
    # Replay: no script, no key, no network; the backend is the one the cassette shows,
    # even with the ini key gone.
    project.makeini("[pytest]\n")
    project.runpytest().assert_outcomes(passed=1)


def test_recording_from_scripts_without_a_script_says_which_fixture_to_write(
    project: pytest.Pytester,
) -> None:
    project.makepyfile(
        test_agent="""
        import pytest
        from agentloop_tools.web import native_web_search

        @pytest.mark.vcr
        def test_agent(agentloop_agent):
            agentloop_agent([native_web_search()], provider="anthropic").run("hi")
        """
    )
    result = project.runpytest("--record-mode=once", FROM_SCRIPTS_OPTION.flag)
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        ["*records from scripts (--agentloop-from-scripts), but the agentloop_script fixture*"]
    )


def test_the_no_cassette_message_names_recording_from_scripts(project: pytest.Pytester) -> None:
    project.makepyfile(
        test_agent="""
        import pytest
        from agentloop_tools.web import native_web_search

        @pytest.mark.vcr
        def test_agent(agentloop_agent):
            agentloop_agent([native_web_search()], provider="anthropic").run("hi")
        """
    )
    result = project.runpytest()
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        ["  pytest test_agent.py::test_agent --record-mode=once --agentloop-from-scripts"]
    )


ENV_PROBE = """
import json, pytest

NAMES = ("BRAVE_API_KEY", "TAVILY_API_KEY", "EXA_API_KEY", "WEB_SEARCH_BACKEND", "SEARXNG_URL")

@pytest.mark.vcr
def test_env(agentloop_env):
    keys = {k: v for k, v in agentloop_env.items() if k in NAMES}
    with open("env.json", "w") as out:
        json.dump(keys, out)
"""


def cassette_with(*uris: str) -> str:
    interactions = "".join(
        f"""- request:
    body: ''
    headers: {{}}
    method: GET
    uri: {uri}
  response:
    body: {{string: '{{}}'}}
    headers: {{}}
    status: {{code: 200, message: OK}}
"""
        for uri in uris
    )
    return f"interactions:\n{interactions}version: 1\n"


@pytest.mark.parametrize(
    ("uris", "expected"),
    [
        (
            ["https://api.tavily.com/search"],
            {"WEB_SEARCH_BACKEND": "tavily", "placeholders": 3},
        ),
        (
            ["https://search.internal.test/searx/search?q=x&format=json"],
            {
                "WEB_SEARCH_BACKEND": "searxng",
                "SEARXNG_URL": "https://search.internal.test/searx",
                "placeholders": 3,
            },
        ),
        (
            ["https://api.tavily.com/search", "https://api.exa.ai/search"],
            {"placeholders": 0},
        ),
    ],
)
def test_in_replay_agentloop_env_names_the_backend_the_cassette_shows(
    project: pytest.Pytester, uris: list[str], expected: dict[str, object]
) -> None:
    project.makepyfile(test_env=ENV_PROBE)
    folder = project.path / "cassettes" / "test_env"
    folder.mkdir(parents=True)
    (folder / "test_env.yaml").write_text(cassette_with(*uris))
    project.runpytest()  # the probe leaves the cassette unused: only the env matters here
    env = json.loads((project.path / "env.json").read_text())
    placeholders = [k for k, v in env.items() if v == f"agentloop-tools-placeholder-{k}"]
    assert len(placeholders) == expected["placeholders"], env
    for name in ("WEB_SEARCH_BACKEND", "SEARXNG_URL"):
        assert env.get(name) == expected.get(name), env


def test_recording_from_scripts_with_no_backend_named_says_which_ini_key_names_it(
    project: pytest.Pytester,
) -> None:
    # The first hour: the same project, without agentloop_search_backend in its ini.
    project.makeini("[pytest]\n")
    project.makepyfile(test_agent=SCRIPTED_PROJECT)
    result = project.runpytest("--record-mode=once", FROM_SCRIPTS_OPTION.flag)
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [
            "*test_agent.py::test_agent records from scripts (--agentloop-from-scripts), and "
            "agentloop_env names no search backend, so backend_from_env found none:",
            "*no search backend is configured*",
            "*Name the backend the test searches with in the ini key agentloop_search_backend "
            "(brave, exa, *searxng, tavily)*",
            "*  agentloop_search_backend = brave",
        ]
    )
    result.stdout.no_fnmatch_line("*_backends_registry.py*")
    result.stdout.no_fnmatch_line("*Traceback*")
    result.stdout.no_fnmatch_line("*traceback entries are hidden*")
    assert not (project.path / "cassettes" / "test_agent" / "test_agent.yaml").exists()


def test_the_help_says_the_search_backend_key_serves_recording_from_scripts(
    project: pytest.Pytester,
) -> None:
    result = project.runpytest("--help")
    help_text = " ".join(result.stdout.str().split())
    entry = help_text.split("agentloop_search_backend", 1)[1][:300]
    assert "recording from scripts" in entry, entry
    assert "brave, tavily, exa, searxng" in entry, entry


def test_in_replay_a_cassette_with_no_search_api_names_the_ini_key_too(
    project: pytest.Pytester,
) -> None:
    project.makepyfile(
        test_env="""
        import pytest
        from agentloop_tools.web import search_tool

        @pytest.mark.vcr
        def test_env(agentloop_env):
            search_tool({**agentloop_env, "LLM_PROVIDER": "openrouter"})
        """
    )
    folder = project.path / "cassettes" / "test_env"
    folder.mkdir(parents=True)
    (folder / "test_env.yaml").write_text("interactions: []\nversion: 1\n")
    result = project.runpytest()
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [
            "*test_env.py::test_env replays a cassette that shows no one search API, and "
            "agentloop_env names no search backend*",
            "*so search_tool chooses client-side search, and no search backend is configured*",
            "*in the ini key agentloop_search_backend (brave, exa, *searxng, tavily)*",
        ]
    )
    result.stdout.no_fnmatch_line("*Traceback*")


def test_the_ci_refusal_names_recording_from_scripts_when_the_run_used_it(
    project: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CI", "true")
    project.makeini("[pytest]\nagentloop_search_backend = brave\n")
    project.makepyfile(test_agent=SCRIPTED_PROJECT)
    result = project.runpytest("--record-mode=once", FROM_SCRIPTS_OPTION.flag)
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(
        [
            "*this test would record (its cassette is missing) while CI is set.",
            "Record it on your machine and commit it:",
            f"  pytest test_agent.py::test_agent --record-mode=once {FROM_SCRIPTS_OPTION.flag}",
        ]
    )
    # Without it, the command records live, as the run would have.
    result = project.runpytest("--record-mode=once")
    result.stdout.fnmatch_lines(["  pytest test_agent.py::test_agent --record-mode=once"])
