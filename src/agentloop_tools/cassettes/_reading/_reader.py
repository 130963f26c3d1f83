"""Turn recorded provider traffic and saved transcripts into agentloop transcripts.

Each recorded response goes through agentloop's own client (the Anthropic SDK over
an in-memory httpx2 transport, agentloop's OpenAI Responses or Chat Completions
client over httpx: ``_clients``), so what is reported is exactly what an agent would
have seen. Streamed bodies are rebuilt into the response they stand for first. The
tool results client-side tools returned are read from the next request
(``_history``), and the search API calls and pages those tools fetched are skipped as
tool traffic (``_interactions``). Anything that cannot be read is a ``Problem`` naming
the file, the interaction and the reason; the rest is still read.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from agentloop_tools.cassettes import _format
from agentloop_tools.cassettes._load import load_json
from agentloop_tools.cassettes._reading._clients import Clients
from agentloop_tools.cassettes._reading._conversation import Conversation, starts_anew
from agentloop_tools.cassettes._reading._history import History, read_history
from agentloop_tools.cassettes._reading._interactions import Interaction, read_interaction
from agentloop_tools.cassettes._reading._results import (
    UNREAD,
    CassetteReading,
    Problem,
    is_cassette,
    json_of,
    text_of,
    unexpected,
)
from agentloop_tools.cassettes._reading._transcript_files import (
    read_transcript_file,
    transcripts_from,
)
from agentloop_tools.cassettes._reading._usage import Exchange, read_exchange

CASSETTE_SUFFIXES = (".yaml", ".yml")
TRANSCRIPT_SUFFIXES = (".jsonl", ".json")

__all__ = ["CassetteReading", "Problem", "Reader", "read_cassette", "read_transcript_file"]


class Reader:
    """Reads many files with one client per API. Not thread-safe; one per thread."""

    def __init__(self) -> None:
        self._clients = Clients()

    def read(self, path: str | Path) -> CassetteReading:
        """A cassette (``.yaml``/``.yml``, or a ``.json`` one vcrpy's JSON serializer
        wrote) or a transcript file (``.jsonl``/``.json``).

        Never raises: whatever cannot be read is a ``Problem`` in the reading.
        """
        path = Path(path)
        if path.suffix.lower() in CASSETTE_SUFFIXES:
            return self.cassette(path)
        if path.suffix.lower() == ".json":
            return self._guarded(path, self._json_file)
        if path.suffix.lower() in TRANSCRIPT_SUFFIXES:
            return read_transcript_file(path)
        reading = CassetteReading(str(path))
        reading.problem("not a cassette (.yaml) or transcript (.jsonl, .json)")
        return reading

    def cassette(self, path: str | Path) -> CassetteReading:
        """The conversations a cassette recorded, one transcript each.

        A request that carries no answer of the model starts a new conversation (an
        ``agent.run``); one that cannot be read continues the last. Each model call
        adds the tool results its request carried (what client-side tools returned)
        and then its response, so each transcript has the messages the live run had.
        """
        return self._guarded(path, self._cassette)

    def _guarded(
        self, path: str | Path, read: Callable[[str | Path, CassetteReading], None]
    ) -> CassetteReading:
        reading = CassetteReading(str(path))
        try:
            read(path, reading)
        except Exception as error:  # hostile input must never crash a reader
            reading.problem(unexpected(error))
            reading.transcripts.clear()
            reading.interactions.clear()
            reading.exchanges.clear()
        return reading

    def _cassette(self, path: str | Path, reading: CassetteReading) -> None:
        text = text_of(path, reading)
        if text is None:
            return
        try:
            data = _cassette_data(text)
        except Exception as error:
            _not_a_cassette(error, reading)
            return
        self._conversations(data, reading)

    def _json_file(self, path: str | Path, reading: CassetteReading) -> None:
        """A cassette vcrpy's JSON serializer wrote, or transcripts saved as JSON."""
        text = text_of(path, reading)
        data = UNREAD if text is None else json_of(text, reading)
        if data is UNREAD:
            return
        if not is_cassette(data):
            transcripts_from(data, reading)
            return
        try:
            cassette = _format.from_data(data)
        except Exception as error:
            _not_a_cassette(error, reading)
            return
        self._conversations(cassette, reading)

    def _conversations(self, data: dict[str, Any], reading: CassetteReading) -> None:
        if not data["interactions"]:
            # An audit of nothing must not read as a clean pass.
            reading.problem("the cassette holds no interaction: nothing to audit")
            return
        build = Conversation()
        calls: list[Exchange] = []  # the raw answers of the conversation being built
        for index, recorded in enumerate(data["interactions"]):
            try:
                interaction = read_interaction(recorded, self._clients.complete)
            except Exception as error:  # a wrong type anywhere in one interaction
                interaction = Interaction("unreadable", problem=unexpected(error))
            if interaction.kind != "model-call":
                _count(interaction, index, reading)
                continue
            try:
                history = read_history(interaction.api, interaction.request_body)
            except Exception as error:
                history = History(problems=[unexpected(error)], readable=False)
            for problem in history.problems:
                reading.problem(f"the request: {problem}", index)
            if interaction.problem:
                reading.problem(interaction.problem, index)
            elif interaction.response is None:
                reading.skipped += 1
            if build.transcript.messages and starts_anew(history):
                _keep(build, reading, calls)
                build, calls = Conversation(), []
            build.add(index, history, interaction.asked, interaction.response)
            calls.append(read_exchange(interaction.api, recorded.get("response")))
        _keep(build, reading, calls)


def _count(interaction: Interaction, index: int, reading: CassetteReading) -> None:
    """An interaction that is no model call: a problem, or skipped (tool traffic or not)."""
    if interaction.kind == "unreadable":
        reading.problem(interaction.problem, index)
        return
    reading.skipped += 1
    if interaction.kind == "tool-traffic":
        reading.tool_traffic += 1


def _keep(build: Conversation, reading: CassetteReading, calls: list[Exchange]) -> None:
    if build.transcript.messages:
        reading.transcripts.append(build.transcript)
        reading.interactions.append(build.sources)
        reading.exchanges.append(calls)


def read_cassette(path: str | Path) -> CassetteReading:
    """The transcripts a cassette (YAML, or JSON as vcrpy's JSON serializer writes it)
    recorded; see ``Reader`` to read many files."""
    return Reader().cassette(path)


def _cassette_data(text: str) -> dict[str, Any]:
    """A cassette's data: JSON when vcrpy's JSON serializer wrote it, else YAML.

    JSON is parsed as JSON: YAML 1.1 reads its surrogate-pair escapes (an emoji in a
    body) as errors and its exponents (``1e5``) as text.
    """
    if text.lstrip().startswith("{"):
        try:
            data = load_json(text)
        except ValueError:  # flow-style YAML, or not a cassette at all
            pass
        else:
            return _format.from_data(data)
    return _format.deserialize(text)


def _not_a_cassette(error: Exception, reading: CassetteReading) -> None:
    reason = " ".join(str(error).split())[:200]
    reading.problem(f"not a readable cassette: {reason}")
