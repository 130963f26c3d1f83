"""Installed, the plugin loads in every pytest run: a run that does not use it is unchanged.

And a run that does use it cannot lose its policy to a typo, a skip or an xfail.
"""

from __future__ import annotations

import json
import re

import pytest

from tests.plugin.scenarios import LEAKY_TEST

# A project that uses pytest-recording and nothing of ours.
RECORDING_ONLY = """
import pytest

@pytest.mark.vcr
def test_recorded():
    assert 1 + 1 == 2

def test_plain(tmp_path):
    assert tmp_path.exists()
"""


def comparable(result: pytest.RunResult) -> list[str]:
    """A run's output without what differs between any two runs (times, plugin list)."""
    lines = []
    for line in result.outlines:
        if line.startswith(("plugins:", "rootdir:", "cachedir:")):
            continue
        lines.append(re.sub(r" in [0-9.]+s( \([0-9:]+\))?", "", line))
    return lines


@pytest.mark.parametrize(
    ("ci", "args", "addopts"),
    [
        ("true", ["--record-mode=once"], None),
        ("true", [], "--record-mode=new_episodes"),
        ("1", ["--record-mode=all", "-rA", "--setup-show"], None),
        (None, ["--record-mode=once", "--setup-show"], None),
    ],
)
def test_a_pytest_recording_project_runs_exactly_as_without_us(
    project: pytest.Pytester,
    monkeypatch: pytest.MonkeyPatch,
    ci: str | None,
    args: list[str],
    addopts: str | None,
) -> None:
    if ci is not None:
        monkeypatch.setenv("CI", ci)
    if addopts:
        project.makeini(f"[pytest]\naddopts = {addopts}\n")
    project.makepyfile(test_project=RECORDING_ONLY)
    without = project.runpytest("-p", "no:agentloop_tools", *args)
    with_us = project.runpytest(*args)
    assert without.ret == pytest.ExitCode.OK
    with_us.assert_outcomes(passed=2)
    assert comparable(with_us) == comparable(without)
    assert "agentloop" not in with_us.stdout.str().replace("agentloop-tools-", "")
    assert "agentloop" not in with_us.stderr.str()


