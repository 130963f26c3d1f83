"""The plugin end to end, the way users meet it: record, replay, and every way it can go wrong.

Each test runs whole pytest sessions in a pytester directory; failure messages are
matched line by line.
"""

from __future__ import annotations

from pathlib import Path
from textwrap import dedent

import pytest
import yaml

from agentloop_tools._plugin.scope import RECORD_IN_CI_OPTION

REAL_LOOKING_KEY = "sk-ant-api03-" + "Q" * 40

AGENT_TEST = """
import pytest
from agentloop_tools.testing import (
    ScriptedProvider, anthropic_message, anthropic_search, anthropic_text,
    assert_cited, assert_searched,
)
from agentloop_tools.web import native_web_search

PROMPT = "What is new in Python 3.13?"
SCRIPT = [
    anthropic_message([
        anthropic_search("python 3.13", ["https://docs.python.org/3/whatsnew/3.13.html",
                                         "https://en.wikipedia.org/wiki/Python"]),
        anthropic_text("It has a new REPL.", cite=["https://docs.python.org/3/whatsnew/3.13.html"]),
    ])
]
RUNS = 1


@pytest.mark.vcr
def test_agent(agentloop_agent, agentloop_evidence):
    scripted = ScriptedProvider("anthropic", SCRIPT * RUNS)
    agent = agentloop_agent([native_web_search(max_uses=2)], provider="anthropic",
                            http_client=scripted.http_client())
    for _ in range(RUNS):
        assert "REPL" in agent.run(PROMPT)
    assert_cited(agentloop_evidence, "python.org")
    assert_searched(agentloop_evidence, "wikipedia.org")
"""

CASSETTE = Path("cassettes", "test_agent", "test_agent.yaml")


@pytest.fixture
def project(project: pytest.Pytester) -> pytest.Pytester:
    project.makepyfile(test_agent=AGENT_TEST)
    return project


def edit(pytester: pytest.Pytester, old: str, new: str) -> None:
    path = pytester.path / "test_agent.py"
    text = path.read_text()
    assert old in text
    path.write_text(text.replace(old, new))


def test_record_then_replay(project: pytest.Pytester) -> None:
    recorded = project.runpytest("--record-mode=once")
    recorded.assert_outcomes(passed=1)
    cassette = project.path / CASSETTE
    data = yaml.safe_load(cassette.read_text())
    [interaction] = data["interactions"]
    # Readable: the JSON bodies are mappings, not escaped strings.
    body = interaction["request"]["body"]["json"]
    assert body["messages"][0]["content"][0]["text"] == "What is new in Python 3.13?"
    assert interaction["response"]["body"]["json"]["content"][0]["type"] == "server_tool_use"
    assert "x-api-key" not in interaction["request"]["headers"]
    assert "authorization" not in interaction["request"]["headers"]

    replayed = project.runpytest()
    replayed.assert_outcomes(passed=1)


def test_a_stale_cassette_fails_at_once_with_the_closest_request_and_a_diff(
    project: pytest.Pytester,
) -> None:
    project.runpytest("--record-mode=once").assert_outcomes(passed=1)
    edit(project, "Python 3.13?", "Python 3.14?")
    result = project.runpytest()
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [
            "agentloop-tools: this request is not in the cassette, so it cannot be replayed.",
            "  POST https://api.anthropic.com/v1/messages  (asks: What is new in Python 3.14?)",
            "",
            "Closest recorded request (interaction 0 of 1):",
            "  POST https://api.anthropic.com/v1/messages  (asks: What is new in Python 3.13?)",
            "  --- recorded body",
            "  +++ this request's body",
            "  @@ *",
            "*",
            "*",
            '  -          "text": "What is new in Python 3.13?",',
            '  +          "text": "What is new in Python 3.14?",',
        ],
        consecutive=True,
    )
    result.stdout.fnmatch_lines(
        [
            # Recorded from scripts, so re-recorded from scripts: no key is needed.
            "  pytest test_agent.py::test_agent --record-mode=rewrite --agentloop-from-scripts",
            "Cassette: */test_agent.yaml",
        ]
    )
    # The real cause, at once: no "Connection error", no retries.
    result.stdout.no_fnmatch_line("*Connection error*")
    result.stdout.no_fnmatch_line("*retrying*")


