"""Transcript logs: a ``.jsonl`` file of one transcript per line, as production systems
append them (``Transcript.model_dump_json()``, one conversation per line).

What a log is, the cap on one line, and why a line is not a transcript: shared by the
reader (``cassettes``) and the command line, which streams a log a line at a time
(``cli/_jsonl.py``). Imports nothing of the package.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

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


def first_error(error: Any) -> str:
    """A pydantic ``ValidationError`` in one line: where its first error is, and what."""
    details = error.errors()
    if not details:
        return str(error)
    first = details[0]
    location = ".".join(str(part) for part in first.get("loc", ()))
    return f"{location}: {first.get('msg')}" if location else str(first.get("msg"))
