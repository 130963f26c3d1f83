"""Provider traffic stays on the machine: host guards, replay clients, no backoff sleeps."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Literal

import pytest

from agentloop_tools._plugin import messages
from agentloop_tools._plugin.failures import fail

type CassetteState = Literal["recording", "replaying", "none"]


def guard_provider_hosts(request: pytest.FixtureRequest, state: CassetteState) -> None:
    """Stop a request to a real provider before it leaves: without a cassette, or when
    recording with a placeholder key. Scripted providers (in-memory) are not affected.

    The guard sits on the transports every agentloop client uses, so it holds
    whoever built the agent and its HTTP client.
    """
    monkeypatch = request.getfixturevalue("monkeypatch")
    nodeid = request.node.nodeid

    def refusal(http_request: Any) -> str | None:
        from agentloop_tools._providers import provider_for_host, search_api_for_host

        host = http_request.url.host
        provider = provider_for_host(host)
        search_api = search_api_for_host(host)
        if provider is None and search_api is None:
            return None
        if state == "none":
            return messages.no_cassette(nodeid)
        from agentloop_tools._secrets import PLACEHOLDER_PREFIX

        credentials = " ".join(str(value) for value in http_request.headers.values())
        if PLACEHOLDER_PREFIX in credentials:
            if provider is not None:
                variable = next(iter(provider.key_variables), "the provider's key")
            else:
                assert search_api is not None
                variable = search_api.key_variable
            return messages.placeholder_key_sent(nodeid, host, variable)
        return None

    def guarded(original: Callable[..., Any]) -> Callable[..., Any]:
        def handle_request(transport: Any, http_request: Any) -> Any:
            message = refusal(http_request)
            if message is not None:
                fail(message, "missing-cassette" if state == "none" else "secret")
            return original(transport, http_request)

        return handle_request

    import httpx

    monkeypatch.setattr(
        httpx.HTTPTransport, "handle_request", guarded(httpx.HTTPTransport.handle_request)
    )
    try:
        import httpx2
    except ImportError:  # pragma: no cover - the anthropic extra is not installed
        return
    monkeypatch.setattr(
        httpx2.HTTPTransport, "handle_request", guarded(httpx2.HTTPTransport.handle_request)
    )


class ReplayClients:
    """The HTTP clients replayed agents share: made once per run, not once per test.

    Replay never reaches the network (vcrpy answers at the transport), so one client
    per HTTP library, and one TLS context, serve every test; closed at the end.
    """

    def __init__(self) -> None:
        self._clients: dict[str, Any] = {}

    def for_provider(self, provider: str) -> Any:
        from agentloop_tools._providers import PROVIDERS

        library = PROVIDERS[provider].http_library
        client = self._clients.get(library)
        if client is None:
            import ssl

            context = ssl.create_default_context()
            if library == "httpx2":
                import httpx2

                client = httpx2.Client(verify=context, trust_env=False)
            else:
                import httpx

                client = httpx.Client(verify=context, trust_env=False)
            self._clients[library] = client
        return client

    def close(self) -> None:
        for client in self._clients.values():
            client.close()
        self._clients.clear()


class _NoSleep:
    """Stands in for ``time`` in agentloop's retry loop during replay: no backoff waits."""

    @staticmethod
    def sleep(seconds: float) -> None:
        return None


def skip_backoff(request: pytest.FixtureRequest) -> None:
    """Replay answers at once: no wait in agentloop's retries nor in web_search's."""
    import agentloop.retry

    import agentloop_tools.web._search._tool as search

    # Set and undone here, not through the monkeypatch fixture: a fixture set-up per
    # replayed test costs more than the swap itself.
    modules: list[Any] = [agentloop.retry, search]
    saved = [module.time for module in modules]
    for module in modules:
        module.time = _NoSleep

    def restore() -> None:
        for module, value in zip(modules, saved, strict=True):
            module.time = value

    request.addfinalizer(restore)
