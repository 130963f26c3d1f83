"""``agentloop-tools audit``: how a refused attempt counts, as a pytest run here counts it.

A violation whose URL web_fetch refused before requesting it (``Violation.refused``:
nothing was read, the policy held) is listed and counted in every format, and fails
the run (exit 1) only when refused attempts are set to fail: ``--refused-attempts fail``,
or the project's ``agentloop_refused_attempts`` ini key or ``refused_attempts`` table
key. ``fail`` in any of them wins (``--refused-attempts report`` does not lift a
project's ``fail``), as in the test plugin.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agentloop_tools._errors import UsageProblem

if TYPE_CHECKING:
    import argparse

FLAG = "--refused-attempts"
VALUES = ("report", "fail")


def setting(args: argparse.Namespace) -> tuple[str, str | None]:
    """``("fail", where it was set)`` or ``("report", None)``."""
    from agentloop_tools._config import policy_at
    from agentloop_tools._errors import ConfigError

    places = [f"{FLAG} fail"] if getattr(args, "refused_attempts", None) == "fail" else []
    try:
        project = policy_at(Path.cwd())
    except (ConfigError, ValueError, TypeError) as error:
        raise UsageProblem(str(error)) from None
    if project.refused_from is not None:
        places.append(project.refused_from)
    return ("fail", "; ".join(places)) if places else ("report", None)


def mark_each(violations: Iterable[dict[str, Any]], value: str) -> None:
    """Give each violation entry ``fails``: whether it fails the run under ``value``."""
    for violation in violations:
        violation["fails"] = value == "fail" or not violation.get("refused", False)


def fails(violation: dict[str, Any]) -> bool:
    return bool(violation.get("fails", True))


def failing(audits: list[Any]) -> bool:
    """Whether any violation left fails the run."""
    return any(fails(v) for audit in audits for v in audit.violations)


def note(violation: dict[str, Any]) -> str:
    """``; refused by web_fetch ...`` after a refused attempt's verdict, or ""."""
    if not violation.get("refused"):
        return ""
    counted = "" if fails(violation) else ", not failing"
    return f"; refused by web_fetch, nothing read: the policy held{counted}"


def summary(audits: list[Any], value: str, origin: str | None) -> str:
    """`` N of them refused attempt(s) ...`` for the table's last line, or ""."""
    count = sum(1 for audit in audits for v in audit.violations if v.get("refused"))
    if not count:
        return ""
    how = (
        f"failing: refused attempts set to fail ({origin})"
        if value == "fail"
        else (f"not failing (set {FLAG} fail to fail on them)")
    )
    return f" {count} of them refused attempt(s), the policy held; {how}."
