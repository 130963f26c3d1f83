"""Transcript logs (one transcript per line) read as a stream, and ``--jobs N``."""

from __future__ import annotations

import io
import json
import sys
from pathlib import Path

import pytest

from agentloop_tools import _transcript_log
from agentloop_tools._logs import _pieces
from agentloop_tools.cli import _jobs
from agentloop_tools.testing import anthropic_message, anthropic_search, anthropic_text
from tests.cli.helpers import DEMO, run, run_process
from tests.transcripts import converse


def transcript_line(number: int, url: str) -> str:
    transcript = converse(
        "anthropic",
        [
            anthropic_message(
                [
                    anthropic_search("q", [url]),
                    anthropic_text(f"Answer {number}: see {url} for more."),
                ]
            )
        ],
        prompt=f"question {number}",
    )
    return transcript.model_dump_json()


@pytest.fixture(scope="module")
def lines() -> list[str]:
    return [
        transcript_line(0, "https://docs.python.org/3/"),
        transcript_line(1, "https://en.wikipedia.org/wiki/Python"),
        transcript_line(2, "https://peps.python.org/pep-0008/"),
    ]


def write_log(path: Path, lines: list[str], repeat: int = 1) -> Path:
    path.write_text("".join(line + "\n" for line in lines * repeat))
    return path


def test_a_log_is_audited_one_transcript_per_line(tmp_path: Path, lines: list[str]) -> None:
    log = write_log(tmp_path / "day.jsonl", lines)
    result = run("audit", log, "--block", "wikipedia.org", "--format", "json")
    assert result.returncode == 1, result.stderr
    [file] = json.loads(result.stdout)["files"]
    assert file["transcripts"] == 3
    assert [(v["where"], v["line"], v["conversation"]) for v in file["violations"]] == [
        ("source", 2, 1),
        ("text", 2, 1),
    ]
    assert file["problems"] == []


def test_a_bad_line_is_a_problem_with_its_number_and_the_rest_is_read(
    tmp_path: Path, lines: list[str]
) -> None:
    log = tmp_path / "day.jsonl"
    log.write_text(lines[0] + "\n" + '{"messages": [{"role": 7}]}\n\n' + lines[1] + "\n")
    result = run("audit", log, "--block", "wikipedia.org", "--format", "json")
    assert result.returncode == 1
    [file] = json.loads(result.stdout)["files"]
    [problem] = file["problems"]
    assert problem["reason"].startswith('line 2: not a transcript (expected {"messages": [...]}')
    assert {v["line"] for v in file["violations"]} == {4}


def test_a_line_over_the_cap_is_refused_without_being_held(
    tmp_path: Path, lines: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_transcript_log, "MAX_LINE_BYTES", 10_000)
    monkeypatch.setattr(_transcript_log, "_BLOCK", 1000)
    log = tmp_path / "day.jsonl"
    huge = '{"messages": [' + " " * 50_000 + "]}"
    log.write_text(lines[1] + "\n" + huge + "\n" + lines[1] + "\n")
    part = _pieces.audit_log_piece(_pieces.Unit(str(log), 0, None), _policy())
    [merged] = _pieces.merge([(_pieces.Unit(str(log), 0, None), part)]).values()
    assert [p["reason"] for p in merged.problems] == [
        "line 2: over the 0 MB limit for one line, not read"
    ]
    assert merged.transcripts == 2
    assert merged.lines == 3


def _policy() -> object:
    from agentloop_tools.web import DomainPolicy

    return DomainPolicy.block(["wikipedia.org"])


