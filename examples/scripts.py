"""Scripted provider responses the example cassettes were recorded from.

No key and no network exist where this project is built, so its example cassettes
were recorded from these scripts (see conftest.py): realistic Anthropic Messages and
OpenAI Responses bodies, served to the real SDKs while vcrpy recorded the traffic.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from agentloop_tools.testing import (
    anthropic_message,
    anthropic_search,
    anthropic_text,
    brave_results,
    chat_completion,
    openai_message,
    openai_response,
    openai_search,
)

WHATSNEW = ("https://docs.python.org/3/whatsnew/3.13.html", "What's New In Python 3.13")
WHATSNEW_312 = ("https://docs.python.org/3/whatsnew/3.12.html", "What's New In Python 3.12")
REALPYTHON = ("https://realpython.com/python313-repl/", "Python 3.13 Preview: A Modern REPL")

OPENAI_TEXT = (
    "Python 3.13 ships a new interactive interpreter (REPL) with multi-line editing, "
    "colour and paste mode ([docs.python.org](https://docs.python.org/3/whatsnew/3.13.html"
    "?utm_source=openai))."
)

SCRIPTS: dict[str, list[Any]] = {
    "test_the_answer_cites_the_python_docs[anthropic]": [
        anthropic_message(
            [
                anthropic_search("Python 3.13 new interactive interpreter", [WHATSNEW, REALPYTHON]),
                anthropic_text("Python 3.13 ships a new interactive interpreter (REPL). "),
                anthropic_text(
                    "It supports multi-line editing with history and colour by default",
                    cite=[WHATSNEW],
                ),
                anthropic_text(", and `exit` works without parentheses.", cite=[REALPYTHON]),
            ]
        )
    ],
    "test_the_answer_cites_the_python_docs[openai]": [
        openai_response(
            [
                openai_search(
                    "Python 3.13 REPL changes", [WHATSNEW[0], "https://docs.python.org/3/"]
                ),
                openai_message(
                    OPENAI_TEXT,
                    cite=[
                        (
                            f"{WHATSNEW[0]}?utm_source=openai",
                            f"([docs.python.org]({WHATSNEW[0]}?utm_source=openai))",
                        )
                    ],
                ),
            ]
        )
    ],
    "test_a_local_tool_between_searches": [
        anthropic_message(
            [
                anthropic_text("I'll check the release date first."),
                {
                    "type": "tool_use",
                    "id": "toolu_01ReleaseDate",
                    "name": "python_release_date",
                    "input": {"version": "3.13"},
                },
            ],
            stop_reason="tool_use",
        ),
        anthropic_message(
            [
                anthropic_search("Python 3.13 what's new", [WHATSNEW]),
                anthropic_text("Python 3.13 was released on 2024-10-07. "),
                anthropic_text("It added a new interactive interpreter.", cite=[WHATSNEW]),
            ]
        ),
    ],
    "test_a_paused_search_is_resumed_in_one_turn": [
        anthropic_message(
            [anthropic_search("Python 3.12 release notes", [WHATSNEW_312])],
            stop_reason="pause_turn",
        ),
        anthropic_message(
            [
                anthropic_search("Python 3.13 release notes", [WHATSNEW]),
                anthropic_text("3.12 improved error messages", cite=[WHATSNEW_312]),
                anthropic_text("; 3.13 added a new REPL.", cite=[WHATSNEW]),
            ]
        ),
    ],
    "test_a_failed_search_is_reported_with_the_provider_error": [
        anthropic_message(
            [
                anthropic_search("Python 3.13 REPL", error="max_uses_exceeded"),
                anthropic_text("I could not search the web for this just now."),
            ]
        )
    ],
    "test_a_leaked_domain_fails_the_build": [
        anthropic_message(
            [
                anthropic_search(
                    "who created Python",
                    [("https://www.python.org/doc/essays/foreword/", "Foreword")],
                ),
                anthropic_text(
                    "Python was created by Guido van Rossum",
                    cite=[("https://www.python.org/doc/essays/foreword/", "Foreword")],
                ),
                anthropic_text(" ([biography](https://en.wikipedia.org/wiki/Guido_van_Rossum))."),
            ]
        )
    ],
}


CLIENT_SEARCH_TEST = "test_an_agent_without_hosted_search_researches_with_web_search"

SCRIPTS[CLIENT_SEARCH_TEST] = [
    chat_completion(
        calls=[
            (
                "call_search_1",
                "web_search",
                {
                    "query": "Python 3.13 new REPL",
                    "count": 5,
                    "allowed_domains": None,
                    "blocked_domains": None,
                },
            )
        ]
    ),
    chat_completion(
        "Python 3.13 ships a new interactive interpreter with multi-line editing, history "
        "and colour ([What's New In Python 3.13](https://docs.python.org/3/whatsnew/3.13.html))."
    ),
]

# What the Brave Search API answers in that conversation (served by ScriptedSearch).
SEARCH_SCRIPTS: dict[str, list[Any]] = {
    CLIENT_SEARCH_TEST: [
        brave_results(
            [
                (
                    WHATSNEW[0],
                    WHATSNEW[1],
                    "The <strong>new</strong> interactive interpreter supports multi-line "
                    "editing and history &amp; colour by default.",
                ),
                (
                    "https://medium.com/@someone/python-3-13-repl",
                    "Python 3.13&#x27;s REPL, explained",
                    "A blog post about the <strong>new</strong> REPL.",
                ),
                (
                    REALPYTHON[0],
                    REALPYTHON[1],
                    "Paste mode, <strong>exit</strong> without parentheses.",
                ),
            ],
            query="Python 3.13 new REPL",
        )
    ]
}


# The pages test_fetch_agent.py's web_fetch reads, served by ScriptedPages while
# recording from scripts (a shortened copy of the real page, in pages/).
PAGES = {
    "https://docs.python.org/3/tutorial/controlflow.html": (
        Path(__file__).with_name("pages") / "controlflow.html"
    ).read_text(encoding="utf-8"),
}


FAULTED_PAGE_TEST = "test_an_agent_whose_page_answers_403_says_so_and_links_nothing_unread"

SCRIPTS[FAULTED_PAGE_TEST] = [
    chat_completion(
        calls=[
            (
                "call_fetch_1",
                "web_fetch",
                {"url": "https://docs.python.org/3/whatsnew/3.13.html", "start": None},
            )
        ]
    ),
    chat_completion(
        "I could not read the Python 3.13 release notes: the page answered 403 Forbidden, "
        "so I cannot tell you from the source what changed in the REPL. Try again later, "
        "or open the release notes yourself."
    ),
]
