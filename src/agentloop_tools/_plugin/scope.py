"""Whether a run uses the plugin, which tests it acts on, and whether this pytest can host it.

The one definition of "this run uses the plugin", shared by the real session, the
standby that waits for a first use, and the inert plugin of an old pytest: one of our
options, ini keys (or a near miss of one), the ``[tool.agentloop-tools]`` table (or a
near miss of its name), one of our fixtures, or the ``domain_policy``, ``web_faults``
or ``agent_budget`` marker in our keyword form. A run that uses none of them runs as if
we were not installed.

Imported by the entry point on every pytest start-up of the environment, on any pytest
version: the standard library and pytest's oldest public API only (no new-style hook
wrappers here, which older pluggy releases reject at import), and cheap: a project's
files are probed for the bytes ``agentloop`` before anything is parsed.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Literal, NamedTuple

import pytest

if TYPE_CHECKING:
    from collections.abc import Collection

    from agentloop_tools.testing import AgentloopEvidence
    from agentloop_tools.web._faults import WebFaults

SESSION_NAME = "agentloop-tools-session"
MARKER_NAME = "domain_policy"
# The marker's keywords; one of them on a marker (even a near miss of its name) is an
# attempt to configure us.
MARKER_KEYWORDS = frozenset(
    {"allow", "block", "policy", "require_evidence", "refused_attempts", "replace"}
)
# The line the plugin registers the marker with: any other line naming the marker is a
# registration of the project's own.
MARKER_LINE = (
    f"{MARKER_NAME}(*, allow=None, block=None, policy=None, require_evidence=True, "
    "replace=False, refused_attempts='report'): audit everything this test's agents did "
    "against a domain policy, with every other marker on its path and the project policy "
    "(replace=True: this marker alone); a violation, or no agent evidence at all, fails "
    "the test (refused_attempts='fail': a URL web_fetch refused fails it too) "
    "(agentloop-tools' testing guide)."
)
# The web faults marker: its keywords put a test in scope as the policy marker's do.
FAULTS_MARKER_NAME = "web_faults"
FAULTS_KEYWORDS = frozenset({"pages", "searches"})
FAULTS_MARKER_LINE = (
    f"{FAULTS_MARKER_NAME}(*, pages=None, searches=None): the client-side web_fetch and "
    "web_search tools meet these failures ({URL_PATTERN: FAULT}, {QUERY_PATTERN: FAULT}; "
    "a FAULT is an HTTP error status, 'timeout', 'empty', 'paywall' or, for pages, "
    "'redirect:<url>'), answered before any request, recording and on replay "
    "(agentloop-tools' testing guide)."
)
# The budget marker: its keywords put a test in scope too.
BUDGET_MARKER_NAME = "agent_budget"
BUDGET_KEYWORDS = frozenset(
    {"model_requests", "input_tokens", "output_tokens", "searches", "fetches", "tool_calls"}
)
BUDGET_MARKER_LINE = (
    f"{BUDGET_MARKER_NAME}(*, model_requests=None, input_tokens=None, output_tokens=None, "
    "searches=None, fetches=None, tool_calls=None): the most this test's agents may spend "
    "in total (searches and fetches: hosted and client-side calls alike), checked on the "
    "recorded usage when replaying; over budget, or a limited counter the provider did "
    "not report, fails the test (agentloop-tools' testing guide)."
)
# Our markers, each with the keywords that make it ours (on a marker the project
# registered itself too: then it is a clash).
OUR_MARKERS = {
    MARKER_NAME: MARKER_KEYWORDS,
    FAULTS_MARKER_NAME: FAULTS_KEYWORDS,
    BUDGET_MARKER_NAME: BUDGET_KEYWORDS,
}
BUDGET_INI = "agentloop_budget"
# What a test's report carries to the controller (xdist) when the plugin acted on it.
PROPERTY_PREFIX = "agentloop_tools"
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
# Named as the design names it (its ini key and table key say the same words).
REFUSED_ATTEMPTS_OPTION = Option("--refused-attempts", "agentloop_refused_attempts")
REFUSED_ATTEMPTS_INI = "agentloop_refused_attempts"
# Whether evidence drift of a re-recorded cassette fails the run (testing._drift).
DRIFT_OPTION = Option("--agentloop-drift", "agentloop_drift")
DRIFT_INI = "agentloop_drift"
DRIFT_CHOICES = ("report", "fail-on-domains", "fail-on-evidence")
RECORD_BUDGET_OPTION = Option("--agentloop-record-budget", "agentloop_record_budget")
OPTIONS = (
    PROVIDER_OPTION,
    RECORD_IN_CI_OPTION,
    FROM_SCRIPTS_OPTION,
    REPORT_OPTION,
    HTML_REPORT_OPTION,
    REFUSED_ATTEMPTS_OPTION,
    DRIFT_OPTION,
    RECORD_BUDGET_OPTION,
)


class IniKey(NamedTuple):
    """An ini key of the plugin: its name, its line in ``pytest --help``, how pytest reads it."""

    name: str
    help: str
    type: Literal["linelist"] | None = None  # pytest's addini type; None: a string
    default: object = ""


# One place for the ini keys, beside the options: the entry module registers them, a
# near miss of one (or any other agentloop_* key) is a usage error (an unknown key is
# only a warning to pytest, and a lost policy), and the docs' table is checked against it.
INI_KEYS = (
    IniKey("agentloop_provider", "Default provider for agentloop_agent."),
    IniKey(
        "agentloop_allow_domains",
        "Project-wide default domain allowlist: every test's agent evidence is audited.",
        "linelist",
        None,  # unset is None, written empty is []: an empty key is an error
    ),
    IniKey(
        "agentloop_block_domains",
        "Project-wide default domain blocklist: every test's agent evidence is audited.",
        "linelist",
        None,
    ),
    IniKey(
        "agentloop_policy_file",
        "A TOML file (relative to the rootdir) holding the project-wide allow = [...] or "
        "block = [...] list.",
        default=None,
    ),
    IniKey(
        "agentloop_search_backend",
        "The search backend agentloop_env names (WEB_SEARCH_BACKEND) in replay, when the "
        "cassette alone cannot tell, and when recording from scripts "
        "(--agentloop-from-scripts): brave, tavily, exa, searxng, or one you registered.",
    ),
    IniKey(
        "agentloop_max_cassette_age",
        "Replayed cassettes older than this (90d, 12w) warn or fail "
        "(agentloop_cassette_age_action).",
    ),
    IniKey(
        "agentloop_cassette_age_action",
        "What an old cassette does: warn (default) or fail.",
        default="warn",
    ),
    IniKey(
        "agentloop_volatile_fields",
        "Request body fields ignored when matching cassettes (dotted paths, * for lists).",
        "linelist",
        (),  # registered as a new empty list each time
    ),
    IniKey(
        REFUSED_ATTEMPTS_INI,
        "How a URL web_fetch refused before requesting it counts: report (default) or fail.",
    ),
    IniKey(
        DRIFT_INI,
        "Whether evidence drift of a re-recorded cassette fails the run: report (default), "
        "fail-on-domains or fail-on-evidence.",
    ),
    IniKey(
        BUDGET_INI,
        "Every agent test's default budget (searches=5, output_tokens=2000); an "
        "agent_budget marker's limits replace it for the counters the marker names.",
    ),
)
PLUGIN_INI_KEYS = tuple(key.name for key in INI_KEYS)

EVIDENCE: pytest.StashKey[AgentloopEvidence] = pytest.StashKey()
WEB_FAULTS: pytest.StashKey[WebFaults] = pytest.StashKey()  # the test's web_faults, read
FAULTS_MET = pytest.StashKey[list[dict[str, str]]]()  # each fault its tools met
FIXTURE_USED = pytest.StashKey[bool]()  # one of our fixtures was set up for the test


def property_names(report: pytest.TestReport) -> list[str]:
    """The names of a report's ``user_properties`` (a test may append anything there)."""
    names = []
    for entry in report.user_properties:
        if isinstance(entry, tuple | list) and entry:
            names.append(str(entry[0]))
    return names


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


