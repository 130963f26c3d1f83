"""The inert plugin, in-process: the running pytest below a floor raised for the test.

``test_old_pytest.py`` runs a real pytest 7.4 in a subprocess, which shows that the
entry point loads there at all. These runs go through the same decisions in the test
process, on this pytest, for every way a run can ask for the plugin: each option, each
ini key, the project table (even a broken one), a fixture and the marker.
"""

from __future__ import annotations

import pytest

import agentloop_tools._plugin.scope as scope
from agentloop_tools._plugin.scope import OPTIONS

FLOOR = (99, 0)
# Header lines that name plugins or paths: a folder may be called agentloop-tools.
HEADER_PATHS = ("plugins:", "platform ", "rootdir:", "cachedir:", "configfile:")
NEEDS = "agentloop-tools needs pytest>=99.0; this is pytest"


@pytest.fixture
def old(project: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> pytest.Pytester:
    monkeypatch.setattr(scope, "MIN_PYTEST", FLOOR)
    project.makeini("[pytest]\n")
    project.makepyfile(test_plain="def test_ok():\n    pass\n")
    return project


def test_a_run_that_does_not_use_the_plugin_runs_as_without_it(old: pytest.Pytester) -> None:
    result = old.runpytest("-p", "no:randomly")
    result.assert_outcomes(passed=1)
    # (The "plugins:" header names every installed plugin; nothing else may name us.)
    said = [line for line in result.outlines + result.errlines if "agentloop" in line]
    assert [line for line in said if not line.startswith("plugins:")] == []
    verbose = old.runpytest("-p", "no:randomly", "-v")
    verbose.assert_outcomes(passed=1)
    said = [line for line in verbose.outlines + verbose.errlines if "agentloop" in line]
    # (-v's header names the interpreter's path, which may hold the word: not ours.)
    assert [line for line in said if not line.startswith(HEADER_PATHS)] == []


@pytest.mark.parametrize("option", OPTIONS, ids=lambda option: option.flag)
def test_each_option_of_the_plugin_stops_the_run(
    old: pytest.Pytester, option: scope.Option
) -> None:
    value = [] if option.default is False else ["report.json"]
    if option == scope.PROVIDER_OPTION:
        value = ["anthropic"]
    if option == scope.REFUSED_ATTEMPTS_OPTION:
        value = ["fail"]
    if option == scope.DRIFT_OPTION:
        value = ["fail-on-domains"]
    result = old.runpytest(option.flag, *value)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert NEEDS in result.stderr.str()
    assert f"(the run asks for it: {option.flag})" in result.stderr.str()


@pytest.mark.parametrize(
    "key", ["agentloop_block_domains", "agentloop_allowed_domains", "agentloop_policy_fil"]
)
def test_an_ini_key_stops_the_run_even_misspelt(old: pytest.Pytester, key: str) -> None:
    old.makeini(f"[pytest]\n{key} = python.org\n")
    result = old.runpytest()
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert f"(the run asks for it: ini key {key})" in result.stderr.str()


@pytest.mark.parametrize("table", ['block = ["x.org"]\n', 'blokc = ["x.org"]\n'])
def test_the_project_table_stops_the_run_even_broken(old: pytest.Pytester, table: str) -> None:
    (old.path / "tox.ini").unlink()
    old.makepyprojecttoml(f"[tool.pytest.ini_options]\n\n[tool.agentloop-tools]\n{table}")
    result = old.runpytest()
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert "[tool.agentloop-tools])" in result.stderr.str()


def test_tests_that_use_the_plugin_are_named_four_at_most(old: pytest.Pytester) -> None:
    old.makepyfile(
        test_agents="""
        import pytest

        def test_a(agentloop_agent): pass
        def test_b(agentloop_evidence): pass
        @pytest.mark.domain_policy(block=["x.org"])
        def test_c(): pass
        def test_d(agentloop_agent): pass
        def test_e(agentloop_agent): pass
        """
    )
    result = old.runpytest("-p", "no:randomly")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert NEEDS in result.stderr.str()
    assert (
        "(used by test_agents.py::test_a, test_agents.py::test_b, test_agents.py::test_c "
        "and 2 more)" in result.stderr.str()
    )
