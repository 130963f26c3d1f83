"""Audit transcript logs on any engine: the pieces ``agentloop-tools audit --jobs`` runs.

A log is a ``.jsonl`` file of one transcript per line (``Transcript.model_dump_json()``).
``pieces(paths)`` cuts logs into byte ranges that start and end at line boundaries;
``audit_piece(piece, policy)`` audits one (anywhere: the piece and the policy pickle);
``merge(done)`` puts the results back in file and line order, as one process would
have found them. docs/cli.md has a Dask recipe. Importing this module loads nothing of
the command line.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from agentloop_tools._logs import _pieces
from agentloop_tools._logs._pieces import CHUNK_BYTES, Part, Unit
from agentloop_tools._transcript_log import MAX_LINE_BYTES, is_log

__all__ = [
    "CHUNK_BYTES",
    "MAX_LINE_BYTES",
    "Part",
    "Unit",
    "audit_piece",
    "is_log",
    "merge",
    "pieces",
]


def pieces(paths: Sequence[str | Path]) -> list[Unit]:
    """The pieces of each log in ``paths`` (a path that is not a log is refused)."""
    found = [Path(path) for path in paths]
    refused = [str(path) for path in found if not is_log(path)]
    if refused:
        raise ValueError(
            f'not a transcript log (a .jsonl whose first line is {{"messages": [...]}}): '
            f"{', '.join(refused[:5])}"
        )
    return _pieces.units(found)


def audit_piece(piece: Unit, policy: Any) -> Part:
    """The violations (with ``line``) and problems of one piece, never raising on input."""
    return _pieces.audit_log_piece(piece, policy)


def merge(done: Iterable[tuple[Unit, Part]]) -> dict[str, Part]:
    """Each log's results, pieces in order, lines numbered from 1 in the whole file."""
    return _pieces.merge(done)
