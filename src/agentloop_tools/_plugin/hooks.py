"""pytest's hooks for a run that uses the plugin: each a few lines, forwarding to the session.

Registered (under ``scope.SESSION_NAME``) when the run's configuration asks for the
plugin, or by the standby at the first test that does. Every wrapper hides its frame
from tracebacks: a failure elsewhere is reported exactly as without us.
"""

from __future__ import annotations

from collections.abc import Generator
from typing import Any

import pytest

from agentloop_tools._plugin.session import AgentloopSession


class Hooks:
    """The plugin object pytest calls; :attr:`session` holds the run's state."""

    def __init__(self, config: pytest.Config) -> None:
        self.session = AgentloopSession(config)

    def pytest_report_header(self, config: pytest.Config) -> list[str] | None:
        """The plugin's line when it is configured.

        https://docs.pytest.org/en/stable/reference/reference.html#pytest.hookspec.pytest_report_header
        """
        return self.session.header()

    @pytest.hookimpl(tryfirst=True)
    def pytest_collection_modifyitems(self, items: list[pytest.Item]) -> None:
        """Every marker read before any test runs.

        https://docs.pytest.org/en/stable/reference/reference.html#pytest.hookspec.pytest_collection_modifyitems
        """
        self.session.collect(items)

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_setup(self, item: pytest.Item) -> None:
        """A test's marker problem fails it before its fixtures.

        https://docs.pytest.org/en/stable/reference/reference.html#pytest.hookspec.pytest_runtest_setup
        """
        self.session.setup(item)

    @pytest.hookimpl(optionalhook=True)
    def pytest_recording_configure(self, config: pytest.Config, vcr: Any) -> None:
        """pytest-recording's VCR for a test, made safe and strict.

        https://github.com/kiwicom/pytest-recording#configuration
        """
        self.session.configure_vcr(vcr)

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_call(self, item: pytest.Item) -> Generator[None, object, object]:
        """The gate around the test body.

        https://docs.pytest.org/en/stable/reference/reference.html#pytest.hookspec.pytest_runtest_call
        """
        __tracebackhide__ = True
        return (yield from self.session.call(item))

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_teardown(self, item: pytest.Item) -> Generator[None, object, object]:
        """The gate after teardown, once the cassette is saved.

        https://docs.pytest.org/en/stable/reference/reference.html#pytest.hookspec.pytest_runtest_teardown
        """
        __tracebackhide__ = True
        result = yield
        self.session.teardown(item)
        return result

    @pytest.hookimpl(wrapper=True, tryfirst=True)
    def pytest_runtest_makereport(
        self, item: pytest.Item, call: pytest.CallInfo[None]
    ) -> Generator[None, pytest.TestReport, pytest.TestReport]:
        """The test's evidence on its report.

        https://docs.pytest.org/en/stable/reference/reference.html#pytest.hookspec.pytest_runtest_makereport
        """
        __tracebackhide__ = True
        report = yield
        self.session.report_of(item, call, report)
        return report

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        """Each report gathered, a worker's too.

        https://docs.pytest.org/en/stable/reference/reference.html#pytest.hookspec.pytest_runtest_logreport
        """
        self.session.report.collect(report)

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        """The plugin's summary section.

        https://docs.pytest.org/en/stable/reference/reference.html#pytest.hookspec.pytest_terminal_summary
        """
        lines = self.session.report.summary_lines()
        if lines:
            terminalreporter.write_sep("-", "agentloop-tools")
            for line in lines:
                terminalreporter.write_line(line)

    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        """The report files written; a retried attempt that breached fails the run.

        https://docs.pytest.org/en/stable/reference/reference.html#pytest.hookspec.pytest_sessionfinish
        """
        self.session.finish(session)

    def pytest_unconfigure(self, config: pytest.Config) -> None:
        """Replay clients closed.

        https://docs.pytest.org/en/stable/reference/reference.html#pytest.hookspec.pytest_unconfigure
        """
        self.session.close()
