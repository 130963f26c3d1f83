"""Cassette format v2: provenance says how a cassette was made and under which policy,
and the command line audits it as pytest did."""

from __future__ import annotations

import importlib
import json
from typing import Any

import pytest
import yaml

from agentloop_tools._plugin.scope import FROM_SCRIPTS_OPTION
from agentloop_tools.cli import main

CONFTEST = """
import pytest
from agentloop_tools.testing import (
    anthropic_message, anthropic_search, anthropic_text, chat_completion, openai_message,
    openai_response,
)


def answer(text, urls):
    return [anthropic_message([
        anthropic_search("q", urls), anthropic_text(text, cite=urls[:1]),
    ], model="claude-sonnet-4-5")]


SCRIPTS = {
    "test_python": answer("See https://docs.python.org/3/", ["https://docs.python.org/3/"]),
    "test_replaced": answer(
        "See https://en.wikipedia.org/wiki/Python", ["https://en.wikipedia.org/wiki/Python"]
    ),
    "test_openai": [openai_response([openai_message("See https://docs.python.org/3/")])],
}


@pytest.fixture
def agentloop_script(request):
    return SCRIPTS[request.node.name]
"""

TESTS = """
import pytest
from agentloop_tools.web import native_web_search


@pytest.mark.vcr
@pytest.mark.domain_policy(block=["medium.com"])
def test_python(agentloop_agent):
    agentloop_agent([native_web_search()], provider="anthropic").run("Python docs?")


@pytest.mark.vcr
@pytest.mark.domain_policy(allow=["wikipedia.org"], replace=True)
def test_replaced(agentloop_agent):
    agentloop_agent([native_web_search()], provider="anthropic").run("Python history?")


@pytest.mark.vcr
def test_openai(agentloop_agent):
    agentloop_agent([], provider="openai").run("Python docs?")
"""

PROJECT_POLICY = '[tool.agentloop-tools]\nblock = ["wikipedia.org", "reddit.com"]\n'


@pytest.fixture
def recorded(project: pytest.Pytester) -> pytest.Pytester:
    project.makeconftest(CONFTEST)
    project.makepyfile(test_agent=TESTS)
    project.makefile(".toml", pyproject=PROJECT_POLICY)
    result = project.runpytest("--record-mode=once", FROM_SCRIPTS_OPTION.flag)
    result.assert_outcomes(passed=3)
    return project


def provenance(project: pytest.Pytester, test: str) -> dict[str, Any]:
    path = project.path / "cassettes" / "test_agent" / f"{test}.yaml"
    found: dict[str, Any] = yaml.safe_load(path.read_text())["provenance"]
    return found


def test_a_scripted_recording_says_so_with_its_script_and_the_model_it_claims(
    recorded: pytest.Pytester,
) -> None:
    text = (recorded.path / "cassettes" / "test_agent" / "test_python.yaml").read_text()
    assert text.startswith("provenance:\n  schema: 2\n  recorded_at: ")
    found = provenance(recorded, "test_python")
    assert found["source"] == "scripts"
    assert found["record_mode"] == "once"
    assert found["script"] == {
        "test": "test_agent.py::test_python",
        "origin": "conftest.agentloop_script",
        "model": "claude-sonnet-4-5",
    }
    # The SDKs used, not every SDK installed; the extractors, installed or not.
    assert list(found["sdks"]) == ["anthropic"]
    assert list(provenance(recorded, "test_openai")["sdks"]) == ["httpx"]
    assert set(found["extractors"]) == {"trafilatura", "selectolax", "pypdf"}


def test_the_policy_a_test_ran_under_is_recorded_the_project_policy_by_fingerprint(
    recorded: pytest.Pytester,
) -> None:
    policy = provenance(recorded, "test_python")["policy"]
    assert isinstance(policy, dict)
    assert policy["markers"] == [
        {"from": "the domain_policy marker", "mode": "block", "domains": ["medium.com"]}
    ]
    assert policy["replace"] is False
    project = policy["project"]
    assert project["from"] == "pyproject.toml [tool.agentloop-tools]"
    assert project["mode"] == "block"
    assert project["rules"] == 2
    assert project["fingerprint"].startswith("sha256:")
    assert "wikipedia" not in str(project)  # the rules themselves are never copied
    assert provenance(recorded, "test_replaced")["policy"]["replace"] is True
    assert provenance(recorded, "test_openai")["policy"]["markers"] == []


