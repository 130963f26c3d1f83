"""The plugin's surface: the domain_policy marker, ini keys, options, help, imports."""

from __future__ import annotations

import pytest

LEAKY_TEST = """
import pytest
from agentloop_tools.testing import (
    ScriptedProvider, anthropic_message, anthropic_search, anthropic_text,
)
from agentloop_tools.web import native_web_search

SCRIPT = [
    anthropic_message([
        anthropic_search("python", ["https://docs.python.org/3/", "https://en.wikipedia.org/wiki/Python"]),
        anthropic_text("See https://en.wikipedia.org/wiki/Python for history.",
                       cite=["https://docs.python.org/3/"]),
    ])
]


@pytest.mark.vcr
{marker}
def test_agent(agentloop_agent):
    agent = agentloop_agent([native_web_search()], provider="anthropic",
                            http_client=ScriptedProvider("anthropic", SCRIPT).http_client())
    agent.run("Tell me about Python")
"""


@pytest.fixture
def project(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> pytest.Pytester:
    monkeypatch.delenv("CI", raising=False)
    monkeypatch.delenv("LLM_PROVIDER", raising=False)
    return pytester


def test_a_domain_policy_breach_fails_the_test_and_lists_every_violation(
    project: pytest.Pytester,
) -> None:
    project.makepyfile(
        test_agent=LEAKY_TEST.format(marker='@pytest.mark.domain_policy(block=["wikipedia.org"])')
    )
    result = project.runpytest("--record-mode=once")
    result.assert_outcomes(failed=1, errors=0)
    result.stdout.fnmatch_lines(
        [
            "2 domain policy violations (DomainPolicy.block(['wikipedia.org'])):",
            "  - source   message 1: https://en.wikipedia.org/wiki/Python  "
            "[blocked by 'wikipedia.org']",
            "  - text     message 1: https://en.wikipedia.org/wiki/Python  "
            "[blocked by 'wikipedia.org']",
            "      ...See https://en.wikipedia.org/wiki/Python for history....",
            "",
            "Each line is a place a finished turn reached a domain the policy does not permit.*",
            "(policy from the domain_policy marker)",
        ],
        consecutive=True,
    )
    # The same verdict on replay.
    project.runpytest().assert_outcomes(failed=1)


def test_a_clean_run_passes_under_the_marker(project: pytest.Pytester) -> None:
    project.makepyfile(
        test_agent=LEAKY_TEST.format(marker='@pytest.mark.domain_policy(block=["example.com"])')
    )
    project.runpytest("--record-mode=once").assert_outcomes(passed=1)


def test_the_ini_file_sets_a_project_wide_policy(project: pytest.Pytester) -> None:
    project.makeini("[pytest]\nagentloop_allow_domains =\n    python.org\n")
    project.makepyfile(test_agent=LEAKY_TEST.format(marker=""))
    result = project.runpytest("--record-mode=once")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [
            "2 domain policy violations (DomainPolicy.allow(['python.org'])):",
            "*(policy from the ini file)",
        ]
    )
    result.stdout.fnmatch_lines(
        ["agentloop-tools: provider=*, record-mode=once, default policy=allow 1 domain(s)"]
    )


def test_the_marker_overrides_the_ini_policy(project: pytest.Pytester) -> None:
    project.makeini("[pytest]\nagentloop_allow_domains = python.org\n")
    project.makepyfile(
        test_agent=LEAKY_TEST.format(marker='@pytest.mark.domain_policy(block=["example.com"])')
    )
    project.runpytest("--record-mode=once").assert_outcomes(passed=1)


@pytest.mark.parametrize(
    ("marker", "message"),
    [
        ('@pytest.mark.domain_policy(["a.com"])', ": pass keyword arguments only*"),
        ('@pytest.mark.domain_policy(allow=["a.com"], block=["b.com"])', ": pass exactly one of*"),
        ('@pytest.mark.domain_policy(deny=["a.com"])', ": pass exactly one of*unknown: deny."),
        (
            '@pytest.mark.domain_policy(allow=["https://a.com"])',
            "*entry 'https://a.com' has a scheme*",
        ),
        ('@pytest.mark.domain_policy(policy="a.com")', "*policy= must be a DomainPolicy*"),
        ("@pytest.mark.domain_policy(allow=[])", "*needs at least one domain*"),
    ],
)
def test_marker_misuse_is_a_clear_error_even_without_evidence(
    project: pytest.Pytester, marker: str, message: str
) -> None:
    project.makepyfile(
        test_agent=f"""
        import pytest

        {marker}
        def test_agent():
            pass
        """
    )
    result = project.runpytest()
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(
        [f"@pytest.mark.domain_policy on test_agent.py::test_agent{message}"]
    )
    result.stdout.no_fnmatch_line("*During handling*")


def test_a_bad_ini_list_or_provider_is_a_usage_error(project: pytest.Pytester) -> None:
    project.makeini("[pytest]\nagentloop_provider = gemini\n")
    result = project.runpytest()
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(
        ["*agentloop_provider = 'gemini' is not a provider agentloop knows*"]
    )


