"""``agentloop-tools audit --jobs N``: the audit's units run in N worker processes, their
results handed back in file and line order, so the output and the exit code are those
of one process.

The units and their audit are the library's (``agentloop_tools._logs``); this module
only runs them. Each worker receives the policy once, when it starts (a pool
initializer), not with every unit: a policy of many rules is unpickled and its rule
finder rebuilt once per process. At most N units are in flight, so the results waiting
to be written in order are at most N pieces, whatever the log's size.
"""

from __future__ import annotations

import sys
import time
from collections import deque
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ProcessPoolExecutor
from typing import Any

from agentloop_tools._logs._pieces import Part, Unit, audit_log_piece, audit_log_slices

__all__ = ["audit_unit", "run_units", "unit_slices"]

# The violations and problems one slice of a log's piece holds in this process.
SLICE_ENTRIES = 1024

type AuditFile = Callable[[str, Any], Part]


def audit_unit(unit: Unit, policy: Any, audit_file: AuditFile) -> Part:
    """One unit's result: a whole file through ``audit_file``, a log's piece streamed."""
    if unit.start is None:
        return audit_file(unit.path, policy)
    return audit_log_piece(unit, policy)


def unit_slices(unit: Unit, policy: Any, audit_file: AuditFile) -> Iterator[Part]:
    """``audit_unit`` in slices (a log's piece; a whole file is one): memory flat in the
    piece's size when the results are written as they come (``merged_in_order``)."""
    if unit.start is None:
        yield audit_file(unit.path, policy)
        return
    yield from audit_log_slices(unit, policy, entries=SLICE_ENTRIES)


def run_units(
    work: list[Unit], policy: Any, audit_file: AuditFile, jobs: int
) -> Iterator[tuple[Unit, Part]]:
    """Every unit's result, in the order given, in ``jobs`` processes (1: this one)."""
    total = sum(unit.size for unit in work) or len(work)
    progress = _Progress(total, len(work)) if sys.stderr.isatty() else None
    if jobs <= 1 or len(work) <= 1:
        for unit in work:
            for part in unit_slices(unit, policy, audit_file):
                yield unit, part
            if progress:
                progress.step(unit)
    else:
        yield from _in_workers(work, policy, audit_file, jobs, progress)
    if progress:
        progress.finish()


def _in_workers(
    work: list[Unit], policy: Any, audit_file: AuditFile, jobs: int, progress: _Progress | None
) -> Iterator[tuple[Unit, Part]]:
    # Workers are forked from this process: what it has imported they share instead of
    # each importing agentloop and pydantic again (a third of a second of CPU each).
    import agentloop_tools._report._entries  # noqa: F401
    from agentloop_tools.web import DomainPolicy
    from agentloop_tools.web._policy._policy import prepare_audit

    if isinstance(policy, DomainPolicy):
        # The log's size bounds the text its audit reads from above.
        prepare_audit(policy, sum(unit.size for unit in work))
    left = iter(work)
    with ProcessPoolExecutor(
        max_workers=jobs, initializer=_start_worker, initargs=(policy, audit_file)
    ) as pool:
        flight: deque[tuple[Unit, Future[Part]]] = deque()
        for unit in left:
            flight.append((unit, pool.submit(_audit_in_worker, unit)))
            if len(flight) >= jobs:
                break
        while flight:
            unit, future = flight.popleft()
            part = future.result()
            following = next(left, None)
            if following is not None:
                flight.append((following, pool.submit(_audit_in_worker, following)))
            if progress:
                progress.step(unit)
            yield unit, part


# A worker's policy and file reader, set once when the process starts.
_WORKER: list[Any] = []


def _start_worker(policy: Any, audit_file: AuditFile) -> None:
    _WORKER[:] = [policy, audit_file]


def _audit_in_worker(unit: Unit) -> Part:
    policy, audit_file = _WORKER
    return audit_unit(unit, policy, audit_file)


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
