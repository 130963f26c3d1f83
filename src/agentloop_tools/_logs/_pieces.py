"""Pieces of transcript logs: cut at line boundaries, audited anywhere, merged in order.

A log is a ``.jsonl`` file whose first non-empty line is a JSON object with ``messages``
(``Transcript.model_dump_json()``, one conversation per line), as production systems
append them. It is read a line at a time with a per-line cap, never whole, so its size is
bounded only by the disk. A unit (a piece of a log, or a whole file for another reader)
pickles, and so does its result: any engine can run them.
"""

from __future__ import annotations

import os
from collections import deque
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agentloop_tools._logs._prefilter import LinePrefilter, line_prefilter
from agentloop_tools._transcript_log import at_line, file_lines, is_log, read_lines

# A log is cut into pieces of about this size (and read piece by piece).
CHUNK_BYTES = 32 * 1024 * 1024
# The smallest piece cut for several processes: a piece's start-up is then negligible.
MIN_PIECE_BYTES = 4 * 1024 * 1024
# Lines the line prefilter searches at once (blocklists): about this many bytes.
_BATCH_BYTES = 512 * 1024
_BATCH_LINES = 1024


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


def units(files: Iterable[Path], jobs: int = 1) -> list[Unit]:
    """The work: each file whole, each log cut into pieces of about ``CHUNK_BYTES``;
    for ``jobs`` processes, smaller pieces (down to ``MIN_PIECE_BYTES``) so that a log
    makes at least four a process: three pieces on two processes take two rounds."""
    out: list[Unit] = []
    for path in files:
        try:
            size = os.path.getsize(path)
        except OSError:
            size = 0
        if not is_log(path):
            out.append(Unit(str(path), size=size))
            continue
        piece = CHUNK_BYTES
        if jobs > 1:
            piece = min(CHUNK_BYTES, max(MIN_PIECE_BYTES, -(-size // (4 * jobs))))
        starts = list(range(0, max(size, 1), piece))
        for number, start in enumerate(starts):
            end = starts[number + 1] if number + 1 < len(starts) else None
            out.append(Unit(str(path), start, end, (end or size) - start))
    return out


def audit_log_piece(unit: Unit, policy: Any, *, prefiltered: bool = True) -> Part:
    """Audit the transcripts on the lines of one piece of a log (``prefiltered``: a
    blocklist skips the audit of the lines that cannot name a host it blocks)."""
    return next(audit_log_slices(unit, policy, prefiltered=prefiltered))


def audit_log_slices(
    unit: Unit, policy: Any, *, prefiltered: bool = True, entries: int | None = None
) -> Iterator[Part]:
    """The piece's results in slices of its lines, each numbered from the slice's start
    (as pieces are: ``merged_in_order`` numbers them on), a slice ending once it holds
    ``entries`` violations and problems: one slice held at a time, whatever the piece's
    size. ``entries`` None: the whole piece in one."""
    from agentloop_tools._report._entries import problem_entry, violation_entry

    part, first = Part(unit.path), 0
    prefilter = line_prefilter(policy) if prefiltered else None
    flags: deque[bool] = deque()
    try:
        lines = file_lines(unit.path, unit.start or 0, unit.end)
        for line in read_lines(_cleared(lines, prefilter, flags) if prefilter else lines):
            cleared = flags.popleft() if prefilter else False
            if entries is not None and len(part.violations) + len(part.problems) >= entries:
                yield part
                part, first = Part(unit.path), line.number
            number = line.number - first
            part.lines += 1
            if line.problem is not None:
                part.problems.append(problem_entry(unit.path, line.problem, line=number))
            if line.transcript is None:
                continue
            part.transcripts += 1
            if cleared and prefilter and prefilter.clear_texts(line.transcript):
                continue  # read and counted; no rule's host can be in it
            for violation in policy.audit(line.transcript):
                entry = violation_entry(violation, interaction=None)
                entry["line"] = number  # relative to the slice (problems too): merge adds
                entry["conversation"] = number
                part.violations.append(entry)
    except OSError as error:
        from agentloop_tools.cassettes._load import os_reason

        part.problems.append(problem_entry(unit.path, os_reason(error)))
    yield part


def _cleared(
    lines: Iterable[bytes | None], prefilter: LinePrefilter, flags: deque[bool]
) -> Iterator[bytes | None]:
    """``lines``, a batch at a time, each batch's prefilter verdicts put in ``flags``
    (one a line, in order) before its lines are read."""
    batch: list[bytes | None] = []
    size = 0
    for line in lines:
        batch.append(line)
        size += len(line) if line is not None else 0
        if size >= _BATCH_BYTES or len(batch) >= _BATCH_LINES:
            flags.extend(prefilter.clear(batch))
            yield from batch
            batch, size = [], 0
    flags.extend(prefilter.clear(batch))
    yield from batch


def merge(units_done: Iterable[tuple[Unit, Part]]) -> dict[str, Part]:
    """The pieces of each log put back together, with 1-based line numbers of the file."""
    merged: dict[str, Part] = {}
    for unit, part in merged_in_order(units_done):
        whole = merged.get(part.path)
        if whole is None or unit.start is None:  # a file named twice: its last reading
            merged[part.path] = part
            continue
        whole.transcripts += part.transcripts
        whole.tool_requests += part.tool_requests
        whole.lines += part.lines
        whole.violations.extend(part.violations)
        whole.problems.extend(part.problems)
    return merged


def merged_in_order(units_done: Iterable[tuple[Unit, Part]]) -> Iterator[tuple[Unit, Part]]:
    """Each result as it comes (in file and line order), its line numbers those of the
    whole file: one piece held at a time, so a caller can write each and let it go."""
    offsets: dict[str, int] = {}
    for unit, part in units_done:
        if unit.start is not None:
            offset = offsets.get(unit.path, 0)
            for violation in part.violations:
                violation["line"] += offset + 1
                violation["conversation"] = violation["line"] - 1
            for found in part.problems:
                if "line" in found:
                    found["line"] += offset + 1
                    found["reason"] = at_line(found["line"], found["reason"])
            offsets[unit.path] = offset + part.lines
        yield unit, part
