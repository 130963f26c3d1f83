"""A run that does not use the plugin is the run without it; one that does keeps its errors.

Each probe runs twice: with ``-p no:agentloop_tools`` (the control: pytest without us)
and as installed. Outcomes, exit code and output must match, line for line, once the
plugin list and the timings are set aside.
"""

from __future__ import annotations

import re

import pytest

from tests.plugin.scenarios import LEAKY_TEST

PLAIN = "def test_plain():\n    assert True\n"
# The outer run turns warnings into errors; pytest's own warning is what these runs show.
INI = "[pytest]\nfilterwarnings = always::pytest.PytestUnknownMarkWarning\n"


def comparable(result: pytest.RunResult) -> list[str]:
    """A run's output without what differs between any two runs (times, plugin list)."""
    lines = []
    for line in result.outlines + result.errlines:
        if line.startswith(("plugins:", "rootdir:", "cachedir:")):
            continue
        lines.append(re.sub(r" in [0-9.]+s( \([0-9:]+\))?", "", line))
    return lines


def same_as_without_us(project: pytest.Pytester, *args: str) -> pytest.RunResult:
    without = project.runpytest("-p", "no:agentloop_tools", *args)
    with_us = project.runpytest(*args)
    assert with_us.ret == without.ret
    assert comparable(with_us) == comparable(without)
    return with_us


# --- 3. near misses of the marker ------------------------------------------------------


@pytest.mark.parametrize("name", ["domain_policies", "main_policy", "domian_policy"])
def test_an_unregistered_near_miss_changes_nothing_in_a_run_that_does_not_use_us(
    project: pytest.Pytester, name: str
) -> None:
    project.makeini(INI)
    project.makepyfile(
        test_project=f"import pytest\n\n@pytest.mark.{name}\ndef test_marked():\n    pass\n"
    )
    result = same_as_without_us(project, "-v")
    assert result.ret == pytest.ExitCode.OK
    # (pytest's own unknown-mark warning is printed alike in both runs, or in neither:
    # pytest.mark remembers, process-wide, the names an earlier in-process run registered.)


def test_a_near_miss_with_our_keywords_is_an_attempt_to_configure_us(
    project: pytest.Pytester,
) -> None:
    project.makeini(INI)
    project.makepyfile(
        test_project="""
        import pytest

        @pytest.mark.domian_policy(allow=["python.org"])
        def test_marked():
            pass
        """
    )
    assert project.runpytest("-p", "no:agentloop_tools").ret == pytest.ExitCode.OK
    result = project.runpytest()
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*@pytest.mark.domian_policy on *one typo away from*"])


def test_a_near_miss_of_our_table_is_an_attempt_to_configure_us(
    project: pytest.Pytester,
) -> None:
    project.makeini(INI)
    project.makepyprojecttoml('[tool.agentloop_tools]\nblock = ["x.org"]\n')
    project.makepyfile(test_plain=PLAIN)
    result = project.runpytest()
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*[[]tool.agentloop_tools[]] is not read*"])


def test_a_run_that_uses_us_still_stops_at_a_near_miss(project: pytest.Pytester) -> None:
    project.makeini(INI)
    project.makepyfile(
        test_project="import pytest\n\n@pytest.mark.domain_policies\ndef test_marked():\n"
        "    pass\n\n\ndef test_env(agentloop_env):\n    pass\n"
    )
    result = project.runpytest()
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*one typo away from @pytest.mark.domain_policy*"])


def test_a_run_configured_for_us_still_stops_at_a_near_miss(project: pytest.Pytester) -> None:
    project.makeini(INI + "agentloop_block_domains = x.org\n")
    project.makepyfile(
        test_project="import pytest\n\n@pytest.mark.domain_polcy\ndef test_marked():\n    pass\n"
    )
    assert project.runpytest().ret == pytest.ExitCode.USAGE_ERROR


# --- 4. a project's own domain_policy marker ---------------------------------------------

OWN_MARKER = """
import pytest

@pytest.mark.domain_policy("strict")
def test_positional():
    pass

@pytest.mark.domain_policy
def test_bare():
    pass

@pytest.mark.domain_policy(level=2)
def test_its_own_keyword():
    pass
"""


