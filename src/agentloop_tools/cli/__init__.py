"""``agentloop-tools``: audit recorded cassettes and saved transcripts outside a test run.

    agentloop-tools audit PATH... [--allow D[,D...] | --block D[,D...] | --policy FILE]
    agentloop-tools evidence PATH...
    agentloop-tools scan PATH...
    agentloop-tools explain URL_OR_TEXT... [--allow ... | --block ... | --policy FILE]
    agentloop-tools --version

Options and paths mix in any order; ``--allow``/``--block`` take one value each, a
comma-separated list, and can be repeated. Exit codes: 0 clean, 1 violations (audit,
even when some input could not be read) or secrets (scan), 2 bad usage, input that could
not be read (everything else is still read and reported) or no file to read at all.
Never a traceback: an unexpected error is reported as one line and exit 2. Recorded text
(URLs, file names, answers) is printed with its control characters as visible escapes
(``\x1b``), never raw; ``--format json`` keeps it exact.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import re
import sys
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, TextIO

from agentloop_tools._errors import UsageProblem
from agentloop_tools._visible import visible, xml_text

FORMATS = ("table", "json", "github", "junit", "sarif")
INPUT_SUFFIXES = (".yaml", ".yml", ".jsonl", ".json")
EXIT_CLEAN, EXIT_FOUND, EXIT_USAGE = 0, 1, 2
COMMANDS = ("audit", "evidence", "scan", "explain")
# Never searched inside a directory: version control, and (for audit and evidence,
# which read only cassettes and transcripts) environments and caches.
VCS_FOLDERS = frozenset({".git", ".hg", ".svn", ".bzr", "_darcs", ".jj"})
VENDORED_FOLDERS = frozenset(
    {".venv", "venv", ".tox", ".nox", "node_modules", "__pycache__", "site-packages",
     ".mypy_cache", ".pytest_cache", ".ruff_cache", ".hypothesis"}
)  # fmt: skip

EPILOG = """\
examples:
  agentloop-tools audit cassettes/ --allow python.org,docs.djangoproject.com
  agentloop-tools audit --block wikipedia.org cassettes/ --format github
  agentloop-tools audit --allow python.org --allow realpython.com cassettes/
  agentloop-tools audit run.jsonl --policy policy.toml --format junit -o audit.xml
  agentloop-tools audit tests/cassettes      # policy from [tool.agentloop-tools]
  agentloop-tools evidence cassettes/test_agent/test_cites.yaml
  agentloop-tools scan tests/cassettes       # as a pre-commit hook: exit 1 on a secret
  agentloop-tools audit tests/cassettes --write-baseline audit-baseline.json
  agentloop-tools audit tests/cassettes --baseline audit-baseline.json --format sarif
  agentloop-tools explain --allow python.org https://docs.python.org/3/

policy files and pyproject.toml:
  [tool.agentloop-tools]
  allow = ["python.org", "realpython.com"]   # or: block = ["wikipedia.org"]
"""


def _require_agentloop_06() -> None:
    """Cassettes are read through agentloop's clients' http_client= seam (0.6+)."""
    from importlib.metadata import PackageNotFoundError, version

    from packaging.version import InvalidVersion, Version

    try:
        installed = version("based-models-agentloop")
    except PackageNotFoundError:  # pragma: no cover - a dependency of this package
        return
    try:
        # 0.6.0rc1 and 0.6.0.dev3 are before 0.6 (a dotted split read them as 0.6).
        too_old = Version(installed) < Version("0.6")
    except InvalidVersion:
        return  # a local build with a version packaging cannot read: let it try
    if too_old:
        raise UsageProblem(
            f"reading recordings needs based-models-agentloop 0.6 or newer (installed: "
            f"{installed}); upgrade it: pip install 'based-models-agentloop>=0.6'. The core "
            "library (agentloop_tools.web) works on 0.4 and 0.5."
        )


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit code. Never raises (but SystemExit)."""
    arguments = list(sys.argv[1:] if argv is None else argv)
    command = arguments[0] if arguments and arguments[0] in COMMANDS else None
    if arguments in (["--version"], ["-V"]):
        from importlib.metadata import PackageNotFoundError, version

        from agentloop_tools import __version__

        try:
            agentloop = f" (based-models-agentloop {version('based-models-agentloop')})"
        except PackageNotFoundError:  # pragma: no cover - a dependency of this package
            agentloop = ""
        print(f"agentloop-tools {__version__}{agentloop}")
        return EXIT_CLEAN
    try:
        args = _parse(arguments)
        if args.command in ("audit", "evidence"):
            _require_agentloop_06()
        if args.command == "audit":
            return _audit(args)
        if args.command == "evidence":
            return _evidence(args)
        if args.command == "explain":
            return _explain(args)
        return _scan(args)
    except UsageProblem as problem:
        _stderr(f"agentloop-tools {command}: {problem}")
        return EXIT_USAGE
    except KeyboardInterrupt:
        _stderr("agentloop-tools: interrupted")
        return 130
    except Exception as error:  # the last line of defence: one line, never a traceback
        reason = " ".join(str(error).split())[:300]
        _stderr(
            f"agentloop-tools{' ' + command if command else ''}: internal error "
            f"({type(error).__name__}: {reason}). The run is incomplete; please report this."
        )
        return EXIT_USAGE


def _stderr(line: str) -> None:
    with contextlib.suppress(BrokenPipeError, OSError):
        print(visible(line, layout=True), file=sys.stderr)


