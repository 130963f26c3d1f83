"""Transcript logs: a ``.jsonl`` file of one transcript per line, as production systems
append them (``Transcript.model_dump_json()``, one conversation per line).

The one reader of transcript logs: what a log is, the cap on one line, how a log is cut
into lines (a byte range at a time, never whole), and each line read as a transcript or
as the reason it is none, worded once. The cassette reader (``read_transcript_file``)
and the audit's pieces (``_logs/``, for ``agentloop-tools audit`` and
``agentloop_tools.logs``) both read through here, so a line is judged and worded the same
everywhere. Imports nothing of the package.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

# One line (one transcript) is read whole: bounded like a whole cassette.
MAX_LINE_BYTES = 64 * 1024 * 1024
_BLOCK = 1024 * 1024  # what an over-long line is skipped by, a block at a time

NOT_A_TRANSCRIPT = (
    'not a transcript (expected {"messages": [...]}, as Transcript.model_dump_json() writes)'
)
# agentloop's Transcript validates with no message; a log's line with none is no conversation.
NO_MESSAGE = "a transcript with no message"


def is_log(path: str | Path) -> bool:
    """Whether ``path`` is a transcript log: its first non-empty line holds ``messages``."""
    import stat

    if not str(path).lower().endswith(".jsonl"):
        return False
    try:
        if not stat.S_ISREG(os.stat(path).st_mode):
            return False  # a FIFO or device is never opened: it could block (the reader says so)
        with open(path, "rb") as file:
            for _ in range(1000):  # leading blank lines, within reason
                line = file.readline(MAX_LINE_BYTES + 1)
                if not line:
                    return False
                if line.strip():
                    break
            else:
                return False
    except OSError:
        return False
    if len(line) > MAX_LINE_BYTES:
        return True  # too long for a message line too: read as a log, it says so
    try:
        first = json.loads(line)
    except RecursionError:
        return False  # nested past Python's limit: the reader refuses it, with its reason
    except ValueError:
        # A truncated first line of a log still starts like one.
        return line.lstrip().startswith(b'{"messages"')
    return isinstance(first, dict) and "messages" in first and "role" not in first


def first_error(error: Any) -> str:
    """A pydantic ``ValidationError`` in one line: where its first error is, and what."""
    details = error.errors()
    if not details:
        return str(error)
    first = details[0]
    location = ".".join(str(part) for part in first.get("loc", ()))
    return f"{location}: {first.get('msg')}" if location else str(first.get("msg"))


@dataclass(frozen=True, slots=True)
class LogLine:
    """One line of a log, read: its transcript, or why it holds none (both None: blank)."""

    number: int  # 0-based, from the first line read
    transcript: Any = None  # an agentloop Transcript
    problem: str | None = None


def at_line(number: int, reason: str) -> str:
    """A log line's problem as every reader words it (``number`` counts from 1)."""
    return f"line {number}: {reason}"


def read_lines(lines: Iterable[bytes | str | None]) -> Iterator[LogLine]:
    """Each line of a log read (None stands for a line over the cap, never held)."""
    from agentloop import Transcript
    from pydantic import ValidationError

    for number, line in enumerate(lines):
        if line is None:
            reason = f"over the {MAX_LINE_BYTES // 2**20} MB limit for one line, not read"
            yield LogLine(number, problem=reason)
            continue
        if not line or line.isspace():  # blank (strip() would copy every line)
            yield LogLine(number)
            continue
        try:
            transcript = Transcript.model_validate_json(line)
        except ValidationError as error:
            found = " ".join(first_error(error).split())[:200]
            yield LogLine(number, problem=f"{NOT_A_TRANSCRIPT}: {found}")
            continue
        except Exception as error:  # hostile input never stops the reading
            found = " ".join(str(error).split())[:200]
            yield LogLine(number, problem=f"could not be read ({type(error).__name__}: {found})")
            continue
        if not transcript.messages:
            yield LogLine(number, problem=NO_MESSAGE)
            continue
        yield LogLine(number, transcript)


def file_lines(path: str | Path, start: int = 0, end: int | None = None) -> Iterator[bytes | None]:
    """Each line of ``path`` that starts in [start, end) (None for a line over the cap,
    skipped to its end without keeping it): pieces cut anywhere read every line once."""
    with open(path, "rb") as file:
        if start > 0:
            # A piece begins after the line that straddles its start (the previous piece's).
            file.seek(start - 1)
            if file.read(1) != b"\n":
                _skip_line(file)
        while True:
            if end is not None and file.tell() >= end:
                return
            line = file.readline(MAX_LINE_BYTES + 1)
            if not line:
                return
            if len(line) > MAX_LINE_BYTES and not line.endswith(b"\n"):
                _skip_line(file)
                yield None
                continue
            yield line


def _skip_line(file: Any) -> None:
    while True:
        rest = file.readline(_BLOCK)
        if not rest or rest.endswith(b"\n"):
            return
