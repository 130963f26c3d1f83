"""pytest plugin: test agentloop agents on recorded provider traffic.

Registered through the ``pytest11`` entry point. This module stays cheap to import:
pytest and the standard library only; agentloop, vcrpy and YAML are imported by the
fixtures and hooks that need them, when a test uses them.

Built on pytest-recording (``@pytest.mark.vcr``, ``--record-mode``, ``vcr_config``,
``vcr_cassette_dir``, ``--block-network``). For tests that use this plugin's
fixtures or the ``domain_policy`` marker, cassettes are scrubbed of credentials,
stored readably, matched on method, URL and JSON body, and checked for unused
interactions; a miss fails at once with the closest recorded request.
"""

from __future__ import annotations

import os
import shlex
from collections.abc import Callable, Generator, Iterator, Sequence
from typing import TYPE_CHECKING, Any, Literal, Protocol

import pytest

if TYPE_CHECKING:
    from agentloop import Agent, HostedTool
    from agentloop.tooling import ToolSpec

    from agentloop_tools.cassettes import BodyMatcher
    from agentloop_tools.testing import AgentloopEvidence
    from agentloop_tools.web import DomainPolicy

PROVIDERS = ("anthropic", "openai", "openrouter", "modal")
PROVIDER_OPTION = "--agentloop-provider"
RECORD_IN_CI_OPTION = "--agentloop-record-in-ci"
REPORT_OPTION = "--agentloop-report"
HTML_REPORT_OPTION = "--agentloop-report-html"
_PROPERTY = "agentloop_tools"
MODEL_VARIABLES = {
    "anthropic": "ANTHROPIC_MODEL",
    "openai": "OPENAI_MODEL",
    "openrouter": "OPENROUTER_MODEL",
    "modal": "MODAL_ENDPOINT_MODEL",
}
KEY_VARIABLES = {
    "anthropic": ("ANTHROPIC_API_KEY",),
    "openai": ("OPENAI_API_KEY",),
    "openrouter": ("OPENROUTER_API_KEY",),
    "modal": (),
}
# Where agentloop's providers live: without a cassette, a request here fails the test.
PROVIDER_HOSTS = ("api.anthropic.com", "api.openai.com", "openrouter.ai")
PROVIDER_HOST_SUFFIXES = (".modal.run",)
OUR_FIXTURES = frozenset({"agentloop_env", "agentloop_agent", "agentloop_evidence"})
MATCH_ON = ("method", "scheme", "host", "port", "path", "query", "agentloop_body")
DOCS = "docs/testing.md"

type CassetteState = Literal["recording", "replaying", "none"]


class AgentFactory(Protocol):
    """The type of the ``agentloop_agent`` fixture's value, for annotations."""

    def __call__(
        self,
        tools: Sequence[ToolSpec | HostedTool] = (),
        *,
        provider: str | None = None,
        model: str | None = None,
        **agent_kwargs: Any,
    ) -> Agent: ...


# --- options, ini keys, markers ------------------------------------------------


def pytest_addoption(parser: pytest.Parser) -> None:
    """See https://docs.pytest.org/en/stable/reference/reference.html#pytest.hookspec.pytest_addoption"""
    group = parser.getgroup("agentloop-tools", "agentloop-tools: agent tests on recorded traffic")
    group.addoption(
        PROVIDER_OPTION,
        dest="agentloop_provider",
        choices=PROVIDERS,
        default=None,
        help="Default provider for agentloop_agent (overrides the agentloop_provider ini "
        "key and LLM_PROVIDER).",
    )
    group.addoption(
        RECORD_IN_CI_OPTION,
        dest="agentloop_record_in_ci",
        action="store_true",
        default=False,
        help="Allow recording cassettes when the CI environment variable is set.",
    )
    group.addoption(
        REPORT_OPTION,
        dest="agentloop_report",
        metavar="PATH",
        default=None,
        help="Write a JSON report of every test's agent evidence (cassettes, sources, "
        "citations, violations, policy).",
    )
    group.addoption(
        HTML_REPORT_OPTION,
        dest="agentloop_report_html",
        metavar="PATH",
        default=None,
        help="Write the same evidence as one self-contained HTML page.",
    )
    parser.addini("agentloop_provider", "Default provider for agentloop_agent.", default="")
    parser.addini(
        "agentloop_allow_domains",
        "Project-wide default domain allowlist: every test's agent evidence is audited.",
        type="linelist",
        default=[],
    )
    parser.addini(
        "agentloop_block_domains",
        "Project-wide default domain blocklist: every test's agent evidence is audited.",
        type="linelist",
        default=[],
    )
    parser.addini(
        "agentloop_volatile_fields",
        "Request body fields ignored when matching cassettes (dotted paths, * for lists).",
        type="linelist",
        default=[],
    )


