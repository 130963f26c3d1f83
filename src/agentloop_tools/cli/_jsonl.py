"""Transcript logs: one transcript per line, read as a stream, in one or many processes.

A log is a ``.jsonl`` file whose first non-empty line is a JSON object with
``messages`` (``Transcript.model_dump_json()``, one conversation per line), as
production systems append them. It is read a line at a time with a per-line cap,
never whole, so its size is bounded only by the disk. A ``.jsonl`` whose first line is
a message (``to_jsonl``: one transcript, one message per line) is read as before.

``--jobs N`` cuts the work into units (a whole file, or a byte range of a log that
starts and ends at line boundaries) run in N processes, and puts the results back in
file and line order: the output and the exit code are those of one process.
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agentloop_tools._transcript_log import MAX_LINE_BYTES, first_error, is_log
from agentloop_tools.cli._inputs import failure, problem

__all__ = [
    "CHUNK_BYTES",
    "MAX_LINE_BYTES",
    "Part",
    "Unit",
    "audit_log_piece",
    "do",
    "is_log",
    "merge",
    "run",
    "units",
]

# A log is cut into pieces of about this size for --jobs (and read piece by piece).
CHUNK_BYTES = 32 * 1024 * 1024
_BLOCK = 1024 * 1024


@dataclass
class Part:
    """The results of one unit: violations and problems (in order), transcripts read."""

    path: str
    transcripts: int = 0
    tool_requests: int = 0
    lines: int = 0  # lines read (a log's piece; for line numbers across pieces)
    violations: list[dict[str, Any]] = field(default_factory=list)
    problems: list[dict[str, Any]] = field(default_factory=list)


@dataclass(frozen=True)
class Unit:
    """A whole file (``start`` None) or the lines of a log that start in [start, end)."""

    path: str
    start: int | None = None
    end: int | None = None
    size: int = 0


def units(files: list[Path]) -> list[Unit]:
    """The work: each file whole, each log cut into pieces of about ``CHUNK_BYTES``."""
    out: list[Unit] = []
    for path in files:
        if is_log(path):
            try:
                size = os.path.getsize(path)
            except OSError:
                size = 0
            starts = list(range(0, max(size, 1), CHUNK_BYTES))
            for number, start in enumerate(starts):
                end = starts[number + 1] if number + 1 < len(starts) else None
                out.append(Unit(str(path), start, end, (end or size) - start))
        else:
            try:
                size = os.path.getsize(path)
            except OSError:
                size = 0
            out.append(Unit(str(path), size=size))
    return out


def _lines(path: str, start: int, end: int | None) -> Iterator[tuple[bytes | None, int]]:
    """``(line, length)`` of each line that starts in [start, end); None for a line over
    the cap (skipped to its end without keeping it)."""
    with open(path, "rb") as file:
        if start > 0:
            # A piece begins after the line that straddles its start (the previous piece's).
            file.seek(start - 1)
            if file.read(1) != b"\n":
                while True:
                    rest = file.readline(_BLOCK)
                    if not rest or rest.endswith(b"\n"):
                        break
        while True:
            position = file.tell()
            if end is not None and position >= end:
                return
            line = file.readline(MAX_LINE_BYTES + 1)
            if not line:
                return
            if len(line) > MAX_LINE_BYTES and not line.endswith(b"\n"):
                length = len(line)
                while True:  # skip the rest of the line, a block at a time
                    rest = file.readline(_BLOCK)
                    length += len(rest)
                    if not rest or rest.endswith(b"\n"):
                        break
                yield None, length
                continue
            yield line, len(line)


def audit_log_piece(unit: Unit, policy: Any) -> Part:
    """Audit the transcripts on the lines of one piece of a log."""
    from agentloop import Transcript
    from pydantic import ValidationError

    from agentloop_tools._report._entries import violation_entry

    part = Part(unit.path)
    try:
        for number, (line, _length) in enumerate(_lines(unit.path, unit.start or 0, unit.end)):
            part.lines += 1
            if line is None:
                reason = f"over the {MAX_LINE_BYTES // 2**20} MB limit for one line, not read"
                part.problems.append(problem(unit.path, reason, line=number))
                continue
            if not line.strip():
                continue
            try:
                transcript = Transcript.model_validate_json(line)
            except ValidationError as error:
                reason = (
                    'not a transcript (expected {"messages": [...]}, as '
                    "Transcript.model_dump_json() writes): "
                    f"{' '.join(first_error(error).split())[:200]}"
                )
                part.problems.append(problem(unit.path, reason, line=number))
                continue
            except Exception as error:  # hostile input never stops the run
                part.problems.append(failure(unit.path, error, line=number))
                continue
            if not transcript.messages:
                reason = "a transcript with no message"
                part.problems.append(problem(unit.path, reason, line=number))
                continue
            part.transcripts += 1
            for violation in policy.audit(transcript):
                entry = violation_entry(violation, interaction=None)
                entry["line"] = number  # relative to the piece (problems too): merge() adds
                entry["conversation"] = number
                part.violations.append(entry)
    except OSError as error:
        from agentloop_tools.cli._inputs import os_reason

        part.problems.append(problem(unit.path, os_reason(error)))
    return part


def merge(units_done: list[tuple[Unit, Part]]) -> dict[str, Part]:
    """The pieces of each log put back together, with 1-based line numbers of the file."""
    merged: dict[str, Part] = {}
    offsets: dict[str, int] = {}
    for unit, part in units_done:
        if unit.start is None:
            merged[unit.path] = part
            continue
        whole = merged.setdefault(unit.path, Part(unit.path))
        offset = offsets.get(unit.path, 0)
        for violation in part.violations:
            violation["line"] += offset + 1
            violation["conversation"] = violation["line"] - 1
        for found in part.problems:
            if "line" in found:
                found["line"] += offset + 1
                found["reason"] = f"line {found['line']}: {found['reason']}"
        offsets[unit.path] = offset + part.lines
        whole.transcripts += part.transcripts
        whole.lines += part.lines
        whole.violations.extend(part.violations)
        whole.problems.extend(part.problems)
    return merged


def run(
    work: list[Unit], policy: Any, audit_file: Callable[[str, Any], Part], jobs: int
) -> list[tuple[Unit, Part]]:
    """Every unit's result, in the order given, in ``jobs`` processes (1: this one)."""
    total = sum(unit.size for unit in work) or len(work)
    progress = _Progress(total, len(work)) if sys.stderr.isatty() else None
    if jobs <= 1 or len(work) <= 1:
        done = []
        for unit in work:
            done.append((unit, do(unit, policy, audit_file)))
            if progress:
                progress.step(unit)
    else:
        with ProcessPoolExecutor(max_workers=jobs) as pool:
            futures = [pool.submit(do, unit, policy, audit_file) for unit in work]
            done = []
            for unit, future in zip(work, futures, strict=True):
                done.append((unit, future.result()))
                if progress:
                    progress.step(unit)
    if progress:
        progress.finish()
    return done


def do(unit: Unit, policy: Any, audit_file: Callable[[str, Any], Part]) -> Part:
    if unit.start is None:
        return audit_file(unit.path, policy)
    return audit_log_piece(unit, policy)


class _Progress:
    """One line on a terminal's stderr, rewritten in place (never in a pipe or a log)."""

    def __init__(self, total: int, count: int) -> None:
        self.total, self.count, self.done, self.units = total, count, 0, 0
        self.started = time.monotonic()
        self.shown = 0.0

    def step(self, unit: Unit) -> None:
        self.done += unit.size or 1
        self.units += 1
        now = time.monotonic()
        if now - self.shown < 0.2 and self.units < self.count:
            return
        self.shown = now
        rate = self.done / max(now - self.started, 1e-6) / 2**20
        sys.stderr.write(
            f"\raudit: {self.units}/{self.count} part(s), "
            f"{100 * self.done // max(self.total, 1)}% ({rate:.0f} MB/s)\x1b[K"
        )
        sys.stderr.flush()

    def finish(self) -> None:
        sys.stderr.write("\n")
        sys.stderr.flush()