SCRIPTED_CONVERSATIONS = """
import time
import pytest
import agentloop.retry
from agentloop import Agent
from agentloop_tools.testing import (
    ScriptedProvider, anthropic_message, anthropic_search, anthropic_text,
    openai_message, openai_response, openai_search, assert_cited, assert_searched,
)
from agentloop_tools.web import native_web_search


@pytest.mark.vcr
def test_paused_turn(agentloop_agent, agentloop_evidence):
    script = [
        anthropic_message([anthropic_search("first", ["https://a.example/1"])],
                          stop_reason="pause_turn"),
        anthropic_message([anthropic_search("second", ["https://b.example/2"]),
                           anthropic_text("Done.", cite=["https://b.example/2"])]),
    ]
    agent = agentloop_agent([native_web_search()], provider="anthropic",
                            http_client=ScriptedProvider("anthropic", script).http_client())
    agent.run("search twice")
    [transcript] = agentloop_evidence.transcripts
    assert [m.role for m in transcript.messages] == ["user", "assistant"]
    assert_searched(agentloop_evidence, "a.example", "b.example")
    assert_cited(agentloop_evidence, "b.example")


@pytest.mark.vcr
def test_openai_and_a_retried_overload(agentloop_agent, agentloop_evidence):
    text = "Docs ([python.org](https://docs.python.org/3/?utm_source=openai))."
    script = [
        (500, {"error": {"type": "server_error", "message": "overloaded"}}),
        openai_response([openai_search("python", ["https://docs.python.org/3/"]),
                         openai_message(text, cite=[("https://docs.python.org/3/?utm_source=openai",
                                                     "([python.org](https://docs.python.org/3/?utm_source=openai))")])]),
    ]
    agent = agentloop_agent([native_web_search()], provider="openai",
                            http_client=ScriptedProvider("openai", script).http_client())
    started = time.monotonic()
    agent.run("python docs")
    assert_cited(agentloop_evidence, "https://docs.python.org/3/")
    replaying = agentloop.retry.time is not time
    if replaying:
        assert time.monotonic() - started < 1.0, "replay skips agentloop's backoff sleeps"


@pytest.mark.vcr
def test_own_agent_with_the_evidence_observer(agentloop_env, agentloop_evidence):
    script = [anthropic_message([anthropic_text("Hi.", cite=["https://c.example/"])])]
    env = dict(agentloop_env, LLM_PROVIDER="anthropic")
    http = ScriptedProvider("anthropic", script).http_client()
    with Agent.from_env(env, [native_web_search()], observer=agentloop_evidence.observer,
                        http_client=http) as agent:
        agent.run("hello")
    assert_cited(agentloop_evidence, "c.example")
"""


def test_paused_turns_openai_retries_and_own_agents_record_and_replay(
    project: pytest.Pytester,
) -> None:
    project.makepyfile(test_more=SCRIPTED_CONVERSATIONS)
    project.runpytest("--record-mode=once").assert_outcomes(passed=3)
    project.runpytest().assert_outcomes(passed=3)


def test_help_markers_and_header(project: pytest.Pytester) -> None:
    result = project.runpytest("--help")
    result.stdout.fnmatch_lines(
        [
            "agentloop-tools: agent tests on recorded traffic:",
            "  --agentloop-provider={anthropic,openai,openrouter,modal}",
            "  --agentloop-record-in-ci*",
        ]
    )
    result.stdout.fnmatch_lines(["  agentloop_allow_domains (linelist):*"])
    markers = project.runpytest("--markers")
    markers.stdout.fnmatch_lines(
        ["@pytest.mark.domain_policy(*, allow=None, block=None, policy=None):*"]
    )
    project.makepyfile(test_nothing="def test_nothing(): pass")
    header = project.runpytest("--agentloop-provider=openai")
    header.stdout.fnmatch_lines(
        ["agentloop-tools: provider=openai, record-mode=none, default policy=none"]
    )


def test_the_plugin_imports_nothing_heavy_when_no_test_uses_it(project: pytest.Pytester) -> None:
    project.makepyfile(
        test_plain="""
        import sys

        def test_nothing_heavy_is_imported():
            heavy = {"agentloop", "vcr", "yaml", "anthropic", "httpx2", "agentloop_tools.web",
                     "agentloop_tools.cassettes", "agentloop_tools.testing"}
            assert heavy.isdisjoint(sys.modules), sorted(heavy & set(sys.modules))
        """
    )
    result = project.runpytest_subprocess("-p", "no:recording")
    result.assert_outcomes(passed=1)


def test_the_plugin_can_be_disabled(project: pytest.Pytester) -> None:
    project.makepyfile(test_agent="def test_it(agentloop_agent): pass")
    result = project.runpytest("-p", "no:agentloop_tools")
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(["*fixture 'agentloop_agent' not found*"])


def test_pyproject_sets_the_policy_the_command_line_uses_too(project: pytest.Pytester) -> None:
    project.makepyprojecttoml(
        '[tool.agentloop-tools]\nblock = ["wikipedia.org"]\n\n[tool.pytest.ini_options]\n'
    )
    project.makepyfile(test_agent=LEAKY_TEST.format(marker=""))
    result = project.runpytest("--record-mode=once")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [
            "agentloop-tools: *default policy=block 1 domain(s) from pyproject.toml",
            "*(policy from pyproject.toml ?tool.agentloop-tools?)",
        ]
    )
