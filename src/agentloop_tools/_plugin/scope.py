"""Which tests the plugin acts on, and whether this pytest can host it.

Imported by the entry point on every pytest start-up of the environment, on any pytest
version: the standard library and pytest's oldest public API only (no new-style hook
wrappers here, which older pluggy releases reject at import).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, NamedTuple

import pytest

if TYPE_CHECKING:
    from agentloop_tools.testing import AgentloopEvidence

SESSION_NAME = "agentloop-tools-session"
MARKER_NAME = "domain_policy"
GUARD_FIXTURE = "_agentloop_cassette_guard"
OUR_FIXTURES = frozenset(
    {
        "agentloop_env",
        "agentloop_agent",
        "agentloop_evidence",
        "agentloop_script",
        "agentloop_from_scripts",
    }
)
# The testing extra's floor: before 8.3.3 pytest evaluates plugin properties during
# fixture discovery, and hook wrappers need a recent pluggy.
MIN_PYTEST = (8, 3, 3)


class Option(NamedTuple):
    """A command-line option of the plugin: the flag users type, where pytest keeps it."""

    flag: str
    dest: str
    default: object = None

    def __str__(self) -> str:
        return self.flag


# One place for the flags: the entry module registers them, the hooks read them, the
# messages name them, and the tests use them.
PROVIDER_OPTION = Option("--agentloop-provider", "agentloop_provider")
RECORD_IN_CI_OPTION = Option("--agentloop-record-in-ci", "agentloop_record_in_ci", False)
FROM_SCRIPTS_OPTION = Option("--agentloop-from-scripts", "agentloop_from_scripts", False)
REPORT_OPTION = Option("--agentloop-report", "agentloop_report")
HTML_REPORT_OPTION = Option("--agentloop-report-html", "agentloop_report_html")
OPTIONS = (
    PROVIDER_OPTION,
    RECORD_IN_CI_OPTION,
    FROM_SCRIPTS_OPTION,
    REPORT_OPTION,
    HTML_REPORT_OPTION,
)

EVIDENCE: pytest.StashKey[AgentloopEvidence] = pytest.StashKey()


def pytest_version() -> tuple[int, ...]:
    """The release numbers of the running pytest (``(8, 3, 3)``), without dev or local parts."""
    numbers: list[int] = []
    for part in pytest.version_tuple[:3]:
        if not isinstance(part, int):
            break
        numbers.append(part)
    return tuple(numbers)


def supported() -> bool:
    return pytest_version() >= MIN_PYTEST


def needs_pytest() -> str:
    floor = ".".join(map(str, MIN_PYTEST))
    return (
        f"agentloop-tools needs pytest>={floor}; this is pytest {pytest.__version__}. "
        f"Upgrade it: pip install 'pytest>={floor}' (or install "
        "'based-models-agentloop-tools[testing]', which pins it)."
    )


def in_scope(item: pytest.Item) -> bool:
    """Whether a test asks for the plugin (one of its fixtures or its marker)."""
    names = getattr(item, "fixturenames", ())
    return (
        bool(OUR_FIXTURES.intersection(names)) or item.get_closest_marker(MARKER_NAME) is not None
    )
