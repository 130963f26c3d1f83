"""Web tools for agentloop agents: hosted and client-side search, their evidence, a domain policy.

>>> from agentloop_tools.web import DomainPolicy
>>> policy = DomainPolicy.allow(["python.org", "docs.djangoproject.com"])
>>> policy.permits("https://docs.python.org/3/")
True
>>> policy.permits("https://python.org.evil.example/")
False
"""

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from agentloop_tools._errors import AgentloopToolsError
    from agentloop_tools.web._fetch._settings import Resolver
    from agentloop_tools.web._fetch._tool import web_fetch
    from agentloop_tools.web._hosted_search import native_web_search
    from agentloop_tools.web._policy._explain import Explanation, Reading
    from agentloop_tools.web._policy._links import Link, links
    from agentloop_tools.web._policy._pages import PageViolation, per_page
    from agentloop_tools.web._policy._policy import DomainPolicy
    from agentloop_tools.web._policy._violation import Mode, Violation, Where
    from agentloop_tools.web._search._backends_api import PageApi
    from agentloop_tools.web._search._engine import OnFatal
    from agentloop_tools.web._search._options import SearchOptions, Undated
    from agentloop_tools.web._search._render import SearchHit
    from agentloop_tools.web._search._tool import PointInTimeWarning, search_tool, web_search
    from agentloop_tools.web._standalone import (
        FetchedPage,
        FetchResult,
        SearchResult,
        fetch,
        search,
    )
    from agentloop_tools.web._tool_errors import FatalToolError, ToolFailure
    from agentloop_tools.web._transcript._evidence import citations, sources
    from agentloop_tools.web._transcript._tool_calls import ToolCall
    from agentloop_tools.web._transcript._trajectory import tool_calls

__all__ = [
    "AgentloopToolsError",
    "DomainPolicy",
    "Explanation",
    "FatalToolError",
    "FetchResult",
    "FetchedPage",
    "Link",
    "Mode",
    "OnFatal",
    "PageApi",
    "PageViolation",
    "PointInTimeWarning",
    "Reading",
    "Resolver",
    "SearchHit",
    "SearchOptions",
    "SearchResult",
    "ToolCall",
    "ToolFailure",
    "Undated",
    "Violation",
    "Where",
    "citations",
    "fetch",
    "links",
    "native_web_search",
    "per_page",
    "search",
    "search_tool",
    "sources",
    "tool_calls",
    "web_fetch",
    "web_search",
]

# Each public name's module, imported on first use (PEP 562): the plugin builds a
# DomainPolicy at collection, and importing every tool here would load agentloop there.
_MODULES = {
    "AgentloopToolsError": "agentloop_tools._errors",
    "DomainPolicy": "agentloop_tools.web._policy._policy",
    "Explanation": "agentloop_tools.web._policy._explain",
    "FatalToolError": "agentloop_tools.web._tool_errors",
    "FetchResult": "agentloop_tools.web._standalone",
    "FetchedPage": "agentloop_tools.web._standalone",
    "Link": "agentloop_tools.web._policy._links",
    "Mode": "agentloop_tools.web._policy._violation",
    "OnFatal": "agentloop_tools.web._search._engine",
    "PageApi": "agentloop_tools.web._search._backends_api",
    "PageViolation": "agentloop_tools.web._policy._pages",
    "PointInTimeWarning": "agentloop_tools.web._search._tool",
    "Reading": "agentloop_tools.web._policy._explain",
    "Resolver": "agentloop_tools.web._fetch._settings",
    "SearchHit": "agentloop_tools.web._search._render",
    "SearchOptions": "agentloop_tools.web._search._options",
    "SearchResult": "agentloop_tools.web._standalone",
    "ToolCall": "agentloop_tools.web._transcript._tool_calls",
    "ToolFailure": "agentloop_tools.web._tool_errors",
    "Undated": "agentloop_tools.web._search._options",
    "Violation": "agentloop_tools.web._policy._violation",
    "Where": "agentloop_tools.web._policy._violation",
    "citations": "agentloop_tools.web._transcript._evidence",
    "fetch": "agentloop_tools.web._standalone",
    "links": "agentloop_tools.web._policy._links",
    "native_web_search": "agentloop_tools.web._hosted_search",
    "per_page": "agentloop_tools.web._policy._pages",
    "search": "agentloop_tools.web._standalone",
    "search_tool": "agentloop_tools.web._search._tool",
    "sources": "agentloop_tools.web._transcript._evidence",
    "tool_calls": "agentloop_tools.web._transcript._trajectory",
    "web_fetch": "agentloop_tools.web._fetch._tool",
    "web_search": "agentloop_tools.web._search._tool",
}


def __getattr__(name: str) -> Any:
    if name == "backends":  # agentloop_tools.web.backends, reached as an attribute
        return importlib.import_module(f"{__name__}.backends")
    module = _MODULES.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    # Not cached here: the module in sys.modules is the truth. A runner that drops
    # modules between runs (pytester's in-process runs) would otherwise keep handing
    # out a tool bound to the dropped copy of the faults and replay state.
    return getattr(importlib.import_module(module), name)


def __dir__() -> list[str]:
    # What a user may reach: the public names and the backends submodule (as 0.1.x
    # listed), not the machinery of the lazy import.
    return sorted({*__all__, "backends", *(name for name in globals() if name.startswith("__"))})
