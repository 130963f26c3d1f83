"""A URL web_fetch refused (nothing read, the policy held) fails a test only when asked.

Real pytest runs (pytester) of a real agent: the plugin's ``agentloop_agent`` on
OpenRouter, scripted, with ``web_fetch`` on ``ScriptedPages`` under the test's policy.
The model asks for an off-list page; the tool refuses it. By default the run is green
and says so in its summary; each spelling of ``fail`` (marker keyword, ini key, project
table, flag) fails it, and ``fail`` written anywhere wins over ``report``.
"""

from __future__ import annotations

import json

import pytest

pytestmark = pytest.mark.agentloop_06

AGENT_TEST = """
import pytest

from agentloop_tools.testing import ScriptedPages, ScriptedProvider, chat_completion
from agentloop_tools.web import DomainPolicy, web_fetch

POLICY = DomainPolicy.allow(["python.org"])
PAGES = {{"https://docs.python.org/3/": "<title>Docs</title><p>The docs.</p>"}}


@pytest.mark.domain_policy(policy=POLICY{marker})
def test_agent(agentloop_agent):
    script = [
        chat_completion(calls=[("f1", "web_fetch", {{"url": "{url}"}})]),
        chat_completion("I could not read that page."),
    ]
    tools = [web_fetch(**ScriptedPages(PAGES).tool_options(), policy={tool_policy})]
    agent = agentloop_agent(
        tools, provider="openrouter",
        http_client=ScriptedProvider("openrouter", script).http_client(),
    )
    agent.run("Read the page.")
"""
EVIL = "https://evil.example/page"


def _write(
    project: pytest.Pytester,
    marker: str = "",
    *,
    url: str = EVIL,
    tool_policy: str = "POLICY",
    ini: str = "",
) -> None:
    project.makepyfile(
        test_agent=AGENT_TEST.format(marker=marker, url=url, tool_policy=tool_policy)
    )
    if ini:
        (project.path / "pytest.ini").write_text(f"[pytest]\n{ini}\n")


def test_a_refused_attempt_passes_by_default_and_the_summary_counts_it(
    project: pytest.Pytester,
) -> None:
    _write(project)
    result = project.runpytest("--agentloop-report=evidence.json")
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(
        [
            "*0 domain policy violation(s) in 0 test(s); 1 refused attempt(s) in 1 test(s) "
            "(web_fetch refused the URL and read nothing, the policy held), not failing "
            "(refused_attempts = report)"
        ]
    )
    result.stdout.no_fnmatch_line("*keep the model from asking*")
    [test] = json.loads((project.path / "evidence.json").read_text())["tests"]
    assert (test["violation_count"], test["refused_count"], test["refused_attempts"]) == (
        1,
        1,
        "report",
    )
    [violation] = test["conversations"][0]["violations"]
    assert (violation["where"], violation["url"], violation["refused"]) == ("tool-call", EVIL, True)


def test_a_page_the_tool_read_still_fails(project: pytest.Pytester) -> None:
    _write(project, url="https://docs.python.org/3/", tool_policy="None", marker="")
    project.makepyfile(
        test_agent=AGENT_TEST.format(marker="", url=EVIL, tool_policy="None").replace(
            "PAGES = {", 'PAGES = {"https://evil.example/page": "<p>evil</p>", '
        )
    )
    result = project.runpytest()
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*tool-call message 1: https://evil.example/page*"])
    result.stdout.no_fnmatch_line("*refused by*")


