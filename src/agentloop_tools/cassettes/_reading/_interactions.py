"""What one recorded interaction is: a model call, a tool's traffic, nothing to read, or unreadable.

An interaction with a model API is never skipped as tool traffic; one with a search API
our ``web_search`` backends call always is, and so is a page a tool fetched (a GET off
the provider hosts, unless its body is a model response read back).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

from agentloop_tools._errors import StreamError
from agentloop_tools._errors import UnreadableInteraction as _Unreadable
from agentloop_tools._providers import MODEL_API_DOMAINS, SEARCH_APIS
from agentloop_tools.cassettes._matching import last_user_text
from agentloop_tools.cassettes._reading._sse import is_stream, rebuild

type Kind = Literal["model-call", "tool-traffic", "skipped", "unreadable"]

API_NAMES = {"anthropic": "anthropic", "openai": "openai", "chat": "Chat Completions"}
PROVIDER_HOSTS = MODEL_API_DOMAINS
SEARCH_HOSTS = tuple(api.host for api in SEARCH_APIS.values())


@dataclass(frozen=True, slots=True)
class Interaction:
    """One interaction as the reader takes it.

    Attributes:
        kind: ``"model-call"``; ``"tool-traffic"`` (a search API call or a fetched
            page); ``"skipped"`` (bookkeeping, or an empty or failed answer of no known
            API); ``"unreadable"`` (``problem`` says why).
        problem: why the interaction (``"unreadable"``) or the call's response (a
            ``"model-call"``) cannot be read; "" when it can.
        api, request_body, asked: a model call's API, request body and the text asked.
        response: agentloop's response to a model call; None when the call failed,
            answered nothing (a retried 429, say) or its response is the ``problem``.
    """

    kind: Kind
    problem: str = ""
    api: str = ""
    request_body: Any = None
    asked: str = ""
    response: Any = None


TOOL_TRAFFIC = Interaction("tool-traffic")
SKIPPED = Interaction("skipped")


def read_interaction(interaction: Any, complete: Callable[[str, bytes], Any]) -> Interaction:
    """What ``interaction`` is; ``complete(api, body)`` gives agentloop's response to a body."""
    try:
        return _read(interaction, complete)
    except _Unreadable as why:
        return Interaction("unreadable", problem=str(why))


def _read(interaction: Any, complete: Callable[[str, bytes], Any]) -> Interaction:
    request, status, body_field = _envelope(interaction)
    uri, method = request.get("uri", ""), request.get("method", "")
    if not isinstance(uri, str) or not isinstance(method, str):
        raise _Unreadable("the request's uri or method is not text: the file may be hand-edited")
    host, _ = host_and_path(uri)
    if on(host, SEARCH_HOSTS):
        return TOOL_TRAFFIC
    # A GET off the provider hosts is a page a tool fetched, whatever its path says,
    # unless its body is a model response (a stored response read back).
    fetched = method.upper() in ("GET", "HEAD") and not on(host, PROVIDER_HOSTS)
    api = None if fetched else api_by_path(uri)
    if api is None and _bookkeeping(method, uri):
        return SKIPPED
    body = _body_text(body_field, fetched)
    if body is None or (fetched and not _model_shaped(body)):
        return TOOL_TRAFFIC
    asked = _asked(request.get("body"))
    if not body.strip() or not (200 <= status < 300):
        # A failed call of a known model API still carried its tool results.
        if api is None:
            return SKIPPED
        return Interaction("model-call", api=api, request_body=request.get("body"), asked=asked)
    api = api or _api_by_body(body)
    if api is None:
        if _search_api(method, uri):
            return TOOL_TRAFFIC
        raise _Unreadable(_unknown_api(uri))
    call = Interaction("model-call", api=api, request_body=request.get("body"), asked=asked)
    return _answered(call, body, complete)


