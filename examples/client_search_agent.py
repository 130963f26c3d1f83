"""An agent on a provider without hosted search (OpenRouter) that researches with web_search.

In a real project this is your code; test_client_search.py shows how to test it.
The search runs in our process: every hit outside POLICY is dropped before the
model reads the results.
"""

from __future__ import annotations

from collections.abc import Mapping

import httpx
from agentloop.tooling import ToolSpec

from agentloop_tools.web import DomainPolicy, web_search
from agentloop_tools.web.backends import backend_from_env

POLICY = DomainPolicy.allow(["python.org", "realpython.com"])


def client_search_tools(
    env: Mapping[str, str], *, http_client: httpx.Client | None = None
) -> list[ToolSpec]:
    """The agent's tools: web_search on the backend ``env`` configures (BRAVE_API_KEY, ...)."""
    return [web_search(backend_from_env(env), policy=POLICY, http_client=http_client)]