def pytest_configure(config: pytest.Config) -> None:
    """See https://docs.pytest.org/en/stable/reference/reference.html#pytest.hookspec.pytest_configure"""
    config.addinivalue_line(
        "markers",
        "domain_policy(*, allow=None, block=None, policy=None): audit everything this test's "
        f"agents did against a domain policy; a violation fails the test. See {DOCS}.",
    )
    config.pluginmanager.register(AgentloopSession(config), "agentloop-tools-session")


# --- the session object --------------------------------------------------------


class AgentloopSession:
    """Per-run state and the hooks that need it."""

    def __init__(self, config: pytest.Config) -> None:
        self.config = config
        self.provider = _default_provider(config)
        self._default_policy: DomainPolicy | None = None
        self._default_policy_read = False
        self._policy_origin = "the ini file"
        self._matcher: BodyMatcher | None = None
        self._replay_clients: dict[str, Any] = {}
        self.current: pytest.Item | None = None
        self.records: list[dict[str, Any]] = []
        _refuse_recording_in_ci(config)

    # Hooks ---------------------------------------------------------------------

    def pytest_report_header(self, config: pytest.Config) -> str:
        """See https://docs.pytest.org/en/stable/reference/reference.html#pytest.hookspec.pytest_report_header"""
        record_mode = config.getoption("record_mode", default=None) or "none"
        policy = self._policy_summary()
        return f"agentloop-tools: provider={self.provider or 'from LLM_PROVIDER'}, " + (
            f"record-mode={record_mode}, default policy={policy}"
        )

    def pytest_collection_modifyitems(self, items: list[pytest.Item]) -> None:
        """A domain_policy marker brings the evidence fixture, so there is something to audit."""
        for item in items:
            if (
                isinstance(item, pytest.Function)
                and item.get_closest_marker("domain_policy") is not None
                and "agentloop_evidence" not in item.fixturenames
            ):
                item.fixturenames.append("agentloop_evidence")

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_setup(self, item: pytest.Item) -> None:
        self.current = item
        problem = None
        try:
            # Read once, here: a malformed marker errors now, whatever the test does.
            item.stash[_MARKER_POLICY] = _marker_policy(item)
        except pytest.UsageError as error:
            problem = str(error)
        if problem is not None:
            pytest.fail(problem, pytrace=False)

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_teardown(self, item: pytest.Item) -> Iterator[None]:
        """After fixtures are torn down (the cassette saved): report a refused cassette.

        See https://docs.pytest.org/en/stable/reference/reference.html#pytest.hookspec.pytest_runtest_teardown
        """
        self.current = None
        result = yield
        cassette = (getattr(item, "funcargs", None) or {}).get("vcr")
        # The guarded persister (cassettes.guard_recording) keeps its refusal; read
        # without importing the cassettes package into tests that do not use it.
        refusal = getattr(getattr(cassette, "_persister", None), "refusal", None)
        if isinstance(refusal, str) and refusal:
            pytest.fail(refusal, pytrace=False)
        return result

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_call(self, item: pytest.Item) -> Iterator[None]:
        """After a passing test body: unused cassette interactions, then the domain policy.

        Both are reported as failures of the test itself, not as errors.
        See https://docs.pytest.org/en/stable/reference/reference.html#pytest.hookspec.pytest_runtest_call
        """
        result = yield
        if in_scope(item):
            _check_unused_interactions(item)
            self._audit(item)
        return result

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_makereport(
        self, item: pytest.Item, call: pytest.CallInfo[None]
    ) -> Generator[None, pytest.TestReport, pytest.TestReport]:
        """Attach the test's evidence to its report, so xdist carries it to the controller."""
        report = yield
        if call.when == "call":
            evidence = _evidence_of(item)
            if evidence is not None and evidence.transcripts:
                # The full record only when a report file is asked for; counts otherwise.
                wanted = self.config.getoption("agentloop_report") or self.config.getoption(
                    "agentloop_report_html"
                )
                record: dict[str, Any] = (
                    self._record(item, evidence, report)
                    if wanted
                    else {"test": item.nodeid, "outcome": report.outcome}
                )
                record["conversation_count"] = len(evidence.transcripts)
                record["violation_count"] = item.stash.get(_VIOLATIONS, 0)
                report.user_properties.append((_PROPERTY, record))
        return report

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        if report.when != "call":
            return
        for name, value in report.user_properties:
            if name == _PROPERTY and isinstance(value, dict):
                self.records.append(value)

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        """See https://docs.pytest.org/en/stable/reference/reference.html#pytest.hookspec.pytest_terminal_summary"""
        if not self.records:
            return
        conversations = sum(r["conversation_count"] for r in self.records)
        violations = [r["violation_count"] for r in self.records]
        breached = sum(1 for count in violations if count)
        terminalreporter.write_sep("-", "agentloop-tools")
        terminalreporter.write_line(
            f"{len(self.records)} test(s) with agent evidence, {conversations} conversation(s); "
            f"{sum(violations)} domain policy violation(s) in {breached} test(s)"
        )
        for option, path in (
            (REPORT_OPTION, self.config.getoption("agentloop_report")),
            (HTML_REPORT_OPTION, self.config.getoption("agentloop_report_html")),
        ):
            if path:
                terminalreporter.write_line(f"evidence report ({option}): {path}")

    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        if hasattr(self.config, "workerinput"):
            return  # an xdist worker: the controller writes the reports
        json_path = self.config.getoption("agentloop_report")
        html_path = self.config.getoption("agentloop_report_html")
        if not json_path and not html_path:
            return
        from agentloop_tools import _report

        if json_path:
            _report.write_json(json_path, self.records)
        if html_path:
            _report.write_html(html_path, self.records)

    def _record(
        self, item: pytest.Item, evidence: AgentloopEvidence, report: pytest.TestReport
    ) -> dict[str, Any]:
        from agentloop_tools import _report

        marker = item.stash.get(_MARKER_POLICY, None)
        policy = marker or self.default_policy()
        origin = "the domain_policy marker" if marker else (self._policy_origin if policy else None)
        cassette = getattr(item, "funcargs", {}).get("vcr")
        cassette_info = (
            None
            if cassette is None
            else {
                "path": str(cassette._path),
                "state": "replaying" if cassette.write_protected else "recording",
            }
        )
        record = _report.test_record(
            item.nodeid, evidence.transcripts, policy, origin, cassette_info
        )
        record["outcome"] = report.outcome
        return record

    @pytest.hookimpl(optionalhook=True)
    def pytest_recording_configure(self, config: pytest.Config, vcr: Any) -> None:
        """pytest-recording built a VCR for a test: make its cassettes safe and strict."""
        if self.current is None or not in_scope(self.current):
            return
        from agentloop_tools._secrets import secret_values
        from agentloop_tools.cassettes import Scrubber, guard_recording, serializer

        vcr.register_serializer("yaml", serializer)
        vcr.register_matcher("agentloop_body", self.matcher)
        secrets = secret_values(os.environ)
        scrubber = Scrubber(secrets)
        # Every cassette is checked before it is written, whatever the serializer;
        # a refusal fails the test after teardown (see pytest_runtest_teardown).
        guard_recording(vcr, secrets)
        original = vcr.use_cassette

        def use_cassette(path: Any = None, **options: Any) -> Any:
            # The user's vcr_config comes first; scrubbing always runs last.
            user_request = options.pop("before_record_request", options.pop("before_record", None))
            user_response = options.pop("before_record_response", None)
            options["before_record_request"] = [*_hooks(user_request), scrubber.request]
            options["before_record_response"] = [*_hooks(user_response), scrubber.response]
            options["decode_compressed_response"] = True
            options.setdefault("match_on", MATCH_ON)
            return original(path, **options)

        vcr.use_cassette = use_cassette

    # Services for the fixtures -------------------------------------------------

    @property
    def matcher(self) -> BodyMatcher:
        if self._matcher is None:
            from agentloop_tools.cassettes import DEFAULT_VOLATILE_FIELDS, BodyMatcher

            configured = self.config.getini("agentloop_volatile_fields")
            self._matcher = BodyMatcher(configured or DEFAULT_VOLATILE_FIELDS)
        return self._matcher

    def replay_client(self, provider: str) -> Any:
        """The HTTP client replayed agents share: made once per run, not once per test.

        Replay never reaches the network (vcrpy answers at the transport), so one
        client, and one TLS context, serve every test; they are closed at the end.
        """
        kind = "httpx2" if provider == "anthropic" else "httpx"
        client = self._replay_clients.get(kind)
        if client is None:
            import ssl

            context = ssl.create_default_context()
            if kind == "httpx2":
                import httpx2

                client = httpx2.Client(verify=context, trust_env=False)
            else:
                import httpx

                client = httpx.Client(verify=context, trust_env=False)
            self._replay_clients[kind] = client
        return client

    def pytest_unconfigure(self, config: pytest.Config) -> None:
        for client in self._replay_clients.values():
            client.close()
        self._replay_clients.clear()

    def default_policy(self) -> DomainPolicy | None:
        if not self._default_policy_read:
            self._default_policy_read = True
            allow = self.config.getini("agentloop_allow_domains")
            block = self.config.getini("agentloop_block_domains")
            if allow and block:
                raise pytest.UsageError(
                    "agentloop_allow_domains and agentloop_block_domains are both set in the "
                    "ini file; a policy is an allowlist or a blocklist. Keep one."
                )
            if allow or block:
                from agentloop_tools.web import DomainPolicy

                try:
                    built = DomainPolicy.allow(allow) if allow else DomainPolicy.block(block)
                except (ValueError, TypeError) as error:
                    key = "agentloop_allow_domains" if allow else "agentloop_block_domains"
                    raise pytest.UsageError(f"ini key {key}: {error}") from None
                self._default_policy = built
                self._policy_origin = "the ini file"
            else:
                self._default_policy = self._pyproject_policy()
        return self._default_policy

    def _pyproject_policy(self) -> DomainPolicy | None:
        """[tool.agentloop-tools] in the rootdir's pyproject.toml: the list the CLI uses."""
        from agentloop_tools._config import ConfigError, policy_from, read_table

        pyproject = self.config.rootpath / "pyproject.toml"
        if not pyproject.is_file():
            return None
        try:
            table = read_table(pyproject)
            if table is None:
                return None
            self._policy_origin = f"{pyproject.name} [tool.agentloop-tools]"
            return policy_from(table, f"{pyproject} [tool.agentloop-tools]")
        except ConfigError as error:
            raise pytest.UsageError(str(error)) from None

    def _policy_summary(self) -> str:
        allow = self.config.getini("agentloop_allow_domains")
        block = self.config.getini("agentloop_block_domains")
        if allow:
            return f"allow {len(allow)} domain(s)"
        if block:
            return f"block {len(block)} domain(s)"
        if (self.config.rootpath / "pyproject.toml").is_file():
            policy = self.default_policy()
            if policy is not None:
                return f"{policy.mode} {len(policy.domains)} domain(s) from pyproject.toml"
        return "none"

    def _audit(self, item: pytest.Item) -> None:
        __tracebackhide__ = True
        evidence = _evidence_of(item)
        if evidence is None or not evidence.transcripts:
            return
        marker = item.stash.get(_MARKER_POLICY, None)
        policy = marker or self.default_policy()
        if policy is None:
            return
        from agentloop_tools.testing._assertions import violation_report

        found = [
            (index, transcript.messages, violation)
            for index, transcript in enumerate(evidence.transcripts)
            for violation in policy.audit(transcript)
        ]
        item.stash[_VIOLATIONS] = len(found)
        if found:
            source = "the domain_policy marker" if marker else self._policy_origin
            report = violation_report(found, policy, several=len(evidence.transcripts) > 1)
            pytest.fail(f"{report}\n(policy from {source})", pytrace=False)


