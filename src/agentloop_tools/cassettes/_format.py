"""The cassette file format: vcrpy's YAML, with JSON bodies a person can review.

A JSON request or response body is written as a YAML mapping under ``json:``
instead of one long escaped string, and multi-line text (SSE streams) as a block.
Reading accepts that form and plain vcrpy / pytest-recording cassettes alike, so
existing cassettes replay unchanged. Writing refuses a cassette that still holds
anything key-shaped after scrubbing.

This module is a vcrpy serializer: it has ``serialize`` and ``deserialize``.
"""

from __future__ import annotations

import contextlib
import json
import pickle
from typing import Any

import yaml

from agentloop_tools._errors import CassetteSecretError
from agentloop_tools._secrets import Detector
from agentloop_tools.cassettes._hygiene._guard import check_cassette, refusal_message
from agentloop_tools.cassettes._hygiene._leaks import Leak
from agentloop_tools.cassettes._load import check_depth, load_yaml

try:  # libyaml is several times faster; replay reads a cassette per test.
    from yaml import CSafeDumper as _BaseDumper
except ImportError:  # pragma: no cover - depends on how PyYAML was built
    from yaml import SafeDumper as _BaseDumper  # type: ignore[assignment]

__all__ = ["CassetteSecretError", "deserialize", "serialize"]


class _Dumper(_BaseDumper):
    pass


# Line breaks YAML folds in plain, single-quoted and block scalars. libyaml escapes
# them by itself; PyYAML's pure-Python emitter (a build without libyaml) writes them
# raw and reads NEL back as a space, so such strings are always written escaped.
_FOLDED_BREAKS = frozenset("\x85\u2028\u2029")


def _represent_text(dumper: _Dumper, value: str) -> yaml.ScalarNode:
    if not _FOLDED_BREAKS.isdisjoint(value):
        return dumper.represent_scalar("tag:yaml.org,2002:str", value, style='"')
    if "\n" in value:
        return dumper.represent_scalar("tag:yaml.org,2002:str", value, style="|")
    return dumper.represent_scalar("tag:yaml.org,2002:str", value)


_Dumper.add_representer(str, _represent_text)


def serialize(cassette: dict[str, Any]) -> str:
    """Write a cassette (vcrpy's dict form) as readable YAML; refuse key-shaped content.

    The check reads the decoded strings (before YAML escapes them) and the written text.
    """
    readable = {
        **cassette,
        "interactions": [_readable(interaction) for interaction in cassette["interactions"]],
    }
    detector = Detector()
    leaks = check_cassette(readable, detector)
    text = "" if leaks else _dump(readable)
    if not leaks:
        leaks = [Leak("the written YAML", f.kind, f.masked) for f in detector.find(text)]
    if leaks:
        raise CassetteSecretError(refusal_message(None, leaks), leaks)
    return text


def _dump(readable: dict[str, Any]) -> str:
    return yaml.dump(readable, Dumper=_Dumper, allow_unicode=True, sort_keys=False, width=100)


def deserialize(text: str) -> dict[str, Any]:
    """Read a cassette written by this module, vcrpy or pytest-recording.

    A test run replays the same cassette file for many tests (parametrized ones,
    say): each distinct text is parsed once, and later reads get a fresh copy.
    """
    parsed = _parsed.get(text)
    if parsed is None:
        parsed = pickle.dumps(_deserialize(text), protocol=pickle.HIGHEST_PROTOCOL)
        if len(_parsed) >= _CACHE_SIZE:
            _parsed.pop(next(iter(_parsed)))
        _parsed[text] = parsed
    data: dict[str, Any] = pickle.loads(parsed)
    return data


_CACHE_SIZE = 64
_parsed: dict[str, bytes] = {}


def _deserialize(text: str) -> dict[str, Any]:
    return from_data(load_yaml(text))


def from_data(data: Any) -> dict[str, Any]:
    """A cassette from its parsed form, whichever serializer wrote it.

    vcrpy's JSON serializer writes the structure its YAML one does, so a ``.json``
    cassette parsed as JSON is read from here like a YAML one.
    """
    if not isinstance(data, dict) or not isinstance(data.get("interactions"), list):
        raise ValueError("not a vcrpy cassette: expected a mapping with an 'interactions' list")
    check_depth(data)
    for interaction in data["interactions"]:
        if not isinstance(interaction, dict):
            continue  # the reader names it; vcrpy refuses it
        request = interaction.get("request") or {}
        if (
            isinstance(request, dict)
            and isinstance(request.get("body"), dict)
            and ("json" in request["body"])
        ):
            # A "json:" mapping that holds no JSON (bytes, dates) stays as written: the
            # reader names that one interaction instead of refusing the whole file.
            with contextlib.suppress(TypeError, ValueError):
                request["body"] = _dump_json(request["body"]["json"])
        response = interaction.get("response")
        body = response.get("body") if isinstance(response, dict) else None
        if isinstance(body, dict) and "json" in body:
            with contextlib.suppress(TypeError, ValueError):
                interaction["response"]["body"] = {"string": _dump_json(body["json"])}
    return data


def _readable(interaction: dict[str, Any]) -> dict[str, Any]:
    request = dict(interaction["request"])
    parsed = _parse_json(request.get("body"))
    if parsed is not None:
        request["body"] = {"json": parsed}
    elif isinstance(request.get("body"), bytes):
        request["body"] = _text_or_bytes(request["body"])
    response = dict(interaction["response"])
    body = response.get("body")
    if isinstance(body, dict):
        parsed = _parse_json(body.get("string"))
        if parsed is not None:
            response["body"] = {"json": parsed}
            # The body is re-serialised on replay; a recorded length would be wrong.
            response["headers"] = {
                name: value
                for name, value in (response.get("headers") or {}).items()
                if name.lower() != "content-length"
            }
        elif isinstance(body.get("string"), bytes):
            response["body"] = {"string": _text_or_bytes(body["string"])}
    return {**interaction, "request": request, "response": response}


def _parse_json(body: object) -> Any:
    if isinstance(body, bytes):
        try:
            body = body.decode("utf-8")
        except UnicodeDecodeError:
            return None
    if not isinstance(body, str) or not body.strip().startswith(("{", "[")):
        return None
    try:
        return json.loads(body)
    except ValueError:
        return None


def _text_or_bytes(body: bytes) -> str | bytes:
    try:
        return body.decode("utf-8")
    except UnicodeDecodeError:
        return body


def _dump_json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))
