"""Speed of ``agentloop-tools audit`` on a big repository: 1,000 cassettes.

    .venv/bin/python benchmarks/bench_cli.py

Target (issue #4): auditing 1,000 cassettes takes seconds, not minutes. The cassettes
are the repository's own (demo and examples, both providers, JSON bodies), copied with
a different prompt each so no two files are the same.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

COUNT = 1000
REPO = Path(__file__).resolve().parents[1]


def main() -> None:
    originals = sorted((REPO / "cassettes").rglob("*.yaml"))
    directory = Path(tempfile.mkdtemp(prefix="bench-cli-"))
    try:
        for number in range(COUNT):
            original = originals[number % len(originals)]
            text = original.read_text().replace("Python 3.13", f"Python 3.13 (copy {number})", 1)
            (directory / f"{number:04d}-{original.name}").write_text(text)
        for policy in (["--block", "wikipedia.org"], ["--allow", "python.org"]):
            started = time.perf_counter()
            result = subprocess.run(
                [sys.executable, "-m", "agentloop_tools", "audit", str(directory), *policy,
                 "--format", "json"],
                capture_output=True, check=False,
            )  # fmt: skip
            elapsed = time.perf_counter() - started
            print(
                f"audit {COUNT} cassettes {' '.join(policy)}: {elapsed:.2f} s "
                f"(exit {result.returncode}, {COUNT / elapsed:.0f} cassettes/s)"
            )
    finally:
        shutil.rmtree(directory)


if __name__ == "__main__":
    main()
