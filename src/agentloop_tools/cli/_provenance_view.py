"""The provenance ``agentloop-tools evidence`` shows for each cassette.

Read where the plugin reads a cassette's age: the ``provenance:`` block in the first
4 KiB of a YAML cassette. A cassette without one (recorded before provenance existed,
by hand, or in vcrpy's JSON serializer) is shown as of unknown age, never left blank.
"""

from __future__ import annotations

import datetime as dt
import re
from pathlib import Path
from typing import Any

from agentloop_tools._visible import visible

_HEAD_BYTES = 4096
_BLOCK = re.compile(r"^provenance:[ \t]*\n((?:[ \t]+.*\n?)+)", re.MULTILINE)
CASSETTE_SUFFIXES = (".yaml", ".yml")
UNKNOWN = (
    "recorded: unknown (no provenance in the cassette: age unknown; re-record it with "
    "the agentloop-tools plugin to date it)"
)


def read(path: str | Path) -> dict[str, Any] | None:
    """The cassette's provenance mapping, or None when it has none (or it is unreadable)."""
    import yaml

    from agentloop_tools.cassettes._provenance import recorded_at

    try:
        with open(path, "rb") as file:
            head = file.read(_HEAD_BYTES).decode("utf-8", "replace")
    except OSError:
        return None
    match = _BLOCK.search(head)
    if match is None:
        return None
    try:
        block = yaml.safe_load("provenance:\n" + match.group(1))
    except yaml.YAMLError:
        return None
    facts = block.get("provenance") if isinstance(block, dict) else None
    if not isinstance(facts, dict):
        return None
    when = recorded_at(path)
    entry: dict[str, Any] = {str(key): value for key, value in facts.items()}
    entry["recorded_at"] = when.strftime("%Y-%m-%dT%H:%M:%SZ") if when else None
    return entry


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
    return out
