"""Everything that touches vcrpy and pytest-recording internals, and nothing else does.

pytest-recording builds a VCR per test and hands it to ``pytest_recording_configure``;
we make its cassettes safe (scrubbed, refused when key-shaped) and strict (matched on
the JSON body, unused interactions and misses reported at once).
"""

from __future__ import annotations

import contextlib
import copy
import hashlib
import importlib.util
import os
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from agentloop_tools._plugin import messages
from agentloop_tools._plugin.network import CassetteState
from agentloop_tools._plugin.scope import RECORD_IN_CI_OPTION

if TYPE_CHECKING:
    from agentloop_tools.cassettes import BodyMatcher

MATCH_ON = ("method", "scheme", "host", "port", "path", "query", "agentloop_body")

# vcrpy rebuilds its patchers for every cassette, importing each HTTP library it knows
# again; for a library that is not installed, that is a failed import (a search of
# every sys.path folder) per test. Its patcher groups (its ``skip_patchers`` names),
# by the module whose absence leaves the group empty:
_OPTIONAL_GROUPS = {
    "boto3": "botocore",
    "requests": "urllib3",  # vcrpy's requests stubs are urllib3's classes
    "urllib3": "urllib3",
    "httplib2": "httplib2",
    "tornado": "tornado",
    "aiohttp": "aiohttp",
}
# Libraries vcrpy tries inside a group it always builds (httpx): their import can only
# be made to fail fast, for the moment the patchers are built.
_OPTIONAL_MODULES = ("httpx_curl_cffi", "pyreqwest")
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
        pytest.fail(
            messages.recording_test_in_ci(request.node.nodeid, path, os.path.exists(path)),
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


def configure_vcr(
    vcr: Any,
    matcher: BodyMatcher,
    record_mode: str | None = None,
    before: dict[str, str] | None = None,
) -> None:
    """Our serializer, matcher and scrubbing on the VCR pytest-recording built."""
    from agentloop_tools._secrets import secret_values
    from agentloop_tools.cassettes import Scrubber, guard_recording, serializer

    vcr.register_serializer("yaml", serializer)
    vcr.register_matcher("agentloop_body", matcher)
    secrets = secret_values(os.environ)
    scrubber = Scrubber(secrets)
    # Every cassette is checked before it is written, whatever the serializer; a
    # refusal fails the test after teardown (see refusal()).
    guard_recording(vcr, secrets, provenance=record_mode or "none", before=before)
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
        if not any(
            options.get(name, getattr(vcr, name, None))
            for name in ("after_load_interaction", "filter_sensitive_data")
        ):
            # No load hook sees (or could change) the loaded interactions: they can be
            # shared between tests, as vcrpy copies each one it keeps.
            options["persister"] = _ParsedOnce(options.get("persister", vcr.persister))
        absent = absent_modules()
        empty_groups = [
            group
            for group, module in _OPTIONAL_GROUPS.items()
            if module in absent and group in _patcher_names()
        ]
        if empty_groups:
            # As vcrpy merges it: the cassette's option, else the VCR's.
            user_skip = options.get("skip_patchers", getattr(vcr, "skip_patchers", ())) or ()
            options["skip_patchers"] = tuple(dict.fromkeys([*user_skip, *empty_groups]))
        return _FastEnter(
            original(path, **options),
            [name for name in _OPTIONAL_MODULES if name in absent],
            filter_once=scrubbing_only,
        )

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


def absent_modules() -> frozenset[str]:
    """The optional HTTP libraries vcrpy looks for that cannot be imported.

    Found once per ``sys.path`` (``importlib.util.find_spec``, which asks the same
    finders an import does), so a folder added later, by a conftest or pytester, is
    searched again. A library imported since is never counted as absent.
    """
    key = tuple(sys.path)
    absent = _absent.get(key)
    if absent is None or any(name in sys.modules for name in absent):
        absent = frozenset(
            name
            for name in {*_OPTIONAL_GROUPS.values(), *_OPTIONAL_MODULES}
            if not _importable(name)
        )
        _absent.clear()
        _absent[key] = absent
    return absent


_absent: dict[tuple[str, ...], frozenset[str]] = {}


def _importable(name: str) -> bool:
    if name in sys.modules:
        return True
    try:
        return importlib.util.find_spec(name) is not None
    except (ImportError, ValueError):
        return True  # unsure: let vcrpy try, as it always did


def _patcher_names() -> tuple[str, ...]:
    """vcrpy's ``skip_patchers`` names; none where the option does not exist."""
    import vcr.patch

    return tuple(getattr(vcr.patch, "PATCHER_NAMES", ()))


class _FastEnter:
    """vcrpy's cassette context, entered with uninstalled libraries failing to import at once.

    vcrpy imports ``httpx_curl_cffi`` and ``pyreqwest`` each time it builds the httpx
    patchers; for the moment the cassette is entered, and only for those of them that
    are not installed (so the import would fail anyway), ``sys.modules`` holds ``None``
    for them, which makes the import fail without searching ``sys.path``.

    A replaying cassette whose only request filter is our scrubbing also filters each
    live request once (see ``_FilterOnce``).
    """

    def __init__(self, context: Any, absent: list[str], *, filter_once: bool) -> None:
        self._context = context
        self._absent = absent
        self._filter_once = filter_once

    def __enter__(self) -> Any:
        with _imports_fail_fast(self._absent):
            cassette = self._context.__enter__()
        if self._filter_once and cassette.write_protected:
            cassette._before_record_request = _FilterOnce(cassette._before_record_request)
        return cassette

    def __exit__(self, *exc_info: Any) -> Any:
        return self._context.__exit__(*exc_info)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self._context(*args, **kwargs)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._context, name)


