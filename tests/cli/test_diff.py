"""``agentloop-tools diff OLD NEW``: what changed in the evidence between two recordings.

Real recordings (``../shared/real-cassettes``, read in place or copied to tmp_path to
add an evidence block) and synthetic pairs; every run goes through the real entry
point (``cli.main``, in this process).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from agentloop_tools.cassettes import _format as serializer
from agentloop_tools.testing import EvidenceSummary
from agentloop_tools.testing._summary import ConversationEvidence, ToolCallRecord
from tests.cli.helpers import run
from tests.real_cassettes import REAL_CASSETTES, needs_real_cassettes

SEARCH = REAL_CASSETTES / "chatlas__test_anthropic_web_search.yaml"
OTHER = REAL_CASSETTES / "ellmer__anthropic-web-search.yaml"
TEST = "test_agent.py::test_search"

pytestmark = [
    pytest.mark.agentloop_06,
    needs_real_cassettes,
]


def record(
    *,
    sources: tuple[str, ...] = ("https://docs.python.org/3/",),
    domains: tuple[str, ...] = ("docs.python.org",),
    verdict: str = "pass",
    input_tokens: int | None = 100,
    tool_calls: tuple[ToolCallRecord, ...] = (),
) -> dict[str, Any]:
    conversation = ConversationEvidence(
        model_requests=1,
        input_tokens=input_tokens,
        sources=sources,
        domains=domains,
        tool_calls=tool_calls,
        verdict=verdict,  # type: ignore[arg-type]
    )
    return EvidenceSummary(conversations=(conversation,), test=TEST).to_dict()


def cassette(path: Path, *records: tuple[str, dict[str, Any]]) -> Path:
    """A real recording, with provenance naming the policy it ran under and a stored block."""
    data = yaml.safe_load(SEARCH.read_text(encoding="utf-8"))
    written = {
        "provenance": {
            "schema": 2,
            "recorded_at": "2026-12-01T11:06:57Z",
            "source": "live",
            "policy": {"markers": [], "project": None, "replace": False},
        },
        "interactions": data["interactions"],
        "version": data.get("version", 1),
    }
    if records:
        written["evidence"] = {"schema": 1, "tests": dict(records)}
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(serializer.serialize(written), encoding="utf-8")
    return path


def diff(tmp_path: Path, *args: str | Path) -> tuple[int, str, str]:
    result = run("diff", *args, cwd=tmp_path)
    return result.returncode, result.stdout, result.stderr


def as_json(tmp_path: Path, *args: str | Path) -> tuple[int, dict[str, Any]]:
    code, out, _ = diff(tmp_path, *args, "--format", "json")
    found: dict[str, Any] = json.loads(out)
    return code, found


def test_two_real_recordings_compared_by_their_computed_records(tmp_path: Path) -> None:
    code, out, _ = diff(tmp_path, SEARCH, OTHER)
    assert code == 1  # a reached domain appeared: --fail-on domains, the default
    assert "(whole cassette) [fails: --fail-on domains]" in out
    assert "    domains: 2 added, 0 removed" in out
    assert "      + tidyverse.org" in out
    code, found = as_json(tmp_path, SEARCH, OTHER)
    [file] = found["files"]
    assert file["records"] == {"old": "computed", "new": "computed"}
    [test] = file["tests"]
    assert set(test["drift"]["domains"]["added"]) == {"tidyverse.org", "rpkgs.datanovia.com"}
    assert test["drift"]["usage"]["model_requests"] == {"old": 2, "new": 3, "delta": 1}


def test_a_recording_against_itself_has_no_drift(tmp_path: Path) -> None:
    code, out, _ = diff(tmp_path, SEARCH, SEARCH)
    assert code == 0
    assert "0 test(s) with drift" in out


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        # (what changed, exit per --fail-on domains / evidence / any / never)
        ({"domains": ("docs.python.org", "evil.example")}, (1, 1, 1, 0)),
        ({"verdict": "fail"}, (1, 1, 1, 0)),
        ({"sources": ("https://docs.python.org/3/tutorial/",)}, (0, 1, 1, 0)),
        ({"tool_calls": (ToolCallRecord("web_fetch", {"url": "https://x.org"}, "ok"),)},
         (0, 1, 1, 0)),
        ({"input_tokens": 250}, (0, 0, 1, 0)),
        ({"input_tokens": None}, (0, 0, 1, 0)),  # known -> unknown is a change too
    ],
)  # fmt: skip
def test_fail_on_means_what_the_vocabulary_says(
    tmp_path: Path, change: dict[str, Any], expected: tuple[int, ...]
) -> None:
    old = cassette(tmp_path / "old.yaml", (TEST, record()))
    new = cassette(tmp_path / "new.yaml", (TEST, record(**change)))
    codes = tuple(
        diff(tmp_path, old, new, "--fail-on", fail_on)[0]
        for fail_on in ("domains", "evidence", "any", "never")
    )
    assert codes == expected


def test_stored_records_are_compared_per_test_with_their_recorded_verdicts(
    tmp_path: Path,
) -> None:
    old = cassette(tmp_path / "old.yaml", (TEST, record()))
    new = cassette(tmp_path / "new.yaml", (TEST, record(verdict="fail")))
    code, found = as_json(tmp_path, old, new)
    assert code == 1
    [file] = found["files"]
    assert file["records"] == {"old": "stored", "new": "stored"}
    [test] = file["tests"]
    assert test["test"] == TEST
    assert test["drift"]["verdict"] == {"old": "pass", "new": "fail"}
    assert test["drift"]["level"] == "domains"
    assert test["fails"] is True


def test_a_given_policy_judges_both_recordings_again(tmp_path: Path) -> None:
    # The stored verdicts differ, but the interactions are the same: under one policy
    # given on the command line both are judged from them, and agree.
    old = cassette(tmp_path / "old.yaml", (TEST, record()))
    new = cassette(tmp_path / "new.yaml", (TEST, record(verdict="fail")))
    code, found = as_json(tmp_path, old, new, "--allow", "example.org")
    assert code == 0
    assert found["policy"] == "--allow"
    assert found["files"] == []


def test_a_stored_record_is_paired_with_a_cassette_that_has_none(tmp_path: Path) -> None:
    # What git show HEAD:path gives for a cassette recorded before the evidence record.
    old = cassette(tmp_path / "old.yaml")
    new = cassette(tmp_path / "new.yaml", (TEST, record()))
    code, found = as_json(tmp_path, old, new, "--fail-on", "never")
    assert code == 0
    [file] = found["files"]
    assert file["records"] == {"old": "computed", "new": "stored"}
    assert [test["test"] for test in file["tests"]] == [TEST]
    assert file["tests"][0]["status"] == "compared"


def test_folders_are_matched_by_relative_path(tmp_path: Path) -> None:
    cassette(tmp_path / "a" / "x" / "same.yaml", (TEST, record()))
    cassette(tmp_path / "b" / "x" / "same.yaml", (TEST, record()))
    cassette(tmp_path / "a" / "x" / "changed.yaml", (TEST, record()))
    cassette(tmp_path / "b" / "x" / "changed.yaml", (TEST, record(input_tokens=5)))
    cassette(tmp_path / "a" / "gone.yaml", (TEST, record()))
    cassette(tmp_path / "b" / "new.yaml", (TEST, record(domains=("evil.example",))))
    code, found = as_json(tmp_path, tmp_path / "a", tmp_path / "b")
    assert code == 1  # the new file reaches a domain the old folder never did
    files = {file["path"]: file for file in found["files"]}
    assert set(files) == {"x/changed.yaml", "gone.yaml", "new.yaml"}
    assert files["gone.yaml"]["status"] == "removed"
    assert files["new.yaml"]["status"] == "added"
    assert files["new.yaml"]["tests"][0]["drift"]["domains"]["added"] == ["evil.example"]
    assert files["x/changed.yaml"]["tests"][0]["drift"]["level"] == "usage"
    assert found["summary"]["files"] == 4
    code, out, _ = diff(tmp_path, tmp_path / "a", tmp_path / "b")
    assert "gone.yaml: only in OLD (removed)" in out
    assert "new.yaml: only in NEW (added)" in out


def test_github_annotations_name_the_new_file(tmp_path: Path) -> None:
    old = cassette(tmp_path / "old.yaml", (TEST, record()))
    new = cassette(tmp_path / "new.yaml", (TEST, record(domains=("evil.example",))))
    code, out, _ = diff(tmp_path, old, new, "--format", "github")
    assert code == 1
    first, summary = out.splitlines()
    assert first.startswith(f"::error file={new},title=Evidence drift::{TEST}: domains +1 -1")
    assert summary.startswith("::notice title=agentloop-tools diff::diff: 1 file(s) compared")


def test_recorded_text_reaches_the_terminal_as_escapes(tmp_path: Path) -> None:
    hostile = "https://x.example/\x1b]0;pwned\x07\n::error::forged"
    old = cassette(tmp_path / "old.yaml", (TEST, record()))
    new = cassette(tmp_path / "new.yaml", (TEST, record(sources=(hostile,))))
    code, out, _ = diff(tmp_path, old, new, "--fail-on", "evidence")
    assert code == 1
    assert "\x1b" not in out
    assert "\x07" not in out
    assert r"+ https://x.example/\x1b]0;pwned\x07\x0a::error::forged" in out
    assert not any(line.startswith("::") for line in out.splitlines())
    code, out, _ = diff(tmp_path, old, new, "--format", "github", "--fail-on", "evidence")
    assert len(out.splitlines()) == 2  # no forged workflow command
    _, found = as_json(tmp_path, old, new)
    assert found["files"][0]["tests"][0]["drift"]["sources"]["added"] == [hostile]  # exact


def test_a_record_of_a_newer_schema_is_an_input_problem(tmp_path: Path) -> None:
    old = cassette(tmp_path / "old.yaml", (TEST, record()))
    new = cassette(tmp_path / "new.yaml", (TEST, {**record(), "schema": 99}))
    code, _, err = diff(tmp_path, old, new)
    assert code == 2
    assert "could not read" in err
    assert "evidence record schema 99" in err
    assert "upgrade agentloop-tools, or re-record the cassette" in err


def test_a_file_and_a_folder_are_a_usage_error(tmp_path: Path) -> None:
    old = cassette(tmp_path / "old.yaml", (TEST, record()))
    code, _, err = diff(tmp_path, old, tmp_path)
    assert code == 2
    assert "is a file and" in err
    assert "a folder: compare two cassettes, or two folders" in err
    code, _, err = diff(tmp_path, old, tmp_path / "missing.yaml")
    assert code == 2
    assert "missing.yaml" in err


def test_a_change_that_fails_wins_over_an_unreadable_file(tmp_path: Path) -> None:
    cassette(tmp_path / "a" / "one.yaml", (TEST, record()))
    cassette(tmp_path / "b" / "one.yaml", (TEST, record(domains=("evil.example",))))
    (tmp_path / "a" / "broken.yaml").write_text("interactions: [\n", encoding="utf-8")
    (tmp_path / "b" / "broken.yaml").write_text("interactions: [\n", encoding="utf-8")
    code, _, err = diff(tmp_path, tmp_path / "a", tmp_path / "b")
    assert code == 1
    assert "broken.yaml" in err
    code, _, _ = diff(tmp_path, tmp_path / "a", tmp_path / "b", "--fail-on", "never")
    assert code == 2
