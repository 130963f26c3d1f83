"""``--jobs N``: each worker process receives the policy once, however many units it runs."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

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
