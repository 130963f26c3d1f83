"""The run's state, and what happens to each test of the plugin's between pytest's hooks.

The session reads the run's configuration once, at its start; reads each test's marker
when the tests are collected; keeps the test being run for pytest-recording's hook
(which is not given it); asks :mod:`~agentloop_tools._plugin.gate` for every verdict;
and hands each test report to the run's report. ``hooks`` forwards pytest's hooks here.
"""

from __future__ import annotations

from collections.abc import Generator
from typing import TYPE_CHECKING, Any

import pytest

from agentloop_tools._plugin import messages
from agentloop_tools._plugin.budget import (
    SPENT,
    budget_for,
    budget_marker_near_miss,
    budgets,
    read_test_budget,
)
from agentloop_tools._plugin.drift import setting as drift_setting
from agentloop_tools._plugin.failures import fail
from agentloop_tools._plugin.markers import carries, markers_are_ours
from agentloop_tools._plugin.policies import (
    Layer,
    Marker,
    PolicyLayers,
    cassette_age,
    default_policy,
    default_provider,
    read_marker,
    refuse_unknown_ini_keys,
    refused_from,
)
from agentloop_tools._plugin.run_report import (
    RunReport,
    not_audited_property,
    prepare_report_paths,
    record_of,
    record_property,
    replaced_property,
    teardown_property,
)
from agentloop_tools._plugin.scope import (
    BUDGET_MARKER_NAME,
    EVIDENCE,
    FAULTS_MARKER_NAME,
    FAULTS_MET,
    FROM_SCRIPTS_OPTION,
    GUARD_FIXTURE,
    MARKER_NAME,
    RECORD_IN_CI_OPTION,
    WEB_FAULTS,
    in_scope,
    near_marker,
    registered_markers,
)

if TYPE_CHECKING:
    from agentloop_tools._config import ProjectPolicy
    from agentloop_tools._plugin import gate
    from agentloop_tools._plugin.network import ReplayClients
    from agentloop_tools.cassettes import BodyMatcher
    from agentloop_tools.testing import AgentloopEvidence
    from agentloop_tools.web import DomainPolicy


MARKER = pytest.StashKey[Marker]()
# gate is imported when a test runs, not when a marked suite is collected.
_VERDICT = pytest.StashKey["gate.Verdict"]()
_MARKER_PROBLEM = pytest.StashKey[str]()

# What a test body may end with that the gate still judges: not KeyboardInterrupt,
# SystemExit or pytest.exit, which end the run.
_BODY_ENDINGS = (Exception, pytest.skip.Exception, pytest.fail.Exception)


