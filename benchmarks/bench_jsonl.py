"""Audits of production logs: a generated transcript log, one transcript per line.

    .venv/bin/python benchmarks/bench_jsonl.py            # 1 GB
    .venv/bin/python benchmarks/bench_jsonl.py 200        # 200 MB

Writes a log of the given size (MB) from a few real transcripts (agentloop's own
``Transcript.model_dump_json()``: hosted search sources, citations and answer text
with links, a violation in some), then runs ``agentloop-tools audit LOG --block ...``
with ``--jobs 1`` and ``--jobs 2`` and reports seconds, MB/s, MB/s per core and the
peak resident memory of the process and its workers (the largest of them).
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
children = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
print(done.returncode, children)
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


def main() -> None:
    megabytes = int(sys.argv[1]) if len(sys.argv) > 1 else 1024
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
        expected = None
        for jobs in (1, 2):
            command = [sys.executable, "-m", "agentloop_tools", "audit", str(log),
                       "--block", "wikipedia.org", "--jobs", str(jobs), "--format", "json",
                       "-o", str(directory / f"out-{jobs}.json")]  # fmt: skip
            started = time.perf_counter()
            measured = subprocess.run(
                [sys.executable, "-c", _MEASURE, *command],
                capture_output=True, text=True, check=True,
            )  # fmt: skip
            elapsed = time.perf_counter() - started
            code, peak_kb = (int(value) for value in measured.stdout.split())
            rate = size / 2**20 / elapsed
            print(
                f"audit --jobs {jobs}: {elapsed:.1f} s, {rate:.1f} MB/s, "
                f"{rate / jobs:.1f} MB/s per core, peak RSS {peak_kb / 1024:.0f} MB "
                f"(largest process), exit {code}"
            )
            output = json.loads((directory / f"out-{jobs}.json").read_text())
            summary = (output["summary"]["violations"], code)
            if expected is None:
                expected = summary
            elif summary != expected:
                raise SystemExit(f"--jobs {jobs} differs from --jobs 1: {summary} != {expected}")
    finally:
        shutil.rmtree(directory)


if __name__ == "__main__":
    main()
