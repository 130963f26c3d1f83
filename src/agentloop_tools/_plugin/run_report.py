"""What the run found, gathered from the test reports: the summary lines and the report files.

The hooks hand each test report here and print what :meth:`RunReport.summary_lines`
returns; nothing else of the session's state is needed to report. A test's record rides
on its report's ``user_properties``, so under xdist the controller gathers what the
workers found.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from agentloop_tools._plugin import messages
from agentloop_tools._plugin.drift import DRIFT_PROPERTY
from agentloop_tools._plugin.scope import HTML_REPORT_OPTION, REPORT_OPTION

if TYPE_CHECKING:
    from agentloop_tools.testing import AgentloopEvidence
    from agentloop_tools.web import DomainPolicy

RECORD_PROPERTY = "agentloop_tools"
NOT_AUDITED_PROPERTY = "agentloop_tools_not_audited"
REPLACED_PROPERTY = "agentloop_tools_replaced"
TEARDOWN_PROPERTY = "agentloop_tools_teardown"
FILE_OPTIONS = (REPORT_OPTION, HTML_REPORT_OPTION)


class RunReport:
    """The records of the tests that showed agent evidence, and the tests not audited."""

    def __init__(self, config: pytest.Config) -> None:
        self.config = config
        self.records: list[dict[str, Any]] = []
        self.not_audited: list[str] = []
        self.breached_attempts: list[dict[str, Any]] = []
        self.replaced: list[dict[str, Any]] = []  # tests whose marker is their whole policy
        self.drift: list[dict[str, Any]] = []  # tests that re-recorded with evidence drift
        self.drift_setting: tuple[str, str | None] = ("report", None)

    def wanted(self) -> bool:
        """Whether a report file is asked for (then each test carries its full record)."""
        return any(self.config.getoption(option.dest) for option in FILE_OPTIONS)

    def collect(self, report: pytest.TestReport) -> None:
        if report.when == "teardown":
            for name, value in _pairs(report):
                if name == RECORD_PROPERTY and isinstance(value, dict):
                    self._replace(value)  # teardown ran a conversation: the whole record
                elif name == TEARDOWN_PROPERTY and isinstance(value, dict):
                    self._fail_at_teardown(value)
                elif name == DRIFT_PROPERTY and isinstance(value, dict):
                    self._drift(value)
        if report.when != "call":
            return
        for name, value in _pairs(report):
            if name == NOT_AUDITED_PROPERTY and isinstance(value, str):
                self.not_audited.append(value)
            elif name == REPLACED_PROPERTY and isinstance(value, dict):
                self.replaced.append(value)
            elif name == RECORD_PROPERTY and isinstance(value, dict):
                self.records.append(value)
                if str(report.outcome) == "rerun":  # pytest-rerunfailures: an attempt, retried
                    value["outcome"] = "rerun"
                    if failing_count(value):
                        self.breached_attempts.append(value)

    def _replace(self, record: dict[str, Any]) -> None:
        for index in range(len(self.records) - 1, -1, -1):
            if self.records[index].get("test") == record.get("test"):
                self.records[index] = record
                return
        self.records.append(record)

    def _drift(self, value: dict[str, Any]) -> None:
        self.drift.append(value)
        for record in self.records:  # the reports show it beside the test's evidence
            if record.get("test") == value.get("test"):
                record["drift"] = {k: v for k, v in value.items() if k != "test"}

    def drift_fails(self) -> bool:
        """Whether a re-recorded test's evidence drift fails the run (--agentloop-drift)."""
        from agentloop_tools._plugin.drift import fails

        return any(fails(entry, self.drift_setting[0]) for entry in self.drift)

    def breached(self) -> bool:
        """Whether an attempt that a rerun plugin retried breached the policy."""
        return bool(self.breached_attempts)

    def _fail_at_teardown(self, value: dict[str, Any]) -> None:
        # A refused cassette fails at teardown, after the call's record left.
        for record in self.records:
            if record.get("test") == value["test"] and not record.get("failure"):
                record.update(outcome="error", failure=value["failure"])

    def summary_lines(self) -> list[str]:
        """The lines of the run's summary section; none when no test showed evidence."""
        if not self.records and not self.not_audited and not self.replaced and not self.drift:
            return []
        conversations = sum(r["conversation_count"] for r in self.records)
        violations = [failing_count(r) for r in self.records]
        breached = sum(1 for count in violations if count)
        refused = [r.get("refused_count", 0) for r in self.records]
        lines = [messages.not_audited(nodeid) for nodeid in self.not_audited]
        lines += [messages.replaced(entry["test"], entry["project"]) for entry in self.replaced]
        attempts: dict[str, int] = {}
        for record in self.records:
            attempts[record["test"]] = attempts.get(record["test"], 0) + 1
            if record in self.breached_attempts:
                lines.append(
                    messages.breached_attempt(
                        record["test"], attempts[record["test"]], failing_count(record)
                    )
                )
        lines.append(
            f"{len(self.records)} test(s) with agent evidence, {conversations} conversation(s); "
            f"{sum(violations)} domain policy violation(s) in {breached} test(s)"
            + _refused_note(self.records, refused)
        )
        if self.drift:
            from agentloop_tools._plugin.drift import summary_lines

            lines += summary_lines(self.drift, self.drift_setting)
        for option in FILE_OPTIONS:
            path = self.config.getoption(option.dest)
            if path:
                lines.append(f"evidence report ({option.flag}): {path}")
        return lines

    def write_files(self) -> None:
        json_path = self.config.getoption(REPORT_OPTION.dest)
        html_path = self.config.getoption(HTML_REPORT_OPTION.dest)
        if not json_path and not html_path:
            return
        from agentloop_tools._report import _records as _report

        if json_path:
            _report.write_json(json_path, self.records)
        if html_path:
            _report.write_html(html_path, self.records)


