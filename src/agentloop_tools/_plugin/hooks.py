"""Per-run state and the pytest hooks that need it.

State lives on the items (``item.stash``) and in this object, never in an attribute
that one hook sets for another to read.
"""

from __future__ import annotations

from collections.abc import Generator, Iterator
from typing import TYPE_CHECKING, Any

import pytest

from agentloop_tools._plugin import messages
from agentloop_tools._plugin.failures import fail, kind_of
from agentloop_tools._plugin.network import ReplayClients
from agentloop_tools._plugin.policies import (
    Marker,
    default_policy,
    marker_near_miss,
    read_marker,
    refuse_unknown_ini_keys,
)
from agentloop_tools._plugin.run_report import (
    RunReport,
    not_audited_property,
    prepare_report_paths,
    record_of,
    record_property,
    teardown_property,
)
from agentloop_tools._plugin.scope import (
    EVIDENCE,
    FROM_SCRIPTS_OPTION,
    GUARD_FIXTURE,
    MARKER_NAME,
    RECORD_IN_CI_OPTION,
    in_scope,
)

if TYPE_CHECKING:
    from agentloop_tools._config import ProjectPolicy
    from agentloop_tools.cassettes import BodyMatcher
    from agentloop_tools.testing import AgentloopEvidence
    from agentloop_tools.web import DomainPolicy


MARKER = pytest.StashKey[Marker]()
_VIOLATIONS = pytest.StashKey[int]()
_NOT_AUDITED = pytest.StashKey[bool]()
_GATE_FAILED = pytest.StashKey[bool]()
_MARKER_PROBLEM = pytest.StashKey[str]()


