"""What ``audit`` and ``evidence`` leave out when asked: ``--exclude`` and ``--respect-gitignore``.

Every file left out is counted and the count printed: a cassette skipped without a word
would be a quiet off-switch.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
from collections.abc import Sequence
from fnmatch import fnmatchcase
from pathlib import Path, PurePosixPath

from agentloop_tools._errors import SkipProblem

# git check-ignore answers for every walked file at once; a stuck git ends the run.
_GIT_TIMEOUT = 120.0


class Exclusions:
    """``--exclude`` globs.

    A glob without ``/`` matches a file or folder name at any depth (``legacy``,
    ``*.old.yaml``); one with ``/`` matches the path below the PATH argument it was
    found under (``legacy/*.yaml``) or the path as written from the current folder
    (``tests/cassettes/legacy/*``). ``*`` matches across ``/`` (fnmatch), and matching
    is case-sensitive. A folder that matches is not entered; its files are counted.
    """

    def __init__(self, globs: Sequence[str]) -> None:
        self.globs = tuple(glob.rstrip("/") or glob for glob in globs)

    def __bool__(self) -> bool:
        return bool(self.globs)

    def matches(self, path: Path, root: Path | None) -> bool:
        if not self.globs:
            return False
        name = path.name
        written = PurePosixPath(path.as_posix())
        candidates = [str(written)]
        if str(written).startswith("./"):
            candidates.append(str(written)[2:])
        if root is not None:
            with contextlib.suppress(ValueError):
                candidates.append(path.relative_to(root).as_posix())
        for glob in self.globs:
            if "/" not in glob:
                if fnmatchcase(name, glob):
                    return True
            elif any(fnmatchcase(candidate, glob) for candidate in candidates):
                return True
        return False


def count_files(folder: Path, suffixes: tuple[str, ...] | None, skip: frozenset[str]) -> int:
    """The files a walk of ``folder`` would have read (for the count of what was skipped)."""
    total = 0
    for _here, folders, files in os.walk(folder, onerror=lambda _error: None):
        folders[:] = [name for name in folders if name not in skip]
        total += sum(
            1 for name in files if suffixes is None or os.path.splitext(name)[1].lower() in suffixes
        )
    return total


def git_ignored(root: Path, paths: Sequence[Path]) -> set[Path]:
    """The ``paths`` (found under ``root``) that git ignores there.

    Asks git itself (``git check-ignore``), so every ``.gitignore`` level,
    ``.git/info/exclude`` and the global excludes file count as git counts them, and a
    tracked file is never ignored (git does not ignore what it tracks).
    """
    if not paths:
        return set()
    folder = root if root.is_dir() else root.parent
    try:
        done = subprocess.run(
            ["git", "-C", str(folder), "check-ignore", "--stdin", "-z"],
            input=b"".join(os.fsencode(os.path.abspath(path)) + b"\0" for path in paths),
            capture_output=True,
            timeout=_GIT_TIMEOUT,
            check=False,
        )
    except FileNotFoundError:
        raise SkipProblem(
            "--respect-gitignore needs git on PATH, and it is not there; drop the flag "
            "(every file is then read) or install git"
        ) from None
    except subprocess.TimeoutExpired:
        raise SkipProblem(
            f"--respect-gitignore: git check-ignore gave no answer in {_GIT_TIMEOUT:.0f} s "
            f"under {folder}"
        ) from None
    if done.returncode not in (0, 1):  # 1: nothing ignored
        reason = " ".join(done.stderr.decode("utf-8", "replace").split())[:300]
        raise SkipProblem(
            f"--respect-gitignore: git cannot say what it ignores under {folder} ({reason}). "
            "Is it inside a git work tree? Drop the flag to read every file"
        )
    answered = {os.fsdecode(item) for item in done.stdout.split(b"\0") if item}
    return {path for path in paths if os.path.abspath(path) in answered}