@pytest.mark.parametrize(
    ("marker", "ini", "flag", "origin"),
    [
        (
            ', refused_attempts="fail"', "", (),
            "refused_attempts='fail' on the domain_policy marker of the test",
        ),
        ("", "agentloop_refused_attempts = fail", (), "ini key agentloop_refused_attempts in"),
        ("", "", ("--refused-attempts", "fail"), "--refused-attempts fail"),
        # report on the marker does not lift the project's fail.
        (
            ', refused_attempts="report"', "agentloop_refused_attempts = fail", (),
            "ini key agentloop_refused_attempts in",
        ),
        # nor does the flag's report.
        (
            "", "agentloop_refused_attempts = fail", ("--refused-attempts", "report"),
            "ini key agentloop_refused_attempts in",
        ),
    ],
    ids=["marker", "ini", "flag", "marker-report-does-not-lift-ini", "flag-report-does-not-lift"],
)  # fmt: skip
def test_refused_attempts_fail_when_asked_and_say_where(
    project: pytest.Pytester, marker: str, ini: str, flag: tuple[str, ...], origin: str
) -> None:
    _write(project, marker, ini=ini)
    result = project.runpytest(*flag)
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [
            "*1 domain policy violation, refused by the tool "
            "(DomainPolicy.allow([[]'python.org'[]])):",
            f"*- tool-call message 1: {EVIL}  [[]not on the allowlist[]]",
            "*refused by web_fetch ([[]blocked-by-policy[]]): the policy held, nothing was read",
            f"*It fails this test because refused attempts are set to fail ({origin}*",
        ]
    )
    result.stdout.fnmatch_lines(
        ["*1 domain policy violation(s) in 1 test(s); 1 of them refused attempt(s) *, failing*"]
    )


def test_the_project_table_sets_refused_attempts_to_fail(project: pytest.Pytester) -> None:
    _write(project)
    project.makepyprojecttoml(
        '[tool.pytest.ini_options]\n\n[tool.agentloop-tools]\nrefused_attempts = "fail"\n'
    )
    result = project.runpytest()
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        ["*set to fail (refused_attempts in pyproject.toml [[]tool.agentloop-tools[]])*"]
    )


def test_the_table_key_beside_a_policy_keeps_the_policy(project: pytest.Pytester) -> None:
    _write(project)
    project.makepyprojecttoml(
        '[tool.pytest.ini_options]\n\n[tool.agentloop-tools]\nblock = ["evil.example"]\n'
        'refused_attempts = "report"\n'
    )
    result = project.runpytest()
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(["*1 refused attempt(s) in 1 test(s)*"])


@pytest.mark.parametrize(
    ("marker", "ini", "table", "expected"),
    [
        (', refused_attempts="warn"', "", "", "*refused_attempts: 'warn' is not a refused-attempts "
         "setting; use 'report' or 'fail'*"),
        ("", "agentloop_refused_attempts = warn", "", "*ini key agentloop_refused_attempts in "
         "pytest.ini: 'warn' is not a refused-attempts setting; use 'report' or 'fail'*"),
        ("", "", 'refused_attempts = "Fail"', "*refused_attempts: 'Fail' is not a "
         "refused-attempts setting; use 'report' or 'fail'*"),
    ],
    ids=["marker", "ini", "table"],
)  # fmt: skip
def test_a_bad_value_stops_the_run_naming_the_allowed_ones(
    project: pytest.Pytester, marker: str, ini: str, table: str, expected: str
) -> None:
    _write(project, marker, ini=ini)
    if table:
        project.makepyprojecttoml(f"[tool.pytest.ini_options]\n\n[tool.agentloop-tools]\n{table}\n")
    result = project.runpytest()
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([expected])


def test_a_bad_flag_value_names_the_allowed_ones(project: pytest.Pytester) -> None:
    _write(project)
    result = project.runpytest("--refused-attempts", "warn")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--refused-attempts: invalid choice: 'warn'*report*fail*"])


def test_the_ini_key_alone_makes_a_run_use_the_plugin(project: pytest.Pytester) -> None:
    project.makepyfile(test_plain="def test_plain():\n    pass\n")
    (project.path / "pytest.ini").write_text("[pytest]\nagentloop_refused_attempts = fail\n")
    result = project.runpytest()
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(["agentloop-tools: *refused attempts=fail"])
