"""Turn recorded provider traffic and saved transcripts into agentloop transcripts.

Each recorded response goes through agentloop's own client (the Anthropic SDK over
an in-memory httpx2 transport, or agentloop's OpenAI Responses client over httpx),
so what is reported is exactly what an agent would have seen. Streamed bodies are
rebuilt into the response they stand for first. Anything that cannot be read is a
``Problem`` naming the file, the interaction and the reason; the rest is still read.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agentloop import Transcript
from agentloop.provider import ModelRequest, StopReason
from agentloop.transcript import Message

from agentloop_tools.cassettes import _format
from agentloop_tools.cassettes._load import InputError, load_json, read_text
from agentloop_tools.cassettes._matching import _last_user_text
from agentloop_tools.cassettes._sse import StreamError, is_stream, rebuild

CASSETTE_SUFFIXES = (".yaml", ".yml")
TRANSCRIPT_SUFFIXES = (".jsonl", ".json")


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


@dataclass(slots=True)
class Reading:
    """What one file holds: transcripts, what could not be read, what was not evidence.

    Attributes:
        interactions: for each transcript, the cassette interaction each message came
            from (``None`` for messages that are not a recorded response).
        skipped: interactions that are not provider model calls (trace uploads, error
            responses), counted but not read.
    """

    path: str
    transcripts: list[Transcript] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)
    interactions: list[list[int | None]] = field(default_factory=list)
    skipped: int = 0


class Reader:
    """Reads many files with one client per API. Not thread-safe; one per thread."""

    def __init__(self) -> None:
        self._clients: dict[str, Any] = {}
        self._body = b""

    def read(self, path: str | Path) -> Reading:
        """A cassette (``.yaml``/``.yml``) or a transcript file (``.jsonl``/``.json``).

        Never raises: whatever cannot be read is a ``Problem`` in the reading.
        """
        path = Path(path)
        if path.suffix.lower() in CASSETTE_SUFFIXES:
            return self.cassette(path)
        if path.suffix.lower() in TRANSCRIPT_SUFFIXES:
            return read_transcript_file(path)
        return Reading(
            str(path),
            problems=[
                Problem(str(path), None, "not a cassette (.yaml) or transcript (.jsonl, .json)")
            ],
        )

    def cassette(self, path: str | Path) -> Reading:
        """The conversation a cassette recorded, one transcript per cassette."""
        reading = Reading(str(path))
        try:
            self._cassette(path, reading)
        except Exception as error:  # hostile input must never crash a reader
            reading.problems.append(Problem(str(path), None, _unexpected(error)))
            reading.transcripts.clear()
            reading.interactions.clear()
        return reading

    def _cassette(self, path: str | Path, reading: Reading) -> Reading:
        text = _text_of(path, reading)
        if text is None:
            return reading
        try:
            data = _format.deserialize(text)
        except Exception as error:
            reason = " ".join(str(error).split())[:200]
            reading.problems.append(Problem(str(path), None, f"not a readable cassette: {reason}"))
            return reading
        transcript = Transcript()
        sources: list[int | None] = []
        paused = False
        for index, interaction in enumerate(data["interactions"]):
            try:
                outcome = self._interaction(interaction)
            except Exception as error:  # a wrong type anywhere in one interaction
                outcome = _unexpected(error)
            if isinstance(outcome, str):
                reading.problems.append(Problem(str(path), index, outcome))
                continue
            if outcome is None:
                reading.skipped += 1
                continue
            asked, response = outcome
            if not response.content:
                continue
            if paused and transcript.messages and transcript.messages[-1].role == "assistant":
                transcript.extend_last_assistant(response.content, response.origin)
            else:
                transcript.add_user_message(asked)
                sources.append(None)
                transcript.add_assistant_message(response.content, response.origin)
                sources.append(index)
            paused = response.stop_reason is StopReason.PAUSED
        if transcript.messages:
            reading.transcripts.append(transcript)
            reading.interactions.append(sources)
        return reading

    def _interaction(self, interaction: dict[str, Any]) -> tuple[str, Any] | str | None:
        """``(asked, response)``, a problem, or None for what is not a model call."""
        if not isinstance(interaction, dict):
            return f"the interaction is of type {type(interaction).__name__}, not a mapping"
        request, response = interaction.get("request"), interaction.get("response")
        if not isinstance(request, dict) or not isinstance(response, dict):
            missing = "request" if not isinstance(request, dict) else "response"
            return f"the interaction has no {missing}: the file may be truncated or hand-edited"
        if "status" not in response or "body" not in response:
            return "the response has no status or body: the file may be truncated"
        status_field, body_field = response.get("status") or {}, response.get("body") or {}
        if not isinstance(status_field, dict) or not isinstance(body_field, dict):
            wrong = "status" if not isinstance(status_field, dict) else "body"
            return f"the response {wrong} is not a mapping: the file may be hand-edited"
        status = status_field.get("code", 200)
        if isinstance(status, bool) or not isinstance(status, int | str):
            return f"the response status code is of type {type(status).__name__}, not a number"
        try:
            status = int(status)
        except ValueError:
            return f"the response status code {str(status)[:20]!r} is not a number"
        body = body_field.get("string", "")
        if isinstance(body, bytes):
            try:
                body = body.decode("utf-8")
            except UnicodeDecodeError:
                return "the response body is binary (not UTF-8 text); decode it before recording"
        if not isinstance(body, str):
            return f"the response body is of type {type(body).__name__}, not text"
        if not body.strip() or not (200 <= status < 300):
            return None
        api = _api(str(request.get("uri", "")), body)
        if api is None:
            return (
                f"unknown provider API at {request.get('uri')!r}: only Anthropic Messages and "
                "OpenAI Responses (and compatible hosts) carry hosted-tool evidence"
            )
        try:
            payload = rebuild(body) if is_stream(body) else json.loads(body)
        except (StreamError, ValueError) as error:
            return f"the response body cannot be read: {error}"
        asked = _asked(request.get("body"))
        try:
            return asked, self._complete(api, json.dumps(payload).encode())
        except Exception as error:
            return f"agentloop cannot read this {api} response: {error}"

    def _complete(self, api: str, body: bytes) -> Any:
        self._body = body
        client = self._clients.get(api)
        if client is None:
            client = self._clients[api] = _client(api, lambda: self._body)
        messages = (Message(role="user", content=(_text("recorded turn"),)),)
        return client.complete(ModelRequest(messages=messages))


def read_cassette(path: str | Path) -> Reading:
    """The transcripts a cassette recorded; see ``Reader`` to read many files."""
    return Reader().cassette(path)


def read_transcript_file(path: str | Path) -> Reading:
    """Transcripts saved by agentloop: JSONL (``to_jsonl``, one message per line) or JSON
    (a list of messages, a ``{"messages": [...]}`` transcript, or a list of those)."""
    reading = Reading(str(path))
    try:
        _read_transcripts(path, reading)
    except Exception as error:  # hostile input must never crash a reader
        reading.problems.append(Problem(str(path), None, _unexpected(error)))
    return reading


def _read_transcripts(path: str | Path, reading: Reading) -> None:
    from pydantic import ValidationError

    text = _text_of(path, reading)
    if text is None:
        return
    if str(path).endswith(".jsonl"):
        messages = []
        for number, line in enumerate(text.splitlines(), start=1):
            if not line.strip():
                continue
            try:
                messages.append(Message.model_validate_json(line))
            except ValidationError as error:
                reason = f"line {number} is not an agentloop message: {_first_error(error)}"
                reading.problems.append(Problem(str(path), None, reason))
        if messages:
            reading.transcripts.append(Transcript(messages=messages))
            reading.interactions.append([None] * len(messages))
        return
    try:
        data = load_json(text)
    except InputError as error:
        reading.problems.append(Problem(str(path), None, str(error)))
        return
    except ValueError as error:
        reading.problems.append(Problem(str(path), None, f"not JSON: {error}"))
        return
    for candidate in _transcript_candidates(data):
        try:
            transcript = Transcript.model_validate(candidate)
        except ValidationError as error:
            reason = f"not an agentloop transcript: {_first_error(error)}"
            reading.problems.append(Problem(str(path), None, reason))
            continue
        reading.transcripts.append(transcript)
        reading.interactions.append([None] * len(transcript.messages))


def _unexpected(error: BaseException) -> str:
    if isinstance(error, RecursionError):
        return "nested too deeply to read"
    if isinstance(error, MemoryError):
        return "too large to read in memory"
    reason = " ".join(str(error).split())[:200]
    return f"cannot be read ({type(error).__name__}: {reason})"


def _text_of(path: str | Path, reading: Reading) -> str | None:
    """The file's text, or None with the reason added to ``reading.problems``."""
    try:
        text = read_text(path)
    except InputError as error:
        reading.problems.append(Problem(str(path), None, str(error)))
        return None
    if not text.strip():
        reading.problems.append(Problem(str(path), None, "the file is empty"))
        return None
    return text


