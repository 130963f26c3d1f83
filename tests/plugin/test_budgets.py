"""Budgets: ``agent_budget``, the ``agentloop_budget`` ini key, and the recording spend cap.

Real pytest runs: tests recorded from scripts (no key, no network), then replayed; a
replay checks the recorded usage, so a budget holds without a key. Over budget fails
naming the counter, the limit, the spend and each conversation's share; a limit on a
counter the provider did not report fails saying it is unknown.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from agentloop_tools._plugin.scope import FROM_SCRIPTS_OPTION, RECORD_BUDGET_OPTION

pytestmark = pytest.mark.agentloop_06

CONFTEST = """
import pytest
from agentloop_tools.testing import (
    anthropic_message, anthropic_search, anthropic_text, chat_completion,
)


def billed(message, **usage):
    message["usage"] = {**message["usage"], **usage}
    return message


def searched():
    return [
        billed(
            anthropic_message(
                [anthropic_search("python docs", ["https://docs.python.org/3/"]),
                 anthropic_search("python tutorial", ["https://docs.python.org/3/tutorial/"])],
                stop_reason="pause_turn",
            ),
            input_tokens=1200, output_tokens=30, server_tool_use={"web_search_requests": 1},
        ),
        billed(
            anthropic_message([anthropic_text("See https://docs.python.org/3/")]),
            input_tokens=1500, output_tokens=80, server_tool_use={"web_search_requests": 1},
        ),
    ]


def two():
    return [
        billed(anthropic_message([anthropic_text("one")]), input_tokens=10, output_tokens=1),
        billed(anthropic_message([anthropic_text("two")]), input_tokens=20, output_tokens=2),
    ]


@pytest.fixture
def agentloop_script(request):
    if request.node.name.startswith("test_chat"):
        return [chat_completion("See https://docs.python.org/3/")]
    if request.node.name.startswith("test_two"):
        return two()
    return searched()
"""

TESTS = """
import pytest
from agentloop_tools.web import native_web_search


@pytest.mark.vcr
{marker}
def test_search(agentloop_agent):
    agentloop_agent([native_web_search()], provider="anthropic").run("Python docs?")


@pytest.mark.vcr
def test_two(agentloop_agent):
    agent = agentloop_agent([], provider="anthropic")
    agent.run("one?")
    agent.run("two?")


@pytest.mark.vcr
def test_chat(agentloop_agent):
    agentloop_agent([], provider="openrouter").run("Python docs?")
