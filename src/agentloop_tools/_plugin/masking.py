"""No credential in what pytest shows of the plugin's tests: reprs, failures, captured output.

Two layers. The objects the plugin hands a test (``agentloop_env``, the agent factory)
mask credentials in their ``repr``, so pytest's listing of a failing test's arguments
shows none. That is not enough: assertion introspection prints plain strings, and
``--showlocals`` prints the frames of SDKs we do not own. So every report of a test that
uses the plugin is cleaned before pytest prints it, writes JUnit or xdist ships it: each
known credential value (in every encoding a cassette is scrubbed of) becomes its
placeholder, and any other key-shaped text ``[redacted]``.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

import pytest


class SecretEnv(dict[str, str]):
    """The environment a test builds agents from: a plain ``dict`` whose repr masks keys.

    A subclass, so ``Agent.from_env(env)`` and ``env[...] = ...`` work as on any dict;
    ``copy()`` keeps the masking, ``dict(env)`` is a plain dict again.
    """

    def __repr__(self) -> str:
        return repr({name: _shown(name, value) for name, value in self.items()})

    __str__ = __repr__

    def copy(self) -> SecretEnv:
        return SecretEnv(self)


def _shown(name: str, value: str) -> str:
    """A variable's value as a repr may show it: masked when the scrubber would take it."""
    from agentloop_tools._secrets import (
        CREDENTIAL_VARIABLES,
        PLACEHOLDER_PREFIX,
        is_secret_name,
        mask,
        shapes,
    )

    if not value or value.startswith(PLACEHOLDER_PREFIX):
        return value  # fake by construction, and telling: shown as it is
    if name in CREDENTIAL_VARIABLES or is_secret_name(name) or shapes(value):
        return mask(value)
    return value


class _Crash:
    """The one-line crash pytest's summary and JUnit read, cleaned."""

    def __init__(self, message: str, path: str, lineno: int) -> None:
        self.message = message
        self.path = path
        self.lineno = lineno


class CleanedRepr:
    """A failure's text with credentials replaced, printed as pytest printed the original."""

    def __init__(self, text: str, crash: _Crash | None) -> None:
        self.text = text
        self.reprcrash = crash

    def toterminal(self, out: Any) -> None:
        for line in self.text.splitlines():
            out.line(line)

    def __str__(self) -> str:
        return self.text


def clean_report(report: pytest.TestReport, extra: Mapping[str, str] | None = None) -> None:
    """Replace every credential in a report's failure text and captured sections, in place.

    ``extra``: more variables to take values from (a test's own ``agentloop_env``).
    """
    if report.longrepr is None and not report.sections:
        return  # a passing test that printed nothing: most reports, at no cost
    from agentloop_tools._secrets import Cleaner, secret_values

    # Two cleaners, not one merged mapping: a test may set a variable of agentloop_env to
    # another key than the environment's, and both values must go.
    of_environment = Cleaner(secret_values(os.environ)).text
    of_test = Cleaner(secret_values(dict(extra or {}))).text

    def clean(text: str) -> str:
        return of_environment(of_test(text))

    report.sections = [(title, clean(content)) for title, content in report.sections]
    longrepr = report.longrepr
    if longrepr is None:
        return
    if isinstance(longrepr, tuple):  # a skip: (path, line, message)
        path, line, message = longrepr
        report.longrepr = (path, line, clean(message))
        return
    text = str(longrepr)
    cleaned = clean(text)
    if cleaned == text:
        return  # keep pytest's own object, colours and all
    crash = getattr(longrepr, "reprcrash", None)
    shown = None
    if crash is not None:
        shown = _Crash(clean(str(crash.message)), str(crash.path), int(crash.lineno))
    report.longrepr = CleanedRepr(cleaned, shown)  # type: ignore[assignment]