def _transcript_candidates(data: Any) -> Iterator[Any]:
    if isinstance(data, dict):
        yield data
    elif isinstance(data, list) and data and all(isinstance(item, dict) for item in data):
        if "role" in data[0]:
            yield {"messages": data}
        else:
            yield from data
    else:
        yield data


def _first_error(error: Any) -> str:
    details = error.errors()
    if not details:
        return str(error)
    first = details[0]
    location = ".".join(str(part) for part in first.get("loc", ()))
    return f"{location}: {first.get('msg')}" if location else str(first.get("msg"))


def _api(uri: str, body: str) -> str | None:
    path = uri.split("?", 1)[0].rstrip("/")
    if path.endswith("/messages"):
        return "anthropic"
    if path.endswith("/responses"):
        return "openai"
    head = body.lstrip()[:2000]
    if '"message_start"' in head or '"type":"message"' in head.replace(" ", ""):
        return "anthropic"
    if '"object":"response"' in head.replace(" ", "") or "response.created" in head:
        return "openai"
    return None


def _asked(body: Any) -> str:
    if isinstance(body, bytes):
        body = body.decode("utf-8", "replace")
    try:
        value = json.loads(body) if isinstance(body, str) and body.strip() else None
    except ValueError:
        value = None
    return _last_user_text(value) or "(recorded request)"


def _text(text: str) -> Any:
    from agentloop.transcript import TextPart

    return TextPart(text=text)


def _client(api: str, body: Any) -> Any:
    """agentloop's client for ``api``, answering every request with ``body()``."""
    headers = {"content-type": "application/json"}
    if api == "anthropic":
        import httpx2
        from agentloop.providers.anthropic import AnthropicClient

        http2 = httpx2.Client(
            transport=httpx2.MockTransport(
                lambda _: httpx2.Response(200, content=body(), headers=headers)
            )
        )
        return AnthropicClient(
            api_key="agentloop-tools-reader", model="recorded", http_client=http2
        )
    import httpx
    from agentloop.providers.openai import build_openai_client

    http = httpx.Client(
        transport=httpx.MockTransport(
            lambda _: httpx.Response(200, content=body(), headers=headers)
        )
    )
    return build_openai_client(api_key="agentloop-tools-reader", model="recorded", http_client=http)
