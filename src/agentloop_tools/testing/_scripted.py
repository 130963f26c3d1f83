"""Record cassettes without a live provider: scripted, provider-shaped responses.

A ``ScriptedProvider`` serves the responses you give it, in order, through an
in-memory transport to the real SDK (Anthropic) or agentloop's HTTP client
(OpenAI and OpenAI-compatible). vcrpy records that traffic like any other, so
unhappy paths (search errors, paused turns, leaked domains) become ordinary
cassettes without a key or a bill.

The builders below write the provider's documented wire shapes, so scripts stay
short: ``anthropic_message([anthropic_search("q", ["https://a.example/"]),
anthropic_text("Answer", cite=["https://a.example/"])])``.
"""

from __future__ import annotations

import itertools
import json
import re
from collections.abc import Iterable, Sequence
from typing import Any

from agentloop_tools._providers import PROVIDERS

type Body = dict[str, Any] | str | tuple[int, dict[str, Any] | str]

_ids = itertools.count(1)


class ScriptedProvider:
    """Serves scripted responses in order; keeps the JSON bodies it was sent.

    Args:
        provider: ``"anthropic"`` (the Messages API, over httpx2) or ``"openai"``
            (the Responses API, and OpenAI-compatible providers, over httpx).
        responses: each a JSON body (dict or string), or ``(status, body)`` for an
            HTTP error.

    Pass ``http_client()`` to ``agentloop_agent(..., http_client=...)`` or to
    ``Agent.from_env``. Run the test with ``--record-mode=once`` to record;
    afterwards the cassette replays and the script is never consulted.
    """

    def __init__(self, provider: str, responses: Iterable[Body]) -> None:
        if provider not in PROVIDERS:
            raise ValueError(
                f"ScriptedProvider(provider={provider!r}): use 'anthropic' or 'openai' "
                "(openrouter and modal speak the OpenAI wire format)."
            )
        self.provider = provider
        self.responses = list(responses)
        self.requests: list[Any] = []
        for index, body in enumerate(self.responses):
            _check_shape(provider, index, body)
        self._ids: dict[str, str] = {}

    def __repr__(self) -> str:
        return f"ScriptedProvider({self.provider!r}, {len(self.responses)} response(s) left)"

    def _answer(self, content: bytes) -> tuple[int, bytes]:
        try:
            self.requests.append(json.loads(content) if content else None)
        except ValueError:
            self.requests.append(content)
        if not self.responses:
            message = (
                f"ScriptedProvider({self.provider!r}) has no response left for request "
                f"{len(self.requests)}: add one to the script."
            )
            return 500, json.dumps(
                {"error": {"type": "script_exhausted", "message": message}}
            ).encode()
        body = self.responses.pop(0)
        status, payload = body if isinstance(body, tuple) else (200, body)
        text = payload if isinstance(payload, str) else json.dumps(payload)
        # Ids numbered per provider, in the order served: a test re-recorded with the
        # same script writes the same cassette, whatever ran before it.
        return status, _SCRIPTED_ID.sub(self._stable_id, text).encode()

    def _stable_id(self, match: re.Match[str]) -> str:
        found = match.group(0)
        if found not in self._ids:
            self._ids[found] = f"{match.group('prefix')}_scripted{len(self._ids) + 1:04d}"
        return self._ids[found]

    def http_client(self) -> Any:
        """An ``httpx2.Client`` (Anthropic) or ``httpx.Client`` answering from the script."""
        headers = {"content-type": "application/json", "request-id": "req_scripted"}
        client: Any
        if self.provider == "anthropic":
            import httpx2

            def anthropic(request: httpx2.Request) -> httpx2.Response:
                status, content = self._answer(request.content)
                return httpx2.Response(status, content=content, headers=headers)

            client = httpx2.Client(transport=httpx2.MockTransport(anthropic))
        else:
            import httpx

            def openai(request: httpx.Request) -> httpx.Response:
                status, content = self._answer(request.content)
                return httpx.Response(status, content=content, headers=headers)

            client = httpx.Client(transport=httpx.MockTransport(openai))
        # Tells agentloop_agent no real key is needed to record from this client.
        client.agentloop_scripted = True
        return client


_SCRIPTED_ID = re.compile(r"\b(?P<prefix>[A-Za-z]+)_scripted\d{4,}\b")


def _check_shape(provider: str, index: int, body: Body) -> None:
    """Refuse a body written for the other provider's API, naming it and the builder."""
    payload = body[1] if isinstance(body, tuple) else body
    if not isinstance(payload, dict):
        return
    anthropic_shaped = payload.get("type") == "message" and "content" in payload
    openai_shaped = payload.get("object") == "response" or "output" in payload
    if provider == "anthropic" and openai_shaped and not anthropic_shaped:
        raise ValueError(
            f"ScriptedProvider('anthropic'): response {index} is an OpenAI Responses body "
            "(it has 'output'); the Anthropic Messages API answers with type='message'. "
            "Build it with anthropic_message(...), or use ScriptedProvider('openai', ...)."
        )
    if provider != "anthropic" and anthropic_shaped and not openai_shaped:
        raise ValueError(
            f"ScriptedProvider({provider!r}): response {index} is an Anthropic Messages "
            "body (type='message'); the OpenAI Responses API answers with object='response' "
            "and 'output'. Build it with openai_response(...), or use "
            "ScriptedProvider('anthropic', ...)."
        )


