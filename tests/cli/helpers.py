"""What the command-line suites share: the demo cassettes and running the real entry point."""

from __future__ import annotations

import contextlib
import io
import os
import subprocess
import sys
import warnings
from pathlib import Path

from agentloop_tools.cli import main

REPO = Path(__file__).parents[2]
DEMO = REPO / "cassettes" / "demo"
ANTHROPIC_DEMO = DEMO / "anthropic-web-search.yaml"
OPENAI_DEMO = DEMO / "openai-web-search.yaml"


class _Stream(io.TextIOWrapper):
    """A captured standard stream that, like a pipe, is no terminal and has a buffer."""

    def __init__(self, *, tty: bool = False) -> None:
        super().__init__(io.BytesIO(), encoding="utf-8", errors="strict", newline="\n")
        self.tty = tty

    def isatty(self) -> bool:
        return self.tty

    def text(self) -> str:
        self.flush()
        raw = self.buffer
        assert isinstance(raw, io.BytesIO)
        # As a pipe read with text=True: universal newlines.
        return raw.getvalue().decode("utf-8").replace("\r\n", "\n").replace("\r", "\n")


def run(
    *args: str | Path, cwd: Path | None = None, tty: bool = False
) -> subprocess.CompletedProcess[str]:
    """``agentloop-tools ARGS`` through ``cli.main`` in this process, as a pipe sees it.

    The same entry point ``python -m agentloop_tools`` calls, with stdout and stderr
    captured and the warnings filters a fresh interpreter has (so a warning is printed,
    not raised by the suite's ``filterwarnings = error``). In-process, so a run costs no
    interpreter start and coverage counts it. :func:`run_process` is the real process.
    ``tty``: stderr says it is a terminal (where progress is shown).
    """
    argv = [str(arg) for arg in args]
    out, err = _Stream(), _Stream(tty=tty)
    before = Path.cwd()
    try:
        if cwd is not None:
            os.chdir(cwd)
        with (
            contextlib.redirect_stdout(out),
            contextlib.redirect_stderr(err),
            warnings.catch_warnings(),
        ):
            warnings.resetwarnings()
            warnings.simplefilter("default")
            try:
                code = main(argv)
            except SystemExit as exit_:  # argparse's --help, a usage error
                code = (
                    exit_.code if isinstance(exit_.code, int) else (0 if exit_.code is None else 1)
                )
                if isinstance(exit_.code, str):
                    print(exit_.code, file=sys.stderr)
    finally:
        os.chdir(before)
    return subprocess.CompletedProcess(
        ["agentloop-tools", *argv], code, stdout=out.text(), stderr=err.text()
    )


def run_process(
    *args: str | Path, cwd: Path | None = None, timeout: float | None = None
) -> subprocess.CompletedProcess[str]:
    """``python -m agentloop_tools ARGS`` in a subprocess, as a user runs it.

    ``timeout``: seconds before the run is killed (``subprocess.TimeoutExpired``), for a
    test that a run does not block.
    """
    return subprocess.run(
        [sys.executable, "-m", "agentloop_tools", *map(str, args)],
        capture_output=True,
        text=True,
        cwd=cwd,
        check=False,
        timeout=timeout,
    )
