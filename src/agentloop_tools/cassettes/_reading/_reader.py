"""Turn recorded provider traffic and saved transcripts into agentloop transcripts.

Each recorded response goes through agentloop's own client (the Anthropic SDK over
an in-memory httpx2 transport, agentloop's OpenAI Responses or Chat Completions
client over httpx), so what is reported is exactly what an agent would have seen.
Streamed bodies are rebuilt into the response they stand for first. The tool results
client-side tools returned are read from the next request (``_history``), and the
search API calls and pages those tools fetched are skipped as tool traffic. Anything
that cannot be read is a ``Problem`` naming the file, the interaction and the reason;
the rest is still read.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agentloop import Transcript
from agentloop.provider import ModelRequest, StopReason
from agentloop.transcript import Message, TextPart, ToolCallPart, ToolResultPart

from agentloop_tools._errors import InputError, StreamError
from agentloop_tools._providers import MODEL_API_DOMAINS, SEARCH_APIS
from agentloop_tools.cassettes import _format
from agentloop_tools.cassettes._load import load_json, read_text
from agentloop_tools.cassettes._matching import last_user_text
from agentloop_tools.cassettes._reading._history import History, Said, read_history
from agentloop_tools.cassettes._reading._sse import is_stream, rebuild

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
            from: the response for an assistant message, the request for tool calls
            and results read from a request; ``None`` for prompts (and other text read
            from a request).
        skipped: interactions that are not read as model answers (search API calls and
            fetched pages, empty or error responses), counted.
        tool_traffic: of those, the requests client-side tools made (search APIs, pages
            fetched): not model traffic.
    """

    path: str
    transcripts: list[Transcript] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)
    interactions: list[list[int | None]] = field(default_factory=list)
    skipped: int = 0
    tool_traffic: int = 0


