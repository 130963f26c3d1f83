"""Everything that touches vcrpy and pytest-recording internals, and nothing else does.

pytest-recording builds a VCR per test and hands it to ``pytest_recording_configure``;
we make its cassettes safe (scrubbed, refused when key-shaped) and strict (matched on
the JSON body, unused interactions and misses reported at once).
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from agentloop_tools._plugin import messages
from agentloop_tools._plugin.failures import fail
from agentloop_tools._plugin.network import CassetteState
from agentloop_tools._plugin.replay_speed import enter_fast
from agentloop_tools._plugin.scope import EVIDENCE, FROM_SCRIPTS_OPTION, RECORD_IN_CI_OPTION

if TYPE_CHECKING:
    from agentloop_tools.cassettes import BodyMatcher

MATCH_ON = ("method", "scheme", "host", "port", "path", "query", "agentloop_body")

# vcrpy options that add request filters of their own (user code or user callables).
_REQUEST_FILTER_OPTIONS = (
    "filter_headers",
    "filter_query_parameters",
    "filter_post_data_parameters",
    "ignore_hosts",
    "ignore_localhost",
)


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
    if ci() and not request.config.getoption(RECORD_IN_CI_OPTION.dest):
        path = str(cassette._path)
        from_scripts = bool(request.config.getoption(FROM_SCRIPTS_OPTION.dest))
        pytest.fail(
            messages.recording_test_in_ci(
                request.node.nodeid, path, os.path.exists(path), from_scripts=from_scripts
            ),
            pytrace=False,
        )
    return "recording"


def check_age(request: pytest.FixtureRequest, max_age: str, action: str) -> None:
    """A replayed cassette older than ``max_age`` warns or fails, naming the re-record."""
    __tracebackhide__ = True
    import datetime as dt
    import warnings

    from agentloop_tools.cassettes._provenance import parse_age, recorded_at

    cassette = request.getfixturevalue("vcr")
    if cassette is None:
        return
    path = str(cassette._path)
    limit = parse_age(max_age)  # checked when the run started
    when = recorded_at(path)
    nodeid = request.node.nodeid
    if when is None:
        warnings.warn(
            pytest.PytestWarning(messages.cassette_age_unknown(nodeid, path, max_age)),
            stacklevel=1,
        )
        return
    age = dt.datetime.now(dt.UTC) - when
    if age <= limit:
        return
    message = messages.cassette_too_old(nodeid, path, age.days, max_age)
    if action == "fail":
        pytest.fail(message, pytrace=False)
    warnings.warn(pytest.PytestWarning(message), stacklevel=1)


BEFORE = pytest.StashKey[dict[str, str]]()


def remember_cassettes(request: pytest.FixtureRequest) -> None:
    """Keep this test's cassette files as they are: a rewrite deletes them first, and an
    unchanged re-recording must come out byte-identical (its provenance kept)."""
    import glob
    from pathlib import Path

    try:
        folder = Path(request.getfixturevalue("vcr_cassette_dir"))
        name = str(request.getfixturevalue("default_cassette_name"))
    except pytest.FixtureLookupError:
        return
    kept: dict[str, str] = {}
    for path in folder.glob(glob.escape(name) + ".*"):
        with contextlib.suppress(OSError, UnicodeDecodeError):
            kept[str(path.resolve())] = path.read_text(encoding="utf-8")
    request.node.stash[BEFORE] = kept


# What the test's run adds to its cassette's provenance (a cassettes._provenance.Recording).
RECORDING = pytest.StashKey[Any]()


def configure_vcr(
    vcr: Any,
    matcher: BodyMatcher,
    record_mode: str | None = None,
    before: dict[str, str] | None = None,
    recording: Any = None,
) -> None:
    """Our serializer, matcher and scrubbing on the VCR pytest-recording built."""
    from agentloop_tools._secrets import secret_values
    from agentloop_tools.cassettes import Scrubber, _format
    from agentloop_tools.cassettes._hygiene._guard import guard_recording

    vcr.register_serializer("yaml", _format)
    vcr.register_matcher("agentloop_body", matcher)
    secrets = secret_values(os.environ)
    scrubber = Scrubber(secrets)
    # Every cassette is checked before it is written, whatever the serializer; a
    # refusal fails the test after teardown (see refusal()).
    guard_recording(
        vcr, secrets, provenance=record_mode or "none", before=before, recording=recording
    )
    original = vcr.use_cassette

    def use_cassette(path: Any = None, **options: Any) -> Any:
        # The user's vcr_config comes first; scrubbing always runs last.
        user_request = options.pop("before_record_request", options.pop("before_record", None))
        user_response = options.pop("before_record_response", None)
        options["before_record_request"] = [*_hooks(user_request), scrubber.request]
        options["before_record_response"] = [*_hooks(user_response), scrubber.response]
        options["decode_compressed_response"] = True
        options.setdefault("match_on", MATCH_ON)
        # Only scrubbing filters requests: deterministic and idempotent, so a live
        # request's filtered form can serve every look-up of one replay.
        scrubbing_only = not user_request and not any(
            options.get(name, getattr(vcr, name, None)) for name in _REQUEST_FILTER_OPTIONS
        )
        return enter_fast(vcr, original, path, options, filter_once=scrubbing_only)

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

    return sum(
        1 for i in _used(cassette) if provider_for_host(cassette.requests[i].host or "") is not None
    )


def recorded_provider_requests(cassette: Any) -> int:
    """Model-provider requests a cassette holds, whether or not this test used them yet."""
    from agentloop_tools._providers import provider_for_host

    return sum(1 for request in cassette.requests if provider_for_host(request.host or ""))


def recorded_search_apis(request: pytest.FixtureRequest) -> list[tuple[str, str]]:
    """The search APIs this test's cassette holds requests to: ``(backend, base URL)``.

    The hosted APIs by host; a SearXNG instance by its JSON search request
    (``GET <base>/search?...format=json``).
    """
    if request.node.get_closest_marker("vcr") is None:
        return []
    cassette = request.getfixturevalue("vcr")
    if cassette is None:
        return []
    from urllib.parse import parse_qs, urlsplit

    from agentloop_tools._providers import search_api_for_host

    found = []
    for recorded in cassette.requests:
        api = search_api_for_host(recorded.host or "")
        if api is not None:
            found.append((api.name, f"https://{api.host}"))
            continue
        parts = urlsplit(recorded.uri)
        if (
            recorded.method == "GET"
            and parts.path.endswith("/search")
            and parse_qs(parts.query).get("format") == ["json"]
        ):
            base = f"{parts.scheme}://{parts.netloc}{parts.path[: -len('/search')]}"
            found.append(("searxng", base))
    return found


def scrubbed_in_cassette(request: pytest.FixtureRequest) -> list[str]:
    """The credential variables whose placeholders this test's cassette holds."""
    cassette = request.getfixturevalue("vcr")
    if cassette is None:
        return []
    from agentloop_tools._errors import InputError
    from agentloop_tools.cassettes._load import read_bytes

    path = str(cassette._path)
    bytes_read = getattr(getattr(cassette, "_persister", None), "bytes_read", None)
    read = bytes_read(path) if callable(bytes_read) else None
    if read is not None:  # the bytes the cassette was loaded from: not read again
        content, digest = read
        found = _scrubbed_by_digest.get(digest)
        if found is None:
            found = scrubbed_variables(content.decode("utf-8", "replace"))
            if len(_scrubbed_by_digest) >= 64:
                _scrubbed_by_digest.pop(next(iter(_scrubbed_by_digest)))
            _scrubbed_by_digest[digest] = found
        return list(found)
    try:
        text = read_bytes(path).decode("utf-8", "replace")
    except InputError:
        return []  # no file (or none readable): vcrpy's own miss says so
    return scrubbed_variables(text)