# --- fixtures ------------------------------------------------------------------


@pytest.fixture
def agentloop_evidence(request: pytest.FixtureRequest) -> AgentloopEvidence:
    """What this test's agents did: .transcripts, .sources(), .citations(), .audit(policy)."""
    from agentloop_tools.testing import AgentloopEvidence

    evidence = AgentloopEvidence()
    request.node.stash[_EVIDENCE] = evidence
    return evidence


@pytest.fixture
def agentloop_env(request: pytest.FixtureRequest) -> dict[str, str]:
    """The environment for Agent.from_env: os.environ, with placeholder keys when replaying."""
    session = _session(request.config)
    state = cassette_state(request)
    env = dict(os.environ)
    if session.provider:
        env["LLM_PROVIDER"] = session.provider
    from agentloop_tools._secrets import CREDENTIAL_VARIABLES, placeholder

    for variable in CREDENTIAL_VARIABLES:
        # Recording keeps real keys; a missing one gets a placeholder, which only a
        # scripted provider accepts (the guard stops it reaching a real one).
        if state != "recording" or not env.get(variable):
            env[variable] = placeholder(variable)
    if state == "replaying":
        _skip_backoff(request)
    else:
        _guard_provider_hosts(request, state)
    return env


@pytest.fixture
def agentloop_agent(
    request: pytest.FixtureRequest,
    agentloop_env: dict[str, str],
    agentloop_evidence: AgentloopEvidence,
) -> Iterator[AgentFactory]:
    """Build agentloop Agents from agentloop_env; each conversation is captured as evidence."""
    session = _session(request.config)
    state = cassette_state(request)
    agents: list[Agent] = []

    def build(
        tools: Sequence[ToolSpec | HostedTool] = (),
        *,
        provider: str | None = None,
        model: str | None = None,
        **agent_kwargs: Any,
    ) -> Agent:
        __tracebackhide__ = True
        from agentloop import Agent, MultiObserver

        env = dict(agentloop_env)
        if provider is not None:
            if provider not in PROVIDERS:
                raise pytest.UsageError(
                    f"agentloop_agent(provider={provider!r}): unknown provider; use one of "
                    f"{', '.join(PROVIDERS)}."
                )
            env["LLM_PROVIDER"] = provider
        chosen = env.get("LLM_PROVIDER") or "openrouter"
        if model is not None:
            env[MODEL_VARIABLES.get(chosen, "LLM_MODEL")] = model
        http_client = agent_kwargs.pop("http_client", None)
        scripted = bool(getattr(http_client, "agentloop_scripted", False))
        if state == "none" and http_client is None:
            pytest.fail(_no_cassette_message(request), pytrace=False)
        if state == "recording" and scripted:
            from agentloop_tools._secrets import CREDENTIAL_VARIABLES, placeholder

            # A scripted provider needs no key, and a real one must not be sent to it.
            env.update({name: placeholder(name) for name in CREDENTIAL_VARIABLES})
        elif state == "recording":
            _require_keys(chosen, request)
        if state == "replaying" and http_client is None:
            http_client = session.replay_client(chosen)
        user_observer = agent_kwargs.pop("observer", None)
        observer = (
            agentloop_evidence.observer
            if user_observer is None
            else MultiObserver(user_observer, agentloop_evidence.observer)
        )
        agent = Agent.from_env(
            env, list(tools), observer=observer, http_client=http_client, **agent_kwargs
        )
        agents.append(agent)
        return agent

    try:
        yield build
    finally:
        for agent in agents:
            agent.close()