def test_our_tests_still_refuse_to_record_in_ci_beside_a_project_that_does(
    project: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CI", "true")
    project.makepyfile(test_project=RECORDING_ONLY, test_agent=LEAKY_TEST.format(marker=""))
    result = project.runpytest("--record-mode=once")
    result.assert_outcomes(passed=2, errors=1)
    result.stdout.fnmatch_lines(["*this test would record (its cassette is missing) while CI*"])


MODEL_CASSETTE = """\
interactions:
- request:
    body: '{"model": "claude", "messages": []}'
    headers: {}
    method: POST
    uri: https://api.anthropic.com/v1/messages
  response:
    body: {string: '{}'}
    headers: {}
    status: {code: 200, message: OK}
version: 1
"""


def test_under_a_project_policy_a_plain_vcr_test_with_model_traffic_is_not_recorded_in_ci(
    project: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CI", "true")
    project.makeini("[pytest]\nagentloop_block_domains = wikipedia.org\n")
    project.makepyfile(
        test_plain="""
        import pytest

        @pytest.mark.vcr
        def test_model():
            raise AssertionError("the body must not run")

        @pytest.mark.vcr
        def test_no_model():
            pass
        """
    )
    folder = project.path / "cassettes" / "test_plain"
    folder.mkdir(parents=True)
    (folder / "test_model.yaml").write_text(MODEL_CASSETTE)
    result = project.runpytest("--record-mode=new_episodes")
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(["*test_model*would record*while CI is set*"])
    result.stdout.no_fnmatch_line("*the body must not run*")


# --- the header and the guard fixture -------------------------------------------------


def test_no_header_and_no_fixture_in_a_run_that_does_not_use_the_plugin(
    project: pytest.Pytester,
) -> None:
    project.makepyfile(test_project=RECORDING_ONLY)
    result = project.runpytest("--setup-show")
    result.assert_outcomes(passed=2)
    result.stdout.no_fnmatch_line("*agentloop-tools:*")
    result.stdout.no_fnmatch_line("*_agentloop_cassette_guard*")
    verbose = project.runpytest("-v")
    verbose.assert_outcomes(passed=2)
    verbose.stdout.no_fnmatch_line("*agentloop-tools:*")


def test_the_guard_is_set_up_for_the_tests_that_use_the_plugin_only(
    project: pytest.Pytester,
) -> None:
    project.makepyfile(
        test_project=RECORDING_ONLY,
        test_agent=LEAKY_TEST.format(marker=""),
    )
    result = project.runpytest("--setup-show", "--record-mode=once")
    result.assert_outcomes(passed=3)
    shown = result.stdout.str()
    guarded = [
        block for block in shown.split("test_") if "SETUP    F _agentloop_cassette_guard" in block
    ]
    assert len(guarded) == 1
    assert "SETUP    F _agentloop_cassette_guard" in shown.split("test_agent.py")[1]
    assert "_agentloop_cassette_guard" not in shown.split("test_agent.py")[0]


def test_the_header_shows_when_the_plugin_is_configured(project: pytest.Pytester) -> None:
    project.makeini("[pytest]\nagentloop_block_domains = wikipedia.org\n")
    project.makepyfile(test_project=RECORDING_ONLY)
    result = project.runpytest()
    result.stdout.fnmatch_lines(["agentloop-tools: *default policy=block 1 domain(s)"])


# --- ini keys: unset, empty, overridden, mistyped ---------------------------------------


def test_an_override_counts_as_set(project: pytest.Pytester) -> None:
    project.makepyfile(test_agent=LEAKY_TEST.format(marker=""))
    empty = project.runpytest("-o", "agentloop_block_domains=")
    assert empty.ret == pytest.ExitCode.USAGE_ERROR
    empty.stderr.fnmatch_lines(["*ini key agentloop_block_domains *is set but lists no domain*"])
    result = project.runpytest("--record-mode=once", "-o", "agentloop_block_domains=wikipedia.org")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*blocked by 'wikipedia.org'*"])


@pytest.mark.parametrize(
    ("written", "right"),
    [
        ("agentloop_allowed_domains", "agentloop_allow_domains"),
        ("agentloop_block_domain", "agentloop_block_domains"),
        ("agentlop_block_domains", "agentloop_block_domains"),
        ("agentloop_policy", "agentloop_policy_file"),
    ],
)
@pytest.mark.parametrize("strict", [[], ["--strict-config"]])
def test_a_mistyped_ini_key_stops_the_run_naming_the_right_one(
    project: pytest.Pytester, written: str, right: str, strict: list[str]
) -> None:
    project.makeini(f"[pytest]\n{written} = wikipedia.org\n")
    project.makepyfile(test_agent=LEAKY_TEST.format(marker=""))
    result = project.runpytest("--record-mode=once", *strict)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(
        [f"*ini key {written} in tox.ini is not an agentloop-tools setting*Did you mean {right}?*"]
    )
    result.stdout.no_fnmatch_line("*passed*")


def test_any_unknown_agentloop_key_stops_the_run_but_other_keys_are_pytests_business(
    project: pytest.Pytester,
) -> None:
    project.makeini("[pytest]\nagentloop_strict = true\n")
    project.makepyfile(test_project=RECORDING_ONLY)
    result = project.runpytest()
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*ini key agentloop_strict in tox.ini is not an agentloop-tools*"])
    project.makeini("[pytest]\nsome_other_plugin_key = 1\n")
    without = project.runpytest("-p", "no:agentloop_tools")
    with_us = project.runpytest()
    assert comparable(with_us) == comparable(without)


def test_a_mistyped_key_in_pyproject_ini_options_is_refused_too(project: pytest.Pytester) -> None:
    project.makepyprojecttoml(
        '[tool.pytest.ini_options]\nagentloop_allowed_domains = ["python.org"]\n'
    )
    project.makepyfile(test_agent=LEAKY_TEST.format(marker=""))
    result = project.runpytest()
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*Did you mean agentloop_allow_domains?*"])


# --- markers -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "written",
    # The last two are past difflib's ratio: caught by the edit distance, case folded.
    ["domian_policy", "domain_polcy", "domainpolicy", "Domain_policy", "DOMAIN_POLCY",
     "DOMIAN_POLICY"],
)  # fmt: skip
@pytest.mark.parametrize("strict", [[], ["--strict-markers"]])
def test_a_near_miss_of_the_marker_stops_the_run(
    project: pytest.Pytester, written: str, strict: list[str]
) -> None:
    project.makepyfile(
        test_agent=LEAKY_TEST.format(marker=f'@pytest.mark.{written}(block=["wikipedia.org"])')
    )
    # The outer run turns warnings into errors; a user's run warns: let it warn here too.
    result = project.runpytest(
        "--record-mode=once", "-W", "default::pytest.PytestUnknownMarkWarning", *strict
    )
    assert result.ret in (pytest.ExitCode.USAGE_ERROR, pytest.ExitCode.INTERRUPTED)
    output = result.stdout.str() + result.stderr.str()
    if result.ret == pytest.ExitCode.USAGE_ERROR:
        assert "Did you mean @pytest.mark.domain_policy?" in output
        assert f"@pytest.mark.{written} on test_agent.py::test_agent" in output
    else:  # --strict-markers refuses it first, at collection: loud all the same
        assert f"'{written}' not found in `markers` configuration option" in output
    assert "1 passed" not in output


def test_a_near_miss_on_a_module_stops_the_run(project: pytest.Pytester) -> None:
    project.makepyfile(
        test_agent="import pytest\npytestmark = pytest.mark.domain_polic(block=['x.org'])\n"
        "def test_a():\n    pass\n"
    )
    result = project.runpytest("-W", "default::pytest.PytestUnknownMarkWarning")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*@pytest.mark.domain_polic on test_agent.py::test_a*"])


def test_registered_and_unrelated_markers_are_left_alone(project: pytest.Pytester) -> None:
    project.makeini(
        "[pytest]\nmarkers =\n    domain_policies: our own marker\n    slow\n    policy\n"
    )
    project.makepyfile(
        test_project="""
        import pytest

        @pytest.mark.domain_policies
        @pytest.mark.slow
        @pytest.mark.policy
        def test_a():
            pass
        """
    )
    project.runpytest().assert_outcomes(passed=1)


# --- skip and xfail after the agent ran ------------------------------------------------

ENDS_WITH = (
    LEAKY_TEST
    + """

@pytest.mark.vcr
{marker}
def test_ends_early(agentloop_agent):
    {before}
    agent = agentloop_agent([native_web_search()], provider="anthropic",
                            http_client=ScriptedProvider("anthropic", SCRIPT).http_client())
    agent.run("Tell me about Python")
    {after}
"""
)


@pytest.mark.parametrize("call", ["pytest.skip('flaky')", "pytest.xfail('known')"])
def test_a_skip_or_xfail_after_the_agent_breached_is_a_failure(
    project: pytest.Pytester, call: str
) -> None:
    marker = '@pytest.mark.domain_policy(block=["wikipedia.org"])'
    project.makepyfile(test_agent=ENDS_WITH.format(marker=marker, before="pass", after=call))
    result = project.runpytest("--record-mode=once", "-k", "ends_early")
    result.assert_outcomes(failed=1)
    how = call.split("(")[0]
    result.stdout.fnmatch_lines(
        [
            "*2 domain policy violations*",
            f"*(the test called {how}() after its agent ran: a domain policy failure fails*",
        ]
    )


@pytest.mark.parametrize("call", ["pytest.skip('offline')", "pytest.xfail('known')"])
def test_a_skip_before_any_agent_ran_stays_a_skip(project: pytest.Pytester, call: str) -> None:
    marker = '@pytest.mark.domain_policy(block=["wikipedia.org"])'
    project.makepyfile(test_agent=ENDS_WITH.format(marker=marker, before=call, after="pass"))
    result = project.runpytest("-k", "ends_early")
    if "skip" in call:
        result.assert_outcomes(skipped=1)
    else:
        result.assert_outcomes(xfailed=1)


def test_a_clean_agent_then_skip_stays_a_skip(project: pytest.Pytester) -> None:
    marker = '@pytest.mark.domain_policy(block=["example.com"])'
    project.makepyfile(
        test_agent=ENDS_WITH.format(marker=marker, before="pass", after="pytest.skip('later')")
    )
    project.runpytest("--record-mode=once", "-k", "ends_early").assert_outcomes(skipped=1)


def test_a_strict_xfail_on_a_breach_says_why_it_failed(project: pytest.Pytester) -> None:
    marker = '@pytest.mark.domain_policy(block=["wikipedia.org"])\n@pytest.mark.xfail(strict=True)'
    project.makepyfile(test_agent=LEAKY_TEST.format(marker=marker))
    result = project.runpytest("--record-mode=once")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        ["*is marked xfail, but an xfail marker expects the test's own failure*"]
    )
    result.stdout.fnmatch_lines(["*xfail(raises=pytest.fail.Exception, strict=True)*"])


