"""``audit`` writes what it finds from a spool, in flat memory: the bytes of every format
are those the audit wrote when it held every violation until the end (the golden files
under ``golden/streaming/`` were written by that version), with ``--jobs`` 1 and 2, and
with every violation spooled to disk."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

import agentloop_tools
from agentloop_tools.cli._arguments import FORMATS
from tests.cli.helpers import ANTHROPIC_DEMO, run, run_process
from tests.cli.test_jsonl import transcript_line

GOLDEN = Path(__file__).parent / "golden" / "streaming"
POLICY = ("--block", "wikipedia.org", "--block", "peps.python.org")


def _fixture(folder: Path) -> Path:
    """Logs with violations, problems and an empty transcript; a cassette; a broken one."""
    logs = folder / "logs"
    logs.mkdir()
    wiki = transcript_line(1, "https://en.wikipedia.org/wiki/Python")
    docs = transcript_line(0, "https://docs.python.org/3/")
    pep = transcript_line(2, "https://peps.python.org/pep-0008/")
    bad = ['{"messages": []}', '{"messages": [{"role": 7}]}', "", "\x00 garbage"]
    (logs / "a.jsonl").write_text("".join(f"{line}\n" for line in [wiki, docs, pep, *bad] * 9))
    (logs / "b.jsonl").write_text("".join(f"{line}\n" for line in [docs, wiki] * 3))
    (logs / "c.yaml").write_text(ANTHROPIC_DEMO.read_text())
    (logs / "d.yaml").write_text("interactions: [\n")
    return logs


def _normal(text: str, folder: Path) -> str:
    version = f'"version": "{agentloop_tools.__version__}"'
    return (
        text.replace(folder.as_uri(), "file:///FOLDER")
        .replace(str(folder), "/FOLDER")
        .replace(version, '"version": "VERSION"')
    )


def _outputs(folder: Path, jobs: str) -> dict[str, str]:
    command = run if jobs == "1" else run_process  # workers fork from a real process
    found = {}
    for form in FORMATS:
        result = command("audit", "logs", *POLICY, "--format", form, "--jobs", jobs, cwd=folder)
        assert result.returncode == 1, result.stderr
        found[form] = _normal(result.stdout, folder)
    return found


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_every_format_writes_the_bytes_it_wrote_before(
    tmp_path: Path, jobs: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    from agentloop_tools.cli import _spool

    _fixture(tmp_path)
    monkeypatch.setattr(_spool, "BATCH", 2)  # every violation goes through the spool file
    for form, text in _outputs(tmp_path, jobs).items():
        assert text == (GOLDEN / f"audit.{form}").read_text(encoding="utf-8"), form


# The audit in a child, pieces of 64 kB (the default, 32 MB, bounds the same way at a
# size no quick test reaches); prints the child's peak resident memory in kB.
_PEAK = """
import resource, subprocess, sys
code = (
    "import sys; from agentloop_tools._logs import _pieces; _pieces.CHUNK_BYTES = 65536; "
    "from agentloop_tools.cli import main; sys.exit(main(sys.argv[1:]))"
)
subprocess.run([sys.executable, "-c", code, *sys.argv[1:]], stdout=subprocess.DEVNULL)
print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)
"""


def _peak_kb(log: Path, form: str) -> int:
    done = subprocess.run(
        [sys.executable, "-c", _PEAK, "audit", str(log), *POLICY, "--format", form],
        capture_output=True,
        text=True,
        check=True,
    )
    return int(done.stdout)


def _many_links(number: int) -> str:
    links = " ".join(f"https://en.wikipedia.org/wiki/Page_{n}" for n in range(20))
    return transcript_line(number, "https://docs.python.org/3/").replace(
        "for more.", f"for more. {links}"
    )


@pytest.mark.skipif(sys.platform != "linux", reason="ru_maxrss in kB is Linux's")
def test_the_audit_of_a_log_four_times_the_size_needs_no_more_memory(tmp_path: Path) -> None:
    one, small, large = (tmp_path / f"{name}.jsonl" for name in ("one", "small", "large"))
    block = "".join(f"{_many_links(n)}\n" for n in range(500))  # 10,000 violations
    one.write_text(_many_links(0) + "\n")
    small.write_text(block)
    large.write_text(block * 4)
    start = _peak_kb(one, "json")  # the interpreter and the imports: no log in it
    grown = _peak_kb(small, "json") - start, _peak_kb(large, "json") - start
    # 40,000 violations held until the end took about 4 times the memory of 10,000.
    assert grown[1] < 1.5 * grown[0] + 4 * 1024, grown


def test_a_file_named_twice_is_one_file_in_the_report(tmp_path: Path) -> None:
    logs = _fixture(tmp_path)
    cassette, log = logs / "c.yaml", logs / "b.jsonl"
    result = run("audit", cassette, cassette, log, log, *POLICY, "--format", "json")
    files = json.loads(result.stdout)["files"]
    assert [file["path"] for file in files] == [str(log), str(cassette)]
    # A log named twice is read on, its lines numbered on (as before the spool).
    assert files[0]["transcripts"] == 12
    assert max(v["line"] for v in files[0]["violations"]) == 12


# The audit in a child at the default piece size (32 MB: both logs below are one piece);
# prints the child's peak resident memory in kB.
_PEAK_ONE_PIECE = """
import resource, subprocess, sys
code = "import sys; from agentloop_tools.cli import main; sys.exit(main(sys.argv[1:]))"
subprocess.run([sys.executable, "-c", code, *sys.argv[1:]], stdout=subprocess.DEVNULL)
print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)
"""


@pytest.mark.skipif(sys.platform != "linux", reason="ru_maxrss in kB is Linux's")
@pytest.mark.parametrize("form", ["json", "junit", "table"])
def test_one_piece_of_a_log_is_not_held_whole(tmp_path: Path, form: str) -> None:
    one, small, large = (tmp_path / f"{name}.jsonl" for name in ("one", "small", "large"))
    block = "".join(f"{_many_links(n)}\n" for n in range(500))  # 10,000 violations
    one.write_text(_many_links(0) + "\n")
    small.write_text(block)
    large.write_text(block * 4)

    def peak(log: Path) -> int:
        command = [sys.executable, "-c", _PEAK_ONE_PIECE, "audit", str(log), *POLICY]
        command += ["--format", form, "-o", str(tmp_path / f"out.{form}")]
        return int(subprocess.run(command, capture_output=True, text=True, check=True).stdout)

    start = peak(one)
    grown = peak(small) - start, peak(large) - start
    # A piece's 40,000 violations were held until the piece was done: about 4 times.
    assert grown[1] < 1.5 * grown[0] + 4 * 1024, grown
