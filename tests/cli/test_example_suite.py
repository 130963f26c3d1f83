"""The example agent suite (``./dev demo``) passes as a user runs it, its breach expected."""

from __future__ import annotations

import os
import re
import subprocess
import sys

from tests.cli.helpers import REPO


def test_the_example_suite_passes_and_its_breach_is_the_one_expected_failure() -> None:
    env = {key: value for key, value in os.environ.items() if key not in ("CI", "LLM_PROVIDER")}
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "examples", "-q", "-rx", "-p", "no:randomly"],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    summary = result.stdout.strip().splitlines()[-1]
    assert re.search(r"\b\d+ (?:failed|errors?)\b", summary) is None, summary
    assert "1 xfailed" in summary, summary
    assert "XFAIL examples/test_research_agent.py::test_a_leaked_domain_fails_the_build" in (
        result.stdout
    )
