"""``audit --write-baseline`` / ``--baseline`` / ``--strict-baseline``, run as a CI runs them.

Real recordings (../shared/real-cassettes, read in place) and the demo cassettes; a
"new" violation is made by tightening the policy, a "stale" entry by loosening it, so
the cassettes themselves are never copied or edited.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from tests.cli.helpers import ANTHROPIC_DEMO, DEMO, OPENAI_DEMO, run


def _entries(baseline: Path) -> list[dict[str, object]]:
    document = json.loads(baseline.read_text())
    entries: list[dict[str, object]] = document["violations"]
    return entries


def test_a_baseline_records_every_violation_sorted_with_paths_relative_to_it(
    real_cassettes: Path,
    tmp_path: Path,
) -> None:
    baseline = tmp_path / "ci" / "audit-baseline.json"
    result = run(
        "audit", real_cassettes, "--block", "wikipedia.org,github.com", "--write-baseline", baseline
    )
    assert result.returncode == 0, result.stderr
    listed = json.loads(
        run(
            "audit", real_cassettes, "--block", "wikipedia.org,github.com", "--format", "json"
        ).stdout
    )
    total = listed["summary"]["violations"]
    assert f"wrote {total} violation(s) to the baseline {baseline}" in result.stderr
    entries = _entries(baseline)
    assert len(entries) == total > 0
    assert all(set(entry) == {"file", "interaction", "where", "url", "rule"} for entry in entries)
    # Relative to the baseline's folder, with "/" whatever the OS.
    expected_prefix = os.path.relpath(real_cassettes, baseline.parent).replace(os.sep, "/") + "/"
    assert all(str(entry["file"]).startswith(expected_prefix) for entry in entries)
    assert {entry["rule"] for entry in entries} == {"wikipedia.org", "github.com"}
    keys = [(str(e["file"]), int(str(e["interaction"])), str(e["where"]), str(e["url"]),
             str(e["rule"])) for e in entries]  # fmt: skip
    assert keys == sorted(keys)


def test_writing_twice_gives_the_same_bytes(real_cassettes: Path, tmp_path: Path) -> None:
    first, second = tmp_path / "one.json", tmp_path / "two.json"
    for path in (first, second):
        assert (
            run(
                "audit", real_cassettes, "--allow", "python.org", "--write-baseline", path
            ).returncode
            == 0
        )
    assert first.read_bytes() == second.read_bytes()
    assert first.read_text().endswith("}\n")


def test_an_unchanged_suite_passes_its_baseline(real_cassettes: Path, tmp_path: Path) -> None:
    baseline = tmp_path / "baseline.json"
    assert (
        run(
            "audit", real_cassettes, "--allow", "python.org", "--write-baseline", baseline
        ).returncode
        == 0
    )
    result = run("audit", real_cassettes, "--allow", "python.org", "--baseline", baseline)
    assert result.returncode == 0, result.stdout + result.stderr
    known = len(_entries(baseline))
    assert result.stdout.splitlines()[-1].startswith("0 violation(s) in 0 of 33 file(s)")
    assert f"Baseline {baseline}: {known} known violation(s) not listed, 0 stale." in result.stdout
    assert "stale" not in result.stderr


def test_only_new_violations_fail_and_are_listed(tmp_path: Path) -> None:
    baseline = tmp_path / "baseline.json"
    run("audit", DEMO, "--block", "medium.com", "--write-baseline", baseline)
    result = run("audit", DEMO, "--block", "medium.com,wikipedia.org", "--baseline", baseline)
    assert result.returncode == 1
    assert result.stdout.splitlines()[:2] == [
        str(ANTHROPIC_DEMO),
        "  interaction 0   text      https://en.wikipedia.org/wiki/History_of_Python  "
        "[blocked by 'wikipedia.org']",
    ]
    assert "medium.com/@pydev" not in result.stdout  # known: not listed
    assert "4 known violation(s) not listed, 0 stale." in result.stdout
    document = json.loads(
        run("audit", DEMO, "--block", "medium.com,wikipedia.org", "--baseline", baseline,
            "--format", "json").stdout
    )  # fmt: skip
    assert document["summary"]["violations"] == 1
    assert document["baseline"] == {"path": str(baseline), "known": 4, "stale": []}


def test_a_second_occurrence_of_a_known_violation_is_new(tmp_path: Path) -> None:
    # The baseline holds the answer's link twice; a baseline holding it once lets one through.
    baseline = tmp_path / "baseline.json"
    run("audit", OPENAI_DEMO, "--block", "medium.com", "--write-baseline", baseline)
    document = json.loads(baseline.read_text())
    texts = [e for e in document["violations"] if e["where"] == "text"]
    assert len(texts) == 2
    document["violations"].remove(texts[0])
    baseline.write_text(json.dumps(document))
    result = run("audit", OPENAI_DEMO, "--block", "medium.com", "--baseline", baseline)
    assert result.returncode == 1
    assert "3 known violation(s) not listed" in result.stdout
    assert result.stdout.count("[blocked by 'medium.com']") == 1


def test_stale_entries_are_listed_and_pass_unless_strict(tmp_path: Path) -> None:
    baseline = tmp_path / "baseline.json"
    run("audit", DEMO, "--block", "medium.com,wikipedia.org", "--write-baseline", baseline)
    result = run("audit", DEMO, "--block", "medium.com", "--baseline", baseline)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "4 known violation(s) not listed, 1 stale." in result.stdout
    assert (
        f"1 stale baseline entry in {baseline} (no longer found); remove them with "
        f"--write-baseline {baseline}:" in result.stderr
    )
    stale_file = os.path.relpath(ANTHROPIC_DEMO, tmp_path)
    assert (
        f"  stale: {stale_file} (interaction 0): text "
        "https://en.wikipedia.org/wiki/History_of_Python [blocked by 'wikipedia.org']"
    ) in result.stderr.splitlines()
    strict = run(
        "audit", DEMO, "--block", "medium.com", "--baseline", baseline, "--strict-baseline"
    )
    assert strict.returncode == 1
    assert "--strict-baseline fails on them" in strict.stderr
    document = json.loads(
        run(
            "audit", DEMO, "--block", "medium.com", "--baseline", baseline, "--format", "json"
        ).stdout
    )
    assert document["baseline"]["stale"] == [
        {
            "file": stale_file,
            "interaction": 0,
            "where": "text",
            "url": "https://en.wikipedia.org/wiki/History_of_Python",
            "rule": "wikipedia.org",
        }
    ]


def test_entries_of_files_this_run_did_not_read_are_not_stale(tmp_path: Path) -> None:
    # A pre-commit hook passes only the changed files: the others' entries stay known.
    baseline = tmp_path / "baseline.json"
    run("audit", DEMO, "--block", "medium.com,wikipedia.org", "--write-baseline", baseline)
    result = run("audit", ANTHROPIC_DEMO, "--block", "medium.com,wikipedia.org",
                 "--baseline", baseline, "--strict-baseline")  # fmt: skip
    assert result.returncode == 0, result.stdout + result.stderr
    assert "1 known violation(s) not listed, 0 stale." in result.stdout


def test_an_entry_of_a_deleted_cassette_is_stale(tmp_path: Path) -> None:
    cassettes = tmp_path / "cassettes"
    cassettes.mkdir()
    shutil.copy(OPENAI_DEMO, cassettes / "old.yaml")
    shutil.copy(ANTHROPIC_DEMO, cassettes / "kept.yaml")
    baseline = tmp_path / "baseline.json"
    run("audit", cassettes, "--block", "medium.com", "--write-baseline", baseline)
    (cassettes / "old.yaml").unlink()
    result = run("audit", cassettes, "--block", "medium.com", "--baseline", baseline,
                 "--strict-baseline")  # fmt: skip
    assert result.returncode == 1
    assert "4 stale baseline entries" in result.stderr
    assert "stale: cassettes/old.yaml (interaction 0)" in result.stderr


def test_paths_are_relative_to_the_baseline_wherever_the_audit_runs(tmp_path: Path) -> None:
    project = tmp_path / "project"
    (project / "tests" / "cassettes").mkdir(parents=True)
    shutil.copy(OPENAI_DEMO, project / "tests" / "cassettes" / "a.yaml")
    run("audit", "tests/cassettes", "--block", "medium.com", "--write-baseline",
        "audit-baseline.json", cwd=project)  # fmt: skip
    assert {e["file"] for e in _entries(project / "audit-baseline.json")} == {
        "tests/cassettes/a.yaml"
    }
    # From another folder, with an absolute path: the same entries match.
    result = run("audit", project / "tests" / "cassettes", "--block", "medium.com",
                 "--baseline", project / "audit-baseline.json", cwd=tmp_path)  # fmt: skip
    assert result.returncode == 0, result.stdout + result.stderr
    assert "4 known violation(s) not listed, 0 stale." in result.stdout


@pytest.mark.parametrize(
    ("content", "reason"),
    [
        (None, "no such file. Write one first"),
        ("{not json", "not JSON"),
        ('{"violations": []}', "not an agentloop-tools baseline"),
        ('{"format": "agentloop-tools-baseline", "version": 9, "violations": []}',
         "baseline version 9"),
        ('{"format": "agentloop-tools-baseline", "version": 1, "violations": [{"file": 1}]}',
         "entry 0 is not {file, interaction, where, url, rule}"),
    ],
)  # fmt: skip
def test_a_baseline_that_cannot_be_read_fails_closed(
    tmp_path: Path, content: str | None, reason: str
) -> None:
    baseline = tmp_path / "baseline.json"
    if content is not None:
        baseline.write_text(content)
    result = run("audit", DEMO, "--block", "medium.com", "--baseline", baseline)
    assert result.returncode == 2
    assert result.stderr.startswith(f"agentloop-tools audit: --baseline {baseline}: ")
    assert reason in result.stderr
    assert result.stdout == ""


def test_usage_errors(tmp_path: Path) -> None:
    strict = run("audit", DEMO, "--block", "medium.com", "--strict-baseline")
    assert strict.returncode == 2
    assert "--strict-baseline needs --baseline FILE" in strict.stderr
    both = run("audit", DEMO, "--block", "x.com", "--baseline", "a.json", "--write-baseline", "b")
    assert both.returncode == 2
    assert "not allowed with argument" in both.stderr


def test_the_baseline_beside_the_cassettes_is_not_reported_as_skipped(tmp_path: Path) -> None:
    shutil.copy(OPENAI_DEMO, tmp_path / "a.yaml")
    baseline = tmp_path / "baseline.json"
    run("audit", tmp_path, "--block", "medium.com", "--write-baseline", baseline)
    result = run("audit", tmp_path, "--block", "medium.com", "--baseline", baseline)
    assert result.returncode == 0
    assert result.stderr == ""


def test_a_key_in_a_recorded_url_is_not_written_to_the_baseline(tmp_path: Path) -> None:
    from agentloop_tools.testing import anthropic_message, anthropic_text
    from tests.transcripts import converse

    key = "sk-ant-api03-" + "K" * 40
    transcript = converse(
        "anthropic",
        [anthropic_message([anthropic_text(f"See https://evil.example/?k={key} now.")])],
    )
    (tmp_path / "run.json").write_text(transcript.model_dump_json())
    baseline = tmp_path / "baseline.json"
    run("audit", tmp_path / "run.json", "--allow", "python.org", "--write-baseline", baseline)
    assert key not in baseline.read_text()
    assert len(_entries(baseline)) == 1
    again = run("audit", tmp_path / "run.json", "--allow", "python.org", "--baseline", baseline)
    assert again.returncode == 0, again.stdout
