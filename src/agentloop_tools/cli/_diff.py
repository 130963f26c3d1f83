"""``agentloop-tools diff OLD NEW``: what changed in the evidence between two recordings.

Two files are compared whatever their names; two folders file by file, matched by
relative path (a file on one side only is added or removed). Each file's evidence
records come from its ``evidence:`` block, by test id, else are computed from its
interactions as ``evidence`` computes them. The comparison itself is
``testing._drift``, the one the pytest plugin shows when a test re-records.

Verdicts: each cassette under its recorded markers and today's project policy, as
``audit`` judges it (``_recorded.py``); the stored verdict is used as it is when the
cassette was recorded under the project policy of today's fingerprint, so a folder of
stored records is compared without reading one interaction. ``--allow``, ``--block``
or ``--policy`` judge every file under that policy (each file is read).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from agentloop_tools._errors import InputError, UsageProblem
from agentloop_tools._visible import visible
from agentloop_tools.cli import _emit, _output
from agentloop_tools.cli._inputs import (
    INPUT_SUFFIXES,
    chosen_policy,
    collect,
    failure,
    problem,
    project_policy,
    read_problem,
)
from agentloop_tools.cli._output import EXIT_CLEAN, EXIT_FOUND, EXIT_USAGE, gh, gh_property

if TYPE_CHECKING:
    import argparse

    from agentloop_tools.testing import EvidenceSummary

WHOLE = "(whole cassette)"  # the key of a record computed for a file with none stored


@dataclass
class Side:
    """One file's records by test id, their verdicts, and how they were found."""

    records: dict[str, EvidenceSummary] = field(default_factory=dict)
    verdicts: dict[str, str] = field(default_factory=dict)
    stored: bool = False
    unreadable: bool = False  # no record could be read: nothing to compare it with
    problems: list[dict[str, Any]] = field(default_factory=list)


class Judge:
    """How a file's verdict is reached: a given policy, or each cassette's recorded
    markers with today's project policy (None: the project has none)."""

    def __init__(self, args: argparse.Namespace) -> None:
        self.given = bool(args.allow or args.block or args.policy)
        if self.given:
            self.policy, self.origin = chosen_policy(args)
            self.project = None
        else:
            self.project, origin = project_policy()
            self.origin = "each cassette's recorded policy" + (
                f" with the project policy ({origin})" if origin else ""
            )
            self.policy = None
        self.reader: Any = None

    def policy_for(self, path: Path) -> Any:
        """The policy ``path`` is judged with (None: not audited)."""
        if self.given:
            return self.policy
        from agentloop_tools.cli._recorded import AllOf, ProjectAsInPytest, _marker, recorded_policy

        if self.project is not None:
            return ProjectAsInPytest(self.project, "").for_file(path)
        recorded = recorded_policy(path)
        markers = [_marker(entry, path) for entry in recorded["markers"]] if recorded else []
        if not markers:
            return None
        return markers[0] if len(markers) == 1 else AllOf(tuple(markers))

    def stored_verdict_holds(self, path: Path) -> bool:
        """Whether a stored record's verdict is the one ``audit`` would reach today: the
        cassette recorded its policy, under the project policy of today's fingerprint."""
        if self.given:
            return False
        from agentloop_tools.cassettes._provenance import fingerprint
        from agentloop_tools.cli._recorded import recorded_policy

        recorded = recorded_policy(path)
        if recorded is None:
            return False
        project = recorded.get("project")
        was = project.get("fingerprint") if isinstance(project, dict) else None
        today = fingerprint(self.project) if self.project is not None else None
        return was == today

    def read(self, path: Path) -> Any:
        if self.reader is None:
            from agentloop_tools.cassettes import Reader

            self.reader = Reader()
        return self.reader.read(path)


def diff(args: argparse.Namespace) -> int:
    from agentloop_tools.testing._drift import fails

    old, new = Path(args.old), Path(args.new)
    pairs, problems = _pairs(old, new)
    judge = Judge(args)
    files = []
    for shown, before, after in _output.progress(pairs, "diff"):
        files.append(_compare_file(shown, before, after, judge))
    for file in files:
        problems += file.pop("problems")
        for test in file["tests"]:
            test["fails"] = fails(test["drift"]["level"], args.fail_on)
    document = _document(args, judge, files, problems)
    writers: dict[str, Callable[[dict[str, Any], TextIO], None]] = {
        "table": _table,
        "json": _json,
        "github": _github,
    }
    _emit.emit(
        args.output,
        lambda out: writers[args.format](document, out),
        exact=args.format == "json",
    )
    if args.format != "json":
        for found in problems:
            _output.stderr(
                f"diff: could not read {_output.where_of(found)}: {visible(found['reason'])}"
            )
    # A failing change is a failing change whatever else could not be read: 1 wins over 2.
    if document["summary"]["failing"]:
        return EXIT_FOUND
    return EXIT_USAGE if problems else EXIT_CLEAN


# --- what is compared with what ------------------------------------------------------


