"""What makes replaying cheap: cassettes parsed once per run, absent HTTP libraries skipped.

vcrpy builds its patchers and reads its cassette file for every test; these shortcuts
change neither what is matched nor what is recorded, only what is done again.
"""

from __future__ import annotations

import copy
import hashlib
import importlib.util
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any


def enter_fast(
    vcr: Any,
    use_cassette: Callable[..., Any],
    path: Any,
    options: dict[str, Any],
    *,
    filter_once: bool,
) -> Any:
    """vcrpy's cassette context for ``path``, made cheaper to enter and to replay.

    Shares parsed interactions between tests when no load hook could see them, skips
    the patchers of HTTP libraries that are not installed, and (``filter_once``) filters
    each live request once when our scrubbing is the only request filter.
    """
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
        use_cassette(path, **options),
        [name for name in _OPTIONAL_MODULES if name in absent],
        filter_once=filter_once,
    )


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
        self._read: dict[str, tuple[bytes, bytes]] = {}

    def load_cassette(self, cassette_path: Any, serializer: Any) -> Any:
        paths = [cassette_path, *getattr(self._persister, "extra_paths", ())]
        identities = []
        for path in paths:
            content, digest = _file_identity(path)
            identities.append((str(path), digest))
            if content is not None and digest is not None:
                self._read[str(path)] = (content, digest)
        key = (type(self._persister), serializer, tuple(identities))
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
        self._read.pop(str(cassette_path), None)  # no longer what the file holds
        self._persister.save_cassette(cassette_path, cassette_dict, serializer=serializer)

    def bytes_read(self, cassette_path: Any) -> tuple[bytes, bytes] | None:
        """The bytes this test's cassette was loaded from, and their hash; None if not read.

        What the test replays, read once: the plugin's other looks at the file (the
        placeholders it holds) need not read it again.
        """
        return self._read.get(str(cassette_path))

    def __getattr__(self, name: str) -> Any:
        return getattr(self._persister, name)


_LOADED_SIZE = 64
_loaded: dict[tuple[Any, ...], tuple[Any, ...]] = {}


def _file_identity(path: Any) -> tuple[bytes | None, bytes | None]:
    """A file's bytes and their hash (timestamps can be too coarse to show a rewrite);
    ``(None, None)`` for a file that is missing, not a regular file, or over the limit."""
    from agentloop_tools._errors import InputError
    from agentloop_tools.cassettes._load import read_bytes

    try:
        content = read_bytes(path)
    except (InputError, ValueError, TypeError):
        return (None, None)
    return (content, hashlib.blake2b(content, digest_size=20).digest())


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
