"""What the commands print and return: the audit formats, the notes on stderr, and how
any text reaches a terminal or a file (the evidence formats: ``_evidence_view``).

Recorded text is escaped field by field (``visible``, ``xml_text``, the GitHub escapes);
``emit`` then cleans credentials out of the whole output and, unless it must stay exact
(JSON, JUnit, HTML), writes every control character left as its escape.
"""

from __future__ import annotations

import contextlib
import re
import sys
from collections.abc import Collection, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from agentloop_tools._visible import visible, xml_text

if TYPE_CHECKING:
    from agentloop_tools.cli._inputs import Found

EXIT_CLEAN, EXIT_FOUND, EXIT_USAGE = 0, 1, 2


@dataclass
class FileAudit:
    """One file's audit, as the formats print it."""

    path: str
    transcripts: int = 0
    tool_requests: int = 0
    # A list, or the entries spooled to disk (``_spool.Spooled``): iterated, never indexed.
    violations: Collection[dict[str, Any]] = field(default_factory=list)
    problems: Collection[dict[str, Any]] = field(default_factory=list)


def stderr(line: str) -> None:
    """One note on stderr, always one line: a newline in a field it quotes (a file name,
    a baseline entry) is escaped, so no line can start a GitHub Actions command."""
    with contextlib.suppress(BrokenPipeError, OSError):
        print(visible(line), file=sys.stderr)