class AgentloopSession:
    """Per-run state and the hooks that need it."""

    def __init__(self, config: pytest.Config) -> None:
        self.config = config
        # A mistyped key would otherwise be one warning and a run with no policy.
        refuse_unknown_ini_keys(config)
        self.provider = _default_provider(config)
        # Read now: a bad list stops the run before any test, never half-way through it.
        # (Recording in CI is refused per test, for the tests that use the plugin: a
        # project that only uses pytest-recording must run as it would without us.)
        self.default: ProjectPolicy = default_policy(config)
        self.max_cassette_age, self.cassette_age_action = _cassette_age(config)
        prepare_report_paths(config)
        self.replay_clients = ReplayClients()
        self.report = RunReport(config)
        self._matcher: BodyMatcher | None = None
        self._current: pytest.Item | None = None

    # Start of the run ------------------------------------------------------------

    def pytest_report_header(self, config: pytest.Config) -> list[str] | None:
        """One line when the plugin is configured, or under -v; nothing otherwise."""
        configured = (
            self.default.policy is not None
            or self.provider is not None
            or self.report.wanted()
            or bool(config.getoption(RECORD_IN_CI_OPTION.dest))
            or bool(config.getoption(FROM_SCRIPTS_OPTION.dest))
        )
        if not configured and config.getoption("verbose", 0) <= 0:
            return None
        record_mode = config.getoption("record_mode", default=None) or "none"
        lines = [
            f"agentloop-tools: provider={self.provider or 'from LLM_PROVIDER'}, "
            f"record-mode={record_mode}, default policy={self.default.summary()}"
        ]
        if config.getoption("verbose", 0) > 0:
            read = ", ".join(str(path) for path in self.default.read) or "no configuration file"
            lines.append(f"agentloop-tools: project policy read from {read}")
        return lines

    @pytest.hookimpl(tryfirst=True)
    def pytest_collection_modifyitems(self, items: list[pytest.Item]) -> None:
        """Read every domain_policy marker before any test runs: one bad marker stops the run.

        A marker near-miss (``domian_policy``) stops it too. A test that uses the plugin
        gets its cassette guard (and, when marked, the evidence fixture): those are
        attached here, test by test, never to the rest of the project's tests.
        """
        problems = []
        registered = _registered_markers(self.config)
        near: dict[str, bool] = {}  # by marker name: a suite has few names, many tests
        for item in items:
            for mark in item.iter_markers():
                if mark.name not in near:
                    near[mark.name] = marker_near_miss(mark.name, registered)
                if near[mark.name]:
                    problem = messages.marker_near_miss(item.nodeid, mark.name, MARKER_NAME)
                    problems.append(problem)
                    item.stash[_MARKER_PROBLEM] = problem
                    break
            if _MARKER_PROBLEM in item.stash:
                continue
            _attach_guard(item)
            if item.get_closest_marker(MARKER_NAME) is None:
                continue
            try:
                item.stash[MARKER] = read_marker(item)
            except pytest.UsageError as error:
                problems.append(str(error))
                item.stash[_MARKER_PROBLEM] = str(error)
                continue
            if isinstance(item, pytest.Function) and "agentloop_evidence" not in item.fixturenames:
                item.fixturenames.append("agentloop_evidence")
        problems = list(dict.fromkeys(problems))
        if problems and not hasattr(self.config, "workerinput"):
            raise pytest.UsageError("\n".join(problems))
        # An xdist worker's usage error is lost in an INTERNALERROR: there each bad test
        # fails at setup with the message instead, and the run fails.

    # Each test ---------------------------------------------------------------------

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_setup(self, item: pytest.Item) -> None:
        self._current = item  # pytest_recording_configure is not given the item
        problem = item.stash.get(_MARKER_PROBLEM, None)
        if problem is not None:
            pytest.fail(problem, pytrace=False)
        _attach_guard(item)  # an item made after collection (another plugin's)
        if item.get_closest_marker(MARKER_NAME) is not None and MARKER not in item.stash:
            # An item made after collection (another plugin's): read its marker now.
            problem = None
            try:
                item.stash[MARKER] = read_marker(item)
            except pytest.UsageError as error:
                problem = str(error)
            if problem is not None:
                pytest.fail(problem, pytrace=False)

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_teardown(self, item: pytest.Item) -> Iterator[None]:
        """After fixtures are torn down (the cassette saved): report a refused cassette."""
        self._current = None
        result = yield
        if not in_scope(item):
            return result  # only the plugin's tests have a guarded cassette
        from agentloop_tools._plugin.cassette import refusal

        problem = refusal(item)
        if problem:
            fail(problem, "secret")
        return result

    @pytest.hookimpl(optionalhook=True)
    def pytest_recording_configure(self, config: pytest.Config, vcr: Any) -> None:
        """pytest-recording built a VCR for a test: make its cassettes safe and strict."""
        if self._current is None or not in_scope(self._current):
            return
        from agentloop_tools._plugin.cassette import BEFORE, configure_vcr

        configure_vcr(
            vcr,
            self.matcher,
            config.getoption("record_mode", default=None),
            self._current.stash.get(BEFORE, None),
        )

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_call(self, item: pytest.Item) -> Iterator[None]:
        """After the test body: unused interactions, evidence, then the domain policy.

        Each is reported as a failure of the test itself, not as an error. A body that
        ends in ``pytest.skip()`` or ``pytest.xfail()`` after its agent ran is audited
        all the same: a breach is never turned into a skip.
        """
        ours = in_scope(item)
        # A plain vcrpy test under the project's policy: its recorded model traffic is
        # evidence the plugin never saw, so the policy would check nothing.
        plain_vcr = (
            not ours and self.default.policy is not None and "vcr" in getattr(item, "funcargs", {})
        )
        if not ours and not plain_vcr:
            return (yield)  # not the plugin's test: its outcome is its own
        if plain_vcr:
            self._refuse_recording_model_traffic_in_ci(item)
        ended: BaseException | None = None
        try:
            result = yield
        except (pytest.skip.Exception, pytest.xfail.Exception) as early:
            if not self._agent_ran(item):
                raise  # skipped before any agent ran: a skip, as the test says
            ended, result = early, None
        except Exception as failed:
            # The body's own failure stands, but a breach before it must not hide behind
            # it (an xfail would swallow both): the audit still runs, and a breach leads.
            if not self._agent_ran(item):
                raise
            self._audit_despite(item, failed)
            raise
        try:
            if ours:
                from agentloop_tools._plugin.cassette import check_unused_interactions

                if ended is None:
                    check_unused_interactions(item)
                self._require_evidence(item)
                self._audit(item)
            else:
                self._require_evidence(item)
        except pytest.fail.Exception as failure:
            item.stash[_GATE_FAILED] = True
            notes = [str(failure.msg)]
            if ended is not None:
                how = "xfail" if isinstance(ended, pytest.xfail.Exception) else "skip"
                notes.append(messages.ended_after_breach(how))
            if item.get_closest_marker("xfail") is not None and not _expects_the_gate(item):
                notes.append(messages.xfail_does_not_expect(item.nodeid))
            if len(notes) == 1:
                raise
            fail("\n".join(notes), kind_of(failure))
        if ended is not None:
            raise ended
        return result

    def _audit_despite(self, item: pytest.Item, failed: Exception) -> None:
        """After a failing body: a breach fails the test as a breach, the body's error noted."""
        try:
            self._audit(item)
        except pytest.fail.Exception as breach:
            item.stash[_GATE_FAILED] = True
            notes = [str(breach.msg), messages.body_failed_too(failed)]
            if item.get_closest_marker("xfail") is not None and not _expects_the_gate(item):
                notes.append(messages.xfail_does_not_expect(item.nodeid))
            fail("\n".join(notes), kind_of(breach))

    def _agent_ran(self, item: pytest.Item) -> bool:
        """Whether the body got as far as an agent: a conversation seen, or model traffic."""
        evidence = evidence_of(item)
        if evidence is not None and evidence.transcripts:
            return True
        from agentloop_tools._plugin.cassette import provider_requests

        return provider_requests(item) > 0

    def _refuse_recording_model_traffic_in_ci(self, item: pytest.Item) -> None:
        """A plain vcr test under the project policy must not record model traffic in CI."""
        from agentloop_tools._plugin.cassette import ci, recorded_provider_requests

        cassette = item.funcargs.get("vcr")  # type: ignore[attr-defined]
        if (
            cassette is None
            or cassette.write_protected
            or not ci()
            or self.config.getoption(RECORD_IN_CI_OPTION.dest)
        ):
            return
        if recorded_provider_requests(cassette):
            path = str(cassette._path)
            pytest.fail(
                messages.recording_test_in_ci(item.nodeid, path, exists=True), pytrace=False
            )

    @pytest.hookimpl(wrapper=True, tryfirst=True)
    def pytest_runtest_makereport(
        self, item: pytest.Item, call: pytest.CallInfo[None]
    ) -> Generator[None, pytest.TestReport, pytest.TestReport]:
        """Attach the test's evidence to its report, so xdist carries it to the controller."""
        report = yield
        if (
            call.when == "call"
            and item.stash.get(_GATE_FAILED, False)
            and report.skipped
            and not _expects_the_gate(item)
        ):
            # An xfail marker expects the test's own failure, not the plugin's: a breach
            # must not read as "expected to fail" (or turn a strict XPASS green).
            report.outcome = "failed"
            if hasattr(report, "wasxfail"):
                del report.wasxfail
        if call.when == "teardown" and report.failed and self.report.wanted():
            # A refused cassette fails at teardown, after the call's record left.
            error = call.excinfo.value if call.excinfo is not None else None
            report.user_properties.append(teardown_property(item, report, error))
        if call.when != "call":
            return report
        if item.stash.get(_NOT_AUDITED, False):
            report.user_properties.append(not_audited_property(item))
        evidence = evidence_of(item)
        if evidence is not None and evidence.transcripts:
            # The full record only when a report file is asked for; counts otherwise.
            policy, origin = self.policy_for(item)
            full = self.report.wanted()
            error = call.excinfo.value if call.excinfo is not None else None
            record = record_of(item, evidence, report, policy, origin, full=full, error=error)
            record["violation_count"] = item.stash.get(_VIOLATIONS, 0)
            report.user_properties.append(record_property(record))
        return report

    # End of the run: the report prints and writes itself ----------------------------

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        self.report.collect(report)

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        lines = self.report.summary_lines()
        if lines:
            terminalreporter.write_sep("-", "agentloop-tools")
            for line in lines:
                terminalreporter.write_line(line)

    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        if not hasattr(self.config, "workerinput"):  # xdist: the controller writes
            self.report.write_files()

    def pytest_unconfigure(self, config: pytest.Config) -> None:
        self.replay_clients.close()

    # Services for the fixtures and hooks --------------------------------------------

    @property
    def matcher(self) -> BodyMatcher:
        if self._matcher is None:
            from agentloop_tools.cassettes import DEFAULT_VOLATILE_FIELDS, BodyMatcher

            configured = self.config.getini("agentloop_volatile_fields")
            self._matcher = BodyMatcher(configured or DEFAULT_VOLATILE_FIELDS)
        return self._matcher

    def policy_for(self, item: pytest.Item) -> tuple[DomainPolicy | None, str | None]:
        """The policy a test is audited with, and where it was written."""
        marker = item.stash.get(MARKER, None)
        if marker is not None:
            return marker.policy, "the domain_policy marker"
        if self.default.policy is not None:
            return self.default.policy, self.default.origin
        return None, None

    def _require_evidence(self, item: pytest.Item) -> None:
        """A test marked with a policy must show the plugin what its agents did."""
        __tracebackhide__ = True
        marker = item.stash.get(MARKER, None)
        evidence = evidence_of(item)
        policy, origin = self.policy_for(item)
        if evidence is not None and policy is not None:
            problems = evidence.problems()
            if problems:
                pytest.fail("\n".join(problems), pytrace=False)
        from agentloop_tools._plugin.cassette import provider_answers, provider_requests

        if evidence is not None and evidence.transcripts:
            # Every answer the cassette shows must have reached the plugin: one connected
            # agent must not vouch for another that was not.
            answered = provider_answers(item) if policy is not None else 0
            if answered > evidence.observer.answers:
                pytest.fail(
                    messages.unseen_requests(
                        item.nodeid, answered, evidence.observer.answers, origin or ""
                    ),
                    pytrace=False,
                )
            return

        if marker is not None:
            if marker.require_evidence:
                pytest.fail(messages.no_evidence(item.nodeid), pytrace=False)
            # The opt-out says no agent runs; a cassette that shows one says otherwise.
            sent = provider_requests(item)
            if sent:
                pytest.fail(messages.opted_out_but_sent(item.nodeid, sent), pytrace=False)
            item.stash[_NOT_AUDITED] = True
            return
        if self.default.policy is None:
            return
        # The project's policy applies to every test: a conversation the cassette shows
        # but the plugin never saw would otherwise pass unaudited.
        sent = provider_requests(item)
        if sent:
            pytest.fail(
                messages.unseen_conversation(item.nodeid, sent, self.default.origin),
                pytrace=False,
            )

    def _audit(self, item: pytest.Item) -> None:
        __tracebackhide__ = True
        evidence = evidence_of(item)
        if evidence is None or not evidence.transcripts:
            return
        policy, origin = self.policy_for(item)
        if policy is None:
            return
        from agentloop_tools.testing._violation_report import violation_report

        found = evidence.audit(policy)
        item.stash[_VIOLATIONS] = len(found)
        if found:
            conversations = [transcript.messages for transcript in evidence.transcripts]
            several = len(conversations) > 1
            report = violation_report(found, conversations, policy, several=several)
            fail(f"{report}\n(policy from {origin})", "domain-policy")