class _ParsedOnce:
    """A cassette persister that reads and parses each cassette file once per run.

    Many tests replay one cassette (parametrized tests, a shared default cassette):
    the parsed interactions are kept, keyed by every file read (the cassette and any
    extra cassettes pytest-recording's marker names) with a hash of its bytes, so a
    file changed on disk between tests is parsed again. Reading and hashing a file
    costs microseconds; parsing it, milliseconds. A missing or unreadable cassette is
    never kept: it is asked for each time.
    """

    def __init__(self, persister: Any) -> None:
        self._persister = persister

    def load_cassette(self, cassette_path: Any, serializer: Any) -> Any:
        paths = [cassette_path, *getattr(self._persister, "extra_paths", ())]
        key = (
            type(self._persister),
            serializer,
            tuple(_file_identity(path) for path in paths),
        )
        loaded = _loaded.get(key)
        if loaded is None:
            loaded = tuple(self._persister.load_cassette(cassette_path, serializer=serializer))
            if len(_loaded) >= _LOADED_SIZE:
                _loaded.pop(next(iter(_loaded)))
            _loaded[key] = loaded
        requests, responses, *metadata = loaded
        # The lists are only read; metadata is a cassette's own, changed when recording.
        return (requests, responses, *(copy.deepcopy(value) for value in metadata))

    def save_cassette(self, cassette_path: Any, cassette_dict: Any, serializer: Any) -> None:
        self._persister.save_cassette(cassette_path, cassette_dict, serializer=serializer)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._persister, name)


_LOADED_SIZE = 64
_loaded: dict[tuple[Any, ...], tuple[Any, ...]] = {}


def _file_identity(path: Any) -> tuple[str, bytes | None]:
    """A file by its content: timestamps can be too coarse to show a rewrite."""
    try:
        with open(path, "rb") as file:
            content = file.read()
    except (OSError, ValueError):
        return (str(path), None)
    return (str(path), hashlib.blake2b(content, digest_size=20).digest())


class _FilterOnce:
    """A replaying cassette's request filter, run once per live request.

    vcrpy filters (deep-copies, then scrubs) a live request three times to replay it:
    to ask whether it can play it, again on that answer, then to play it. With our
    scrubbing as the only filter the answer is the same each time, and filtering it
    again changes nothing, so the first answer serves all three. Any change to the
    request (method, URL, body, headers) filters it afresh.
    """

    def __init__(self, filter_request: Callable[[Any], Any]) -> None:
        self._filter = filter_request
        self._last: tuple[Any, tuple[Any, ...], Any, tuple[Any, ...]] | None = None

    def __call__(self, request: Any) -> Any:
        last = self._last
        if last is not None:
            live, live_key, filtered, filtered_key = last
            if request is live and _fingerprint(request) == live_key:
                return filtered
            if request is filtered and _fingerprint(request) == filtered_key:
                return filtered
        result = self._filter(request)
        if result is None:
            self._last = None
        else:
            self._last = (request, _fingerprint(request), result, _fingerprint(result))
        return result


def _fingerprint(request: Any) -> tuple[Any, ...]:
    return (request.method, request.uri, request.body, tuple(request.headers.items()))


@contextmanager
def _imports_fail_fast(names: list[str]) -> Iterator[None]:
    planted = [name for name in names if name not in sys.modules]
    for name in planted:
        sys.modules[name] = None  # type: ignore[assignment]
    try:
        yield
    finally:
        for name in planted:
            if name in sys.modules and sys.modules[name] is None:
                del sys.modules[name]


def describe(item: pytest.Item) -> dict[str, str] | None:
    """The test's cassette for reports: its path and whether it was replayed or recorded."""
    cassette = getattr(item, "funcargs", {}).get("vcr")
    if cassette is None:
        return None
    return {
        "path": relative_to_root(str(cassette._path), item.config.rootpath),
        "state": "replaying" if cassette.write_protected else "recording",
    }


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
