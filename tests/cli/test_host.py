"""The command line cannot be turned against its host or its CI (issue 26, section D).

Files it writes follow no planted link; what it prints cannot forge a GitHub Actions
workflow command; what it reads besides the evidence (a baseline, a policy file) is a
regular file read within a cap, never a FIFO that blocks or a device without end.
"""

from __future__ import annotations

import json
import os
import shutil
import stat
from pathlib import Path

import pytest

from tests.cli.helpers import OPENAI_DEMO, run

# The demo cassette's violations under this policy: a baseline with entries.
POLICY = ("--block", "medium.com")


@pytest.fixture
def suite(tmp_path: Path) -> Path:
    folder = tmp_path / "repo"
    folder.mkdir()
    shutil.copy(OPENAI_DEMO, folder / "a.yaml")
    return folder


# --- item 7: --write-baseline follows no link ------------------------------------


def test_a_planted_partial_link_is_not_followed(suite: Path) -> None:
    victim = suite.parent / "victim.txt"
    victim.write_text("precious\n")
    # The name the old writer always used, planted as a link out of the tree.
    (suite / ".audit-baseline.json.partial").symlink_to("../victim.txt")
    baseline = suite / "audit-baseline.json"
    result = run("audit", suite / "a.yaml", *POLICY, "--write-baseline", baseline)
    assert result.returncode == 0, result.stderr
    assert victim.read_text() == "precious\n"
    assert not baseline.is_symlink()
    assert json.loads(baseline.read_text())["violations"]
    # Nothing of ours left beside it: only the planted link and the baseline.
    assert sorted(p.name for p in suite.iterdir()) == [
        ".audit-baseline.json.partial",
        "a.yaml",
        "audit-baseline.json",
    ]


def test_a_baseline_that_is_a_link_is_replaced_not_its_target(suite: Path) -> None:
    victim = suite.parent / "victim.txt"
    victim.write_text("precious\n")
    baseline = suite / "audit-baseline.json"
    baseline.symlink_to("../victim.txt")
    result = run("audit", suite / "a.yaml", *POLICY, "--write-baseline", baseline)
    assert result.returncode == 0, result.stderr
    assert victim.read_text() == "precious\n"
    assert not baseline.is_symlink()
    assert json.loads(baseline.read_text())["format"] == "agentloop-tools-baseline"


def test_the_baseline_is_an_ordinary_file_for_the_umask(suite: Path) -> None:
    baseline = suite / "audit-baseline.json"
    mask = os.umask(0o022)
    try:
        run("audit", suite / "a.yaml", *POLICY, "--write-baseline", baseline)
    finally:
        os.umask(mask)
    assert stat.S_IMODE(baseline.stat().st_mode) == 0o644
