"""The gate covers the whole test, every attempt: teardown's conversations and reruns.

A breach after the body (a fixture's teardown runs one more conversation) is a teardown
error of that test; a breach in an attempt that a rerun plugin retried fails the run,
whatever the rerun did.
"""

from __future__ import annotations

import json

import pytest

AGENT = """
import pytest
from agentloop_tools.testing import ScriptedProvider, anthropic_message, anthropic_text
from agentloop_tools.web import native_web_search


def ask(agentloop_agent, text):
    script = [anthropic_message([anthropic_text(text)])]
    agent = agentloop_agent([native_web_search()], provider="anthropic",
                            http_client=ScriptedProvider("anthropic", script).http_client())
    agent.run("Tell me about Python")
"""

TEARDOWN_AGENT = (
    AGENT
    + """

@pytest.fixture
def one_more_conversation(agentloop_agent):
    yield
    ask(agentloop_agent, "Also see https://en.wikipedia.org/wiki/Python.")


@pytest.mark.vcr
@pytest.mark.domain_policy(block=["wikipedia.org"])
def test_clean_body(agentloop_agent, one_more_conversation):
    ask(agentloop_agent, "See https://docs.python.org/3/.")


@pytest.mark.vcr
@pytest.mark.domain_policy(block=["wikipedia.org"])
def test_clean_throughout(agentloop_agent):
    ask(agentloop_agent, "See https://docs.python.org/3/.")
"""
)


def test_a_conversation_in_teardown_that_breaches_is_a_teardown_error(
    project: pytest.Pytester,
) -> None:
    project.makepyfile(test_agent=TEARDOWN_AGENT)
    result = project.runpytest("--record-mode=once", "--agentloop-report=evidence.json", "-rA")
    result.assert_outcomes(passed=2, errors=1)
    result.stdout.fnmatch_lines(
        [
            "*ERROR at teardown of test_clean_body*",
            "*1 domain policy violation*",
            "*https://en.wikipedia.org/wiki/Python*",
            "*conversation(s) 2 of test_agent.py::test_clean_body ran during teardown*",
        ]
    )
    document = json.loads((project.path / "evidence.json").read_text())
    tests = {test["test"]: test for test in document["tests"]}
    breached = tests["test_agent.py::test_clean_body"]
    assert breached["outcome"] == "error"
    assert len(breached["conversations"]) == 2  # the teardown's conversation is in it
    assert document["summary"]["violations"] == 1
    assert tests["test_agent.py::test_clean_throughout"]["outcome"] == "passed"
    # Replayed, the breach is the same teardown error. (The body's check for unused
    # interactions runs before teardown replays its conversation: that fails too.)
    replay = project.runpytest("--record-mode=none")
    assert replay.parseoutcomes()["errors"] == 1
    replay.stdout.fnmatch_lines(["*ERROR at teardown of test_clean_body*", "*wikipedia.org*"])


RERUN = (
    AGENT
    + """
import os

ATTEMPTS = []


@pytest.mark.domain_policy(block=["wikipedia.org"])
def test_breaches_only_the_first_time(agentloop_agent):
    ATTEMPTS.append(1)
    if len(ATTEMPTS) == 1:
        ask(agentloop_agent, "See https://en.wikipedia.org/wiki/Python.")
    else:
        ask(agentloop_agent, "See https://docs.python.org/3/.")


FLAKY = []


def test_plain_flaky():
    FLAKY.append(1)
    assert len(FLAKY) > 1
"""
)


@pytest.mark.parametrize("workers", [[], ["-n", "1"]], ids=["in-process", "xdist"])
def test_a_breach_in_an_attempt_that_was_rerun_fails_the_run(
    project: pytest.Pytester, workers: list[str]
) -> None:
    pytest.importorskip("pytest_rerunfailures")
    project.makepyfile(test_agent=RERUN)
    # Under xdist the controller must count it: that needs real worker processes.
    run = project.runpytest_subprocess if workers else project.runpytest
    result = run("--reruns", "1", "--agentloop-report=evidence.json", "-p", "no:randomly", *workers)
    # Each test passed on its rerun, as the rerun plugin decides...
    assert result.parseoutcomes() == {"passed": 2, "rerun": 2}
    # ...but the breach in the first attempt fails the run, and is named.
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines(
        [
            "BREACH IN A RERUN ATTEMPT test_agent.py::test_breaches_only_the_first_time "
            "(attempt 1): 1 domain policy violation(s), then rerun.*"
        ]
    )
    document = json.loads((project.path / "evidence.json").read_text())
    attempts = [t for t in document["tests"] if t["test"].endswith("first_time")]
    assert [t["outcome"] for t in attempts] == ["rerun", "passed"]


def test_a_plain_flaky_test_is_rerun_as_before(project: pytest.Pytester) -> None:
    pytest.importorskip("pytest_rerunfailures")
    project.makepyfile(
        test_plain="FLAKY = []\n\ndef test_plain_flaky():\n    FLAKY.append(1)\n"
        "    assert len(FLAKY) > 1\n"
    )
    without = project.runpytest("--reruns", "1", "-p", "no:agentloop_tools")
    with_us = project.runpytest("--reruns", "1")
    assert without.parseoutcomes() == with_us.parseoutcomes() == {"passed": 1, "rerun": 1}
    assert with_us.ret == without.ret == pytest.ExitCode.OK
