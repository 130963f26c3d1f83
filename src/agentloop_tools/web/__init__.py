"""Web tools for agentloop agents: hosted search, the evidence it leaves, and a domain policy.

>>> from agentloop_tools.web import DomainPolicy
>>> policy = DomainPolicy.allow(["python.org", "docs.djangoproject.com"])
>>> policy.permits("https://docs.python.org/3/")
True
>>> policy.permits("https://python.org.evil.example/")
False
"""

from agentloop_tools.web._evidence import citations, sources
from agentloop_tools.web._pages import PageViolation, per_page
from agentloop_tools.web._policy import DomainPolicy, Violation
from agentloop_tools.web._search import native_web_search

__all__ = [
    "DomainPolicy",
    "PageViolation",
    "Violation",
    "citations",
    "native_web_search",
    "per_page",
    "sources",
]
