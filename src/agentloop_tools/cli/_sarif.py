"""``agentloop-tools audit --format sarif``: SARIF 2.1.0 for code-scanning dashboards.

One run, with one rule per policy rule (``blocked/DOMAIN`` for a blocklist,
``allowed/DOMAIN`` for an allowlist: those never fire, they document the list) and
``not-on-the-allowlist``; a result per violation at the cassette file and the line its
interaction starts on (a logical location ``interactions[N]`` too); input that could
not be read as tool execution notifications, with ``executionSuccessful`` false.

tests/cli/test_sarif.py validates the output against the official schema.
"""

from __future__ import annotations

import hashlib
import os
import re
import stat
from collections.abc import Collection, Iterator
from pathlib import Path
from typing import Any, Protocol, TextIO
from urllib.parse import quote

SCHEMA = (
    "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
)
ALLOWLIST_RULE = "not-on-the-allowlist"
# Interaction lines are found by reading the file's lines: bounded like the reader.
_MAX_SCAN_BYTES = 64 * 1024 * 1024


class Audited(Protocol):
    path: str
    violations: Collection[dict[str, Any]]
    problems: Collection[dict[str, Any]]


def _information() -> str:
    from agentloop_tools._docs import docs_url

    return docs_url("sarif")


def rule_id(mode: str, rule: str | None) -> str:
    if rule is None:
        return ALLOWLIST_RULE
    return f"{'blocked' if mode == 'block' else 'allowed'}/{rule}"


def _rules(policy: Any) -> list[dict[str, Any]]:
    information = _information()
    rules = []
    for domain in policy.domains:
        if policy.mode == "block":
            text = f"Blocked by {domain!r}: the evidence reached {domain} (or below it)."
            level = "error"
        else:
            text = f"Allowlist rule {domain!r}: {domain} (and below it) is permitted."
            level = "none"
        rules.append(
            {
                "id": rule_id(policy.mode, domain),
                "name": "BlockedDomain" if policy.mode == "block" else "AllowedDomain",
                "shortDescription": {"text": text},
                "helpUri": information,
                "defaultConfiguration": {"level": level},
                "properties": {"domain": domain, "mode": policy.mode},
            }
        )
    allowlist = (
        f"The evidence reached a domain outside the allowlist ({', '.join(policy.domains)})."
        if policy.mode == "allow"
        else "The evidence reached a domain outside the allowlist (a blocklist never reports this)."
    )
    rules.append(
        {
            "id": ALLOWLIST_RULE,
            "name": "NotOnTheAllowlist",
            "shortDescription": {"text": allowlist},
            "helpUri": information,
            "defaultConfiguration": {"level": "error"},
        }
    )
    return rules


def _artifact(path: str, root: str) -> dict[str, Any]:
    """A relative URI under ``%SRCROOT%`` (the current folder) when the file is below it."""
    absolute = os.path.abspath(path)
    relative = os.path.relpath(absolute, root) if absolute.startswith(root + os.sep) else None
    if relative is not None:
        return {"uri": quote(relative.replace(os.sep, "/")), "uriBaseId": "%SRCROOT%"}
    return {"uri": Path(absolute).as_uri()}


_ITEM = re.compile(rb"^( *)- ")


def interaction_lines(path: str) -> list[int]:
    """The 1-based line each interaction of a YAML cassette starts on ([] if unknown)."""
    if not path.lower().endswith((".yaml", ".yml")):
        return []
    try:
        info = os.stat(path)
        if not stat.S_ISREG(info.st_mode) or info.st_size > _MAX_SCAN_BYTES:
            return []  # a FIFO is never opened: it could block
        with open(path, "rb") as file:
            lines: list[int] = []
            inside = False
            indent: bytes | None = None
            for number, line in enumerate(file, start=1):
                if line.startswith(b"interactions:"):
                    inside = True
                    continue
                if not inside or not line.strip() or line.lstrip().startswith(b"#"):
                    continue
                if not line.startswith((b" ", b"-")):
                    break  # the next top-level key
                match = _ITEM.match(line)
                if match and (indent is None or match.group(1) == indent):
                    indent = match.group(1)
                    lines.append(number)
            return lines
    except OSError:
        return []