class Reader:
    """Reads many files with one client per API. Not thread-safe; one per thread."""

    def __init__(self) -> None:
        self._clients: dict[str, Any] = {}
        self._body = b""

    def read(self, path: str | Path) -> Reading:
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
        return Reading(
            str(path),
            problems=[
                Problem(str(path), None, "not a cassette (.yaml) or transcript (.jsonl, .json)")
            ],
        )

    def cassette(self, path: str | Path) -> Reading:
        """The conversations a cassette recorded, one transcript each.

        A request that carries no answer of the model starts a new conversation (an
        ``agent.run``); one that cannot be read continues the last. Each model call
        adds the tool results its request carried (what client-side tools returned)
        and then its response, so each transcript has the messages the live run had.
        """
        return self._guarded(path, self._cassette)

    def _guarded(self, path: str | Path, read: Callable[[str | Path, Reading], None]) -> Reading:
        reading = Reading(str(path))
        try:
            read(path, reading)
        except Exception as error:  # hostile input must never crash a reader
            reading.problems.append(Problem(str(path), None, _unexpected(error)))
            reading.transcripts.clear()
            reading.interactions.clear()
        return reading

    def _cassette(self, path: str | Path, reading: Reading) -> None:
        text = _text_of(path, reading)
        if text is None:
            return
        try:
            data = _cassette_data(text)
        except Exception as error:
            _not_a_cassette(path, error, reading)
            return
        self._conversations(path, data, reading)

    def _json_file(self, path: str | Path, reading: Reading) -> None:
        """A cassette vcrpy's JSON serializer wrote, or transcripts saved as JSON."""
        text = _text_of(path, reading)
        data = _UNREAD if text is None else _json_of(path, text, reading)
        if data is _UNREAD:
            return
        if not _is_cassette(data):
            _transcripts_from(path, data, reading)
            return
        try:
            cassette = _format.from_data(data)
        except Exception as error:
            _not_a_cassette(path, error, reading)
            return
        self._conversations(path, cassette, reading)

    def _conversations(self, path: str | Path, data: dict[str, Any], reading: Reading) -> None:
        if not data["interactions"]:
            # An audit of nothing must not read as a clean pass.
            reading.problems.append(
                Problem(str(path), None, "the cassette holds no interaction: nothing to audit")
            )
            return
        build = _Conversation()
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
            if outcome is _TOOL_TRAFFIC:
                reading.skipped += 1
                reading.tool_traffic += 1
                continue
            assert isinstance(outcome, _Call)
            try:
                history = read_history(outcome.api, outcome.request_body)
            except Exception as error:
                history = History(problems=[_unexpected(error)], readable=False)
            for problem in history.problems:
                reading.problems.append(Problem(str(path), index, f"the request: {problem}"))
            response = None
            if isinstance(outcome.response, str):
                reading.problems.append(Problem(str(path), index, outcome.response))
            elif outcome.response is None:
                reading.skipped += 1
            else:
                response = outcome.response
            if build.transcript.messages and _starts_anew(history):
                _keep(build, reading)
                build = _Conversation()
            build.add(index, history, outcome.asked, response)
        _keep(build, reading)

    def _interaction(self, interaction: dict[str, Any]) -> _Call | object | str | None:
        """A model call, ``_TOOL_TRAFFIC``, a problem, or None for an empty or failed answer."""
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
        uri, method = request.get("uri", ""), request.get("method", "")
        if not isinstance(uri, str) or not isinstance(method, str):
            return "the request's uri or method is not text: the file may be hand-edited"
        host, _ = _host_and_path(uri)
        if _on(host, _SEARCH_HOSTS):
            return _TOOL_TRAFFIC
        # A GET off the provider hosts is a page a tool fetched, whatever its path says,
        # unless its body is a model response (a stored response read back).
        fetched = method.upper() in ("GET", "HEAD") and not _on(host, _PROVIDER_HOSTS)
        api = None if fetched else _api_by_path(uri)
        if api is None and _bookkeeping(method, uri):
            return None
        body = body_field.get("string", "")
        if isinstance(body, bytes):
            try:
                body = body.decode("utf-8")
            except UnicodeDecodeError:
                if fetched:
                    return _TOOL_TRAFFIC
                return "the response body is binary (not UTF-8 text); decode it before recording"
        if not isinstance(body, str):
            if fetched:
                return _TOOL_TRAFFIC
            return f"the response body is of type {type(body).__name__}, not text"
        if fetched and not _model_shaped(body):
            return _TOOL_TRAFFIC
        asked = _asked(request.get("body"))
        if not body.strip() or not (200 <= status < 300):
            # A failed call of a known model API still carried its tool results.
            return _Call(api, request.get("body"), asked, None) if api else None
        api = api or _api_by_body(body)
        if api is None:
            if _search_api(method, uri):
                return _TOOL_TRAFFIC
            return (
                f"unknown provider API at {uri!r}: only Anthropic Messages, OpenAI Responses "
                "and Chat Completions (and compatible hosts) are read; search APIs (a "
                ".../search path) and GET requests off the providers' hosts are skipped as "
                "tool traffic. Record the agent through one of those APIs, or keep this "
                "request out of the cassettes you audit"
            )
        try:
            payload = rebuild(body) if is_stream(body) else json.loads(body)
        except (StreamError, ValueError) as error:
            return _Call(
                api, request.get("body"), asked, f"the response body cannot be read: {error}"
            )
        try:
            answer: Any = self._complete(api, json.dumps(payload).encode())
        except Exception as error:
            answer = f"agentloop cannot read this {_API_NAMES[api]} response: {error}"
        return _Call(api, request.get("body"), asked, answer)

    def _complete(self, api: str, body: bytes) -> Any:
        self._body = body
        client = self._clients.get(api)
        if client is None:
            try:
                client = self._clients[api] = _client(api, lambda: self._body)
            except ModuleNotFoundError as error:
                # Name the extra that brings it, not just the module agentloop misses.
                extra = "anthropic" if api == "anthropic" else "openai-compat"
                raise ModuleNotFoundError(
                    f"{error}: reading {_API_NAMES[api]} recordings needs its SDK; install "
                    f"it with pip install 'based-models-agentloop-tools[{extra}]'",
                    name=error.name,
                ) from None
        messages = (Message(role="user", content=(_text("recorded turn"),)),)
        return client.complete(ModelRequest(messages=messages))


@dataclass(frozen=True, slots=True)
class _Call:
    """One model call: its API, request body, the text asked, and its response.

    ``response`` is agentloop's response, a problem (text), or None when the call
    failed or answered nothing (a retried 429, say).
    """

    api: str
    request_body: Any
    asked: str
    response: Any


_TOOL_TRAFFIC = object()  # a search API call or a fetched page: not model traffic
_API_NAMES = {"anthropic": "anthropic", "openai": "openai", "chat": "Chat Completions"}


