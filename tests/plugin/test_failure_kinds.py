"""A failed test is sorted by the kind its exception carries, never by its wording."""

from __future__ import annotations

import pytest

from agentloop_tools._plugin.failures import fail
from agentloop_tools._report._entries import failure_entry
from agentloop_tools.testing import EvidenceAssertionError


def _raised(kind: str | None) -> BaseException:
    try:
        fail("a message in any words at all", kind)
    except pytest.fail.Exception as error:
        return error
    raise AssertionError("fail() returned")  # pragma: no cover


@pytest.mark.parametrize(
    "kind", ["secret", "stale-cassette", "missing-cassette", "unused-interactions"]
)
def test_the_plugins_failure_is_the_kind_it_carries(kind: str) -> None:
    entry = failure_entry("failed", "Failed: a message", "Failed: a message", _raised(kind))
    assert entry is not None
    assert entry["kind"] == kind


def test_a_failure_that_quotes_a_phrase_is_not_that_kind() -> None:
    # The test's own assertion may quote the plugin's words: it is still an assertion.
    quoted = "this request is not in the cassette; domain policy violation"
    assert failure_entry("failed", quoted, f"Failed: {quoted}", _raised(None)) == {
        "kind": "assertion",
        "reason": "an assertion in the test failed",
        "crash": f"Failed: {quoted}",
        "message": quoted,
    }
    entry = failure_entry("failed", quoted, f"ValueError: {quoted}", ValueError(quoted))
    assert entry is not None
    assert entry["kind"] == "error"


def test_the_helpers_breach_is_a_domain_policy_failure() -> None:
    error = EvidenceAssertionError(
        "assert_no_violations: 1 domain policy violation", kind="domain-policy"
    )
    entry = failure_entry("failed", str(error), f"EvidenceAssertionError: {error}", error)
    assert entry is not None
    assert entry["kind"] == "domain-policy"
    plain = EvidenceAssertionError("assert_cited: 1 of 1 target(s) was not cited")
    entry = failure_entry("failed", str(plain), None, plain)
    assert entry is not None
    assert entry["kind"] == "assertion"