# --- helpers -------------------------------------------------------------------

_EVIDENCE = pytest.StashKey["AgentloopEvidence"]()
_VIOLATIONS = pytest.StashKey[int]()
_MARKER_POLICY = pytest.StashKey["DomainPolicy | None"]()


def _session(config: pytest.Config) -> AgentloopSession:
    plugin = config.pluginmanager.get_plugin("agentloop-tools-session")
    assert isinstance(plugin, AgentloopSession)
    return plugin


def in_scope(item: pytest.Item) -> bool:
    """Whether this plugin's cassette rules apply: the test uses its fixtures or marker."""
    names = getattr(item, "fixturenames", ())
    return (
        bool(OUR_FIXTURES.intersection(names))
        or item.get_closest_marker("domain_policy") is not None
    )


def cassette_state(request: pytest.FixtureRequest) -> CassetteState:
    """Whether this test records a cassette, replays one, or has none."""
    if request.node.get_closest_marker("vcr") is None:
        return "none"
    try:
        cassette = request.getfixturevalue("vcr")
    except pytest.FixtureLookupError:
        raise pytest.UsageError(
            "@pytest.mark.vcr needs pytest-recording: pip install "
            "'based-models-agentloop-tools[testing]'"
        ) from None
    if cassette is None:
        return "none"  # --disable-recording
    if cassette.write_protected:
        return "replaying"
    _refuse_recording_here_in_ci(request, cassette)
    return "recording"


