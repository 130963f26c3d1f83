"""Drift on re-record: a test that re-records a cassette holding its evidence record shows
what changed, in the terminal summary and in the JSON and HTML reports, and
``--agentloop-drift`` decides whether that fails the run.

Real pytest runs recorded from scripts (no key, no network): record, change the script,
rewrite.
"""

from __future__ import annotations

import json

import pytest

from agentloop_tools._plugin.scope import DRIFT_OPTION, FROM_SCRIPTS_OPTION, REPORT_OPTION

CONFTEST = """
import pytest
from agentloop_tools.testing import anthropic_message, anthropic_search, anthropic_text

URL = {url!r}


@pytest.fixture
def agentloop_script(request):
    return [
        anthropic_message([anthropic_search("python docs", [URL])], stop_reason="pause_turn"),
        anthropic_message([anthropic_text("See " + URL, cite=[URL])]),
    ]
"""

TESTS = """
import pytest
from agentloop_tools.web import native_web_search


@pytest.mark.vcr
def test_search(agentloop_agent, agentloop_evidence):
    agent = agentloop_agent([native_web_search()], provider="anthropic")
    agent.run("Python docs?")
"""

FIRST = "https://docs.python.org/3/"
MOVED = "https://mirror.example.net/python/3/"
REWRITE = ("--record-mode=rewrite", FROM_SCRIPTS_OPTION.flag, "-p", "no:randomly")


@pytest.fixture
def recorded(project: pytest.Pytester) -> pytest.Pytester:
    project.makeconftest(CONFTEST.format(url=FIRST))
    project.makepyfile(test_agent=TESTS)
    result = project.runpytest("--record-mode=once", FROM_SCRIPTS_OPTION.flag, "-p", "no:randomly")
    result.assert_outcomes(passed=1)
    result.stdout.no_fnmatch_line("*evidence drift*")  # a first recording has none to compare
    return project


def test_a_re_recording_that_reaches_another_domain_shows_it_in_the_summary(
    recorded: pytest.Pytester,
) -> None:
    recorded.makeconftest(CONFTEST.format(url=MOVED))
    result = recorded.runpytest(*REWRITE)
    result.assert_outcomes(passed=1)
    assert result.ret == 0  # report, the default: shown, never failing
    result.stdout.fnmatch_lines(
        [
            "evidence drift in test_agent.py::test_search, re-recorded into "
            "cassettes/test_agent/test_search.yaml (a reached domain or the verdict changed):",
            "  domains: 1 added, 1 removed",
            "    + mirror.example.net",
            "    - docs.python.org",
            "  sources: 1 added, 1 removed",
            f"    + {MOVED}",
            f"    - {FIRST}",
            "  citations: 1 added, 1 removed",
        ]
    )
    result.stdout.fnmatch_lines(
        ["1 re-recorded test(s) with evidence drift, shown, not failing (*default*"]
    )


def test_the_same_re_recording_shows_no_drift(recorded: pytest.Pytester) -> None:
    result = recorded.runpytest(*REWRITE)
    result.assert_outcomes(passed=1)
    result.stdout.no_fnmatch_line("*evidence drift*")


@pytest.mark.parametrize("setting", ["fail-on-domains", "fail-on-evidence"])
def test_drift_in_a_reached_domain_fails_the_run_when_asked(
    recorded: pytest.Pytester, setting: str
) -> None:
    recorded.makeconftest(CONFTEST.format(url=MOVED))
    result = recorded.runpytest(*REWRITE, f"{DRIFT_OPTION.flag}={setting}")
    result.assert_outcomes(passed=1)
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines(
        [
            f"evidence drift fails the run ({DRIFT_OPTION.flag}={setting}): 1 test(s): "
            "test_agent.py::test_search. The cassettes are written: review the change*"
        ]
    )


