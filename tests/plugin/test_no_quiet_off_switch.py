"""Ways a configured policy could stop auditing without a word: each fails loudly instead."""

from __future__ import annotations

import json

import pytest

from tests.plugin.scenarios import LEAKY_TEST

OWN_AGENT = """
import pytest
from agentloop import Agent
from agentloop_tools.testing import ScriptedProvider, anthropic_message, anthropic_text
from agentloop_tools.web import native_web_search

SCRIPT = [anthropic_message([anthropic_text("See https://en.wikipedia.org/wiki/X.")])]


@pytest.mark.vcr{vcr}
{marker}
def test_own_agent(agentloop_env):
    env = dict(agentloop_env, LLM_PROVIDER="anthropic")
    http = ScriptedProvider("anthropic", SCRIPT).http_client()
    with Agent.from_env(env, [native_web_search()], http_client=http) as agent:
        agent.run("hello")
"""


def test_opting_out_of_evidence_fails_when_the_cassette_shows_an_agent(
    project: pytest.Pytester,
) -> None:
    marker = '@pytest.mark.domain_policy(block=["wikipedia.org"], require_evidence=False)'
    project.makepyfile(test_agent=OWN_AGENT.format(vcr="", marker=marker))
    for args in (["--record-mode=once"], [], ["-n", "1"]):  # record, replay, under xdist
        result = project.runpytest(*args)
        result.assert_outcomes(failed=1)
        result.stdout.fnmatch_lines(
            [
                "agentloop-tools: test_agent.py::test_own_agent is marked "
                "domain_policy(require_evidence=False), which says it runs no agent, but it "
                "sent 1 request(s) to a model provider (see its cassette)*",
            ]
        )
        result.stdout.no_fnmatch_line("NOT AUDITED*")


def test_a_new_episodes_replay_is_audited_like_any_replay(project: pytest.Pytester) -> None:
    project.makeini("[pytest]\nagentloop_block_domains = wikipedia.org\n")
    project.makepyfile(test_agent=OWN_AGENT.format(vcr='(record_mode="new_episodes")', marker=""))
    for _ in range(2):  # the first run records, the second replays every interaction
        result = project.runpytest()
        result.assert_outcomes(failed=1)
        result.stdout.fnmatch_lines(
            ["agentloop-tools: test_agent.py::test_own_agent sent 1 request(s) to a model *"]
        )


MARKED_TESTS = """
import pytest

pytestmark = {module}


class TestSuite:
    pytestmark = [pytest.mark.domain_policy(block=["wikipedia.org"])]

    {function}
    def test_in_class(self):
        pass
"""


@pytest.mark.parametrize(
    ("module", "function", "message"),
    [
        (
            'pytest.mark.domain_policy(block="wikipedia.org")',
            '@pytest.mark.domain_policy(block=["example.com"])',
            "ERROR: @pytest.mark.domain_policy on test_marks.py::TestSuite::test_in_class "
            "(on its module test_marks.py): block= must be a list of domains*",
        ),
        (
            '[pytest.mark.domain_policy(block=["a.com"], requre_evidence=False)]',
            "",
            "ERROR: @pytest.mark.domain_policy on test_marks.py::TestSuite::test_in_class "
            "(on its module test_marks.py): unknown argument(s) requre_evidence*",
        ),
        (
            "[]",
            '@pytest.mark.domain_policy(allow=["python.org"])\n'
            '    @pytest.mark.domain_policy(block=["wikipedia.org"])',
            "ERROR: @pytest.mark.domain_policy on test_marks.py::TestSuite::test_in_class: "
            "the test carries more than one domain_policy marker, and a test is audited "
            "with one policy. Keep one marker, with the whole list in it.",
        ),
    ],
)
def test_a_marker_hidden_behind_a_closer_one_is_still_checked(
    project: pytest.Pytester, module: str, function: str, message: str
) -> None:
    project.makepyfile(test_marks=MARKED_TESTS.format(module=module, function=function))
    result = project.runpytest()
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([message])
    assert "Traceback" not in result.stdout.str() + result.stderr.str()


MODULE_BLOCKS_WIKIPEDIA = (
    'import pytest\npytestmark = pytest.mark.domain_policy(block=["wikipedia.org"])\n'
)