def _hooks(value: Any) -> list[Callable[[Any], Any]]:
    if value is None:
        return []
    if callable(value):
        return [value]
    return list(value)


def _default_provider(config: pytest.Config) -> str | None:
    provider = config.getoption("agentloop_provider") or config.getini("agentloop_provider")
    if provider and provider not in PROVIDERS:
        raise pytest.UsageError(
            f"ini key agentloop_provider = {provider!r} is not a provider agentloop knows; "
            f"use one of {', '.join(PROVIDERS)}."
        )
    return str(provider) if provider else None


def _ci() -> bool:
    value = os.environ.get("CI", "")
    return bool(value) and value.lower() not in ("0", "false", "no")


def _refuse_recording_in_ci(config: pytest.Config) -> None:
    record_mode = config.getoption("record_mode", default=None)
    if (
        record_mode not in (None, "none")
        and _ci()
        and not config.getoption("agentloop_record_in_ci")
    ):
        raise pytest.UsageError(
            f"--record-mode={record_mode} while CI is set: recording in CI would call the "
            "provider with real keys and rewrite cassettes. Record on your machine and commit "
            f"the cassettes, or pass {RECORD_IN_CI_OPTION} if this is really intended."
        )


def _refuse_recording_here_in_ci(request: pytest.FixtureRequest, cassette: Any) -> None:
    if _ci() and not request.config.getoption("agentloop_record_in_ci"):
        exists = os.path.exists(cassette._path)
        why = "its cassette is missing" if not exists else "its record mode allows recording"
        pytest.fail(
            f"agentloop-tools: this test would record ({why}) while CI is set.\n"
            f"Cassette: {cassette._path}\n"
            "Record it on your machine and commit it:\n"
            f"  {_rerun_command(request, 'once')}\n"
            f"or pass {RECORD_IN_CI_OPTION} if recording in CI is intended.",
            pytrace=False,
        )