# The variables a cassette's placeholders name, by the hash of its bytes: the same
# cassette replayed by many tests is searched once.
_scrubbed_by_digest: dict[bytes, list[str]] = {}


_PLACEHOLDER_NAME = r"agentloop-tools-placeholder-([A-Za-z_][A-Za-z0-9_]{0,99})"
_MAX_SCRUBBED = 100


def scrubbed_variables(text: str) -> list[str]:
    """The variables a cassette holds placeholders of, that the scrubber treats as secret.

    Only credential names (``*_TOKEN``, ``*_API_KEY``...): a cassette is anyone's text,
    and must not choose ``LLM_PROVIDER`` or a base URL for the replaying test.
    """
    import re

    from agentloop_tools._secrets import CREDENTIAL_VARIABLES, is_secret_name

    found: dict[str, None] = {}
    for name in re.findall(_PLACEHOLDER_NAME, text):
        if name in CREDENTIAL_VARIABLES or is_secret_name(name):
            found[name] = None
            if len(found) >= _MAX_SCRUBBED:
                break
    return list(found)


def provider_answers(item: pytest.Item) -> int:
    """Successful (2xx) model-provider responses this test replayed or recorded."""
    cassette = (getattr(item, "funcargs", None) or {}).get("vcr")
    if cassette is None:
        return 0
    from agentloop_tools._providers import provider_for_host

    return sum(
        1
        for i in _used(cassette)
        if provider_for_host(cassette.requests[i].host or "") is not None
        and 200 <= _status(cassette.responses[i]) < 300
    )