class _Conversation:
    """Builds one transcript from model calls, requests first, then responses."""

    def __init__(self) -> None:
        self.transcript = Transcript()
        self.sources: list[int | None] = []
        self.paused = False
        self.calls: set[str] = set()
        self.results: set[str] = set()

    def add(self, index: int, history: History, asked: str, response: Any) -> None:
        messages = self.transcript.messages
        tail: list[Any] = []
        if history.readable:
            earlier, latest = _split(history.messages)
            # What came before the last answer: the whole of it when the conversation
            # starts here (resumed from saved history), else the calls and results no
            # recorded response showed. Evidence all the same.
            fresh = not messages
            for said in earlier:
                parts = [part for part in said.parts if fresh or self._unseen(part)]
                if parts:
                    tools = any(isinstance(p, ToolCallPart | ToolResultPart) for p in parts)
                    self._append(said.role, parts, index if tools else None)
            tail = [part for said in latest for part in said.parts]
        content = response.content if response is not None else ()
        if not tail:
            if not content:
                return
            if self.paused and messages and messages[-1].role == "assistant":
                self.transcript.extend_last_assistant(content, response.origin)
                self._register(content)
                self.paused = response.stop_reason is StopReason.PAUSED
                return
            tail = [TextPart(text=asked)]
        has_results = any(isinstance(part, ToolResultPart) for part in tail)
        repeated = (
            bool(messages) and messages[-1].role == "user" and (messages[-1].content == tuple(tail))
        )  # a retried request carries the same results again
        if (has_results or content) and not repeated:
            self._append("user", tail, index if has_results else None)
        if content:
            self._append("assistant", list(content), index, response.origin)
        self.paused = response is not None and response.stop_reason is StopReason.PAUSED

    def _unseen(self, part: Any) -> bool:
        if isinstance(part, ToolCallPart):
            return part.id not in self.calls
        if isinstance(part, ToolResultPart):
            return part.call_id not in self.results
        return False

    def _append(self, role: str, parts: list[Any], index: int | None, origin: Any = None) -> None:
        self.transcript.messages.append(
            Message(role=role, content=tuple(parts), origin=origin)  # type: ignore[arg-type]
        )
        self.sources.append(index)
        self._register(parts)

    def _register(self, parts: Any) -> None:
        for part in parts:
            if isinstance(part, ToolCallPart):
                self.calls.add(part.id)
            elif isinstance(part, ToolResultPart):
                self.results.add(part.call_id)


def _starts_anew(history: History) -> bool:
    """Whether a request starts a new conversation: it carries only prompts.

    Each ``agent.run`` in a test is its own transcript, so it is its own here too.
    """
    # Tool results without their calls continue a conversation (a stateful Responses
    # request sends only the new items, after previous_response_id).
    return history.readable and not any(
        said.role == "assistant" or any(isinstance(part, ToolResultPart) for part in said.parts)
        for said in history.messages
    )


def _keep(build: _Conversation, reading: Reading) -> None:
    if build.transcript.messages:
        reading.transcripts.append(build.transcript)
        reading.interactions.append(build.sources)


def _split(messages: list[Said]) -> tuple[list[Said], list[Said]]:
    """The messages up to the last assistant message, and the user messages after it."""
    last = max((i for i, said in enumerate(messages) if said.role == "assistant"), default=-1)
    return messages[: last + 1], messages[last + 1 :]


def read_cassette(path: str | Path) -> Reading:
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


def _not_a_cassette(path: str | Path, error: Exception, reading: Reading) -> None:
    reason = " ".join(str(error).split())[:200]
    reading.problems.append(Problem(str(path), None, f"not a readable cassette: {reason}"))


def _is_cassette(data: Any) -> bool:
    """What vcrpy writes (``{"version": 1, "interactions": [...]}``), not a transcript."""
    return isinstance(data, dict) and "interactions" in data and "messages" not in data


def read_transcript_file(path: str | Path) -> Reading:
    """Transcripts saved by agentloop: JSONL (``to_jsonl``, one message per line) or JSON
    (a list of messages, a ``{"messages": [...]}`` transcript, or a list of those).

    A JSON value that holds no message (``{}``, ``{"messages": []}``, any other object)
    is a problem: it is not a transcript with nothing to audit.
    """
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
        from agentloop_tools._transcript_log import is_log

        if is_log(path):  # a log: one transcript per line (the command line streams it)
            _read_log_lines(path, text, reading)
            return
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
    data = _json_of(path, text, reading)
    if data is _UNREAD:
        return
    if _is_cassette(data):
        reason = "a vcrpy cassette, not a transcript: read it with Reader().read or read_cassette"
        reading.problems.append(Problem(str(path), None, reason))
        return
    _transcripts_from(path, data, reading)


def _read_log_lines(path: str | Path, text: str, reading: Reading) -> None:
    from pydantic import ValidationError

    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            transcript = Transcript.model_validate_json(line)
        except ValidationError as error:
            reason = f"line {number} is not an agentloop transcript: {_first_error(error)}"
            reading.problems.append(Problem(str(path), None, reason))
            continue
        reading.transcripts.append(transcript)
        reading.interactions.append([None] * len(transcript.messages))


_UNREAD = object()  # not JSON: the reason is already a problem (JSON's null is None)


def _json_of(path: str | Path, text: str, reading: Reading) -> Any:
    """The parsed JSON, or ``_UNREAD`` with the reason added to ``reading.problems``."""
    try:
        return load_json(text)
    except InputError as error:
        reading.problems.append(Problem(str(path), None, str(error)))
    except ValueError as error:
        reading.problems.append(Problem(str(path), None, f"not JSON: {error}"))
    return _UNREAD