def in_scope(item: pytest.Item, marker_names: Collection[str] | None = None) -> bool:
    """Whether a test uses the plugin: one of its fixtures, or the marker as ours.

    A fixture counts when the test names it (collection sees it) or when one was set up
    for it (``request.getfixturevalue``). A ``domain_policy`` marker the project
    registered itself is the project's, unless it carries one of our keywords (a clash,
    refused when the marker is read). ``marker_names``: every marker name on the test's
    path, when the caller has walked it already (one walk per test, not one per marker).
    """
    names = getattr(item, "fixturenames", ())
    if OUR_FIXTURES.intersection(names) or FIXTURE_USED in item.stash:
        return True
    for name, keywords in OUR_MARKERS.items():
        if marker_names is not None:
            if name not in marker_names:
                continue
            if not project_owns_marker(item.config, name):
                return True  # present and ours: the walk below would say so
        marks = list(item.iter_markers(name))
        if marks and (
            not project_owns_marker(item.config, name)
            or any(keywords.intersection(mark.kwargs) for mark in marks)
        ):
            return True
    return False


def registered_markers(config: pytest.Config) -> set[str]:
    """The marker names registered in the ini file (or by a plugin or conftest)."""
    names = set()
    for line in config.getini("markers"):
        names.add(str(line).split(":", 1)[0].split("(", 1)[0].strip())
    return names


