"""A real key in the environment never reaches the terminal, JUnit or an xdist controller.

A test that uses the plugin and fails while recording (with real keys, by definition)
is shown by pytest in many ways: its arguments, assertion introspection, locals, its
captured output and logs. None of them may show a key.
"""

from __future__ import annotations

import secrets
import string

import pytest

from agentloop_tools._plugin.masking import SecretEnv

ALPHABET = string.ascii_letters + string.digits


def fake_key(prefix: str, length: int) -> str:
    return prefix + "".join(secrets.choice(ALPHABET) for _ in range(length))


KEY = fake_key("sk-ant-api03-", 93) + "AA"
SEARCH_KEY = fake_key("tvly-", 32)

FAILING = """
import logging
import pytest

pytestmark = pytest.mark.vcr  # recording (--record-mode=once): the real keys are kept

def test_compares_the_key(agentloop_env):
    key = agentloop_env["ANTHROPIC_API_KEY"]
    print("the key is", key)
    logging.getLogger("sdk").warning("sending %s", key)
    assert key == "not the key"

def test_fails_beside_the_env(agentloop_env, agentloop_agent):
    headers = {"x-api-key": agentloop_env["ANTHROPIC_API_KEY"]}
    assert headers["x-api-key"].startswith("nope")

def test_env_compared_whole(agentloop_env):
    assert agentloop_env == {"ANTHROPIC_API_KEY": "x"}

def test_search_key(agentloop_env):
    assert agentloop_env["TAVILY_API_KEY"] in ("a", "b")
"""


@pytest.fixture
def recording(project: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> pytest.Pytester:
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    monkeypatch.setenv("TAVILY_API_KEY", SEARCH_KEY)
    monkeypatch.setenv("LLM_PROVIDER", "anthropic")
    project.makepyfile(test_keys=FAILING)
    return project


def shown(project: pytest.Pytester, result: pytest.RunResult) -> str:
    text = result.stdout.str() + result.stderr.str()
    junit = project.path / "junit.xml"
    return text + (junit.read_text() if junit.exists() else "")


def no_key_in(text: str) -> None:
    for key in (KEY, SEARCH_KEY):
        assert key not in text
        assert key[10:40] not in text  # nor a part of it


@pytest.mark.parametrize(
    "args",
    [
        [],
        ["--tb=long", "--showlocals"],
        ["-vv"],
        ["--tb=native", "-rA"],
        ["-vv", "--showlocals", "-rA", "-p", "no:logging"],
    ],
    ids=["default", "long-showlocals", "vv", "native", "no-log-capture"],
)
def test_a_failing_recording_test_shows_no_key(recording: pytest.Pytester, args: list[str]) -> None:
    result = recording.runpytest("--record-mode=once", "--junitxml=junit.xml", *args)
    result.assert_outcomes(failed=4)
    text = shown(recording, result)
    no_key_in(text)
    # What was there to see is still there, the key as its placeholder.
    assert "agentloop-tools-placeholder-ANTHROPIC_API_KEY" in text
    assert "test_compares_the_key" in text


def test_under_xdist_the_controller_receives_no_key(recording: pytest.Pytester) -> None:
    result = recording.runpytest_subprocess(
        "--record-mode=once", "-n", "1", "-vv", "--showlocals", "--junitxml=junit.xml"
    )
    result.assert_outcomes(failed=4)
    no_key_in(shown(recording, result))


def test_a_test_that_does_not_use_the_plugin_is_left_alone(
    project: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Not ours to rewrite: a project's own test prints what it prints.
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    project.makepyfile(
        test_plain="import os\n\ndef test_plain():\n"
        "    assert os.environ['ANTHROPIC_API_KEY'] == 'x'\n"
    )
    result = project.runpytest("-vv")
    result.assert_outcomes(failed=1)
    assert KEY in result.stdout.str()


def test_the_env_is_a_dict_whose_repr_masks_every_credential() -> None:
    env = SecretEnv(
        {
            "ANTHROPIC_API_KEY": KEY,
            "MY_SERVICE_TOKEN": "abc123def456ghi789",
            "UNNAMED": fake_key("ghp_", 36),
            "OPENAI_API_KEY": "agentloop-tools-placeholder-OPENAI_API_KEY",
            "HOME": "/root",
        }
    )
    assert isinstance(env, dict)
    text = repr(env) + str(env) + repr(env.copy()) + f"{env}"
    for value in (KEY, "abc123def456ghi789", env["UNNAMED"]):
        assert value not in text
    assert "'HOME': '/root'" in text
    assert "agentloop-tools-placeholder-OPENAI_API_KEY" in text
    env["NEW"] = "x"
    assert env["ANTHROPIC_API_KEY"] == KEY  # the values themselves are untouched


def test_a_key_the_test_set_beside_the_environments_is_masked_too(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from agentloop_tools._plugin.masking import clean_report

    # Keys of no known shape: only their values can find them.
    mine, other = fake_key("", 40), fake_key("", 40)
    monkeypatch.setenv("TAVILY_API_KEY", mine)
    report = pytest.TestReport(
        "t.py::t", ("t.py", 1, "t"), {}, "failed", f"E  {mine} != {other}", "call",
        sections=[("Captured stdout call", f"{other}\n{mine}\n")],
    )  # fmt: skip
    clean_report(report, {"TAVILY_API_KEY": other})
    shown = str(report.longrepr) + "".join(content for _, content in report.sections)
    for key in (mine, other):
        assert key not in shown
