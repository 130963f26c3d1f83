"""``agentloop-tools evidence``: the sources and citations of each file, turn by turn.

``--format table`` and ``json`` list them; ``--format html`` writes the page the pytest
plugin writes (``--agentloop-report-html``), one record per file, violations marked only
with a policy given or found in the project's configuration.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from agentloop_tools._errors import UsageProblem
from agentloop_tools._visible import visible
from agentloop_tools.cli import _evidence_view, _output
from agentloop_tools.cli._emit import emit
from agentloop_tools.cli._inputs import (
    chosen_policy,
    collect_for,
    failure,
    project_policy,
    read_problem,
    require_something,
)
from agentloop_tools.cli._output import EXIT_CLEAN, EXIT_USAGE, progress, where_of

if TYPE_CHECKING:
    import argparse

    from agentloop_tools.cli._inputs import Found


def evidence(args: argparse.Namespace) -> int:
    from agentloop_tools.cassettes import Reader

    found = collect_for(args)
    require_something(found, args.paths, "evidence")
    reader = Reader()
    if args.format == "html":
        return _evidence_html(args, reader, found)
    if args.allow or args.block or args.policy:
        raise UsageProblem("--allow, --block and --policy mark violations in --format html only")
    files: list[dict[str, Any]] = [
        {"path": problem["path"], "turns": [], "problems": [problem]} for problem in found.problems
    ]
    for path in progress(found.files, "evidence"):
        try:
            files.append(_evidence_of(reader, path))
        except Exception as error:  # one bad file never stops the run
            files.append({"path": str(path), "turns": [], "problems": [failure(path, error)]})
    files.sort(key=lambda file: str(file["path"]))
    if args.format == "json":
        emit(args.output, lambda out: _evidence_view.evidence_json(files, out), exact=True)
    else:
        emit(args.output, lambda out: _evidence_view.evidence_table(files, out))
    _output.report_skipped(found.skipped)
    _output.report_ignored(found.ignored)
    _output.report_left_out(found)
    return EXIT_USAGE if any(file["problems"] for file in files) else EXIT_CLEAN


def _evidence_of(reader: Any, path: Path) -> dict[str, Any]:
    from agentloop_tools._report._records import link_entries
    from agentloop_tools.cli import _provenance_view as _provenance_view

    reading = reader.read(path)
    turns = []
    for transcript, interactions in zip(reading.transcripts, reading.interactions, strict=True):
        messages = transcript.messages
        # The links as the HTML report and assert_cited read them: consulted is decided
        # over the whole conversation, then each turn lists its own answers' links.
        linked = link_entries(transcript, None)
        for start, end in _turns(messages):
            turn = _turn(messages, interactions, start, end)
            turn["links"] = [
                {"message_index": index, **entry}
                for index in range(start, end)
                for entry in linked.get(index, [])
            ]
            turns.append(turn)
    dated = _provenance_view.entry(path)
    return {
        "path": str(path),
        "turns": turns,
        "evidence": _record(reading),
        "stored_evidence": _stored(path, reading),
        "tool_requests": reading.tool_traffic,
        "problems": [read_problem(problem) for problem in reading.problems],
        # A cassette's provenance (None: unknown age); a transcript has none to show.
        "provenance": dated["provenance"] if dated else None,
        "age_days": dated["age_days"] if dated else None,
    }


def _record(reading: Any) -> dict[str, Any]:
    """The evidence record, computed from what the file holds (one model, one rendering:
    the pytest plugin's ``agentloop_evidence.summary()``)."""
    from agentloop_tools.testing._summary_build import summarize

    exchanges = reading.exchanges or [None] * len(reading.transcripts)
    return summarize(reading.transcripts, exchanges).to_dict()


def _stored(path: Path, reading: Any) -> dict[str, Any] | None:
    """The records a cassette keeps (its ``evidence:`` block), by test id; None if none."""
    if not reading.exchanges or path.suffix.lower() not in (".yaml", ".yml"):
        return None
    from agentloop_tools.cassettes import _format
    from agentloop_tools.cassettes._load import read_text
    from agentloop_tools.cassettes._provenance import read_evidence

    try:
        found = read_evidence(_format.deserialize(read_text(path)))
    except Exception:  # the reading already names what cannot be read
        return None
    return found or None


def _turn(
    messages: Sequence[Any], interactions: Sequence[int | None], start: int, end: int
) -> dict[str, Any]:
    from agentloop_tools._report._entries import source_entries
    from agentloop_tools.web import citations

    # The window runs to the turn's end, past the assistant message: the results
    # client-side tools returned come after the call, in the next user message.
    window = messages[:end]
    calls = sorted(
        {
            call
            for index in range(start, end)
            if index < len(interactions)
            and (call := interactions[index]) is not None
            and messages[index].role == "assistant"
        }
    )
    return {
        "message_index": start,
        "last_message_index": end - 1,
        "interaction": calls[0] if calls else None,
        "interactions": calls,
        "asked": _asked_in(messages[start]),
        "sources": source_entries(window, since=start),
        "citations": [
            {"url": c.url, "title": c.title, "cited_text": c.cited_text}
            for c in citations(window, since=start)
        ],
    }


def _evidence_html(args: argparse.Namespace, reader: Any, found: Found) -> int:
    """The evidence page the pytest plugin writes (--agentloop-report-html), per file."""
    from agentloop_tools._report import _records as _report

    given = args.allow or args.block or args.policy
    policy, origin = chosen_policy(args) if given else project_policy()
    records: list[dict[str, Any]] = []
    problems = list(found.problems)
    for path in progress(found.files, "evidence"):
        shown = _shown_path(path)
        try:
            reading = reader.read(path)
        except Exception as error:  # one bad file never stops the run
            problems.append(failure(path, error))
            continue
        read = [read_problem(problem) for problem in reading.problems]
        problems += read
        records.append(
            _report.test_record(
                shown, reading.transcripts, policy, origin,
                {"path": shown, "state": "file"}, outcome="recorded", failure=_unreadable(read),
            )
        )  # fmt: skip
    records.sort(key=lambda record: str(record["test"]))
    page = _report.html_page(records)

    def write(out: TextIO) -> None:
        out.write(page)

    emit(args.output, write, exact=True)
    for problem in problems:
        _output.stderr(
            f"evidence: could not read {where_of(problem)}: {visible(problem['reason'])}"
        )
    _output.report_skipped(found.skipped)
    _output.report_ignored(found.ignored)
    _output.report_left_out(found)
    return EXIT_USAGE if problems else EXIT_CLEAN


def _unreadable(read: list[dict[str, Any]]) -> dict[str, Any] | None:
    """The record's failure when part of the file could not be read (None: all read)."""
    if not read:
        return None
    return {
        "kind": "unreadable",
        "reason": "part of the file could not be read",
        "message": "\n".join(f"{where_of(p)}: {p['reason']}" for p in read),
    }


def _shown_path(path: Path) -> str:
    """A path relative to the working folder when it is inside it."""
    try:
        return path.resolve().relative_to(Path.cwd().resolve()).as_posix()
    except (ValueError, OSError):
        return str(path)


def _turns(messages: Sequence[Any]) -> Iterator[tuple[int, int]]:
    """``(start, end)`` of each turn: from a user prompt to the next prompt.

    A prompt is a user message with something besides tool results; a user message of
    tool results only continues the turn it answers. A turn with no assistant message
    and no tool result (a prompt left unanswered) is not listed.
    """
    from agentloop.transcript import ToolResultPart

    starts = [
        index
        for index, message in enumerate(messages)
        if index == 0
        or (
            message.role == "user"
            and any(not isinstance(part, ToolResultPart) for part in message.content)
        )
    ]
    for start, end in zip(starts, [*starts[1:], len(messages)], strict=True):
        if any(
            message.role == "assistant"
            or any(isinstance(part, ToolResultPart) for part in message.content)
            for message in messages[start:end]
        ):
            yield start, end


def _asked_in(message: Any) -> str:
    """The prompt a turn starts with ("" when it starts with the model's message)."""
    from agentloop.transcript import TextPart

    if message.role != "user":
        return ""
    text = " ".join(p.text for p in message.content if isinstance(p, TextPart))
    return " ".join(text.split()) or "(tool results)"