def _pairs(
    old: Path, new: Path
) -> tuple[list[tuple[str, Path | None, Path | None]], list[dict[str, Any]]]:
    """``(shown path, old file, new file)`` for each file, and the problems of listing."""
    kinds = []
    for path in (old, new):
        try:
            path.stat()
        except OSError as error:
            from agentloop_tools.cli._inputs import os_reason

            raise UsageProblem(f"{visible(str(path))}: {os_reason(error)}") from None
        kinds.append(path.is_dir())
    if kinds[0] != kinds[1]:
        raise UsageProblem(
            f"{visible(str(old))} is a {'folder' if kinds[0] else 'file'} and "
            f"{visible(str(new))} a {'folder' if kinds[1] else 'file'}: compare two cassettes, "
            "or two folders (matched by relative path)"
        )
    if not kinds[0]:
        return [(f"{old} -> {new}", old, new)], []
    found_old = collect([str(old)], INPUT_SUFFIXES)
    found_new = collect([str(new)], INPUT_SUFFIXES)
    for found, root in ((found_old, old), (found_new, new)):
        for skipped in sorted(found.skipped):
            _output.stderr(f"agentloop-tools diff: not searched under {root}: {skipped}")
    by_old = {path.relative_to(old).as_posix(): path for path in found_old.files}
    by_new = {path.relative_to(new).as_posix(): path for path in found_new.files}
    names = sorted(by_old.keys() | by_new.keys())
    pairs = [(name, by_old.get(name), by_new.get(name)) for name in names]
    if not pairs and not found_old.problems and not found_new.problems:
        raise UsageProblem(
            f"no file to compare in {visible(str(old))} or {visible(str(new))}: diff reads "
            "cassettes (.yaml, .yml, vcrpy's .json) and transcripts (.jsonl, .json); check "
            "the paths"
        )
    return pairs, [*found_old.problems, *found_new.problems]


def _compare_file(
    shown: str, before: Path | None, after: Path | None, judge: Judge
) -> dict[str, Any]:
    from agentloop_tools.testing._drift import compare

    old = _side(before, judge) if before is not None else None
    new = _side(after, judge) if after is not None else None
    if old is not None and new is not None and old.records.keys() != new.records.keys():
        # A stored side against a computed one: compare what each file holds as a whole,
        # both computed, so the two records are read the same way.
        if (old.stored and len(old.records) == 1 and WHOLE in new.records) or (
            new.stored and len(new.records) == 1 and WHOLE in old.records
        ):
            _rename(old, new)
        elif WHOLE in old.records or WHOLE in new.records:
            old = _side(before, judge, computed=True) if before is not None else None
            new = _side(after, judge, computed=True) if after is not None else None
    problems = [*(old.problems if old else []), *(new.problems if new else [])]
    tests: list[dict[str, Any]] = []
    if (old is not None and old.unreadable) or (new is not None and new.unreadable):
        # Compared with nothing, every test would read as added or removed: a problem
        # (exit 2) says the comparison is incomplete instead.
        old = new = None
    names = sorted((old.records.keys() if old else set()) | (new.records.keys() if new else set()))
    for name in names:
        was = old.records.get(name) if old else None
        now = new.records.get(name) if new else None
        drift = compare(
            was,
            now,
            old_verdict=old.verdicts.get(name) if old else None,
            new_verdict=new.verdicts.get(name) if new else None,
        )
        status = "added" if was is None else "removed" if now is None else "compared"
        if status != "compared" or drift["level"] is not None:
            tests.append({"test": name, "status": status, "drift": drift})
    status = "added" if before is None else "removed" if after is None else "compared"
    return {
        "path": shown,
        "old": str(before) if before is not None else None,
        "new": str(after) if after is not None else None,
        "status": status,
        "records": {
            "old": _how(old),
            "new": _how(new),
        },
        "tests": tests,
        "problems": problems,
    }


def _rename(old: Side, new: Side) -> None:
    """Pair a stored record with the whole-cassette record computed on the other side."""
    stored, computed = (old, new) if old.stored else (new, old)
    [name] = stored.records
    computed.records[name] = computed.records.pop(WHOLE)
    if WHOLE in computed.verdicts:
        computed.verdicts[name] = computed.verdicts.pop(WHOLE)


def _how(side: Side | None) -> str | None:
    if side is None:
        return None
    return "stored" if side.stored else "computed"


def _side(path: Path, judge: Judge, *, computed: bool = False) -> Side:
    """A file's records: stored ones (by test id) unless ``computed`` or none is stored."""
    from agentloop_tools.testing import EvidenceSummary

    side = Side()
    try:
        stored = {} if computed else _stored(path)
        if stored:
            for test, data in stored.items():
                side.records[test] = EvidenceSummary.from_json(data)
            side.stored = True
            if judge.stored_verdict_holds(path):
                return side
            verdict = _verdict(path, judge, side)
            for test in side.records:
                side.verdicts[test] = verdict
            return side
        _compute(path, judge, side)
    except (InputError, ValueError) as error:
        side.records.clear()
        side.unreadable = True
        side.problems.append(problem(path, str(error)))
    except Exception as error:  # one bad file never stops the run
        side.records.clear()
        side.unreadable = True
        side.problems.append(failure(path, error))
    return side