"""


def _write(project: pytest.Pytester, marker: str = "") -> None:
    project.makeconftest(CONFTEST)
    project.makepyfile(test_agent=TESTS.format(marker=marker))


def _ini(project: pytest.Pytester, budget: str) -> None:
    (project.path / "pytest.ini").write_text(f"[pytest]\nagentloop_budget = {budget}\n")


@pytest.fixture
def recorded(project: pytest.Pytester) -> pytest.Pytester:
    _write(project)
    result = project.runpytest("--record-mode=once", FROM_SCRIPTS_OPTION.flag, "-p", "no:randomly")
    result.assert_outcomes(passed=3)
    return project


def test_a_replay_checks_the_recorded_usage_against_the_ini_default_without_a_key(
    recorded: pytest.Pytester,
) -> None:
    _ini(recorded, "output_tokens=100, searches=5")
    result = recorded.runpytest("-k", "test_search or test_two")
    result.assert_outcomes(passed=1, failed=1, deselected=1)
    result.stdout.fnmatch_lines(
        [
            "*test_agent.py::test_search spent more than its budget allows:",
            "- output_tokens: limit 100, spent 110 (conversation 1: 110)",
            "(budget from ini key agentloop_budget: output_tokens=100, searches=5)",
            "Fix: make the agent spend less*",
        ],
        consecutive=True,
    )


def test_a_marker_replaces_the_default_for_the_counters_it_names_only(
    recorded: pytest.Pytester,
) -> None:
    _ini(recorded, "output_tokens=100, searches=1")
    (recorded.path / "test_agent.py").write_text(
        TESTS.format(marker="@pytest.mark.agent_budget(output_tokens=500)")
    )
    result = recorded.runpytest("-k", "test_search")
    result.assert_outcomes(failed=1, deselected=2)
    # output_tokens (110) is within the marker's 500; searches keeps the default's 1.
    result.stdout.fnmatch_lines(
        [
            "*test_search spent more than its budget allows:",
            "- searches: limit 1, spent 2 (conversation 1: 2)",
            "(budget from @pytest.mark.agent_budget on test_agent.py::test_search: "
            "output_tokens=500; ini key agentloop_budget: searches=1)",
        ],
        consecutive=True,
    )
    result.stdout.no_fnmatch_line("*output_tokens: limit*")


def test_the_failure_names_each_conversations_share(recorded: pytest.Pytester) -> None:
    _ini(recorded, "input_tokens=25")
    result = recorded.runpytest("-k", "test_two")
    result.assert_outcomes(failed=1, deselected=2)
    result.stdout.fnmatch_lines(
        ["- input_tokens: limit 25, spent 30 (conversation 1: 10, conversation 2: 20)"]
    )


def test_a_limit_on_a_counter_the_provider_did_not_report_fails_saying_it_is_unknown(
    recorded: pytest.Pytester,
) -> None:
    (recorded.path / "test_agent.py").write_text(
        TESTS.replace(
            "def test_chat",
            "@pytest.mark.agent_budget(searches=3, model_requests=1)\ndef test_chat",
        ).format(marker="")
    )
    result = recorded.runpytest("-k", "test_chat")
    result.assert_outcomes(failed=1, deselected=2)
    result.stdout.fnmatch_lines(
        [
            "*test_chat has a budget on counter(s) the provider did not report, so they are "
            "unknown and the budget cannot hold:",
            "- searches: limit 3, spent unknown (conversation 1: unknown)",
            "A provider that shows no hosted call (Chat Completions)*",
        ],
        consecutive=True,
    )
    result.stdout.no_fnmatch_line("*model_requests: limit*")


def test_an_xfail_does_not_hide_an_overspend(recorded: pytest.Pytester) -> None:
    (recorded.path / "test_agent.py").write_text(
        TESTS.format(marker="@pytest.mark.agent_budget(searches=1)\n@pytest.mark.xfail")
    )
    result = recorded.runpytest("-k", "test_search")
    result.assert_outcomes(failed=1, deselected=2)
    result.stdout.fnmatch_lines(["*- searches: limit 1, spent 2*"])


def test_the_report_shows_the_budget_and_the_spend(recorded: pytest.Pytester) -> None:
    (recorded.path / "test_agent.py").write_text(
        TESTS.format(marker="@pytest.mark.agent_budget(searches=2, input_tokens=10)")
    )
    result = recorded.runpytest(
        "-k", "test_search", "--agentloop-report=r.json", "--agentloop-report-html=r.html"
    )
    result.assert_outcomes(failed=1, deselected=2)
    [test] = json.loads((recorded.path / "r.json").read_text())["tests"]
    assert test["budget"]["limits"] == {"input_tokens": 10, "searches": 2}
    assert test["budget"]["spent"] == {"input_tokens": 2700, "searches": 2}
    assert test["budget"]["over"] == ["input_tokens"]
    assert test["failure"]["kind"] == "budget"
    html = (recorded.path / "r.html").read_text()
    assert "Budget:" in html
    assert "input_tokens 2700 of 10" in html


def test_a_budget_within_its_limits_passes_and_a_marker_alone_puts_a_test_in_scope(
    project: pytest.Pytester,
) -> None:
    # No fixture of ours: the marker alone makes it the plugin's (its evidence is read).
    project.makepyfile(
        """
        import pytest

        @pytest.mark.agent_budget(tool_calls=0)
        def test_no_agent(request):
            assert "agentloop_evidence" in request.fixturenames
        """
    )
    project.runpytest().assert_outcomes(passed=1)


# Usage errors: stop the run before any test, naming the test and the fix -----------------


@pytest.mark.parametrize(
    ("marker", "expected"),
    [
        ("agent_budget(searchs=5)", "*unknown budget counter(s) searchs*"),
        ("agent_budget(searches='5')", "*searches='5' is not a whole number*"),
        ("agent_budget(searches=-1)", "*searches=-1 is out of range*"),
        ("agent_budget(searches=True)", "*searches=True is not a whole number*"),
        ("agent_budget(5)", "*pass keyword arguments only*"),
        ("agent_budget()", "*names no limit, so it would check nothing*"),
    ],
)
def test_a_bad_marker_is_a_usage_error(
    project: pytest.Pytester, marker: str, expected: str
) -> None:
    project.makepyfile(
        f"""
        import pytest

        @pytest.mark.{marker}
        def test_agent():
            pass
        """
    )
    result = project.runpytest()
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(
        [f"ERROR: @pytest.mark.agent_budget on test_*.py::test_agent{expected}"]
    )


def test_two_markers_on_one_node_are_refused(project: pytest.Pytester) -> None:
    project.makepyfile(
        """
        import pytest

        @pytest.mark.agent_budget(searches=1)
        @pytest.mark.agent_budget(searches=9)
        def test_agent():
            pass
        """
    )
    result = project.runpytest()
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*the test carries more than one agent_budget marker*"])


def test_the_closest_marker_wins_for_each_counter(recorded: pytest.Pytester) -> None:
    source = TESTS.format(marker="@pytest.mark.agent_budget(searches=2)")
    farther = "pytestmark = pytest.mark.agent_budget(searches=1, output_tokens=5)"
    recorded.makepyfile(test_agent=f"import pytest\n{farther}\n{source}")
    result = recorded.runpytest("-k", "test_search")
    result.assert_outcomes(failed=1, deselected=2)
    result.stdout.fnmatch_lines(["- output_tokens: limit 5, spent 110 (conversation 1: 110)"])
    result.stdout.no_fnmatch_line("*searches: limit*")


def test_a_near_miss_of_the_marker_is_caught(project: pytest.Pytester) -> None:
    project.makeini("[pytest]\nfilterwarnings = always::pytest.PytestUnknownMarkWarning\n")
    project.makepyfile(
        """
        import pytest

        @pytest.mark.agent_budgte(searches=1)
        def test_agent():
            pass
        """
    )
    result = project.runpytest()
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(
        ["*@pytest.mark.agent_budgte on *test_agent is not a registered marker*agent_budget*"]
    )


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("searches=five", "*searches='five' is not a whole number*"),
        ("searchs=5", "*unknown budget counter(s) searchs*"),
        ("searches", "*'searches' is not NAME=LIMIT*"),
        ("searches=1, searches=2", "*searches is given twice*"),
    ],
)
def test_a_bad_ini_default_stops_the_run(
    project: pytest.Pytester, value: str, expected: str
) -> None:
    project.makepyfile("def test_plain():\n    pass\n")
    _ini(project, value)
    result = project.runpytest()
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([f"ERROR: ini key agentloop_budget{expected}"])


def test_an_ini_key_written_empty_stops_the_run(project: pytest.Pytester) -> None:
    project.makepyfile("def test_plain():\n    pass\n")
    _ini(project, "")
    result = project.runpytest()
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["ERROR: ini key agentloop_budget is written with no limit*"])


def test_a_run_with_no_budget_key_does_not_load_the_testing_library_to_start(
    project: pytest.Pytester,
) -> None:
    # Collection time: the key's reader loads agentloop, which a run that sets no
    # budget must not pay for when the plugin starts.
    project.makeconftest(
        """
