"""Search backends for :func:`agentloop_tools.web.web_search`: Brave, Tavily, Exa, SearXNG, yours.

A backend knows one search API: how to ask (an ``httpx.Request``), how to read the
answer (a list of :class:`SearchHit`), and which failures are final. The engine
does everything else the same way for every backend: validation, retries, spacing
of calls, the domain policy, rendering and errors.

Nothing here reads the environment: :func:`backend_from_env` reads the mapping you
pass it (the process environment, or a dict).

This module is the public face of the backends; they are written in
``web/_search/_backends_api.py`` (the protocols), ``_backends_builtin.py`` (the four
built-in APIs) and ``_backends_registry.py`` (choosing one from a mapping).
"""

from agentloop_tools.web._search._backends_api import ApiPage, SearchBackend
from agentloop_tools.web._search._backends_builtin import (
    BRAVE_EARLIEST as BRAVE_EARLIEST,
)
from agentloop_tools.web._search._backends_builtin import (
    BraveBackend as BraveBackend,
)
from agentloop_tools.web._search._backends_builtin import (
    ExaBackend as ExaBackend,
)
from agentloop_tools.web._search._backends_builtin import (
    SafeSearch as SafeSearch,
)
from agentloop_tools.web._search._backends_builtin import (
    SearxngBackend as SearxngBackend,
)
from agentloop_tools.web._search._backends_builtin import (
    TavilyBackend as TavilyBackend,
)
from agentloop_tools.web._search._backends_builtin import (
    TavilyDepth as TavilyDepth,
)
from agentloop_tools.web._search._backends_builtin import (
    brave,
    exa,
    searxng,
    tavily,
)
from agentloop_tools.web._search._backends_registry import (
    BACKEND_VARIABLE,
    REGISTRY,
    backend_from_env,
    register_backend,
    registered_backends,
)
from agentloop_tools.web._search._backends_registry import (
    BackendFactory as BackendFactory,
)
from agentloop_tools.web._search._options import SearchOptions
from agentloop_tools.web._search._options import allowed_hosts as allowed_hosts
from agentloop_tools.web._search._options import blocked_hosts as blocked_hosts
from agentloop_tools.web._search._render import SearchHit as SearchHit

# The names outside __all__ are importable here as before (``X as X`` re-exports them).
__all__ = [
    "BACKEND_VARIABLE",
    "ApiPage",
    "SearchBackend",
    "SearchOptions",
    "backend_from_env",
    "brave",
    "exa",
    "register_backend",
    "registered_backends",
    "searxng",
    "tavily",
]

# The same dict as the registry's: what tests that undo registrations save and restore.
_REGISTRY = REGISTRY
