"""Match a live request to a recorded one on what matters, and explain a miss.

Two requests match when method, URL and JSON body agree once volatile fields are
set aside: per-request ids and similar values that differ on every run without
changing what is asked. Everything else counts, so a cassette recorded for a
different prompt, model or tool list is a miss, never a silent pass.
"""

from __future__ import annotations

import difflib
import json
from collections.abc import Iterable, Sequence
from typing import Any

# Top-level request fields that change between runs without changing the question.
DEFAULT_VOLATILE_FIELDS = ("metadata", "user", "safety_identifier", "prompt_cache_key")
_MAX_DIFF_LINES = 40


class BodyMatcher:
    """A vcrpy matcher comparing JSON bodies without their volatile fields.

    Args:
        volatile: field paths to ignore: ``"metadata"`` for a top-level key,
            ``"messages.*.id"`` to reach into lists (``*`` is every element, or every
            value of an object); ``"tools.*"`` ignores each element's content but
            not how many there are.
    """

    __name__ = "agentloop_body"

    def __init__(self, volatile: Iterable[str] = DEFAULT_VOLATILE_FIELDS) -> None:
        self.volatile = tuple(volatile)
        self._paths = [tuple(path.split(".")) for path in self.volatile]
        # Recorded bodies are compared with every live request: parse each once.
        self._seen: dict[bytes | str, Any] = {}

    def __call__(self, first: Any, second: Any) -> None:
        """Raise AssertionError (vcrpy's protocol) when the bodies differ."""
        left, right = self.comparable(first.body), self.comparable(second.body)
        if left != right:
            raise AssertionError("request bodies differ (volatile fields ignored)")

    def comparable(self, body: bytes | str | None) -> Any:
        """The body as compared: parsed JSON without volatile fields, or the raw text."""
        if body is None or body in (b"", ""):
            return None
        cached = self._seen.get(body)
        if cached is not None:
            return cached
        value = self._comparable(body)
        if len(self._seen) >= 256:
            self._seen.pop(next(iter(self._seen)))
        self._seen[body] = value
        return value

    def _comparable(self, body: bytes | str) -> Any:
        text = body.decode("utf-8", "replace") if isinstance(body, bytes) else body
        try:
            value = json.loads(text)
        except ValueError:
            return text
        for path in self._paths:
            value = _without(value, path)
        return value

    def pretty(self, body: bytes | str | None) -> list[str]:
        value = self.comparable(body)
        if value is None:
            return ["(no body)"]
        if isinstance(value, str):
            return value.splitlines() or [""]
        return json.dumps(value, indent=2, sort_keys=True, ensure_ascii=False).splitlines()


# What a volatile value is compared as: its place (and a list's length) still counts.
VOLATILE = "(volatile)"


def _without(value: Any, path: tuple[str, ...]) -> Any:
    if not path:
        return value
    head, rest = path[0], path[1:]
    if head == "*" and isinstance(value, list):
        if not rest:  # "tools.*": every element is volatile, not none of them
            return [VOLATILE] * len(value)
        return [_without(item, rest) for item in value]
    if head == "*" and isinstance(value, dict):
        if not rest:
            return dict.fromkeys(value, VOLATILE)
        return {key: _without(item, rest) for key, item in value.items()}
    if isinstance(value, dict):
        if not rest:
            return {key: item for key, item in value.items() if key != head}
        if head in value:
            return {**value, head: _without(value[head], rest)}
    return value


def closest(request: Any, recorded: Sequence[Any], matcher: BodyMatcher) -> int | None:
    """Index of the recorded request most like ``request``, or None if there are none."""
    if not recorded:
        return None
    target = "\n".join(matcher.pretty(request.body))

    def score(index: int) -> tuple[int, int, float]:
        other = recorded[index]
        same_endpoint = int(other.method == request.method) + int(
            _endpoint(other) == _endpoint(request)
        )
        body = "\n".join(matcher.pretty(other.body))
        similarity = difflib.SequenceMatcher(None, target, body, autojunk=False).quick_ratio()
        return same_endpoint, -abs(len(body) - len(target)), similarity

    return max(range(len(recorded)), key=score)


def _endpoint(request: Any) -> str:
    return f"{request.host}{request.path}"


def describe_difference(request: Any, recorded: Any, matcher: BodyMatcher) -> list[str]:
    """What differs between a live request and a recorded one, as readable lines."""
    lines = []
    if request.method != recorded.method:
        lines.append(f"method: recorded {recorded.method}, now {request.method}")
    if request.uri != recorded.uri:
        lines.append(f"URL: recorded {recorded.uri}")
        lines.append(f"     now      {request.uri}")
    if matcher.comparable(request.body) != matcher.comparable(recorded.body):
        diff = list(
            difflib.unified_diff(
                matcher.pretty(recorded.body),
                matcher.pretty(request.body),
                fromfile="recorded body",
                tofile="this request's body",
                lineterm="",
                n=2,
            )
        )
        if len(diff) > _MAX_DIFF_LINES:
            hidden = len(diff) - _MAX_DIFF_LINES
            diff = [*diff[:_MAX_DIFF_LINES], f"... ({hidden} more diff lines)"]
        lines += diff
    return lines or ["nothing that is compared differs (the recorded response was already used)"]


def summary(request: Any, limit: int = 100) -> str:
    """One line naming a request: method, URL and what it asks, when that can be read."""
    text = f"{request.method} {request.uri}"
    body = request.body
    if isinstance(body, bytes):
        body = body.decode("utf-8", "replace")
    try:
        value = json.loads(body) if body else None
    except ValueError:
        value = None
    asked = last_user_text(value)
    if asked:
        asked = " ".join(asked.split())
        text += f"  (asks: {asked[:limit]}{'...' if len(asked) > limit else ''})"
    return text


def last_user_text(value: Any) -> str:
    """The last user text of an Anthropic ``messages`` or OpenAI ``input`` body."""
    if not isinstance(value, dict):
        return ""
    turns = value.get("messages") or value.get("input") or []
    if not isinstance(turns, list):
        return ""
    for turn in reversed(turns):
        if not isinstance(turn, dict) or turn.get("role") != "user":
            continue
        content = turn.get("content")
        if isinstance(content, str):
            return content
        for block in content if isinstance(content, list) else []:
            if isinstance(block, dict) and isinstance(block.get("text"), str):
                return str(block["text"])
    return ""