class AgentloopSession:
    """The run's state; each method is one moment of a test, called by ``hooks``."""

    def __init__(self, config: pytest.Config) -> None:
        self.config = config
        # A mistyped key would otherwise be one warning and a run with no policy.
        refuse_unknown_ini_keys(config)
        self.provider = default_provider(config)
        # Read now: a bad list stops the run before any test, never half-way through it.
        # (Recording in CI is refused per test, for the tests that use the plugin: a
        # project that only uses pytest-recording must run as it would without us.)
        self.default: ProjectPolicy = default_policy(config)
        # Where refused attempts were set to fail for the whole run (None: report).
        self.refused_from = refused_from(config, self.default)
        self.max_cassette_age, self.cassette_age_action = cassette_age(config)
        self.default_budget, self.record_cap = budgets(config)
        prepare_report_paths(config)
        self._replay_clients: ReplayClients | None = None  # made for the first agent
        self.report = RunReport(config)
        # Read now: a bad agentloop_drift stops the run before any test.
        self.report.drift_setting = drift_setting(config)
        self._matcher: BodyMatcher | None = None
        self._current: pytest.Item | None = None

    # Start of the run ------------------------------------------------------------

    def configured(self) -> bool:
        """Whether the run configures the plugin (not only uses its fixtures or marker)."""
        return (
            self.default.policy is not None
            or self.provider is not None
            or self.report.wanted()
            or bool(self.config.getoption(RECORD_IN_CI_OPTION.dest))
            or bool(self.config.getoption(FROM_SCRIPTS_OPTION.dest))
            or self.refused_from is not None
            or self.report.drift_setting[1] is not None
            or self.default_budget is not None
            or self.record_cap is not None
        )

    def header(self) -> list[str] | None:
        """One line when the plugin is configured (two under -v); nothing otherwise."""
        if not self.configured():
            return None
        record_mode = self.config.getoption("record_mode", default=None) or "none"
        refused = ", refused attempts=fail" if self.refused_from is not None else ""
        drift = self.report.drift_setting[0]
        refused += f", drift={drift}" if drift != "report" else ""
        if self.default_budget is not None:
            refused += f", budget={self.default_budget.shown()}"
        if self.record_cap is not None:
            refused += f", record budget={self.record_cap.shown()}"
        lines = [
            f"agentloop-tools: provider={self.provider or 'from LLM_PROVIDER'}, "
            f"record-mode={record_mode}, default policy={self.default.summary()}{refused}"
        ]
        if self.config.getoption("verbose", 0) > 0:
            read = ", ".join(str(path) for path in self.default.read) or "no configuration file"
            lines.append(f"agentloop-tools: project policy read from {read}")
        return lines

    def collect(self, items: list[pytest.Item]) -> None:
        """Read every marker before any test runs: one bad marker stops the run.

        A marker near-miss (``domian_policy``) stops it too. A test that uses the plugin
        gets its cassette guard (and, when marked, the evidence fixture): those are
        attached here, test by test, never to the rest of the project's tests.
        """
        problems: list[str] = []
        registered = registered_markers(self.config)
        near: dict[str, str | None] = {}  # by marker name: a suite has few names, many tests
        for item in items:
            names: set[str] = set()  # every marker name on its path: one walk, read below
            for mark in item.iter_markers():
                names.add(mark.name)
                if mark.name not in near:
                    near[mark.name] = near_marker(mark.name, registered)
                if near[mark.name] is not None:
                    if near[mark.name] == FAULTS_MARKER_NAME:
                        problem = messages.faults_marker_near_miss(item.nodeid, mark.name)
                    elif near[mark.name] == BUDGET_MARKER_NAME:
                        problem = budget_marker_near_miss(item.nodeid, mark.name)
                    else:
                        problem = messages.marker_near_miss(item.nodeid, mark.name, MARKER_NAME)
                    problems.append(problem)
                    item.stash[_MARKER_PROBLEM] = problem
                    break
            if _MARKER_PROBLEM in item.stash:
                continue
            unreadable = self._read_marker(item, names)
            if unreadable is not None:
                problems.append(unreadable)
        problems = list(dict.fromkeys(problems))
        if problems and not hasattr(self.config, "workerinput"):
            raise pytest.UsageError("\n".join(problems))
        # An xdist worker's usage error is lost in an INTERNALERROR: there each bad test
        # fails at setup with the message instead, and the run fails.

    def _read_marker(self, item: pytest.Item, names: set[str] | None = None) -> str | None:
        """Attach the guard to a test that uses the plugin, and read its marker; the problem.
        ``names``: the marker names on its path when collection has them (see ``carries``)."""
        if not in_scope(item, names):
            return None
        if isinstance(item, pytest.Function) and GUARD_FIXTURE not in item.fixturenames:
            item.fixturenames.insert(0, GUARD_FIXTURE)  # set up before its fixtures
        if carries(item, FAULTS_MARKER_NAME, names) and WEB_FAULTS not in item.stash:
            from agentloop_tools._plugin.faults import read_faults

            try:
                if markers_are_ours(item, FAULTS_MARKER_NAME):
                    item.stash[WEB_FAULTS] = read_faults(item)
            except pytest.UsageError as error:
                item.stash[_MARKER_PROBLEM] = str(error)
                return str(error)
        marked = carries(item, BUDGET_MARKER_NAME, names)
        problem = read_test_budget(item, self.default_budget, marked)
        if problem is not None:
            item.stash[_MARKER_PROBLEM] = problem
            return problem
        if not carries(item, MARKER_NAME, names) or MARKER in item.stash:
            return None
        try:
            if not markers_are_ours(item, MARKER_NAME):
                return None  # the project's own domain_policy marker: not ours to read
            item.stash[MARKER] = read_marker(item)
        except pytest.UsageError as error:
            item.stash[_MARKER_PROBLEM] = str(error)
            return str(error)
        if isinstance(item, pytest.Function) and "agentloop_evidence" not in item.fixturenames:
            item.fixturenames.append("agentloop_evidence")
        return None

    # Each test ---------------------------------------------------------------------

    def setup(self, item: pytest.Item) -> None:
        """Before a test's fixtures: a marker problem fails it; a late item is read now."""
        self._current = item  # pytest_recording_configure is not given the item
        # An item made after collection (another plugin's) is read here.
        problem = item.stash.get(_MARKER_PROBLEM, None) or self._read_marker(item)
        if problem is not None:
            pytest.fail(problem, pytrace=False)

    def configure_vcr(self, vcr: Any) -> None:
        """pytest-recording built a VCR for the current test: make its cassettes safe."""
        if self._current is None or not in_scope(self._current):
            return
        from agentloop_tools._plugin.cassette import BEFORE, RECORDING, configure_vcr

        recording = self.recording_of(self._current)
        self._current.stash[RECORDING] = recording
        configure_vcr(
            vcr,
            self.matcher,
            self.config.getoption("record_mode", default=None),
            self._current.stash.get(BEFORE, None),
            recording,
        )

    def recording_of(self, item: pytest.Item) -> Any:
        """A recording's id and policy, the policy worked out only if it is written."""
        from agentloop_tools.cassettes._provenance import Recording

        return Recording(test=item.nodeid, policy_from=lambda: self._policy_facts(item))

    def _policy_facts(self, item: pytest.Item) -> dict[str, Any]:
        """The markers' rules, the project's by origin and fingerprint."""
        from agentloop_tools.cassettes._provenance import policy_facts

        marker = item.stash.get(MARKER, None)
        replace = marker is not None and marker.replace
        default = self.default
        project = (default.policy, default.origin) if default.policy is not None else None
        refused = next(
            (
                mark.kwargs["refused_attempts"]
                for mark in (item.iter_markers(MARKER_NAME) if marker is not None else ())
                if "refused_attempts" in mark.kwargs
            ),
            None,
        )
        layers = [(layer.policy, layer.origin) for layer in marker.layers] if marker else []
        return policy_facts(layers, project, replace=replace, refused_attempts=refused)

    def call(self, item: pytest.Item) -> Generator[None, object, object]:
        """Around the test body: the gate's verdict before it and after it.

        Each verdict is reported as a failure of the test itself, not as an error. A body
        that ends in ``pytest.skip()``, ``pytest.xfail()`` or a failure after its agent
        ran is audited all the same: a breach is never hidden behind it.
        """
        __tracebackhide__ = True
        from agentloop_tools._plugin import gate

        rules = self.rules(item)
        if rules is not None:
            self._fail_on(item, gate.judge(item, rules, "before", None))
        body: BaseException | None = None
        result: object = None
        try:
            result = yield
        except _BODY_ENDINGS as ended:
            from agentloop_tools._plugin.agents import explain_no_backend

            body = explain_no_backend(item, ended)
        # Read again: a body that asked for a fixture of ours by name is ours now.
        rules = self.rules(item)
        if rules is not None:
            self._fail_on(item, gate.judge(item, rules, "call", evidence_of(item), body))
        if body is not None:
            raise body
        return result

    def teardown(self, item: pytest.Item) -> None:
        """After fixtures are torn down (the cassette saved): a refused cassette fails."""
        __tracebackhide__ = True
        from agentloop_tools._plugin import gate

        self._current = None
        rules = self.rules(item)
        if rules is not None:
            self._fail_on(item, gate.judge(item, rules, "teardown", evidence_of(item)))

    def _fail_on(self, item: pytest.Item, verdict: gate.Verdict | None) -> None:
        __tracebackhide__ = True
        if verdict is not None:
            item.stash[_VERDICT] = verdict
            fail(verdict.message, verdict.kind)

    def rules(self, item: pytest.Item) -> gate.Rules | None:
        """What the gate holds a test to; None for a test the plugin leaves alone.

        A plain vcr test under the project's policy is held to it too: its recorded
        model traffic is evidence the plugin never saw, so the policy would check nothing.
        """
        from agentloop_tools._plugin import gate

        ours = in_scope(item)
        if not ours and (self.default.policy is None or "vcr" not in _funcargs(item)):
            return None
        policy, origin = self.policy_for(item)
        marker = item.stash.get(MARKER, None)
        # "fail" anywhere on the test's path or in the run wins: it narrows, never lifts.
        refused_from = self.refused_from or (marker.refused_from if marker is not None else None)
        return gate.Rules(
            ours=ours,
            marker=marker,
            policy=policy,
            origin=origin,
            project_origin=self.default.origin if self.default.policy is not None else None,
            record_in_ci=bool(self.config.getoption(RECORD_IN_CI_OPTION.dest)),
            refused_attempts="fail" if refused_from is not None else "report",
            refused_from=refused_from,
            budget=budget_for(self.default_budget, item) if ours else None,
        )

    def report_of(
        self, item: pytest.Item, call: pytest.CallInfo[None], report: pytest.TestReport
    ) -> None:
        """Attach the test's evidence to its report, so xdist carries it to the controller."""
        from agentloop_tools._plugin import gate

        verdict = item.stash.get(_VERDICT, None)
        if call.when == "call" and verdict is not None and verdict.beats_xfail and report.skipped:
            # An xfail marker expects the test's own failure, not the plugin's: a breach
            # must not read as "expected to fail" (or turn a strict XPASS green).
            report.outcome = "failed"
            if hasattr(report, "wasxfail"):
                del report.wasxfail
        if in_scope(item):  # before anything reads the report's text
            from agentloop_tools._plugin.masking import clean_report

            clean_report(report, _funcargs(item).get("agentloop_env"))
        if call.when == "teardown" and item.stash.get(gate.LATE_BREACH, False):
            # A conversation teardown ran: the test's record is rebuilt with it.
            evidence = evidence_of(item)
            if evidence is not None:
                error = call.excinfo.value if call.excinfo is not None else None
                record = self._record(item, evidence, report, error)
                record["outcome"] = "error"
                report.user_properties.append(record_property(record))
        if call.when == "teardown" and report.failed and self.report.wanted():
            # A refused cassette fails at teardown, after the call's record left.
            error = call.excinfo.value if call.excinfo is not None else None
            report.user_properties.append(teardown_property(item, report, error))
        if call.when == "teardown" and in_scope(item):
            from agentloop_tools._plugin.drift import drift_property

            drift = drift_property(item)  # the cassette is saved by now
            if drift is not None:
                report.user_properties.append(drift)
        if call.when != "call":
            return
        if item.stash.get(gate.NOT_AUDITED, False):
            report.user_properties.append(not_audited_property(item))
        marker = item.stash.get(MARKER, None)
        if marker is not None and marker.replace:
            report.user_properties.append(replaced_property(item, self.default.origin))
        evidence = evidence_of(item)
        if evidence is not None and evidence.transcripts:
            error = call.excinfo.value if call.excinfo is not None else None
            report.user_properties.append(
                record_property(self._record(item, evidence, report, error))
            )

    def _record(
        self,
        item: pytest.Item,
        evidence: AgentloopEvidence,
        report: pytest.TestReport,
        error: BaseException | None,
    ) -> dict[str, Any]:
        """The test's record: in full when a report file is asked for, counts otherwise."""
        from agentloop_tools._plugin import gate

        policy, origin = self.policy_for(item)
        full = self.report.wanted()
        record = record_of(item, evidence, report, policy, origin, full=full, error=error)
        record["violation_count"] = item.stash.get(gate.VIOLATIONS, 0)
        record["refused_count"] = item.stash.get(gate.REFUSED, 0)
        rules = self.rules(item)
        record["refused_attempts"] = rules.refused_attempts if rules is not None else "report"
        spent = item.stash.get(SPENT, None)
        if spent is not None:
            record["budget"] = spent
        faults = item.stash.get(WEB_FAULTS, None)
        if faults is not None:
            from agentloop_tools._plugin.faults import record_faults

            record["web_faults"] = record_faults(faults, item.stash.get(FAULTS_MET, []))
        marker = item.stash.get(MARKER, None)
        if marker is not None and marker.replace:
            record["replace"] = True
        if full and isinstance(policy, PolicyLayers):
            record["policy_layers"] = [
                {"mode": layer.mode, "domains": list(layer.domains), "from": origin}
                for layer, origin in policy.layers
            ]
        return record

    # End of the run ------------------------------------------------------------------

    def finish(self, session: pytest.Session) -> None:
        """The report files, and a failed run when a retried attempt breached."""
        if hasattr(self.config, "workerinput"):
            return  # xdist: the controller writes, and decides the exit status
        self.report.write_files()
        failing = self.report.breached() or self.report.drift_fails()
        if failing and session.exitstatus == pytest.ExitCode.OK:
            session.exitstatus = pytest.ExitCode.TESTS_FAILED

    def close(self) -> None:
        if self._replay_clients is not None:
            self._replay_clients.close()
        if self.record_cap is not None:
            self.record_cap.close()

    # Services for the fixtures --------------------------------------------------------

    @property
    def replay_clients(self) -> ReplayClients:
        """The HTTP clients replayed agents share (not loaded to collect a marked suite)."""
        if self._replay_clients is None:
            from agentloop_tools._plugin.network import ReplayClients

            self._replay_clients = ReplayClients()
        return self._replay_clients

    @property
    def matcher(self) -> BodyMatcher:
        if self._matcher is None:
            from agentloop_tools.cassettes import BodyMatcher
            from agentloop_tools.cassettes._matching import DEFAULT_VOLATILE_FIELDS

            configured = self.config.getini("agentloop_volatile_fields")
            self._matcher = BodyMatcher(configured or DEFAULT_VOLATILE_FIELDS)
        return self._matcher

    def policy_for(self, item: pytest.Item) -> tuple[DomainPolicy | None, str | None]:
        """The policy a test is audited with, and where it was written.

        Every policy on the test's path applies: its markers, closest first, then the
        project's, unless a marker says ``replace=True``. Several read as one.
        """
        marker = item.stash.get(MARKER, None)
        layers = list(marker.layers) if marker is not None else []
        if self.default.policy is not None and not (marker is not None and marker.replace):
            layers.append(Layer(self.default.policy, self.default.origin))
        if not layers:
            return None, None
        if len(layers) == 1:
            return layers[0].policy, layers[0].origin
        combined: Any = PolicyLayers(tuple(layers))  # read as a DomainPolicy by the audit
        return combined, "; ".join(layer.origin for layer in layers)


def _funcargs(item: pytest.Item) -> dict[str, Any]:
    funcargs = getattr(item, "funcargs", None)
    return funcargs if isinstance(funcargs, dict) else {}


def evidence_of(item: pytest.Item) -> AgentloopEvidence | None:
    return item.stash.get(EVIDENCE, None)
