"""Recording refuses a cassette that holds a credential: in every serializer, with one
short message that never shows the value, and without breaking the next test's recording.

Whole pytest sessions in a pytester directory, recording from a scripted provider.
"""

from __future__ import annotations

import json
from pathlib import Path
from textwrap import dedent

import pytest
import yaml

GOOGLE_KEY = "AIza" + "SyA1b2C3d4E5f6G7h8I9j0KlMnOpQrStUvW"
EXA_KEY = "3f2a8b1c-9d4e-4f6a-8b7c-1d2e3f4a5b6c"

TESTS = """
import gc

import pytest
from agentloop_tools.testing import ScriptedProvider, anthropic_message, anthropic_text

def run(agentloop_agent, prompt, answer, times=1):
    scripted = ScriptedProvider("anthropic", [anthropic_message([anthropic_text(answer)])] * times)
    agent = agentloop_agent([], provider="anthropic", http_client=scripted.http_client())
    for _ in range(times):
        agent.run(prompt)
        # A refused cassette left vcrpy patched until garbage collection; collecting
        # mid-test would unpatch this test's recording halfway.
        gc.collect()

@pytest.mark.vcr
def test_a_leaky_prompt(agentloop_agent):
    run(agentloop_agent, "Use the key {key} to search", "Done.")

@pytest.mark.vcr
def test_a_leaky_answer(agentloop_agent):
    run(agentloop_agent, "What is my key?", "Your key is\\t{key}.")

@pytest.mark.vcr
def test_next(agentloop_agent):
    run(agentloop_agent, "Two questions", "Fine.", times=2)

@pytest.mark.vcr
def test_env_key_in_answer(agentloop_agent, agentloop_evidence):
    run(agentloop_agent, "Repeat the Exa key", "It is {exa}.")
"""


