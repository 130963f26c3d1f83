"""Web tools for agentloop agents: hosted and client-side search, their evidence, a domain policy.

>>> from agentloop_tools.web import DomainPolicy
>>> policy = DomainPolicy.allow(["python.org", "docs.djangoproject.com"])
>>> policy.permits("https://docs.python.org/3/")
True
>>> policy.permits("https://python.org.evil.example/")
False
"""

from agentloop_tools.web._client_search import search_tool, web_search
from agentloop_tools.web._evidence import citations, sources
from agentloop_tools.web._explain import Explanation, Reading
from agentloop_tools.web._fetch import Resolver, web_fetch
from agentloop_tools.web._pages import PageViolation, per_page
from agentloop_tools.web._policy import DomainPolicy, Violation
from agentloop_tools.web._render import SearchHit
from agentloop_tools.web._search import native_web_search
from agentloop_tools.web._tool_errors import FatalToolError, ToolFailure

__all__ = [
    "DomainPolicy",
    "Explanation",
    "FatalToolError",
    "PageViolation",
    "Reading",
    "Resolver",
    "SearchHit",
    "ToolFailure",
    "Violation",
    "citations",
    "native_web_search",
    "per_page",
    "search_tool",
    "sources",
    "web_fetch",
    "web_search",
]
