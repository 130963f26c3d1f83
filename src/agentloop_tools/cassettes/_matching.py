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


_MAX_DIFFERENCES = 200


def tool_result_calls(request: Any, recorded: Any, matcher: BodyMatcher) -> list[str] | None:
    """The tool calls whose results alone make two request bodies differ, or None.

    A request that differs from its recording only inside tool results (an Anthropic
    ``tool_result`` block, an OpenAI ``tool`` message or ``function_call_output``) was
    built by the same agent from the same history: what changed is what a tool computed
    now, not the prompt, model or tools. Each call is named ``name (call id)``.
    """
    if request.method != recorded.method or request.uri != recorded.uri:
        return None
    live, old = matcher.comparable(request.body), matcher.comparable(recorded.body)
    if not isinstance(live, dict) or not isinstance(old, dict) or live == old:
        return None
    differences: list[tuple[Any, ...]] = []
    _differences(old, live, (), differences)
    if not differences or len(differences) > _MAX_DIFFERENCES:
        return None
    calls: list[str] = []
    for path in differences:
        call = _tool_result_at(old, path)
        if call is None:
            return None
        if call not in calls:
            calls.append(call)
    return [_named(old, call) for call in calls]


def _differences(old: Any, new: Any, path: tuple[Any, ...], out: list[tuple[Any, ...]]) -> None:
    if len(out) > _MAX_DIFFERENCES:
        return
    if isinstance(old, dict) and isinstance(new, dict):
        for key in dict.fromkeys([*old, *new]):
            if key not in old or key not in new:
                out.append((*path, key))
            elif old[key] != new[key]:
                _differences(old[key], new[key], (*path, key), out)
    elif isinstance(old, list) and isinstance(new, list) and len(old) == len(new):
        for index, (left, right) in enumerate(zip(old, new, strict=True)):
            if left != right:
                _differences(left, right, (*path, index), out)
    elif old != new:
        out.append(path)


def _tool_result_at(body: dict[str, Any], path: tuple[Any, ...]) -> str | None:
    """The call id of the tool result ``path`` lies inside (its content), or None."""
    if len(path) >= 5 and path[0] == "messages" and path[2] == "content":
        block = _get(body, path[:4])
        if (
            isinstance(block, dict)
            and block.get("type") == "tool_result"
            and path[4] not in ("type", "tool_use_id")
        ):
            return str(block.get("tool_use_id"))
    if len(path) >= 3 and path[0] == "messages" and path[2] == "content":
        message = _get(body, path[:2])
        if isinstance(message, dict) and message.get("role") == "tool":
            return str(message.get("tool_call_id"))
    if len(path) >= 3 and path[0] == "input" and path[2] == "output":
        item = _get(body, path[:2])
        if isinstance(item, dict) and item.get("type") == "function_call_output":
            return str(item.get("call_id"))
    return None


def _get(value: Any, path: tuple[Any, ...]) -> Any:
    for step in path:
        known = isinstance(value, dict) and step in value
        if not known and not (isinstance(value, list) and isinstance(step, int)):
            return None
        try:
            value = value[step]
        except IndexError:
            return None
    return value


def _named(body: dict[str, Any], call: str) -> str:
    """``web_fetch (call toolu_01...)``: the tool the call was made to, as the body says."""
    name = None
    turns = body.get("messages") or body.get("input")
    for message in turns if isinstance(turns, list) else []:
        if not isinstance(message, dict):
            continue
        if message.get("type") == "function_call" and message.get("call_id") == call:
            name = message.get("name")
        content = message.get("content")
        for block in content if isinstance(content, list) else []:
            if (
                isinstance(block, dict)
                and block.get("type") == "tool_use"
                and block.get("id") == call
            ):
                name = block.get("name")
        tool_calls = message.get("tool_calls")
        for tool_call in tool_calls if isinstance(tool_calls, list) else []:
            if isinstance(tool_call, dict) and tool_call.get("id") == call:
                function = tool_call.get("function")
                name = function.get("name") if isinstance(function, dict) else None
    return f"{name if isinstance(name, str) else 'a tool'} (call {call})"
