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