def failing_count(record: dict[str, Any]) -> int:
    """The violations that failed a test's record: refused attempts only when set to fail."""
    count = int(record.get("violation_count") or 0)
    if record.get("refused_attempts") == "fail":
        return count
    return count - int(record.get("refused_count") or 0)


def _refused_note(records: list[dict[str, Any]], refused: list[int]) -> str:
    """What the count says of refused attempts (URLs web_fetch refused: the policy held)."""
    if not sum(refused):
        return ""
    failing = sum(
        count for record, count in zip(records, refused, strict=True)
        if record.get("refused_attempts") == "fail"
    )  # fmt: skip
    held = sum(refused) - failing
    what = "web_fetch refused the URL and read nothing, the policy held"
    notes = []
    if failing:
        notes.append(
            f"{failing} of them refused attempt(s) ({what}), failing (refused_attempts = fail)"
        )
    if held:
        tests = sum(
            1 for record, count in zip(records, refused, strict=True)
            if count and record.get("refused_attempts") != "fail"
        )  # fmt: skip
        notes.append(
            f"{held} refused attempt(s) in {tests} test(s) ({what}), not failing "
            "(refused_attempts = report)"
        )
    return "".join(f"; {note}" for note in notes)


def _pairs(report: pytest.TestReport) -> list[tuple[str, Any]]:
    """A report's ``(name, value)`` properties; anything else a test appended is not ours."""
    return [
        (entry[0], entry[1])
        for entry in report.user_properties
        if isinstance(entry, tuple | list) and len(entry) == 2 and isinstance(entry[0], str)
    ]


def prepare_report_paths(config: pytest.Config) -> None:
    """Make a report's folder now: a path that cannot be written stops the run at start."""
    for option in FILE_OPTIONS:
        value = config.getoption(option.dest)
        if not value:
            continue
        path = Path(value)
        try:
            if path.is_dir():
                raise IsADirectoryError(21, "is a folder; name a file in it")
            path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as error:
            raise pytest.UsageError(
                messages.report_path_unwritable(option.flag, value, error.strerror)
            ) from None


def record_of(
    item: pytest.Item,
    evidence: AgentloopEvidence,
    report: pytest.TestReport,
    policy: DomainPolicy | None,
    origin: str | None,
    *,
    full: bool,
    error: BaseException | None = None,
) -> dict[str, Any]:
    """A test's record: the whole evidence when a report file is wanted, counts otherwise.

    ``error`` is what the test's call raised, if anything: its failure's kind is the kind
    the exception carries.
    """
    if not full:
        record: dict[str, Any] = {"test": item.nodeid, "outcome": outcome_label(report)}
    else:
        from agentloop_tools._plugin.cassette import describe
        from agentloop_tools._report import _records as _report
        from agentloop_tools._report._entries import failure_entry

        crash = getattr(report.longrepr, "reprcrash", None)
        failure = failure_entry(
            _failed_or_not(report, error),
            report.longreprtext,
            getattr(crash, "message", None),
            error,
        )
        record = _report.test_record(
            item.nodeid,
            evidence.transcripts,
            policy,
            origin,
            describe(item),
            outcome=outcome_label(report),
            failure=failure,
        )
    record["conversation_count"] = len(evidence.transcripts)
    return record


def _failed_or_not(report: pytest.TestReport, error: BaseException | None) -> str:
    """``"failed"`` for an xfailed test that failed as expected (a breach under
    ``xfail(raises=pytest.fail.Exception)``): its record keeps why; pytest's outcome else."""
    expected = error is not None and not isinstance(error, pytest.xfail.Exception)
    return "failed" if outcome_label(report) == "xfailed" and expected else report.outcome


def record_property(record: dict[str, Any]) -> tuple[str, object]:
    return (RECORD_PROPERTY, record)


def replaced_property(item: pytest.Item, project: str) -> tuple[str, object]:
    return (REPLACED_PROPERTY, {"test": item.nodeid, "project": project})


def not_audited_property(item: pytest.Item) -> tuple[str, object]:
    return (NOT_AUDITED_PROPERTY, item.nodeid)


def teardown_property(
    item: pytest.Item, report: pytest.TestReport, error: BaseException | None = None
) -> tuple[str, object]:
    from agentloop_tools._report._entries import failure_entry

    crash = getattr(report.longrepr, "reprcrash", None)
    failure = failure_entry("failed", report.longreprtext, getattr(crash, "message", None), error)
    return (TEARDOWN_PROPERTY, {"test": item.nodeid, "failure": failure})


def outcome_label(report: pytest.TestReport) -> str:
    """The outcome as pytest's summary names it: xfailed and xpassed are not skipped/passed."""
    if hasattr(report, "wasxfail"):
        return "xfailed" if report.skipped else "xpassed"
    return report.outcome
