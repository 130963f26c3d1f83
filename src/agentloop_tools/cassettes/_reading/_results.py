"""What a reading of one file holds, and the reasons shared by every reader of files."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agentloop import Transcript

from agentloop_tools._errors import InputError
from agentloop_tools.cassettes._load import load_json, read_text


@dataclass(frozen=True, slots=True)
class Problem:
    """Input that could not be read: the file, the interaction (if any) and why."""

    path: str
    interaction: int | None
    reason: str

    def __str__(self) -> str:
        where = f"{self.path}" + (
            f", interaction {self.interaction}" if self.interaction is not None else ""
        )
        return f"{where}: {self.reason}"

    def entry(self) -> dict[str, Any]:
        """The problem, JSON-ready: as the command line reports it."""
        return {"path": self.path, "interaction": self.interaction, "reason": self.reason}


@dataclass(slots=True)
class CassetteReading:
    """What one file holds: transcripts, what could not be read, what was not evidence.

    Attributes:
        interactions: for each transcript, the cassette interaction each message came
            from: the response for an assistant message, the request for tool calls
            and results read from a request; ``None`` for prompts (and other text read
            from a request).
        exchanges: for each transcript of a cassette, what each of its model calls'
            raw answers said (usage, hosted calls: ``_usage.Exchange``); empty for a
            transcript file, which holds no raw answer.
        skipped: interactions that are not read as model answers (search API calls and
            fetched pages, empty or error responses), counted.
        tool_traffic: of those, the requests client-side tools made (search APIs, pages
            fetched): not model traffic.
    """

    path: str
    transcripts: list[Transcript] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)
    interactions: list[list[int | None]] = field(default_factory=list)
    exchanges: list[list[Any]] = field(default_factory=list)
    skipped: int = 0
    tool_traffic: int = 0

    def problem(self, reason: str, interaction: int | None = None) -> None:
        """Add that this file (or one of its interactions) could not be read, and why."""
        self.problems.append(Problem(self.path, interaction, reason))


UNREAD = object()  # not JSON: the reason is already a problem (JSON's null is None)


def unexpected(error: BaseException) -> str:
    """An error no reader expected, in words (hostile input must never crash a reader)."""
    if isinstance(error, RecursionError):
        return "nested too deeply to read"
    if isinstance(error, MemoryError):
        return "too large to read in memory"
    reason = " ".join(str(error).split())[:200]
    return f"cannot be read ({type(error).__name__}: {reason})"


def text_of(path: str | Path, reading: CassetteReading) -> str | None:
    """The file's text, or None with the reason added to ``reading.problems``."""
    try:
        text = read_text(path)
    except InputError as error:
        reading.problem(str(error))
        return None
    if not text.strip():
        reading.problem("the file is empty")
        return None
    return text


def json_of(text: str, reading: CassetteReading) -> Any:
    """The parsed JSON, or ``UNREAD`` with the reason added to ``reading.problems``."""
    try:
        return load_json(text)
    except InputError as error:
        reading.problem(str(error))
    except ValueError as error:
        reading.problem(f"not JSON: {error}")
    return UNREAD


def is_cassette(data: Any) -> bool:
    """What vcrpy writes (``{"version": 1, "interactions": [...]}``), not a transcript."""
    return isinstance(data, dict) and "interactions" in data and "messages" not in data
