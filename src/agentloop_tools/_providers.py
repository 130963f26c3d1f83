"""What this package knows about each agentloop provider: one table, read everywhere.

The plugin (defaults, guards, replay clients), the scripted provider, the cassette
reader and the secret scrubber take provider facts from here, so a provider is added
or corrected in one place.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal


@dataclass(frozen=True, slots=True)
class Provider:
    """One value of ``LLM_PROVIDER`` as agentloop reads it.

    Attributes:
        name: the ``LLM_PROVIDER`` value.
        key_variables: variables a live recording needs (empty: none required).
        secret_variables: every credential variable agentloop reads for it.
        model_variable: the variable naming the model.
        hosts: API hosts; suffixes: host suffixes (``.modal.run``).
        http_library: the HTTP library its SDK client is built on.
        extra: our install extra that brings its SDK.
    """

    name: str
    key_variables: tuple[str, ...]
    secret_variables: tuple[str, ...]
    model_variable: str
    hosts: tuple[str, ...]
    host_suffixes: tuple[str, ...]
    http_library: Literal["httpx", "httpx2"]
    extra: str

    def serves(self, host: str) -> bool:
        return host in self.hosts or host.endswith(self.host_suffixes)


PROVIDERS: dict[str, Provider] = {
    provider.name: provider
    for provider in (
        Provider(
            "anthropic",
            ("ANTHROPIC_API_KEY",),
            ("ANTHROPIC_API_KEY",),
            "ANTHROPIC_MODEL",
            ("api.anthropic.com",),
            (),
            "httpx2",
            "anthropic",
        ),
        Provider(
            "openai",
            ("OPENAI_API_KEY",),
            ("OPENAI_API_KEY",),
            "OPENAI_MODEL",
            ("api.openai.com",),
            (),
            "httpx",
            "openai-compat",
        ),
        Provider(
            "openrouter",
            ("OPENROUTER_API_KEY",),
            ("OPENROUTER_API_KEY",),
            "OPENROUTER_MODEL",
            ("openrouter.ai",),
            (),
            "httpx",
            "openai-compat",
        ),
        Provider(
            "modal",
            (),
            ("MODAL_PROXY_TOKEN_ID", "MODAL_PROXY_TOKEN_SECRET"),
            "MODAL_ENDPOINT_MODEL",
            (),
            (".modal.run",),
            "httpx",
            "openai-compat",
        ),
    )
}
# agentloop's choice when LLM_PROVIDER is unset.
DEFAULT_PROVIDER = "openrouter"
PROVIDER_SECRET_VARIABLES = tuple(
    variable for provider in PROVIDERS.values() for variable in provider.secret_variables
)


# Domains of model APIs beyond agentloop's own providers (OpenAI-compatible endpoints
# an agent may point at): the cassette reader never skips their traffic as tool calls.
MODEL_API_DOMAINS = (
    "anthropic.com", "openai.com", "openai.azure.com", "openrouter.ai", "modal.run",
    "x.ai", "mistral.ai", "groq.com", "together.xyz", "deepseek.com", "googleapis.com",
    "fireworks.ai", "cohere.com", "cohere.ai", "perplexity.ai",
)  # fmt: skip


def provider_for_host(host: str) -> Provider | None:
    """The provider whose API lives at ``host``, or None."""
    return next((p for p in PROVIDERS.values() if p.serves(host)), None)


@dataclass(frozen=True, slots=True)
class SearchApi:
    """A hosted search API our client-side ``web_search`` calls with a key."""

    name: str
    host: str
    key_variable: str


SEARCH_APIS: dict[str, SearchApi] = {
    api.name: api
    for api in (
        SearchApi("brave", "api.search.brave.com", "BRAVE_API_KEY"),
        SearchApi("tavily", "api.tavily.com", "TAVILY_API_KEY"),
        SearchApi("exa", "api.exa.ai", "EXA_API_KEY"),
    )
}
# The self-hosted engine web_search can call: no key, its address in a variable.
SEARXNG_NAME = "searxng"
SEARXNG_VARIABLE = "SEARXNG_URL"
# The variable naming the search backend to use (backend_from_env, the plugin's replay).
BACKEND_VARIABLE = "WEB_SEARCH_BACKEND"
SEARCH_KEY_VARIABLES = tuple(api.key_variable for api in SEARCH_APIS.values())


def search_api_for_host(host: str) -> SearchApi | None:
    return next((api for api in SEARCH_APIS.values() if api.host == host), None)