def _rerun_command(request: pytest.FixtureRequest, record_mode: str) -> str:
    return f"pytest {shlex.quote(request.node.nodeid)} --record-mode={record_mode}"


def _require_keys(provider: str, request: pytest.FixtureRequest) -> None:
    missing = [name for name in KEY_VARIABLES.get(provider, ()) if not os.environ.get(name)]
    if missing:
        raise pytest.UsageError(
            f"recording {request.node.nodeid} with provider {provider!r} needs "
            f"{' and '.join(missing)} in the environment. Set it, or record from a "
            f"scripted provider (agentloop_tools.testing.ScriptedProvider); see {DOCS}."
        )


def _no_cassette_message(request: pytest.FixtureRequest) -> str:
    return (
        "agentloop-tools: this test builds an agent but has no cassette, so it would call "
        "the provider live.\n"
        "Mark it to replay a recorded conversation:\n"
        "  @pytest.mark.vcr\n"
        "then record the cassette once with real keys:\n"
        f"  {_rerun_command(request, 'once')}\n"
        "(or pass http_client= to agentloop_agent to use your own transport). "
        f"See {DOCS}."
    )


def _guard_provider_hosts(request: pytest.FixtureRequest, state: CassetteState) -> None:
    """Stop a request to a real provider before it leaves: without a cassette, or when
    recording with a placeholder key. Scripted providers (in-memory) are not affected."""
    monkeypatch = request.getfixturevalue("monkeypatch")

    def refusal(http_request: Any) -> str | None:
        host = http_request.url.host
        if host not in PROVIDER_HOSTS and not host.endswith(PROVIDER_HOST_SUFFIXES):
            return None
        if state == "none":
            return _no_cassette_message(request)
        from agentloop_tools._secrets import PLACEHOLDER_PREFIX

        credentials = " ".join(str(value) for value in http_request.headers.values())
        if PLACEHOLDER_PREFIX in credentials:
            variable = next(
                (name for name in KEY_VARIABLES.get(_provider_of(host), ())),
                "the provider's key",
            )
            return (
                f"agentloop-tools: recording {request.node.nodeid} would send a placeholder key "
                f"to {host}: set {variable} in the environment to record live, or record "
                f"from a scripted provider; see {DOCS}."
            )
        return None

    def guarded(original: Callable[..., Any]) -> Callable[..., Any]:
        def handle_request(transport: Any, http_request: Any) -> Any:
            message = refusal(http_request)
            if message is not None:
                pytest.fail(message, pytrace=False)
            return original(transport, http_request)

        return handle_request

    import httpx

    monkeypatch.setattr(
        httpx.HTTPTransport, "handle_request", guarded(httpx.HTTPTransport.handle_request)
    )
    try:
        import httpx2
    except ImportError:  # pragma: no cover - the anthropic extra is not installed
        return
    monkeypatch.setattr(
        httpx2.HTTPTransport, "handle_request", guarded(httpx2.HTTPTransport.handle_request)
    )


