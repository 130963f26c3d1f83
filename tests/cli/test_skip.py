"""``--exclude GLOB`` and ``--respect-gitignore``: what they leave out, always counted."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.cli.helpers import ANTHROPIC_DEMO, OPENAI_DEMO, run


@pytest.fixture
def suite(tmp_path: Path) -> Path:
    """tests/cassettes with a legacy folder, in a git repository."""
    root = tmp_path / "cassettes"
    (root / "legacy").mkdir(parents=True)
    (root / "current").mkdir()
    shutil.copy(OPENAI_DEMO, root / "legacy" / "old.yaml")
    shutil.copy(OPENAI_DEMO, root / "legacy" / "older.yaml")
    shutil.copy(ANTHROPIC_DEMO, root / "current" / "agent.yaml")
    shutil.copy(OPENAI_DEMO, root / "current" / "agent.old.yaml")
    return root


def test_an_excluded_folder_is_not_read_and_its_files_are_counted(suite: Path) -> None:
    result = run("audit", suite, "--block", "medium.com", "--exclude", "legacy")
    assert result.returncode == 1  # current/agent.old.yaml still breaches
    assert "legacy" not in result.stdout
    assert "left out 2 file(s): 2 matching --exclude" in result.stderr
    document = json.loads(
        run("audit", suite, "--block", "medium.com", "--exclude", "legacy", "--format",
            "json").stdout
    )  # fmt: skip
    assert document["left_out"] == {
        "exclude": 2,
        "gitignore": 0,
        "not_evidence": 0,
        "outside_links": 0,
        "link_loops": 0,
    }
    assert document["summary"]["files"] == 2


def test_excludes_repeat_and_match_names_and_paths(suite: Path) -> None:
    result = run("audit", suite, "--block", "medium.com", "--exclude", "*.old.yaml",
                 "--exclude", "legacy/old*.yaml", "--exclude", "legacy/older.yaml")  # fmt: skip
    assert result.returncode == 0, result.stdout
    assert "left out 3 file(s): 3 matching --exclude" in result.stderr
    assert result.stdout.startswith("0 violation(s) in 0 of 1 file(s)")


def test_a_path_glob_matches_from_the_current_folder_too(suite: Path) -> None:
    result = run("audit", "cassettes", "--block", "medium.com", "--exclude",
                 "cassettes/legacy/*", "--exclude", "cassettes/current/*.old.yaml",
                 cwd=suite.parent)  # fmt: skip
    assert result.returncode == 0, result.stdout
    assert "left out 3 file(s)" in result.stderr


def test_an_excluded_file_named_on_the_command_line_is_left_out_and_counted(suite: Path) -> None:
    result = run("audit", suite / "current" / "agent.old.yaml", suite / "current" / "agent.yaml",
                 "--block", "medium.com", "--exclude", "*.old.yaml")  # fmt: skip
    assert result.returncode == 0
    assert "left out 1 file(s): 1 matching --exclude" in result.stderr


def test_excluding_everything_is_no_file_to_read(suite: Path) -> None:
    result = run("audit", suite, "--block", "medium.com", "--exclude", "*.yaml")
    assert result.returncode == 2
    assert "no file to read" in result.stdout
    assert "left out 4 file(s): 4 matching --exclude" in result.stderr


def test_evidence_takes_the_same_options(suite: Path) -> None:
    result = run("evidence", suite, "--exclude", "legacy")
    assert result.returncode == 0
    assert "old.yaml" not in result.stdout.replace("agent.old.yaml", "")
    assert "left out 2 file(s)" in result.stderr


def _git(folder: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(folder), *args], check=True, capture_output=True)


@pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
def test_gitignore_is_read_only_when_asked(suite: Path) -> None:
    _git(suite.parent, "init", "-q")
    (suite.parent / ".gitignore").write_text("legacy/\n")
    plain = run("audit", suite, "--block", "medium.com", "--format", "json")
    assert json.loads(plain.stdout)["summary"]["files"] == 4  # never ignored unasked
    asked = run("audit", suite, "--block", "medium.com", "--respect-gitignore")
    assert "left out 2 file(s): 2 ignored by git (--respect-gitignore)" in asked.stderr
    assert "legacy" not in asked.stdout


@pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
def test_a_tracked_cassette_is_read_even_when_a_pattern_matches_it(suite: Path) -> None:
    _git(suite.parent, "init", "-q")
    _git(suite.parent, "add", "cassettes/legacy/old.yaml")
    (suite.parent / ".gitignore").write_text("legacy/\n")
    asked = run("audit", suite, "--block", "medium.com", "--respect-gitignore", "--format", "json")
    document = json.loads(asked.stdout)
    assert document["left_out"]["gitignore"] == 1
    assert any(f["path"].endswith("legacy/old.yaml") for f in document["files"])


def test_gitignore_outside_a_repository_fails_closed(suite: Path) -> None:
    result = run("audit", suite, "--block", "medium.com", "--respect-gitignore",
                 cwd=suite.parent)  # fmt: skip
    assert result.returncode == 2
    assert "--respect-gitignore: git cannot say what it ignores" in result.stderr
    assert "Drop the flag to read every file" in result.stderr