def test_rewrite_re_records_a_stale_cassette(project: pytest.Pytester) -> None:
    project.runpytest("--record-mode=once").assert_outcomes(passed=1)
    edit(project, "Python 3.13?", "Python 3.14?")
    project.runpytest("--record-mode=rewrite").assert_outcomes(passed=1)
    project.runpytest().assert_outcomes(passed=1)


SHARED_CASSETTE_TESTS = """
from pathlib import Path

import pytest
from agentloop_tools.testing import ScriptedProvider
from agentloop_tools.web import native_web_search

from test_agent import PROMPT, SCRIPT

CASSETTE = Path(__file__).parent / "cassettes" / "test_agent" / "test_agent.yaml"


@pytest.fixture(scope="module")
def vcr_cassette_dir():
    return str(CASSETTE.parent)


def ask(agentloop_agent):
    agent = agentloop_agent([native_web_search(max_uses=2)], provider="anthropic",
                            http_client=ScriptedProvider("anthropic", SCRIPT).http_client())
    return agent.run(PROMPT)


@pytest.mark.default_cassette("test_agent")
@pytest.mark.vcr
@pytest.mark.parametrize("n", range(3))
def test_1_before(agentloop_agent, n):
    assert "new REPL." in ask(agentloop_agent)


def test_2_edit_the_cassette():
    text = CASSETTE.read_text()
    CASSETTE.write_text(text.replace("new REPL.", "new JITs."))


@pytest.mark.default_cassette("test_agent")
@pytest.mark.vcr
def test_3_after(agentloop_agent):
    assert "new JITs." in ask(agentloop_agent)
"""


def test_a_cassette_changed_on_disk_between_tests_is_read_again(
    project: pytest.Pytester,
) -> None:
    # Parsed cassettes are kept for the run; an edit of the same size must still show.
    project.runpytest("--record-mode=once").assert_outcomes(passed=1)
    project.makepyfile(test_shared=SHARED_CASSETTE_TESTS)
    result = project.runpytest("test_shared.py", "-p", "no:randomly")
    result.assert_outcomes(passed=5)


def test_a_missing_cassette_says_where_it_looked_and_how_to_record(
    project: pytest.Pytester,
) -> None:
    result = project.runpytest()
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [
            "agentloop-tools: no cassette for this test at */cassettes/test_agent/test_agent.yaml.",
            "The agent sent: POST https://api.anthropic.com/v1/messages  (asks: What is new*",
            "Record it once with real keys in the environment:",
            "  pytest test_agent.py::test_agent --record-mode=once",
            "or with no key, from the script the agentloop_script fixture gives:",
            "  pytest test_agent.py::test_agent --record-mode=once --agentloop-from-scripts",
            "See https://*/testing.md#recording-without-a-live-provider",
        ],
        consecutive=True,
    )


def test_re_recording_an_unchanged_scripted_test_rewrites_the_same_bytes(
    project: pytest.Pytester,
) -> None:
    project.runpytest("--record-mode=once").assert_outcomes(passed=1)
    recorded = (project.path / CASSETTE).read_bytes()
    project.runpytest("--record-mode=rewrite").assert_outcomes(passed=1)
    assert (project.path / CASSETTE).read_bytes() == recorded


def test_unused_interactions_fail_the_test_by_name(project: pytest.Pytester) -> None:
    edit(project, "RUNS = 1", "RUNS = 2")
    project.runpytest("--record-mode=once").assert_outcomes(passed=1)
    edit(project, "RUNS = 2", "RUNS = 1")
    result = project.runpytest()
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [
            "agentloop-tools: the test passed but left 1 of 2 recorded interaction(s) unused:",
            "  - interaction 1: POST https://api.anthropic.com/v1/messages  (asks: What is new*",
            "",
            "The agent made fewer or different requests than the cassette holds*",
            "  pytest test_agent.py::test_agent --record-mode=rewrite --agentloop-from-scripts",
        ],
        consecutive=True,
    )