def test_replaying_never_hashes_the_project_policy_for_a_provenance_it_does_not_write(
    recorded: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The policy block is worked out when a cassette is written; a replayed test
    # writes none, and must not pay for hashing every rule of the project's policy.
    # The module the runs below use (an earlier in-process run's copy was let go).
    _provenance = importlib.import_module("agentloop_tools.cassettes._provenance")
    hashed: list[object] = []
    real = _provenance.fingerprint

    def counted(policy: object) -> str:
        hashed.append(policy)
        return str(real(policy))

    monkeypatch.setattr(_provenance, "fingerprint", counted)
    recorded.runpytest().assert_outcomes(passed=3)
    assert hashed == []
    # (A recording still writes it: the test above.)
    (recorded.path / "cassettes" / "test_agent" / "test_python.yaml").unlink()
    recorded.runpytest("--record-mode=once", FROM_SCRIPTS_OPTION.flag).assert_outcomes(passed=3)
    assert len(hashed) == 1
    assert provenance(recorded, "test_python")["policy"]["project"]["rules"] == 2


def test_the_command_line_agrees_with_pytest_on_every_cassette_of_a_green_run(
    recorded: pytest.Pytester, capsys: pytest.CaptureFixture[str]
) -> None:
    # test_replaced cites wikipedia.org, which the project blocks: its marker replaces
    # the project policy, in pytest and so on the command line.
    recorded.runpytest().assert_outcomes(passed=3)
    capsys.readouterr()
    assert main(["audit", "cassettes"]) == 0
    out, err = capsys.readouterr()
    assert "0 violation" in out or "no violation" in out.lower()
    assert "test_replaced.yaml" in err
    assert "replace=True" in err


def test_the_recorded_markers_apply_on_the_command_line_as_in_pytest(
    recorded: pytest.Pytester, capsys: pytest.CaptureFixture[str]
) -> None:
    cassette = recorded.path / "cassettes" / "test_agent" / "test_python.yaml"
    # The recorded marker blocked python.org instead: pytest would fail this test.
    cassette.write_text(cassette.read_text().replace("- medium.com", "- python.org", 1))
    capsys.readouterr()
    assert main(["audit", str(cassette)]) == 1
    assert "docs.python.org" in capsys.readouterr().out


def test_a_changed_project_policy_is_a_note_naming_the_cassettes(
    recorded: pytest.Pytester, capsys: pytest.CaptureFixture[str]
) -> None:
    recorded.makefile(".toml", pyproject='[tool.agentloop-tools]\nblock = ["reddit.com"]\n')
    capsys.readouterr()
    assert main(["audit", "cassettes/test_agent/test_python.yaml"]) == 0
    err = capsys.readouterr().err
    assert "project policy other than today's" in err
    assert "test_python.yaml" in err


def test_an_explicit_policy_is_audited_as_given(
    recorded: pytest.Pytester, capsys: pytest.CaptureFixture[str]
) -> None:
    capsys.readouterr()
    assert main(["audit", "cassettes", "--block", "wikipedia.org"]) == 1
    assert "test_replaced.yaml" in capsys.readouterr().out


def test_a_cassette_without_provenance_is_audited_with_the_project_policy(
    recorded: pytest.Pytester, capsys: pytest.CaptureFixture[str]
) -> None:
    cassette = recorded.path / "cassettes" / "test_agent" / "test_replaced.yaml"
    text = cassette.read_text()
    cassette.write_text(text[text.index("version:") :])
    capsys.readouterr()
    assert main(["audit", str(cassette)]) == 1


def test_a_hostile_recorded_policy_is_a_problem_not_a_pass(
    recorded: pytest.Pytester, capsys: pytest.CaptureFixture[str]
) -> None:
    cassette = recorded.path / "cassettes" / "test_agent" / "test_replaced.yaml"
    text = cassette.read_text().replace("mode: allow", "mode: everything", 1)
    cassette.write_text(text)
    capsys.readouterr()
    assert main(["audit", str(cassette)]) == 2
    assert "recorded marker" in capsys.readouterr().out + capsys.readouterr().err


def test_the_report_says_scripted_beside_evidence_replayed_from_a_script(
    recorded: pytest.Pytester,
) -> None:
    result = recorded.runpytest(
        "--agentloop-report=evidence.json", "--agentloop-report-html=r.html"
    )
    result.assert_outcomes(passed=3)
    document = json.loads((recorded.path / "evidence.json").read_text())
    sources = {test["test"]: test["cassette"].get("source") for test in document["tests"]}
    assert set(sources.values()) == {"scripts"}
    assert "scripted: no live provider answered" in (recorded.path / "r.html").read_text()


def test_the_reserved_evidence_block_after_the_interactions_is_tolerated(
    recorded: pytest.Pytester, capsys: pytest.CaptureFixture[str]
) -> None:
    cassette = recorded.path / "cassettes" / "test_agent" / "test_python.yaml"
    cassette.write_text(cassette.read_text() + "evidence:\n  record: reserved\n")
    recorded.runpytest("-k", "test_python").assert_outcomes(passed=1, deselected=2)
    capsys.readouterr()
    assert main(["audit", str(cassette)]) == 0
    assert main(["evidence", str(cassette)]) == 0


def test_a_hand_written_replace_is_named_with_what_it_lifts_and_pytest_ignores_it(
    recorded: pytest.Pytester, capsys: pytest.CaptureFixture[str]
) -> None:
    # The test's marker in code no longer says replace=True; its cassette still does
    # (as a hand edit would make it): pytest takes replace from the code only.
    recorded.makepyfile(test_agent=TESTS.replace(", replace=True)", ")"))
    result = recorded.runpytest("-k", "test_replaced")
    result.assert_outcomes(failed=1, deselected=2)
    result.stdout.fnmatch_lines(["*en.wikipedia.org*"])
    cassette = recorded.path / "cassettes" / "test_agent" / "test_replaced.yaml"
    capsys.readouterr()
    assert main(["audit", str(cassette)]) == 0  # as pytest audits a true replace marker
    out, err = capsys.readouterr()
    # ...but what the recorded replace lifts is named, with the fix.
    assert "lifts the project policy" in err
    assert "https://en.wikipedia.org/wiki/Python" in err
    assert "re-record it" in err
    # The summary names the project policy, not the command line's wrapper object.
    assert "ProjectAsInPytest" not in out
    assert "DomainPolicy.block(['wikipedia.org', 'reddit.com'])" in out