def test_pieces_cut_anywhere_give_the_lines_of_one_read(
    tmp_path: Path, lines: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    log = write_log(tmp_path / "day.jsonl", lines, repeat=7)
    whole = _pieces.merge(
        [(u, _jobs.audit_unit(u, _policy(), _no_file)) for u in _pieces.units([log])]
    )
    size = log.stat().st_size
    for chunk in (97, 1000, len(lines[0]) + 1, size // 3):
        monkeypatch.setattr(_pieces, "CHUNK_BYTES", chunk)
        work = _pieces.units([log])
        assert len(work) > 1
        pieces = _pieces.merge([(u, _jobs.audit_unit(u, _policy(), _no_file)) for u in work])
        [one], [many] = whole.values(), pieces.values()
        assert many.violations == one.violations
        assert (many.transcripts, many.lines) == (one.transcripts, one.lines) == (21, 21)


def test_several_processes_get_at_least_four_pieces_each(
    tmp_path: Path, lines: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    log = write_log(tmp_path / "day.jsonl", lines, repeat=50)
    monkeypatch.setattr(_pieces, "MIN_PIECE_BYTES", 100)
    assert len(_pieces.units([log])) == 1  # one process: pieces of CHUNK_BYTES
    for jobs in (2, 3):
        work = _pieces.units([log], jobs)
        assert len(work) == 4 * jobs
        pieces = _pieces.merge([(u, _jobs.audit_unit(u, _policy(), _no_file)) for u in work])
        whole = _pieces.merge(
            [(u, _jobs.audit_unit(u, _policy(), _no_file)) for u in _pieces.units([log])]
        )
        assert pieces == whole
    monkeypatch.setattr(_pieces, "MIN_PIECE_BYTES", 4 * 2**20)
    assert len(_pieces.units([log], 2)) == 1  # never under MIN_PIECE_BYTES


def _no_file(path: str, policy: object) -> _pieces.Part:
    raise AssertionError("a log is never read whole")


def test_jobs_give_the_same_output_and_exit_code(tmp_path: Path, lines: list[str]) -> None:
    folder = tmp_path / "logs"
    folder.mkdir()
    write_log(folder / "a.jsonl", lines, repeat=5)
    write_log(folder / "b.jsonl", lines[:1], repeat=3)
    (folder / "c.yaml").write_text((DEMO / "anthropic-web-search.yaml").read_text())
    (folder / "broken.yaml").write_text("interactions: [\n")
    outputs = {}
    for jobs in ("1", "2", "3"):
        for format in ("json", "table"):
            # Workers are forked: from a real process, not from this multi-threaded one.
            command = run if jobs == "1" else run_process
            result = command("audit", folder, "--block", "wikipedia.org", "--jobs", jobs,
                             "--format", format)  # fmt: skip
            outputs[jobs, format] = (result.returncode, result.stdout)
    for format in ("json", "table"):
        assert outputs["1", format] == outputs["2", format] == outputs["3", format]
    code, text = outputs["1", "json"]
    assert code == 1
    assert json.loads(text)["summary"]["violations"] == 11


def test_jobs_must_be_a_sensible_number() -> None:
    result = run("audit", DEMO, "--block", "x.org", "--jobs", "0")
    assert result.returncode == 2
    assert "'0' is not a number of processes from 1 to 64" in result.stderr


def test_a_message_per_line_jsonl_is_still_one_transcript(tmp_path: Path) -> None:
    from agentloop.transcript import to_jsonl

    from agentloop_tools._transcript_log import is_log

    transcript = converse("anthropic", [anthropic_message([anthropic_text("see wikipedia.org")])])
    path = tmp_path / "run.jsonl"
    path.write_text(to_jsonl(transcript.messages))
    assert not is_log(path)
    result = run("audit", path, "--block", "wikipedia.org", "--format", "json")
    [file] = json.loads(result.stdout)["files"]
    assert file["transcripts"] == 1
    assert result.returncode == 1


def test_evidence_reads_a_log(tmp_path: Path, lines: list[str]) -> None:
    log = write_log(tmp_path / "day.jsonl", lines)
    result = run("evidence", log, "--format", "json")
    assert result.returncode == 0, result.stdout
    [file] = json.loads(result.stdout)["files"]
    assert [turn["asked"] for turn in file["turns"]] == [
        "question 0",
        "question 1",
        "question 2",
    ]


def test_hostile_lines_are_problems_and_the_rest_is_read(tmp_path: Path, lines: list[str]) -> None:
    deep = '{"messages": ' + "[" * 100_000 + "]" * 100_000 + "}"
    log = tmp_path / "day.jsonl"
    log.write_text(lines[1] + "\n" + deep + "\n" + "\x00\xff garbage\n" + lines[1] + "\n")
    result = run("audit", log, "--block", "wikipedia.org", "--format", "json")
    assert "Traceback" not in result.stderr
    assert result.returncode == 1, result.stderr
    [file] = json.loads(result.stdout)["files"]
    assert [p["reason"].split(":")[0] for p in file["problems"]] == ["line 2", "line 3"]
    assert {v["line"] for v in file["violations"]} == {1, 4}
    # A first line nested past any limit is no log: the reader refuses it with its reason.
    first = tmp_path / "deep.jsonl"
    first.write_text("[" * 100_000 + "]" * 100_000 + "\n")
    refused = run("audit", first, "--block", "wikipedia.org")
    assert refused.returncode == 2
    assert "Traceback" not in refused.stderr
    assert "internal error" not in refused.stderr


def test_a_line_with_no_message_is_a_problem(tmp_path: Path, lines: list[str]) -> None:
    log = write_log(tmp_path / "day.jsonl", [lines[1], '{"messages": []}', lines[1]])
    result = run("audit", log, "--block", "wikipedia.org", "--format", "json")
    [file] = json.loads(result.stdout)["files"]
    assert [p["reason"] for p in file["problems"]] == ["line 2: a transcript with no message"]
    assert {v["line"] for v in file["violations"]} == {1, 3}


def test_progress_is_shown_on_a_terminal_and_nothing_in_a_pipe(
    tmp_path: Path, lines: list[str]
) -> None:
    folder = tmp_path / "logs"
    folder.mkdir()
    for number in range(21):
        write_log(folder / f"{number:02}.jsonl", lines[1:2])
    # A line every tenth of the files, past 20 of them.
    shown = run("audit", folder, "--block", "wikipedia.org", tty=True)
    assert shown.returncode == 1
    assert shown.stderr.splitlines()[-2:] == ["audit: 20/21 files", "audit: 21/21 files"]
    piped = run("audit", folder, "--block", "wikipedia.org")
    assert piped.stderr == ""
    assert piped.stdout == shown.stdout


def test_progress_of_workers_is_one_line_rewritten_in_place(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    terminal = io.StringIO()
    monkeypatch.setattr(terminal, "isatty", lambda: True)
    monkeypatch.setattr(sys, "stderr", terminal)
    progress = _jobs._Progress(total=300, count=3)
    for size in (100, 100, 100):
        progress.step(_pieces.Unit("day.jsonl", size=size))
    progress.finish()
    shown = terminal.getvalue()
    # The first step shows at once; the next within 0.2 s are skipped; the last always shows.
    assert shown.startswith("\raudit: 1/3 part(s), 33% (")
    assert shown.endswith("\raudit: 3/3 part(s), 100% (" + shown.rsplit("(", 1)[1])
    assert shown.endswith(" MB/s)\x1b[K\n")
    assert "\n" not in shown[:-1]


def test_one_file_with_jobs_is_read_in_this_process(tmp_path: Path, lines: list[str]) -> None:
    # One piece of work: no worker pool is started, and the result is the same.
    log = write_log(tmp_path / "day.jsonl", lines)
    one = run("audit", log, "--block", "wikipedia.org", "--format", "json")
    jobs = run("audit", log, "--block", "wikipedia.org", "--format", "json", "--jobs", "4")
    assert (jobs.returncode, jobs.stdout) == (one.returncode, one.stdout)
