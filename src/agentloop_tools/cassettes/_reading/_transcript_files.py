"""Transcripts agentloop saved: JSONL (one message per line) or JSON, read without crashing."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from agentloop import Transcript
from agentloop.transcript import Message

from agentloop_tools._transcript_log import first_error, is_log
from agentloop_tools.cassettes._load import lines
from agentloop_tools.cassettes._reading._results import (
    UNREAD,
    CassetteReading,
    is_cassette,
    json_of,
    text_of,
    unexpected,
)


def read_transcript_file(path: str | Path) -> CassetteReading:
    """Transcripts saved by agentloop: JSONL (``to_jsonl``, one message per line) or JSON
    (a list of messages, a ``{"messages": [...]}`` transcript, or a list of those).

    A JSON value that holds no message (``{}``, ``{"messages": []}``, any other object)
    is a problem: it is not a transcript with nothing to audit. A transcript log (one
    transcript per line) is read line by line by the reader ``agentloop-tools audit``
    uses, with its wording (``line 2: a transcript with no message``).
    """
    reading = CassetteReading(str(path))
    try:
        _read_transcripts(path, reading)
    except Exception as error:  # hostile input must never crash a reader
        reading.problem(unexpected(error))
    return reading


def _read_transcripts(path: str | Path, reading: CassetteReading) -> None:
    text = text_of(path, reading)
    if text is None:
        return
    if str(path).endswith(".jsonl"):
        if is_log(path):  # a log: one transcript per line (the command line streams it)
            _read_log_lines(text, reading)
        else:
            _read_jsonl(text, reading)
        return
    data = json_of(text, reading)
    if data is UNREAD:
        return
    if is_cassette(data):
        reading.problem(
            "a vcrpy cassette, not a transcript: read it with Reader().read or read_cassette"
        )
        return
    transcripts_from(data, reading)


def _read_jsonl(text: str, reading: CassetteReading) -> None:
    from pydantic import ValidationError

    messages = []
    for number, line in enumerate(lines(text), start=1):
        if not line.strip():
            continue
        try:
            messages.append(Message.model_validate_json(line))
        except ValidationError as error:
            reading.problem(f"line {number} is not an agentloop message: {first_error(error)}")
    if messages:
        reading.transcripts.append(Transcript(messages=messages))
        reading.interactions.append([None] * len(messages))


def _read_log_lines(text: str, reading: CassetteReading) -> None:
    from agentloop_tools._transcript_log import at_line, read_lines

    for line in read_lines(lines(text)):
        if line.problem is not None:
            reading.problem(at_line(line.number + 1, line.problem))
        if line.transcript is not None:
            reading.transcripts.append(line.transcript)
            reading.interactions.append([None] * len(line.transcript.messages))


_TRANSCRIPT_SHAPES = (
    'expected {"messages": [...]} with at least one message (Transcript.model_dump_json()), '
    'a list of messages or of transcripts, or a vcrpy cassette ({"interactions": [...]})'
)


def transcripts_from(data: Any, reading: CassetteReading) -> None:
    """Every transcript in parsed JSON, each one that is none a problem."""
    from pydantic import ValidationError

    for where, candidate in _transcript_candidates(data):
        empty = _holds_no_messages(candidate)
        if empty is not None:
            reading.problem(f"not an agentloop transcript: {where}{empty}; {_TRANSCRIPT_SHAPES}")
            continue
        try:
            transcript = Transcript.model_validate(candidate)
        except ValidationError as error:
            reading.problem(f"not an agentloop transcript: {where}{first_error(error)}")
            continue
        reading.transcripts.append(transcript)
        reading.interactions.append([None] * len(transcript.messages))


def _holds_no_messages(candidate: Any) -> str | None:
    """Why ``candidate`` is no transcript at all (None when it may be one).

    agentloop's ``Transcript`` ignores unknown keys and defaults to no messages, so
    any object would validate as a transcript with nothing to audit.
    """
    if isinstance(candidate, list):
        return "the list is empty" if not candidate else "the list holds more than objects"
    if not isinstance(candidate, dict):
        return f"the file holds {_kind(candidate)}, not an object"
    if "messages" in candidate and "interactions" in candidate:
        return "the object has both 'messages' and 'interactions' (a transcript or a cassette?)"
    if "messages" not in candidate:
        keys = ", ".join(repr(key) for key in list(candidate)[:5])
        return f"the object has no 'messages' (its keys: {keys or 'none'})"
    messages = candidate["messages"]
    if not isinstance(messages, list):
        return f"'messages' is of type {type(messages).__name__}, not a list"
    if not messages:
        return "'messages' is empty: there is nothing to audit"
    return None


def _kind(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true or false"
    return "a number" if isinstance(value, int | float) else "text"


def _transcript_candidates(data: Any) -> Iterator[tuple[str, Any]]:
    """Each value to read as a transcript, with where it is in the file ("" for all)."""
    if isinstance(data, list) and data and all(isinstance(item, dict) for item in data):
        if "role" in data[0]:
            yield "", {"messages": data}
        else:
            yield from ((f"item {number} of the list: ", item) for number, item in enumerate(data))
    else:
        yield "", data
