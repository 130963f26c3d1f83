"""What one provider response says it cost and ran, read from its raw body.

agentloop's own ``Usage`` turns a missing ``usage`` into 0 and has no
``server_tool_use``, so the evidence record reads the provider's body itself: token
usage as reported, the hosted searches and fetches it billed (Anthropic
``usage.server_tool_use``) and the ones its blocks show (Anthropic ``server_tool_use``
blocks, OpenAI ``web_search_call`` items). A counter the body does not report is
``None`` (unknown), never 0. Bounded: a body is read once, a hostile one is a
``readable=False`` reading, never an exception.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, NamedTuple

from agentloop_tools.cassettes._reading._interactions import api_by_path
from agentloop_tools.cassettes._reading._sse import is_stream, rebuild

_MAX_BODY = 32 * 1024 * 1024
_MAX_TEXT = 2000  # a query or URL kept in the record, at most this long
_MAX_ITEMS = 100_000


@dataclass(frozen=True, slots=True)
class HostedUse:
    """One hosted call a response's blocks show: its kind and what it asked.

    ``kind``: ``search``, ``fetch`` (Anthropic web_fetch), or an OpenAI action
    (``open_page``, ``find_in_page``); ``target``: the query or the URL.
    """

    kind: str
    target: str


@dataclass(frozen=True, slots=True)
class Exchange:
    """One model-API response as the provider sent it.

    Attributes:
        api: ``anthropic``, ``openai`` (Responses) or ``chat`` (Chat Completions).
        ok: a 2xx answer (a failed one is not billed: it adds 0 to every counter).
        readable: its body could be read; an unreadable 2xx body makes every counter
            of its conversation unknown.
        searches, fetches: hosted calls billed (usage), else counted from the blocks;
            None when neither reports them.
        hosted: the hosted calls its blocks show, in order.
    """

    api: str
    ok: bool
    readable: bool = True
    input_tokens: int | None = None
    output_tokens: int | None = None
    cache_read_tokens: int | None = None
    cache_write_tokens: int | None = None
    searches: int | None = None
    fetches: int | None = None
    hosted: tuple[HostedUse, ...] = ()


def model_api(uri: str, method: str = "POST") -> str | None:
    """The model API a recorded request called, or None (tool traffic, bookkeeping)."""
    return api_by_path(uri) if method.upper() == "POST" else None


def read_exchange(api: str, response: object) -> Exchange:
    """What a recorded response (vcrpy's dict form) says; never raises."""
    try:
        status, body = _envelope(response)
    except (TypeError, ValueError):
        return Exchange(api, ok=True, readable=False)
    if not 200 <= status < 300:
        return Exchange(api, ok=False)
    try:
        payload = rebuild(body) if is_stream(body) else json.loads(body)
    except Exception:  # a hostile or cut body: unknown, never a crash
        return Exchange(api, ok=True, readable=False)
    if not isinstance(payload, dict):
        return Exchange(api, ok=True, readable=False)
    reader = {"anthropic": _anthropic, "openai": _responses, "chat": _chat}[api]
    try:
        return reader(payload)
    except (TypeError, ValueError, AttributeError):
        return Exchange(api, ok=True, readable=False)


def _envelope(response: object) -> tuple[int, str]:
    if not isinstance(response, Mapping):
        raise TypeError("not a response")
    status_field = response.get("status")
    code = status_field.get("code", 200) if isinstance(status_field, Mapping) else 200
    status = int(code) if isinstance(code, int | str) and not isinstance(code, bool) else 0
    body_field = response.get("body")
    body = body_field.get("string", "") if isinstance(body_field, Mapping) else ""
    if isinstance(body, bytes | bytearray):
        body = bytes(body[:_MAX_BODY]).decode("utf-8", "replace")
    if not isinstance(body, str):
        raise TypeError("the body is not text")
    return status, body[:_MAX_BODY]


def _mapping(value: object) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _count(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None


def _text(value: object) -> str:
    return value[:_MAX_TEXT] if isinstance(value, str) else ""


class _TokenFields(NamedTuple):
    """Where an API's ``usage`` object reports tokens (``cached_in``: the object inside
    ``usage`` that holds the cache-read count; None, ``usage`` itself)."""

    input: str
    output: str
    cache_read: str
    cached_in: str | None = None
    cache_write: str | None = None


_TOKEN_FIELDS = {
    "anthropic": _TokenFields(
        "input_tokens",
        "output_tokens",
        "cache_read_input_tokens",
        cache_write="cache_creation_input_tokens",
    ),
    "openai": _TokenFields(
        "input_tokens", "output_tokens", "cached_tokens", "input_tokens_details"
    ),
    "chat": _TokenFields(
        "prompt_tokens", "completion_tokens", "cached_tokens", "prompt_tokens_details"
    ),
}


def _exchange(
    api: str,
    payload: Mapping[str, Any],
    hosted: list[HostedUse] | None = None,
    billed: tuple[int | None, int | None] = (None, None),
) -> Exchange:
    """One readable 2xx exchange: its tokens as ``usage`` reports them, and its hosted
    searches and fetches as billed (``billed``), else as its blocks show them. With no
    ``hosted`` list (an API that shows none), those stay unknown."""
    usage = _mapping(payload.get("usage"))
    fields = _TOKEN_FIELDS[api]
    cached = usage if fields.cached_in is None else _mapping(usage.get(fields.cached_in))
    searches = fetches = None
    if hosted is not None:
        searches = sum(1 for use in hosted if use.kind == "search")
        fetches = len(hosted) - searches
    return Exchange(
        api,
        ok=True,
        input_tokens=_count(usage.get(fields.input)),
        output_tokens=_count(usage.get(fields.output)),
        cache_read_tokens=_count(cached.get(fields.cache_read)),
        cache_write_tokens=_count(usage.get(fields.cache_write)) if fields.cache_write else None,
        searches=searches if billed[0] is None else billed[0],
        fetches=fetches if billed[1] is None else billed[1],
        hosted=tuple(hosted or ()),
    )


def _anthropic(payload: dict[str, Any]) -> Exchange:
    hosted = []
    for block in payload.get("content") or ():
        if not isinstance(block, Mapping) or block.get("type") != "server_tool_use":
            continue
        asked = _mapping(block.get("input"))
        if block.get("name") == "web_search":
            hosted.append(HostedUse("search", _text(asked.get("query"))))
        elif block.get("name") == "web_fetch":
            hosted.append(HostedUse("fetch", _text(asked.get("url"))))
    server = _mapping(_mapping(payload.get("usage")).get("server_tool_use"))
    billed = (
        _count(server.get("web_search_requests")),
        _count(server.get("web_fetch_requests")),
    )
    return _exchange("anthropic", payload, hosted, billed)


def _responses(payload: dict[str, Any]) -> Exchange:
    hosted = []
    for item in payload.get("output") or ():
        if not isinstance(item, Mapping) or item.get("type") != "web_search_call":
            continue
        action = _mapping(item.get("action"))
        kind = action.get("type") if isinstance(action.get("type"), str) else "search"
        if kind == "search":
            query = action.get("query")
            if not isinstance(query, str):
                queries = action.get("queries")
                query = queries[0] if isinstance(queries, list) and queries else ""
            hosted.append(HostedUse("search", _text(query)))
        else:
            hosted.append(HostedUse(_text(kind) or "unknown", _text(action.get("url"))))
    return _exchange("openai", payload, hosted)


def _chat(payload: dict[str, Any]) -> Exchange:
    # Chat Completions shows no hosted call: searches and fetches stay unknown.
    return _exchange("chat", payload)


def blocks_of(api: str, raw: object) -> tuple[HostedUse, ...]:
    """The hosted calls in an assistant message's wire blocks (agentloop's
    ``Origin.raw``; ``api`` its ``Origin.api``: ``messages`` or ``responses``)."""
    items = list(raw)[:_MAX_ITEMS] if isinstance(raw, tuple | list) else []
    try:
        if api == "messages":
            return _anthropic({"content": items}).hosted
        if api == "responses":
            return _responses({"output": items}).hosted
    except (TypeError, ValueError, AttributeError):
        return ()
    return ()