def progress[T](paths: list[T], command: str) -> list[T]:
    """The paths, reporting progress on stderr for long runs."""
    if len(paths) <= 200 and not (len(paths) > 20 and sys.stderr.isatty()):
        return paths
    step = max(len(paths) // 10, 1)

    class _Reporting(list[T]):
        def __iter__(self) -> Iterator[T]:
            for number, path in enumerate(super().__iter__(), start=1):
                yield path
                if number % step == 0 or number == len(self):
                    stderr(f"{command}: {number}/{len(self)} files")

    return _Reporting(paths)


# --- what was left out, on stderr ------------------------------------------------


def report_left_out(found: Found) -> None:
    """One line counting every file left out (a silently skipped cassette is an off-switch)."""
    parts = []
    if found.excluded:
        parts.append(f"{found.excluded} matching --exclude")
    if found.gitignored:
        parts.append(f"{found.gitignored} ignored by git (--respect-gitignore)")
    if found.ignored:
        all_json = all(path.suffix.lower() == ".json" for path in found.ignored)
        parts.append(
            f"{len(found.ignored)} {'JSON ' if all_json else ''}neither a cassette nor a transcript"
        )
    total = found.excluded + found.gitignored + len(found.ignored)
    if total:
        stderr(f"agentloop-tools: left out {total} file(s): {', '.join(parts)}")
    report_links(found)


def report_links(found: Found) -> None:
    """Each symbolic link not followed, one line each, then their count."""
    for link, target in found.outside:
        stderr(
            f"agentloop-tools: not followed: {visible(str(link))} -> {visible(target)}: a "
            "symbolic link to outside the paths given (pass the target to read it)"
        )
    for link, target in found.loops:
        where = f"to {visible(target)}, a folder it is in" if target else "it never resolves"
        stderr(
            f"agentloop-tools: not followed: {visible(str(link))}: a symbolic link loop ({where})"
        )
    if found.outside or found.loops:
        stderr(f"agentloop-tools: {links_not_followed(found)}")


def links_not_followed(found: Found) -> str:
    """``N symbolic link(s) not followed: ...`` ("" when none)."""
    parts = []
    if found.outside:
        parts.append(f"{len(found.outside)} to outside the paths given")
    if found.loops:
        parts.append(f"{len(found.loops)} loop(s)")
    if not parts:
        return ""
    return (
        f"{len(found.outside) + len(found.loops)} symbolic link(s) not followed: {', '.join(parts)}"
    )


def report_ignored(ignored: list[Path]) -> None:
    for path in ignored:
        why = (
            "JSON that is neither a cassette nor a transcript"
            if path.suffix.lower() == ".json"
            else "not a cassette (.yaml, .yml) or transcript (.jsonl, .json)"
        )
        stderr(f"agentloop-tools: skipped {visible(str(path))}: {why}")


def report_skipped(skipped: set[str]) -> None:
    if skipped:
        stderr(f"agentloop-tools: not searched: {', '.join(sorted(skipped))} folders")


def left_out(found: Found | None) -> dict[str, int]:
    if found is None:
        return {
            "exclude": 0,
            "gitignore": 0,
            "not_evidence": 0,
            "outside_links": 0,
            "link_loops": 0,
        }
    return {
        "exclude": found.excluded,
        "gitignore": found.gitignored,
        "not_evidence": len(found.ignored),
        # Symbolic links not followed (each named on stderr).
        "outside_links": len(found.outside),
        "link_loops": len(found.loops),
    }


# --- audit formats (SARIF: _sarif.py) ----------------------------------------------


def audit_table(
    audits: list[FileAudit],
    policy: Any,
    origin: str,
    out: TextIO,
    found: Found | None = None,
    outcome: Any = None,
    refused_attempts: tuple[str, str | None] = ("report", None),
) -> None:
    from agentloop_tools.cli import _refused

    total = 0
    for audit in audits:
        if audit.violations:
            out.write(f"{visible(audit.path)}\n")
        for v in audit.violations:
            total += 1
            where = "-" if v["interaction"] is None else f"interaction {v['interaction']}"
            out.write(
                f"  {where:<15} {visible(v['where']):<9} {visible(v['url'])}  "
                f"[{visible(v['verdict'])}{_refused.note(v)}]\n"
            )
        for problem in audit.problems:
            out.write(f"could not read {where_of(problem)}: {visible(problem['reason'])}\n")
    problems = sum(len(audit.problems) for audit in audits)
    out.write(
        ("\n" if total or problems else "")
        + summary(audits, policy, origin, outcome, refused_attempts)
        + "\n"
    )


def summary(
    audits: list[FileAudit],
    policy: Any,
    origin: str,
    outcome: Any = None,
    refused_attempts: tuple[str, str | None] = ("report", None),
) -> str:
    """The audit's one-line summary (the table's last line, the github format's notice)."""
    from agentloop_tools.cli import _refused

    total = sum(len(audit.violations) for audit in audits)
    files_with = sum(1 for audit in audits if audit.violations)
    problems = sum(len(audit.problems) for audit in audits)
    return (
        f"{total} violation(s) in {files_with} of {len(audits)} file(s); "
        f"policy {visible(repr(policy))} from {visible(origin)}."
        + _refused.summary(audits, *refused_attempts)
        + (f" {problems} input problem(s): the audit is incomplete." if problems else "")
        + _baseline_note(outcome)
    )


def _baseline_note(outcome: Any) -> str:
    if outcome is None or outcome.comparison is None:
        return ""
    comparison = outcome.comparison
    return (
        f" Baseline {visible(str(outcome.path))}: {comparison.known} known violation(s) "
        "not listed, "
        f"{len(comparison.stale)} stale."
    )


def audit_json(
    audits: list[FileAudit],
    policy: Any,
    origin: str,
    out: TextIO,
    found: Found | None = None,
    outcome: Any = None,
    refused_attempts: tuple[str, str | None] = ("report", None),
) -> None:
    from agentloop_tools.cli._refused import fails
    from agentloop_tools.cli._spool import marker

    # Each file's lists are written from where they are kept, one entry at a time.
    lists: dict[str, Collection[dict[str, Any]]] = {}

    def later(entries: Collection[dict[str, Any]]) -> list[str]:
        key = marker()
        lists[key] = entries
        return [key]

    document: dict[str, Any] = {
        "policy": {"mode": policy.mode, "domains": list(policy.domains), "from": origin},
        "files": [
            {
                "path": audit.path,
                "transcripts": audit.transcripts,
                "tool_requests": audit.tool_requests,
                "violations": later(audit.violations),
                "problems": later(audit.problems),
            }
            for audit in audits
        ],
        "summary": {
            "files": len(audits),
            "violations": sum(len(audit.violations) for audit in audits),
            # Of which URLs web_fetch refused before requesting them (the policy held),
            # and how many fail the run (refused attempts only when set to fail).
            "refused_attempts": sum(
                1 for audit in audits for v in audit.violations if v.get("refused")
            ),
            "failing": sum(1 for audit in audits for v in audit.violations if fails(v)),
            "problems": sum(len(audit.problems) for audit in audits),
        },
        "refused_attempts": {"setting": refused_attempts[0], "from": refused_attempts[1]},
        # Files --exclude, --respect-gitignore and the JSON check left out, counted.
        "left_out": left_out(found),
    }
    if outcome is not None and outcome.comparison is not None:
        from agentloop_tools.cli._baseline import KEYS

        document["baseline"] = {
            "path": str(outcome.path),
            "known": outcome.comparison.known,
            "stale": [dict(zip(KEYS, key, strict=True)) for key in outcome.comparison.stale],
        }
    from agentloop_tools.cli._spool import dump_json

    dump_json(document, out, lists)


def audit_github(
    audits: list[FileAudit],
    policy: Any,
    origin: str,
    out: TextIO,
    found: Found | None = None,
    outcome: Any = None,
    refused_attempts: tuple[str, str | None] = ("report", None),
) -> None:
    """Workflow commands: one annotation per violation and per input problem, at the line
    its interaction starts on when known (SARIF's region), then one summary notice, so a
    run with nothing (new) to annotate still says what it read."""
    from agentloop_tools.cli._refused import fails, note
    from agentloop_tools.cli._sarif import interaction_lines

    for audit in audits:
        lines = interaction_lines(audit.path) if audit.violations or audit.problems else []
        file = gh_property(visible(audit.path))
        for v in audit.violations:
            where = "" if v["interaction"] is None else f" (interaction {v['interaction']})"
            message = (
                f"{visible(v['where'])} {visible(v['url'])}: {visible(v['verdict'])}"
                f"{note(v)}{where}"
            )
            # A refused attempt that does not fail the run is a warning, not an error.
            level, title = (
                ("error", "Domain policy violation")
                if fails(v)
                else ("warning", "Refused attempt (the policy held)")
            )
            out.write(
                f"::{level} file={file}{_gh_region(v['interaction'], lines)},"
                f"title={title}::{gh(message)}\n"
            )
        for problem in audit.problems:
            out.write(
                f"::warning file={file}{_gh_region(problem['interaction'], lines)},"
                f"title=Unreadable input::{gh(where_of(problem))}: "
                f"{gh(visible(problem['reason']))}\n"
            )
    said = summary(audits, policy, origin, outcome, refused_attempts)
    out.write(f"::notice title=agentloop-tools audit::{gh(said)}\n")


def _gh_region(interaction: int | None, lines: list[int]) -> str:
    """``,line=N`` (and ``col=``, ``endLine=`` when known) from SARIF's region."""
    from agentloop_tools.cli._sarif import region

    names = {"startLine": "line", "startColumn": "col", "endLine": "endLine"}
    return "".join(
        f",{names[key]}={value}"
        for key, value in region(interaction, lines).items()
        if key in names
    )


def audit_junit(audits: list[FileAudit], policy: Any, origin: str, out: TextIO) -> None:
    """JUnit XML built by ElementTree; recorded text goes through ``xml_text``, so a
    control character XML 1.0 forbids is written as its escape (``\x1b``)."""
    from xml.etree import ElementTree

    from agentloop_tools.cli._refused import fails, note
    from agentloop_tools.cli._spool import marker

    root = ElementTree.Element("testsuites")
    suite = ElementTree.SubElement(
        root,
        "testsuite",
        name="agentloop-tools audit",
        tests=str(len(audits)),
        failures=str(sum(1 for audit in audits if any(map(fails, audit.violations)))),
        errors=str(sum(1 for audit in audits if audit.problems)),
    )
    # A file's violation lines are written from where they are kept, after the tree.
    listed: dict[str, Collection[dict[str, Any]]] = {}
    for audit in audits:
        case = ElementTree.SubElement(
            suite, "testcase", classname="agentloop-tools.audit", name=xml_text(audit.path)
        )
        lines = marker() if audit.violations else ""
        listed[lines] = audit.violations
        held = sum(1 for v in audit.violations if v.get("refused"))
        if any(map(fails, audit.violations)):
            summary = f"{len(audit.violations)} domain policy violation(s) ({policy!r})"
            if held:
                summary += f", {held} of them refused attempt(s)"
            failure = ElementTree.SubElement(case, "failure", message=xml_text(summary))
            failure.text = lines
        elif audit.violations:
            # Refused attempts alone pass: shown, counted, not a failure.
            shown = ElementTree.SubElement(case, "system-out")
            shown.text = f"{held} refused attempt(s), the policy held ({policy!r}):\n" + lines
        for problem in audit.problems:
            error = ElementTree.SubElement(case, "error", message=xml_text(problem["reason"]))
            error.text = xml_text(where_of(problem))
    ElementTree.indent(root)
    out.write('<?xml version="1.0" encoding="utf-8"?>\n')
    tree = ElementTree.tostring(root, encoding="unicode")
    listed.pop("", None)
    for piece in re.split("(" + "|".join(map(re.escape, listed)) + ")", tree) if listed else [tree]:
        if piece not in listed:
            out.write(piece)
            continue
        for number, v in enumerate(listed[piece]):
            line = f"{v['where']} {xml_text(v['url'])}: {v['verdict']}{note(v)}"
            out.write(("\n" if number else "") + _xml_escaped(line))
    out.write("\n")


def _xml_escaped(text: str) -> str:
    """Element text as ElementTree writes it."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


# --- evidence formats (HTML: the report's page) -------------------------------------


def where_of(problem: dict[str, Any]) -> str:
    """A problem's place: its file, and the interaction when it is one (made visible)."""
    path = visible(str(problem["path"]))
    if problem["interaction"] is None:
        return path
    return f"{path} (interaction {problem['interaction']})"


def clip(text: str, width: int) -> str:
    return text if len(text) <= width else text[: width - 3] + "..."


def gh(text: str) -> str:
    """Escape the message of a GitHub Actions workflow command."""
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def gh_property(text: str) -> str:
    """Escape a property (file=, title=) of a GitHub Actions workflow command."""
    return gh(text).replace(":", "%3A").replace(",", "%2C")
