"""Cassettes that know where and when they came from, and say when they are old."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

from tests.plugin.scenarios import LEAKY_TEST


@pytest.fixture
def project(project: pytest.Pytester) -> pytest.Pytester:
    project.makepyfile(test_agent=LEAKY_TEST.format(marker=""))
    return project


def cassette(project: pytest.Pytester) -> Path:
    return project.path / "cassettes" / "test_agent" / "test_agent.yaml"


def test_a_recording_writes_its_provenance_first(project: pytest.Pytester) -> None:
    project.runpytest("--record-mode=once").assert_outcomes(passed=1)
    text = cassette(project).read_text()
    assert text.startswith("provenance:\n  schema: 2\n  recorded_at: ")
    found = yaml.safe_load(text)["provenance"]
    assert found["source"] == "scripts"  # LEAKY_TEST passes a scripted http_client
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", found["recorded_at"])
    assert found["record_mode"] == "once"
    assert found["providers"] == ["anthropic"]
    assert found["agentloop"]
    assert found["agentloop_tools"]
    assert list(found["sdks"]) == ["anthropic"]
    assert "placeholder" not in str(found)
    # And it still replays.
    project.runpytest().assert_outcomes(passed=1)


def test_a_rewrite_of_the_same_interactions_leaves_the_file_byte_identical(
    project: pytest.Pytester,
) -> None:
    # Fresh processes: the scripted provider numbers its ids from 1 in each.
    project.runpytest_subprocess("--record-mode=once").assert_outcomes(passed=1)
    before = cassette(project).read_bytes()
    project.runpytest_subprocess("--record-mode=rewrite").assert_outcomes(passed=1)
    assert cassette(project).read_bytes() == before


def test_a_rewrite_that_changes_the_interactions_writes_new_provenance(
    project: pytest.Pytester,
) -> None:
    project.runpytest("--record-mode=once").assert_outcomes(passed=1)
    old = cassette(project).read_text()
    aged = old.replace(yaml.safe_load(old)["provenance"]["recorded_at"], "2020-01-01T00:00:00Z")
    cassette(project).write_text(aged)
    test_file = project.path / "test_agent.py"
    test_file.write_text(test_file.read_text().replace("Tell me about Python", "And Rust?"))
    project.runpytest("--record-mode=rewrite").assert_outcomes(passed=1)
    found = yaml.safe_load(cassette(project).read_text())["provenance"]
    assert found["recorded_at"] != "2020-01-01T00:00:00Z"
    assert found["record_mode"] == "rewrite"


def age(project: pytest.Pytester, recorded_at: str) -> None:
    text = cassette(project).read_text()
    current = yaml.safe_load(text)["provenance"]["recorded_at"]
    cassette(project).write_text(text.replace(current, recorded_at))


@pytest.mark.parametrize(("action", "outcome"), [("warn", "passed"), ("fail", "failed")])
def test_an_old_cassette_warns_or_fails_with_the_command_to_re_record(
    project: pytest.Pytester, action: str, outcome: str
) -> None:
    project.runpytest("--record-mode=once").assert_outcomes(passed=1)
    age(project, "2020-01-01T00:00:00Z")
    project.makeini(
        f"[pytest]\nagentloop_max_cassette_age = 90d\nagentloop_cassette_age_action = {action}\n"
    )
    result = project.runpytest("-W", "default::pytest.PytestWarning")
    if outcome == "passed":
        result.assert_outcomes(passed=1, warnings=1)
    else:
        result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(
        [
            "*replays a cassette recorded * days ago, older than agentloop_max_cassette_age = 90d*",
            "*pytest test_agent.py::test_agent --record-mode=rewrite*",
        ]
    )


def test_a_fresh_cassette_is_quiet_and_one_without_provenance_is_named(
    project: pytest.Pytester,
) -> None:
    project.runpytest("--record-mode=once").assert_outcomes(passed=1)
    project.makeini(
        "[pytest]\nagentloop_max_cassette_age = 12w\nagentloop_cassette_age_action = fail\n"
    )
    project.runpytest().assert_outcomes(passed=1)
    text = cassette(project).read_text()
    cassette(project).write_text(text[text.index("interactions:") :])
    result = project.runpytest("-W", "default::pytest.PytestWarning")
    result.assert_outcomes(passed=1, warnings=1)
    result.stdout.fnmatch_lines(["*does not say when it was recorded (no provenance)*"])


@pytest.mark.parametrize(
    ("setting", "message"),
    [
        (
            "agentloop_max_cassette_age = 90",
            "*is not an age: write a whole number of days or weeks*",
        ),
        (
            "agentloop_cassette_age_action = error",
            "*agentloop_cassette_age_action = 'error': use warn or fail.",
        ),
    ],
)
def test_a_bad_age_setting_stops_the_run(
    project: pytest.Pytester, setting: str, message: str
) -> None:
    project.makeini(f"[pytest]\n{setting}\n")
    result = project.runpytest()
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([message])