def test_a_marker_the_project_registered_itself_is_its_own(project: pytest.Pytester) -> None:
    project.makeini(INI + "markers =\n    domain_policy(name): the project's own policy level\n")
    project.makepyfile(test_project=OWN_MARKER)
    result = same_as_without_us(project, "--strict-markers", "-v")
    result.assert_outcomes(passed=3)


def test_a_marker_registered_in_a_conftest_is_the_projects_too(project: pytest.Pytester) -> None:
    project.makeconftest(
        "def pytest_configure(config):\n"
        "    config.addinivalue_line('markers', 'domain_policy(name): ours, not theirs')\n"
    )
    project.makepyfile(test_project=OWN_MARKER)
    result = same_as_without_us(project, "--strict-markers")
    result.assert_outcomes(passed=3)


def test_the_projects_own_marker_in_our_keyword_form_is_a_clash(project: pytest.Pytester) -> None:
    project.makeini(INI + "markers =\n    domain_policy(name): the project's own\n")
    project.makepyfile(
        test_project="""
        import pytest

        @pytest.mark.domain_policy(allow=["python.org"])
        def test_marked():
            pass
        """
    )
    result = project.runpytest()
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(
        ["*domain_policy on test_project.py::test_marked is a marker this project registered "
         "itself, but it is written with agentloop-tools' keyword(s) allow*"]
    )  # fmt: skip


def test_an_unregistered_positional_marker_is_still_ours_and_refused(
    project: pytest.Pytester,
) -> None:
    project.makepyfile(
        test_project="import pytest\n\n@pytest.mark.domain_policy('strict')\n"
        "def test_marked():\n    pass\n"
    )
    result = project.runpytest()
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*pass keyword arguments only*"])


# --- 5. a pyproject.toml we cannot read ------------------------------------------------
# pytest 9 reads the rootdir's pyproject.toml itself, beside a pytest.ini, and stops on
# one it cannot read: there the plugin must be no worse than pytest without it. Before
# 9 pytest never reads it, so nothing may stop the run but a file that names us.


@pytest.mark.parametrize(
    "content",
    [
        b'[project]\nname = "{{ cookiecutter.name }}"\n[[[\n',
        b'[project]\nname = "caf\xe9"\n',  # Latin-1, not UTF-8
    ],
    ids=["not-toml", "not-utf8"],
)
def test_a_pyproject_that_does_not_mention_us_is_not_read(
    project: pytest.Pytester, content: bytes
) -> None:
    project.makeini(INI)
    (project.path / "pyproject.toml").write_bytes(content)
    project.makepyfile(test_plain=PLAIN)
    control = project.runpytest("-p", "no:agentloop_tools")
    if control.ret != pytest.ExitCode.OK:  # this pytest reads the file itself
        assert project.runpytest().ret == control.ret
        return
    same_as_without_us(project).assert_outcomes(passed=1)
    # ...nor when the plugin is used, by a fixture or by its configuration.
    project.makepyfile(test_env="def test_env(agentloop_env):\n    pass\n")
    project.runpytest().assert_outcomes(passed=2)
    project.runpytest("-o", "agentloop_block_domains=x.org").assert_outcomes(passed=2)


@pytest.mark.parametrize(
    "content",
    [
        b'[tool.agentloop-tools]\nblock = ["x.org"\n',
        b'# agentloop\n[project]\nname = "caf\xe9"\n',
    ],
    ids=["not-toml", "not-utf8"],
)
def test_a_pyproject_that_mentions_us_and_will_not_read_is_a_usage_error(
    project: pytest.Pytester, content: bytes
) -> None:
    project.makeini(INI)
    (project.path / "pyproject.toml").write_bytes(content)
    project.makepyfile(test_plain=PLAIN)
    control = project.runpytest("-p", "no:agentloop_tools")
    result = project.runpytest()
    if control.ret != pytest.ExitCode.OK:  # this pytest reads the file itself
        assert result.ret == control.ret
        return
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["ERROR: */pyproject.toml: not *TOML*"])
    assert "INTERNALERROR" not in result.stdout.str() + result.stderr.str()


# --- 6. our frames in other people's tracebacks -------------------------------------------

