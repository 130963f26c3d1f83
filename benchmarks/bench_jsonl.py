"""Audits of production logs: a generated transcript log, one transcript per line.

    .venv/bin/python benchmarks/bench_jsonl.py              # 1 GB, blocklist
    .venv/bin/python benchmarks/bench_jsonl.py 200          # 200 MB
    .venv/bin/python benchmarks/bench_jsonl.py 250 both     # blocklist, then allowlist

Writes a log of the given size (MB) from a few real transcripts (agentloop's own
``Transcript.model_dump_json()``: hosted search sources, citations and answer text
with links, a violation in some), then runs ``agentloop-tools audit LOG --block ...``
(or ``--allow ...``: ``block``, ``allow`` or ``both``) with ``--jobs 1`` and ``--jobs 2``
and reports seconds, MiB/s, MiB/s per core and the peak resident memory of the process
and its workers (the largest of them): flat in the log's size, as violations are
spooled to disk, not held.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

# Runs the command line in a child and reports its peak memory and its workers'.
_MEASURE = """
import resource, subprocess, sys
done = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
children = resource.getrusage(resource.RUSAGE_CHILDREN)
print(done.returncode, children.ru_maxrss, children.ru_utime + children.ru_stime)
"""


def transcripts() -> list[str]:
    from tests.transcripts import converse

    from agentloop_tools.testing import (
        anthropic_message,
        anthropic_search,
        anthropic_text,
    )

    lines = []
    for number in range(4):
        bad = "https://en.wikipedia.org/wiki/Python" if number == 0 else "https://peps.python.org/"
        transcript = converse(
            "anthropic",
            [
                anthropic_message(
                    [
                        anthropic_search(
                            "python 3.13", ["https://docs.python.org/3/whatsnew/3.13.html", bad]
                        ),
                        anthropic_text(
                            f"Python 3.13 (answer {number}) has a new REPL, see "
                            f"[the notes](https://docs.python.org/3/whatsnew/3.13.html) "
                            f"and {bad}. " + "More prose without links. " * 40,
                            cite=["https://docs.python.org/3/whatsnew/3.13.html"],
                        ),
                    ]
                )
            ],
            prompt=f"What changed in Python 3.13? ({number})",
        )
        lines.append(transcript.model_dump_json())
    return lines


POLICIES = {
    "block": ["--block", "wikipedia.org"],
    "allow": ["--allow", "python.org"],
}


def main() -> None:
    megabytes = int(sys.argv[1]) if len(sys.argv) > 1 else 1024
    which = sys.argv[2] if len(sys.argv) > 2 else "block"
    modes = ["block", "allow"] if which == "both" else [which]
    directory = Path(tempfile.mkdtemp(prefix="bench-jsonl-"))
    log = directory / "day.jsonl"
    try:
        samples = [line.encode() + b"\n" for line in transcripts()]
        target = megabytes * 2**20
        started = time.perf_counter()
        with open(log, "wb") as out:
            written = count = 0
            block = b"".join(samples * 64)
            per_block = len(samples) * 64
            while written < target:
                out.write(block)
                written += len(block)
                count += per_block
        size = log.stat().st_size
        print(
            f"log: {size / 2**20:.0f} MB, {count:,} transcripts of ~{size // count:,} bytes "
            f"(written in {time.perf_counter() - started:.1f} s); {os.cpu_count()} core(s)"
        )
        for mode in modes:
            _audit(log, directory, mode, size)
    finally:
        shutil.rmtree(directory)


def _audit(log: Path, directory: Path, mode: str, size: int) -> None:
    expected = None
    for jobs in (1, 2):
        command = [sys.executable, "-m", "agentloop_tools", "audit", str(log),
                   *POLICIES[mode], "--jobs", str(jobs), "--format", "json",
                   "-o", str(directory / f"out-{jobs}.json")]  # fmt: skip
        started = time.perf_counter()
        measured = subprocess.run(
            [sys.executable, "-c", _MEASURE, *command],
            capture_output=True, text=True, check=True,
        )  # fmt: skip
        elapsed = time.perf_counter() - started
        code, peak_kb, cpu = measured.stdout.split()
        rate = size / 2**20 / elapsed
        # Per core from CPU time (the audit and its workers): wall time on a shared
        # machine says more about the neighbours than about the audit.
        print(
            f"{mode}list, audit --jobs {jobs}: {elapsed:.1f} s, {rate:.1f} MiB/s, "
            f"{size / 2**20 / float(cpu):.1f} MiB/s per core ({float(cpu):.1f} s CPU), "
            f"peak RSS {int(peak_kb) / 1024:.0f} MiB (largest process), exit {code}",
            flush=True,
        )
        output = json.loads((directory / f"out-{jobs}.json").read_text())
        summary = (output["summary"]["violations"], int(code))
        if expected is None:
            expected = summary
        elif summary != expected:
            raise SystemExit(f"--jobs {jobs} differs from --jobs 1: {summary} != {expected}")


if __name__ == "__main__":
    main()
