"""agentloop's own clients, answering from a recorded body: what an agent would have seen."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from agentloop.provider import ModelRequest
from agentloop.transcript import Message, TextPart

_API_NAMES = {"anthropic": "anthropic", "openai": "openai", "chat": "Chat Completions"}


class Clients:
    """One client per API, each reading the body it is handed. Not thread-safe."""

    def __init__(self) -> None:
        self._clients: dict[str, Any] = {}
        self._body = b""

    def complete(self, api: str, body: bytes) -> Any:
        """agentloop's response for a recorded ``body`` of ``api``; raises if it cannot."""
        self._body = body
        client = self._clients.get(api)
        if client is None:
            try:
                client = self._clients[api] = _client(api, lambda: self._body)
            except ModuleNotFoundError as error:
                # Name the extra that brings it, not just the module agentloop misses.
                extra = "anthropic" if api == "anthropic" else "openai-compat"
                raise ModuleNotFoundError(
                    f"{error}: reading {_API_NAMES.get(api, api)} recordings needs its SDK; "
                    f"install it with pip install 'based-models-agentloop-tools[{extra}]'",
                    name=error.name,
                ) from None
        messages = (Message(role="user", content=(TextPart(text="recorded turn"),)),)
        return client.complete(ModelRequest(messages=messages))


def _client(api: str, body: Callable[[], bytes]) -> Any:
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