def test_a_closer_marker_narrows_and_never_lifts_a_farther_one(project: pytest.Pytester) -> None:
    # Before, the test's own marker replaced its module's: allowing wikipedia.org here
    # quietly lifted the module's block.
    own = '@pytest.mark.domain_policy(allow=["python.org", "wikipedia.org"])'
    project.makepyfile(test_agent=MODULE_BLOCKS_WIKIPEDIA + LEAKY_TEST.format(marker=own))
    result = project.runpytest("--record-mode=once")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [
            "*wikipedia.org*",
            "*(policy from the domain_policy marker on the test; the domain_policy marker on "
            "its module test_agent.py)",
        ]
    )


def test_replace_makes_a_marker_the_whole_policy_and_says_so(project: pytest.Pytester) -> None:
    own = '@pytest.mark.domain_policy(allow=["python.org", "wikipedia.org"], replace=True)'
    project.makeini("[pytest]\nagentloop_block_domains = wikipedia.org\n")
    project.makepyfile(test_agent=MODULE_BLOCKS_WIKIPEDIA + LEAKY_TEST.format(marker=own))
    result = project.runpytest("--record-mode=once", "--agentloop-report=evidence.json")
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(
        [
            "REPLACED POLICY test_agent.py::test_agent: a domain_policy marker with "
            "replace=True is its whole policy; the project policy (tox.ini) does not apply "
            "to it"
        ]
    )
    [record] = json.loads((project.path / "evidence.json").read_text())["tests"]
    assert record["replace"] is True
    assert record["policy"]["from"] == "the domain_policy marker on the test"


def test_a_marker_closer_than_a_replacing_one_still_narrows(project: pytest.Pytester) -> None:
    module = (
        "import pytest\npytestmark = pytest.mark.domain_policy("
        'allow=["python.org", "wikipedia.org"], replace=True)\n'
    )
    own = '@pytest.mark.domain_policy(block=["wikipedia.org"])'
    project.makepyfile(test_agent=module + LEAKY_TEST.format(marker=own))
    project.runpytest("--record-mode=once").assert_outcomes(failed=1)


@pytest.mark.parametrize("value", ["1", "'yes'", "None"])
def test_replace_takes_true_or_false_only(project: pytest.Pytester, value: str) -> None:
    own = f'@pytest.mark.domain_policy(block=["x.org"], replace={value})'
    project.makepyfile(test_agent=LEAKY_TEST.format(marker=own))
    result = project.runpytest()
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([f"*replace must be True or False, got {value}*"])


@pytest.mark.parametrize(
    ("name", "text", "message"),
    [
        (
            "tox.ini",
            "[pytest]\nagentloop_block_domains =\n",
            "ERROR: ini key agentloop_block_domains in tox.ini is set but lists no domain, so "
            "it would audit nothing. List one domain per line (or separate them with commas), "
            "or remove the key.",
        ),
        (
            "tox.ini",
            "[pytest]\nagentloop_allow_domains = , ,\n",
            "ERROR: ini key agentloop_allow_domains in tox.ini is set but lists no domain*",
        ),
        (
            "pyproject.toml",
            '[tool.agentloop-tools]\nblocked = ["wikipedia.org"]\n',
            "ERROR: *pyproject.toml [[]tool.agentloop-tools]: unknown key(s) blocked; the table "
            "takes allow = [[]...] or block = [[]...]. It may also set refused_attempts = "
            '"report" or "fail".',
        ),
        (
            "pyproject.toml",
            '[tool.agentloop-tools]\nblock = ["wikipedia.org"]\nalow = ["python.org"]\n',
            "ERROR: *pyproject.toml [[]tool.agentloop-tools]: unknown key(s) alow*",
        ),
        (
            "pyproject.toml",
            "[tool.agentloop-tools]\n",
            "ERROR: *pyproject.toml [[]tool.agentloop-tools]: no allow = [[]...] or block = *",
        ),
        (
            "pyproject.toml",
            '[tool.agentloop_tools]\nblock = ["wikipedia.org"]\n',
            "ERROR: *pyproject.toml: [[]tool.agentloop_tools] is not read; the domain list goes "
            "in [[]tool.agentloop-tools] (with a hyphen). Rename the table.",
        ),
    ],
)
def test_a_project_policy_that_would_read_as_none_stops_the_run(
    project: pytest.Pytester, name: str, text: str, message: str
) -> None:
    (project.path / name).write_text(text)
    project.makepyfile(test_agent=LEAKY_TEST.format(marker=""))
    result = project.runpytest("--record-mode=once")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([message])
    result.stdout.no_fnmatch_line("*passed*")