def _registered_markers(config: pytest.Config) -> set[str]:
    names = set()
    for line in config.getini("markers"):
        names.add(line.split(":", 1)[0].split("(", 1)[0].strip())
    return names


def _attach_guard(item: pytest.Item) -> None:
    """The cassette guard for a test that uses the plugin, set up before its fixtures."""
    if (
        isinstance(item, pytest.Function)
        and in_scope(item)
        and GUARD_FIXTURE not in item.fixturenames
    ):
        item.fixturenames.insert(0, GUARD_FIXTURE)


def _expects_the_gate(item: pytest.Item) -> bool:
    """Whether the test's xfail names the plugin's failure: ``raises=pytest.fail.Exception``."""
    marker = item.get_closest_marker("xfail")
    raises = marker.kwargs.get("raises") if marker is not None else None
    try:
        return raises is not None and issubclass(pytest.fail.Exception, raises)
    except TypeError:  # not a class or tuple of classes: pytest reports that itself
        return False


def evidence_of(item: pytest.Item) -> AgentloopEvidence | None:
    return item.stash.get(EVIDENCE, None)


def _default_provider(config: pytest.Config) -> str | None:
    from agentloop_tools._providers import PROVIDERS

    provider = config.getoption("agentloop_provider") or config.getini("agentloop_provider")
    if provider and provider not in PROVIDERS:
        raise pytest.UsageError(messages.unknown_ini_provider(provider, list(PROVIDERS)))
    return str(provider) if provider else None


def _cassette_age(config: pytest.Config) -> tuple[str, str]:
    """The age limit for replayed cassettes and what passing it does, checked now."""
    max_age = str(config.getini("agentloop_max_cassette_age") or "").strip()
    action = str(config.getini("agentloop_cassette_age_action") or "warn").strip().lower()
    if action not in ("warn", "fail"):
        raise pytest.UsageError(
            f"ini key agentloop_cassette_age_action = {action!r}: use warn or fail."
        )
    if max_age:
        from agentloop_tools.cassettes._provenance import parse_age

        try:
            parse_age(max_age)
        except ValueError as error:
            raise pytest.UsageError(f"ini key agentloop_max_cassette_age: {error}") from None
    return max_age, action
