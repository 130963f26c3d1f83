"""Issue 30's JSONL rows: ``agentloop-tools audit LOG --jobs 1`` in CPU time per core.

Run through ``bench_rows.py`` (which can run them against two source trees). The log is
written from ``bench_jsonl.transcripts()``; the reference is ``json.loads`` of each line
of the same log, timed in the same run. Memory: the audit's peak RSS on a small and a
large log, and how much it grows per GB of log (flat is the target).
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from bench_jsonl import transcripts

MIB = 2**20
LARGE_MIB = 48
SMALL_MIB = 12
# Runs one audit in a child and prints its CPU seconds and peak RSS (KB).
_MEASURE = """
import resource, subprocess, sys
subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
used = resource.getrusage(resource.RUSAGE_CHILDREN)
print(used.ru_utime + used.ru_stime, used.ru_maxrss)
"""


def write_log(path: Path, mebibytes: int) -> int:
    block = b"".join(line.encode() + b"\n" for line in transcripts() * 64)
    with open(path, "wb") as out:
        written = 0
        while written < mebibytes * MIB:
            out.write(block)
            written += len(block)
    return written


def audit_cpu(log: Path, rule: list[str], out: Path) -> tuple[float, float]:
    """CPU seconds and peak RSS (MB) of ``agentloop-tools audit LOG ... --jobs 1``."""
    command = [sys.executable, "-m", "agentloop_tools", "audit", str(log), *rule,
               "--jobs", "1", "--format", "json", "-o", str(out)]  # fmt: skip
    measured = subprocess.run(
        [sys.executable, "-c", _MEASURE, *command], capture_output=True, text=True, check=True
    )
    cpu, peak_kb = measured.stdout.split()
    return float(cpu), int(peak_kb) / 1024


def json_loads_cpu(log: Path) -> float:
    started = time.process_time()
    with open(log, "rb") as lines:
        for line in lines:
            json.loads(line)
    return time.process_time() - started


def log_row(rule: list[str]) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="bench-log-rows-") as directory:
        small, large = Path(directory, "small.jsonl"), Path(directory, "large.jsonl")
        small_size = write_log(small, SMALL_MIB)
        size = write_log(large, LARGE_MIB)
        _, small_peak = audit_cpu(small, rule, Path(directory, "small.json"))
        cpu, peak = audit_cpu(large, rule, Path(directory, "large.json"))
        reference = min(json_loads_cpu(large) for _ in range(2))
        violations = json.loads(Path(directory, "large.json").read_text())["summary"]
    per_gb = (peak - small_peak) / ((size - small_size) / 2**30)
    return {
        "ms": cpu * 1000,
        "mb_per_s": size / MIB / cpu,
        "reference_ms": reference * 1000,
        "ratio": cpu / reference,
        "note": (
            f"MiB/s per core, {size / MIB:.0f} MiB; json.loads {size / MIB / reference:.0f} "
            f"MiB/s; peak RSS {peak:.0f} MB, +{per_gb:.0f} MB per GB of log; "
            f"{violations['violations']} violations"
        ),
    }


def row_jsonl_block() -> dict[str, Any]:
    return log_row(["--block", "wikipedia.org"])


def row_jsonl_allow() -> dict[str, Any]:
    return log_row(["--allow", "python.org"])


ROWS = {
    "JSONL log, blocklist, --jobs 1": row_jsonl_block,
    "JSONL log, allowlist, --jobs 1": row_jsonl_allow,
}
