"""Replaying where the environment differs from the recording's: scrubbed variables get
their placeholders, and a miss inside a tool result names the tool and the difference."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from agentloop_tools._plugin.scope import FROM_SCRIPTS_OPTION

CONFTEST = """
import pytest
from agentloop_tools.testing import anthropic_message, anthropic_text

SCRIPT = [
    anthropic_message(
        [{"type": "tool_use", "id": "toolu_fetch1", "name": "web_fetch",
          "input": {"url": "https://docs.python.org/3/"}}],
        stop_reason="tool_use",
    ),
    anthropic_message([anthropic_text("The docs: https://docs.python.org/3/")]),
]


@pytest.fixture
def agentloop_script():
    return SCRIPT
"""

FETCHING = """
import pytest
from agentloop_tools.testing import ScriptedPages
from agentloop_tools.web import web_fetch

PAGE = "<html><head><title>Docs</title></head><body><p>The Python docs.</p></body></html>"


@pytest.mark.vcr
def test_reads(agentloop_agent, agentloop_from_scripts):
    pages = ScriptedPages({"https://docs.python.org/3/": PAGE}) if agentloop_from_scripts else None
    tool = web_fetch(**(pages.tool_options() if pages else {}))
    agentloop_agent([tool], provider="anthropic").run("Read the Python docs")
"""


def cassette(project: pytest.Pytester, name: str) -> Path:
    return project.path / "cassettes" / "test_agent" / f"{name}.yaml"


def rewrite(path: Path, change: Any) -> None:
    data = yaml.safe_load(path.read_text())
    change(data)
    path.write_text(yaml.safe_dump(data, sort_keys=False, allow_unicode=True))


def recorded_elsewhere(data: dict[str, Any], provenance: bool) -> None:
    """The cassette as a machine without the [fetch] extra recorded it: another reading
    of the page in the tool result the agent sent back."""
    second = data["interactions"][-1]["request"]["body"]["json"]
    [result] = [
        block
        for message in second["messages"]
        if isinstance(message["content"], list)
        for block in message["content"]
        if block.get("type") == "tool_result"
    ]
    if isinstance(result["content"], str):
        result["content"] += "\nnote: plain HTML reading"
    else:
        result["content"][0]["text"] += "\nnote: plain HTML reading"
    if provenance:
        data["provenance"]["extractors"]["trafilatura"] = None
    else:
        del data["provenance"]


@pytest.mark.parametrize("provenance", [True, False], ids=["v2", "no-provenance"])
def test_a_miss_inside_a_tool_result_names_the_tool_and_the_environment(
    project: pytest.Pytester, provenance: bool
) -> None:
    project.makeconftest(CONFTEST)
    project.makepyfile(test_agent=FETCHING)
    project.runpytest("--record-mode=once", FROM_SCRIPTS_OPTION.flag).assert_outcomes(passed=1)
    project.runpytest().assert_outcomes(passed=1)
    rewrite(cassette(project, "test_reads"), lambda data: recorded_elsewhere(data, provenance))
    result = project.runpytest()
    result.assert_outcomes(failed=1)
    text = result.stdout.str()
    assert "Only the result of web_fetch (call toolu_fetch1) differs" in text
    assert "prompt, model, tools or history" not in text  # not the wrong cause
    if provenance:
        result.stdout.fnmatch_lines(["*trafilatura: recorded not installed, now *"])
        assert "--record-mode=rewrite --agentloop-from-scripts" in text
    else:
        result.stdout.fnmatch_lines(["*trafilatura: recorded unknown, now *"])
    assert "pip install 'based-models-agentloop-tools[fetch]'" in text


TOKEN_TEST = """
import pytest
from agentloop_tools.web import native_web_search


@pytest.mark.vcr
def test_token(agentloop_agent, agentloop_env):
    token = agentloop_env.get("MY_SERVICE_TOKEN", "")
    assert agentloop_env.get("LLM_PROVIDER") != "agentloop-tools-placeholder-LLM_PROVIDER"
    agent = agentloop_agent([native_web_search()], provider="anthropic")
    agent.run(f"Use the service with token {token}")
"""

TOKEN_CONFTEST = """
import pytest
from agentloop_tools.testing import anthropic_message, anthropic_text