def test_reports_label_xfailed_and_xpassed_as_pytest_does(project: pytest.Pytester) -> None:
    expected = (
        '@pytest.mark.domain_policy(block=["wikipedia.org"])\n'
        "@pytest.mark.xfail(raises=pytest.fail.Exception, strict=True)"
    )
    clean = '@pytest.mark.domain_policy(block=["example.com"])\n@pytest.mark.xfail(strict=False)'
    project.makepyfile(
        test_expected=LEAKY_TEST.format(marker=expected),
        test_clean=LEAKY_TEST.format(marker=clean),
    )
    result = project.runpytest("--record-mode=once", "--agentloop-report", "report.json")
    result.assert_outcomes(xfailed=1, xpassed=1)
    report = json.loads((project.path / "report.json").read_text())
    outcomes = {record["test"]: record["outcome"] for record in report["tests"]}
    assert outcomes == {
        "test_expected.py::test_agent": "xfailed",
        "test_clean.py::test_agent": "xpassed",
    }


def test_the_report_of_an_xfailed_breach_says_why_it_failed(project: pytest.Pytester) -> None:
    expected = (
        '@pytest.mark.domain_policy(block=["wikipedia.org"])\n'
        "@pytest.mark.xfail(raises=pytest.fail.Exception, strict=True)"
    )
    project.makepyfile(test_expected=LEAKY_TEST.format(marker=expected))
    result = project.runpytest(
        "--record-mode=once", "--agentloop-report", "report.json", "--agentloop-report-html=r.html"
    )
    result.assert_outcomes(xfailed=1)
    [record] = json.loads((project.path / "report.json").read_text())["tests"]
    assert record["outcome"] == "xfailed"
    assert record["failure"]["kind"] == "domain-policy"
    assert "2 domain policy violations" in record["failure"]["message"]
    assert "wikipedia.org" in record["failure"]["message"]
    page = (project.path / "r.html").read_text()
    assert "Why it failed (domain-policy):" in page