def _status(response: Any) -> int:
    status = response.get("status", {}) if isinstance(response, dict) else {}
    code = status.get("code") if isinstance(status, dict) else None
    return code if isinstance(code, int) else 0


def _used(cassette: Any) -> list[int]:
    """Interactions replayed, and those recorded in this test (any record mode)."""
    played = [i for i in range(len(cassette)) if cassette.play_counts[i] > 0]
    if not cassette.dirty:
        return played
    loaded = getattr(cassette, "_old_interactions", None)
    if not isinstance(loaded, list):
        return list(range(len(cassette)))  # a vcrpy that does not say: count every one
    return sorted({*played, *range(len(loaded), len(cassette))})


def describe(item: pytest.Item) -> dict[str, str] | None:
    """The test's cassette for reports: its path and whether it was replayed or recorded."""
    cassette = getattr(item, "funcargs", {}).get("vcr")
    if cassette is None:
        return None
    found = {
        "path": relative_to_root(str(cassette._path), item.config.rootpath),
        "state": "replaying" if cassette.write_protected else "recording",
    }
    source = _source(item, cassette)
    if source is not None:
        found["source"] = source  # "scripts": the report says scripted beside it
    return found


def _source(item: pytest.Item, cassette: Any) -> str | None:
    """How the cassette's interactions were made: live, scripts, adopted; None: unknown."""
    if not cassette.write_protected:
        recording = item.stash.get(RECORDING, None)
        return getattr(recording, "source", None)
    from agentloop_tools.cassettes._provenance import read

    provenance = read(str(cassette._path))
    source = provenance.get("source") if provenance else None
    return source if isinstance(source, str) else None


def relative_to_root(path: str, root: Path) -> str:
    """``path`` relative to the rootdir when it is inside it (reports read the same on
    every machine), else as given."""
    try:
        return Path(path).resolve().relative_to(root.resolve()).as_posix()
    except (ValueError, OSError):
        return path


