"""``agentloop-tools audit``: every place the evidence reached a domain the policy forbids.

Each file is read (in this process, or ``--jobs`` worker processes), the baseline applied
(``_baseline.py``), and the result printed in the format asked for (``_output.py``,
``_sarif.py``). A violation found is exit 1 whatever else could not be read.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agentloop_tools._errors import BaselineError, UsageProblem
from agentloop_tools.cli import _emit, _output
from agentloop_tools.cli._inputs import (
    chosen_policy,
    collect_for,
    failure,
    read_problem,
    require_something,
)
from agentloop_tools.cli._output import EXIT_CLEAN, EXIT_FOUND, EXIT_USAGE, FileAudit, stderr

if TYPE_CHECKING:
    import argparse

    from agentloop_tools._logs._pieces import Part, Unit
    from agentloop_tools.cli._inputs import Found
    from agentloop_tools.cli._spool import Spooled, Spools


def audit(args: argparse.Namespace) -> int:
    if args.strict_baseline and not args.baseline:
        raise UsageProblem("--strict-baseline needs --baseline FILE")
    policy, origin = chosen_policy(args)
    if not (args.allow or args.block or args.policy):
        from agentloop_tools.cli._recorded import ProjectAsInPytest

        # The project's policy: each cassette as pytest audited it (with its markers).
        policy = ProjectAsInPytest(policy, origin)
    from agentloop_tools.cli import _refused

    refused_attempts = _refused.setting(args)
    found = collect_for(args, hint_domains=bool(args.allow or args.block))
    require_something(found, args.paths, "audit")
    from agentloop_tools.cli._spool import Spools

    with Spools() as spooled:
        audits = _audit_all(found, policy, args.jobs, refused_attempts[0], spooled)
        return _report(args, audits, policy, origin, found, refused_attempts)


def _report(
    args: argparse.Namespace,
    audits: list[FileAudit],
    policy: Any,
    origin: str,
    found: Found,
    refused_attempts: tuple[str, str | None],
) -> int:
    """Apply the baseline, write the format asked for, and decide the exit code."""
    from agentloop_tools.cli import _baseline, _refused

    if args.baseline or args.write_baseline:
        for audit in audits:  # a baseline is applied in memory
            audit.violations = list(audit.violations)
    try:
        outcome = _baseline.apply(
            audits, policy, write_to=args.write_baseline, read_from=args.baseline
        )
    except BaselineError as error:
        raise UsageProblem(str(error)) from None
    args.refused_setting = refused_attempts  # for the table's summary
    _write(args, audits, policy, origin, found, outcome)
    _output.report_skipped(found.skipped)
    _output.report_ignored(found.ignored)
    _output.report_left_out(found)
    _report_recorded(found, policy)
    problems = any(audit.problems for audit in audits)
    if outcome is not None:
        return _baseline_exit(outcome, args.strict_baseline, audits, problems)
    # A violation found is a violation whatever else could not be read: 1 wins over 2.
    # (A refused attempt counts only when refused attempts are set to fail.)
    if _refused.failing(audits):
        return EXIT_FOUND
    return EXIT_USAGE if problems else EXIT_CLEAN


def _report_recorded(found: Found, policy: Any) -> None:
    from agentloop_tools.cli._recorded import ProjectAsInPytest, notes

    if isinstance(policy, ProjectAsInPytest):
        for line in notes(found.files, policy, audit_one):
            stderr(line)


def _audit_all(
    found: Found, policy: Any, jobs: int, refused: str, spooled: Spools
) -> list[FileAudit]:
    """Each file's audit (paths that could not be listed too), sorted by path.

    Each result is folded in as it comes (a log's pieces in order) and its violations
    and problems spooled to disk: memory stays flat whatever the size of a log.
    """
    from agentloop_tools._logs._pieces import merged_in_order, units
    from agentloop_tools.cli import _refused
    from agentloop_tools.cli._jobs import run_units, unit_slices

    audits = [FileAudit(problem["path"], problems=[problem]) for problem in found.problems]
    work = units(found.files, jobs)
    if jobs > 1:
        done: Iterable[tuple[Unit, Part]] = run_units(work, policy, audit_one, jobs)
    else:
        done = (
            (unit, part)
            for unit in _output.progress(work, "audit")
            for part in unit_slices(unit, policy, audit_one)
        )
    by_path: dict[str, tuple[FileAudit, Spooled, Spooled]] = {}
    for unit, part in merged_in_order(done):
        held = by_path.get(part.path)
        if held is None or unit.start is None:  # a file named twice: its last reading
            violations, problems = spooled(), spooled()
            audit = FileAudit(part.path, violations=violations, problems=problems)
            held = by_path[part.path] = (audit, violations, problems)
        audit, violations, problems = held
        audit.transcripts += part.transcripts
        audit.tool_requests += part.tool_requests
        _refused.mark_each(part.violations, refused)
        violations.extend(part.violations)
        problems.extend(part.problems)
    audits.extend(audit for audit, _, _ in by_path.values())
    audits.sort(key=lambda audit: audit.path)
    return audits


def _write(
    args: argparse.Namespace,
    audits: list[FileAudit],
    policy: Any,
    origin: str,
    found: Found,
    outcome: Any,
) -> None:
    from agentloop_tools.cli import _sarif

    formatters: dict[str, Callable[..., None]] = {
        "table": _output.audit_table,
        "json": _output.audit_json,
        "github": _output.audit_github,
        "junit": _output.audit_junit,
        "sarif": _sarif.write,
    }
    formatter = formatters[args.format]
    # What the table and JSON formats add: files left out, and the baseline's outcome.
    extra: dict[str, Any] = (
        {"found": found, "outcome": outcome} if args.format in ("table", "json", "github") else {}
    )
    if args.format in ("table", "json", "github"):
        extra["refused_attempts"] = args.refused_setting
    exact = args.format in ("json", "junit", "sarif")  # JSON as recorded; junit escapes itself
    _emit.emit(
        args.output, lambda out: formatter(audits, policy, origin, out, **extra), exact=exact
    )


_READER: Any = None  # one per process: its clients are built once


def audit_one(path: str, policy: Any) -> Any:
    """Audit one cassette or transcript file (in this process or a --jobs worker)."""
    global _READER
    from agentloop_tools._logs._pieces import Part
    from agentloop_tools._report._entries import violation_entry
    from agentloop_tools.cassettes import Reader

    if _READER is None:
        _READER = Reader()
    audit = Part(path)
    try:
        if hasattr(policy, "for_file"):  # the project's, with the cassette's markers
            policy = policy.for_file(path)
        reading = _READER.read(Path(path))
        audit.transcripts = len(reading.transcripts)
        audit.tool_requests = reading.tool_traffic
        audit.problems = [read_problem(problem) for problem in reading.problems]
        for number, (transcript, interactions) in enumerate(
            zip(reading.transcripts, reading.interactions, strict=True)
        ):
            for violation in policy.audit(transcript):
                index = violation.message_index
                audit.violations.append(
                    violation_entry(
                        replace(violation, conversation=number),
                        interaction=interactions[index] if index < len(interactions) else None,
                    )
                )
    except Exception as error:  # one bad file never stops the run
        audit.problems.append(failure(Path(path), error))
    return audit


def _baseline_exit(outcome: Any, strict: bool, audits: list[FileAudit], problems: bool) -> int:
    from agentloop_tools._visible import visible
    from agentloop_tools.cli._baseline import describe

    path = visible(str(outcome.path))
    if outcome.written is not None:
        incomplete = " (incomplete: some input could not be read)" if problems else ""
        stderr(
            f"agentloop-tools: wrote {outcome.written} violation(s) to the baseline "
            f"{path}{incomplete}; audit against it with --baseline {path}"
        )
        return EXIT_USAGE if problems else EXIT_CLEAN
    comparison = outcome.comparison
    if comparison.stale:
        stderr(
            f"agentloop-tools: {len(comparison.stale)} stale baseline entr"
            f"{'y' if len(comparison.stale) == 1 else 'ies'} in {path} (no longer "
            f"found{'; --strict-baseline fails on them' if strict else ''}); remove them "
            f"with --write-baseline {path}:"
        )
        for key in comparison.stale:
            stderr(f"  stale: {describe(key)}")
    from agentloop_tools.cli._refused import failing

    if failing(audits) or (strict and comparison.stale):
        return EXIT_FOUND
    return EXIT_USAGE if problems else EXIT_CLEAN