def region(interaction: int | None, lines: list[int]) -> dict[str, int]:
    """Where an interaction sits in its file ({} if unknown): SARIF's region, and the
    ``line=`` of a GitHub annotation, from this one place."""
    if interaction is not None and 0 <= interaction < len(lines):
        return {"startLine": lines[interaction]}
    return {}


def _location(path: str, root: str, interaction: int | None, lines: list[int]) -> dict[str, Any]:
    physical: dict[str, Any] = {"artifactLocation": _artifact(path, root)}
    if where := region(interaction, lines):
        physical["region"] = where
    location: dict[str, Any] = {"physicalLocation": physical}
    if interaction is not None:
        location["logicalLocations"] = [
            {"fullyQualifiedName": f"interactions[{interaction}]", "kind": "element"}
        ]
    return location


def _fingerprint(path: str, violation: dict[str, Any]) -> str:
    # Stable across runs and machines: the file as written, never its absolute path.
    text = "\0".join(
        str(part)
        for part in (
            path.replace(os.sep, "/"),
            violation["interaction"],
            violation["where"],
            violation["url"],
            violation["rule"],
        )
    )
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:32]


def _result(path: str, v: dict[str, Any], mode: str, root: str, lines: list[int]) -> dict[str, Any]:
    """One violation as a SARIF result (its ``ruleIndex`` is set once the rules are)."""
    from agentloop_tools.cli._refused import fails, note

    where = "" if v["interaction"] is None else f" (interaction {v['interaction']})"
    return {
        "ruleId": rule_id(mode, v["rule"]),
        # A refused attempt that does not fail the run is a warning.
        "level": "error" if fails(v) else "warning",
        "message": {"text": f"{v['where']} {v['url']}: {v['verdict']}{note(v)}{where}"},
        "locations": [_location(path, root, v["interaction"], lines)],
        "partialFingerprints": {"agentloopViolation/v1": _fingerprint(path, v)},
        "properties": {
            "where": v["where"],
            "url": v["url"],
            "conversation": v["conversation"],
            "message_index": v["message_index"],
            "refused": bool(v.get("refused", False)),
        },
    }


def write(audits: list[Audited], policy: Any, origin: str, out: TextIO) -> None:
    from agentloop_tools import __version__
    from agentloop_tools.cli._spool import dump_json, marker

    root = os.path.abspath(os.getcwd())
    rule_index = {rule["id"]: number for number, rule in enumerate(_rules(policy))}
    # Results and notifications are written one at a time, from where they are kept.
    results, notifications = marker(), marker()
    document = {
        "$schema": SCHEMA,
        "version": "2.1.0",
        "runs": [
            {
                "tool": {
                    "driver": {
                        "name": "agentloop-tools",
                        "version": __version__,
                        "informationUri": _information(),
                        "rules": _rules(policy),
                    }
                },
                "originalUriBaseIds": {"%SRCROOT%": {"uri": Path(root).as_uri() + "/"}},
                "invocations": [
                    {
                        "executionSuccessful": not any(audit.problems for audit in audits),
                        "toolExecutionNotifications": [notifications],
                        "properties": {"policy": repr(policy), "policyFrom": origin},
                    }
                ],
                "results": [results],
            }
        ],
    }
    dump_json(
        document,
        out,
        {
            results: _results(audits, policy.mode, root, rule_index),
            notifications: _notifications(audits, root),
        },
    )


def _results(
    audits: list[Audited], mode: str, root: str, rule_index: dict[str, int]
) -> Iterator[dict[str, Any]]:
    for audit in audits:
        lines = interaction_lines(audit.path) if audit.violations else []
        for v in audit.violations:
            result = _result(audit.path, v, mode, root, lines)
            result["ruleIndex"] = rule_index[result["ruleId"]]
            yield result


def _notifications(audits: list[Audited], root: str) -> Iterator[dict[str, Any]]:
    for audit in audits:
        for problem in audit.problems:
            yield {
                "level": "error",
                "message": {"text": f"could not read: {problem['reason']}"},
                "locations": [_location(str(problem["path"]), root, None, [])],
            }
