"""pytest plugin: test agentloop agents on recorded provider traffic.

The ``pytest11`` entry point, kept thin and cheap to import (pytest and the standard
library only): options, ini keys, the marker and the fixtures. The work is done in
``agentloop_tools._plugin`` (its ``__init__`` lists the rooms), and only in a run that
uses the plugin: until then ``Standby`` (below) stands in, and the run is as without us.

Built on pytest-recording (``@pytest.mark.vcr``, ``--record-mode``, ``vcr_config``,
``vcr_cassette_dir``, ``--block-network``). For tests that use this plugin's
fixtures or the ``domain_policy`` marker, cassettes are scrubbed of credentials,
stored readably, matched on method, URL and JSON body, and checked for unused
interactions; a miss fails at once with the closest recorded request.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import pytest

from agentloop_tools._plugin.scope import (
    BUDGET_KEYWORDS,
    BUDGET_MARKER_LINE,
    DRIFT_CHOICES,
    DRIFT_OPTION,
    EVIDENCE,
    FAULTS_KEYWORDS,
    FAULTS_MARKER_LINE,
    FAULTS_MET,
    FIXTURE_USED,
    FROM_SCRIPTS_OPTION,
    GUARD_FIXTURE,
    HTML_REPORT_OPTION,
    INI_KEYS,
    MARKER_KEYWORDS,
    MARKER_LINE,
    PROPERTY_PREFIX,
    PROVIDER_OPTION,
    RECORD_BUDGET_OPTION,
    RECORD_IN_CI_OPTION,
    REFUSED_ATTEMPTS_OPTION,
    REPORT_OPTION,
    SESSION_NAME,
    WEB_FAULTS,
    configured,
    in_scope,
    marker_near_miss,
    needs_pytest,
    property_names,
    registered_markers,
    supported,
)

if TYPE_CHECKING:
    from agentloop_tools._plugin.session import AgentloopSession
    from agentloop_tools.testing import AgentFactory, AgentloopEvidence

__all__ = ["AgentFactory"]


def session_of(config: pytest.Config) -> AgentloopSession:
    """The run's session, started now if this is the run's first use of the plugin."""
    from agentloop_tools._plugin.hooks import Hooks

    plugin = config.pluginmanager.get_plugin(SESSION_NAME)
    if isinstance(plugin, Standby):
        plugin = plugin.activate()  # a fixture asked for by name (getfixturevalue)
    if not isinstance(plugin, Hooks):
        raise pytest.UsageError(needs_pytest() if not supported() else "agentloop-tools is off")
    return plugin.session


def __getattr__(name: str) -> Any:
    # AgentFactory lives in agentloop_tools.testing; importing it here eagerly would
    # make every pytest start-up pay for agentloop.
    if name == "AgentFactory":
        from agentloop_tools.testing import AgentFactory

        return AgentFactory
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


class Standby:
    """The plugin in a run whose configuration does not ask for it: waits for a first use.

    It looks at the collected tests (a worker's too) and, under xdist, at the reports
    the controller receives; at the first test that uses the plugin, or the first of its
    fixtures set up, it hands over to the real hooks. Until then it adds nothing to the
    run: no line, no fixture, no frame. It implements no setup, call or teardown hook,
    so not even pluggy's locals in a traceback of those phases name it.
    """

    def __init__(self, config: pytest.Config) -> None:
        self.config = config
        self._registered: set[str] | None = None

    def activate(self) -> Any:
        """Register the real hooks in this object's place, and return them."""
        from agentloop_tools._plugin.hooks import Hooks

        manager = self.config.pluginmanager
        if manager.get_plugin(SESSION_NAME) is self:
            hooks = Hooks(self.config)  # first: if it cannot start, the standby stays
            manager.unregister(self)
            manager.register(hooks, SESSION_NAME)
        return manager.get_plugin(SESSION_NAME)

    @pytest.hookimpl(tryfirst=True)
    def pytest_collection_modifyitems(self, items: list[pytest.Item]) -> None:
        """The first collected test that uses the plugin hands over to the real hooks.

        https://docs.pytest.org/en/stable/reference/reference.html#pytest.hookspec.pytest_collection_modifyitems
        """
        if any(self._uses(item) for item in items):
            self.activate().pytest_collection_modifyitems(items)

    def _uses(self, item: pytest.Item) -> bool:
        """In scope, or carrying our keywords on a marker one typo from ours."""
        if in_scope(item):
            return True
        for mark in item.iter_markers():
            keywords = MARKER_KEYWORDS | FAULTS_KEYWORDS | BUDGET_KEYWORDS
            if keywords.intersection(mark.kwargs) and self._near(mark.name):
                return True  # an attempt to configure us: the session says what is wrong
        return False

    def _near(self, name: str) -> bool:
        if self._registered is None:
            self._registered = registered_markers(self.config)
        return marker_near_miss(name, self._registered)

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        """Under xdist the controller collects nothing: a worker's report tells it.

        https://docs.pytest.org/en/stable/reference/reference.html#pytest.hookspec.pytest_runtest_logreport
        """
        if any(str(name).startswith(PROPERTY_PREFIX) for name in property_names(report)):
            self.activate().pytest_runtest_logreport(report)


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("agentloop-tools", "agentloop-tools: agent tests on recorded traffic")
    group.addoption(
        PROVIDER_OPTION.flag,
        dest=PROVIDER_OPTION.dest,
        metavar="NAME",
        default=None,
        help="Default provider for agentloop_agent: anthropic, openai, openrouter or modal "
        "(overrides the agentloop_provider ini key and LLM_PROVIDER).",
    )
    group.addoption(
        RECORD_IN_CI_OPTION.flag,
        dest=RECORD_IN_CI_OPTION.dest,
        action="store_true",
        default=False,
        help="Allow recording cassettes when the CI environment variable is set.",
    )
    group.addoption(
        FROM_SCRIPTS_OPTION.flag,
        dest=FROM_SCRIPTS_OPTION.dest,
        action="store_true",
        default=False,
        help="Record from scripts, with no key or network: agentloop_agent answers from "
        "the agentloop_script fixture (a ScriptedProvider or its responses) and "
        "agentloop_from_scripts is True for tests to script search and pages too.",
    )
    group.addoption(
        REPORT_OPTION.flag,
        dest=REPORT_OPTION.dest,
        metavar="PATH",
        default=None,
        help="Write a JSON report of every test's agent evidence (cassettes, sources, "
        "citations, violations, policy).",
    )
    group.addoption(
        HTML_REPORT_OPTION.flag,
        dest=HTML_REPORT_OPTION.dest,
        metavar="PATH",
        default=None,
        help="Write the same evidence as one self-contained HTML page.",
    )
    group.addoption(
        REFUSED_ATTEMPTS_OPTION.flag,
        dest=REFUSED_ATTEMPTS_OPTION.dest,
        choices=("report", "fail"),
        default=None,
        help="How a URL web_fetch refused before requesting it counts: report (default: "
        "shown and counted, the test passes) or fail. fail set anywhere (this flag, the "
        "agentloop_refused_attempts ini key, the project table, a marker) wins.",
    )
    _add_drift_option(group)
    _add_record_budget(group)
    _add_ini_keys(parser)


def _add_drift_option(group: Any) -> None:
    group.addoption(
        DRIFT_OPTION.flag,
        dest=DRIFT_OPTION.dest,
        choices=DRIFT_CHOICES,
        default=None,
        help="Whether evidence drift fails the run when a test re-records a cassette that "
        "held its evidence record: report (default: shown in the summary and reports), "
        "fail-on-domains (a reached domain or the verdict changed) or fail-on-evidence "
        "(that, or a source, citation, link or tool call added or removed). The stricter "
        "of this flag and the agentloop_drift ini key wins.",
    )


def _add_record_budget(group: pytest.OptionGroup) -> None:
    group.addoption(
        RECORD_BUDGET_OPTION.flag,
        dest=RECORD_BUDGET_OPTION.dest,
        metavar="LIMITS",
        default=None,
        help="A spend cap for recording, summed over the whole run (xdist workers too): "
        "tokens=N (input + output), searches=N, model_requests=N, comma-separated. Once "
        "a counter reaches its cap, model requests that would be recorded are refused "
        "and their tests fail naming the cap.",
    )


def _add_ini_keys(parser: pytest.Parser) -> None:
    for key in INI_KEYS:
        # A list default is made anew for each run: pytest hands it to getini's callers.
        default = list(key.default) if isinstance(key.default, tuple) else key.default
        parser.addini(key.name, key.help, type=key.type, default=default)


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", MARKER_LINE)
    config.addinivalue_line("markers", FAULTS_MARKER_LINE)
    config.addinivalue_line("markers", BUDGET_MARKER_LINE)
    if not supported():
        # Loaded in every run of the environment: on a pytest it cannot serve, stay out
        # of the way unless the run asks for it.
        from agentloop_tools._plugin.inert import Inert

        config.pluginmanager.register(Inert(config), SESSION_NAME)
    elif configured(config) is not None:
        from agentloop_tools._plugin.hooks import Hooks

        config.pluginmanager.register(Hooks(config), SESSION_NAME)
    else:
        # Nothing in the configuration asks for us: the standby waits for a first use.
        config.pluginmanager.register(Standby(config), SESSION_NAME)


@pytest.fixture
def agentloop_evidence(request: pytest.FixtureRequest) -> AgentloopEvidence:
    """What this test's agents did: .transcripts, .sources(), .citations(), .audit(policy)."""
    from agentloop_tools.testing import AgentloopEvidence

    _used_by(request)
    evidence = AgentloopEvidence()
    evidence.test = request.node.nodeid
    evidence.policy, evidence.policy_origin = session_of(request.config).policy_for(request.node)
    request.node.stash[EVIDENCE] = evidence
    return evidence


def _used_by(request: pytest.FixtureRequest) -> None:
    """The test uses the plugin, even when it asked through ``request.getfixturevalue``.

    Asked that way, the plugin sees it only now: too late to guard a cassette that
    pytest-recording already opened (scrubbing, strict matching), so that fails.
    """
    __tracebackhide__ = True
    node = request.node
    if FIXTURE_USED in node.stash:
        return
    node.stash[FIXTURE_USED] = True
    if GUARD_FIXTURE not in getattr(node, "fixturenames", ()) and (
        node.get_closest_marker("vcr") is not None
    ):
        from agentloop_tools._plugin import messages

        pytest.fail(messages.asked_too_late(node.nodeid, request.fixturename), pytrace=False)


@pytest.fixture
def agentloop_env(request: pytest.FixtureRequest) -> dict[str, str]:
    """The environment for Agent.from_env: os.environ, with placeholder keys when replaying."""
    from agentloop_tools._plugin.agents import agent_env, remember_unnamed_backend
    from agentloop_tools._plugin.cassette import (
        cassette_state,
        recorded_search_apis,
        scrubbed_in_cassette,
    )

    _used_by(request)
    state = cassette_state(request)
    replaying = state == "replaying"
    from_scripts = bool(request.config.getoption(FROM_SCRIPTS_OPTION.dest))
    env = agent_env(
        session_of(request.config).provider,
        state,
        search_backend=str(request.config.getini("agentloop_search_backend") or "") or None,
        recorded=recorded_search_apis(request) if replaying else (),
        from_scripts=from_scripts,
        scrubbed=scrubbed_in_cassette(request) if replaying else (),
    )
    remember_unnamed_backend(request.node, env, state, from_scripts=from_scripts)
    return env


@pytest.fixture
def agentloop_script(request: pytest.FixtureRequest) -> Any:
    """The provider script this test records from under --agentloop-from-scripts.

    Override it (in a conftest.py) to return a ``ScriptedProvider`` or the list of its
    responses for ``request.node``; the default has none, and recording from scripts
    then fails naming this fixture.
    """
    return None


@pytest.fixture
def agentloop_from_scripts(request: pytest.FixtureRequest) -> bool:
    """Whether this test records from scripts (--agentloop-from-scripts, and recording)."""
    from agentloop_tools._plugin.cassette import cassette_state

    wanted = bool(request.config.getoption(FROM_SCRIPTS_OPTION.dest))
    return wanted and cassette_state(request) == "recording"


@pytest.fixture
def agentloop_agent(
    request: pytest.FixtureRequest,
    agentloop_env: dict[str, str],
    agentloop_evidence: AgentloopEvidence,
) -> Iterator[AgentFactory]:
    """Build agentloop Agents from agentloop_env; each conversation is captured as evidence."""
    from agentloop_tools._plugin.agents import AgentBuilder
    from agentloop_tools._plugin.cassette import cassette_state

    session = session_of(request.config)
    state = cassette_state(request)
    from_scripts = state == "recording" and bool(request.config.getoption(FROM_SCRIPTS_OPTION.dest))
    builder = AgentBuilder(
        request,
        agentloop_env,
        agentloop_evidence,
        state,
        session.replay_clients,
        from_scripts=from_scripts,
    )
    try:
        yield builder
    finally:
        builder.close()


@pytest.fixture(name=GUARD_FIXTURE)
def _agentloop_cassette_guard(request: pytest.FixtureRequest) -> Iterator[None]:
    """For this plugin's tests, whoever builds the agent: provider traffic stays local.

    Without a cassette (or recording with a placeholder key), a request to a real
    provider fails the test before it leaves; a replay miss fails at once. Given only
    to the tests that use the plugin (added to them when they are collected), so the
    rest of a project's tests never see it.
    """
    if not in_scope(request.node):
        yield
        return
    from agentloop_tools._plugin.cassette import (
        cassette_state,
        fail_on_miss,
        remember_cassettes,
        tap_exchanges,
    )
    from agentloop_tools._plugin.network import guard_provider_hosts, skip_backoff

    if (
        request.config.getoption("record_mode", default=None) == "rewrite"
        and request.node.get_closest_marker("vcr") is not None
    ):
        remember_cassettes(request)  # before pytest-recording's vcr fixture deletes them
    state = cassette_state(request)
    if state == "replaying":
        session = session_of(request.config)
        skip_backoff(request)
        fail_on_miss(request, session.matcher)
        if session.max_cassette_age:
            from agentloop_tools._plugin.cassette import check_age

            check_age(request, session.max_cassette_age, session.cassette_age_action)
    else:
        guard_provider_hosts(request, state)
    if state != "none":
        tap_exchanges(request)  # the raw answers the evidence record reads
    if state == "recording" and request.config.getoption(RECORD_BUDGET_OPTION.dest):
        from agentloop_tools._plugin.budget import cap_recording

        cap_recording(request, session_of(request.config).record_cap)
    faults = request.node.stash.get(WEB_FAULTS, None)
    if faults is None:
        yield
        return
    from agentloop_tools.web._faults import injected

    # Around every other fixture of the test, so an agent run in a fixture meets them too.
    with injected(faults) as met:
        request.node.stash[FAULTS_MET] = met
        yield