def _provider_of(host: str) -> str:
    if host == "api.anthropic.com":
        return "anthropic"
    if host == "openrouter.ai":
        return "openrouter"
    if host.endswith(PROVIDER_HOST_SUFFIXES):
        return "modal"
    return "openai"


class _NoSleep:
    """Stands in for ``time`` in agentloop's retry loop during replay: no backoff waits."""

    @staticmethod
    def sleep(seconds: float) -> None:
        return None


def _skip_backoff(request: pytest.FixtureRequest) -> None:
    import agentloop.retry

    request.getfixturevalue("monkeypatch").setattr(agentloop.retry, "time", _NoSleep)


def _evidence_of(item: pytest.Item) -> AgentloopEvidence | None:
    return item.stash.get(_EVIDENCE, None)


def _marker_policy(item: pytest.Item) -> DomainPolicy | None:
    marker = item.get_closest_marker("domain_policy")
    if marker is None:
        return None
    from agentloop_tools.web import DomainPolicy

    where = f"@pytest.mark.domain_policy on {item.nodeid}"
    if marker.args:
        raise pytest.UsageError(
            f"{where}: pass keyword arguments only (allow=[...], block=[...] or policy=...)."
        )
    unknown = set(marker.kwargs) - {"allow", "block", "policy"}
    given = [key for key in ("allow", "block", "policy") if marker.kwargs.get(key) is not None]
    if unknown or len(given) != 1:
        raise pytest.UsageError(
            f"{where}: pass exactly one of allow=[...], block=[...] or policy=DomainPolicy"
            + (f"; unknown: {', '.join(sorted(unknown))}" if unknown else "")
            + "."
        )
    key = given[0]
    value = marker.kwargs[key]
    if key == "policy":
        if not isinstance(value, DomainPolicy):
            raise pytest.UsageError(f"{where}: policy= must be a DomainPolicy, got {value!r}.")
        return value
    try:
        return DomainPolicy.allow(value) if key == "allow" else DomainPolicy.block(value)
    except (ValueError, TypeError) as error:
        raise pytest.UsageError(f"{where}: {error}") from None