# --- where the project policy is read ------------------------------------------------------


def test_a_parent_folders_pyproject_is_never_read(project: pytest.Pytester) -> None:
    parent = project.path / "pyproject.toml"
    parent.write_text('[tool.agentloop-tools]\nblock = ["wikipedia.org"]\n')
    package = project.mkdir("pkg")
    (package / "pytest.ini").write_text("[pytest]\n")
    (package / "test_agent.py").write_text(LEAKY_TEST.format(marker=""))
    result = project.runpytest("--record-mode=once", "-v", "pkg")
    result.assert_outcomes(passed=1)
    # Under -v a configured plugin names the files it read: here none is configured.
    result.stdout.no_fnmatch_line("*agentloop-tools: *")
    named = project.runpytest("--record-mode=once", "-v", "--agentloop-provider=anthropic", "pkg")
    named.assert_outcomes(passed=1)
    named.stdout.fnmatch_lines(["*default policy=none", "*policy read from */pkg/pytest.ini"])
    # A broken table up there does not fail the project either.
    (project.path / "pyproject.toml").write_text("[tool.agentloop-tools]\n")
    project.runpytest("--record-mode=once", "pkg").assert_outcomes(passed=1)


def test_the_rootdirs_pyproject_is_read_beside_its_pytest_ini(project: pytest.Pytester) -> None:
    project.makepyprojecttoml('[tool.agentloop-tools]\nblock = ["wikipedia.org"]\n')
    project.makefile(".ini", pytest="[pytest]\n")
    project.makepyfile(test_agent=LEAKY_TEST.format(marker=""))
    result = project.runpytest("--record-mode=once", "-v")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        ["*policy read from */pytest.ini, */pyproject.toml", "*(policy from pyproject.toml*"]
    )


