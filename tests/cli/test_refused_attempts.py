"""``agentloop-tools audit``: a URL web_fetch refused is listed and counted in every
format, and fails the run (exit 1) only when refused attempts are set to fail.

The transcripts are a real agent's (a scripted model calling the real web_fetch under
the policy, its pages on a mock transport), saved as a transcript log; the command line
runs through its real entry point, in a folder whose pytest configuration is the test's.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agentloop_tools.web import DomainPolicy, web_fetch
from tests.cli.helpers import run
from tests.cli.test_sarif import sarif
from tests.fetch.helpers import Recorder, converse, public_resolver, turn

pytestmark = pytest.mark.agentloop_06

POLICY = DomainPolicy.allow(["python.org"])
EVIL = "https://evil.example/page"


def _log(folder: Path, *, tool_policy: DomainPolicy | None = POLICY) -> Path:
    fetch = web_fetch(http_client=Recorder().client(), resolver=public_resolver, policy=tool_policy)
    transcript = converse(fetch, turn({"url": EVIL}))
    path = folder / "run.jsonl"
    path.write_text(transcript.model_dump_json() + "\n")
    return path


@pytest.fixture
def refused(tmp_path: Path) -> Path:
    (tmp_path / "pytest.ini").write_text("[pytest]\n")
    return _log(tmp_path)


def test_a_refused_attempt_alone_is_listed_and_counted_and_exits_0(refused: Path) -> None:
    result = run("audit", refused, "--allow", "python.org", cwd=refused.parent)
    assert result.returncode == 0, result.stderr
    assert (
        f"tool-call {EVIL}  [not on the allowlist; refused by web_fetch, nothing read: the "
        "policy held, not failing]"
    ) in result.stdout
    assert (
        "1 violation(s) in 1 of 1 file(s); policy DomainPolicy.allow(['python.org']) from "
        "--allow. 1 of them refused attempt(s), the policy held; not failing (set "
        "--refused-attempts fail to fail on them)."
    ) in result.stdout


def test_a_page_web_fetch_read_still_exits_1(tmp_path: Path) -> None:
    (tmp_path / "pytest.ini").write_text("[pytest]\n")
    path = _log(tmp_path, tool_policy=None)
    result = run("audit", path, "--allow", "python.org", cwd=tmp_path)
    assert result.returncode == 1
    assert "refused" not in result.stdout


@pytest.mark.parametrize(
    ("flag", "ini", "origin"),
    [
        (["--refused-attempts", "fail"], "", "--refused-attempts fail"),
        (
            [], "agentloop_refused_attempts = fail",
            "ini key agentloop_refused_attempts in pytest.ini",
        ),
        # The flag's report does not lift the project's fail.
        (
            ["--refused-attempts", "report"], "agentloop_refused_attempts = fail",
            "ini key agentloop_refused_attempts in pytest.ini",
        ),
    ],
    ids=["flag", "ini", "flag-report-does-not-lift-ini"],
)  # fmt: skip
def test_refused_attempts_set_to_fail_exit_1_and_say_where(
    refused: Path, flag: list[str], ini: str, origin: str
) -> None:
    (refused.parent / "pytest.ini").write_text(f"[pytest]\n{ini}\n")
    result = run("audit", refused, "--allow", "python.org", *flag, cwd=refused.parent)
    assert result.returncode == 1
    assert (
        f"1 of them refused attempt(s), the policy held; failing: refused attempts set to "
        f"fail ({origin})."
    ) in result.stdout


def test_the_project_table_sets_fail_for_the_command_line_too(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text(
        '[tool.pytest.ini_options]\n\n[tool.agentloop-tools]\nallow = ["python.org"]\n'
        'refused_attempts = "fail"\n'
    )
    result = run("audit", _log(tmp_path), cwd=tmp_path)
    assert result.returncode == 1
    assert "refused_attempts in pyproject.toml [tool.agentloop-tools]" in result.stdout


def test_a_bad_value_is_a_usage_error_naming_the_allowed_ones(refused: Path) -> None:
    flag = run("audit", refused, "--allow", "python.org", "--refused-attempts", "warn")
    assert flag.returncode == 2
    # (argparse quotes the choices since Python 3.12.8; the words are the same.)
    assert "invalid choice: 'warn' (choose from" in flag.stderr
    last = flag.stderr.splitlines()[-1]
    assert "report" in last
    assert "fail" in last
    (refused.parent / "pytest.ini").write_text("[pytest]\nagentloop_refused_attempts = warn\n")
    ini = run("audit", refused, "--allow", "python.org", cwd=refused.parent)
    assert ini.returncode == 2
    assert "'warn' is not a refused-attempts setting; use 'report' or 'fail'" in ini.stderr


def test_json_counts_it_apart(refused: Path) -> None:
    result = run("audit", refused, "--allow", "python.org", "--format", "json", cwd=refused.parent)
    assert result.returncode == 0
    document = json.loads(result.stdout)
    assert document["summary"]["violations"] == 1
    assert (document["summary"]["refused_attempts"], document["summary"]["failing"]) == (1, 0)
    assert document["refused_attempts"] == {"setting": "report", "from": None}
    [violation] = document["files"][0]["violations"]
    assert (violation["url"], violation["refused"], violation["fails"]) == (EVIL, True, False)


def test_github_shows_a_warning_unless_it_fails(refused: Path) -> None:
    args = ("audit", refused, "--allow", "python.org", "--format", "github")
    reported = run(*args, cwd=refused.parent)
    assert reported.returncode == 0
    assert reported.stdout.startswith("::warning file=")
    assert "title=Refused attempt (the policy held)::tool-call " in reported.stdout
    failed = run(*args, "--refused-attempts", "fail", cwd=refused.parent)
    assert failed.returncode == 1
    assert failed.stdout.startswith("::error file=")
    assert "title=Domain policy violation::" in failed.stdout


def test_junit_shows_it_without_a_failure_unless_it_fails(refused: Path) -> None:
    args = ("audit", refused, "--allow", "python.org", "--format", "junit")
    reported = run(*args, cwd=refused.parent)
    assert reported.returncode == 0
    assert 'failures="0"' in reported.stdout
    assert "<system-out>1 refused attempt(s), the policy held" in reported.stdout
    failed = run(*args, "--refused-attempts", "fail", cwd=refused.parent)
    assert 'failures="1"' in failed.stdout
    assert "1 domain policy violation(s) (DomainPolicy.allow(['python.org'])), 1 of them " in (
        failed.stdout.replace("&apos;", "'")
    )


def test_sarif_makes_it_a_warning_unless_it_fails(refused: Path) -> None:
    code, document = sarif(refused, "--allow", "python.org", cwd=refused.parent)
    assert code == 0
    [result] = document["runs"][0]["results"]
    assert (result["level"], result["properties"]["refused"]) == ("warning", True)
    code, document = sarif(
        refused, "--allow", "python.org", "--refused-attempts", "fail", cwd=refused.parent
    )
    assert code == 1
    assert document["runs"][0]["results"][0]["level"] == "error"


def test_a_baseline_holds_it_and_a_new_one_fails_only_when_asked(refused: Path) -> None:
    folder = refused.parent
    baseline = folder / "baseline.json"
    written = run(
        "audit", refused, "--allow", "python.org", "--write-baseline", baseline, cwd=folder
    )
    assert written.returncode == 0
    [entry] = json.loads(baseline.read_text())["violations"]
    assert (entry["where"], entry["url"]) == ("tool-call", EVIL)
    known = run(
        "audit", refused, "--allow", "python.org", "--baseline", baseline,
        "--refused-attempts", "fail", cwd=folder,
    )  # fmt: skip
    assert known.returncode == 0
    baseline.write_text(json.dumps({**json.loads(baseline.read_text()), "violations": []}))
    new_reported = run(
        "audit", refused, "--allow", "python.org", "--baseline", baseline, cwd=folder
    )
    assert new_reported.returncode == 0
    assert "refused by web_fetch" in new_reported.stdout
    new_failing = run(
        "audit", refused, "--allow", "python.org", "--baseline", baseline,
        "--refused-attempts", "fail", cwd=folder,
    )  # fmt: skip
    assert new_failing.returncode == 1