def test_a_key_shaped_value_is_never_written(project: pytest.Pytester) -> None:
    edit(project, '"What is new in Python 3.13?"', f'"Use {REAL_LOOKING_KEY} please"')
    result = project.runpytest("--record-mode=once")
    result.assert_outcomes(passed=1, errors=1)
    result.stdout.fnmatch_lines(
        ["*refused to write the cassette *: after scrubbing it still holds 1 credential(s):"]
    )
    result.stdout.no_fnmatch_line(f"*{REAL_LOOKING_KEY}*")
    assert not (project.path / CASSETTE).exists()


USER_MOCK_TEST = """
import httpx2, json, pytest
from agentloop_tools.web import native_web_search
from agentloop_tools.testing import anthropic_message, anthropic_text

KEY = "{key}"


def reply(request):
    sent = request.headers.get("x-api-key") or request.headers.get("authorization", "")
    assert KEY in sent, "recording sends the real key"
    body = anthropic_message([anthropic_text("fine")])
    return httpx2.Response(200, json=body)


@pytest.mark.vcr
def test_agent(agentloop_agent):
    http = None
    if "{mode}" == "record":
        http = httpx2.Client(transport=httpx2.MockTransport(reply))
    agent = agentloop_agent([native_web_search()], provider="anthropic", http_client=http)
    assert agent.run("the key is " + KEY) == "fine"
"""


