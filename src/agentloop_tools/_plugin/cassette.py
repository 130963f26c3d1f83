"""Everything that touches vcrpy and pytest-recording internals, and nothing else does.

pytest-recording builds a VCR per test and hands it to ``pytest_recording_configure``;
we make its cassettes safe (scrubbed, refused when key-shaped) and strict (matched on
the JSON body, unused interactions and misses reported at once).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import pytest

from agentloop_tools._plugin import messages
from agentloop_tools._plugin.network import CassetteState

if TYPE_CHECKING:
    from agentloop_tools.cassettes import BodyMatcher

MATCH_ON = ("method", "scheme", "host", "port", "path", "query", "agentloop_body")


def ci() -> bool:
    value = os.environ.get("CI", "")
    return bool(value) and value.lower() not in ("0", "false", "no")


def cassette_state(request: pytest.FixtureRequest) -> CassetteState:
    """Whether this test records a cassette, replays one, or has none."""
    if request.node.get_closest_marker("vcr") is None:
        return "none"
    try:
        cassette = request.getfixturevalue("vcr")
    except pytest.FixtureLookupError:
        raise pytest.UsageError(messages.needs_pytest_recording()) from None
    if cassette is None:
        return "none"  # --disable-recording
    if cassette.write_protected:
        return "replaying"
    if ci() and not request.config.getoption("agentloop_record_in_ci"):
        path = str(cassette._path)
        pytest.fail(
            messages.recording_test_in_ci(request.node.nodeid, path, os.path.exists(path)),
            pytrace=False,
        )
    return "recording"


def configure_vcr(vcr: Any, matcher: BodyMatcher) -> None:
    """Our serializer, matcher and scrubbing on the VCR pytest-recording built."""
    from agentloop_tools._secrets import secret_values
    from agentloop_tools.cassettes import Scrubber, guard_recording, serializer

    vcr.register_serializer("yaml", serializer)
    vcr.register_matcher("agentloop_body", matcher)
    secrets = secret_values(os.environ)
    scrubber = Scrubber(secrets)
    # Every cassette is checked before it is written, whatever the serializer; a
    # refusal fails the test after teardown (see refusal()).
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


def refusal(item: pytest.Item) -> str | None:
    """Why the guarded persister refused to write this test's cassette, if it did.

    Read without importing the cassettes package into tests that do not use it.
    """
    cassette = (getattr(item, "funcargs", None) or {}).get("vcr")
    found = getattr(getattr(cassette, "_persister", None), "refusal", None)
    return found if isinstance(found, str) and found else None


def provider_requests(item: pytest.Item) -> int:
    """Model-provider requests this test replayed from or recorded into its cassette."""
    cassette = (getattr(item, "funcargs", None) or {}).get("vcr")
    if cassette is None:
        return 0
    from agentloop_tools._providers import provider_for_host

    if cassette.write_protected:
        used = [i for i in range(len(cassette)) if cassette.play_counts[i] > 0]
    elif cassette.dirty:
        used = list(range(len(cassette)))
    else:
        return 0
    return sum(1 for i in used if provider_for_host(cassette.requests[i].host or "") is not None)


def describe(item: pytest.Item) -> dict[str, str] | None:
    """The test's cassette for reports: its path and whether it was replayed or recorded."""
    cassette = getattr(item, "funcargs", {}).get("vcr")
    if cassette is None:
        return None
    return {
        "path": str(cassette._path),
        "state": "replaying" if cassette.write_protected else "recording",
    }


def check_unused_interactions(item: pytest.Item) -> None:
    """Fail a passing replay that left recorded interactions unused."""
    __tracebackhide__ = True
    if item.get_closest_marker("vcr") is None:
        return
    cassette = getattr(item, "funcargs", {}).get("vcr")
    if cassette is None or not cassette.write_protected or cassette.all_played:
        return
    from agentloop_tools.cassettes import summary

    unused = [
        (index, summary(cassette.requests[index]))
        for index in range(len(cassette))
        if cassette.play_counts[index] == 0
    ]
    pytest.fail(
        messages.unused_interactions(item.nodeid, str(cassette._path), len(cassette), unused),
        pytrace=False,
    )


def fail_on_miss(request: pytest.FixtureRequest, matcher: BodyMatcher) -> None:
    """Turn a replay miss into pytest's own failure, which nothing in the SDK catches.

    vcrpy's miss is an ordinary exception, which the provider SDK and agentloop's
    retry policy swallow into "Connection error" after seconds of backoff.
    """
    cassette = request.getfixturevalue("vcr")
    if cassette is None:
        return
    can_play = cassette.can_play_response_for

    def can_play_or_fail(live_request: Any) -> bool:
        if can_play(live_request):
            return True
        if cassette.write_protected and cassette.filter_request(live_request) is not None:
            pytest.fail(_miss_message(request, cassette, live_request, matcher), pytrace=False)
        return False

    cassette.can_play_response_for = can_play_or_fail


def _miss_message(
    request: pytest.FixtureRequest, cassette: Any, live_request: Any, matcher: BodyMatcher
) -> str:
    from agentloop_tools._secrets import redact
    from agentloop_tools.cassettes import closest, describe_difference, summary

    path = str(cassette._path)
    nodeid = request.node.nodeid
    scrubbed = cassette.filter_request(live_request)
    if not os.path.exists(path) or len(cassette) == 0:
        return redact(messages.no_cassette_file(nodeid, path, summary(scrubbed)))
    index = closest(scrubbed, cassette.requests, matcher)
    nearest = None
    if index is not None:
        recorded = cassette.requests[index]
        nearest = (index, summary(recorded), describe_difference(scrubbed, recorded, matcher))
    return redact(messages.not_in_cassette(nodeid, path, summary(scrubbed), len(cassette), nearest))


def _hooks(value: Any) -> list[Callable[[Any], Any]]:
    if value is None:
        return []
    if callable(value):
        return [value]
    return list(value)
