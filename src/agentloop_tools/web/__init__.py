"""Web tools for agentloop agents: hosted and client-side search, their evidence, a domain policy.

>>> from agentloop_tools.web import DomainPolicy
>>> policy = DomainPolicy.allow(["python.org", "docs.djangoproject.com"])
>>> policy.permits("https://docs.python.org/3/")
True
>>> policy.permits("https://python.org.evil.example/")
False
"""

from agentloop_tools._errors import AgentloopToolsError
from agentloop_tools.web import backends  # noqa: F401  (agentloop_tools.web.backends, as before)
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