def scripted_id(prefix: str) -> str:
    """A fresh id of the shape providers use (``msg_scripted0001``), numbered per run."""
    return f"{prefix}_scripted{next(_ids):04d}"


def anthropic_message(
    content: Sequence[dict[str, Any]],
    *,
    stop_reason: str = "end_turn",
    model: str = "claude-sonnet-4-5",
) -> dict[str, Any]:
    """An Anthropic Messages response body. ``stop_reason="pause_turn"`` pauses the turn."""
    blocks: list[dict[str, Any]] = []
    for block in content:
        blocks.extend(block.get("_blocks", [block]))
    searches = sum(1 for block in blocks if block.get("type") == "server_tool_use")
    return {
        "id": scripted_id("msg"),
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": blocks,
        "stop_reason": stop_reason,
        "stop_sequence": None,
        "usage": {
            "input_tokens": 100,
            "output_tokens": 50,
            "server_tool_use": {"web_search_requests": searches},
        },
    }


def anthropic_search(
    query: str, results: Sequence[str | tuple[str, str]] = (), *, error: str | None = None
) -> dict[str, Any]:
    """A ``server_tool_use`` and its ``web_search_tool_result``, or an ``error`` code."""
    call_id = scripted_id("srvtoolu")
    content: Any
    if error is not None:
        content = {"type": "web_search_tool_result_error", "error_code": error}
    else:
        content = [
            {
                "type": "web_search_result",
                "url": url,
                "title": title,
                "encrypted_content": "scripted",
                "page_age": None,
            }
            for url, title in (_titled(result) for result in results)
        ]
    return {
        "_blocks": [
            {
                "type": "server_tool_use",
                "id": call_id,
                "name": "web_search",
                "input": {"query": query},
            },
            {"type": "web_search_tool_result", "tool_use_id": call_id, "content": content},
        ]
    }


def anthropic_text(text: str, *, cite: Sequence[str | tuple[str, str]] = ()) -> dict[str, Any]:
    """A text block, citing the given URLs (``web_search_result_location``)."""
    block: dict[str, Any] = {"type": "text", "text": text}
    if cite:
        block["citations"] = [
            {
                "type": "web_search_result_location",
                "url": url,
                "title": title,
                "encrypted_index": "scripted",
                "cited_text": text[:150],
            }
            for url, title in (_titled(item) for item in cite)
        ]
    return block


def openai_response(
    output: Sequence[dict[str, Any]], *, model: str = "gpt-5.1", status: str = "completed"
) -> dict[str, Any]:
    """An OpenAI Responses body."""
    return {
        "id": scripted_id("resp"),
        "object": "response",
        "status": status,
        "model": model,
        "output": list(output),
        "usage": {"input_tokens": 100, "output_tokens": 50},
    }


def openai_search(
    query: str, sources: Sequence[str] = (), *, status: str = "completed"
) -> dict[str, Any]:
    """A ``web_search_call`` item; ``status="failed"`` for a failed search."""
    action: dict[str, Any] = {"type": "search", "query": query}
    if sources:
        action["sources"] = [{"type": "url", "url": url} for url in sources]
    return {"type": "web_search_call", "id": scripted_id("ws"), "status": status, "action": action}


def openai_message(text: str, *, cite: Sequence[tuple[str, str]] = ()) -> dict[str, Any]:
    """A message item. ``cite`` is ``(url, span)`` pairs: the annotation covers ``span`` in text."""
    annotations = []
    for url, span in cite:
        start = text.index(span)
        annotations.append(
            {
                "type": "url_citation",
                "url": url,
                "title": url,
                "start_index": start,
                "end_index": start + len(span),
            }
        )
    return {
        "type": "message",
        "id": scripted_id("msg"),
        "role": "assistant",
        "status": "completed",
        "content": [{"type": "output_text", "text": text, "annotations": annotations}],
    }


def _titled(item: str | tuple[str, str]) -> tuple[str, str]:
    return item if isinstance(item, tuple) else (item, item)


def chat_completion(
    content: str | None = None,
    *,
    calls: Sequence[tuple[str, str, dict[str, Any]]] = (),
    model: str = "openrouter/free",
) -> dict[str, Any]:
    """An OpenAI-compatible Chat Completions body (OpenRouter, Modal/vLLM): text, or
    tool calls given as ``(call_id, tool_name, arguments)``."""
    message: dict[str, Any] = {"role": "assistant", "content": content}
    if calls:
        message["tool_calls"] = [
            {
                "id": call_id,
                "type": "function",
                "function": {"name": name, "arguments": json.dumps(arguments)},
            }
            for call_id, name, arguments in calls
        ]
    return {
        "id": scripted_id("gen"),
        "object": "chat.completion",
        "model": model,
        "choices": [
            {"index": 0, "message": message, "finish_reason": "tool_calls" if calls else "stop"}
        ],
        "usage": {"prompt_tokens": 100, "completion_tokens": 50, "total_tokens": 150},
    }