FAILING_TEARDOWN_CONFTEST = """
import pytest

@pytest.fixture
def resource():
    yield 1
    raise RuntimeError("the resource would not close")
"""

FAILING_TEARDOWN = """
def test_uses_it(resource):
    assert resource == 1

def test_fails(resource):
    assert resource == 2
"""


def failures(result: pytest.RunResult) -> list[str]:
    """The run's ERRORS and FAILURES sections, as printed, addresses aside."""
    text = result.stdout.str()
    start = min(
        (text.index(head) for head in ("= ERRORS =", "= FAILURES =") if head in text),
        default=0,
    )
    end = text.index("short test summary info")
    return [re.sub(r"0x[0-9a-f]+", "0x", line) for line in text[start:end].splitlines()]


@pytest.mark.parametrize("tb", ["auto", "long", "short"])
def test_a_conftest_fixtures_failing_teardown_is_reported_as_without_us(
    project: pytest.Pytester, tb: str
) -> None:
    # A fixture outside the test's module: pytest cannot cut the traceback at the test
    # module, so every frame between pytest and the fixture is shown, a wrapper's too.
    project.makeconftest(FAILING_TEARDOWN_CONFTEST)
    project.makepyfile(test_project=FAILING_TEARDOWN)
    without = project.runpytest("-p", "no:agentloop_tools", f"--tb={tb}", "-rA")
    # In a run that uses the plugin (configured for it), its hook wrappers run around
    # every test: none of their frames may show.
    project.makepyfile(test_env="def test_env(agentloop_env):\n    pass\n")
    with_us = project.runpytest(f"--tb={tb}", "-rA", "--agentloop-provider=anthropic")
    assert "the resource would not close" in "\n".join(failures(without))
    assert failures(with_us) == failures(without)
    assert "agentloop" not in "\n".join(failures(with_us))


def test_a_failing_teardown_in_an_unused_run_is_the_run_without_us(
    project: pytest.Pytester,
) -> None:
    project.makeconftest(FAILING_TEARDOWN_CONFTEST)
    project.makepyfile(test_project=FAILING_TEARDOWN)
    same_as_without_us(project, "--tb=long").assert_outcomes(passed=1, failed=1, errors=2)


# --- 7. -v says nothing unless the plugin is configured --------------------------------------


def test_verbose_says_nothing_of_ours_unless_configured(project: pytest.Pytester) -> None:
    project.makeini(INI)
    project.makepyfile(test_plain=PLAIN)
    same_as_without_us(project, "-v")
    project.makepyfile(test_env="def test_env(agentloop_env):\n    pass\n")
    used = project.runpytest("-v")  # used by a fixture, configured by nothing
    used.assert_outcomes(passed=2)
    used.stdout.no_fnmatch_line("*agentloop-tools:*")
    configured = project.runpytest("-v", "--agentloop-provider=openai")
    configured.stdout.fnmatch_lines(
        [
            "agentloop-tools: provider=openai, record-mode=none, default policy=none",
            "agentloop-tools: project policy read from */tox.ini",
        ]
    )


# --- the gate after a body that fails with pytest.fail -----------------------------------


def test_a_body_ending_in_pytest_fail_after_a_breach_reports_the_breach(
    project: pytest.Pytester,
) -> None:
    body = LEAKY_TEST.format(marker='@pytest.mark.domain_policy(block=["wikipedia.org"])')
    body = body.replace("def test_agent(", "@pytest.mark.xfail\ndef test_agent(")
    body += "    pytest.fail('giving up')\n"
    project.makepyfile(test_agent=body)
    result = project.runpytest("--record-mode=once")
    # Before, pytest.fail() was not a failure the gate looked behind: the xfail swallowed
    # the breach.
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [
            "*wikipedia.org*",
            "*the test body also failed, after its agent ran: Failed: giving up*",
        ]
    )


# --- found by review: every way a policy could quietly go ----------------------------------


