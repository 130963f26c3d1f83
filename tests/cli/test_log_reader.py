"""One reader of transcript logs: the library's reader and the command line read a log's
lines the same way, word each problem the same, and the library loads no command line."""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

from agentloop_tools.cassettes import Reader, read_transcript_file
from tests.cli.helpers import REPO, run
from tests.cli.test_jsonl import transcript_line


def _hostile_log(tmp_path: Path) -> Path:
    good = transcript_line(1, "https://en.wikipedia.org/wiki/Python")
    log = tmp_path / "day.jsonl"
    log.write_text(
        "\n".join(
            [
                good,
                '{"messages": []}',  # a transcript with nothing in it
                "",
                '{"messages": [{"role": 7}]}',  # not a transcript
                "\x00\xff garbage",
                good,
            ]
        )
        + "\n"
    )
    return log


def test_the_library_and_the_command_line_report_a_log_s_lines_alike(tmp_path: Path) -> None:
    log = _hostile_log(tmp_path)
    cli = json.loads(run("audit", log, "--block", "wikipedia.org", "--format", "json").stdout)
    [file] = cli["files"]
    for reading in (read_transcript_file(log), Reader().read(log)):
        assert [p.reason for p in reading.problems] == [p["reason"] for p in file["problems"]]
        assert len(reading.transcripts) == file["transcripts"] == 2
    reasons = [p["reason"] for p in file["problems"]]
    assert reasons[0] == "line 2: a transcript with no message"
    assert reasons[1].startswith('line 4: not a transcript (expected {"messages": [...]}')
    assert reasons[2].startswith("line 5: not a transcript")


def test_evidence_names_an_empty_transcript_in_a_log(tmp_path: Path) -> None:
    # evidence reads a log through the library's reader: it used to accept an empty one.
    log = _hostile_log(tmp_path)
    result = run("evidence", log, "--format", "json")
    assert "line 2: a transcript with no message" in result.stdout + result.stderr


def test_importing_the_logs_library_loads_no_command_line_module() -> None:
    code = (
        "import sys, agentloop_tools.logs\n"
        "print([m for m in sys.modules if m.startswith('agentloop_tools.cli')])\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=REPO
    )
    assert done.stdout.strip() == "[]"


def test_a_pydantic_error_is_put_in_one_line_by_one_function() -> None:
    source = REPO / "src" / "agentloop_tools"
    defined = [
        str(path.relative_to(source))
        for path in source.rglob("*.py")
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
        if isinstance(node, ast.FunctionDef) and node.name == "first_error"
    ]
    assert defined == ["_transcript_log.py"]
