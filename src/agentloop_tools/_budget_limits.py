"""A budget's limits, read and checked: the counters, their range, the ini key's text.

The plugin reads every ``agent_budget`` marker while the tests are collected, so this
module needs the standard library only: importing ``agentloop_tools.testing`` (and with
it agentloop) would cost every marked run its collection time.
"""

from __future__ import annotations

from collections.abc import Mapping

BUDGET_COUNTERS = (
    "model_requests",
    "input_tokens",
    "output_tokens",
    "searches",
    "fetches",
    "tool_calls",
)
# A limit above this is a typo (or a way to lift a limit quietly): refused.
MAX_LIMIT = 10**12


def check_limits(limits: Mapping[str, object], where: str) -> dict[str, int]:
    """``limits`` as counter -> limit, or ValueError/TypeError naming what is wrong."""
    unknown = sorted(set(limits) - set(BUDGET_COUNTERS))
    if unknown:
        raise TypeError(
            f"{where}: unknown budget counter(s) {', '.join(unknown)}; a budget limits "
            f"{', '.join(BUDGET_COUNTERS)}."
        )
    checked: dict[str, int] = {}
    for name in BUDGET_COUNTERS:
        if name not in limits:
            continue
        value = limits[name]
        if not isinstance(value, int) or isinstance(value, bool):
            raise TypeError(
                f"{where}: {name}={value!r} is not a whole number; write the limit as an "
                f"int, e.g. {name}=5."
            )
        if not 0 <= value <= MAX_LIMIT:
            raise ValueError(
                f"{where}: {name}={value} is out of range; a limit is a whole number "
                f"from 0 to {MAX_LIMIT}."
            )
        checked[name] = value
    if not checked:
        raise ValueError(
            f"{where}: names no limit, so it would check nothing; give at least one of "
            f"{', '.join(f'{name}=N' for name in BUDGET_COUNTERS)}."
        )
    return checked


def parse_limits(text: str, where: str) -> dict[str, int]:
    """``searches=5, output_tokens=2000`` (commas or lines) as counter -> limit."""
    found: dict[str, object] = {}
    for entry in text.replace("\n", ",").split(","):
        entry = entry.strip()
        if not entry:
            continue
        name, equals, value = entry.partition("=")
        name, value = name.strip(), value.strip()
        if not equals or not name:
            raise ValueError(f"{where}: {entry!r} is not NAME=LIMIT (e.g. searches=5).")
        if name in found:
            raise ValueError(f"{where}: {name} is given twice; keep one limit for it.")
        found[name] = int(value) if value.isascii() and value.isdigit() else value
    return check_limits(found, where)
