"""``--jobs N``: each worker process receives the policy once, however many units it runs."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from agentloop_tools.web._text._literal_search import (
    ENGINE_VARIABLE,
    PAYBACK_CHARS_PER_LITERAL,
    hyperscan_module,
)
from agentloop_tools.web._text._prefilter import HIDING
from tests.cli.helpers import REPO
from tests.cli.test_jsonl import transcript_line

# Runs the units of a log in 2 workers with a policy that notes each time it is unpickled.
_CHILD = """
import os, sys
from pathlib import Path
from agentloop_tools._logs import _pieces
from agentloop_tools.cli._jobs import run_units
from agentloop_tools.web import DomainPolicy

class Noting:
    def __init__(self, inner, record):
        self.inner, self.record = inner, record
    def __setstate__(self, state):
        self.__dict__.update(state)
        with open(self.record, "a") as out:
            out.write(f"{os.getpid()}\\n")
    def audit(self, transcript):
        return self.inner.audit(transcript)

_pieces.CHUNK_BYTES = 2000
work = _pieces.units([Path(sys.argv[2])])
policy = Noting(DomainPolicy.block(["wikipedia.org"]), sys.argv[1])
done = list(run_units(work, policy, None, 2))
print(len(work), sum(len(part.violations) for _, part in done))
"""


def test_each_worker_unpickles_the_policy_once_not_once_per_unit(tmp_path: Path) -> None:
    line = transcript_line(1, "https://en.wikipedia.org/wiki/Python")
    log = tmp_path / "day.jsonl"
    log.write_text(f"{line}\n" * 40)
    record = tmp_path / "unpickled.txt"
    done = subprocess.run(
        [sys.executable, "-c", _CHILD, str(record), str(log)],
        capture_output=True,
        text=True,
        check=True,
        cwd=REPO,
    )
    units, violations = map(int, done.stdout.split())
    assert units >= 10
    assert violations == 80
    # Forked workers inherit it (none); spawned ones unpickle it once each (2 at most).
    unpickled = record.read_text().split() if record.exists() else []
    assert len(unpickled) == len(set(unpickled)) <= 2


# Audits a log in 2 workers under a blocklist (the engine chosen by payback) and notes the
# process of every Hyperscan compile.
_COMPILING_CHILD = """
import os, sys
from pathlib import Path
from agentloop_tools._logs import _pieces
from agentloop_tools.cli._jobs import run_units
from agentloop_tools.web import DomainPolicy
from agentloop_tools.web._text._literal_search import LiteralSearch

compile_once = LiteralSearch._compile
def noted(search):
    with open(sys.argv[1], "a") as out:
        out.write(f"{os.getpid()}\\n")
    compile_once(search)
LiteralSearch._compile = noted

_pieces.CHUNK_BYTES = _pieces.MIN_PIECE_BYTES = 20_000
work = _pieces.units([Path(sys.argv[2])], 2)
done = list(run_units(work, DomainPolicy.block(["wikipedia.org"]), None, 2))
print(os.getpid(), len(work), sum(len(part.violations) for _, part in done))
"""


@pytest.mark.skipif(hyperscan_module() is None, reason="the speed extra is not installed")
def test_a_log_that_pays_for_hyperscan_compiles_it_once_not_once_per_worker(
    tmp_path: Path,
) -> None:
    # Each worker reads half the log, enough for its own compile to pay back: before,
    # both compiled; now the parent compiles once, for the log's size, and sends it.
    needed = PAYBACK_CHARS_PER_LITERAL * (1 + len(HIDING))
    line = transcript_line(1, "https://en.wikipedia.org/wiki/Python " + "word " * 200)
    log = tmp_path / "day.jsonl"
    count = 3 * needed // len(line) + 1
    log.write_text(f"{line}\n" * count)
    record = tmp_path / "compiled.txt"
    done = subprocess.run(
        [sys.executable, "-c", _COMPILING_CHILD, str(record), str(log)],
        capture_output=True,
        text=True,
        check=True,
        cwd=REPO,
        env={key: value for key, value in os.environ.items() if key != ENGINE_VARIABLE},
    )
    parent, units, violations = map(int, done.stdout.split())
    assert units >= 8
    assert violations == 2 * count
    assert record.read_text().split() == [str(parent)]
