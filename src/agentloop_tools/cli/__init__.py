"""``agentloop-tools``: audit recorded cassettes and saved transcripts outside a test run.

    agentloop-tools audit PATH... [--allow D[,D...] | --block D[,D...] | --policy FILE]
    agentloop-tools evidence PATH...
    agentloop-tools diff OLD NEW [--fail-on domains|evidence|any|never] [--allow ... | ...]
    agentloop-tools scan PATH...
    agentloop-tools explain URL_OR_TEXT... [--allow ... | --block ... | --policy FILE]
    agentloop-tools adopt CASSETTE --recorded-at DATE [--note TEXT] [--force]
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

import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING

from agentloop_tools._errors import UsageProblem
from agentloop_tools._visible import visible
from agentloop_tools.cli._arguments import COMMANDS, EPILOG, FORMATS, MAX_JOBS, parse
from agentloop_tools.cli._audit import audit, audit_one
from agentloop_tools.cli._evidence import evidence
from agentloop_tools.cli._inputs import (
    INPUT_SUFFIXES,
    VCS_FOLDERS,
    VENDORED_FOLDERS,
    Found,
    os_reason,
    require_agentloop_06,
)
from agentloop_tools.cli._output import EXIT_CLEAN, EXIT_FOUND, EXIT_USAGE, FileAudit, stderr
from agentloop_tools.cli._scan import scan

if TYPE_CHECKING:
    import argparse

# The rooms, by job: _arguments (the parser), _inputs (files, the policy, problems),
# _output (formats, escapes, stderr), and one per command: _audit (with _baseline,
# _sarif, and _jobs running --jobs over agentloop_tools._logs), _evidence (with _provenance),
# _diff (with the core's testing._drift), _scan, _explain.
__all__ = [
    "COMMANDS",
    "EPILOG",
    "EXIT_CLEAN",
    "EXIT_FOUND",
    "EXIT_USAGE",
    "FORMATS",
    "INPUT_SUFFIXES",
    "MAX_JOBS",
    "VCS_FOLDERS",
    "VENDORED_FOLDERS",
    "FileAudit",
    "Found",
    "audit_one",
    "main",
    "os_reason",
]


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit code. Never raises (but SystemExit)."""
    arguments = list(sys.argv[1:] if argv is None else argv)
    command = arguments[0] if arguments and arguments[0] in COMMANDS else None
    if arguments in (["--version"], ["-V"]):
        return _version()
    try:
        args = parse(arguments)
        if args.command in ("audit", "evidence", "diff"):
            require_agentloop_06()
        return _run(args)
    except UsageProblem as problem:
        stderr(f"agentloop-tools {command}: {visible(str(problem))}")
        return EXIT_USAGE
    except KeyboardInterrupt:
        stderr("agentloop-tools: interrupted")
        return 130
    except Exception as error:  # the last line of defence: one line, never a traceback
        reason = " ".join(str(error).split())[:300]
        stderr(
            f"agentloop-tools{' ' + command if command else ''}: internal error "
            f"({type(error).__name__}: {reason}). The run is incomplete; please report this."
        )
        return EXIT_USAGE


def _run(args: argparse.Namespace) -> int:
    if args.command == "audit":
        return audit(args)
    if args.command == "evidence":
        return evidence(args)
    if args.command == "diff":
        from agentloop_tools.cli._diff import diff

        return diff(args)
    if args.command == "explain":
        # Loads the policy's explainer (the web core): only when asked.
        from agentloop_tools.cli._explanations import explain

        return explain(args)
    if args.command == "adopt":
        from agentloop_tools.cli._adopt import adopt

        return adopt(args)
    return scan(args)


def _version() -> int:
    from importlib.metadata import PackageNotFoundError, version

    from agentloop_tools import __version__

    try:
        agentloop = f" (based-models-agentloop {version('based-models-agentloop')})"
    except PackageNotFoundError:  # pragma: no cover - a dependency of this package
        agentloop = ""
    print(f"agentloop-tools {__version__}{agentloop}")
    return EXIT_CLEAN


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