def _stored(path: Path) -> dict[str, Any]:
    """The records a YAML cassette's ``evidence:`` block keeps, by test id ({}: none)."""
    if path.suffix.lower() not in (".yaml", ".yml"):
        return {}
    from agentloop_tools.cassettes import _format
    from agentloop_tools.cassettes._load import read_text
    from agentloop_tools.cassettes._provenance import read_evidence

    return read_evidence(_format.deserialize(read_text(path)))


def _compute(path: Path, judge: Judge, side: Side) -> None:
    from agentloop_tools.testing._summary_build import summarize

    reading = judge.read(path)
    side.problems += [read_problem(found) for found in reading.problems]
    policy = judge.policy_for(path)
    exchanges = reading.exchanges or [None] * len(reading.transcripts)
    record = summarize(reading.transcripts, exchanges, policy)
    side.records[WHOLE] = record
    side.verdicts[WHOLE] = record.verdict


def _verdict(path: Path, judge: Judge, side: Side) -> str:
    """The file's verdict under the judge's policy, read from its interactions."""
    from agentloop_tools.testing._summary_build import summarize

    policy = judge.policy_for(path)
    if policy is None:
        return "not-audited"
    reading = judge.read(path)
    side.problems += [read_problem(found) for found in reading.problems]
    exchanges = reading.exchanges or [None] * len(reading.transcripts)
    return summarize(reading.transcripts, exchanges, policy).verdict


# --- the formats ---------------------------------------------------------------------


def _document(
    args: argparse.Namespace, judge: Judge, files: list[dict[str, Any]], problems: list[Any]
) -> dict[str, Any]:
    tests = [test for file in files for test in file["tests"]]
    levels = [test["drift"]["level"] for test in tests]
    return {
        "old": args.old,
        "new": args.new,
        "fail_on": args.fail_on,
        "policy": judge.origin,
        "files": [file for file in files if file["status"] != "compared" or file["tests"]],
        "problems": problems,
        "summary": {
            "files": len(files),
            "files_changed": sum(1 for f in files if f["status"] == "compared" and f["tests"]),
            "files_added": sum(1 for f in files if f["status"] == "added"),
            "files_removed": sum(1 for f in files if f["status"] == "removed"),
            "tests_changed": len(tests),
            "domains": levels.count("domains"),
            "evidence": levels.count("evidence"),
            "usage": levels.count("usage"),
            "failing": sum(1 for test in tests if test["fails"]),
            "problems": len(problems),
        },
    }


def _json(document: dict[str, Any], out: TextIO) -> None:
    import json

    json.dump(document, out, indent=2, ensure_ascii=False)
    out.write("\n")


def _table(document: dict[str, Any], out: TextIO) -> None:
    from agentloop_tools.testing._drift import lines

    for file in document["files"]:
        where = visible(file["path"])
        if file["status"] != "compared":
            side = "NEW" if file["status"] == "added" else "OLD"
            out.write(f"{where}: only in {side} ({file['status']})\n")
        else:
            out.write(f"{where}\n")
        for test in file["tests"]:
            failing = " [fails: --fail-on " + document["fail_on"] + "]" if test["fails"] else ""
            status = "" if test["status"] == "compared" else f" ({test['status']})"
            out.write(f"  {visible(test['test'])}{status}{failing}\n")
            for line in lines(test["drift"], indent="    "):
                out.write(line + "\n")
    out.write(_summary_line(document) + "\n")


def _summary_line(document: dict[str, Any]) -> str:
    s = document["summary"]
    return (
        f"diff: {s['files']} file(s) compared under {visible(document['policy'])}: "
        f"{s['files_changed']} changed, {s['files_added']} added, {s['files_removed']} "
        f"removed; {s['tests_changed']} test(s) with drift ({s['domains']} in reached "
        f"domains or verdict, {s['evidence']} in evidence, {s['usage']} in usage only); "
        f"{s['failing']} failing under --fail-on {document['fail_on']}"
        + (f"; {s['problems']} input problem(s)" if s["problems"] else "")
    )


def _github(document: dict[str, Any], out: TextIO) -> None:
    """One annotation per test with drift (an error when it fails the run), on the NEW
    file (the OLD one for a removed file), then one summary notice."""
    from agentloop_tools.testing._drift import headline

    for file in document["files"]:
        path = file["new"] if file["new"] is not None else file["old"]
        for test in file["tests"]:
            level = "error" if test["fails"] else "notice"
            status = "" if test["status"] == "compared" else f" ({test['status']})"
            message = f"{visible(test['test'])}{status}: {visible(headline(test['drift']))}"
            out.write(
                f"::{level} file={gh_property(visible(str(path)))},title=Evidence drift::"
                f"{gh(message)}\n"
            )
    for found in document["problems"]:
        out.write(
            f"::warning file={gh_property(visible(str(found['path'])))},title=Unreadable "
            f"input::{gh(visible(found['reason']))}\n"
        )
    out.write(f"::notice title=agentloop-tools diff::{gh(_summary_line(document))}\n")
