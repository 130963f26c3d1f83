"""``agentloop-tools scan``: credentials in every file under the paths (exit 1 if any).

Every file is read, whatever its name (a pre-commit hook passes them all), but inside
the folders audit skips too (version control, environments, caches: counted in the
summary); how each was decoded is counted, so a file read byte for byte is never a
silent pass.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, TextIO

from agentloop_tools._visible import visible
from agentloop_tools.cli import _output
from agentloop_tools.cli._emit import emit
from agentloop_tools.cli._inputs import collect
from agentloop_tools.cli._output import EXIT_CLEAN, EXIT_FOUND, EXIT_USAGE, progress, stderr

if TYPE_CHECKING:
    import argparse

    from agentloop_tools.cli._inputs import Found


@dataclass
class _Scanned:
    """What the scan found: lines to print, problems, and how files were read."""

    lines: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    secrets: int = 0
    encodings: dict[str, list[str]] = field(default_factory=dict)
    parsed: int = 0


def scan(args: argparse.Namespace) -> int:
    from agentloop_tools._secrets import Detector, secret_values
    from agentloop_tools.cassettes._scan import scan_file

    found = collect(args.paths, suffixes=None)
    # The environment's credentials (and their encodings) are found whatever their shape.
    detector = Detector(secret_values(os.environ))
    scanned = _Scanned(
        problems=[
            f"{visible(str(problem['path']))}: {visible(problem['reason'])}"
            for problem in found.problems
        ]
    )
    for path in progress(found.files, "scan"):
        result = scan_file(path, detector)
        scanned.secrets += len(result.findings)
        shown = visible(str(path))
        scanned.lines += [f"{shown}: {visible(str(hit))}" for hit in result.findings]
        scanned.problems += [f"{shown}: {visible(str(problem))}" for problem in result.problems]
        scanned.encodings.setdefault(result.encoding, []).append(str(path))
        scanned.parsed += result.parsed
    emit(None, lambda out: _write(scanned, found, args.paths, out))
    _output.report_links(found)
    if scanned.secrets:
        stderr(
            f"{scanned.secrets} secret(s) found. Remove them (re-record cassettes with the "
            "agentloop-tools plugin, which scrubs credentials) and rotate any real key."
        )
    if scanned.problems:
        return EXIT_USAGE
    return EXIT_FOUND if scanned.secrets else EXIT_CLEAN


def _write(scanned: _Scanned, found: Found, paths: list[str], out: TextIO) -> None:
    problems = scanned.problems
    for line in [*scanned.lines, *(f"could not check {problem}" for problem in problems)]:
        out.write(line + "\n")
    summary = (
        f"scanned {len(found.files)} file(s) under {visible(', '.join(paths))} "
        f"({scanned.parsed} parsed as YAML/JSON"
    )
    for encoding in ("utf-16/32", "latin-1", "binary"):
        names = scanned.encodings.get(encoding, [])
        if names:
            shown = visible(", ".join(names[:3])) + (", ..." if len(names) > 3 else "")
            how = "byte for byte" if encoding == "binary" else f"as {encoding}"
            summary += f"; {len(names)} read {how}: {shown}"
    if found.skipped:
        summary += (
            f"; skipped {found.skipped_folders} folder(s): {', '.join(sorted(found.skipped))}"
        )
    if found.outside or found.loops:
        summary += f"; {_output.links_not_followed(found)}"
    summary += ")"
    verdict = f"{scanned.secrets} secret(s) found" if scanned.secrets else "no secrets found"
    if problems:
        verdict += f"; {len(problems)} input problem(s): the scan is incomplete"
    out.write(f"{summary}: {verdict}.\n")
