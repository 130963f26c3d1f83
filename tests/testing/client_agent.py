"""A real agentloop agent on OpenRouter (scripted) with our web_search and web_fetch.

The model is scripted with ``ScriptedProvider`` and ``chat_completion``, the search API
with ``ScriptedSearch`` and the pages with ``ScriptedPages``: every piece public, the
agent and the tools real, no request leaving the process.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from agentloop import Transcript

from agentloop_tools.testing import (
    ScriptedPages,
    ScriptedSearch,
    brave_results,
    chat_completion,
)
from agentloop_tools.web import DomainPolicy, web_fetch, web_search
from agentloop_tools.web.backends import brave
from tests.agents import converse

HITS = [
    ("https://docs.python.org/3/whatsnew/3.13.html", "What's New In Python 3.13", "New REPL."),
    ("https://realpython.com/python313-repl/", "A Modern REPL", "Paste mode."),
    ("https://medium.com/@someone/repl", "The REPL, explained", "A blog post."),
]
PAGES: dict[str, Any] = {
    "https://docs.python.org/3/tutorial/": "<html><head><title>Tutorial</title></head>"
    "<body><p>The tutorial.</p></body></html>",
    "https://docs.python.org/3/old-tutorial.html": (
        301,
        "",
        {"location": "https://docs.python.org/3/tutorial/"},
    ),
}


def research(
    answer: str,
    *,
    fetch: Sequence[str] = ("https://docs.python.org/3/old-tutorial.html",),
    prompt: str = "What changed in the Python 3.13 REPL?",
    policy: DomainPolicy | None = None,
    pages: Mapping[str, Any] | None = None,
) -> Transcript:
    """One turn: the model searches, fetches ``fetch``, then writes ``answer``."""
    script = [
        chat_completion(calls=[("c1", "web_search", {"query": "python 3.13 repl", "count": 5})]),
        chat_completion(calls=[(f"f{n}", "web_fetch", {"url": url}) for n, url in enumerate(fetch)])
        if fetch
        else None,
        chat_completion(answer),
    ]
    served = ScriptedPages(dict(PAGES if pages is None else pages))
    searching = ScriptedSearch("brave", [brave_results(HITS)])
    tools = [
        web_search(brave("placeholder"), http_client=searching.http_client(), policy=policy),
        web_fetch(**served.tool_options(), policy=policy),
    ]
    steps = [step for step in script if step is not None]
    return converse(tools, steps, prompt=prompt, provider="openrouter")
