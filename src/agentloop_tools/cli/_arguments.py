"""The command line's arguments: one parser per command, and the check of each value.

Options and paths mix in any order (``parse_intermixed_args``); ``--allow``/``--block``
take one value each, a comma-separated list, and can be repeated.
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import Any, NoReturn

from agentloop_tools.cli._output import EXIT_USAGE

COMMANDS = ("audit", "evidence", "diff", "scan", "explain", "adopt")
FORMATS = ("table", "json", "github", "junit", "sarif")
MAX_JOBS = 64

EPILOG = """\
examples:
  agentloop-tools audit cassettes/ --allow python.org,docs.djangoproject.com
  agentloop-tools audit --block wikipedia.org cassettes/ --format github
  agentloop-tools audit --allow python.org --allow realpython.com cassettes/
  agentloop-tools audit run.jsonl --policy policy.toml --format junit -o audit.xml
  agentloop-tools audit tests/cassettes      # policy from [tool.agentloop-tools]
  agentloop-tools evidence cassettes/test_agent/test_cites.yaml
  git show HEAD:tests/cassettes/test_agent/test_cites.yaml > old.yaml
  agentloop-tools diff old.yaml tests/cassettes/test_agent/test_cites.yaml
  agentloop-tools diff base-cassettes/ tests/cassettes/ --fail-on evidence --format github
  agentloop-tools scan tests/cassettes       # as a pre-commit hook: exit 1 on a secret
  agentloop-tools audit tests/cassettes --write-baseline audit-baseline.json
  agentloop-tools audit tests/cassettes --baseline audit-baseline.json --format sarif
  agentloop-tools explain --allow python.org https://docs.python.org/3/
  agentloop-tools adopt tests/cassettes/test_agent/test_cites.yaml --recorded-at 2026-11-30

policy files and pyproject.toml:
  [tool.agentloop-tools]
  allow = ["python.org", "realpython.com"]   # or: block = ["wikipedia.org"]
