"""``agentloop-tools``: audit recorded cassettes and saved transcripts outside a test run.

    agentloop-tools audit PATH... [--allow D... | --block D... | --policy FILE]
    agentloop-tools evidence PATH...
    agentloop-tools scan PATH...

Exit codes: 0 clean, 1 violations (audit) or secrets (scan), 2 bad usage or input that
could not be read (the rest is still read and reported).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO
from xml.sax.saxutils import escape, quoteattr

FORMATS = ("table", "json", "github", "junit")
INPUT_SUFFIXES = (".yaml", ".yml", ".jsonl", ".json")
EXIT_CLEAN, EXIT_FOUND, EXIT_USAGE = 0, 1, 2

EPILOG = """\
examples:
  agentloop-tools audit cassettes/ --allow python.org docs.djangoproject.com
  agentloop-tools audit cassettes/ --block wikipedia.org --format github
  agentloop-tools audit run.jsonl --policy policy.toml --format junit -o audit.xml
  agentloop-tools audit tests/cassettes      # policy from [tool.agentloop-tools]
  agentloop-tools evidence cassettes/test_agent/test_cites.yaml
  agentloop-tools scan tests/cassettes       # as a pre-commit hook: exit 1 on a secret

policy files and pyproject.toml:
  [tool.agentloop-tools]
  allow = ["python.org", "realpython.com"]   # or: block = ["wikipedia.org"]
