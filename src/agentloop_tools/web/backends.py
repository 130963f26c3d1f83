"""Search backends for :func:`agentloop_tools.web.web_search`: Brave, Tavily, Exa, SearXNG, yours.

A backend knows one search API: how to ask (an ``httpx.Request``), how to read the
answer (a list of :class:`SearchHit`), and which failures are final. The engine
does everything else the same way for every backend: validation, retries, spacing
of calls, the domain policy, rendering and errors.

Nothing here reads the environment: :func:`backend_from_env` reads the mapping you
pass it (the process environment, or a dict).

This module is the public face of the backends; they are written in
``web/_search/_backends_api.py`` (the base class and protocols), ``_backends_builtin.py`` (the four
built-in APIs) and ``_backends_registry.py`` (choosing one from a mapping).
"""

from agentloop_tools._providers import BACKEND_VARIABLE
from agentloop_tools.web._search._backends_api import (
    ApiPage,
    PageApi,
    SearchBackend,
    SearchBackendLike,
)
from agentloop_tools.web._search._backends_builtin import (
    BRAVE_EARLIEST,
    BraveBackend,
    ExaBackend,
    SafeSearch,
    SearxngBackend,
    TavilyBackend,
    TavilyDepth,
    brave,
    exa,
    searxng,
    tavily,
)
from agentloop_tools.web._search._backends_registry import (
    BackendFactory,
    backend_from_env,
    register_backend,
    registered_backends,
)
from agentloop_tools.web._search._options import SearchOptions, allowed_hosts, blocked_hosts
from agentloop_tools.web._search._render import SearchHit

__all__ = [
    "BACKEND_VARIABLE",
    "BRAVE_EARLIEST",
    "ApiPage",
    "BackendFactory",
    "BraveBackend",
    "ExaBackend",
    "PageApi",
    "SafeSearch",
    "SearchBackend",
    "SearchBackendLike",
    "SearchHit",
    "SearchOptions",
    "SearxngBackend",
    "TavilyBackend",
    "TavilyDepth",
    "allowed_hosts",
    "backend_from_env",
    "blocked_hosts",
    "brave",
    "exa",
    "register_backend",
    "registered_backends",
    "searxng",
    "tavily",
]
