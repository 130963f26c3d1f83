"""What ``agentloop-tools evidence`` prints: its JSON, and its table of each file's
turns (sources, citations, links) and evidence record.

Recorded text goes through ``visible`` field by field; ``_emit.emit`` then cleans the
whole output, as for every command.
"""

from __future__ import annotations

import json
from typing import Any, TextIO

from agentloop_tools._visible import visible
from agentloop_tools.cli._output import clip, where_of


def evidence_json(files: list[dict[str, Any]], out: TextIO) -> None:
    json.dump({"files": files}, out, indent=2)
    out.write("\n")


def evidence_table(files: list[dict[str, Any]], out: TextIO) -> None:
    from agentloop_tools.cli import _provenance_view as _provenance_view

    for file in files:
        out.write(f"{visible(str(file['path']))}\n")
        if str(file["path"]).lower().endswith(_provenance_view.CASSETTE_SUFFIXES) and (
            "provenance" in file
        ):
            dated = {"provenance": file["provenance"], "age_days": file["age_days"]}
            out.writelines(f"  {line}\n" for line in _provenance_view.lines(dated))
        for turn in file["turns"]:
            _turn_lines(turn, out)
        if file.get("evidence") and file["turns"]:
            _record_lines(file["evidence"], out)
        if not file["turns"] and not file["problems"]:
            skipped = file.get("tool_requests", 0)
            note = f" ({skipped} search or page request(s), not model traffic)" if skipped else ""
            out.write(f"  no model turns{note}\n")
        for problem in file["problems"]:
            out.write(f"  could not read {where_of(problem)}: {visible(problem['reason'])}\n")


def _turn_lines(turn: dict[str, Any], out: TextIO) -> None:
    from agentloop_tools._report._entries import also_written

    calls = turn["interactions"]
    if len(calls) > 1:
        where = f"interactions {', '.join(str(call) for call in calls)}"
    elif calls:
        where = f"interaction {calls[0]}"
    else:
        where = f"message {turn['message_index']}"
    out.write(f"  turn at {where}: {clip(visible(turn['asked']), 70)}\n")
    out.write(f"    sources ({len(turn['sources'])}):\n")
    out.writelines(
        f"      - {visible(s['url'])}{visible(also_written(s))}\n" for s in turn["sources"]
    )
    out.write(f"    citations ({len(turn['citations'])}):\n")
    out.writelines(f"      - {visible(c['url'])}\n" for c in turn["citations"])
    links = turn.get("links", [])
    if links:
        # A link to a page a tool returned is a citation to assert_cited: say which.
        consulted = sum(1 for link in links if link["consulted"])
        out.write(f"    links ({len(links)}, {consulted} to a page a tool returned):\n")
        out.writelines(
            f"      - {visible(link['url'])} "
            f"[{'consulted' if link['consulted'] else 'not consulted'}]\n"
            for link in links
        )


_SHOWN_COUNTERS = (
    ("model_requests", "model request(s)"),
    ("input_tokens", "input tokens"),
    ("output_tokens", "output tokens"),
    ("cache_read_tokens", "cache read"),
    ("cache_write_tokens", "cache write"),
    ("searches", "hosted search(es)"),
    ("fetches", "hosted fetch(es)"),
    ("tool_calls", "tool call(s)"),
    ("refused_attempts", "refused"),
)


def _counters(counters: dict[str, Any]) -> str:
    """``2 model request(s), unknown input tokens, ...``: unknown is never shown as 0."""
    return ", ".join(
        f"{'unknown' if counters.get(name) is None else counters[name]} {label}"
        for name, label in _SHOWN_COUNTERS
    )


def _record_lines(record: dict[str, Any], out: TextIO) -> None:
    """The evidence record (``agentloop_evidence.summary()``) of a file, conversation by
    conversation, then the total."""
    out.write("  evidence record:\n")
    for conversation in record["conversations"]:
        out.write(f"    conversation {conversation['index']}: "
                  f"{_counters(conversation['counters'])}\n")  # fmt: skip
        for hosted in conversation["hosted"]:
            out.write(f"      - hosted {visible(hosted['kind'])}: "
                      f"{clip(visible(hosted['target']), 90)}\n")  # fmt: skip
        for call in conversation["tool_calls"]:
            refused = " (refused)" if call["refused"] else ""
            out.write(
                f"      - tool {visible(call['name'])}: {visible(call['outcome'])}{refused}\n"
            )
    out.write(f"    total: {_counters(record['totals'])}\n")


# --- escapes -----------------------------------------------------------------------
