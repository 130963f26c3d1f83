"""Transcript logs: one agentloop transcript per line (``Transcript.model_dump_json()``).

Told apart from a JSONL transcript (one *message* per line) by the first line alone, so
a reader or the command line can stream a log of any size.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

# One line (one transcript) is read whole: bounded like a whole cassette.
MAX_LINE_BYTES = 64 * 1024 * 1024


def is_log(path: str | Path) -> bool:
    """Whether ``path`` is a transcript log: its first non-empty line holds ``messages``."""
    import stat

    if not str(path).lower().endswith(".jsonl"):
        return False
    try:
        if not stat.S_ISREG(os.stat(path).st_mode):
            return False  # a FIFO or device is never opened: it could block (the reader says so)
        with open(path, "rb") as file:
            for _ in range(1000):  # leading blank lines, within reason
                line = file.readline(MAX_LINE_BYTES + 1)
                if not line:
                    return False
                if line.strip():
                    break
            else:
                return False
    except OSError:
        return False
    if len(line) > MAX_LINE_BYTES:
        return True  # too long for a message line too: read as a log, it says so
    try:
        first = json.loads(line)
    except RecursionError:
        return False  # nested past Python's limit: the reader refuses it, with its reason
    except ValueError:
        # A truncated first line of a log still starts like one.
        return line.lstrip().startswith(b'{"messages"')
    return isinstance(first, dict) and "messages" in first and "role" not in first