@pytest.fixture
def project(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> pytest.Pytester:
    monkeypatch.delenv("CI", raising=False)
    for name in ("ANTHROPIC_API_KEY", "OPENAI_API_KEY", "LLM_PROVIDER"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("EXA_API_KEY", EXA_KEY)
    pytester.makepyfile(test_agent=TESTS.format(key=GOOGLE_KEY, exa=EXA_KEY))
    return pytester


def cassette(project: pytest.Pytester, name: str, suffix: str = "yaml") -> Path:
    return project.path / "cassettes" / "test_agent" / f"{name}.{suffix}"


def test_a_key_in_the_request_is_refused_in_one_short_message(project: pytest.Pytester) -> None:
    result = project.runpytest("--record-mode=once", "-l", "-k", "leaky_prompt")
    result.assert_outcomes(passed=1, errors=1)
    result.stdout.fnmatch_lines(
        [
            "agentloop-tools: refused to write the cassette */test_a_leaky_prompt.yaml: after "
            "scrubbing it still holds 1 credential(s):",
            "  - interaction 0 request body*: Google API key (AIza...(39 chars))",
            "Nothing was written (the file on disk is unchanged).",
            "From the request: the test sent it*",
        ],
        consecutive=True,
    )
    output = result.stdout.str() + result.stderr.str()
    assert GOOGLE_KEY not in output  # not even with -l (show locals)
    assert "Traceback" not in output
    assert "vcr/" not in output
    assert not cassette(project, "test_a_leaky_prompt").exists()


def test_a_key_in_the_response_gets_the_response_advice(project: pytest.Pytester) -> None:
    result = project.runpytest("--record-mode=once", "-k", "leaky_answer")
    result.assert_outcomes(passed=1, errors=1)
    # Written after a tab, YAML would escape it ("\tAIza..."): the check reads it decoded.
    result.stdout.fnmatch_lines(["  - interaction 0 response body*: Google API key*",
                                 "Nothing was written*", "From the response: *"])  # fmt: skip
    result.stdout.no_fnmatch_line("From the request*")
    assert not cassette(project, "test_a_leaky_answer").exists()


def test_the_json_serializer_is_checked_too(project: pytest.Pytester) -> None:
    project.makeconftest(
        """
        import pytest

        @pytest.fixture
        def vcr_config():
            return {"serializer": "json"}
        """
    )
    result = project.runpytest("--record-mode=once", "-k", "leaky")
    result.assert_outcomes(passed=2, errors=2)
    result.stdout.fnmatch_lines(["*refused to write the cassette */test_a_leaky_prompt.json*"])
    assert GOOGLE_KEY not in result.stdout.str()
    assert not cassette(project, "test_a_leaky_prompt", "json").exists()
    assert not cassette(project, "test_a_leaky_answer", "json").exists()


def test_a_refusal_leaves_the_next_recording_whole(project: pytest.Pytester) -> None:
    # In a subprocess: in-process, pytester's recorder keeps every report (and the
    # refused cassette's frames) alive, which hides what garbage collection does.
    recorded = project.runpytest_subprocess("--record-mode=once", "-k", "prompt or next")
    recorded.assert_outcomes(passed=2, errors=1)
    data = yaml.safe_load(cassette(project, "test_next").read_text())
    assert len(data["interactions"]) == 2  # both of its requests, none lost to stale patches
    project.runpytest("-k", "next").assert_outcomes(passed=1)


def test_an_environment_key_becomes_a_placeholder_in_cassettes_and_reports(
    project: pytest.Pytester,
) -> None:
    result = project.runpytest(
        "--record-mode=once", "-k", "env_key", "--agentloop-report", "report.json",
        "--agentloop-report-html", "report.html",
    )  # fmt: skip
    result.assert_outcomes(passed=1)
    written = cassette(project, "test_env_key_in_answer").read_text()
    assert EXA_KEY not in written
    assert "agentloop-tools-placeholder-EXA_API_KEY" in written
    for report in ("report.json", "report.html"):
        text = (project.path / report).read_text()
        assert EXA_KEY not in text, report
        assert "agentloop-tools-placeholder-EXA_API_KEY" in text, report
    json.loads((project.path / "report.json").read_text())


def test_only_allowlisted_headers_are_recorded(project: pytest.Pytester) -> None:
    project.makeconftest(
        dedent(
            """
            import pytest

            @pytest.fixture
            def vcr_config():
                def add(request):
                    request.headers["X-Auth-Token"] = "tok_" + "9f8e7d6c5b4a" * 3
                    request.uri += "?client_secret=abc123def456&beta=true"
                    return request
                return {"before_record_request": add}
            """
        )
    )
    project.runpytest("--record-mode=once", "-k", "next").assert_outcomes(passed=1)
    data = yaml.safe_load(cassette(project, "test_next").read_text())
    request = data["interactions"][0]["request"]
    assert "X-Auth-Token" not in request["headers"]
    assert request["uri"].endswith("?client_secret=%5Bscrubbed%5D&beta=true")
    stainless = {name for name in request["headers"] if name.startswith("x-stainless-")}
    assert set(request["headers"]) - stainless <= {
        "accept", "accept-encoding", "connection", "content-length", "content-type", "host",
        "user-agent", "anthropic-version",
    }  # fmt: skip


GITHUB_TOKEN = "ghp_" + "aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3zA5"


@pytest.mark.parametrize("where", ["prompt", "answer"])
def test_one_key_is_listed_once_however_many_ways_it_is_found(
    project: pytest.Pytester, where: str
) -> None:
    # The key ends its string: the body's strings read joined glue the next one onto it.
    prompt, answer = ("Use " + GITHUB_TOKEN, "Done.") if where == "prompt" else (
        "What is it?", "It is " + GITHUB_TOKEN)  # fmt: skip
    project.makepyfile(
        test_github=f"""
        import pytest
        from agentloop_tools.testing import ScriptedProvider, anthropic_message, anthropic_text

        @pytest.mark.vcr
        def test_token(agentloop_agent):
            answer = anthropic_message([anthropic_text({answer!r})])
            scripted = ScriptedProvider("anthropic", [answer])
            agent = agentloop_agent([], provider="anthropic", http_client=scripted.http_client())
            agent.run({prompt!r})
        """
    )
    result = project.runpytest("--record-mode=once", "-k", "test_token")
    result.assert_outcomes(passed=1, errors=1)
    result.stdout.fnmatch_lines(
        [
            "*refused to write the cassette */test_token.yaml: after scrubbing it still "
            "holds 1 credential(s):",
            "  - interaction 0 * body*: GitHub token (ghp_...(40 chars))",
            "Nothing was written (the file on disk is unchanged).",
        ],
        consecutive=True,
    )
