"""Where and when a cassette came from, written into the cassette by the recording.

Cassette format v2: the ``provenance:`` block sits first in the file, so reading a
cassette's age takes its first lines, not a parse of the whole file::

    provenance:
      schema: 2
      recorded_at: '2026-12-01T11:06:57Z'
      record_mode: once
      source: scripts            # live | scripts | adopted
      script: {test: 'test_agent.py::test_cites', origin: conftest.agentloop_script,
               model: claude-sonnet-4-5}
      agentloop_tools: 0.2.0
      agentloop: 0.6.1
      sdks: {anthropic: 2.15.0}  # the SDKs of the providers the interactions reach
      extractors: {trafilatura: 2.0.0, selectolax: null, pypdf: 5.4.0}
      providers: [anthropic]
      models: [claude-opus-5]    # the ``model`` field of the request bodies
      policy:
        markers: [{from: the domain_policy marker, mode: block, domains: [medium.com]}]
        project: {from: pyproject.toml [tool.agentloop-tools], mode: block, rules: 2,
                  fingerprint: 'sha256:...'}
        replace: false
    interactions: [...]
    evidence:                    # the evidence record of each test that recorded it
      schema: 1
      tests: {'test_agent.py::test_cites': {...}}

No secrets and no answer text: versions, names, the ``model`` fields and the policy's
rules (the project policy only by its fingerprint: it may hold 100,000 rules). A field
that is missing (a v1 cassette, an adopted one) reads as unknown. A re-record whose
interactions are unchanged keeps the file byte for byte (and so its age); one that
changes them writes new provenance.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import os
import re
import stat
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

KEY = "provenance"
EVIDENCE_KEY = "evidence"
EVIDENCE_SCHEMA = 1
SCHEMA = 2
UNKNOWN = "unknown"
# What web_fetch reads pages with when installed (the [fetch] extra): a recorded tool
# result depends on them, so a replay miss can name the one that changed.
EXTRACTORS = ("trafilatura", "selectolax", "pypdf")
# The client library each provider's agentloop client is built on, by our install
# extra: the Anthropic SDK, or plain httpx for the OpenAI-compatible providers.
_SDK_OF_EXTRA = {"anthropic": "anthropic", "openai-compat": "httpx"}
_HEAD_BYTES = 4096
_MAX_BLOCK_BYTES = 16 * 1024 * 1024
_RECORDED_AT = re.compile(
    r"^provenance:\s*\n(?:[ \t]+.*\n)*?[ \t]+recorded_at:\s*'?([^'\n]+)'?", re.MULTILINE
)
_AGE = re.compile(r"\s*(\d+)\s*([dw])\s*", re.IGNORECASE)
_RESPONSE_MODEL = re.compile(r'"model"\s*:\s*"([^"\\\n]{1,200})"')


@dataclass
class Recording:
    """What the plugin knows of a recording beyond its interactions, filled in as the
    test runs and read when its cassette is written.

    Attributes:
        test: the test's id.
        source: ``live``, or ``scripts`` once a scripted provider served the test.
        script_origin: where the script came from (the ``agentloop_script`` fixture's
            module and name, or the test's own ``http_client=``).
        policy: the policy the test ran under (:func:`policy_facts`); or
        policy_from: what gives it, asked when the cassette is written.
        evidence: gives the test's evidence record when the cassette is written.
        replaced_evidence, written_evidence: the test's record the file held before a
            re-recording that changed its interactions, and the one written.
    """

    test: str = ""
    source: str = "live"
    script_origin: str | None = None
    policy: dict[str, Any] | None = None
    # Gives ``policy`` when the cassette is written, if it was not set: a replayed test
    # never writes, and need not hash the project's rules.
    policy_from: Callable[[], dict[str, Any]] | None = None
    # The test's evidence record as JSON-ready data, computed when the cassette is
    # written (the plugin sets it; None: no record).
    evidence: Callable[[], Mapping[str, Any] | None] | None = None
    # Set when the cassette is written with changed interactions over a file that held
    # this test's record: the record replaced, and the one written (drift is their diff).
    replaced_evidence: Mapping[str, Any] | None = None
    written_evidence: Mapping[str, Any] | None = None


def version(name: str) -> str | None:
    """An installed distribution's version, or None."""
    from importlib import metadata

    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return None


def environment(sdks: Sequence[str] = ("anthropic", "httpx")) -> dict[str, Any]:
    """The versions a recorded tool result or request can depend on, as installed now."""
    return {
        "agentloop_tools": version("based-models-agentloop-tools"),
        "agentloop": version("based-models-agentloop"),
        "sdks": {name: version(name) for name in sdks},
        "extractors": {name: version(name) for name in EXTRACTORS},
    }


def facts(
    interactions: Sequence[Mapping[str, Any]],
    record_mode: str | None,
    recording: Recording | None = None,
) -> dict[str, Any]:
    """The provenance of a recording made now, of these interactions."""
    from agentloop_tools._providers import provider_for_host

    providers: list[str] = []
    models: list[str] = []
    claimed: list[str] = []
    sdks: list[str] = []
    for interaction in interactions:
        request = interaction.get("request", {}) if isinstance(interaction, Mapping) else {}
        uri = str(request.get("uri", "")) if isinstance(request, Mapping) else ""
        host = uri.split("://", 1)[-1].split("/", 1)[0].split(":", 1)[0]
        provider = provider_for_host(host)
        if provider is not None and provider.name not in providers:
            providers.append(provider.name)
            sdk = _SDK_OF_EXTRA.get(provider.extra)
            if sdk and sdk not in sdks:
                sdks.append(sdk)
        model = _model(request.get("body") if isinstance(request, Mapping) else None)
        if model and model not in models:
            models.append(model)
        if provider is not None:
            for named in _response_models(interaction.get("response")):
                if named not in claimed:
                    claimed.append(named)
    recording = recording or Recording()
    now = environment(sdks)
    found: dict[str, Any] = {
        "schema": SCHEMA,
        "recorded_at": dt.datetime.now(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "record_mode": record_mode or "none",
        "source": recording.source,
    }
    if recording.source == "scripts":
        found["script"] = {
            "test": recording.test or UNKNOWN,
            "origin": recording.script_origin or UNKNOWN,
            "model": claimed[0] if len(claimed) == 1 else (claimed or UNKNOWN),
        }
    found.update(
        {
            "agentloop_tools": now["agentloop_tools"],
            "agentloop": now["agentloop"],
            "sdks": {name: v for name, v in now["sdks"].items() if v},
            "extractors": now["extractors"],
            "providers": providers,
            "models": models,
        }
    )
    if recording.policy is None and recording.policy_from is not None:
        recording.policy = recording.policy_from()
    if recording.policy is not None:
        found["policy"] = recording.policy
    return found


def _model(body: object) -> str | None:
    if isinstance(body, Mapping):
        body = body.get("json", body.get("string"))
    if isinstance(body, bytes):
        body = body.decode("utf-8", "replace")
    if isinstance(body, str):
        try:
            body = json.loads(body)
        except ValueError:
            return None
    model = body.get("model") if isinstance(body, Mapping) else None
    return model if isinstance(model, str) and len(model) <= 200 else None


def _response_models(response: object) -> list[str]:
    """The models a provider's answer names (a JSON body, or an SSE stream's events)."""
    body = response.get("body") if isinstance(response, Mapping) else None
    if isinstance(body, Mapping):
        body = body.get("json", body.get("string"))
    if isinstance(body, Mapping):
        model = body.get("model")
        return [model] if isinstance(model, str) and len(model) <= 200 else []
    if isinstance(body, bytes):
        body = body.decode("utf-8", "replace")
    if not isinstance(body, str):
        return []
    return list(dict.fromkeys(_RESPONSE_MODEL.findall(body[:1_000_000])))


# --- the evidence block, after the interactions ----------------------------------


def evidence_of(recording: Any) -> tuple[str, dict[str, Any]] | None:
    """``(test id, record)`` of a recording that has an evidence record, else None."""
    give = getattr(recording, "evidence", None)
    if give is None:
        return None
    record = give()
    if not isinstance(record, Mapping):
        return None
    return str(getattr(recording, "test", "") or UNKNOWN), dict(record)


def evidence_block(
    stored: object, record: tuple[str, dict[str, Any]] | None, *, replace: bool
) -> dict[str, Any] | None:
    """The ``evidence:`` block to write: one record per test id.

    ``stored``: the block the file holds (kept for the other tests of a shared
    cassette); ``record``: this test's; ``replace``: whether it replaces a stored
    record of the same test (when the interactions changed) or is only added.
    """
    tests: dict[str, Any] = {}
    if isinstance(stored, Mapping) and isinstance(stored.get("tests"), Mapping):
        tests = {str(test): value for test, value in stored["tests"].items()}
    if record is not None:
        test, data = record
        if replace or test not in tests:
            tests[test] = data
    if not tests:
        return None
    return {"schema": EVIDENCE_SCHEMA, "tests": dict(sorted(tests.items()))}


def read_evidence(data: object) -> dict[str, dict[str, Any]]:
    """The stored records of a parsed cassette, by test id ({} when it holds none)."""
    block = data.get(EVIDENCE_KEY) if isinstance(data, Mapping) else None
    tests = block.get("tests") if isinstance(block, Mapping) else None
    if not isinstance(tests, Mapping):
        return {}
    return {str(test): dict(value) for test, value in tests.items() if isinstance(value, Mapping)}


# --- the policy a test ran under -----------------------------------------------------


def fingerprint(policy: Any) -> str:
    """A stable hash of a policy's rules: the same list gives the same text anywhere."""
    digest = hashlib.sha256()
    digest.update(f"{policy.mode}\n{bool(getattr(policy, 'bare_hosts', False))}\n".encode())
    for domain in policy.domains:
        digest.update(domain.encode("utf-8", "surrogatepass") + b"\n")
    return f"sha256:{digest.hexdigest()}"


def rules_of(policy: Any, origin: str) -> dict[str, Any]:
    """A marker's policy inline: where it was written, its mode and its rules."""
    entry: dict[str, Any] = {"from": origin, "mode": policy.mode, "domains": list(policy.domains)}
    if getattr(policy, "bare_hosts", False):
        entry["bare_hosts"] = True
    return entry


def policy_facts(
    markers: Sequence[tuple[Any, str]],
    project: tuple[Any, str] | None,
    *,
    replace: bool,
    refused_attempts: object = None,
) -> dict[str, Any]:
    """The ``policy`` block: the markers' rules inline, the project's by its fingerprint."""
    found: dict[str, Any] = {
        "markers": [rules_of(policy, origin) for policy, origin in markers],
        "project": None,
        "replace": replace,
    }
    if project is not None:
        policy, origin = project
        found["project"] = {
            "from": origin,
            "mode": policy.mode,
            "rules": len(policy.domains),
            "fingerprint": fingerprint(policy),
        }
    if refused_attempts is not None:
        plain = isinstance(refused_attempts, bool | int | float | str)
        found["refused_attempts"] = refused_attempts if plain else repr(refused_attempts)[:200]
    return found


# --- reading ------------------------------------------------------------------------


def recorded_at(path: str | Path) -> dt.datetime | None:
    """When the cassette was recorded, from its first lines; None if it does not say."""
    try:
        with open(path, "rb") as file:
            head = file.read(_HEAD_BYTES).decode("utf-8", "replace")
    except OSError:
        return None
    match = _RECORDED_AT.search(head)
    if match is None:
        return None
    return parse_time(match.group(1).strip())


def parse_time(text: str) -> dt.datetime | None:
    try:
        when = dt.datetime.strptime(text, "%Y-%m-%dT%H:%M:%SZ")
    except ValueError:
        return None
    return when.replace(tzinfo=dt.UTC)


def block_text(path: str | Path) -> str | None:
    """The cassette's leading ``provenance:`` block as text, or None when it has none.

    Only the block is read (up to the next top-level key), however large the cassette;
    a FIFO or device is never opened.
    """
    try:
        if not stat.S_ISREG(os.stat(path).st_mode):
            return None
        with open(path, "rb") as file:
            lines: list[bytes] = []
            size = 0
            started = False
            while size <= _MAX_BLOCK_BYTES:
                line = file.readline(_MAX_BLOCK_BYTES + 1)
                if not line:
                    break
                size += len(line)
                text = line.lstrip(b"\xef\xbb\xbf") if not lines and not started else line
                if not started:
                    if text.startswith(b"provenance:"):
                        started = True
                        lines.append(text)
                    elif text.strip() and not text.startswith(b"#"):
                        return None  # the first key is another one: no provenance
                    continue
                if text[:1] not in (b" ", b"\t", b"\r", b"\n", b"#"):
                    break  # the next top-level key
                lines.append(text)
    except OSError:
        return None
    if not started or size > _MAX_BLOCK_BYTES:
        return None
    return b"".join(lines).decode("utf-8", "replace")


def read(path: str | Path) -> dict[str, Any] | None:
    """The cassette's provenance mapping, or None (none, unreadable, or not a mapping)."""
    from agentloop_tools.cassettes._load import load_yaml

    text = block_text(path)
    if text is None:
        return None
    try:
        block = load_yaml(text)
    except Exception:  # a hand-broken block reads as no provenance, never a crash
        return None
    found = block.get(KEY) if isinstance(block, dict) else None
    return {str(key): value for key, value in found.items()} if isinstance(found, dict) else None


def environment_changes(recorded: Mapping[str, Any] | None) -> list[str]:
    """What differs between the environment a cassette was recorded in and this one.

    One line per version that differs (``trafilatura: recorded not installed, now
    2.0.0``); a version the cassette does not record reads ``unknown``.
    """
    recorded = recorded or {}
    sdks = recorded.get("sdks")
    sdks = sdks if isinstance(sdks, Mapping) else {}
    extractors = recorded.get("extractors")
    now = environment([str(name) for name in sdks][:10] or ("anthropic", "httpx"))
    pairs: list[tuple[str, object, object]] = [
        ("agentloop-tools", recorded.get("agentloop_tools", UNKNOWN), now["agentloop_tools"]),
        ("agentloop", recorded.get("agentloop", UNKNOWN), now["agentloop"]),
    ]
    for name, installed in now["extractors"].items():
        was = extractors.get(name, UNKNOWN) if isinstance(extractors, Mapping) else UNKNOWN
        pairs.append((name, was, installed))
    for name, installed in now["sdks"].items():
        pairs.append((name, sdks.get(name, UNKNOWN) if sdks else UNKNOWN, installed))
    return [
        f"{name}: recorded {_shown(was)}, now {_shown(installed)}"
        for name, was, installed in pairs
        if was != installed
    ]


def _shown(value: object) -> str:
    if value is None:
        return "not installed"
    return " ".join(str(value).split())[:60]


def parse_age(value: str) -> dt.timedelta:
    """``90d`` or ``12w`` as a duration; ValueError naming the accepted form otherwise."""
    match = _AGE.fullmatch(value)
    if match is None or int(match.group(1)) == 0:
        raise ValueError(
            f"{value!r} is not an age: write a whole number of days or weeks, such as 90d or 12w."
        )
    number, unit = int(match.group(1)), match.group(2).lower()
    return dt.timedelta(days=number * (7 if unit == "w" else 1))