import sys

def pytest_sessionstart(session):
    loaded = "agentloop_tools.testing" in sys.modules
    print("TESTING LOADED AT START:", loaded)
"""
    )
    project.makepyfile("def test_plain():\n    pass\n")
    result = project.runpytest_subprocess("-s", "--agentloop-report", "report.json")
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(["*TESTING LOADED AT START: False*"])


# The recording spend cap ------------------------------------------------------------------

CAPPED_TESTS = """
import pytest


@pytest.mark.vcr
@pytest.mark.parametrize("n", range({count}))
def test_two(agentloop_agent, n):
    agent = agentloop_agent([], provider="anthropic")
    agent.run("one?")
    agent.run("two?")
"""


def _interactions(project: pytest.Pytester) -> dict[str, int]:
    found = {}
    for path in sorted((project.path / "cassettes").rglob("*.yaml")):
        data = yaml.safe_load(path.read_text())
        found[path.stem] = len(data.get("interactions") or [])
    return found


def test_the_spend_cap_refuses_what_would_be_recorded_once_reached(
    project: pytest.Pytester,
) -> None:
    project.makeconftest(CONFTEST)
    project.makepyfile(test_agent=CAPPED_TESTS.format(count=3))
    result = project.runpytest(
        "--record-mode=once",
        FROM_SCRIPTS_OPTION.flag,
        RECORD_BUDGET_OPTION.flag,
        "model_requests=3",
    )
    # The first test records 2 requests; the second its first (3 reached), then is refused.
    result.assert_outcomes(passed=1, failed=2)
    result.stdout.fnmatch_lines(
        [
            "*RECORDING BUDGET SPENT test_agent.py::test_two[[]1[]]: this run's recordings "
            "reached the spend cap --agentloop-record-budget model_requests=3 (spent so far: "
            "model_requests 3)*"
        ]
    )
    # What was written stays.
    assert _interactions(project) == {"test_two[0]": 2, "test_two[1]": 1}
    leftovers = list((project.path / ".pytest_cache").rglob("record-spend-*"))
    assert leftovers == []


def test_the_spend_cap_counts_tokens_and_hosted_searches(project: pytest.Pytester) -> None:
    _write(project)
    result = project.runpytest(
        "--record-mode=once", FROM_SCRIPTS_OPTION.flag, "-p", "no:randomly",
        RECORD_BUDGET_OPTION.flag, "searches=2",
    )  # fmt: skip
    # test_search's two billed searches reach the cap: the next tests are refused.
    result.assert_outcomes(passed=1, failed=2)
    result.stdout.fnmatch_lines(["*spent so far: searches 2*"])


def test_the_spend_cap_holds_across_xdist_workers(project: pytest.Pytester) -> None:
    project.makeconftest(CONFTEST)
    project.makepyfile(test_agent=CAPPED_TESTS.format(count=6))
    result = project.runpytest(
        "-n", "2", "--record-mode=once", FROM_SCRIPTS_OPTION.flag,
        RECORD_BUDGET_OPTION.flag, "tokens=40",
    )  # fmt: skip
    # Each request records 11 or 22 tokens: 40 is reached within the first few requests,
    # whichever worker makes them; at most one request in flight per worker overshoots.
    outcomes = result.parseoutcomes()
    assert outcomes.get("failed", 0) >= 4
    recorded = sum(_interactions(project).values())
    assert 2 <= recorded <= 4 + 2
    result.stdout.fnmatch_lines(["*RECORDING BUDGET SPENT*--agentloop-record-budget tokens=40*"])


@pytest.mark.parametrize("value", ["tokens", "tokens=x", "dollars=5", "tokens=1,tokens=2", ""])
def test_a_bad_spend_cap_stops_the_run(project: pytest.Pytester, value: str) -> None:
    project.makepyfile("def test_plain():\n    pass\n")
    result = project.runpytest(f"{RECORD_BUDGET_OPTION.flag}={value}")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["ERROR: --agentloop-record-budget=*is not COUNTER=N*"])


def test_a_replay_is_not_capped(recorded: pytest.Pytester) -> None:
    result = recorded.runpytest(RECORD_BUDGET_OPTION.flag, "model_requests=0")
    result.assert_outcomes(passed=3)
    assert not list(Path(recorded.path).rglob("record-spend-*"))
