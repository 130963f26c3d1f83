"""Speed of ``agentloop-tools audit`` on a big repository: 1,000 cassettes.

    .venv/bin/python benchmarks/bench_cli.py

Target (issue #4): auditing 1,000 cassettes takes seconds, not minutes. The cassettes
are the repository's own (demo and examples, both providers, JSON bodies), copied with
a different prompt each so no two files are the same.

With a baseline (issue 20): writing it, auditing against it (``--format github``, the CI
step), the same with ``--jobs 2``, and ``--format sarif``.

``diff`` (issue 28): two folders of 1,000 cassettes with stored evidence records, one
in ten changed (a domain added), under 30 s; ``python benchmarks/bench_cli.py diff``
runs that case alone.

Also ``scan`` over the same 1,000 files (MB/s of file read, decoded and checked), and
the time to refuse a YAML alias bomb and a 100,000-deep JSON file (issue #8: bounded
time on hostile input).
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

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
        with_baseline(directory)
        size = sum(path.stat().st_size for path in directory.iterdir())
        started = time.perf_counter()
        result = subprocess.run(
            [sys.executable, "-m", "agentloop_tools", "scan", str(directory)],
            capture_output=True, check=False,
        )  # fmt: skip
        elapsed = time.perf_counter() - started
        print(
            f"scan {COUNT} cassettes ({size / 1e6:.1f} MB): {elapsed:.2f} s "
            f"(exit {result.returncode}, {size / 1e6 / elapsed:.1f} MB/s)"
        )
        hostile(directory)
    finally:
        shutil.rmtree(directory)


def diff_folders() -> None:
    """Issue 28: ``diff`` of two 1,000-cassette folders with stored evidence records."""
    from agentloop_tools.cassettes import Reader
    from agentloop_tools.cassettes import _format as serializer
    from agentloop_tools.cassettes._load import read_text
    from agentloop_tools.testing._summary_build import summarize

    originals = sorted((REPO / "cassettes").rglob("*.yaml"))
    reader = Reader()
    records: dict[Path, dict[str, Any]] = {}
    for original in originals:
        reading = reader.read(original)
        exchanges: list[Any] = list(reading.exchanges)
        if not exchanges:  # a transcript: no raw answers
            exchanges = [None] * len(reading.transcripts)
        records[original] = summarize(reading.transcripts, exchanges).to_dict()
    root = Path(tempfile.mkdtemp(prefix="bench-diff-"))
    try:
        for side in ("old", "new"):
            for number in range(COUNT):
                original = originals[number % len(originals)]
                record = records[original]
                if side == "new" and number % 10 == 0:
                    conversations = [dict(c) for c in record["conversations"]]
                    if conversations:
                        domains = [*conversations[0]["domains"], f"new-{number}.example"]
                        conversations[0] = {**conversations[0], "domains": domains}
                    record = {**record, "conversations": conversations}
                data = serializer.deserialize(read_text(original))
                data.pop("provenance", None)
                written = {
                    "provenance": {
                        "schema": 2,
                        "recorded_at": "2026-12-01T11:06:57Z",
                        "policy": {"markers": [], "project": None, "replace": False},
                    },
                    **data,
                    "evidence": {"schema": 1, "tests": {f"test_{number}.py::test": record}},
                }
                folder = root / side / f"group{number % 20}"
                folder.mkdir(parents=True, exist_ok=True)
                (folder / f"{number:04d}-{original.name}").write_text(serializer.serialize(written))
        started = time.perf_counter()
        result = subprocess.run(
            [sys.executable, "-m", "agentloop_tools", "diff", "old", "new", "--format", "json"],
            capture_output=True, check=False, cwd=root,
        )  # fmt: skip
        elapsed = time.perf_counter() - started
        print(
            f"diff two folders of {COUNT} cassettes (stored records, {COUNT // 10} changed): "
            f"{elapsed:.2f} s (exit {result.returncode}, {2 * COUNT / elapsed:.0f} files/s)"
        )
    finally:
        shutil.rmtree(root)


def with_baseline(directory: Path) -> None:
    """Issue 20: the CI step with a baseline of today's violations, and --jobs 2."""
    baseline = directory.parent / f"{directory.name}-baseline.json"
    policy = ["--block", "wikipedia.org,medium.com"]
    runs = {
        "--write-baseline": [*policy, "--write-baseline", str(baseline)],
        "--baseline": [*policy, "--baseline", str(baseline), "--format", "github"],
        "--baseline --jobs 2": [*policy, "--baseline", str(baseline), "--jobs", "2"],
        "--format sarif": [*policy, "--format", "sarif"],
    }
    try:
        for name, arguments in runs.items():
            started = time.perf_counter()
            result = subprocess.run(
                [sys.executable, "-m", "agentloop_tools", "audit", str(directory), *arguments],
                capture_output=True, check=False,
            )  # fmt: skip
            elapsed = time.perf_counter() - started
            entries = baseline.read_text().count('"file"') if baseline.exists() else 0
            print(
                f"audit {COUNT} cassettes {name}: {elapsed:.2f} s (exit {result.returncode}, "
                f"{entries} baseline entries)"
            )
    finally:
        baseline.unlink(missing_ok=True)


def hostile(directory: Path) -> None:
    """Time to refuse an alias bomb and a 100,000-deep JSON transcript."""
    for item in directory.iterdir():
        item.unlink()
    bomb = (
        "a: &a ["
        + ",".join(["lol"] * 10)
        + "]\n"
        + "".join(
            f"{chr(98 + i)}: &{chr(98 + i)} [" + ",".join([f"*{chr(97 + i)}"] * 10) + "]\n"
            for i in range(9)
        )
    )
    (directory / "bomb.yaml").write_text(bomb)
    (directory / "deep.json").write_text("[" * 100_000 + "]" * 100_000)
    for command in (["audit", "--block", "wikipedia.org"], ["scan"]):
        started = time.perf_counter()
        result = subprocess.run(
            [sys.executable, "-m", "agentloop_tools", *command, str(directory)],
            capture_output=True, check=False,
        )  # fmt: skip
        elapsed = time.perf_counter() - started
        print(f"{command[0]} an alias bomb and 100,000-deep JSON: {elapsed:.2f} s "
              f"(exit {result.returncode})")  # fmt: skip


if __name__ == "__main__":
    if sys.argv[1:] == ["diff"]:
        diff_folders()
    else:
        main()
        diff_folders()
