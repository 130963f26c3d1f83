"""The command line's entry: parse, dispatch to a command, one line on any failure.

The usage and exit codes are in :mod:`agentloop_tools.cli`, the public face.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING

from agentloop_tools._errors import UsageProblem
from agentloop_tools._visible import visible
from agentloop_tools.cli._arguments import COMMANDS, parse
from agentloop_tools.cli._audit import audit
from agentloop_tools.cli._evidence import evidence
from agentloop_tools.cli._inputs import require_agentloop_06
from agentloop_tools.cli._output import EXIT_CLEAN, EXIT_USAGE, stderr
from agentloop_tools.cli._scan import scan

if TYPE_CHECKING:
    import argparse


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
