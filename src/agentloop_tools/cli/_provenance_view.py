"""The provenance ``agentloop-tools evidence`` shows for each cassette.

Read where the plugin reads a cassette's age: the ``provenance:`` block first in a
YAML cassette (only the block is read). A cassette without one (recorded before provenance existed,
by hand, or in vcrpy's JSON serializer) is shown as of unknown age, never left blank.
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Any

from agentloop_tools._visible import visible

CASSETTE_SUFFIXES = (".yaml", ".yml")
UNKNOWN = (
    "recorded: unknown (no provenance in the cassette: age unknown; re-record it with "
    "the agentloop-tools plugin to date it)"
)


def read(path: str | Path) -> dict[str, Any] | None:
    """The cassette's provenance mapping, or None when it has none (or it is unreadable)."""
    from agentloop_tools.cassettes._provenance import read as read_block
    from agentloop_tools.cassettes._provenance import recorded_at

    facts = read_block(path)
    if facts is None:
        return None
    when = recorded_at(path)
    facts["recorded_at"] = when.strftime("%Y-%m-%dT%H:%M:%SZ") if when else None
    return facts


def entry(path: str | Path, now: dt.datetime | None = None) -> dict[str, Any] | None:
    """``{"provenance": {...} | None, "age_days": int | None}`` for a cassette, None else."""
    import os
    import stat

    if not str(path).lower().endswith(CASSETTE_SUFFIXES):
        return None
    try:
        regular = stat.S_ISREG(os.stat(path).st_mode)
    except OSError:
        regular = False
    # A FIFO or device is never opened (it could block): its age is unknown.
    facts = read(path) if regular else None
    age: int | None = None
    if facts and facts.get("recorded_at"):
        when = dt.datetime.strptime(facts["recorded_at"], "%Y-%m-%dT%H:%M:%SZ").replace(
            tzinfo=dt.UTC
        )
        age = max(((now or dt.datetime.now(dt.UTC)) - when).days, 0)
    return {"provenance": facts, "age_days": age}


def lines(found: dict[str, Any] | None) -> list[str]:
    """The table's provenance lines (recorded text made visible)."""
    if found is None:
        return []
    facts = found["provenance"]
    if not facts:
        return [UNKNOWN]
    when = facts.get("recorded_at")
    age = found["age_days"]
    shown = (
        f"recorded: {when} ({age} day(s) ago)"
        if when
        else "recorded: unknown (no readable recorded_at: age unknown)"
    )
    versions = [
        f"{name} {facts[key]}"
        for key, name in (("agentloop_tools", "agentloop-tools"), ("agentloop", "agentloop"))
        if facts.get(key)
    ]
    sdks = facts.get("sdks")
    if isinstance(sdks, dict):
        versions += [f"{name} {version}" for name, version in sdks.items()]
    out = [visible(shown, layout=False)]
    if versions:
        out.append(visible(f"with: {', '.join(str(v) for v in versions)}"))
    details = []
    for key, label in (("providers", "providers"), ("models", "models")):
        value = facts.get(key)
        if isinstance(value, list) and value:
            details.append(f"{label} {', '.join(str(item) for item in value)}")
    if facts.get("record_mode"):
        details.append(f"record mode {facts['record_mode']}")
    if details:
        out.append(visible("; ".join(details)))
    origin = source_line(facts)
    if origin:
        out.append(visible(origin))
    return out


def source_line(facts: dict[str, Any]) -> str | None:
    """How the recording was made: ``scripted`` beside a scripted one, never left to look
    live; ``adopted`` for one dated by ``agentloop-tools adopt``."""
    source = facts.get("source")
    if source == "scripts":
        found = facts.get("script")
        script: dict[str, Any] = found if isinstance(found, dict) else {}
        origin = script.get("origin", "unknown")
        model = script.get("model", "unknown")
        return (
            f"source: scripted (from {origin}; the script claims model {model}): "
            "no live provider answered"
        )
    if source == "adopted":
        note = facts.get("note")
        return "source: adopted (recorded elsewhere)" + (f": {note}" if note else "")
    if source is None and facts.get("schema") is None:
        return None  # a v1 cassette: live or scripted is unknown, said nowhere
    return f"source: {source}" if source else None