def test_drift_in_evidence_only_fails_only_on_evidence(recorded: pytest.Pytester) -> None:
    # Another page of the same host: no domain appeared, a source did.
    other = "https://docs.python.org/3/tutorial/"
    recorded.makeconftest(CONFTEST.format(url=other))
    result = recorded.runpytest(*REWRITE, f"{DRIFT_OPTION.flag}=fail-on-domains")
    assert result.ret == 0
    result.stdout.fnmatch_lines(["*(sources, citations, links or tool calls changed):"])
    recorded.makeconftest(CONFTEST.format(url=FIRST))
    result = recorded.runpytest(*REWRITE, "-o", "agentloop_drift=fail-on-evidence")
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines(["evidence drift fails the run (ini key agentloop_drift = *"])


def test_the_stricter_of_flag_and_ini_key_wins(recorded: pytest.Pytester) -> None:
    recorded.makeconftest(CONFTEST.format(url=MOVED))
    result = recorded.runpytest(
        *REWRITE, f"{DRIFT_OPTION.flag}=report", "-o", "agentloop_drift=fail-on-domains"
    )
    assert result.ret == pytest.ExitCode.TESTS_FAILED


def test_a_bad_ini_value_is_a_usage_error(recorded: pytest.Pytester) -> None:
    result = recorded.runpytest(*REWRITE, "-o", "agentloop_drift=fail-on-domain")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(
        ["*ini key agentloop_drift = 'fail-on-domain' is not a drift setting: use report, "
         "fail-on-domains, fail-on-evidence*"]
    )  # fmt: skip


def test_a_bad_flag_value_is_a_usage_error(recorded: pytest.Pytester) -> None:
    result = recorded.runpytest(*REWRITE, f"{DRIFT_OPTION.flag}=never")
    assert result.ret == pytest.ExitCode.USAGE_ERROR


def test_the_json_and_html_reports_carry_the_drift(recorded: pytest.Pytester) -> None:
    recorded.makeconftest(CONFTEST.format(url=MOVED))
    result = recorded.runpytest(
        *REWRITE,
        f"{REPORT_OPTION.flag}=report.json",
        "--agentloop-report-html=report.html",
    )
    result.assert_outcomes(passed=1)
    [test] = json.loads((recorded.path / "report.json").read_text())["tests"]
    drift = test["drift"]
    assert drift["cassette"] == "cassettes/test_agent/test_search.yaml"
    assert drift["drift"]["level"] == "domains"
    assert drift["drift"]["domains"] == {
        "added": ["mirror.example.net"],
        "removed": ["docs.python.org"],
    }
    page = (recorded.path / "report.html").read_text()
    assert "Evidence drift (re-recorded):" in page
    assert "+ mirror.example.net" in page


def test_a_verdict_that_changes_is_drift_in_domains(project: pytest.Pytester) -> None:
    marked = '@pytest.mark.vcr\n@pytest.mark.domain_policy(block=["example.net"])\n'
    project.makeconftest(CONFTEST.format(url=FIRST))
    project.makepyfile(test_agent=TESTS.replace("@pytest.mark.vcr\n", marked))
    result = project.runpytest("--record-mode=once", FROM_SCRIPTS_OPTION.flag, "-p", "no:randomly")
    result.assert_outcomes(passed=1)
    project.makeconftest(CONFTEST.format(url=MOVED))
    result = project.runpytest(*REWRITE)
    result.assert_outcomes(failed=1)  # the policy fails the test; drift says what changed
    result.stdout.fnmatch_lines(
        ["*(a reached domain or the verdict changed):", "  verdict: pass -> fail"]
    )


def test_a_stored_record_this_version_cannot_read_is_named_not_passed_over(
    recorded: pytest.Pytester,
) -> None:
    path = recorded.path / "cassettes" / "test_agent" / "test_search.yaml"
    text = path.read_text()
    head, _, block = text.partition("\nevidence:\n")
    path.write_text(head + "\nevidence:\n" + block.replace("schema: 1\n", "schema: 99\n"))
    recorded.makeconftest(CONFTEST.format(url=MOVED))
    result = recorded.runpytest(*REWRITE)
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(
        ["evidence drift of test_agent.py::test_search unknown: the record "
         "cassettes/test_agent/test_search.yaml held could not be read (evidence record "
         "schema 99 is not one this agentloop-tools reads*"]
    )  # fmt: skip
