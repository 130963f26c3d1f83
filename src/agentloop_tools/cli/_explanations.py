"""``agentloop-tools explain URL_OR_TEXT...``: why the policy permits or refuses it.

Each argument is explained on its own (``-`` reads one text from stdin): a URL gets the
readings made of it, a text every link and mention found. Exit 0 when the policy
permits everything given, 1 when it refuses something.
"""

from __future__ import annotations

import json
import sys
from typing import TYPE_CHECKING, Any, TextIO

from agentloop_tools.web._policy._explain import MAX_TEXT

if TYPE_CHECKING:
    import argparse

# stdin is read up to this many bytes (then the text is explained up to MAX_TEXT).
MAX_STDIN_BYTES = 4 * MAX_TEXT


def explain(args: argparse.Namespace) -> int:
    from agentloop_tools.cli._emit import emit
    from agentloop_tools.cli._inputs import chosen_policy
    from agentloop_tools.cli._output import EXIT_CLEAN, EXIT_FOUND

    policy, origin = chosen_policy(args)
    explanations = [policy.explain(subject) for subject in subjects(args.subjects)]
    emit(
        None,
        lambda out: write(explanations, policy, origin, args.format, out),
        exact=args.format == "json",
    )
    return EXIT_CLEAN if all(e.permitted for e in explanations) else EXIT_FOUND


def subjects(raw: list[str]) -> list[str]:
    out = []
    for subject in raw:
        if subject == "-":
            data = sys.stdin.buffer.read(MAX_STDIN_BYTES + 1)[:MAX_STDIN_BYTES]
            out.append(data.decode("utf-8", "replace"))
        else:
            out.append(subject)
    return out


def as_json(explanation: Any) -> dict[str, Any]:
    return {
        "subject": explanation.subject,
        "kind": explanation.kind,
        "permitted": explanation.permitted,
        "verdict": explanation.verdict,
        "rule": explanation.rule,
        "span": list(explanation.span) if explanation.span else None,
        "readings": [
            {
                "name": reading.name,
                "text": reading.text,
                "host": reading.host,
                "rule": reading.rule,
                "host_rule": reading.host_rule,
                "permitted": reading.permitted,
                "note": reading.note,
            }
            for reading in explanation.readings
        ]
        if explanation.kind != "text"
        else [],
        "items": [as_json(item) for item in explanation.items],
        "truncated": explanation.truncated,
        "explanation": str(explanation),
    }


def write(explanations: list[Any], policy: Any, origin: str, format: str, out: TextIO) -> None:
    if format == "json":
        document = {
            "policy": {"mode": policy.mode, "domains": list(policy.domains), "from": origin},
            "explanations": [as_json(explanation) for explanation in explanations],
        }
        json.dump(document, out, indent=2)
        out.write("\n")
        return
    for explanation in explanations:
        out.write(f"{explanation}\n")
    from agentloop_tools._visible import visible

    out.write(f"(policy from {visible(origin)})\n")