@pytest.fixture
def agentloop_script():
    return [anthropic_message([anthropic_text("Done.")])]
"""


def test_a_scrubbed_variable_of_the_project_gets_its_placeholder_in_replay(
    project: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    project.makeconftest(TOKEN_CONFTEST)
    project.makepyfile(test_agent=TOKEN_TEST)
    monkeypatch.setenv("MY_SERVICE_TOKEN", "svc-7f3a9c2e51b84d06a1")
    project.runpytest("--record-mode=once", FROM_SCRIPTS_OPTION.flag).assert_outcomes(passed=1)
    text = cassette(project, "test_token").read_text()
    assert "agentloop-tools-placeholder-MY_SERVICE_TOKEN" in text
    assert "svc-7f3a9c2e51b84d06a1" not in text
    # A clean CI machine: the variable is not set at all.
    monkeypatch.delenv("MY_SERVICE_TOKEN")
    project.runpytest().assert_outcomes(passed=1)
    # Another developer's own value: still the placeholder the cassette holds.
    monkeypatch.setenv("MY_SERVICE_TOKEN", "svc-0000000000other0000")
    project.runpytest().assert_outcomes(passed=1)


def test_a_cassette_cannot_set_a_variable_that_is_not_a_credential(
    project: pytest.Pytester,
) -> None:
    project.makeconftest(TOKEN_CONFTEST)
    project.makepyfile(test_agent=TOKEN_TEST)
    project.runpytest("--record-mode=once", FROM_SCRIPTS_OPTION.flag).assert_outcomes(passed=1)
    path = cassette(project, "test_token")
    path.write_text(
        path.read_text() + "# agentloop-tools-placeholder-LLM_PROVIDER\n"
        "# agentloop-tools-placeholder-ANTHROPIC_BASE_URL\n"
    )
    project.runpytest().assert_outcomes(passed=1)


FOREIGN_TEST = """
import pytest
from agentloop_tools.web import native_web_search


@pytest.mark.vcr{match}
def test_token(agentloop_agent):
    agentloop_agent([native_web_search()], provider="anthropic").run("Use the service")
"""


def recorded_by_another_client(project: pytest.Pytester) -> Path:
    """A cassette as another project's client recorded it: other body fields, no provenance."""
    project.makeconftest(TOKEN_CONFTEST)
    project.makepyfile(test_agent=FOREIGN_TEST.format(match=""))
    project.runpytest("--record-mode=once", FROM_SCRIPTS_OPTION.flag).assert_outcomes(passed=1)
    path = cassette(project, "test_token")

    def foreign(data: dict[str, Any]) -> None:
        del data["provenance"]
        body = data["interactions"][0]["request"]["body"]["json"]
        body["system"] = [{"type": "text", "text": "Be brief."}]
        body["tool_choice"] = {"type": "auto"}

    rewrite(path, foreign)
    return path


def test_a_cassette_recorded_by_another_client_is_offered_matching_and_adoption(
    project: pytest.Pytester,
) -> None:
    path = recorded_by_another_client(project)
    result = project.runpytest()
    result.assert_outcomes(failed=1)
    text = result.stdout.str()
    assert "The cassette has no provenance" in text
    assert '@pytest.mark.vcr(match_on=("method", "uri"))' in text
    assert "agentloop-tools adopt" in text
    assert "--recorded-at YYYY-MM-DD" in text
    # The advice works: matched on method and URL, it replays; adopted, its age is known.
    project.makepyfile(test_agent=FOREIGN_TEST.format(match='(match_on=("method", "uri"))'))
    project.makeini("[pytest]\nagentloop_max_cassette_age = 90d\n")
    warned = project.runpytest("-W", "default::pytest.PytestWarning")
    warned.assert_outcomes(passed=1, warnings=1)
    warned.stdout.fnmatch_lines(["*agentloop-tools adopt * --recorded-at YYYY-MM-DD*"])
    from agentloop_tools.cli import main

    assert main(["adopt", str(path), "--recorded-at", "2026-11-30"]) == 0
    project.runpytest("-W", "default::pytest.PytestWarning").assert_outcomes(passed=1)
