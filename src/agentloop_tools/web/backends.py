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

from __future__ import annotations

# Names this module exposed before its code moved out; kept so that no import breaks.
import re as re
from collections.abc import Callable as Callable
from collections.abc import Iterator as Iterator
from collections.abc import Mapping as Mapping
from dataclasses import dataclass as dataclass
from dataclasses import field as field
from typing import TYPE_CHECKING as TYPE_CHECKING
from typing import Any as Any
from typing import Literal as Literal
from typing import Protocol as Protocol
from typing import runtime_checkable as runtime_checkable
from urllib.parse import urlencode as urlencode

from agentloop_tools.web._search import _backends_registry
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

# The registry itself, under its old name (tests that register a backend restore it).
_REGISTRY = _backends_registry.REGISTRY