_TRANSCRIPT_SHAPES = (
    'expected {"messages": [...]} with at least one message (Transcript.model_dump_json()), '
    'a list of messages or of transcripts, or a vcrpy cassette ({"interactions": [...]})'
)


def _transcripts_from(path: str | Path, data: Any, reading: Reading) -> None:
    from pydantic import ValidationError

    for where, candidate in _transcript_candidates(data):
        empty = _holds_no_messages(candidate)
        if empty is not None:
            reason = f"not an agentloop transcript: {where}{empty}; {_TRANSCRIPT_SHAPES}"
            reading.problems.append(Problem(str(path), None, reason))
            continue
        try:
            transcript = Transcript.model_validate(candidate)
        except ValidationError as error:
            reason = f"not an agentloop transcript: {where}{_first_error(error)}"
            reading.problems.append(Problem(str(path), None, reason))
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


def _transcript_candidates(data: Any) -> Iterator[tuple[str, Any]]:
    """Each value to read as a transcript, with where it is in the file ("" for all)."""
    if isinstance(data, list) and data and all(isinstance(item, dict) for item in data):
        if "role" in data[0]:
            yield "", {"messages": data}
        else:
            yield from ((f"item {number} of the list: ", item) for number, item in enumerate(data))
    else:
        yield "", data


def _first_error(error: Any) -> str:
    details = error.errors()
    if not details:
        return str(error)
    first = details[0]
    location = ".".join(str(part) for part in first.get("loc", ()))
    return f"{location}: {first.get('msg')}" if location else str(first.get("msg"))


# An interaction with a model API is never skipped as tool traffic; one with a search
# API our web_search backends call always is.
_PROVIDER_HOSTS = MODEL_API_DOMAINS
_SEARCH_HOSTS = tuple(api.host for api in SEARCH_APIS.values())


def _host_and_path(uri: str) -> tuple[str, str]:
    from urllib.parse import urlsplit

    try:
        parts = urlsplit(uri.strip())
        host = (parts.hostname or "").rstrip(".").lower()
    except ValueError:
        return "", uri.split("?", 1)[0]
    return host, parts.path.rstrip("/")


def _on(host: str, domains: tuple[str, ...]) -> bool:
    return any(host == domain or host.endswith("." + domain) for domain in domains)


def _api_by_path(uri: str) -> str | None:
    _, path = _host_and_path(uri)
    if path.endswith("/chat/completions"):
        return "chat"
    if path.endswith("/messages"):
        return "anthropic"
    if path.endswith("/responses"):
        return "openai"
    return None


def _search_api(method: str, uri: str) -> bool:
    """A POST to a ``.../search`` path off the provider hosts (a custom search backend)."""
    host, path = _host_and_path(uri)
    return path.lower().endswith("/search") and not _on(host, _PROVIDER_HOSTS)


def _bookkeeping(method: str, uri: str) -> bool:
    """A provider call that holds no conversation: counting tokens, listing models."""
    _, path = _host_and_path(uri)
    if path.endswith("/count_tokens"):
        return True
    return method.upper() == "GET" and (path.endswith("/models") or "/models/" in path)


def _model_shaped(body: str) -> bool:
    """Whether a fetched JSON body is a whole model response (a stored one read back)."""
    if not body.lstrip().startswith("{"):
        return False
    try:
        value = json.loads(body)
    except ValueError:
        return False
    if not isinstance(value, dict):
        return False
    anthropic = value.get("type") == "message" and value.get("role") == "assistant"
    return anthropic or value.get("object") in ("response", "chat.completion")


def _api_by_body(body: str) -> str | None:
    head = body.lstrip()[:2000].replace(" ", "")
    if '"message_start"' in head or '"type":"message"' in head:
        return "anthropic"
    if '"object":"response"' in head or "response.created" in head:
        return "openai"
    if '"object":"chat.completion' in head:
        return "chat"
    return None


def _asked(body: Any) -> str:
    if isinstance(body, bytes):
        body = body.decode("utf-8", "replace")
    try:
        value = json.loads(body) if isinstance(body, str) and body.strip() else None
    except ValueError:
        value = None
    return last_user_text(value) or "(recorded request)"


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

    http = httpx.Client(
        transport=httpx.MockTransport(
            lambda _: httpx.Response(200, content=body(), headers=headers)
        )
    )
    if api == "chat":
        from agentloop.providers._openai_compat import OpenAICompatClient, Quirks

        return OpenAICompatClient(
            name="openai-compat",
            model="recorded",
            base_url="https://recorded.invalid/v1",
            headers={},
            quirks=Quirks(),
            timeout=httpx.Timeout(5.0),
            api="completions",
            http_client=http,
        )
    from agentloop.providers.openai import build_openai_client

    return build_openai_client(api_key="agentloop-tools-reader", model="recorded", http_client=http)