def _parse(arguments: list[str]) -> argparse.Namespace:
    parser, subcommands = _parser()
    if not arguments or arguments[0] not in COMMANDS:
        parser.parse_args(arguments)  # --help, or an error naming the commands
        parser.print_help(sys.stderr)
        raise SystemExit(EXIT_USAGE)
    # Intermixed: paths may come before, between or after the options.
    args = subcommands[arguments[0]].parse_intermixed_args(arguments[1:])
    args.command = arguments[0]
    return args


def _parser() -> tuple[argparse.ArgumentParser, dict[str, argparse.ArgumentParser]]:
    parser = argparse.ArgumentParser(
        prog="agentloop-tools",
        description="Audit agentloop evidence in recorded cassettes and saved transcripts.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("-V", "--version", action="store_true", help="print the version and exit")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")
    audit = commands.add_parser(
        "audit",
        help="report every place the evidence reached a domain the policy does not permit",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    _add_inputs(audit)
    _add_policy(audit)
    _add_output(audit)
    baseline = audit.add_mutually_exclusive_group()
    baseline.add_argument(
        "--write-baseline",
        metavar="FILE",
        help="record today's violations in FILE (sorted JSON) and exit 0",
    )
    baseline.add_argument(
        "--baseline",
        metavar="FILE",
        help="report only violations FILE does not hold; list its stale entries",
    )
    audit.add_argument(
        "--jobs",
        type=_jobs,
        default=1,
        metavar="N",
        help="audit in N processes (files, and pieces of transcript logs); same output",
    )
    audit.add_argument(
        "--strict-baseline",
        action="store_true",
        help="with --baseline: a stale entry (no longer found) fails the run too",
    )
    evidence = commands.add_parser(
        "evidence",
        help="list the sources and citations per file and turn",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    _add_inputs(evidence)
    evidence.add_argument("--format", choices=("table", "json", "html"), default="table")
    evidence.add_argument("-o", "--output", metavar="FILE", help="write here, not stdout")
    # Only --format html marks violations: with this policy, else the project's, else none.
    marking = evidence.add_mutually_exclusive_group()
    marking.add_argument(
        "--allow",
        action="extend",
        type=_domains,
        metavar="DOMAIN[,DOMAIN...]",
        help="with --format html: mark what these domains do not cover",
    )
    marking.add_argument(
        "--block",
        action="extend",
        type=_domains,
        metavar="DOMAIN[,DOMAIN...]",
        help="with --format html: mark what these domains cover",
    )
    marking.add_argument(
        "--policy",
        metavar="FILE",
        help="with --format html: a TOML file with allow = [...] or block = [...]",
    )
    scan = commands.add_parser(
        "scan",
        help="find credentials in every file under the paths (exit 1 if any)",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    scan.add_argument(
        "paths", nargs="+", metavar="PATH", help="files or directories (every file, recursive)"
    )
    from agentloop_tools.cli import _explanations as _explain_cli

    explain = _explain_cli.add_parser(commands, EPILOG, _add_policy)
    return parser, {"audit": audit, "evidence": evidence, "scan": scan, "explain": explain}


def _add_policy(parser: argparse.ArgumentParser) -> None:
    policy = parser.add_mutually_exclusive_group()
    policy.add_argument(
        "--allow",
        action="extend",
        type=_domains,
        metavar="DOMAIN[,DOMAIN...]",
        help="permit only these domains (repeat the flag or separate with commas)",
    )
    policy.add_argument(
        "--block",
        action="extend",
        type=_domains,
        metavar="DOMAIN[,DOMAIN...]",
        help="permit all but these domains (repeat the flag or separate with commas)",
    )
    policy.add_argument(
        "--policy", metavar="FILE", help="a TOML file with allow = [...] or block = [...]"
    )


MAX_JOBS = 64


def _jobs(value: str) -> int:
    try:
        jobs = int(value)
    except ValueError:
        jobs = 0
    if not 1 <= jobs <= MAX_JOBS:
        raise argparse.ArgumentTypeError(
            f"{value!r} is not a number of processes from 1 to {MAX_JOBS} "
            f"(this machine has {os.cpu_count() or 1} core(s))"
        )
    return jobs


def _domains(value: str) -> list[str]:
    """One ``--allow``/``--block`` value: a domain or a comma-separated list of them."""
    domains = [item.strip() for item in value.split(",")]
    if not value.strip() or any(not item for item in domains):
        raise argparse.ArgumentTypeError(
            f"{value!r} has an empty domain: separate domains with single commas "
            "(--allow python.org,docs.djangoproject.com) or repeat the flag"
        )
    return domains


def _add_inputs(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "paths",
        nargs="+",
        metavar="PATH",
        help="cassettes (.yaml/.yml, vcrpy's .json), transcripts (.jsonl/.json) or "
        "directories (recursive); no file to read at all is exit 2",
    )
    parser.add_argument(
        "--exclude",
        action="append",
        default=[],
        metavar="GLOB",
        help="leave out files and folders matching GLOB (repeatable; every file left "
        "out is counted on stderr)",
    )
    parser.add_argument(
        "--respect-gitignore",
        action="store_true",
        help="leave out the files git ignores (counted on stderr); off by default",
    )


def _add_output(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--format", choices=FORMATS, default="table", help="default: table")
    parser.add_argument("-o", "--output", metavar="FILE", help="write here, not stdout")


# --- audit -----------------------------------------------------------------------


@dataclass
class FileAudit:
    path: str
    transcripts: int = 0
    tool_requests: int = 0
    violations: list[dict[str, Any]] = field(default_factory=list)
    problems: list[dict[str, Any]] = field(default_factory=list)


def _audit(args: argparse.Namespace) -> int:
    if args.strict_baseline and not args.baseline:
        raise UsageProblem("--strict-baseline needs --baseline FILE")
    policy, origin = _policy(args)
    found = _collect_for(args, hint_domains=bool(args.allow or args.block))
    _require_something(found, args.paths, "audit")
    from agentloop_tools.cli import _jsonl

    audits: list[FileAudit] = [
        FileAudit(problem["path"], problems=[problem]) for problem in found.problems
    ]
    work = _jsonl.units(found.files)
    if args.jobs > 1:
        done = _jsonl.run(work, policy, audit_one, args.jobs)
    else:
        done = [(unit, _jsonl.do(unit, policy, audit_one)) for unit in _progress(work, "audit")]
    for part in _jsonl.merge(done).values():
        audits.append(
            FileAudit(part.path, part.transcripts, part.tool_requests, part.violations,
                      part.problems)
        )  # fmt: skip
    audits.sort(key=lambda audit: audit.path)
    from agentloop_tools.cli import _baseline

    try:
        outcome = _baseline.apply(
            audits, policy, write_to=args.write_baseline, read_from=args.baseline
        )
    except _baseline.BaselineError as error:
        raise UsageProblem(str(error)) from None
    from agentloop_tools.cli import _sarif

    formatters: dict[str, Callable[..., None]] = {
        "table": _audit_table,
        "json": _audit_json,
        "github": _audit_github,
        "junit": _audit_junit,
        "sarif": _sarif.write,
    }
    formatter = formatters[args.format]
    exact = args.format in ("json", "junit", "sarif")  # JSON as recorded; junit escapes itself
    _emit(
        args.output,
        lambda out: formatter(audits, policy, origin, out, **_extra(args.format, found, outcome)),
        exact=exact,
    )
    _report_skipped(found.skipped)
    _report_ignored(found.ignored)
    _report_left_out(found)
    problems = any(audit.problems for audit in audits)
    if outcome is not None:
        return _baseline_exit(outcome, args.strict_baseline, audits, problems)
    # A violation found is a violation whatever else could not be read: 1 wins over 2.
    if any(audit.violations for audit in audits):
        return EXIT_FOUND
    return EXIT_USAGE if problems else EXIT_CLEAN


_READER: Any = None  # one per process: its clients are built once


def audit_one(path: str, policy: Any) -> Any:
    """Audit one cassette or transcript file (in this process or a --jobs worker)."""
    global _READER
    from agentloop_tools._report._entries import violation_entry
    from agentloop_tools.cassettes import Reader
    from agentloop_tools.cli._jsonl import Part

    if _READER is None:
        _READER = Reader()
    audit = Part(path)
    try:
        reading = _READER.read(Path(path))
        audit.transcripts = len(reading.transcripts)
        audit.tool_requests = reading.tool_traffic
        audit.problems = [_problem(problem) for problem in reading.problems]
        for number, (transcript, interactions) in enumerate(
            zip(reading.transcripts, reading.interactions, strict=True)
        ):
            for violation in policy.audit(transcript):
                index = violation.message_index
                audit.violations.append(
                    violation_entry(
                        replace(violation, conversation=number),
                        interaction=interactions[index] if index < len(interactions) else None,
                    )
                )
    except Exception as error:  # one bad file never stops the run
        audit.problems.append(_failure(Path(path), error))
    return audit


def _extra(format: str, found: Found, outcome: Any) -> dict[str, Any]:
    """What the table and JSON formats add: files left out, and the baseline's outcome."""
    if format in ("table", "json"):
        return {"found": found, "outcome": outcome}
    return {}


def _baseline_exit(outcome: Any, strict: bool, audits: list[FileAudit], problems: bool) -> int:
    from agentloop_tools.cli._baseline import describe

    if outcome.written is not None:
        incomplete = " (incomplete: some input could not be read)" if problems else ""
        _stderr(
            f"agentloop-tools: wrote {outcome.written} violation(s) to the baseline "
            f"{outcome.path}{incomplete}; audit against it with --baseline {outcome.path}"
        )
        return EXIT_USAGE if problems else EXIT_CLEAN
    comparison = outcome.comparison
    if comparison.stale:
        _stderr(
            f"agentloop-tools: {len(comparison.stale)} stale baseline entr"
            f"{'y' if len(comparison.stale) == 1 else 'ies'} in {outcome.path} (no longer "
            f"found{'; --strict-baseline fails on them' if strict else ''}); remove them "
            f"with --write-baseline {outcome.path}:"
        )
        for key in comparison.stale:
            _stderr(f"  stale: {describe(key)}")
    if any(audit.violations for audit in audits) or (strict and comparison.stale):
        return EXIT_FOUND
    return EXIT_USAGE if problems else EXIT_CLEAN


def _policy(args: argparse.Namespace) -> tuple[Any, str]:
    from agentloop_tools._config import policy_at, policy_file
    from agentloop_tools._errors import ConfigError
    from agentloop_tools.web import DomainPolicy

    try:
        if args.allow:
            return DomainPolicy.allow(args.allow), "--allow"
        if args.block:
            return DomainPolicy.block(args.block), "--block"
        if args.policy:
            return policy_file(Path(args.policy)), args.policy
        # The policy a pytest run started here would use: pytest's configuration file
        # and rootdir, never a parent folder's pyproject.toml.
        found = policy_at(Path.cwd())
        if found.policy is not None:
            table = " [tool.agentloop-tools]" if found.origin.startswith("pyproject") else ""
            return found.policy, f"{found.path}{table}"
    except (ConfigError, ValueError, TypeError) as error:
        raise UsageProblem(str(error)) from None
    read = ", ".join(str(path) for path in found.read) or "no configuration file"
    raise UsageProblem(
        "no policy: pass --allow DOMAIN[,DOMAIN...], --block DOMAIN[,DOMAIN...] or --policy "
        "FILE, or set allow = [...] or block = [...] under [tool.agentloop-tools] in the "
        "pyproject.toml a pytest run here reads (or the ini keys agentloop_allow_domains / "
        f"agentloop_block_domains / agentloop_policy_file). Read: {read}."
    )


def _audit_table(
    audits: list[FileAudit],
    policy: Any,
    origin: str,
    out: TextIO,
    found: Found | None = None,
    outcome: Any = None,
) -> None:
    total = 0
    for audit in audits:
        if audit.violations:
            out.write(f"{visible(audit.path)}\n")
        for v in audit.violations:
            total += 1
            where = "-" if v["interaction"] is None else f"interaction {v['interaction']}"
            out.write(f"  {where:<15} {v['where']:<9} {visible(v['url'])}  [{v['verdict']}]\n")
        for problem in audit.problems:
            out.write(f"could not read {_where(problem)}: {visible(problem['reason'])}\n")
    files_with = sum(1 for audit in audits if audit.violations)
    problems = sum(len(audit.problems) for audit in audits)
    out.write(
        ("\n" if total or problems else "")
        + f"{total} violation(s) in {files_with} of {len(audits)} file(s); policy {policy!r} "
        f"from {origin}."
        + (f" {problems} input problem(s): the audit is incomplete." if problems else "")
        + _baseline_note(outcome)
        + "\n"
    )


def _baseline_note(outcome: Any) -> str:
    if outcome is None or outcome.comparison is None:
        return ""
    comparison = outcome.comparison
    return (
        f" Baseline {outcome.path}: {comparison.known} known violation(s) not listed, "
        f"{len(comparison.stale)} stale."
    )


def _audit_json(
    audits: list[FileAudit],
    policy: Any,
    origin: str,
    out: TextIO,
    found: Found | None = None,
    outcome: Any = None,
) -> None:
    document = {
        "policy": {"mode": policy.mode, "domains": list(policy.domains), "from": origin},
        "files": [
            {
                "path": audit.path,
                "transcripts": audit.transcripts,
                "tool_requests": audit.tool_requests,
                "violations": audit.violations,
                "problems": audit.problems,
            }
            for audit in audits
        ],
        "summary": {
            "files": len(audits),
            "violations": sum(len(audit.violations) for audit in audits),
            "problems": sum(len(audit.problems) for audit in audits),
        },
        # Files --exclude, --respect-gitignore and the JSON check left out, counted.
        "left_out": _left_out(found),
    }
    if outcome is not None and outcome.comparison is not None:
        from agentloop_tools.cli._baseline import KEYS

        document["baseline"] = {
            "path": str(outcome.path),
            "known": outcome.comparison.known,
            "stale": [dict(zip(KEYS, key, strict=True)) for key in outcome.comparison.stale],
        }
    json.dump(document, out, indent=2)
    out.write("\n")


def _audit_github(audits: list[FileAudit], policy: Any, origin: str, out: TextIO) -> None:
    for audit in audits:
        for v in audit.violations:
            where = "" if v["interaction"] is None else f" (interaction {v['interaction']})"
            message = f"{v['where']} {visible(v['url'])}: {v['verdict']}{where}"
            out.write(
                f"::error file={_gh_property(visible(audit.path))},"
                f"title=Domain policy violation::{_gh(message)}\n"
            )
        for problem in audit.problems:
            out.write(
                f"::warning file={_gh_property(visible(audit.path))},title=Unreadable input::"
                f"{_gh(_where(problem))}: "
                f"{_gh(visible(problem['reason']))}\n"
            )


def _audit_junit(audits: list[FileAudit], policy: Any, origin: str, out: TextIO) -> None:
    """JUnit XML built by ElementTree; recorded text goes through ``xml_text``, so a
    control character XML 1.0 forbids is written as its escape (``\x1b``)."""
    from xml.etree import ElementTree

    root = ElementTree.Element("testsuites")
    suite = ElementTree.SubElement(
        root,
        "testsuite",
        name="agentloop-tools audit",
        tests=str(len(audits)),
        failures=str(sum(1 for audit in audits if audit.violations)),
        errors=str(sum(1 for audit in audits if audit.problems)),
    )
    for audit in audits:
        case = ElementTree.SubElement(
            suite, "testcase", classname="agentloop-tools.audit", name=xml_text(audit.path)
        )
        if audit.violations:
            lines = [f"{v['where']} {xml_text(v['url'])}: {v['verdict']}" for v in audit.violations]
            summary = f"{len(audit.violations)} domain policy violation(s) ({policy!r})"
            failure = ElementTree.SubElement(case, "failure", message=xml_text(summary))
            failure.text = "\n".join(lines)
        for problem in audit.problems:
            error = ElementTree.SubElement(case, "error", message=xml_text(problem["reason"]))
            error.text = xml_text(_where(problem))
    ElementTree.indent(root)
    out.write('<?xml version="1.0" encoding="utf-8"?>\n')
    out.write(ElementTree.tostring(root, encoding="unicode"))
    out.write("\n")


# --- explain -----------------------------------------------------------------------


def _explain(args: argparse.Namespace) -> int:
    from agentloop_tools.cli import _explanations as _explain_cli

    policy, origin = _policy(args)
    explanations = [policy.explain(subject) for subject in _explain_cli.subjects(args.subjects)]
    _emit(
        None,
        lambda out: _explain_cli.write(explanations, policy, origin, args.format, out),
        exact=args.format == "json",
    )
    return EXIT_CLEAN if all(e.permitted for e in explanations) else EXIT_FOUND


# --- evidence ----------------------------------------------------------------------


def _evidence(args: argparse.Namespace) -> int:
    from agentloop_tools.cassettes import Reader

    found = _collect_for(args)
    _require_something(found, args.paths, "evidence")
    reader = Reader()
    if args.format == "html":
        return _evidence_html(args, reader, found)
    if args.allow or args.block or args.policy:
        raise UsageProblem("--allow, --block and --policy mark violations in --format html only")
    files: list[dict[str, Any]] = [
        {"path": problem["path"], "turns": [], "problems": [problem]} for problem in found.problems
    ]
    for path in _progress(found.files, "evidence"):
        try:
            files.append(_evidence_of(reader, path))
        except Exception as error:  # one bad file never stops the run
            files.append({"path": str(path), "turns": [], "problems": [_failure(path, error)]})
    files.sort(key=lambda file: str(file["path"]))
    if args.format == "json":
        _emit(args.output, lambda out: _evidence_json(files, out), exact=True)
    else:
        _emit(args.output, lambda out: _evidence_table(files, out))
    _report_skipped(found.skipped)
    _report_ignored(found.ignored)
    _report_left_out(found)
    return EXIT_USAGE if any(file["problems"] for file in files) else EXIT_CLEAN


def _evidence_of(reader: Any, path: Path) -> dict[str, Any]:
    from agentloop_tools._report._entries import source_entries
    from agentloop_tools.web import citations

    reading = reader.read(path)
    turns = []
    for transcript, interactions in zip(reading.transcripts, reading.interactions, strict=True):
        messages = transcript.messages
        for start, end in _turns(messages):
            # The window runs to the turn's end, past the assistant message: the results
            # client-side tools returned come after the call, in the next user message.
            window = messages[:end]
            calls = sorted(
                {
                    interactions[index]
                    for index in range(start, end)
                    if index < len(interactions)
                    and interactions[index] is not None
                    and messages[index].role == "assistant"
                }
            )
            turns.append(
                {
                    "message_index": start,
                    "last_message_index": end - 1,
                    "interaction": calls[0] if calls else None,
                    "interactions": calls,
                    "asked": _asked_in(messages[start]),
                    "sources": source_entries(window, since=start),
                    "citations": [
                        {"url": c.url, "title": c.title, "cited_text": c.cited_text}
                        for c in citations(window, since=start)
                    ],
                }
            )
    from agentloop_tools.cli import _provenance_view as _provenance_view

    dated = _provenance_view.entry(path)
    return {
        "path": str(path),
        "turns": turns,
        "tool_requests": reading.tool_traffic,
        "problems": [_problem(problem) for problem in reading.problems],
        # A cassette's provenance (None: unknown age); a transcript has none to show.
        "provenance": dated["provenance"] if dated else None,
        "age_days": dated["age_days"] if dated else None,
    }


def _evidence_html(args: argparse.Namespace, reader: Any, found: Found) -> int:
    """The evidence page the pytest plugin writes (--agentloop-report-html), per file."""
    from agentloop_tools._report import _records as _report

    policy, origin = _policy(args) if args.allow or args.block or args.policy else _project()
    records: list[dict[str, Any]] = []
    problems = list(found.problems)
    for path in _progress(found.files, "evidence"):
        shown = _shown_path(path)
        try:
            reading = reader.read(path)
        except Exception as error:  # one bad file never stops the run
            problems.append(_failure(path, error))
            continue
        read = [_problem(problem) for problem in reading.problems]
        problems += read
        failure = (
            {
                "kind": "unreadable",
                "reason": "part of the file could not be read",
                "message": "\n".join(f"{_where(p)}: {p['reason']}" for p in read),
            }
            if read
            else None
        )
        records.append(
            _report.test_record(
                shown, reading.transcripts, policy, origin,
                {"path": shown, "state": "file"}, outcome="recorded", failure=failure,
            )
        )  # fmt: skip
    records.sort(key=lambda record: str(record["test"]))
    page = _report.html_page(records)

    def write(out: TextIO) -> None:
        out.write(page)

    _emit(args.output, write, exact=True)
    for problem in problems:
        _stderr(f"evidence: could not read {_where(problem)}: {visible(problem['reason'])}")
    _report_skipped(found.skipped)
    _report_ignored(found.ignored)
    return EXIT_USAGE if problems else EXIT_CLEAN


def _project() -> tuple[Any, str | None]:
    """The project's policy (as a pytest run here reads it), or none: then nothing is
    marked violating."""
    from agentloop_tools._config import policy_at
    from agentloop_tools._errors import ConfigError

    try:
        found = policy_at(Path.cwd())
    except (ConfigError, ValueError, TypeError) as error:
        raise UsageProblem(str(error)) from None
    if found.policy is None:
        return None, None
    table = " [tool.agentloop-tools]" if found.origin.startswith("pyproject") else ""
    return found.policy, f"{found.path}{table}"


def _shown_path(path: Path) -> str:
    """A path relative to the working folder when it is inside it."""
    try:
        return path.resolve().relative_to(Path.cwd().resolve()).as_posix()
    except (ValueError, OSError):
        return str(path)


def _turns(messages: Sequence[Any]) -> Iterator[tuple[int, int]]:
    """``(start, end)`` of each turn: from a user prompt to the next prompt.

    A prompt is a user message with something besides tool results; a user message of
    tool results only continues the turn it answers. A turn with no assistant message
    and no tool result (a prompt left unanswered) is not listed.
    """
    from agentloop.transcript import ToolResultPart

    starts = [
        index
        for index, message in enumerate(messages)
        if index == 0
        or (
            message.role == "user"
            and any(not isinstance(part, ToolResultPart) for part in message.content)
        )
    ]
    for start, end in zip(starts, [*starts[1:], len(messages)], strict=True):
        if any(
            message.role == "assistant"
            or any(isinstance(part, ToolResultPart) for part in message.content)
            for message in messages[start:end]
        ):
            yield start, end


def _evidence_json(files: list[dict[str, Any]], out: TextIO) -> None:
    json.dump({"files": files}, out, indent=2)
    out.write("\n")


def _evidence_table(files: list[dict[str, Any]], out: TextIO) -> None:
    from agentloop_tools._report._entries import also_written
    from agentloop_tools.cli import _provenance_view as _provenance_view

    for file in files:
        out.write(f"{visible(str(file['path']))}\n")
        if str(file["path"]).lower().endswith(_provenance_view.CASSETTE_SUFFIXES) and (
            "provenance" in file
        ):
            dated = {"provenance": file["provenance"], "age_days": file["age_days"]}
            out.writelines(f"  {line}\n" for line in _provenance_view.lines(dated))
        for turn in file["turns"]:
            calls = turn["interactions"]
            if len(calls) > 1:
                where = f"interactions {', '.join(str(call) for call in calls)}"
            elif calls:
                where = f"interaction {calls[0]}"
            else:
                where = f"message {turn['message_index']}"
            out.write(f"  turn at {where}: {_clip(visible(turn['asked']), 70)}\n")
            out.write(f"    sources ({len(turn['sources'])}):\n")
            out.writelines(
                f"      - {visible(s['url'])}{visible(also_written(s))}\n" for s in turn["sources"]
            )
            out.write(f"    citations ({len(turn['citations'])}):\n")
            out.writelines(f"      - {visible(c['url'])}\n" for c in turn["citations"])
        if not file["turns"] and not file["problems"]:
            skipped = file.get("tool_requests", 0)
            note = f" ({skipped} search or page request(s), not model traffic)" if skipped else ""
            out.write(f"  no model turns{note}\n")
        for problem in file["problems"]:
            out.write(f"  could not read {_where(problem)}: {visible(problem['reason'])}\n")


def _asked_in(message: Any) -> str:
    """The prompt a turn starts with ("" when it starts with the model's message)."""
    from agentloop.transcript import TextPart

    if message.role != "user":
        return ""
    text = " ".join(p.text for p in message.content if isinstance(p, TextPart))
    return " ".join(text.split()) or "(tool results)"


# --- scan --------------------------------------------------------------------------


def _scan(args: argparse.Namespace) -> int:
    from agentloop_tools._secrets import Detector, secret_values
    from agentloop_tools.cassettes._scan import scan_file

    found = _collect(args.paths, suffixes=None)
    # The environment's credentials (and their encodings) are found whatever their shape.
    detector = Detector(secret_values(os.environ))
    lines: list[str] = []
    problems = [
        f"{visible(str(problem['path']))}: {visible(problem['reason'])}"
        for problem in found.problems
    ]
    secrets = 0
    encodings: dict[str, list[str]] = {}
    parsed = 0
    for path in _progress(found.files, "scan"):
        result = scan_file(path, detector)
        secrets += len(result.findings)
        shown = visible(str(path))
        lines += [f"{shown}: {visible(str(hit))}" for hit in result.findings]
        problems += [f"{shown}: {visible(str(problem))}" for problem in result.problems]
        encodings.setdefault(result.encoding, []).append(str(path))
        parsed += result.parsed

    def write(out: TextIO) -> None:
        for line in [*lines, *(f"could not check {problem}" for problem in problems)]:
            out.write(line + "\n")
        summary = (
            f"scanned {len(found.files)} file(s) under {visible(', '.join(args.paths))} "
            f"({parsed} parsed as YAML/JSON"
        )
        for encoding in ("utf-16/32", "latin-1", "binary"):
            names = encodings.get(encoding, [])
            if names:
                shown = visible(", ".join(names[:3])) + (", ..." if len(names) > 3 else "")
                how = "byte for byte" if encoding == "binary" else f"as {encoding}"
                summary += f"; {len(names)} read {how}: {shown}"
        if found.skipped:
            summary += f"; skipped {', '.join(sorted(found.skipped))}"
        summary += ")"
        verdict = f"{secrets} secret(s) found" if secrets else "no secrets found"
        if problems:
            verdict += f"; {len(problems)} input problem(s): the scan is incomplete"
        out.write(f"{summary}: {verdict}.\n")

    _emit(None, write)
    if secrets:
        _stderr(
            f"{secrets} secret(s) found. Remove them (re-record cassettes with the "
            "agentloop-tools plugin, which scrubs credentials) and rotate any real key."
        )
    if problems:
        return EXIT_USAGE
    return EXIT_FOUND if secrets else EXIT_CLEAN


# --- shared ------------------------------------------------------------------------


@dataclass
class Found:
    """The files under the given paths, what could not be listed, and what was skipped."""

    files: list[Path] = field(default_factory=list)
    problems: list[dict[str, Any]] = field(default_factory=list)
    skipped: set[str] = field(default_factory=set)
    # .json files a folder walk found that are neither a cassette nor a transcript.
    ignored: list[Path] = field(default_factory=list)
    excluded: int = 0  # files --exclude left out (those in excluded folders included)
    gitignored: int = 0  # files --respect-gitignore left out


def _collect_for(args: argparse.Namespace, hint_domains: bool = False) -> Found:
    """``audit``'s and ``evidence``'s inputs, less what --exclude and .gitignore leave out."""
    from agentloop_tools.cli._skip import Exclusions, SkipProblem, git_ignored

    exclusions = Exclusions(args.exclude)
    found = _collect(args.paths, INPUT_SUFFIXES, hint_domains, exclusions)
    # The baseline beside the cassettes is ours: neither read nor reported as skipped.
    ours = {
        os.path.abspath(name)
        for name in (getattr(args, "baseline", None), getattr(args, "write_baseline", None))
        if name
    }
    found.ignored = [path for path in found.ignored if os.path.abspath(path) not in ours]
    if args.respect_gitignore:
        # Only walked files: a file named on the command line is read, as git-aware
        # tools do. A folder given is asked about as a whole.
        explicit = {Path(raw) for raw in args.paths}
        walked = [path for path in found.files if path not in explicit]
        ignored: set[Path] = set()
        try:
            for raw in args.paths:
                root = Path(raw)
                if root.is_dir():
                    under = [path for path in walked if _below(path, root)]
                    ignored |= git_ignored(root, under)
        except SkipProblem as problem:
            raise UsageProblem(str(problem)) from None
        found.gitignored = len(ignored)
        found.files = [path for path in found.files if path not in ignored]
    return found


def _below(path: Path, root: Path) -> bool:
    try:
        path.relative_to(root)
    except ValueError:
        return False
    return True


def _left_out(found: Found | None) -> dict[str, int]:
    if found is None:
        return {"exclude": 0, "gitignore": 0, "not_evidence": 0}
    return {
        "exclude": found.excluded,
        "gitignore": found.gitignored,
        "not_evidence": len(found.ignored),
    }


def _report_left_out(found: Found) -> None:
    """One line counting every file left out (a silently skipped cassette is an off-switch)."""
    parts = []
    if found.excluded:
        parts.append(f"{found.excluded} matching --exclude")
    if found.gitignored:
        parts.append(f"{found.gitignored} ignored by git (--respect-gitignore)")
    if found.ignored:
        parts.append(f"{len(found.ignored)} JSON neither a cassette nor a transcript")
    total = found.excluded + found.gitignored + len(found.ignored)
    if total:
        _stderr(f"agentloop-tools: left out {total} file(s): {', '.join(parts)}")


_DOMAIN_LIKE = re.compile(r"[\w-]+(\.[\w-]+)*\.[A-Za-z]{2,}")


def _collect(
    paths: Sequence[str],
    suffixes: tuple[str, ...] | None,
    hint_domains: bool = False,
    exclusions: Any = None,
) -> Found:
    """Every file under ``paths`` (with one of ``suffixes``, or any file when None).

    Symbolic links are followed; a loop, a broken link, a folder that cannot be
    listed or a path that does not exist is a problem, never a silent skip.
    """
    found = Found()
    skip = VCS_FOLDERS | (VENDORED_FOLDERS if suffixes is not None else frozenset())
    visited: set[tuple[int, int]] = set()
    for raw in paths:
        path = Path(raw)
        try:
            info = path.stat()
        except OSError as error:
            reason = os_reason(error)
            if hint_domains and not path.exists() and _DOMAIN_LIKE.fullmatch(raw):
                reason += (
                    f". If {raw!r} is a domain: --allow and --block take one value each; "
                    f"write --allow a.com,{raw} or repeat the flag"
                )
            found.problems.append({"path": raw, "interaction": None, "reason": reason})
            continue
        if exclusions and exclusions.matches(path, None):
            found.excluded += _count(path, suffixes, skip)
            continue
        if path.is_dir():
            _walk(path, suffixes, skip, visited, found, exclusions)
        elif suffixes is None or path.suffix.lower() in suffixes or not _regular(info.st_mode):
            found.files.append(path)  # reading it says why a FIFO or device is refused
        else:
            found.problems.append(
                {
                    "path": raw,
                    "interaction": None,
                    "reason": "not a cassette (.yaml, .yml) or transcript (.jsonl, .json)",
                }
            )
    return found


def _require_something(found: Found, paths: Sequence[str], command: str) -> None:
    """No file to read at all is a problem: a mistyped or empty folder must not pass."""
    if found.files or found.problems:
        return
    skipped = f" (not searched: {', '.join(sorted(found.skipped))})" if found.skipped else ""
    reason = (
        f"no file to read: {command} reads cassettes (.yaml, .yml, vcrpy's .json) and "
        f"transcripts (.jsonl, .json) in this folder and those below it{skipped}, and found "
        "none. Check the path: a mistyped or empty cassette folder would audit nothing"
    )
    found.problems.extend({"path": raw, "interaction": None, "reason": reason} for raw in paths)


def _walk(
    root: Path,
    suffixes: tuple[str, ...] | None,
    skip: frozenset[str],
    visited: set[tuple[int, int]],
    found: Found,
    exclusions: Any = None,
) -> None:
    stack = [root]
    while stack:
        folder = stack.pop()
        try:
            info = folder.stat()
        except OSError as error:
            found.problems.append(_listing(folder, os_reason(error)))
            continue
        if (info.st_dev, info.st_ino) in visited:
            if folder.is_symlink():
                found.problems.append(_listing(folder, "a symbolic link loop (not followed)"))
            continue
        visited.add((info.st_dev, info.st_ino))
        try:
            entries = sorted(os.scandir(folder), key=lambda entry: entry.name)
        except OSError as error:
            found.problems.append(_listing(folder, os_reason(error)))
            continue
        folders = []
        for entry in entries:
            path = Path(entry.path)
            try:
                is_dir = entry.is_dir(follow_symlinks=True)
            except OSError as error:
                found.problems.append(_listing(path, os_reason(error)))
                continue
            if is_dir:
                if entry.name in skip:
                    found.skipped.add(entry.name)
                elif exclusions and exclusions.matches(path, root):
                    found.excluded += _count(path, suffixes, skip)
                else:
                    folders.append(path)
                continue
            if exclusions and exclusions.matches(path, root):
                if suffixes is None or path.suffix.lower() in suffixes:
                    found.excluded += 1
                continue
            if entry.is_symlink() and not path.exists():
                try:
                    os.stat(path)
                except FileNotFoundError:
                    found.problems.append(
                        _listing(path, "a broken symbolic link (its target does not exist)")
                    )
                    continue
                except OSError as error:
                    found.problems.append(_listing(path, os_reason(error)))
                    continue
            if suffixes is None or path.suffix.lower() in suffixes:
                if suffixes is not None and path.suffix.lower() == ".json" and _not_evidence(path):
                    found.ignored.append(path)  # prompts.json beside the cassettes
                else:
                    found.files.append(path)
        stack.extend(reversed(folders))
    found.files.sort()
    found.ignored.sort()


def _count(path: Path, suffixes: tuple[str, ...] | None, skip: frozenset[str]) -> int:
    from agentloop_tools.cli._skip import count_files

    if path.is_dir():
        return count_files(path, suffixes, skip)
    return 1


def _not_evidence(path: Path) -> bool:
    """Whether a JSON file holds neither a cassette nor a transcript: an object without
    ``interactions`` or ``messages``, or a list of no message or transcript.

    Anything else, JSON that does not parse included, is read, and its problems reported.
    """
    try:
        if not path.is_file():
            return False  # a FIFO or device is never opened here: the reader refuses it
        data = json.loads(path.read_bytes())
    except Exception:  # unreadable or not JSON: the reader says why
        return False
    if isinstance(data, dict):
        return "interactions" not in data and "messages" not in data
    if isinstance(data, list):
        return not any(
            isinstance(item, dict) and ("role" in item or "messages" in item) for item in data
        )
    return False  # a bare number or null: more likely a broken file than another one


def _report_ignored(ignored: list[Path]) -> None:
    for path in ignored:
        _stderr(
            f"agentloop-tools: skipped {path}: JSON that is neither a cassette nor a transcript"
        )


def _listing(path: Path, reason: str) -> dict[str, Any]:
    return {"path": str(path), "interaction": None, "reason": reason}


def _regular(mode: int) -> bool:
    import stat

    return stat.S_ISREG(mode)


def os_reason(error: OSError) -> str:
    from agentloop_tools.cassettes._load import os_reason as reason

    return reason(error)


def _report_skipped(skipped: set[str]) -> None:
    if skipped:
        _stderr(f"agentloop-tools: not searched: {', '.join(sorted(skipped))} folders")


def _progress[T](paths: list[T], command: str) -> list[T]:
    """The paths, reporting progress on stderr for long runs."""
    if len(paths) <= 200 and not (len(paths) > 20 and sys.stderr.isatty()):
        return paths
    step = max(len(paths) // 10, 1)

    class _Reporting(list[T]):
        def __iter__(self) -> Iterator[T]:
            for number, path in enumerate(super().__iter__(), start=1):
                yield path
                if number % step == 0 or number == len(self):
                    _stderr(f"{command}: {number}/{len(self)} files")

    return _Reporting(paths)


def _emit(output: str | None, write: Callable[[TextIO], None], *, exact: bool = False) -> None:
    """Write the output (cleaned of credentials) to ``output`` or stdout.

    Unless ``exact`` (JSON, JUnit), every control character left in it is written
    as its escape: the formatters escape each recorded field, this is the backstop.

    A closed pipe (``| head``) ends the output quietly: the verdict and exit code
    stand, as they do not depend on who reads the report.
    """
    buffer = io.StringIO()
    write(buffer)
    text = _cleaner().text(buffer.getvalue())
    if not exact:
        text = visible(text, layout=True)
    if output is not None:
        try:
            with open(output, "w", encoding="utf-8") as out:
                out.write(text)
        except OSError as error:
            raise UsageProblem(f"-o {output}: cannot be written ({error.strerror})") from None
        return
    try:
        sys.stdout.write(text)
        sys.stdout.flush()
    except BrokenPipeError:
        # Python flushes stdout again at exit; point it at /dev/null so that flush is quiet.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())


def _cleaner() -> Any:
    from agentloop_tools._secrets import Cleaner, secret_values

    return Cleaner(secret_values(os.environ))


def _problem(problem: Any) -> dict[str, Any]:
    return {"path": problem.path, "interaction": problem.interaction, "reason": problem.reason}


def _failure(path: Path, error: BaseException) -> dict[str, Any]:
    reason = " ".join(str(error).split())[:200]
    return {
        "path": str(path),
        "interaction": None,
        "reason": f"could not be read ({type(error).__name__}: {reason})",
    }


def _where(problem: dict[str, Any]) -> str:
    path = visible(str(problem["path"]))
    if problem["interaction"] is None:
        return path
    return f"{path} (interaction {problem['interaction']})"


def _clip(text: str, width: int) -> str:
    return text if len(text) <= width else text[: width - 3] + "..."


def _gh(text: str) -> str:
    """Escape the message of a GitHub Actions workflow command."""
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _gh_property(text: str) -> str:
    """Escape a property (file=, title=) of a GitHub Actions workflow command."""
    return _gh(text).replace(":", "%3A").replace(",", "%2C")


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
