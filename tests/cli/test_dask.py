"""The documented Dask recipe, on a local cluster of 2 worker processes (the optional
job .ci/dask installs the ``dask`` extra; without it these tests skip, saying so)."""

from __future__ import annotations

import importlib
import json
from pathlib import Path

import pytest

from agentloop_tools import logs
from agentloop_tools._logs import _pieces
from agentloop_tools.web import DomainPolicy
from tests.cli.helpers import run
from tests.cli.test_jsonl import transcript_line

distributed = pytest.importorskip(
    "distributed", reason="dask.distributed is not installed (pip install '.[dask]', .ci/dask)"
)


def test_the_recipe_gives_what_the_command_line_gives(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    lines = [
        transcript_line(0, "https://docs.python.org/3/"),
        transcript_line(1, "https://en.wikipedia.org/wiki/Python"),
    ]
    log = tmp_path / "day.jsonl"
    log.write_text("".join(line + "\n" for line in lines * 20))
    # Small pieces, so the 2 workers share the log.
    monkeypatch.setattr(_pieces, "CHUNK_BYTES", log.stat().st_size // 7)
    policy = DomainPolicy.block(["wikipedia.org"])

    # The recipe of docs/cli.md, as written there.
    # Imported by name: dask is optional, so mypy may not find it (it is typed when there).
    dask_distributed = importlib.import_module("dask.distributed")
    Client, LocalCluster = dask_distributed.Client, dask_distributed.LocalCluster

    with (
        LocalCluster(n_workers=2, threads_per_worker=1, processes=True) as cluster,
        Client(cluster) as client,
    ):
        work = logs.pieces([log])
        futures = client.map(logs.audit_piece, work, policy=policy)
        results = logs.merge(zip(work, client.gather(futures), strict=True))
        workers = len(client.scheduler_info()["workers"])

    assert workers == 2
    assert len(work) >= 7
    [found] = results.values()
    cli = json.loads(run("audit", log, "--block", "wikipedia.org", "--format", "json").stdout)
    assert found.violations == cli["files"][0]["violations"]
    assert found.transcripts == cli["files"][0]["transcripts"] == 40
    assert [v["line"] for v in found.violations][:2] == [2, 2]


def test_the_recipe_in_the_docs_runs_as_written(tmp_path: Path) -> None:
    import re
    import subprocess
    import sys

    from tests.cli.helpers import REPO

    text = (REPO / "docs" / "cli.md").read_text()
    [code] = re.findall(
        r"<!-- snippet: not run: needs the dask extra[^\n]*\n```python\n(.*?)```", text, re.S
    )
    lines = [transcript_line(n, f"https://en.wikipedia.org/wiki/{n}") for n in range(3)]
    (tmp_path / "day.jsonl").write_text("".join(line + "\n" for line in lines))
    (tmp_path / "recipe.py").write_text(code)
    done = subprocess.run(
        [sys.executable, "recipe.py"], cwd=tmp_path, capture_output=True, text=True,
        timeout=300, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    printed = done.stdout.splitlines()
    assert printed[0] == (
        "day.jsonl 1 source https://en.wikipedia.org/wiki/0 blocked by 'wikipedia.org'"
    )
    assert [line.split()[1] for line in printed] == ["1", "1", "2", "2", "3", "3"]


def test_pieces_refuse_a_file_that_is_not_a_log(tmp_path: Path) -> None:
    path = tmp_path / "run.jsonl"
    path.write_text('{"role": "user", "content": []}\n')
    with pytest.raises(ValueError, match="not a transcript log"):
        logs.pieces([path])
