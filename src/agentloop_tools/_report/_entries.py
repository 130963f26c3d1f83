"""One evidence record: the shape every report, the command line and the demo write.

A violation is worded once (``Violation.verdict``); a page reached under several URLs
(OpenAI cites ``...?utm_source=openai`` beside the plain URL its search returned) is one
entry that keeps every URL as written; a failed test says why it failed in one of a
few kinds a reviewer can sort by.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from agentloop import Transcript
from agentloop.transcript import Message, TextPart

from agentloop_tools.web import Violation, per_page, sources
from agentloop_tools.web._domains._identity import page_key
from agentloop_tools.web._policy._verdict import verdict
from agentloop_tools.web._transcript._messages import messages_of

type Messages = Transcript | Sequence[Message]

# Why a test failed: the kind its exception carries (the plugin's failures and
# ``EvidenceAssertionError`` name theirs where they are raised), in words.
FAILURE_KINDS: dict[str, str] = {
    "secret": "a credential would have been written to the cassette or sent to the provider",
    "stale-cassette": "the agent's request is not in the cassette: the cassette is stale",
    "missing-cassette": "there is no cassette to replay",
    "unused-interactions": (
        "the test left recorded interactions unused: the cassette no longer describes it"
    ),
    "domain-policy": "the agent reached a domain the policy does not permit",
    "budget": (
        "the test's agents spent more than its budget allows, or a limited counter is unknown"
    ),
    "assertion": "an assertion in the test failed",
    "error": "the test raised an exception",
}
_MESSAGE_LIMIT = 4000


def violation_entry(violation: Violation, **context: Any) -> dict[str, Any]:
    """One violation, JSON-ready, with its verdict worded as everywhere else."""
    return {
        "where": violation.where,
        "url": violation.url,
        "conversation": violation.conversation,
        "message_index": violation.message_index,
        "rule": violation.rule,
        "verdict": violation.verdict,
        "span": list(violation.span) if violation.span else None,
        "refused": violation.refused,
        **context,
    }


def problem_entry(
    path: str | Path, reason: str, *, interaction: int | None = None, line: int | None = None
) -> dict[str, Any]:
    """One input problem, as every format prints it: where (the file, the interaction,
    a log's line) and why. The one place a problem is built."""
    entry: dict[str, Any] = {"path": str(path), "interaction": interaction}
    if line is not None:
        entry["line"] = line
    entry["reason"] = reason
    return entry


def page_entries(violations: Sequence[Violation]) -> list[dict[str, Any]]:
    """The violations one line per page: where it was reached, and every URL as written.

    A page reached as a source, a citation and a link (with and without
    ``?utm_source=openai``) is one entry with ``occurrences`` counting them; ``line``
    is the page in words, as ``str(PageViolation)`` writes it.
    """
    return [
        {
            "url": page.url,
            "urls": list(page.urls),
            "where": list(page.where),
            "conversation": page.occurrences[0].conversation,
            "message_index": page.message_index,
            "rule": page.rule,
            "verdict": verdict(page.rule),
            "occurrences": len(page.occurrences),
            "line": str(page),
        }
        for page in per_page(violations)
    ]


def also_written(entry: dict[str, Any]) -> str:
    """`` (also written URL, ...)`` for the other URLs a page entry was written as, or ""."""
    also = [url for url in entry["urls"] if url != entry["url"]]
    return f" (also written {', '.join(also)})" if also else ""


def source_entries(transcript: Messages, *, since: int = 0) -> list[dict[str, Any]]:
    """The pages consulted, one entry per page, each with every URL as written.

    ``url`` and ``title`` are ``sources(per_page=True)``'s entry for the page; ``urls``
    keeps each distinct URL it was consulted or cited as (``sources()``), in order.
    """
    written: dict[str, list[str]] = {}
    for source in sources(transcript, since=since):
        written.setdefault(page_key(source.url), []).append(source.url)
    return [
        {
            "url": page.url,
            "title": page.title,
            "urls": written.get(page_key(page.url), [page.url]),
        }
        for page in sources(transcript, since=since, per_page=True)
    ]


def questions(transcript: Messages) -> list[dict[str, Any]]:
    """What the user asked: the text of each user message (tool results left out)."""
    asked = []
    for index, message in enumerate(messages_of(transcript)):
        if message.role != "user":
            continue
        text = "\n".join(part.text for part in message.content if isinstance(part, TextPart))
        if text.strip():
            asked.append({"message_index": index, "text": text})
    return asked


def failure_entry(
    outcome: str, text: str, crash: str | None = None, error: BaseException | None = None
) -> dict[str, Any] | None:
    """Why a test failed, or None if it did not.

    Args:
        outcome: pytest's outcome, ``"passed"``, ``"failed"`` or ``"skipped"``.
        text: the failure as pytest shows it (the report's long representation).
        crash: the exception as pytest shows it under the traceback
            (``AssertionError: assert 1 == 2``), if known.
        error: the exception itself, if known: the kind it carries (``failure_kind``),
            else an assertion (``assert``, ``pytest.fail``) or an error by its type.
    """
    if outcome != "failed":
        return None
    kind = _kind(error, crash)
    message = text if len(text) <= _MESSAGE_LIMIT else text[:_MESSAGE_LIMIT] + "\n[...]"
    return {"kind": kind, "reason": FAILURE_KINDS[kind], "crash": crash, "message": message}


def _kind(error: BaseException | None, crash: str | None) -> str:
    carried = getattr(error, "failure_kind", None)
    if isinstance(carried, str) and carried in FAILURE_KINDS:
        return carried
    if error is not None:
        import pytest

        return "assertion" if isinstance(error, AssertionError | pytest.fail.Exception) else "error"
    # No exception to ask (a report another plugin made): pytest's own wording.
    if crash is None or crash.startswith("Failed") or "AssertionError" in crash:
        return "assertion"
    return "error"