def test_a_bad_marker_under_xdist_fails_its_test_with_the_message(
    project: pytest.Pytester,
) -> None:
    project.makepyfile(
        test_agent="""
        import pytest

        def test_first():
            pass

        @pytest.mark.domain_policy(block="wikipedia.org")
        def test_bad():
            pass
        """
    )
    result = project.runpytest("-n", "2")
    result.assert_outcomes(passed=1, errors=1)
    result.stdout.fnmatch_lines(
        [
            "@pytest.mark.domain_policy on test_agent.py::test_bad: block= must be a list of "
            "domains, not the single string 'wikipedia.org'; write block=['wikipedia.org'].",
        ]
    )
    result.stdout.no_fnmatch_line("*INTERNALERROR*")


@pytest.mark.parametrize("strict", [False, True])
def test_an_expected_failure_does_not_excuse_a_breach(
    project: pytest.Pytester, strict: bool
) -> None:
    marker = (
        f'@pytest.mark.xfail(reason="tracked elsewhere", strict={strict})\n'
        '@pytest.mark.domain_policy(block=["wikipedia.org"])'
    )
    project.makepyfile(test_agent=LEAKY_TEST.format(marker=marker))
    result = project.runpytest("--record-mode=once")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["FAILED test_agent.py::test_agent - Failed: 2 domain policy *"])


def test_an_xfail_that_names_the_plugins_failure_expects_the_breach(
    project: pytest.Pytester,
) -> None:
    # How a suite shows that a breach fails the build (examples/ does): said in so many words.
    marker = (
        '@pytest.mark.xfail(strict=True, raises=pytest.fail.Exception, reason="a breach")\n'
        '@pytest.mark.domain_policy(block=["wikipedia.org"])'
    )
    project.makepyfile(test_agent=LEAKY_TEST.format(marker=marker))
    project.runpytest("--record-mode=once").assert_outcomes(xfailed=1)


TWO_AGENTS = """
import pytest
from agentloop import Agent
from agentloop_tools.testing import ScriptedProvider, anthropic_message, anthropic_text
from agentloop_tools.web import native_web_search

CLEAN = [anthropic_message([anthropic_text("See https://docs.python.org/3/.")])]
LEAKY = [anthropic_message([anthropic_text("See https://en.wikipedia.org/wiki/X.")])]


@pytest.mark.vcr
{marker}
def test_two_agents(agentloop_agent, agentloop_env):
    seen = agentloop_agent([native_web_search()], provider="anthropic",
                           http_client=ScriptedProvider("anthropic", CLEAN).http_client())
    seen.run("first")
    env = dict(agentloop_env, LLM_PROVIDER="anthropic")
    http = ScriptedProvider("anthropic", LEAKY).http_client()
    with Agent.from_env(env, [native_web_search()], http_client=http) as unseen:
        unseen.run("second")
"""


@pytest.mark.parametrize(
    ("ini", "marker", "origin"),
    [
        ("", '@pytest.mark.domain_policy(block=["wikipedia.org"])', "the domain_policy marker"),
        ("[pytest]\nagentloop_block_domains = wikipedia.org\n", "", "tox.ini"),
    ],
)
def test_one_connected_agent_does_not_vouch_for_another(
    project: pytest.Pytester, ini: str, marker: str, origin: str
) -> None:
    if ini:
        project.makeini(ini)
    project.makepyfile(test_agent=TWO_AGENTS.format(marker=marker))
    for args in (["--record-mode=once"], []):  # recording, then replaying
        result = project.runpytest(*args)
        result.assert_outcomes(failed=1)
        result.stdout.fnmatch_lines(
            [
                "agentloop-tools: test_agent.py::test_two_agents got 2 answer(s) from a model "
                "provider (see its cassette), but only 1 reached the plugin: an agent the "
                f"plugin cannot see talked to the provider, and the domain policy (from {origin}) "
                "did not audit it.",
            ]
        )