"""


class UsageProblem(Exception):
    """Bad usage: reported on stderr with exit code 2."""


def main(argv: Sequence[str] | None = None) -> int:
    parser = _parser()
    args = parser.parse_args(argv)
    try:
        if args.command == "audit":
            return _audit(args)
        if args.command == "evidence":
            return _evidence(args)
        if args.command == "scan":
            return _scan(args)
    except UsageProblem as problem:
        print(f"agentloop-tools {args.command}: {problem}", file=sys.stderr)
        return EXIT_USAGE
    parser.print_help(sys.stderr)
    return EXIT_USAGE


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="agentloop-tools",
        description="Audit agentloop evidence in recorded cassettes and saved transcripts.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")
    audit = commands.add_parser(
        "audit",
        help="report every place the evidence reached a domain the policy does not permit",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    _add_inputs(audit)
    policy = audit.add_mutually_exclusive_group()
    policy.add_argument("--allow", nargs="+", metavar="DOMAIN", help="permit only these domains")
    policy.add_argument("--block", nargs="+", metavar="DOMAIN", help="permit all but these")
    policy.add_argument(
        "--policy", metavar="FILE", help="a TOML file with allow = [...] or block = [...]"
    )
    _add_output(audit)
    evidence = commands.add_parser(
        "evidence",
        help="list the sources and citations per file and turn",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    _add_inputs(evidence)
    evidence.add_argument("--format", choices=("table", "json"), default="table")
    evidence.add_argument("-o", "--output", metavar="FILE", help="write here, not stdout")
    scan = commands.add_parser(
        "scan",
        help="find key-shaped secrets and credential headers in cassettes (exit 1 if any)",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    scan.add_argument("paths", nargs="+", metavar="PATH", help="files or directories")
    return parser


def _add_inputs(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "paths",
        nargs="+",
        metavar="PATH",
        help="cassettes (.yaml/.yml), transcripts (.jsonl/.json) or directories (recursive)",
    )


def _add_output(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--format", choices=FORMATS, default="table", help="default: table")
    parser.add_argument("-o", "--output", metavar="FILE", help="write here, not stdout")


# --- audit -----------------------------------------------------------------------


@dataclass
class FileAudit:
    path: str
    transcripts: int = 0
    violations: list[dict[str, Any]] = field(default_factory=list)
    problems: list[dict[str, Any]] = field(default_factory=list)


def _audit(args: argparse.Namespace) -> int:
    policy, origin = _policy(args)
    paths = _inputs(args.paths)
    from agentloop_tools.cassettes import Reader

    reader = Reader()
    audits: list[FileAudit] = []
    for path in _progress(paths, "audit"):
        reading = reader.read(path)
        audit = FileAudit(str(path), len(reading.transcripts))
        audit.problems = [_problem(problem) for problem in reading.problems]
        for transcript, interactions in zip(reading.transcripts, reading.interactions, strict=True):
            for violation in policy.audit(transcript):
                index = violation.message_index
                audit.violations.append(
                    {
                        "where": violation.where,
                        "url": violation.url,
                        "rule": violation.rule,
                        "message_index": index,
                        "interaction": interactions[index] if index < len(interactions) else None,
                        "span": list(violation.span) if violation.span else None,
                    }
                )
        audits.append(audit)
    with _open(args.output) as out:
        {
            "table": _audit_table,
            "json": _audit_json,
            "github": _audit_github,
            "junit": _audit_junit,
        }[args.format](audits, policy, origin, out)
    if any(audit.problems for audit in audits):
        return EXIT_USAGE
    return EXIT_FOUND if any(audit.violations for audit in audits) else EXIT_CLEAN


def _policy(args: argparse.Namespace) -> tuple[Any, str]:
    from agentloop_tools._config import (
        ConfigError,
        nearest_pyproject,
        policy_file,
        policy_from,
        read_table,
    )
    from agentloop_tools.web import DomainPolicy

    try:
        if args.allow:
            return DomainPolicy.allow(args.allow), "--allow"
        if args.block:
            return DomainPolicy.block(args.block), "--block"
        if args.policy:
            return policy_file(Path(args.policy)), args.policy
        pyproject = nearest_pyproject(Path.cwd())
        table = read_table(pyproject) if pyproject is not None else None
        if pyproject is not None and table is not None:
            where = f"{pyproject} [tool.agentloop-tools]"
            return policy_from(table, where), str(pyproject)
    except (ConfigError, ValueError, TypeError) as error:
        raise UsageProblem(str(error)) from None
    raise UsageProblem(
        "no policy: pass --allow DOMAIN..., --block DOMAIN... or --policy FILE, or set "
        "allow = [...] or block = [...] under [tool.agentloop-tools] in pyproject.toml."
    )


def _audit_table(audits: list[FileAudit], policy: Any, origin: str, out: TextIO) -> None:
    total = 0
    for audit in audits:
        if audit.violations:
            out.write(f"{audit.path}\n")
        for v in audit.violations:
            total += 1
            where = "-" if v["interaction"] is None else f"interaction {v['interaction']}"
            rule = f"blocked by {v['rule']!r}" if v["rule"] else "not on the allowlist"
            out.write(f"  {where:<15} {v['where']:<9} {v['url']}  [{rule}]\n")
        for problem in audit.problems:
            out.write(f"could not read {_where(problem)}: {problem['reason']}\n")
    files_with = sum(1 for audit in audits if audit.violations)
    problems = sum(len(audit.problems) for audit in audits)
    out.write(
        ("\n" if total or problems else "")
        + f"{total} violation(s) in {files_with} of {len(audits)} file(s); policy {policy!r} "
        f"from {origin}."
        + (f" {problems} input problem(s): the audit is incomplete." if problems else "")
        + "\n"
    )


def _audit_json(audits: list[FileAudit], policy: Any, origin: str, out: TextIO) -> None:
    document = {
        "policy": {"mode": policy.mode, "domains": list(policy.domains), "from": origin},
        "files": [
            {
                "path": audit.path,
                "transcripts": audit.transcripts,
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
    }
    json.dump(document, out, indent=2)
    out.write("\n")


def _audit_github(audits: list[FileAudit], policy: Any, origin: str, out: TextIO) -> None:
    for audit in audits:
        for v in audit.violations:
            rule = f"blocked by {v['rule']}" if v["rule"] else "not on the allowlist"
            where = "" if v["interaction"] is None else f" (interaction {v['interaction']})"
            message = f"{v['where']} {v['url']}: {rule}{where}"
            out.write(
                f"::error file={_gh_property(audit.path)},title=Domain policy violation::"
                f"{_gh(message)}\n"
            )
        for problem in audit.problems:
            out.write(
                f"::warning file={_gh_property(audit.path)},title=Unreadable input::"
                f"{_gh(_where(problem))}: "
                f"{_gh(problem['reason'])}\n"
            )


def _audit_junit(audits: list[FileAudit], policy: Any, origin: str, out: TextIO) -> None:
    failures = sum(1 for audit in audits if audit.violations)
    errors = sum(1 for audit in audits if audit.problems)
    out.write('<?xml version="1.0" encoding="utf-8"?>\n')
    out.write(
        f'<testsuites><testsuite name="agentloop-tools audit" tests="{len(audits)}" '
        f'failures="{failures}" errors="{errors}">\n'
    )
    for audit in audits:
        out.write(f'  <testcase classname="agentloop-tools.audit" name={quoteattr(audit.path)}>\n')
        if audit.violations:
            lines = [
                f"{v['where']} {v['url']} "
                + (f"blocked by {v['rule']}" if v["rule"] else "not on the allowlist")
                for v in audit.violations
            ]
            summary = f"{len(audit.violations)} domain policy violation(s) ({policy!r})"
            out.write(
                f"    <failure message={quoteattr(summary)}>{escape(chr(10).join(lines))}"
                "</failure>\n"
            )
        for problem in audit.problems:
            out.write(
                f"    <error message={quoteattr(problem['reason'])}>"
                f"{escape(_where(problem))}</error>\n"
            )
        out.write("  </testcase>\n")
    out.write("</testsuite></testsuites>\n")


# --- evidence ----------------------------------------------------------------------


def _evidence(args: argparse.Namespace) -> int:
    from agentloop_tools.cassettes import Reader
    from agentloop_tools.web import citations, sources

    reader = Reader()
    files: list[dict[str, Any]] = []
    for path in _progress(_inputs(args.paths), "evidence"):
        reading = reader.read(path)
        turns = []
        for transcript, interactions in zip(reading.transcripts, reading.interactions, strict=True):
            for index, message in enumerate(transcript.messages):
                if message.role != "assistant":
                    continue
                window = transcript.messages[: index + 1]
                asked = _asked_before(transcript.messages, index)
                turns.append(
                    {
                        "message_index": index,
                        "interaction": interactions[index] if index < len(interactions) else None,
                        "asked": asked,
                        "sources": [
                            {"url": s.url, "title": s.title} for s in sources(window, since=index)
                        ],
                        "citations": [
                            {"url": c.url, "title": c.title, "cited_text": c.cited_text}
                            for c in citations(window, since=index)
                        ],
                    }
                )
        files.append(
            {
                "path": str(path),
                "turns": turns,
                "problems": [_problem(problem) for problem in reading.problems],
            }
        )
    with _open(args.output) as out:
        if args.format == "json":
            json.dump({"files": files}, out, indent=2)
            out.write("\n")
        else:
            for file in files:
                out.write(f"{file['path']}\n")
                for turn in file["turns"]:
                    where = (
                        f"interaction {turn['interaction']}"
                        if turn["interaction"] is not None
                        else f"message {turn['message_index']}"
                    )
                    out.write(f"  turn at {where}: {_clip(turn['asked'], 70)}\n")
                    out.write(f"    sources ({len(turn['sources'])}):\n")
                    out.writelines(f"      - {s['url']}\n" for s in turn["sources"])
                    out.write(f"    citations ({len(turn['citations'])}):\n")
                    out.writelines(f"      - {c['url']}\n" for c in turn["citations"])
                if not file["turns"] and not file["problems"]:
                    out.write("  no model turns\n")
                for problem in file["problems"]:
                    out.write(f"  could not read {_where(problem)}: {problem['reason']}\n")
    return EXIT_USAGE if any(file["problems"] for file in files) else EXIT_CLEAN


def _asked_before(messages: Sequence[Any], index: int) -> str:
    from agentloop.transcript import TextPart

    for message in reversed(messages[:index]):
        if message.role == "user":
            text = " ".join(p.text for p in message.content if isinstance(p, TextPart))
            return " ".join(text.split()) or "(tool results)"
    return ""


# --- scan --------------------------------------------------------------------------


def _scan(args: argparse.Namespace) -> int:
    from agentloop_tools._secrets import (
        CREDENTIAL_HEADERS,
        PLACEHOLDER_PREFIX,
        find_key_shapes,
    )

    findings: list[str] = []
    unreadable: list[str] = []
    for path in _inputs(args.paths, suffixes=INPUT_SUFFIXES, keep_any_file=True):
        try:
            text = path.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            continue  # binary files hold no cassette text
        except OSError as error:
            unreadable.append(f"{path}: cannot be read ({error.strerror})")
            continue
        for number, line in enumerate(text.splitlines(), start=1):
            for value in find_key_shapes(line):
                findings.append(f"{path}:{number}: key-shaped value {_mask(value)}")
        if path.suffix.lower() in (".yaml", ".yml"):
            findings += _credential_headers(path, text, CREDENTIAL_HEADERS, PLACEHOLDER_PREFIX)
    for line in [*findings, *unreadable]:
        print(line)
    if findings:
        print(
            f"{len(findings)} secret(s) found. Remove them from the cassettes (re-record with "
            "the agentloop-tools plugin, which scrubs credentials) and rotate any real key.",
            file=sys.stderr,
        )
        return EXIT_FOUND
    return EXIT_USAGE if unreadable else EXIT_CLEAN


def _credential_headers(
    path: Path, text: str, headers: frozenset[str], placeholder: str
) -> list[str]:
    import yaml

    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError:
        return []
    found = []
    interactions = data.get("interactions") if isinstance(data, dict) else None
    for index, interaction in enumerate(interactions or []):
        if not isinstance(interaction, dict):
            continue
        for side in ("request", "response"):
            recorded = (interaction.get(side) or {}).get("headers") or {}
            for name, value in recorded.items() if isinstance(recorded, dict) else []:
                values = value if isinstance(value, list) else [value]
                if str(name).lower() in headers and any(
                    item and placeholder not in str(item) for item in values
                ):
                    found.append(
                        f"{path}: interaction {index} {side} header {str(name).lower()!r} "
                        "carries a credential"
                    )
    return found


def _mask(value: str) -> str:
    return f"{value[:6]}...({len(value)} chars)"


# --- shared ------------------------------------------------------------------------


def _inputs(
    paths: Sequence[str],
    suffixes: tuple[str, ...] = INPUT_SUFFIXES,
    keep_any_file: bool = False,
) -> list[Path]:
    found: list[Path] = []
    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            found += sorted(
                item
                for item in path.rglob("*")
                if item.is_file()
                and item.suffix.lower() in suffixes
                and not _skipped_directory(item.relative_to(path))
            )
        elif path.is_file():
            if keep_any_file or path.suffix.lower() in suffixes:
                found.append(path)
            else:
                raise UsageProblem(
                    f"{path}: not a cassette (.yaml, .yml) or transcript (.jsonl, .json)."
                )
        else:
            raise UsageProblem(f"{path}: no such file or directory.")
    return found


def _skipped_directory(relative: Path) -> bool:
    """Hidden folders (.git, .venv), node_modules and __pycache__ are not searched."""
    return any(
        part.startswith(".") or part in ("node_modules", "__pycache__", "site-packages")
        for part in relative.parts[:-1]
    )


def _progress(paths: list[Path], command: str) -> list[Path]:
    """The paths, reporting progress on stderr for long runs."""
    if len(paths) <= 200 and not (len(paths) > 20 and sys.stderr.isatty()):
        return paths
    step = max(len(paths) // 10, 1)

    class _Reporting(list[Path]):
        def __iter__(self) -> Any:
            for number, path in enumerate(super().__iter__(), start=1):
                yield path
                if number % step == 0 or number == len(self):
                    print(f"{command}: {number}/{len(self)} files", file=sys.stderr)

    return _Reporting(paths)


class _open:
    """stdout, or the file given with -o."""

    def __init__(self, output: str | None) -> None:
        self._output = output
        self._file: TextIO | None = None

    def __enter__(self) -> TextIO:
        if self._output is None:
            return sys.stdout
        try:
            self._file = open(self._output, "w", encoding="utf-8")
        except OSError as error:
            raise UsageProblem(f"-o {self._output}: cannot be written ({error.strerror})") from None
        return self._file

    def __exit__(self, *exc: object) -> None:
        if self._file is not None:
            self._file.close()


def _problem(problem: Any) -> dict[str, Any]:
    return {"path": problem.path, "interaction": problem.interaction, "reason": problem.reason}


def _where(problem: dict[str, Any]) -> str:
    if problem["interaction"] is None:
        return str(problem["path"])
    return f"{problem['path']} (interaction {problem['interaction']})"


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
