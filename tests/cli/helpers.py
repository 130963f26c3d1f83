"""What the command-line suites share: the demo cassettes and running the real entry point."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).parents[2]
DEMO = REPO / "cassettes" / "demo"
ANTHROPIC_DEMO = DEMO / "anthropic-web-search.yaml"
OPENAI_DEMO = DEMO / "openai-web-search.yaml"


def run(*args: str | Path, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    """``python -m agentloop_tools ARGS`` in a subprocess, as a user runs it."""
    return subprocess.run(
        [sys.executable, "-m", "agentloop_tools", *map(str, args)],
        capture_output=True,
        text=True,
        cwd=cwd,
        check=False,
    )
