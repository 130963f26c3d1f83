"""Evidence drift in a run: a test re-recorded a cassette that already held its record.

The cassette's guard tells the test's ``Recording`` which record it replaced and which
it wrote (only when the interactions changed: an unchanged re-recording keeps the file);
this module compares them (``testing._drift``, as ``agentloop-tools diff`` does), puts
the drift on the test's report (so xdist carries it), and words the summary lines.
``--agentloop-drift`` / ``agentloop_drift`` decide whether drift fails the run.
"""

from __future__ import annotations

from typing import Any

import pytest

from agentloop_tools._plugin.scope import DRIFT_CHOICES, DRIFT_INI, DRIFT_OPTION

DRIFT_PROPERTY = "agentloop_tools_drift"
_STRICTNESS = {choice: rank for rank, choice in enumerate(DRIFT_CHOICES)}


def setting(config: pytest.Config) -> tuple[str, str | None]:
    """The run's drift setting and where it was set (None: the default, ``report``).

    The flag and the ini key: the stricter wins, as a restriction is never lifted
    quietly. A bad ini value stops the run (the flag's choices are pytest's).
    """
    found: list[tuple[str, str]] = []
    flag = config.getoption(DRIFT_OPTION.dest, None)
    if flag is not None:
        found.append((str(flag), f"{DRIFT_OPTION.flag}={flag}"))
    ini = str(config.getini(DRIFT_INI) or "").strip()
    if ini:
        if ini not in DRIFT_CHOICES:
            raise pytest.UsageError(
                f"ini key {DRIFT_INI} = {ini!r} is not a drift setting: use "
                f"{', '.join(DRIFT_CHOICES)} (report shows drift; fail-on-domains and "
                "fail-on-evidence fail the run on it)."
            )
        found.append((ini, f"ini key {DRIFT_INI} = {ini}"))
    if not found:
        return "report", None
    return max(found, key=lambda entry: _STRICTNESS[entry[0]])


def drift_property(item: pytest.Item) -> tuple[str, object] | None:
    """The test's drift for its report, when it re-recorded over its own record."""
    from agentloop_tools._plugin.cassette import RECORDING, describe

    recording = item.stash.get(RECORDING, None)
    before = getattr(recording, "replaced_evidence", None)
    after = getattr(recording, "written_evidence", None)
    if before is None or after is None:
        return None
    from agentloop_tools.testing import EvidenceSummary
    from agentloop_tools.testing._drift import compare

    cassette = describe(item)
    entry: dict[str, Any] = {"test": item.nodeid, "cassette": cassette and cassette["path"]}
    try:
        old = EvidenceSummary.from_json(before)
    except ValueError as error:
        # A record this version cannot read (a newer schema): say so, never a quiet pass.
        entry["unreadable"] = " ".join(str(error).split())[:300]
        return (DRIFT_PROPERTY, entry)
    drift = compare(old, EvidenceSummary.from_json(after))
    if drift["level"] is None:
        return None
    entry["drift"] = drift
    return (DRIFT_PROPERTY, entry)


def fails(entry: dict[str, Any], chosen: str) -> bool:
    """Whether one test's drift fails the run under the setting."""
    from agentloop_tools.testing._drift import PYTEST_DRIFT
    from agentloop_tools.testing._drift import fails as fails_on

    drift = entry.get("drift")
    if not isinstance(drift, dict):
        return False
    return fails_on(drift.get("level"), PYTEST_DRIFT[chosen])


def summary_lines(entries: list[dict[str, Any]], chosen: tuple[str, str | None]) -> list[str]:
    """Each test's drift, then what the setting makes of it."""
    from agentloop_tools._visible import visible
    from agentloop_tools.testing._drift import lines

    value, origin = chosen
    out: list[str] = []
    for entry in entries:
        test, cassette = visible(str(entry["test"])), visible(str(entry.get("cassette")))
        if "unreadable" in entry:
            out.append(
                f"evidence drift of {test} unknown: the record {cassette} held could not be "
                f"read ({visible(entry['unreadable'])})"
            )
            continue
        level = entry["drift"]["level"]
        meaning = {
            "domains": "a reached domain or the verdict changed",
            "evidence": "sources, citations, links or tool calls changed",
            "usage": "usage changed",
        }[level]
        out.append(f"evidence drift in {test}, re-recorded into {cassette} ({meaning}):")
        out += lines(entry["drift"], indent="  ")
    failing = [entry for entry in entries if fails(entry, value)]
    if failing:
        names = ", ".join(visible(str(entry["test"])) for entry in failing)
        out.append(
            f"evidence drift fails the run ({origin}): {len(failing)} test(s): {names}. The "
            "cassettes are written: review the change (git diff, or agentloop-tools diff "
            "old.yaml new.yaml after git show HEAD:<cassette> > old.yaml), then commit them, "
            "or restore them with git checkout."
        )
    elif entries:
        how = f"{origin}" if origin else "--agentloop-drift=report, the default"
        out.append(
            f"{len(entries)} re-recorded test(s) with evidence drift, shown, not failing "
            f"({how}; fail-on-domains or fail-on-evidence fails the run on it)"
        )
    return out