def _check_unused_interactions(item: pytest.Item) -> None:
    __tracebackhide__ = True
    if item.get_closest_marker("vcr") is None:
        return
    cassette = getattr(item, "funcargs", {}).get("vcr")
    if cassette is None or not cassette.write_protected or cassette.all_played:
        return
    from agentloop_tools.cassettes import summary

    unused = [index for index in range(len(cassette)) if cassette.play_counts[index] == 0]
    lines = [
        f"agentloop-tools: the test passed but left {len(unused)} of {len(cassette)} recorded "
        "interaction(s) unused:",
        *(f"  - interaction {i}: {summary(cassette.requests[i])}" for i in unused[:10]),
        *([f"  ... and {len(unused) - 10} more"] if len(unused) > 10 else []),
        "",
        "The agent made fewer requests than when the cassette was recorded, so the cassette "
        "no longer describes this test. If the change is intended, re-record it:",
        f"  pytest {shlex.quote(item.nodeid)} --record-mode=rewrite",
        f"Cassette: {cassette._path}",
    ]
    pytest.fail("\n".join(lines), pytrace=False)


@pytest.fixture(autouse=True)
def _agentloop_cassette_guard(request: pytest.FixtureRequest) -> Iterator[None]:
    """For this plugin's tests with a cassette: turn a replay miss into a clear failure.

    vcrpy's miss is an ordinary exception, which the provider SDK and agentloop's
    retry policy swallow into "Connection error" after seconds of backoff. This
    raises pytest's own failure instead, which nothing catches.
    """
    if request.node.get_closest_marker("vcr") is None or not in_scope(request.node):
        yield
        return
    cassette = request.getfixturevalue("vcr")
    if cassette is None:
        yield
        return
    session = _session(request.config)
    can_play = cassette.can_play_response_for

    def can_play_or_fail(live_request: Any) -> bool:
        if can_play(live_request):
            return True
        if cassette.write_protected and cassette.filter_request(live_request) is not None:
            pytest.fail(_miss_message(request, cassette, live_request, session), pytrace=False)
        return False

    cassette.can_play_response_for = can_play_or_fail
    yield


def _miss_message(
    request: pytest.FixtureRequest, cassette: Any, live_request: Any, session: AgentloopSession
) -> str:
    from agentloop_tools._secrets import redact
    from agentloop_tools.cassettes import closest, describe_difference, summary

    path = cassette._path
    scrubbed = cassette.filter_request(live_request)
    if not os.path.exists(path) or len(cassette) == 0:
        return redact(
            f"agentloop-tools: no cassette for this test at {path}.\n"
            f"The agent sent: {summary(scrubbed)}\n"
            "Record it once with real keys in the environment:\n"
            f"  {_rerun_command(request, 'once')}\n"
            f"or record it from a scripted provider (see {DOCS}, 'Recording without a "
            "live provider')."
        )
    index = closest(scrubbed, cassette.requests, session.matcher)
    lines = [
        "agentloop-tools: this request is not in the cassette, so it cannot be replayed.",
        f"  {summary(scrubbed)}",
        "",
    ]
    if index is not None:
        lines.append(f"Closest recorded request (interaction {index} of {len(cassette)}):")
        lines.append(f"  {summary(cassette.requests[index])}")
        lines += [
            f"  {line}"
            for line in describe_difference(scrubbed, cassette.requests[index], session.matcher)
        ]
        lines.append("")
    lines += [
        "The agent's request changed since the cassette was recorded (prompt, model, tools or "
        "history). If the change is intended, re-record this test:",
        f"  {_rerun_command(request, 'rewrite')}",
        f"Cassette: {path}",
    ]
    return redact("\n".join(lines))