def _envelope(interaction: Any) -> tuple[dict[str, Any], int, dict[str, Any]]:
    """The request, the response's status code and its body field, each checked."""
    if not isinstance(interaction, dict):
        raise _Unreadable(f"the interaction is of type {type(interaction).__name__}, not a mapping")
    request, response = interaction.get("request"), interaction.get("response")
    if not isinstance(request, dict) or not isinstance(response, dict):
        missing = "request" if not isinstance(request, dict) else "response"
        raise _Unreadable(
            f"the interaction has no {missing}: the file may be truncated or hand-edited"
        )
    if "status" not in response or "body" not in response:
        raise _Unreadable("the response has no status or body: the file may be truncated")
    status_field, body_field = response.get("status") or {}, response.get("body") or {}
    if not isinstance(status_field, dict) or not isinstance(body_field, dict):
        wrong = "status" if not isinstance(status_field, dict) else "body"
        raise _Unreadable(f"the response {wrong} is not a mapping: the file may be hand-edited")
    status = status_field.get("code", 200)
    if isinstance(status, bool) or not isinstance(status, int | str):
        raise _Unreadable(
            f"the response status code is of type {type(status).__name__}, not a number"
        )
    try:
        return request, int(status), body_field
    except ValueError:
        raise _Unreadable(
            f"the response status code {str(status)[:20]!r} is not a number"
        ) from None


def _body_text(body_field: dict[str, Any], fetched: bool) -> str | None:
    """The response body as text; None for a fetched page that is not text (tool traffic)."""
    body = body_field.get("string", "")
    if isinstance(body, bytes):
        try:
            body = body.decode("utf-8")
        except UnicodeDecodeError:
            if fetched:
                return None
            raise _Unreadable(
                "the response body is binary (not UTF-8 text); decode it before recording"
            ) from None
    if not isinstance(body, str):
        if fetched:
            return None
        raise _Unreadable(f"the response body is of type {type(body).__name__}, not text")
    return body


def _answered(call: Interaction, body: str, complete: Callable[[str, bytes], Any]) -> Interaction:
    """The call with agentloop's response to its body, or why the body cannot be read."""
    from dataclasses import replace

    try:
        payload = rebuild(body) if is_stream(body) else json.loads(body)
    except (StreamError, ValueError) as error:
        return replace(call, problem=f"the response body cannot be read: {error}")
    try:
        answer = complete(call.api, json.dumps(payload).encode())
    except Exception as error:
        return replace(
            call, problem=f"agentloop cannot read this {API_NAMES[call.api]} response: {error}"
        )
    return replace(call, response=answer)


def _unknown_api(uri: str) -> str:
    return (
        f"unknown provider API at {uri!r}: only Anthropic Messages, OpenAI Responses "
        "and Chat Completions (and compatible hosts) are read; search APIs (a "
        ".../search path) and GET requests off the providers' hosts are skipped as "
        "tool traffic. Record the agent through one of those APIs, or keep this "
        "request out of the cassettes you audit"
    )


def host_and_path(uri: str) -> tuple[str, str]:
    """The URI's host (lower case, no trailing dot) and its path (no trailing slash)."""
    from urllib.parse import urlsplit

    try:
        parts = urlsplit(uri.strip())
        host = (parts.hostname or "").rstrip(".").lower()
    except ValueError:
        return "", uri.split("?", 1)[0]
    return host, parts.path.rstrip("/")


def on(host: str, domains: tuple[str, ...]) -> bool:
    """Whether ``host`` is one of ``domains`` or under one."""
    return any(host == domain or host.endswith("." + domain) for domain in domains)


def api_by_path(uri: str) -> str | None:
    """The model API a request's path names, if any."""
    _, path = host_and_path(uri)
    if path.endswith("/chat/completions"):
        return "chat"
    if path.endswith("/messages"):
        return "anthropic"
    if path.endswith("/responses"):
        return "openai"
    return None


def _search_api(method: str, uri: str) -> bool:
    """A POST to a ``.../search`` path off the provider hosts (a custom search backend)."""
    host, path = host_and_path(uri)
    return path.lower().endswith("/search") and not on(host, PROVIDER_HOSTS)


def _bookkeeping(method: str, uri: str) -> bool:
    """A provider call that holds no conversation: counting tokens, listing models."""
    _, path = host_and_path(uri)
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