@pytest.mark.parametrize(
    "table",
    ["[tool.agentlop-tools]", "[tool.agent_loop_tools]", "[tool.agentloop_tools]"],
)
def test_a_misspelt_project_table_stops_every_run(project: pytest.Pytester, table: str) -> None:
    project.makeini(INI)
    project.makepyprojecttoml(f'{table}\nblock = ["wikipedia.org"]\n')
    project.makepyfile(test_plain=PLAIN)
    unused = project.runpytest()
    assert unused.ret == pytest.ExitCode.USAGE_ERROR
    unused.stderr.fnmatch_lines(["*is not read*Rename the table*"])
    project.makepyfile(test_agent=LEAKY_TEST.format(marker=""))
    assert project.runpytest("--record-mode=once").ret == pytest.ExitCode.USAGE_ERROR


def test_a_table_name_written_with_an_escape_is_read(project: pytest.Pytester) -> None:
    project.makeini(INI)
    project.makepyprojecttoml('[tool."\\u0061gentloop-tools"]\nblock = ["wikipedia.org"]\n')
    project.makepyfile(test_agent=LEAKY_TEST.format(marker=""))
    project.runpytest("--record-mode=once").assert_outcomes(failed=1)


def test_an_empty_provider_option_is_a_usage_error(project: pytest.Pytester) -> None:
    project.makepyfile(test_plain=PLAIN)
    result = project.runpytest("--agentloop-provider=")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--agentloop-provider = '' is not a provider*"])


def test_a_property_that_is_not_a_pair_is_the_tests_own_business(
    project: pytest.Pytester,
) -> None:
    project.makepyfile(
        test_props="def test_props(request):\n"
        "    request.node.user_properties.append(('build', 'x', 'extra'))\n"
        "    request.node.user_properties.append('loose')\n"
    )
    same_as_without_us(project).assert_outcomes(passed=1)
    project.makepyfile(test_env="def test_env(agentloop_env):\n    pass\n")
    project.runpytest().assert_outcomes(passed=2)


GETFIXTUREVALUE = """
import pytest
from agentloop_tools.testing import ScriptedProvider, anthropic_message, anthropic_text
from agentloop_tools.web import native_web_search

SCRIPT = [anthropic_message([anthropic_text("See https://en.wikipedia.org/wiki/Python.")])]

{marker}
def test_agent(request):
    agentloop_agent = request.getfixturevalue("agentloop_agent")
    agent = agentloop_agent([native_web_search()], provider="anthropic",
                            http_client=ScriptedProvider("anthropic", SCRIPT).http_client())
    agent.run("Tell me about Python")
"""


def test_an_agent_asked_for_by_name_is_audited_under_the_project_policy(
    project: pytest.Pytester,
) -> None:
    project.makeini(INI + "agentloop_block_domains = wikipedia.org\n")
    project.makepyfile(test_agent=GETFIXTUREVALUE.format(marker=""))
    result = project.runpytest()
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*1 domain policy violation*"])


def test_an_agent_asked_for_by_name_after_its_cassette_opened_fails(
    project: pytest.Pytester,
) -> None:
    project.makepyfile(test_agent=GETFIXTUREVALUE.format(marker="@pytest.mark.vcr"))
    result = project.runpytest("--record-mode=once")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        ["*asked for agentloop_* through request.getfixturevalue(), after its cassette*"]
    )


def test_the_projects_own_marker_on_a_test_that_uses_our_fixtures_is_left_alone(
    project: pytest.Pytester,
) -> None:
    project.makeini(INI + "markers =\n    domain_policy(level): the project's own\n")
    project.makepyfile(
        test_project="import pytest\n\n@pytest.mark.domain_policy('strict')\n"
        "def test_env(agentloop_env):\n    pass\n"
    )
    project.runpytest("--strict-markers").assert_outcomes(passed=1)


def test_a_body_failure_after_a_breach_prints_the_breach_report_once(
    project: pytest.Pytester,
) -> None:
    body = LEAKY_TEST.format(marker='@pytest.mark.domain_policy(block=["wikipedia.org"])')
    body += "    assert 1 == 2\n"
    project.makepyfile(test_agent=body)
    result = project.runpytest("--record-mode=once")
    result.assert_outcomes(failed=1)
    text = result.stdout.str()
    assert "During handling of the above exception" not in text
    # Once in the failure (the short summary cuts it): before, twice, chained.
    assert text.count("domain policy violations (DomainPolicy.block(") == 1
    result.stdout.fnmatch_lines(["*the test body also failed*AssertionError*"])