def test_a_policy_file_elsewhere_is_read_when_the_ini_names_it(project: pytest.Pytester) -> None:
    (project.path / "policy.toml").write_text('block = ["wikipedia.org"]\n')
    package = project.mkdir("pkg")
    (package / "pytest.ini").write_text("[pytest]\nagentloop_policy_file = ../policy.toml\n")
    (package / "test_agent.py").write_text(LEAKY_TEST.format(marker=""))
    result = project.runpytest("--record-mode=once", "pkg")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*(policy from ../policy.toml (agentloop_policy_file))"])
    (package / "pytest.ini").write_text("[pytest]\nagentloop_policy_file = ../missing.toml\n")
    missing = project.runpytest("pkg")
    assert missing.ret == pytest.ExitCode.USAGE_ERROR
    missing.stderr.fnmatch_lines(["*names ../missing.toml, but */missing.toml is not a file*"])


def test_two_sources_of_a_project_policy_are_a_usage_error(project: pytest.Pytester) -> None:
    project.makepyprojecttoml(
        '[tool.pytest.ini_options]\nagentloop_allow_domains = ["python.org"]\n\n'
        '[tool.agentloop-tools]\nblock = ["wikipedia.org"]\n'
    )
    project.makepyfile(test_agent=LEAKY_TEST.format(marker=""))
    result = project.runpytest()
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*a project-wide domain policy is set in 2 places*keep one."])


@pytest.mark.parametrize(
    ("setting", "message"),
    [
        (
            "marker:block=DomainPolicy.block(['wikipedia.org'])",
            "*block= takes a list of domains, and this is a DomainPolicy; pass it as "
            "policy=DomainPolicy.block(?'wikipedia.org'?) instead.",
        ),
        (
            "ini:agentloop_block_domains = wikipedia.org medium.com",
            "*entry 'wikipedia.org medium.com' holds 2 domains separated by spaces; separate "
            "them with commas (wikipedia.org, medium.com) or put one per line.",
        ),
    ],
)
def test_a_near_miss_of_a_policy_setting_says_what_was_meant(
    project: pytest.Pytester, setting: str, message: str
) -> None:
    where, written = setting.split(":", 1)
    if where == "ini":
        project.makeini(f"[pytest]\n{written}\n")
        marker = ""
    else:
        marker = f"@pytest.mark.domain_policy({written})"
    source = "from agentloop_tools.web import DomainPolicy\n" + LEAKY_TEST.format(marker=marker)
    project.makepyfile(test_agent=source)
    result = project.runpytest()
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([message])


@pytest.mark.parametrize("xfail", ["", "@pytest.mark.xfail(reason='flaky')"])
def test_a_body_that_fails_after_a_breach_reports_the_breach(
    project: pytest.Pytester, xfail: str
) -> None:
    marker = f'@pytest.mark.domain_policy(block=["wikipedia.org"])\n{xfail}'
    after = "assert False, 'the answer was too short'"
    project.makepyfile(test_agent=ENDS_WITH.format(marker=marker, before="pass", after=after))
    result = project.runpytest("--record-mode=once", "-k", "ends_early")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [
            "*2 domain policy violations*",
            "*(the test body also failed, after its agent ran: AssertionError: the answer was*",
        ]
    )


def test_a_body_that_fails_after_a_clean_run_keeps_its_own_failure(
    project: pytest.Pytester,
) -> None:
    marker = '@pytest.mark.domain_policy(block=["example.com"])\n@pytest.mark.xfail(reason="x")'
    project.makepyfile(
        test_agent=ENDS_WITH.format(marker=marker, before="pass", after="assert False")
    )
    project.runpytest("--record-mode=once", "-k", "ends_early").assert_outcomes(xfailed=1)


def test_recorded_text_in_a_plugin_message_cannot_drive_the_terminal(
    project: pytest.Pytester,
) -> None:
    project.makepyfile(
        test_agent="""
        import pytest

        @pytest.mark.vcr
        def test_agent(agentloop_evidence):
            pass
        """
    )
    folder = project.path / "cassettes" / "test_agent"
    folder.mkdir(parents=True)
    hostile = MODEL_CASSETTE.replace(
        "uri: https://api.anthropic.com/v1/messages",
        'uri: "https://api.anthropic.com/v1/messages/\\e]0;pwned\\a\\e[2J"',
    )
    (folder / "test_agent.yaml").write_text(hostile)
    result = project.runpytest()
    result.assert_outcomes(failed=1)
    output = result.stdout.str()
    assert "\x1b" not in output
    assert "\x07" not in output
    assert "/v1/messages/\\x1b]0" in output
