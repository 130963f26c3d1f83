"""Where and when a cassette came from, written into the cassette by the recording.

The block sits first in the file, so reading a cassette's age takes its first lines,
not a parse of the whole file::

    provenance:
      recorded_at: '2026-12-01T11:06:57Z'
      record_mode: once
      agentloop_tools: 0.2.0
      agentloop: 0.6.1
      sdks: {anthropic: 2.15.0}
      providers: [anthropic]
      models: [claude-sonnet-4-5]

No secrets: versions, the provider names and the ``model`` field of request bodies.
A re-record whose interactions are unchanged keeps the file byte for byte (and so its
age); one that changes them writes new provenance.
"""

from __future__ import annotations

import datetime as dt
import json
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

KEY = "provenance"
_HEAD_BYTES = 4096
_RECORDED_AT = re.compile(
    r"^provenance:\s*\n(?:[ \t]+.*\n)*?[ \t]+recorded_at:\s*'?([^'\n]+)'?", re.MULTILINE
)
_AGE = re.compile(r"\s*(\d+)\s*([dw])\s*", re.IGNORECASE)


def facts(interactions: Sequence[Mapping[str, Any]], record_mode: str | None) -> dict[str, Any]:
    """The provenance of a recording made now, of these interactions."""
    from importlib import metadata

    from agentloop_tools._providers import provider_for_host

    def version(name: str) -> str | None:
        try:
            return metadata.version(name)
        except metadata.PackageNotFoundError:
            return None

    providers: list[str] = []
    models: list[str] = []
    for interaction in interactions:
        request = interaction.get("request", {}) if isinstance(interaction, Mapping) else {}
        uri = str(request.get("uri", "")) if isinstance(request, Mapping) else ""
        host = uri.split("://", 1)[-1].split("/", 1)[0].split(":", 1)[0]
        provider = provider_for_host(host)
        if provider is not None and provider.name not in providers:
            providers.append(provider.name)
        model = _model(request.get("body") if isinstance(request, Mapping) else None)
        if model and model not in models:
            models.append(model)
    sdks = {name: v for name in ("anthropic", "openai") if (v := version(name))}
    found: dict[str, Any] = {
        "recorded_at": dt.datetime.now(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "record_mode": record_mode or "none",
        "agentloop_tools": version("based-models-agentloop-tools"),
        "agentloop": version("based-models-agentloop"),
        "sdks": sdks,
        "providers": providers,
        "models": models,
    }
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
    try:
        when = dt.datetime.strptime(match.group(1).strip(), "%Y-%m-%dT%H:%M:%SZ")
    except ValueError:
        return None
    return when.replace(tzinfo=dt.UTC)


def parse_age(value: str) -> dt.timedelta:
    """``90d`` or ``12w`` as a duration; ValueError naming the accepted form otherwise."""
    match = _AGE.fullmatch(value)
    if match is None or int(match.group(1)) == 0:
        raise ValueError(
            f"{value!r} is not an age: write a whole number of days or weeks, such as 90d or 12w."
        )
    number, unit = int(match.group(1)), match.group(2).lower()
    return dt.timedelta(days=number * (7 if unit == "w" else 1))