_OWNED = pytest.StashKey[dict[str, bool]]()
_OUR_LINES = {
    MARKER_NAME: MARKER_LINE,
    FAULTS_MARKER_NAME: FAULTS_MARKER_LINE,
    BUDGET_MARKER_NAME: BUDGET_MARKER_LINE,
}


def project_owns_marker(config: pytest.Config, name: str = MARKER_NAME) -> bool:
    """Whether the project registered a marker of its own by our marker's ``name``."""
    owned = config.stash.setdefault(_OWNED, {})
    if name not in owned:
        owned[name] = any(
            str(line) != _OUR_LINES[name]
            and str(line).split(":", 1)[0].split("(", 1)[0].strip() == name
            for line in config.getini("markers")
        )
    return owned[name]


def marker_near_miss(name: str, registered: set[str]) -> bool:
    """An unregistered marker name one or two typos from one of ours."""
    return near_marker(name, registered) is not None


def near_marker(name: str, registered: set[str]) -> str | None:
    """Which of our markers an unregistered name is one or two typos from, if any."""
    if name in _OUR_LINES or name in registered:
        return None
    if not 8 <= len(name) <= 19:
        return None  # too short or long for either test below: most names stop here
    import difflib

    for ours in _OUR_LINES:
        if difflib.get_close_matches(name, [ours], n=1, cutoff=0.8):
            return ours
        if _edits(name.lower(), ours) <= 2:
            return ours
    return None


def _edits(a: str, b: str) -> int:
    """Edit distance with adjacent transpositions (optimal string alignment)."""
    if abs(len(a) - len(b)) > 2:
        return 3
    previous2: list[int] = []
    previous = list(range(len(b) + 1))
    for i, char in enumerate(a, 1):
        current = [i]
        for j, other in enumerate(b, 1):
            cost = char != other
            best = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + cost)
            if i > 1 and j > 1 and char == b[j - 2] and a[i - 2] == other:
                best = min(best, previous2[j - 2] + 1)
            current.append(best)
        previous2, previous = previous, current
    return previous[-1]


def configured(config: pytest.Config) -> str | None:
    """What in the run's configuration asks for the plugin, named; None if nothing does.

    Options, then ini keys (pytest has parsed the file already), then the project
    table, whose file is parsed only when its bytes mention ``agentloop``.
    """
    for option in OPTIONS:
        if config.getoption(option.dest, option.default) != option.default:
            return option.flag
    key = _our_ini_key(config)
    if key is not None:
        return f"ini key {key}"
    return _our_table(config)


def ini_keys_written(config: pytest.Config) -> set[str]:
    """The keys pytest parsed from its configuration file, and the ``-o`` overrides."""
    keys: set[str] = set()
    for entry in config.getoption("override_ini", None) or ():
        name, equals, _ = str(entry).partition("=")
        if equals:
            keys.add(name.strip())
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # inicfg is deprecated on pytest 9 (_inicfg there)
        parsed = getattr(config, "_inicfg", None) or getattr(config, "inicfg", None) or {}
    keys.update(str(key) for key in parsed)
    return keys


def _our_ini_key(config: pytest.Config) -> str | None:
    registered = set(getattr(getattr(config, "_parser", None), "_inidict", {}) or ())
    registered.difference_update(PLUGIN_INI_KEYS)
    for key in sorted(ini_keys_written(config) - registered):
        if "agentloop" in key.lower() or _near_ini_key(key):
            return key
    return None


def _near_ini_key(key: str) -> bool:
    import difflib

    return bool(difflib.get_close_matches(key, PLUGIN_INI_KEYS, n=1, cutoff=0.8))


def _our_table(config: pytest.Config) -> str | None:
    """The project table (or a near miss of it, or a file that mentions us but will not read)."""
    inipath = config.inipath
    path = inipath if inipath is not None and inipath.name == "pyproject.toml" else None
    path = path or Path(config.rootpath) / "pyproject.toml"
    try:
        data = path.read_bytes()
    except OSError:
        return None  # no file (or none to read): pytest reports its own
    from agentloop_tools._config_probe import mentions_us

    if not mentions_us(data):
        return None
    from agentloop_tools._config import TABLE, read_table
    from agentloop_tools._errors import ConfigError

    try:
        table = read_table(path)
    except ConfigError:
        return f"{path} [{TABLE}]"  # the session reads it again and says what is wrong
    return f"{path} [{TABLE}]" if table is not None else None