def test_real_keys_are_scrubbed_and_the_cassette_still_matches_on_replay(
    project: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", REAL_LOOKING_KEY)
    project.makepyfile(test_agent=USER_MOCK_TEST.format(key=REAL_LOOKING_KEY, mode="record"))
    project.runpytest("--record-mode=once").assert_outcomes(passed=1)
    text = (project.path / CASSETTE).read_text()
    assert REAL_LOOKING_KEY not in text
    assert "authorization" not in text
    assert "the key is agentloop-tools-placeholder-ANTHROPIC_API_KEY" in text
    # Replay: the body still carries the key, scrubbed the same way before matching.
    project.makepyfile(test_agent=USER_MOCK_TEST.format(key=REAL_LOOKING_KEY, mode="replay"))
    project.runpytest().assert_outcomes(passed=1)


def test_recording_a_live_provider_without_its_key_is_a_usage_error(
    project: pytest.Pytester,
) -> None:
    project.makepyfile(
        test_agent="""
        import pytest
        from agentloop_tools.web import native_web_search

        @pytest.mark.vcr
        def test_agent(agentloop_agent):
            agentloop_agent([native_web_search()], provider="openai")
        """
    )
    result = project.runpytest("--record-mode=once")
    result.assert_outcomes(errors=0, failed=1)
    result.stdout.fnmatch_lines(
        ["*recording test_agent.py::test_agent with provider 'openai' needs OPENAI_API_KEY*"]
    )


def test_an_agent_without_a_cassette_fails_before_any_request(project: pytest.Pytester) -> None:
    project.makepyfile(
        test_agent="""
        from agentloop import Agent
        from agentloop_tools.web import native_web_search

        def test_factory(agentloop_agent):
            agentloop_agent([native_web_search()], provider="anthropic")

        def test_own_agent(agentloop_env):
            env = dict(agentloop_env, LLM_PROVIDER="openai")
            with Agent.from_env(env, [native_web_search()]) as agent:
                agent.run("hello")
        """
    )
    result = project.runpytest()
    result.assert_outcomes(failed=2)
    result.stdout.fnmatch_lines(
        [
            "agentloop-tools: this test builds an agent but has no cassette, so it would call "
            "the provider live.",
            "Mark it to replay a recorded conversation:",
            "  @pytest.mark.vcr",
        ]
    )
    result.stdout.no_fnmatch_line("*Connection error*")


def test_recording_while_ci_is_set_is_refused(
    project: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CI", "true")
    # Refused for the test that would record, at its setup, before the agent runs; the
    # session itself runs on (other tests are not the plugin's to stop).
    project.makepyfile(test_other="def test_unrelated():\n    pass\n")
    result = project.runpytest("--record-mode=once")
    result.assert_outcomes(passed=1, errors=1)
    result.stdout.fnmatch_lines(
        [
            "*agentloop-tools: this test would record (its cassette is missing) while CI is set.",
            "Cassette: */cassettes/test_agent/test_agent.yaml",
        ]
    )
    result.stdout.fnmatch_lines(["*--agentloop-record-in-ci if recording in CI is intended*"])
    assert not (project.path / "cassettes").exists(), "nothing was recorded"
    project.runpytest("--record-mode=once", RECORD_IN_CI_OPTION.flag).assert_outcomes(passed=2)


def test_plain_vcrpy_cassettes_replay_unchanged(project: pytest.Pytester) -> None:
    demo = Path(__file__).parents[2] / "cassettes" / "demo" / "anthropic-web-search.yaml"
    target = project.path / "cassettes" / "test_agent" / "test_demo.yaml"
    target.parent.mkdir(parents=True)
    target.write_text(demo.read_text())
    assert '"messages"' in target.read_text(), "a plain vcrpy cassette: JSON as a string"
    project.makepyfile(
        test_agent="""
        import pytest
        from agentloop_tools.testing import assert_cited
        from agentloop_tools.web import DomainPolicy

        @pytest.mark.vcr
        def test_demo(agentloop_agent, agentloop_evidence):
            policy = DomainPolicy.allow(["python.org", "realpython.com"])
            agent = agentloop_agent([policy.native_web_search()], provider="anthropic",
                                    model="claude-sonnet-4-5")
            agent.run("What changed in Python 3.13's interactive interpreter?")
            assert_cited(agentloop_evidence, "docs.python.org", "realpython.com")
        """
    )
    project.runpytest().assert_outcomes(passed=1)


def test_helpers_report_under_plain_asserts(project: pytest.Pytester) -> None:
    project.runpytest("--record-mode=once").assert_outcomes(passed=1)
    edit(
        project,
        'assert_cited(agentloop_evidence, "python.org")',
        'assert_cited(agentloop_evidence, "python.org", "wikipedia.org")',
    )
    for flags in ((), ("--assert=plain",)):
        result = project.runpytest(*flags)
        result.assert_outcomes(failed=1)
        result.stdout.fnmatch_lines(
            [
                "E * agentloop_tools.testing.EvidenceAssertionError: assert_cited: 1 of 2 "
                "target(s) was not cited: 'wikipedia.org'.",
                "E*",
                "E * Looked for: citations the provider attached, and links in the answers to "
                "pages the tools returned*",
                "E*",
                "E * Provider citations (1):",
                'E *   - https://docs.python.org/3/whatsnew/3.13.html  "It has a new REPL."',
                "E * Links to pages the tools returned: none.",
                "E*",
                "E * 'wikipedia.org' was searched but never cited; consulted:",
                "E *   - https://en.wikipedia.org/wiki/Python",
            ],
            consecutive=True,
        )
        # The helper's own frames are hidden: the traceback ends in the test.
        result.stdout.no_fnmatch_line("*_assertions.py*")


def test_replay_works_across_xdist_workers(project: pytest.Pytester) -> None:
    project.runpytest("--record-mode=once").assert_outcomes(passed=1)
    dedented = dedent(AGENT_TEST)
    for name in ("test_more", "test_yet_more"):
        project.makepyfile(**{name: dedented})
        cassettes = project.path / "cassettes" / name
        cassettes.mkdir(parents=True)
        (cassettes / "test_agent.yaml").write_text((project.path / CASSETTE).read_text())
    project.runpytest("-n", "2").assert_outcomes(passed=3)


def test_recording_an_own_agent_without_a_key_fails_before_the_request(
    project: pytest.Pytester,
) -> None:
    project.makepyfile(
        test_agent="""
        import pytest
        from agentloop import Agent
        from agentloop_tools.web import native_web_search

        @pytest.mark.vcr
        def test_own_agent(agentloop_env):
            env = dict(agentloop_env, LLM_PROVIDER="openai")
            with Agent.from_env(env, [native_web_search()]) as agent:
                agent.run("hello")
        """
    )
    result = project.runpytest("--record-mode=once")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [
            "agentloop-tools: recording test_agent.py::test_own_agent would send a placeholder "
            "key to api.openai.com: set OPENAI_API_KEY in the environment to record live*"
        ]
    )
