"""A model cannot make its transcript unreadable by what it writes (issue 26, item 10).

agentloop's ``to_jsonl`` (and ``model_dump_json``) write U+2028, U+2029 and U+0085 raw
inside JSON strings, as JSON allows. A line of a transcript ends at ``\\n`` only: read
with ``str.splitlines()``, an answer holding one of them cut its own message in two, and
the breach in it was never named.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from agentloop import Transcript
from agentloop.transcript import to_jsonl

from agentloop_tools.testing import anthropic_message, anthropic_text
from tests.cli.helpers import run
from tests.transcripts import converse

# What str.splitlines() ends a line at and JSON writes raw (C0 controls it escapes).
SEPARATORS = ["\u2028", "\u2029", "\x85"]


def _breach(separator: str) -> Transcript:
    answer = f"First{separator}see https://evil.example/page{separator}for more."
    return converse("anthropic", [anthropic_message([anthropic_text(answer)])])


@pytest.fixture(params=SEPARATORS, ids=["u2028", "u2029", "u0085"])
def separator(request: pytest.FixtureRequest) -> str:
    value: str = request.param
    return value


@pytest.mark.parametrize("newline", ["\n", "\r\n"])
def test_a_jsonl_transcript_with_a_separator_in_the_answer_names_the_breach(
    tmp_path: Path, separator: str, newline: str
) -> None:
    path = tmp_path / "run.jsonl"
    text = to_jsonl(_breach(separator).messages)
    assert separator in text  # written raw, as agentloop writes it
    path.write_bytes(text.replace("\n", newline).encode("utf-8"))
    result = run("audit", path, "--allow", "python.org", "--format", "json")
    assert result.returncode == 1, result.stdout
    assert "could not read" not in result.stdout + result.stderr
    assert '"url": "https://evil.example/page"' in result.stdout


def test_evidence_and_scan_read_it_whole(tmp_path: Path, separator: str) -> None:
    path = tmp_path / "run.jsonl"
    path.write_text(to_jsonl(_breach(separator).messages), encoding="utf-8")
    evidence = run("evidence", path)
    assert evidence.returncode == 0, evidence.stdout + evidence.stderr
    assert "could not read" not in evidence.stdout + evidence.stderr
    assert evidence.stdout.count("turn at message") == 1
    scan = run("scan", path)
    assert scan.returncode == 0, scan.stdout
    assert "1 parsed as YAML/JSON" in scan.stdout


def test_a_transcript_log_with_a_separator_is_read_whole(tmp_path: Path, separator: str) -> None:
    path = tmp_path / "log.jsonl"
    line = _breach(separator).model_dump_json()
    assert separator in line
    path.write_text(line + "\n" + line + "\n", encoding="utf-8")
    audit = run("audit", path, "--allow", "python.org")
    assert audit.returncode == 1, audit.stdout
    assert "could not read" not in audit.stdout
    evidence = run("evidence", path)
    assert evidence.returncode == 0, evidence.stdout + evidence.stderr
    assert "could not read" not in evidence.stdout + evidence.stderr
    assert evidence.stdout.count("turn at message") == 2


def test_a_secret_after_a_separator_is_found_on_its_own_line(tmp_path: Path) -> None:
    from agentloop_tools._secrets import Detector
    from agentloop_tools.cassettes._scan import scan_file

    key = "sk-ant-api03-" + "K" * 40
    path = tmp_path / "run.jsonl"
    path.write_text(f'{{"a": "x\u2028y"}}\n{{"b": "{key}"}}\n', encoding="utf-8")
    result = scan_file(path, Detector())
    assert result.problems == []
    assert [hit.line for hit in result.findings if hit.line is not None] == [2]
