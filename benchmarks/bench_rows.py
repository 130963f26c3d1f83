"""Every row of issue 30's table, each as a ratio to a reference timed in the same run.

    .venv/bin/python benchmarks/bench_rows.py                    # the installed tree
    .venv/bin/python benchmarks/bench_rows.py --tree OLD=/work/main/src --tree NEW=src
    .venv/bin/python benchmarks/bench_rows.py --row blocklist \
        --tree AC=src@aho-corasick --tree HS=src@hyperscan
    .venv/bin/python benchmarks/bench_rows.py --list

Each row runs in its own process, once per ``--tree LABEL=SRC`` (PYTHONPATH=SRC, so the
same benchmark code times both trees in one run: before/after), and reports CPU time,
MB/s where it applies, its reference (``re.findall(r"https?://\\S*")`` over the same
text, ``json.loads`` per line of the same log, the unmarked or FakeClient tests) and
the ratio to it. ``--row TEXT`` keeps the rows whose name holds TEXT. ``SRC@ENGINE``
sets ``AGENTLOOP_TOOLS_BLOCKLIST_ENGINE`` for that run (``hyperscan`` or
``aho-corasick``; a tree without the variable ignores it). Each row takes under 30 s
of CPU.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent


def rows() -> dict[str, Callable[[], dict[str, Any]]]:
    """Every row, in the issue's order, from the benchmark that owns it."""
    import bench_log_rows
    import bench_plugin
    import bench_policy

    return {**bench_policy.ROWS, **bench_log_rows.ROWS, **bench_plugin.ROWS}


def child(name: str) -> None:
    """Runs one row here and prints it as JSON (with the tree it imported)."""
    import agentloop_tools

    row = rows()[name]()
    row["tree"] = str(Path(agentloop_tools.__file__).parents[1])
    print(json.dumps(row))


def measure(name: str, source: str | None, engine: str | None) -> dict[str, Any]:
    env = dict(os.environ)
    if source is not None:
        env["PYTHONPATH"] = source
    if engine is not None:
        env["AGENTLOOP_TOOLS_BLOCKLIST_ENGINE"] = engine
    done = subprocess.run(
        [sys.executable, str(Path(__file__).resolve()), "--child", name],
        capture_output=True,
        text=True,
        env=env,
        cwd=HERE,
    )
    if done.returncode != 0:
        return {"note": "failed: " + (done.stderr.strip().splitlines() or ["?"])[-1]}
    row: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    if source is not None and Path(row["tree"]).resolve() != Path(source).resolve():
        raise SystemExit(f"{name}: imported {row['tree']}, not {source}: is PYTHONPATH honoured?")
    return row


def cell(row: dict[str, Any], key: str, form: str) -> str:
    value = row.get(key)
    return "" if value is None else format(value, form)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tree", action="append", default=[], metavar="LABEL=SRC")
    parser.add_argument("--row", action="append", default=[], metavar="TEXT")
    parser.add_argument("--list", action="store_true")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    options = parser.parse_args()
    if options.child:
        child(options.child)
        return
    names = [name for name in rows() if not options.row or any(t in name for t in options.row)]
    if options.list:
        print("\n".join(names))
        return
    runs: list[tuple[str, str | None, str | None]] = [("installed", None, None)]
    if options.tree:
        runs = []
        for tree in options.tree:
            label, _, where = tree.partition("=")
            source, _, engine = where.partition("@")
            runs.append((label, str(Path(source).resolve()), engine or None))
    print("| row | tree | CPU ms | MB/s | reference ms | ratio | note |")
    print("|---|---|---|---|---|---|---|")
    for name in names:
        for label, source, engine in runs:
            row = measure(name, source, engine)
            print(
                f"| {name} | {label} | {cell(row, 'ms', '.1f')} | {cell(row, 'mb_per_s', '.1f')} "
                f"| {cell(row, 'reference_ms', '.1f')} | {cell(row, 'ratio', '.2f')}x "
                f"| {row.get('note', '')} |",
                flush=True,
            )


if __name__ == "__main__":
    main()