def check_unused_interactions(item: pytest.Item) -> None:
    """Fail a passing replay that left recorded interactions unused."""
    __tracebackhide__ = True
    if item.get_closest_marker("vcr") is None:
        return
    cassette = getattr(item, "funcargs", {}).get("vcr")
    if cassette is None or not cassette.write_protected or cassette.all_played:
        return
    from agentloop_tools.cassettes import summary
    from agentloop_tools.cassettes._provenance import read

    provenance = read(str(cassette._path))
    unused = [
        (index, summary(cassette.requests[index]))
        for index in range(len(cassette))
        if cassette.play_counts[index] == 0
    ]
    fail(
        messages.unused_interactions(
            item.nodeid,
            str(cassette._path),
            len(cassette),
            unused,
            from_scripts=provenance is not None and provenance.get("source") == "scripts",
        ),
        "unused-interactions",
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
            missing = not os.path.exists(str(cassette._path)) or len(cassette) == 0
            message = _miss_message(request, cassette, live_request, matcher)
            fail(message, "missing-cassette" if missing else "stale-cassette")
        return False

    cassette.can_play_response_for = can_play_or_fail


def _miss_message(
    request: pytest.FixtureRequest, cassette: Any, live_request: Any, matcher: BodyMatcher
) -> str:
    from agentloop_tools._secrets import redact
    from agentloop_tools.cassettes import closest, summary
    from agentloop_tools.cassettes._matching import describe_difference

    path = str(cassette._path)
    nodeid = request.node.nodeid
    scrubbed = cassette.filter_request(live_request)
    if not os.path.exists(path) or len(cassette) == 0:
        return redact(messages.no_cassette_file(nodeid, path, summary(scrubbed)))
    from agentloop_tools.cassettes._matching import tool_result_calls
    from agentloop_tools.cassettes._provenance import environment_changes, read

    index = closest(scrubbed, cassette.requests, matcher)
    nearest = None
    calls = None
    if index is not None:
        recorded = cassette.requests[index]
        nearest = (index, summary(recorded), describe_difference(scrubbed, recorded, matcher))
        calls = tool_result_calls(scrubbed, recorded, matcher)
    provenance = read(path)
    why = messages.Miss(
        source=str(provenance.get("source", "live")) if provenance else None,
        tool_calls=calls,
        environment=environment_changes(provenance) if calls else [],
    )
    return redact(
        messages.not_in_cassette(nodeid, path, summary(scrubbed), len(cassette), nearest, why)
    )


def _hooks(value: Any) -> list[Callable[[Any], Any]]:
    if value is None:
        return []
    if callable(value):
        return [value]
    return list(value)


def tap_exchanges(request: pytest.FixtureRequest) -> None:
    """Each exchange the test's cassette replays or records reaches its evidence observer.

    The provider's raw answer (usage, billed searches) is what the evidence record
    reads; agentloop's parsed response has lost it. Only kept on each call (a few
    references): read when a summary is asked for, or the cassette written.
    """
    cassette = request.getfixturevalue("vcr")
    if cassette is None:
        return
    item = request.node

    def tell(recorded_request: Any, response: Any) -> None:
        evidence = item.stash.get(EVIDENCE, None)
        if evidence is not None:
            evidence.observer.on_exchange(
                str(recorded_request.uri), str(recorded_request.method), response
            )

    play, append = cassette.play_response, cassette.append

    def play_response(live_request: Any) -> Any:
        response = play(live_request)
        tell(live_request, response)
        return response

    def append_recorded(live_request: Any, response: Any) -> None:
        before = len(cassette.data)
        append(live_request, response)
        if len(cassette.data) > before:  # kept (a filter may drop it): as it is written
            tell(*cassette.data[-1])

    cassette.play_response = play_response
    cassette.append = append_recorded
    recording = item.stash.get(RECORDING, None)
    if recording is not None and not cassette.write_protected:
        recording.evidence = lambda: evidence_record(item)


def evidence_record(item: pytest.Item) -> dict[str, Any] | None:
    """The test's evidence record as it goes into its cassette: scrubbed like the rest."""
    import json

    evidence = item.stash.get(EVIDENCE, None)
    if evidence is None or not evidence.transcripts:
        return None
    from agentloop_tools._secrets import secret_values
    from agentloop_tools.cassettes import Scrubber

    record = evidence.summary().to_dict()
    scrubbed = Scrubber(secret_values(os.environ)).data(json.dumps(record, ensure_ascii=False))
    found: dict[str, Any] = json.loads(scrubbed or "{}")
    return found
