"""What changed between two evidence records of one test: drift, when a recording changes.

One comparison, two readers: ``agentloop-tools diff`` (two cassettes or folders) and
the pytest plugin (a test that re-records a cassette which already held its record).
Both read the records through ``EvidenceSummary.from_json``, so a hostile stored
record is bounded the same way, and render the same lines.

The vocabularies (the issue's, kept in one place): *domains* = a reached domain
appeared or disappeared, or the verdict changed; *evidence* = that, or a source,
citation, link, hosted call or tool call added or removed; *any* = that, or a usage
counter changed; *never* = shown, never failing.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable, Hashable, Iterable, Mapping
from typing import TYPE_CHECKING, Any, Literal

from agentloop_tools.testing._summary import COUNTERS

if TYPE_CHECKING:
    from agentloop_tools.testing._summary import EvidenceSummary

type Level = Literal["domains", "evidence", "usage"]
FAIL_ON = ("domains", "evidence", "any", "never")
# The plugin's --agentloop-drift values, and the --fail-on value each means.
PYTEST_DRIFT = {"report": "never", "fail-on-domains": "domains", "fail-on-evidence": "evidence"}
# The kinds of change, in the order shown; which level each belongs to.
LISTS = ("domains", "sources", "citations", "links", "hosted", "tool_calls")
_LEVEL_OF: dict[str, Level] = {
    "domains": "domains",
    "verdict": "domains",
    "sources": "evidence",
    "citations": "evidence",
    "links": "evidence",
    "hosted": "evidence",
    "tool_calls": "evidence",
    "usage": "usage",
}
_RANK = {"domains": 3, "evidence": 2, "usage": 1}
_SHOWN = 20  # items listed per kind in text; JSON keeps them all


def compare(
    old: EvidenceSummary | None,
    new: EvidenceSummary | None,
    *,
    old_verdict: str | None = None,
    new_verdict: str | None = None,
) -> dict[str, Any]:
    """The drift from ``old`` to ``new`` (None: the test is not on that side), as JSON data.

    ``old_verdict``/``new_verdict`` replace the records' own verdicts when the caller
    judged them under another policy. Lists are compared as sets (domains, sources,
    citations, links) or as multisets (hosted calls, tool calls: a call made twice is
    two calls); ``changed`` names each kind that changed, ``level`` the strongest.
    """
    drift: dict[str, Any] = {}
    for kind in LISTS:
        multiset = kind in ("hosted", "tool_calls")
        drift[kind] = _added_removed(_items(old, kind), _items(new, kind), multiset=multiset)
    if old is not None and new is not None:
        drift["tool_calls"]["reordered"] = bool(
            not drift["tool_calls"]["added"]
            and not drift["tool_calls"]["removed"]
            and _items(old, "tool_calls") != _items(new, "tool_calls")
        )
    else:
        drift["tool_calls"]["reordered"] = False
    drift["usage"] = _usage(old, new)
    before = old_verdict or (old.verdict if old is not None else None)
    after = new_verdict or (new.verdict if new is not None else None)
    # A verdict changes only between two records: a test on one side only is added or
    # removed, and its domains say what it reached.
    both = old is not None and new is not None
    drift["verdict"] = {"old": before, "new": after} if both and before != after else None
    changed = [
        kind
        for kind in (*LISTS, "verdict", "usage")
        if (kind == "verdict" and drift["verdict"] is not None)
        or (kind == "usage" and drift["usage"])
        or (kind in LISTS and (drift[kind]["added"] or drift[kind]["removed"]))
        or (kind == "tool_calls" and drift["tool_calls"]["reordered"])
    ]
    drift["changed"] = changed
    drift["level"] = level(changed)
    return drift


def level(changed: Iterable[str]) -> Level | None:
    """The strongest level among the kinds that changed (None: nothing changed)."""
    levels: list[Level] = [_LEVEL_OF[kind] for kind in changed if kind in _LEVEL_OF]
    best: Level | None = None
    for found in levels:
        if best is None or _RANK[found] > _RANK[best]:
            best = found
    return best


def fails(found: Level | str | None, fail_on: str) -> bool:
    """Whether drift of ``found`` level fails under ``fail_on`` (one of ``FAIL_ON``)."""
    if fail_on not in FAIL_ON:
        raise ValueError(f"fail-on {fail_on!r}: use one of {', '.join(FAIL_ON)}")
    if found is None or fail_on == "never":
        return False
    if fail_on == "any":
        return True
    return _RANK[found] >= _RANK[fail_on]


def lines(drift: Mapping[str, Any], indent: str = "  ") -> list[str]:
    """The drift as text, one change a line; recorded text made visible, long lists cut."""
    from agentloop_tools._visible import visible

    out: list[str] = []
    verdict = drift.get("verdict")
    if verdict:
        out.append(f"{indent}verdict: {verdict['old']} -> {verdict['new']}")
    for kind in LISTS:
        entry = drift.get(kind) or {}
        shown = [("+", item) for item in entry.get("added", [])]
        shown += [("-", item) for item in entry.get("removed", [])]
        if kind == "tool_calls" and entry.get("reordered"):
            out.append(f"{indent}tool calls: the same calls, in another order")
        if not shown:
            continue
        added, removed = len(entry.get("added", [])), len(entry.get("removed", []))
        out.append(f"{indent}{kind.replace('_', ' ')}: {added} added, {removed} removed")
        for sign, item in shown[:_SHOWN]:
            out.append(f"{indent}  {sign} {_clip(visible(_item_text(kind, item)))}")
        if len(shown) > _SHOWN:
            out.append(f"{indent}  ... and {len(shown) - _SHOWN} more")
    usage = drift.get("usage") or {}
    if usage:
        changes = [
            f"{name} {_count(change['old'])} -> {_count(change['new'])}"
            + (f" ({change['delta']:+d})" if change["delta"] is not None else "")
            for name, change in usage.items()
        ]
        out.append(f"{indent}usage: {', '.join(changes)}")
    return out


def headline(drift: Mapping[str, Any]) -> str:
    """One line: what changed, kind by kind (``domains +1 -0, verdict pass -> fail``)."""
    parts = []
    for kind in drift.get("changed", []):
        if kind == "verdict":
            parts.append(f"verdict {drift['verdict']['old']} -> {drift['verdict']['new']}")
        elif kind == "usage":
            parts.append(f"usage ({', '.join(drift['usage'])})")
        elif drift[kind]["added"] or drift[kind]["removed"]:
            parts.append(
                f"{kind.replace('_', ' ')} +{len(drift[kind]['added'])} "
                f"-{len(drift[kind]['removed'])}"
            )
        else:
            parts.append(f"{kind.replace('_', ' ')} reordered")
    return ", ".join(parts) or "no change"


# --- the items of a record -----------------------------------------------------------


def _items(record: EvidenceSummary | None, kind: str) -> list[Any]:
    """A kind's items over the record's conversations, as JSON data, in order."""
    if record is None:
        return []
    getters: dict[str, Callable[[Any], Iterable[Any]]] = {
        "domains": lambda c: c.domains,
        "sources": lambda c: c.sources,
        "citations": lambda c: ({"url": x.url, "cited_text": x.cited_text} for x in c.citations),
        "links": lambda c: ({"url": x.url, "consulted": x.consulted} for x in c.links),
        "hosted": lambda c: ({"kind": h.kind, "target": h.target} for h in c.hosted),
        "tool_calls": lambda c: (
            {"name": t.name, "arguments": _plain(t.arguments), "outcome": t.outcome}
            for t in c.tool_calls
        ),
    }
    return [item for c in record.conversations for item in getters[kind](c)]


def _added_removed(old: list[Any], new: list[Any], *, multiset: bool) -> dict[str, Any]:
    before, after = Counter(map(_key, old)), Counter(map(_key, new))
    if not multiset:
        before, after = Counter(set(before)), Counter(set(after))
    first = {_key(item): item for item in [*old, *new]}
    added = [first[key] for key, n in (after - before).items() for _ in range(n)]
    removed = [first[key] for key, n in (before - after).items() for _ in range(n)]
    return {"added": added, "removed": removed}


def _key(item: Any) -> Hashable:
    if isinstance(item, str):
        return item
    return json.dumps(item, sort_keys=True, ensure_ascii=False, default=str)


def _usage(old: EvidenceSummary | None, new: EvidenceSummary | None) -> dict[str, Any]:
    """The counters whose totals differ (unknown on one side counts as a change)."""
    if old is None or new is None:
        return {}
    changes = {}
    for name in COUNTERS:
        before, after = old.total(name), new.total(name)
        if before != after:
            delta = after - before if before is not None and after is not None else None
            changes[name] = {"old": before, "new": after, "delta": delta}
    return changes


def _item_text(kind: str, item: Any) -> str:
    if kind in ("domains", "sources"):
        return str(item)
    if kind == "citations":
        quoted = item.get("cited_text")
        return f"{item['url']}" + (f' "{" ".join(str(quoted).split())}"' if quoted else "")
    if kind == "links":
        return f"{item['url']} [{'consulted' if item['consulted'] else 'not consulted'}]"
    if kind == "hosted":
        return f"{item['kind']}: {item['target']}"
    arguments = json.dumps(item["arguments"], sort_keys=True, ensure_ascii=False, default=str)
    return f"{item['name']}({arguments}) -> {item['outcome']}"


def _plain(value: Any) -> Any:
    try:
        return json.loads(json.dumps(value, ensure_ascii=False, default=str))
    except (TypeError, ValueError):
        return repr(value)


def _count(value: int | None) -> str:
    return "unknown" if value is None else str(value)


def _clip(text: str, width: int = 160) -> str:
    return text if len(text) <= width else text[: width - 3] + "..."