"""


def parse(arguments: list[str]) -> argparse.Namespace:
    parser, subcommands = build()
    if not arguments or arguments[0] not in COMMANDS:
        parser.parse_args(arguments)  # --help, or an error naming the commands
        parser.print_help(sys.stderr)
        raise SystemExit(EXIT_USAGE)
    # Intermixed: paths may come before, between or after the options.
    args = subcommands[arguments[0]].parse_intermixed_args(arguments[1:])
    args.command = arguments[0]
    return args


class _Parser(argparse.ArgumentParser):
    """argparse, with its error in one line: it quotes arguments raw ("unrecognized
    arguments: ..."), and a hook passes file names, which can hold a newline."""

    def error(self, message: str) -> NoReturn:
        from agentloop_tools._visible import visible

        super().error(visible(message))


def build() -> tuple[argparse.ArgumentParser, dict[str, argparse.ArgumentParser]]:
    """The parser, and the parser of each command (in the order --help lists them)."""
    parser = _Parser(
        prog="agentloop-tools",
        description="Audit agentloop evidence in recorded cassettes and saved transcripts.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("-V", "--version", action="store_true", help="print the version and exit")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")
    return parser, {
        "audit": _audit(commands),
        "evidence": _evidence(commands),
        "diff": _diff(commands),
        "scan": _scan(commands),
        "explain": _explain(commands),
        "adopt": _adopt(commands),
    }


def _command(commands: Any, name: str, help: str) -> argparse.ArgumentParser:
    parser: argparse.ArgumentParser = commands.add_parser(
        name, help=help, epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    return parser


def _audit(commands: Any) -> argparse.ArgumentParser:
    audit = _command(
        commands,
        "audit",
        "report every place the evidence reached a domain the policy does not permit",
    )
    _add_inputs(audit)
    _add_policy(audit)
    audit.add_argument("--format", choices=FORMATS, default="table", help="default: table")
    audit.add_argument("-o", "--output", metavar="FILE", help="write here, not stdout")
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
        type=jobs,
        default=1,
        metavar="N",
        help="audit in N processes (files, and pieces of transcript logs); same output",
    )
    audit.add_argument(
        "--refused-attempts",
        choices=("report", "fail"),
        default=None,
        help="how a URL web_fetch refused before requesting it counts (the policy held): "
        "report (default: listed and counted, exit 0 on it alone) or fail (exit 1); fail "
        "in the project's agentloop_refused_attempts or refused_attempts wins",
    )
    audit.add_argument(
        "--strict-baseline",
        action="store_true",
        help="with --baseline: a stale entry (no longer found) fails the run too",
    )
    return audit


def _evidence(commands: Any) -> argparse.ArgumentParser:
    evidence = _command(commands, "evidence", "list the sources and citations per file and turn")
    _add_inputs(evidence)
    evidence.add_argument("--format", choices=("table", "json", "html"), default="table")
    evidence.add_argument("-o", "--output", metavar="FILE", help="write here, not stdout")
    # Only --format html marks violations: with this policy, else the project's, else none.
    marking = evidence.add_mutually_exclusive_group()
    marking.add_argument(
        "--allow",
        action="extend",
        type=domains,
        metavar="DOMAIN[,DOMAIN...]",
        help="with --format html: mark what these domains do not cover",
    )
    marking.add_argument(
        "--block",
        action="extend",
        type=domains,
        metavar="DOMAIN[,DOMAIN...]",
        help="with --format html: mark what these domains cover",
    )
    marking.add_argument(
        "--policy",
        metavar="FILE",
        help="with --format html: a TOML file with allow = [...] or block = [...]",
    )
    return evidence


def _diff(commands: Any) -> argparse.ArgumentParser:
    diff = _command(
        commands,
        "diff",
        "what changed in the evidence between two recordings: domains reached, sources, "
        "citations, links, tool calls, usage and verdicts, per test",
    )
    diff.add_argument("old", metavar="OLD", help="a cassette, or a folder of them")
    diff.add_argument(
        "new", metavar="NEW", help="a cassette, or a folder (files matched by relative path)"
    )
    diff.add_argument("--format", choices=("table", "json", "github"), default="table")
    diff.add_argument("-o", "--output", metavar="FILE", help="write here, not stdout")
    diff.add_argument(
        "--fail-on",
        choices=("domains", "evidence", "any", "never"),
        default="domains",
        help="exit 1 when: a reached domain or a verdict changed (domains, the default); "
        "that, or a source, citation, link or tool call was added or removed (evidence); "
        "that, or usage changed (any); never",
    )
    _add_policy(diff)
    return diff


def _scan(commands: Any) -> argparse.ArgumentParser:
    scan = _command(
        commands, "scan", "find credentials in every file under the paths (exit 1 if any)"
    )
    scan.add_argument(
        "paths", nargs="+", metavar="PATH", help="files or directories (every file, recursive)"
    )
    return scan


def _explain(commands: Any) -> argparse.ArgumentParser:
    explain = _command(
        commands,
        "explain",
        "say why the policy permits or refuses a URL, or each link in a text",
    )
    explain.add_argument(
        "subjects",
        nargs="+",
        metavar="URL_OR_TEXT",
        help="a URL or host, or a text (quote it); - reads a text from stdin",
    )
    _add_policy(explain)
    explain.add_argument("--format", choices=("text", "json"), default="text")
    return explain


def _adopt(commands: Any) -> argparse.ArgumentParser:
    adopt = _command(
        commands,
        "adopt",
        "date a cassette recorded elsewhere: write its provenance (source: adopted), "
        "leaving its interactions as they are",
    )
    adopt.add_argument("cassette", metavar="CASSETTE", help="a YAML cassette (.yaml, .yml)")
    adopt.add_argument(
        "--recorded-at",
        required=True,
        metavar="DATE",
        help="when it was recorded: YYYY-MM-DD (or YYYY-MM-DDTHH:MM:SSZ, UTC)",
    )
    adopt.add_argument("--note", metavar="TEXT", help="where it came from (one line, kept)")
    adopt.add_argument(
        "--force",
        action="store_true",
        help="replace the provenance a cassette already has (refused otherwise)",
    )
    return adopt


def _add_policy(parser: argparse.ArgumentParser) -> None:
    policy = parser.add_mutually_exclusive_group()
    policy.add_argument(
        "--allow",
        action="extend",
        type=domains,
        metavar="DOMAIN[,DOMAIN...]",
        help="permit only these domains (repeat the flag or separate with commas)",
    )
    policy.add_argument(
        "--block",
        action="extend",
        type=domains,
        metavar="DOMAIN[,DOMAIN...]",
        help="permit all but these domains (repeat the flag or separate with commas)",
    )
    policy.add_argument(
        "--policy", metavar="FILE", help="a TOML file with allow = [...] or block = [...]"
    )


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
    parser.add_argument(
        "--skip-unrecognized",
        action="store_true",
        help="skip, with a note, a file named here that is neither a cassette nor a "
        "transcript, as a folder walk does (for hooks that pass file names); JSON that "
        "does not parse or a malformed cassette is still exit 2",
    )


def jobs(value: str) -> int:
    """One ``--jobs`` value: a number of processes from 1 to ``MAX_JOBS``."""
    try:
        number = int(value)
    except ValueError:
        number = 0
    if not 1 <= number <= MAX_JOBS:
        raise argparse.ArgumentTypeError(
            f"{value!r} is not a number of processes from 1 to {MAX_JOBS} "
            f"(this machine has {os.cpu_count() or 1} core(s))"
        )
    return number


def domains(value: str) -> list[str]:
    """One ``--allow``/``--block`` value: a domain or a comma-separated list of them."""
    items = [item.strip() for item in value.split(",")]
    if not value.strip() or any(not item for item in items):
        raise argparse.ArgumentTypeError(
            f"{value!r} has an empty domain: separate domains with single commas "
            "(--allow python.org,docs.djangoproject.com) or repeat the flag"
        )
    return items
